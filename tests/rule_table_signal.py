"""Rule-table entries (see tests/rule_table.py) for NumPy's signal and polynomial functions:
np.convolve and np.correlate in each mode, with the first argument the longer, the shorter
(np.convolve swaps them, np.correlate reverses its result) and of the same size; np.trapezoid
with samples alone, a spacing dx, and points x of one dimension and of the samples' own;
np.polyval with rows of coefficients and of broadcast ones, at points and at a number, zero
among them; np.vander with as many columns as points, more, fewer, in each order."""
from __future__ import annotations

import numpy as np


def _normal(*shapes):
    return lambda rng: tuple(rng.standard_normal(shape) for shape in shapes)


# (name, size of a, size of v): sizes whose shorter is odd and even, "same"'s offsets differ.
_SIZES = [("longer-a", 6, 3), ("longer-v", 2, 5), ("even-shorter", 4, 7), ("equal", 4, 4)]


def signal_table(Entry) -> list:
    """The entries, made with the table's Entry class."""
    table = []
    for function in (np.convolve, np.correlate):
        for name, n, m in _SIZES:
            for mode in ("full", "same", "valid"):
                table.append(Entry(f"{function.__name__}/{mode}-{name}", function,
                                   _normal((n,), (m,)), dict(mode=mode)))
        table.append(Entry(f"{function.__name__}/default-mode", function, _normal((5,), (3,))))
    table += [
        Entry("trapezoid", np.trapezoid, _normal((6,))),
        Entry("trapezoid/dx", np.trapezoid, lambda rng: (rng.standard_normal((3, 5)),),
              make_kwargs=lambda rng: dict(dx=float(rng.uniform(0.2, 1.0)))),
        Entry("trapezoid/dx-array", np.trapezoid, _normal((3, 5)),
              make_kwargs=lambda rng: dict(dx=rng.uniform(0.2, 1.0, (3, 1)))),
        Entry("trapezoid/x", np.trapezoid, _normal((2, 5), (5,))),
        Entry("trapezoid/x-axis0", np.trapezoid, _normal((4, 3), (4,)), dict(axis=0)),
        Entry("trapezoid/x-same-shape", np.trapezoid, _normal((3, 4), (3, 4)), dict(axis=0)),
        Entry("trapezoid/x-broadcast", np.trapezoid, _normal((4,), (3, 4))),
        Entry("polyval", np.polyval, _normal((4,), (5,))),
        Entry("polyval/at-zero", np.polyval, lambda rng: (
            rng.standard_normal(5), np.concatenate([[0.0], rng.standard_normal(3)]))),
        Entry("polyval/number", np.polyval, lambda rng: (
            rng.standard_normal(3), float(rng.standard_normal()))),
        Entry("polyval/rows", np.polyval, _normal((3, 2), (4, 1))),
        Entry("polyval/constant", np.polyval, _normal((1,), (3,))),
        Entry("vander", np.vander, _normal((4,))),
        Entry("vander/wider", np.vander, lambda rng: (
            np.concatenate([[0.0], rng.standard_normal(2)]),), dict(N=5)),
        Entry("vander/increasing", np.vander, _normal((4,)), dict(N=3, increasing=True)),
        Entry("vander/one-column", np.vander, _normal((3,)), dict(N=1)),
    ]
    return table
