"""What does gradient checkpointing save, and what does it cost? The gradient of an RNN over
1,000 steps (grad_speed.py's rnn workload, made longer), with and without
`grad(..., checkpoint_every=k)`, eagerly and traced (`autotrace.function`).

    python benchmarks/checkpointing.py [--steps 1000] [--hidden 64 128 256] [--every 32]

Peak memory is what tracemalloc sees during one gradient call (NumPy reports its array
allocations to it), the inputs excluded; time is the best of --repeat calls. Both are printed
beside the run without checkpointing as ratios: memory saved (how many times less) and time
cost (how many times longer). The gradients are checked equal to the ones without
checkpointing first; the script exits with status 1 if any differ.

BLAS runs on one thread unless OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS, MKL_NUM_THREADS) says
otherwise, as in the other benchmarks.
"""
from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy loads its BLAS

import argparse
import math
import sys
import time
import tracemalloc

import numpy

import autotrace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_speed import describe_environment, make_rnn_loss  # noqa: E402 - after the path

rnn_loss = make_rnn_loss(numpy)
WRT = (0, 1)


def inputs(rng, steps: int, hidden: int, batch: int = 16, features: int = 32):
    Wx = 0.1 * rng.standard_normal((features, hidden))
    Wh = 0.5 / math.sqrt(hidden) * rng.standard_normal((hidden, hidden))
    b = 0.01 * rng.standard_normal(hidden)
    xs = rng.standard_normal((steps, batch, features))
    h0 = numpy.zeros((batch, hidden))
    return Wx, Wh, b, xs, h0


def peak_bytes(call) -> int:
    """The most memory `call()` held at once beyond what was allocated before it."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    call()
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return peak


def best_time(call, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def measure(gradient, args, repeat: int):
    result = gradient(*args)  # a first call: generating, tracing and compiling happen here
    return result, peak_bytes(lambda: gradient(*args)), best_time(lambda: gradient(*args),
                                                                   repeat)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--hidden", type=int, nargs="*", default=[64, 128, 256])
    parser.add_argument("--every", type=int, default=32,
                        help="iterations per segment (0: the square root of --steps)")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args(argv)
    every = options.every or max(1, round(math.sqrt(options.steps)))
    describe_environment()
    print(f"rnn gradient, {options.steps} steps, batch 16, input 32, d/d(Wx, Wh); "
          f"checkpoint_every={every}")
    print(f"{'hidden':>6} {'mode':>7} {'peak MB':>9} {'with k':>8} {'saved':>7} "
          f"{'time ms':>8} {'with k':>8} {'cost':>6}")
    failed = False
    rng = numpy.random.default_rng(0)
    for hidden in options.hidden:
        args = inputs(rng, options.steps, hidden)
        for mode in ("eager", "traced"):
            plain = autotrace.grad(rnn_loss, wrt=WRT)
            segmented = autotrace.grad(rnn_loss, wrt=WRT, checkpoint_every=every)
            if mode == "traced":
                plain, segmented = autotrace.function(plain), autotrace.function(segmented)
            expected, plain_peak, plain_time = measure(plain, args, options.repeat)
            got, peak, elapsed = measure(segmented, args, options.repeat)
            if not all(numpy.allclose(g, e, rtol=1e-10, atol=1e-12)
                       for g, e in zip(got, expected)):
                print(f"hidden {hidden}, {mode}: the gradients with checkpointing differ")
                failed = True
            print(f"{hidden:>6} {mode:>7} {plain_peak / 1e6:>9.1f} {peak / 1e6:>8.1f} "
                  f"{plain_peak / peak:>6.1f}x {plain_time * 1e3:>8.1f} {elapsed * 1e3:>8.1f} "
                  f"{elapsed / plain_time:>5.2f}x")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
