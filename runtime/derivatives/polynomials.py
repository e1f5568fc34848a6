"""Derivative helpers of np.polyval and np.vander: the exponents their slopes multiply by.

np.polyval(p, x) = sum_k p[k] x^(n-1-k) over the n coefficients p[k] (the rows of p, the highest
power first). It is linear in p, and p[k]'s gradient is g x^(n-1-k): the reverse scan
s[k] = c[k] + x s[k+1] (runtime/derivatives/scans.py) of the cotangent set in the last row,
which multiplies by x and never divides, so it is exact where x is 0. In x its slope is the
polynomial whose coefficients are p[k] (n-1-k) for k < n-1: `polynomial_exponents`.

np.vander(x, N, increasing): column j is x^e[j], e[j] = j where `increasing`, N-1-j otherwise.
Its slope in x is e[j] x^(e[j]-1), e[j] times the column beside it (one to the left where
increasing, one to the right otherwise: `vander_step`): `vander_exponents`.
"""
from __future__ import annotations

import numpy as np


def _exponent_dtype(dtype):
    """Exponents multiply values of `dtype` in it where it is inexact (a float32 derivative
    stays float32), as Python ints otherwise."""
    return dtype if np.dtype(dtype).kind in "fc" else np.int64


def polynomial_exponents(coefficients):
    """The exponents n-1, ..., 1 of the coefficients (an array, the highest power first along
    its first axis) but the last, shaped to multiply coefficients[:-1]: the slope's
    coefficients are coefficients[:-1] * polynomial_exponents(coefficients)."""
    shape = coefficients.shape
    exponents = np.arange(shape[0] - 1, 0, -1, dtype=_exponent_dtype(coefficients.dtype))
    return np.reshape(exponents, (len(exponents),) + (1,) * (len(shape) - 1))


def vander_exponents(powers, increasing: bool):
    """The exponent of each column of np.vander's result `powers`, as a row."""
    columns = powers.shape[1]
    exponents = np.arange(columns, dtype=_exponent_dtype(powers.dtype))
    return np.reshape(exponents if increasing else exponents[::-1], (1, columns))


def vander_step(increasing: bool) -> int:
    """The step `shift` (runtime/derivatives/scans.py) moves np.vander's columns by so that
    each stands where the next higher power stands: the one power lower beside each column."""
    return 1 if increasing else -1
