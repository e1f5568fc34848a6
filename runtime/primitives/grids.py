"""np.meshgrid, traced as NumPy computes it: each argument, flattened, reshaped to run along
its own axis of the grid and broadcast against the others (views; copied unless copy=False).
It has no op of its own: a grid is made of reshape, broadcast_to and copy ops, which vmap
batches and the backends run. `grid_axis` says along which axis an argument runs, for the
binding and for the derivative's adjoint (runtime/derivatives/structural_adjoints.py).
"""
from __future__ import annotations

import numpy as np

from .registry import SAME_NAME, static, traces


def grid_axis(k: int, count: int, indexing: str) -> int:
    """The axis of np.meshgrid's grids along which its argument `k` of `count` runs: k, but
    that Cartesian ('xy') indexing swaps the first two."""
    if indexing == "xy" and count > 1 and k < 2:
        return 1 - k
    return k


def check_indexing(indexing) -> str:
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    return indexing


@traces(np.meshgrid, container=True, new_per_argument=True, array_api_function=SAME_NAME)
def bind_meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    indexing = check_indexing(static(indexing, "indexing of numpy.meshgrid"))
    count = len(xi)
    grids = []
    for k, x in enumerate(xi):
        shape = [1] * count
        shape[grid_axis(k, count, indexing)] = -1
        grids.append(np.reshape(x, shape))
    if not static(sparse, "sparse of numpy.meshgrid"):
        grids = np.broadcast_arrays(*grids)
    if static(copy, "copy of numpy.meshgrid"):
        return tuple(np.copy(grid) for grid in grids)
    return list(grids) if sparse else tuple(grids)  # (NumPy 2.4's kinds)
