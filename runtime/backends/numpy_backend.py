"""The NumPy backend: every equation one NumPy call (or Python float arithmetic for a graph of
float64 scalars); always available, and what the other CPU backend falls back on."""
from __future__ import annotations

import numpy as np

from .protocol import Backend


class NumpyBackend(Backend):
    name = "numpy"
    device_kind = "cpu"
    lowers_scalars = True
    keeps_buffers = True

    def array_module(self):
        return np


BACKEND = NumpyBackend()
