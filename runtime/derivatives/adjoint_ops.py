"""Array helpers that derivative rules call: undoing broadcasts and reductions, the weights of
ties, extremes and clips, and small helpers of linear algebra and norms; the adjoints of
structural functions (sort, split, tile, pad, take, ...) are in structural_adjoints.py beside
it, and are named from here too.

Each helper works on the array module of its input: NumPy, CuPy, or NumPy's names over the
namespace of another array-API library (runtime/array_api.py), whose arrays have only the
standard's methods and operators (no `.sum()`, no `.dtype.kind`, no iteration). The common
cases (a Python float, an array already of the wanted shape) return at once: these run in hot
loops. A helper
that is differentiable has its own rules (transforms/rules/derivative_helpers.py), so generated
derivative code stays differentiable; the ones that return masks, sizes or axes are declared
constant there.

Inside autotrace.function a traced value may have dimensions whose size is known only at run
time (x[mask], None in an input_signature): gradients are broadcast back to them by the shape of
the traced value itself (the `broadcast_like` op), and sizes divided by are traced integers.

Integer and boolean values carry no gradient: `unbroadcast` and `unreduce` return a float zero of
their shape. A result may be an input returned as it is, or (for large arrays) a read-only
broadcast view: gradients are never written in place.
"""
from __future__ import annotations

import numpy as np

from ..abstract import UnknownDimensionError
from ..array_subclasses import refuse_in_derivative
from .dtypes import as_weights, dtype_beside, gradient_dtype, real_dtype
from .objects import operator_on_object
from .real_only import refuse_complex
from .structure import _is_traced
# The structural adjoints live beside this module; rules and tests name them from here too.
from .structural_adjoints import (  # noqa: F401
    _FLOAT_KINDS, _as_float, _float_zeros, _holds_floats, _python_numbers_alone,
    array_like, diag_adjoint, delete_sources, diagonal_adjoint, diff_part, insert_places, join,
    reshape_each, reshape_each_back, sort_like, split_like, take_at, unarray, unpad,
    unpad_values, unrepeat, unsort, unstack, untake, untake_along, untile, unwindow,
    writeable_windows)
from ..devices import array_module
from ..primitives.index import as_array, holds_traced, stacked
from ..primitives.shape import broadcast_like as broadcast_to_shape_of, dimension_size


# Up to this many elements, writing a broadcast into a new array beats np.broadcast_to's
# Python overhead (microseconds); larger results stay read-only broadcast views.
_SMALL = 1 << 14


def _broadcast(g, shape, like=None):
    """`g` broadcast to `shape`, the shape of `like` (a new array when small, else a read-only
    view). A traced `like` may have sizes known only at run time (None in `shape`). A Python
    number `g` becomes an array of the dtype NumPy gives it beside `like` (float32 beside
    float32: a float64 array would make the rest of a float32 backward pass float64)."""
    if None in shape:
        if not _is_traced(like):
            raise UnknownDimensionError(
                f"autotrace cannot broadcast a gradient to shape {shape}: its None is a size "
                f"known only at run time; pass the traced array of that shape (like=) instead")
        return broadcast_to_shape_of(g, like)
    xp = array_module(g if like is None else like)  # on the device of the value it is like
    if (xp is np and isinstance(g, (np.ndarray, np.generic, float, int))
            and getattr(g, "size", 1) <= _SMALL and _size(shape) <= _SMALL):
        out = np.empty(shape, dtype=g.dtype if hasattr(g, "dtype") else dtype_beside(g, like))
        out[...] = g
        return out
    if not hasattr(g, "shape"):
        g = xp.asarray(g, dtype=dtype_beside(g, like))
    return xp.broadcast_to(g, shape)


def _list_as_array(v, like):
    """The (nested) list or tuple of gradients `v` as one array: Python floats alone in the
    dtype of a gradient of `like`, as they would meet it."""
    return as_array(v, lambda v: array_module(like).asarray(
        v, dtype=gradient_dtype(like) if _python_numbers_alone(v) else None))


def _size(shape) -> int:
    size = 1
    for n in shape:
        size *= n
    return size


def _sum_to_shape(g, shape, like=None):
    """Sum `g` over the axes that broadcasting added or stretched, so it has `shape` (that of
    `like`, which a shape with unknown sizes needs)."""
    xp = array_module(g)
    if isinstance(g, (list, tuple)):  # the gradient of a list, item by item
        g = _list_as_array(g, like)
    elif not hasattr(g, "ndim"):  # a Python number (traced values and arrays have ndim)
        g = xp.asarray(g, dtype=dtype_beside(g, like))
    extra = g.ndim - len(shape)
    if extra > 0:
        g = _sum(xp, g, tuple(range(extra)))
    stretched = tuple(i for i, (n, m) in enumerate(zip(g.shape, shape)) if m == 1 and n != 1)
    if stretched:
        g = _sum(xp, g, stretched, keepdims=True)
    if g.shape != tuple(shape):
        g = _broadcast(g, shape, like)
    return g


def _sum(xp, g, axes, keepdims=False):
    """`g` summed over `axes`: by NumPy's method for a NumPy array (half the cost of np.sum's
    call), by module `xp`'s function for other arrays (the array API's have no `.sum`)."""
    if type(g) is np.ndarray:
        return g.sum(axis=axes, keepdims=keepdims)
    return xp.sum(g, axis=axes, keepdims=keepdims)


def _to_structure(g, x):
    """`g` (an array shaped like `np.asarray(x)`) as the nested lists, tuples and floats of `x`."""
    if isinstance(x, (list, tuple)):
        return type(x)(_to_structure(g[i], item) for i, item in enumerate(x))
    if isinstance(x, (bool, int, np.integer, np.bool_)):
        return 0.0
    if type(x) is float:
        return _as_float(g)
    return g


def _gradient_like(g, x, to_shape):
    """The slow path of unbroadcast/unreduce for values that are not arrays or floats."""
    if x is None:
        return None
    if isinstance(x, (bool, int)):
        return 0.0
    if isinstance(x, complex):
        return complex(array_module(g).sum(g))
    array = stacked(x) if holds_traced(x) else np.asarray(x)  # a list may hold traced values
    if array.dtype == object and not array.ndim:  # an object: no array, number or container
        raise operator_on_object(f"a {type(x).__name__} met the gradient of an operator")
    if array.dtype.kind not in _FLOAT_KINDS:
        return _to_structure(np.zeros(array.shape), x)
    return _to_structure(to_shape(g, array.shape), x)


_SCALARS = (float, np.float64)


def unbroadcast(g, x):
    """Sum `g` over the dimensions that broadcasting gave it, so it is shaped like `x`.

    A Python float `x` gets a Python float; an integer or boolean `x` gets a float zero.
    """
    kind = type(x)
    if kind is float:
        if type(g) is float:
            return g
        refuse_in_derivative(g, x)
        total = array_module(g).sum(g)
        return float(total) if type(total) is np.float64 else _as_float(total)
    if kind is np.float64 and type(g) in _SCALARS:  # scalar code: np.sin(x) gives np.float64
        return g
    if kind is np.ndarray:  # the hot path: no work when the shapes already agree
        if x.dtype.kind not in _FLOAT_KINDS:
            return _float_zeros(x, g)
        if type(g) is np.ndarray and g.shape == x.shape:
            return g
        refuse_in_derivative(g, x)
        return _sum_to_shape(g, x.shape, x)
    refuse_in_derivative(g, x)
    shape = getattr(x, "shape", None)
    if shape is None:
        return _gradient_like(g, x, _sum_to_shape)
    if not _holds_floats(x):
        return _float_zeros(x, g)
    if getattr(g, "shape", ()) == shape:
        return g
    return _sum_to_shape(g, shape, x)


def broadcast_like(v, g):
    """`v` broadcast to the shape of `g` (the adjoint of `unbroadcast(g, x)` in `g`). `v` may
    be a list, as unbroadcast's gradient of a list x is (np.full(shape, [a, b]))."""
    if type(g) is float:
        return v if type(v) is float else _as_float(v)
    if isinstance(v, (list, tuple)):
        v = _list_as_array(v, g)
    shape = np.shape(g)
    if getattr(v, "shape", ()) == shape:
        return v
    return _broadcast(v, shape, g)


def unbroadcast_each(gs, xs):
    """`unbroadcast` element by element: a list."""
    return [unbroadcast(g, x) for g, x in zip(gs, xs)]


def broadcast_each_like(vs, gs):
    """`broadcast_like` element by element: a list."""
    return [broadcast_like(v, g) for v, g in zip(vs, gs)]


def _expand_to_shape(g, shape, axis=None, keepdims=False, like=None):
    """`g`, the result of reducing `like` (of `shape`) over `axis`, broadcast back to `shape`."""
    if axis is not None and not keepdims and getattr(g, "ndim", 0):
        axes = _axes(axis, len(shape))
        if None in shape:  # kept axes of sizes known only at run time: no reshape can say them
            g = array_module(g).expand_dims(g, axes)
        else:
            g = array_module(g).reshape(
                g, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return _broadcast(g, shape, like)


def unreduce(g, x, axis=None, keepdims=False):
    """Put back the axes that a reduction of `x` over `axis` removed, and broadcast to x's shape."""
    kind = type(x)
    if kind is float:
        if type(g) is float:
            return g
        refuse_in_derivative(g, x)
        return _as_float(g)
    if kind is np.ndarray:
        if x.dtype.kind not in _FLOAT_KINDS:
            return _float_zeros(x, g)
        if type(g) is np.ndarray and g.shape == x.shape:
            return g
        refuse_in_derivative(g, x)
        return _expand_to_shape(g, x.shape, axis, keepdims, x)
    refuse_in_derivative(g, x)
    shape = getattr(x, "shape", None)
    if shape is None:
        return _gradient_like(g, x, lambda g, s: _expand_to_shape(g, s, axis, keepdims))
    if not _holds_floats(x):
        return _float_zeros(x, g)
    if getattr(g, "shape", ()) == shape:
        return g
    return _expand_to_shape(g, shape, axis, keepdims, x)


# Constant helpers: masks, sizes and axes (declared constant in
# transforms/rules/derivative_helpers.py).

def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(a % ndim for a in axis)


def reduced_size(a, axis, where=True, keepdims=False):
    """How many elements a reduction of `a` over `axis` combines into one: a Python int, or
    where a dimension's size is known only at run time, a traced integer, cast to the real
    dtype of `a` where that is not float64 (a float32 gradient divided by an int64 would be
    float64; NumPy's mean divides by a Python int, which is weak). With a mask `where` (np.mean's
    where=), the count of the elements it keeps, per result element (its shape by `keepdims`)."""
    shape = np.shape(a)
    if where is not True:
        size = np.sum(np.broadcast_to(where, shape), axis=axis, keepdims=keepdims)
        return size if real_dtype(a) == np.float64 else size.astype(real_dtype(a))
    size = 1
    for i in range(len(shape)) if axis is None else _axes(axis, len(shape)):
        if shape[i] is None:
            size = size * dimension_size(a, i)
        else:
            size *= shape[i]
    if type(size) is int or real_dtype(a) == np.float64:
        return size
    return size.astype(real_dtype(a))


def flat_axis(axis):
    """The axis a cumulative function runs along once `axis=None` has flattened its input."""
    return 0 if axis is None else axis


def first_given(a, b):
    """`a` unless it is None, else `b` (np.clip takes a_min or min)."""
    return b if a is None else a


def tie_weights(y, x, other):
    """How much of the gradient of `y = maximum(x, other)` (or minimum) goes to `x`: 1 where x
    was chosen, 1/2 where x and other tie, 0 elsewhere; in the real dtype of y."""
    xp = array_module(y)
    # The module's functions, not operators: an array-API library's `/` and `+` take no masks.
    chosen, tied = as_weights(xp.equal(x, y), y), as_weights(xp.equal(other, y), y)
    return xp.divide(chosen, xp.add(1.0, tied))


def extremum_weights(a, y, axis=None, keepdims=False, initial=None):
    """Where `a` attains its max/min `y` over `axis`, 1/(number of ties); 0 elsewhere. An
    `initial` the reduction started from (np.max(a, initial=c)) that attains `y` is one tie
    more."""
    xp = array_module(a)
    if not hasattr(a, "ndim"):  # a Python number (traced values and arrays have ndim)
        a = xp.asarray(a)
    extremum = _expand_to_shape(y, a.shape, axis, keepdims, a)
    # Counted in floats: the same counts, exactly.
    attained = as_weights(xp.equal(a, extremum), a, always=True)
    ties = xp.sum(attained, axis=axis, keepdims=True)
    if initial is not None:
        ties = ties + as_weights(xp.equal(initial, extremum), a, always=True)
    return xp.divide(attained, ties)


def initial_weight(a, y, axis=None, keepdims=False, initial=None):
    """The share of the gradient of `y`, the max/min of `a` over `axis` started from `initial`,
    that goes to `initial` (in y's shape): 1/(number of ties) where it attains `y`, else 0."""
    xp = array_module(a)
    if not hasattr(a, "ndim"):
        a = xp.asarray(a)
    starts = as_weights(xp.equal(initial, y), y, always=True)
    ties = xp.sum(as_weights(xp.equal(a, _expand_to_shape(y, a.shape, axis, keepdims, a)), a,
                             always=True), axis=axis, keepdims=keepdims)
    return xp.divide(starts, ties + starts)


def clip_weights(y, a, lower, upper, which):
    """Where the gradient of `y = clip(a, lower, upper)` goes: to "a" where a is inside (bounds
    included), to "upper" where y is the upper bound, to "lower" where it is the lower bound;
    as 1.0 and 0.0 in the real dtype of y."""
    xp = array_module(y)
    from_a = xp.equal(y, a)  # masks become floats by the module's multiply, as in tie_weights
    if which == "a":
        return xp.multiply(1.0, as_weights(from_a, y))
    if which == "upper":
        bound = upper
        mask = xp.logical_not(from_a)
    else:
        bound = lower
        mask = xp.logical_not(from_a)
        if upper is not None:
            mask = xp.logical_and(mask, xp.not_equal(y, upper))
    if bound is None:
        return xp.multiply(0.0, as_weights(from_a, y))
    return xp.multiply(1.0, as_weights(xp.logical_and(mask, xp.equal(y, bound)), y))


def diff_pad_width(a, n, axis):
    """np.pad widths that put `n` zeros on both ends of `axis` (the adjoint of np.diff)."""
    ndim = np.ndim(a)
    width = [(0, 0)] * ndim
    width[axis % ndim] = (n, n)
    return tuple(width)


def inverse_permutation(axes, a):
    """The axes that undo `np.transpose(a, axes)` (None undoes None)."""
    if axes is None:
        return None
    ndim = np.ndim(a)
    return tuple(int(i) for i in np.argsort([axis % ndim for axis in axes]))


def negate_shift(shift):
    """The shift that undoes np.roll by `shift` (an int or a tuple)."""
    if np.ndim(shift) == 0:
        return -shift
    return tuple(-s for s in shift)


def hstack_axis(tup):
    """The axis np.hstack joins along: 0 for 1-d (and 0-d) pieces, else 1."""
    return 0 if np.ndim(tup[0]) <= 1 else 1


def eye_like(w):
    """An identity matrix as wide as the last axis of `w`, in its real dtype."""
    return array_module(w).eye(np.shape(w)[-1], dtype=real_dtype(w))


# The rules of np.linspace and np.arange (transforms/rules/filled_arrays.py).

def linspace_samples(y, retstep):
    """The samples np.linspace returned as `y`: y itself, for a call without retstep. With
    retstep=True, y is (samples, step), and np.linspace has no derivative rule."""
    if retstep:
        raise NotImplementedError(
            "np.linspace with retstep=True has no derivative rule: call it without retstep, "
            "and compute the step as (stop - start) / (num - 1), or (stop - start) / num with "
            "endpoint=False")
    return y


def linspace_weights(samples, num, endpoint, axis):
    """t in np.linspace's samples y = start + t * (stop - start): i / (num - 1), or i / num
    without the endpoint (the last sample with it is stop, t = 1; the only one of num=1 is
    start, t = 0); along `axis` of the samples, of size 1 along their other axes, in their
    real dtype."""
    shape = [1] * np.ndim(samples)
    shape[axis % len(shape)] = num
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint, dtype=real_dtype(samples))
    xp = array_module(samples)
    return np.reshape(t, shape) if xp is np else xp.reshape(xp.asarray(t), tuple(shape))


def arange_start_weight(stop):
    """How np.arange's y_i = start + i * step moves with its first argument: 1, but 0 where it
    is the only bound given (np.arange(stop), np.arange(stop, step=h)): then it is the stop."""
    return 0.0 if stop is None else 1.0


def arange_positions(y):
    """The positions i of np.arange's y_i = start + i * step (its derivatives in step), in
    y's real dtype."""
    xp = array_module(y)
    return xp.arange(np.shape(y)[0], dtype=real_dtype(y))


def norm_power(x, ord=None, axis=None):
    """The kind of norm np.linalg.norm(x, ord, axis) computes, as the p its rules take: a
    finite nonzero p of a vector p-norm (Frobenius and the default: 2); np.inf for one that is
    a max or min of sums of |x| (a vector's ord=inf or -inf, a matrix's ord=1, -1, inf, -inf),
    whose gradient is sign(x) where the extremum is attained (norm_ties); 0 for a vector's
    ord=0, a count of nonzeros, whose gradient is zero; None for a matrix's ord=2, -2 and 'nuc',
    norms of singular values (decompositions.singular_value_axes)."""
    ndim = np.ndim(as_array(x)) if axis is None else (1 if np.ndim(axis) == 0 else len(axis))
    if ord is None or (ord == "fro" and ndim == 2):
        return 2.0
    if ndim == 2 and (ord == "nuc" if isinstance(ord, str) else ord in (2, -2)):
        return None
    if ndim == 1 and not isinstance(ord, str):
        return float(ord) if ord == 0 or np.isfinite(ord) else np.inf
    if ndim == 2 and not isinstance(ord, str) and ord in (1, -1, np.inf, -np.inf):
        return np.inf
    raise NotImplementedError(
        f"np.linalg.norm with ord={ord!r} over {ndim} axes has no derivative rule; rules cover "
        "ord=None and 'fro', every ord of a vector, and ord=1, -1, 2, -2, inf, -inf and 'nuc' "
        "of a matrix")


def vector_norm_power(ord):
    """The p of np.linalg.vector_norm(x, ord=ord), a norm over any number of axes, as
    norm_power gives it: np.inf for ord=inf or -inf, 0 for ord=0."""
    if isinstance(ord, str):
        raise NotImplementedError(
            f"np.linalg.vector_norm with ord={ord!r} has no derivative rule; ord is a number")
    return float(ord) if ord == 0 or np.isfinite(ord) else np.inf


def norm_exponent(p):
    """p - 1, the power of the norm y that divides its gradient |x|^(p-1) sign(x) / y^(p-1);
    0 for a max or min (p = np.inf) and a count (p = 0), whose gradients y does not scale."""
    return p - 1.0 if p != 0 and np.isfinite(p) else 0.0


def norm_ties(x, y, p, ord=None, axis=None, keepdims=False, matrix=True):
    """For a norm y of `x` that is a max or min (`p` np.inf, see norm_power): where over `axis`
    x attains it, 1/(number of ties), else 0, broadcast against x: over the entries of a
    vector (|x| = y), or (`matrix`, two axes) the columns (ord=1, -1) or rows (ord=inf, -inf)
    whose sum of |x| is the norm. None for other norms."""
    if p != np.inf:
        return None
    xp = array_module(x)
    magnitude = xp.abs(as_array(x))
    axes = _axes(axis, magnitude.ndim)
    if not matrix or len(axes) == 1:
        return extremum_weights(magnitude, y, axis, keepdims)
    summed, extremal = axes if ord in (1, -1) else axes[::-1]
    sums = xp.sum(magnitude, axis=summed, keepdims=True)
    # (its extremum again, not y: the sums the norm took may be summed in another order)
    extremum = (xp.max if ord > 0 else xp.min)(sums, axis=extremal, keepdims=True)
    return extremum_weights(sums, extremum, extremal, keepdims=True)


# Differentiable helpers: each has an adjoint rule in transforms/rules/derivative_helpers.py.

def norm_direction(x, p, ties):
    """|x|^(p-1) sign(x): the direction of the gradient of a p-norm (x itself for p=2), an
    array also where x is a list (np.linalg.norm([a, b])); sign(x) times `ties` for a max or
    min of sums of |x| (p = np.inf, norm_ties), zeros for a count (p = 0)."""
    x = as_array(x)
    refuse_complex(x, "numpy.linalg.norm")  # (its rules refuse complex values first)
    if p == 2:
        return x
    xp = array_module(x)
    if p == 0:
        return xp.zeros(np.shape(x), dtype=real_dtype(x))
    if p == 1:
        return xp.sign(x)
    if p == np.inf:
        return xp.sign(x) * ties
    return xp.abs(x) ** (p - 1) * xp.sign(x)


def norm_slope(x, p):
    """The derivative of `norm_direction(x, p)`: (p-1)|x|^(p-2), exactly 1 for p=2, 0 for p=1
    and for a max, a min or a count (p = np.inf, 0), piecewise constant."""
    x = as_array(x)
    refuse_complex(x, "numpy.linalg.norm")
    xp = array_module(x)
    if p == 2:
        return xp.ones(np.shape(x), dtype=real_dtype(x))
    if p in (0, 1, np.inf):
        return xp.zeros(np.shape(x), dtype=real_dtype(x))
    return (p - 1) * xp.abs(x) ** (p - 2)


def real_sign(x):
    """np.sign(x), the slope of |x| for real x (np.fabs and math.fabs, which take no complex
    values; np.abs and abs take the slope of complex_parts.abs_slope)."""
    if np.dtype(getattr(x, "dtype", type(x))).kind == "c":
        raise NotImplementedError(
            "autotrace differentiates the absolute value of complex values by np.abs(z), not "
            "by np.fabs or math.fabs, which NumPy and Python compute for real values alone")
    return array_module(x).sign(x) if hasattr(x, "dtype") else float(np.sign(x))


def sinc_slope(x):
    """The derivative of np.sinc: (cos(pi x) - sinc(x)) / x, by its series near 0."""
    xp = array_module(x)
    small = xp.less(xp.abs(x), 1e-3)
    safe = xp.where(small, 1.0, x)
    series = x * (-xp.pi ** 2 / 3 + xp.pi ** 4 / 30 * x * x)
    return xp.where(small, series, (xp.cos(xp.pi * safe) - xp.sinc(safe)) / safe)


def tril_half_diagonal(x):
    """The lower triangle of `x` with its diagonal halved (Murray's Phi, for cholesky)."""
    xp = array_module(x)
    return xp.tril(x) - 0.5 * x * xp.eye(x.shape[-1], dtype=real_dtype(x))


def eigh_gap_inverse(w):
    """F[..., i, j] = 1 / (w[..., j] - w[..., i]) off the diagonal, 0 on it; inf where two
    eigenvalues are tied, without dividing by zero (gap_weighted drops it where nothing
    couples them)."""
    xp = array_module(w)
    gaps = w[..., None, :] - w[..., :, None]
    gaps = xp.where(xp.eye(w.shape[-1], dtype=bool), xp.inf, gaps)
    tied = gaps == 0
    return xp.where(tied, xp.inf, 1.0 / xp.where(tied, 1, gaps))


def svd_gap_inverse(s, a, full_matrices=True, compute_uv=True):
    """F[..., i, j] = 1 / (s[..., j]^2 - s[..., i]^2) off the diagonal, 0 on it, for the
    singular values `s` of np.linalg.svd(a, full_matrices, compute_uv). Raises for a call the
    rules do not cover."""
    shape = np.shape(a)
    if not compute_uv:
        raise NotImplementedError(
            "np.linalg.svd with compute_uv=False has no derivative rule: write "
            "np.linalg.svdvals(a), which has one")
    if full_matrices and len(shape) >= 2 and shape[-1] != shape[-2]:
        raise NotImplementedError(
            f"np.linalg.svd of a {shape[-2]}x{shape[-1]} matrix with full_matrices=True (the "
            f"default) has no derivative rule: its extra singular vectors are any basis of "
            f"the complement, so no gradient is defined for them; pass full_matrices=False")
    real_singular_values(s, a)
    return eigh_gap_inverse(s * s)


def real_singular_values(g, a):
    """`g`, a gradient of the singular values of `a` (or what the svd rules compute from
    them), where `a` is real; a complex `a` is refused: its singular vectors' phases make the
    rules others."""
    if "c" in (gradient_dtype(a).kind, gradient_dtype(g).kind):
        raise NotImplementedError(
            "np.linalg.svd and np.linalg.svdvals of a complex matrix have no derivative rule")
    return g


# NumPy 2 reads b in solve(a, b) as a vector only when it is 1-d; NumPy 1 whenever it has one
# dimension fewer than a.
_NUMPY_2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def _solve_is_vector(a, b):
    return np.ndim(b) == 1 if _NUMPY_2 else np.ndim(b) == np.ndim(a) - 1


def solve_as_matrix(v, a, b):
    """`v` (shaped like b or like solve(a, b)) with a trailing axis when b is a vector."""
    if _solve_is_vector(a, b):
        return array_module(v).expand_dims(v, -1)
    return v


# prod's rules multiply by the product of the other elements, written without dividing by the
# element (exact at zeros, to any order): the reduced axes are merged into one last axis, and
# along it the products of the elements before and after each one are cumulative products whose
# rules are recurrences (runtime/derivatives/scans.py, `products_before` and `products_after`).

def reduced_last(a, axis=None):
    """`a` with the axes of `axis` (all where None) moved last and merged into one."""
    xp = array_module(a)
    if not hasattr(a, "ndim"):
        a = xp.asarray(a)
    axes = _axes(axis, a.ndim)
    moved = xp.moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    return xp.reshape(moved, moved.shape[:a.ndim - len(axes)] + (-1,))


def reduced_last_back(rows, a, axis=None):
    """`rows`, shaped as `reduced_last(a, axis)` is, back in the shape of `a`."""
    xp = array_module(rows)
    shape = np.shape(a)
    axes = _axes(axis, len(shape))
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    moved = xp.reshape(rows, tuple(shape[i] for i in kept + axes))
    return xp.moveaxis(moved, tuple(range(len(kept), len(shape))), axes)
