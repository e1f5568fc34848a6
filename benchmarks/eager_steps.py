"""Eager training steps written the Keras/TF way, where the loss is a closure made anew each
step: `opt.minimize(lambda: loss(...))`, `implicit_value_and_grad(loss)()` with `def loss()`
inside the step, `autotrace.grad(lambda w: loss(w, batch))(w)` (or hessian) in a loop. Each
such closure is a new function of the same code; its derivative is the one made for the first,
rebound to its cells (transforms/codegen/rebinding.py), not generated again.

    pip install -r benchmarks/requirements.txt jax    # the peers' columns, where installed
    python benchmarks/eager_steps.py [--one-core] [--repeat 5]

Beside each closure-per-step form: the same step with the loss defined once (what rebinding
should come close to), the NumPy primal (the loss alone) and the peers doing the same thing
eagerly: autograd's grad of a lambda made each step, jax.grad of a lambda made each step (no
jit: a new lambda would be traced again) and jax.jit(jax.grad(loss)) made once. The loss is
also written as code for several array libraries writes it, its NumPy module a parameter
(`def mse_xp(w, batch, xp=np)`), and traced anew each step (`function(grad(lambda ...))`).
Every form's gradient (Hessian) is checked against the loss-defined-once gradient (Hessian)
before timing; the script exits with status 1 if one differs. Last, implicit_grad of a loss
calling a callable object held in a global whose class holds the Variable (resolved when the
step runs, transforms/dynamic_calls.py), beside the same loss written inline. Times are
milliseconds per step (best of --repeat runs) and the ratio to the NumPy primal.
"""
from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy loads its BLAS

import sys  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_speed import describe_environment, parse_options  # noqa: E402
from traced_speed import best_times_in_turns, load_jax  # noqa: E402

import autotrace as at  # noqa: E402
from autotrace import layers, optimizers  # noqa: E402


def make_mse(np_module):
    """The loss, written once for NumPy and for each peer's NumPy module."""
    def mse(w, batch):
        inputs, targets = batch
        return np_module.mean((np_module.tanh(inputs @ w) - targets) ** 2)
    return mse


mse = make_mse(np)


def mse_xp(w, batch, xp=np):
    """The loss written for several array libraries: its NumPy module a parameter."""
    inputs, targets = batch
    return xp.mean((xp.tanh(inputs @ w) - targets) ** 2)


def functional_steps(rng, autograd, jax):
    """{name: step} for a loss of parameters w and a batch, each step giving the gradient."""
    w = rng.normal(size=(8, 1))
    batch = rng.normal(size=(64, 8)), rng.normal(size=(64, 1))
    gradient_once = at.grad(mse)
    gradient_xp_once = at.grad(mse_xp)
    steps = {
        "numpy primal (the loss alone)": lambda: mse(w, batch),
        "grad(lambda w: loss(w, batch))": lambda: at.grad(lambda v: mse(v, batch))(w),
        "value_and_grad(lambda ...)[1]": lambda: at.value_and_grad(
            lambda v: mse(v, batch))(w)[1],
        "grad(loss) made once": lambda: gradient_once(w, batch),
        "grad(loss with xp=np) made once": lambda: gradient_xp_once(w, batch),
        "grad(lambda w: loss_xp(w, batch))": lambda: at.grad(lambda v: mse_xp(v, batch))(w),
        "function(grad(lambda w: loss(w, batch)))": lambda: at.function(
            at.grad(lambda v: mse(v, batch)))(w),
    }
    if autograd is not None:
        autograd_mse = make_mse(autograd.numpy)
        steps["autograd grad(lambda) each step"] = lambda: autograd.grad(
            lambda v: autograd_mse(v, batch))(w)
    if jax is not None:
        jax_mse = make_mse(jax.numpy)
        on_device = jax.numpy.asarray(w), tuple(jax.numpy.asarray(b) for b in batch)
        steps["jax.grad(lambda) each step"] = lambda: jax.grad(
            lambda v: jax_mse(v, on_device[1]))(on_device[0]).block_until_ready()
        jitted = jax.jit(jax.grad(jax_mse))
        steps["jax.jit(jax.grad(loss)) made once"] = lambda: jitted(
            *on_device).block_until_ready()
    hessians = {"numpy primal (the loss alone)": steps["numpy primal (the loss alone)"],
                "hessian(lambda w: loss(w, batch))": lambda: at.hessian(
                    lambda v: mse(v, batch))(w),
                "hessian(lambda w: loss_xp(w, batch))": lambda: at.hessian(
                    lambda v: mse_xp(v, batch))(w),
                "hessian(loss) made once": lambda: hessian_once(w, batch)}
    hessian_once = at.hessian(mse)
    return steps, hessians, (gradient_once(w, batch), hessian_once(w, batch))


def keras_steps(rng):
    """{name: step} for a two-layer net, each step giving the gradients of its Variables (the
    optimizer's update is applied by the minimize forms and timed with them)."""
    x, y = rng.normal(size=(64, 8)), rng.normal(size=(64, 1))
    hidden, output = layers.Dense(16, activation="relu"), layers.Dense(1)
    optimizer = optimizers.SGD(0.0)  # (a step of 0: every step sees the same Variables)

    def loss_once():
        return np.mean((output(hidden(x)) - y) ** 2)

    def implicit_inner_loss():
        def loss():
            return np.mean((output(hidden(x)) - y) ** 2)
        return [gradient for gradient, _ in at.implicit_value_and_grad(loss)()[1]]

    loss_once()  # (the layers build on their first call)
    steps = {
        "numpy primal (the net's loss alone)": loss_once,
        "implicit_value_and_grad(def loss inside)": implicit_inner_loss,
        "implicit_value_and_grad(loss defined once)": lambda: [
            gradient for gradient, _ in at.implicit_value_and_grad(loss_once)()[1]],
        "minimize(lambda)": lambda: optimizer.minimize(
            lambda: np.mean((output(hidden(x)) - y) ** 2)),
        "minimize(loss defined once)": lambda: optimizer.minimize(loss_once),
    }
    reference = steps["implicit_value_and_grad(loss defined once)"]()
    return steps, reference


class _Scorer:
    """A loss object whose class holds the Variable it reads (set by global_object_steps)."""

    w = None

    def __call__(self, inputs, targets):
        return np.mean((np.tanh(inputs @ self.w) - targets) ** 2)


scorer = _Scorer()  # a global of this module, which the loss below calls


def global_object_steps(rng):
    """{name: step} for a loss calling `scorer`, a global, each step giving the gradient of
    its class's Variable; and the same loss written inline."""
    inputs, targets = rng.normal(size=(64, 8)), rng.normal(size=(64, 1))
    _Scorer.w = at.Variable(rng.normal(size=(8, 1)))

    def loss():
        return scorer(inputs, targets)

    def loss_inline():
        return np.mean((np.tanh(inputs @ _Scorer.w) - targets) ** 2)
    through_object, inline = at.implicit_grad(loss), at.implicit_grad(loss_inline)
    steps = {
        "numpy primal (the object's loss alone)": loss,
        "implicit_grad(loss calling a global object)": lambda: [
            gradient for gradient, _ in through_object()],
        "implicit_grad(the same loss written inline)": lambda: [
            gradient for gradient, _ in inline()],
    }
    return steps, steps["implicit_grad(the same loss written inline)"]()


def _same(given, expected) -> bool:
    if isinstance(expected, list):
        return len(given) == len(expected) and all(map(_same, given, expected))
    return np.allclose(np.asarray(given), np.asarray(expected), rtol=1e-10, atol=1e-12)


def main(argv=None) -> int:
    options, _ = parse_options(__doc__, argv, workloads=[])
    autograd, _ = describe_environment()
    jax, _ = load_jax()
    rng = np.random.default_rng(0)
    functional, hessians, (functional_reference, hessian_reference) = functional_steps(
        rng, autograd, jax)
    keras, keras_reference = keras_steps(rng)
    global_object, global_object_reference = global_object_steps(rng)
    failed = False
    for group, reference in ((functional, functional_reference),
                             (hessians, hessian_reference), (keras, keras_reference),
                             (global_object, global_object_reference)):
        for name, step in group.items():
            if "primal" in name or "minimize" in name:
                continue
            if not _same(step(), reference):
                print(f"WRONG: {name} differs from the derivative of the loss defined once")
                failed = True
    if failed:
        return 1
    for title, group in (("A loss of parameters w and a batch (8 -> 1, batch 64)", functional),
                         ("Hessian of that loss", hessians),
                         ("Two Dense layers (8 -> 16 -> 1, batch 64), Variables", keras),
                         ("A loss object held in a global, its class holding the Variable "
                          "(8 -> 1, batch 64)", global_object)):
        print(f"\n{title}")
        times = best_times_in_turns(group, options.repeat)
        primal = next((t for name, t in times.items() if "primal" in name), None)
        for name, seconds in times.items():
            ratio = "" if primal is None else f"{seconds / primal:9.1f} x primal"
            print(f"  {name:45s} {seconds * 1e3:9.3f} ms/step {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
