"""np.linalg.multi_dot, traced as the np.dot products NumPy makes, in NumPy's order.

NumPy multiplies a chain of matrices in the order of fewest scalar multiplications, the matrix
chain order (Cormen et al., Introduction to Algorithms, 15.2): for three matrices the cheaper of
(AB)C and A(BC), A(BC) on a tie; for more, the dynamic program over the split of each
sub-chain, which keeps the first split of least cost. The traced graph makes the same products
in the same order, so its result is NumPy's to the bit where the products are. (NumPy's
program sums the costs in floating point: costs past 2**53 could round to a tie it breaks
otherwise; these are sums of exact integers.)
"""
from __future__ import annotations

import numpy as np

from .registry import UntraceableError, reject_arguments, traces


def chain_splits(sizes: list) -> dict:
    """The matrix chain order of matrices sized sizes[i] x sizes[i + 1]: (i, j) -> the k at
    which the product of matrices i..j is split into i..k times k+1..j."""
    count = len(sizes) - 1
    if count == 3:  # NumPy's own test for three: A(BC) unless (AB)C costs less
        left_first = sizes[0] * sizes[2] * (sizes[1] + sizes[3])
        right_first = sizes[1] * sizes[3] * (sizes[0] + sizes[2])
        return {(0, 2): 1 if left_first < right_first else 0, (0, 1): 0, (1, 2): 1}
    cost = {(i, i): 0 for i in range(count)}
    splits = {}
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            for k in range(i, j):
                total = cost[i, k] + cost[k + 1, j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if (i, j) not in cost or total < cost[i, j]:
                    cost[i, j], splits[i, j] = total, k
    return splits


def _product(matrices: list, splits: dict, i: int, j: int):
    if i == j:
        return matrices[i]
    k = splits[i, j]
    return np.dot(_product(matrices, splits, i, k), _product(matrices, splits, k + 1, j))


@traces(np.linalg.multi_dot)
def bind_multi_dot(arrays, *, out=None):
    reject_arguments("numpy.linalg.multi_dot", out=out)
    arrays = [array if hasattr(array, "dtype") else np.asarray(array) for array in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return np.dot(arrays[0], arrays[1])
    first, *middle, last = arrays
    row, column = np.ndim(first) == 1, np.ndim(last) == 1
    matrices = [np.reshape(first, (1, -1)) if row else first, *middle,
                np.reshape(last, (-1, 1)) if column else last]
    for matrix in matrices:
        if np.ndim(matrix) != 2:
            raise np.linalg.LinAlgError(f"{np.ndim(matrix)}-dimensional array given. Array "
                                        f"must be two-dimensional")
    sizes = [np.shape(matrix)[0] for matrix in matrices] + [np.shape(matrices[-1])[1]]
    if None in sizes:
        raise UntraceableError(
            "autotrace cannot trace numpy.linalg.multi_dot of an array with a dimension of "
            "unknown size: the order of its products depends on the sizes; write the "
            "products with @ in the order you choose")
    result = _product(matrices, chain_splits(sizes), 0, len(matrices) - 1)
    if row and column:
        return result[0, 0]
    return np.ravel(result) if row or column else result
