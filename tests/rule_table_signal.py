"""Rule-table entries (see tests/rule_table.py) for NumPy's signal and polynomial functions:
np.convolve and np.correlate in each mode, with the first argument the longer, the shorter
(np.convolve swaps them, np.correlate reverses its result) and of the same size."""
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
    return table
