"""Eager training steps written the Keras/TF way, where the loss is a closure made anew each
step: `opt.minimize(lambda: loss(...))`, `implicit_value_and_grad(loss)()` with `def loss()`
inside the step, `autotrace.grad(lambda w: loss(w, batch))(w)` (or hessian) in a loop. Each
such closure is a new function of the same code; its derivative is the one made for the first,
rebound to its cells (transforms/codegen/rebinding.py), not generated again. Beside each, the same step with
the loss defined once, which is what rebinding should come close to.

    python benchmarks/eager_steps.py [--steps 200]

Prints milliseconds per step (the best of 3 runs of --steps steps).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import autotrace as at
from autotrace import layers, optimizers


def keras_steps(rng):
    x, y = rng.normal(size=(64, 8)), rng.normal(size=(64, 1))
    hidden, output = layers.Dense(16, activation="relu"), layers.Dense(1)
    optimizer = optimizers.Adam(0.01)

    def minimize_lambda():
        return optimizer.minimize(lambda: np.mean((output(hidden(x)) - y) ** 2))

    def implicit_inner_loss():
        def loss():
            return np.mean((output(hidden(x)) - y) ** 2)
        value, pairs = at.implicit_value_and_grad(loss)()
        optimizer.apply_gradients(pairs)
        return value

    def loss_once():
        return np.mean((output(hidden(x)) - y) ** 2)

    def minimize_defined_once():
        return optimizer.minimize(loss_once)
    return {"minimize(lambda)": minimize_lambda,
            "implicit_value_and_grad(def loss inside)": implicit_inner_loss,
            "minimize(loss defined once)": minimize_defined_once}


def mse(w, batch):
    inputs, targets = batch
    return np.mean((np.tanh(inputs @ w) - targets) ** 2)


def functional_steps(rng):
    w = rng.normal(size=(8, 1))
    batch = rng.normal(size=(64, 8)), rng.normal(size=(64, 1))
    gradient_once = at.grad(mse)

    def grad_lambda():
        return at.grad(lambda v: mse(v, batch))(w)

    def value_and_grad_lambda():
        return at.value_and_grad(lambda v: mse(v, batch))(w)

    def hessian_lambda():
        return at.hessian(lambda v: mse(v, batch))(w)

    def grad_defined_once():
        return gradient_once(w, batch)
    return {"grad(lambda w: loss(w, batch))": grad_lambda,
            "value_and_grad(lambda w: loss(w, batch))": value_and_grad_lambda,
            "hessian(lambda w: loss(w, batch))": hessian_lambda,
            "grad(loss) made once": grad_defined_once}


def milliseconds_per_step(step, steps: int) -> float:
    for _ in range(3):  # warm: the first derivative generated, caches filled
        step()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, (time.perf_counter() - start) / steps)
    return best * 1e3


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    options = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    for name, step in {**keras_steps(rng), **functional_steps(rng)}.items():
        print(f"{name:45s} {milliseconds_per_step(step, options.steps):8.3f} ms/step")


if __name__ == "__main__":
    main()
