"""The NumPy backend: every equation one NumPy call (or Python float arithmetic for a graph of
float64 scalars); always available, and what the other CPU backend falls back on. Its passes
compute a matmul whose contracted length is 1 with np.einsum (outer_products.py), and a stack
of matrices times one matrix as one product of the stack's rows (row_products.py), and a product
read through a transpose and reshaped straight into the transposed layout
(transposed_products.py).

A reduction is written as its ufunc's `reduce` (`np.add.reduce(c, axis=(1,), keepdims=True)`),
which is what np.sum, np.prod, np.max and np.min call on an array after their Python wrapper:
3.0 us against 7.3 for a (1, 10) array's row sums (Zen 3), where a small graph spends its time.
The axis is always given (a reduce's default is 0, np.sum's None)."""
from __future__ import annotations

import numpy as np

from ..ops import call_source
from .outer_products import OuterProducts
from .protocol import Backend
from .row_products import RowProducts
from .transposed_products import TransposedProducts

_UFUNC_REDUCTIONS = {"reduce_sum": "np.add.reduce", "reduce_prod": "np.multiply.reduce",
                     "reduce_max": "np.maximum.reduce", "reduce_min": "np.minimum.reduce"}


def _reduce_source(path: str):
    return lambda args, attrs: call_source(path, args, {"axis": None, **attrs})


class NumpyBackend(Backend):
    name = "numpy"
    device_kind = "cpu"
    lowers_scalars = True
    keeps_buffers = True
    sources = {name: _reduce_source(path) for name, path in _UFUNC_REDUCTIONS.items()}

    def array_module(self):
        return np

    def passes(self) -> list:
        # NumPy's matmul of a column by a row is a slow loop, and of a stack one BLAS call per
        # matrix; a product reshaped after a transpose is copied
        return [OuterProducts(), RowProducts(), TransposedProducts()]


BACKEND = NumpyBackend()
