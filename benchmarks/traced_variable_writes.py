"""What a cached traced training step pays to store the Variables it writes.

    python benchmarks/traced_variable_writes.py

An Adam step over `count` Variables of 4 elements (60 and 200: 181 and 601 cells written,
with the moments and the step counter), traced once by autotrace.function, then called from
the cache. For each: the step's best and median time, the time the store of the written
cells takes (OutputStructure._store, timed around it), and cProfile's call counts of the
store and of `owned`. The Variables are checked against Adam's update by hand first.
"""
from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import autotrace as at  # noqa: E402
from autotrace.runtime.tracing import trees  # noqa: E402

_store_times: list = []
_store = trees.OutputStructure._store


def _timed_store(self, *args):
    start = time.perf_counter()
    _store(self, *args)
    _store_times.append(time.perf_counter() - start)


def make_step(count: int):
    rng = np.random.default_rng(0)
    variables = [at.Variable(rng.normal(size=(4,)), name=f"w{i}") for i in range(count)]
    optimizer = at.optimizers.Adam(learning_rate=1e-3)
    gradients = at.implicit_grad(lambda: sum(np.sum(v * v) for v in variables))
    step = at.function(lambda: optimizer.apply_gradients(gradients()))
    return step, variables


def check(count: int = 3) -> None:
    step, variables = make_step(count)
    start = [v.numpy().copy() for v in variables]
    step()
    step()
    for before, variable in zip(start, variables):
        w, m, v = before, 0.0, 0.0
        for t in (1, 2):  # Adam by hand (Keras's epsilon 1e-7)
            g = 2 * w
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            rate = 1e-3 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            w = w - rate * m / (np.sqrt(v) + 1e-7)
        np.testing.assert_allclose(variable.numpy(), w, rtol=1e-12)


def measure(count: int, calls: int) -> str:
    step, _ = make_step(count)
    step()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    trees.OutputStructure._store = _timed_store
    del _store_times[:]
    for _ in range(500):
        step()
    trees.OutputStructure._store = _store
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(100):
        step()
    profile.disable()
    counts = {name: calls_made for (_, _, name), (_, calls_made, *_)
              in pstats.Stats(profile).stats.items() if name in ("_store", "owned", "_memory")}
    return (f"{count} Variables ({3 * count + 1} cells written): step best "
            f"{min(times) * 1e3:.3f} ms, median {np.median(times) * 1e3:.3f} ms; _store best "
            f"{min(_store_times) * 1e3:.4f} ms, median {np.median(_store_times) * 1e3:.4f} ms; "
            f"calls in 100 steps: {counts}")


if __name__ == "__main__":
    check()
    for count, calls in ((60, 3000), (200, 1000)):
        print(measure(count, calls))
