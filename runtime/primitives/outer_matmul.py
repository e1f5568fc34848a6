"""A matmul whose contracted length is 1 (a column times a row), computed by np.einsum.

The weight gradient of a dense layer at batch 1 is `x.T @ g`, a (784, 1) @ (1, 512) product.
NumPy's matmul gives a product whose contracted length is 1 to BLAS only where it is a dot
product: a column times a row runs NumPy's own triple loop (numpy/_core/src/umath/
matmul.c.src, "column @ row"), 570 us for (784, 1) @ (1, 512) in float32 or float64 (2 cores,
AVX-512). np.einsum("...ij,...jk->...ik") computes the same in 85 us (float32) and 170 us
(float64), about the time it takes to write the result; the broadcast multiply `a * b`, with
an add of +0.0 for the sign of zeros, takes 165 and 310.

Both loops set each element to +0.0 and add the one product to it, so where the product is
-0.0 both give +0.0, and every other product (infinities, NaN, what underflows) is the rounded
product: the result is NumPy's matmul's, bit for bit (tests/runtime/test_outer_products.py
holds both to it, special values included).

Only float32 and float64 matrices (two dimensions or more, batched ones included) of one
dtype whose contracted length is 1 are computed so, with results of MIN_ELEMENTS elements or
more, and not a (1, 1) @ (1, 1) product, which NumPy computes as a BLAS dot. The traced
graphs' CPU backends rewrite such a matmul (runtime/backends/outer_products.py); the eager
derivatives' matmul adjoints call `matmul_of_one_term` (runtime/derivatives/adjoint_products.py).
"""
from __future__ import annotations

import math

import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Below this many elements einsum's fixed cost is not won back: (16, 1) @ (1, 10) 1.5 us with
# matmul, 2.7 with einsum; (32, 1) @ (1, 64) 4.2 and 3.4; (64, 1) @ (1, 64) 7.1 and 4.0.
MIN_ELEMENTS = 1024
SUBSCRIPTS = "...ij,...jk->...ik"


def outer_product(a, b):
    """`a @ b` for a product whose contracted length is 1, as np.einsum computes it."""
    return np.einsum(SUBSCRIPTS, a, b)


def is_one_term(a_shape: tuple, b_shape: tuple, dtypes, result_shape: tuple) -> bool:
    """Whether `a @ b` (operands of these shapes, `dtypes` its operands' and result's) is one
    outer_product computes as NumPy's matmul does, and sooner: float matrices whose contracted
    length is 1, other than a single element (a BLAS dot), with a result of MIN_ELEMENTS
    elements or more or of a size not known (None in `result_shape`)."""
    if len(a_shape) < 2 or len(b_shape) < 2 or a_shape[-1] != 1 or b_shape[-2] != 1:
        return False
    if a_shape[-2] == 1 and b_shape[-1] == 1:
        return False
    if None not in result_shape and math.prod(result_shape) < MIN_ELEMENTS:
        return False
    return all(dtype in FLOATS for dtype in dtypes)


def matmul_of_one_term(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a @ b` of two NumPy arrays (two dimensions each), by outer_product where that is
    NumPy's matmul sooner."""
    if a.shape[-1] == 1 and a.dtype == b.dtype and is_one_term(
            a.shape, b.shape, (a.dtype,), a.shape[:-1] + b.shape[-1:]):
        return outer_product(a, b)
    return a @ b
