"""Which calls of np.linalg.qr and of the matrix norms of singular values the derivative rules
(transforms/rules/linalg.py and matrix_norms.py) cover, and what those norms weigh; each
helper here is a constant to the gradient.

np.linalg.qr(a) of an m x n matrix with m >= n has derivatives where R is nonsingular (a of
full rank): Q and R move together so that Q stays orthonormal and R upper triangular. A wide
matrix (m < n), and mode 'complete' of a tall one (whose extra columns of Q are any basis of the
complement), are refused, as JAX refuses them; so is mode 'raw' (LAPACK's reflectors).

np.linalg.norm of a matrix with ord=2, -2 and 'nuc' (and matrix_norm's) is the largest, the
smallest and the sum of its singular values s, whose gradient is U diag(gs) V^T, as svdvals's
(at tied singular values too: the weights below split a max or min evenly among the ties, and
the sum of u_k v_k^T over tied ones does not depend on the basis the SVD picked).
np.linalg.cond of p=None, 2 and -2 is a ratio of two of them, differentiated the same way.

np.linalg.tensorinv and tensorsolve are inv and solve of their argument as a square matrix
(tensor_rows, tensorsolve_order say which): their rules are inv's and solve's, reshaped.
"""
from __future__ import annotations

import numpy as np

from .adjoint_ops import extremum_weights
from ..devices import array_module


def qr_checked(a, mode="reduced") -> None:
    """Raise NotImplementedError where np.linalg.qr(a, mode) has no derivative rule."""
    shape = np.shape(a)
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(
            f"np.linalg.qr with mode={mode!r} has no derivative rule: autotrace differentiates "
            f"mode 'reduced' (the default), 'r', and 'complete' of a square matrix")
    m, n = shape[-2:]
    if m < n:
        raise NotImplementedError(
            f"np.linalg.qr of a {m}x{n} matrix (fewer rows than columns) has no derivative "
            f"rule (nor in JAX): write q, r1 = np.linalg.qr(a[..., :{m}]) of its first {m} "
            f"columns and r2 = q.T @ a[..., {m}:], so that r = [r1, r2]")
    if mode == "complete" and m != n:
        raise NotImplementedError(
            f"np.linalg.qr of a {m}x{n} matrix with mode='complete' has no derivative rule: Q's "
            f"last {m - n} columns are any basis of the complement of a's columns, so no "
            f"gradient is defined for them; use mode='reduced' (the default)")


def _is_singular_value_ord(ord) -> bool:
    return ord == "nuc" if isinstance(ord, str) else ord in (2, -2)


def singular_value_axes(x, ord=None, axis=None):
    """The axes (non-negative, in the order given) of the matrices whose singular values
    np.linalg.norm(x, ord, axis) reduces: ord 2, -2 or 'nuc' over two axes. None for every
    other norm."""
    ndim = np.ndim(x)
    axes = tuple(range(ndim)) if axis is None else (
        (axis,) if np.ndim(axis) == 0 else tuple(axis))
    if len(axes) != 2 or not _is_singular_value_ord(ord):
        return None
    return tuple(int(each) % ndim for each in axes)


def _fold_singular_value_axes(arguments):
    """`singular_value_axes(x, None, axis)` is None: the default ord's norm is no norm of
    singular values (transforms/rules/core.py folds such calls in the code it makes, so that
    the rules of np.linalg.norm(x) read as those of the 2-norm alone)."""
    ord = arguments[1] if len(arguments) > 1 else None
    # (a constant node's `value`; a name has none)
    return ord if ord is not None and hasattr(ord, "value") and ord.value is None else None


singular_value_axes.__autotrace_fold__ = _fold_singular_value_axes


def singular_value_weights(s, ord):
    """d norm / d s for the singular values `s` (last axis) of a norm of ord 2 (the largest),
    -2 (the smallest) or 'nuc' (their sum): ones for 'nuc', 1/(number of ties) where the max or
    min is attained else 0."""
    xp = array_module(s)
    if isinstance(ord, str):
        return xp.ones_like(s)
    extremum = xp.max(s, axis=-1) if ord > 0 else xp.min(s, axis=-1)
    return extremum_weights(s, extremum, axis=-1)


def cond_ends(s, p=None):
    """For np.linalg.cond(x, p) of p=None or 2 (s_max / s_min) or -2 (s_min / s_max), of the
    singular values `s` (last axis): the weights of the numerator's and the denominator's
    singular value (extremum_weights: split evenly among ties). Raises for other p."""
    if isinstance(p, str) or p not in (None, 2, -2):
        raise NotImplementedError(
            f"np.linalg.cond with p={p!r} has no derivative rule (it has for p=None, 2 and "
            f"-2): write np.linalg.norm(x, p) * np.linalg.norm(np.linalg.inv(x), p), which is "
            f"differentiated")
    xp = array_module(s)
    largest = extremum_weights(s, xp.max(s, axis=-1), axis=-1)
    smallest = extremum_weights(s, xp.min(s, axis=-1), axis=-1)
    return (smallest, largest) if p == -2 else (largest, smallest)


def tensor_rows(a, ind=2) -> int:
    """The rows (and columns) of np.linalg.tensorinv(a, ind)'s matrix: the size of a's first
    `ind` axes."""
    return int(np.prod(np.shape(a)[:ind]))


def tensorsolve_order(a, axes=None) -> tuple:
    """The transpose of a that np.linalg.tensorsolve(a, b, axes) makes before reading a as a
    matrix: its `axes` moved last."""
    axes = () if axes is None else tuple(axes)
    return tuple(axis for axis in range(np.ndim(a)) if axis not in axes) + axes
