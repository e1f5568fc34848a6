"""Linear recurrences along one axis, the helpers of cumprod's derivative rules.

The derivative of y = cumprod(a) is a recurrence, dy_i = a_i dy_{i-1} + y_{i-1} da_i; written
as the cumulative sum of da / a times y, it divides by a and is not defined where a is 0. These
helpers run the recurrences themselves, with no division, so they are exact at zeros:

    forward_scan(b, a)[k] = b[k] + a[k] * forward_scan(b, a)[k - 1]     (0 before the first)
    reverse_scan(c, a)[k] = c[k] + a[k + 1] * reverse_scan(c, a)[k + 1]  (0 after the last)

`a` has the shape of the first argument. Each is linear in its first argument and the transpose
of the other in it; `shift` moves an array one place along an axis. Where the products of `a`
along the axis are finite and not too small to divide by, a scan is a cumulative sum of b divided
by those products, times them (fast, and the same sums); elsewhere, and on traced values, it
takes ceil(log2(n)) vectorized steps for n elements (a Hillis-Steele scan). The two agree, so
their rules (transforms/rules/derivative_helpers.py), which call only each other,
hold whichever ran, and derivatives of any order stay exact.
"""
from __future__ import annotations

import numpy as np

from .structure import _is_traced
from ..devices import array_module


def _array(xp, x):
    return x if hasattr(x, "shape") else xp.asarray(x)  # a list or a float; keep traced values


def shift(x, axis: int, step: int, fill=0.0):
    """`x` moved `step` (1 or -1) places along `axis`: with step 1, out[k] = x[k - 1] and
    out[0] = fill; with step -1, out[k] = x[k + 1] and out[-1] = fill."""
    xp = array_module(x)
    moved = xp.moveaxis(_array(xp, x), axis, -1)
    size = moved.shape[-1]
    if size == 0:
        return xp.moveaxis(moved, -1, axis)
    edge = xp.full(moved.shape[:-1] + (1,), fill, dtype=moved.dtype)
    if step > 0:
        out = xp.concatenate([edge, moved[..., :size - 1]], axis=-1)
    else:
        out = xp.concatenate([moved[..., 1:], edge], axis=-1)
    return xp.moveaxis(out, -1, axis)


def forward_scan(b, a, axis: int):
    """t with t[k] = b[k] + a[k] t[k - 1] along `axis` (t[0] = b[0])."""
    xp = array_module(b)
    b = _array(xp, b)
    if not (_is_traced(b) or _is_traced(a)):
        # t[k] = sum_{j <= k} b[j] p[k] / p[j] for the products p of a: exact up to rounding
        # unless some p is 0, subnormal or infinite, and then t is not finite.
        with np.errstate(all="ignore"):
            products = xp.cumprod(_array(xp, a), axis=axis)
            t = products * xp.cumsum(b * (1.0 / products), axis=axis)
        if bool(xp.all(xp.isfinite(t))):
            return t
    values = xp.moveaxis(b, axis, -1)
    factors = xp.moveaxis(_array(xp, a), axis, -1)
    size = values.shape[-1]
    step = 1
    while step < size:
        # Each position takes in the stretch of `step` positions before its own.
        values = xp.concatenate([values[..., :step],
                                 values[..., step:] + factors[..., step:] * values[..., :-step]],
                                axis=-1)
        factors = xp.concatenate([factors[..., :step],
                                  factors[..., step:] * factors[..., :-step]], axis=-1)
        step *= 2
    return xp.moveaxis(values, -1, axis)


def reverse_scan(c, a, axis: int):
    """s with s[k] = c[k] + a[k + 1] s[k + 1] along `axis` (s[-1] = c[-1])."""
    xp = array_module(c)
    c = _array(xp, c)
    if not (_is_traced(c) or _is_traced(a)):
        # s[k] = sum_{i >= k} c[i] p[i] / p[k], as in forward_scan.
        with np.errstate(all="ignore"):
            products = xp.cumprod(_array(xp, a), axis=axis)
            later = xp.flip(xp.cumsum(xp.flip(c * products, axis), axis=axis), axis)
            s = later * (1.0 / products)
        if bool(xp.all(xp.isfinite(s))):
            return s
    following = shift(a, axis, -1)
    return xp.flip(forward_scan(xp.flip(c, axis), xp.flip(following, axis), axis), axis)


def products_before(rows):
    """Along the last axis, the product of the elements before each one (1 for the first)."""
    return shift(array_module(rows).cumprod(rows, axis=-1), -1, 1, 1.0)


def products_after(rows):
    """Along the last axis, the product of the elements after each one (1 for the last)."""
    xp = array_module(rows)
    return xp.flip(products_before(xp.flip(rows, -1)), -1)
