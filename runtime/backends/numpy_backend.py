"""The NumPy backend: every equation one NumPy call (or Python float arithmetic for a graph of
float64 scalars); always available, and what the other CPU backend falls back on. Its one pass
computes a matmul whose contracted length is 1 with np.einsum (outer_products.py)."""
from __future__ import annotations

import numpy as np

from .outer_products import OuterProducts
from .protocol import Backend


class NumpyBackend(Backend):
    name = "numpy"
    device_kind = "cpu"
    lowers_scalars = True
    keeps_buffers = True

    def array_module(self):
        return np

    def passes(self) -> list:
        return [OuterProducts()]  # NumPy's matmul of a column by a row is a slow loop


BACKEND = NumpyBackend()
