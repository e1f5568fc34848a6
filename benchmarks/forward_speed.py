"""Forward mode and Hessians, timed side by side in one run.

    pip install -r benchmarks/requirements.txt    # autograd, for the comparison column
    python benchmarks/forward_speed.py

1. A directional derivative of the MLP loss (784-256-10, batch 64) along a random direction in
   W1: autotrace's forward mode against its reverse mode (the full gradient, then the inner
   product), each as a ratio to the primal loss.
2. The Hessian of a 50-dimensional function (a chained Rosenbrock plus a log-sum-exp term):
   autotrace.hessian (forward over reverse) against autograd.hessian, as ratios to the primal.
Values are checked against each other before anything is timed.
"""
from __future__ import annotations

import os
import sys

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one BLAS thread: ratios, not thread scheduling

import numpy  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autotrace  # noqa: E402
from grad_speed import best_time, load_autograd, make_mlp_loss, mlp_inputs  # noqa: E402


def make_fifty(np):
    def fifty(x):
        chain = np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        return chain + np.log(np.sum(np.exp(0.1 * x)))
    return fifty


def main() -> int:
    autograd, autograd_numpy = load_autograd()
    rng = numpy.random.default_rng(0)
    failed = False

    print("1. MLP loss, directional derivative along a random direction in W1")
    args = mlp_inputs(rng)
    loss = make_mlp_loss(numpy)
    direction = rng.standard_normal(args[0].shape)
    tangent_fn = autotrace.forward(loss, wrt=0)
    gradient_fn = autotrace.grad(loss, wrt=0)
    by_forward = tangent_fn(*args, tangent=direction)[1]
    by_reverse = float(numpy.sum(gradient_fn(*args) * direction))
    agree = numpy.isclose(by_forward, by_reverse, rtol=1e-8)
    print(f"   forward {by_forward:.10g}, reverse {by_reverse:.10g}: "
          f"{'agree' if agree else 'DIFFER'}")
    failed |= not agree
    primal = best_time(lambda: loss(*args), 5)
    forward_time = best_time(lambda: tangent_fn(*args, tangent=direction), 5)
    reverse_time = best_time(lambda: numpy.sum(gradient_fn(*args) * direction), 5)
    print(f"   primal {primal * 1e6:9.1f} us   forward {forward_time / primal:5.2f}x   "
          f"reverse {reverse_time / primal:5.2f}x")

    print("\n2. Hessian of a 50-dimensional function")
    x = rng.uniform(-1.0, 1.0, 50)
    fifty = make_fifty(numpy)
    hessian_fn = autotrace.hessian(fifty)
    ours = hessian_fn(x)
    primal = best_time(lambda: fifty(x), 5)
    ours_time = best_time(lambda: hessian_fn(x), 3)
    line = f"   primal {primal * 1e6:9.1f} us   autotrace {ours_time / primal:7.1f}x"
    if autograd is not None:
        theirs_fn = autograd.hessian(make_fifty(autograd_numpy))
        theirs = theirs_fn(x)
        agree = numpy.allclose(ours, theirs, rtol=1e-8, atol=1e-8)
        print(f"   autotrace and autograd Hessians {'agree' if agree else 'DIFFER'}")
        failed |= not agree
        theirs_time = best_time(lambda: theirs_fn(x), 3)
        line += (f"   autograd {theirs_time / primal:7.1f}x   "
                 f"(autotrace {theirs_time / ours_time:.1f}x faster)")
    print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
