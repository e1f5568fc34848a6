"""Reductions and scans: sum, prod, max, min, mean, var, std, any, all, argmax, argmin,
cumsum, cumprod, and np.logaddexp.reduce (np.logaddexp2's).

A reduction's `axis` attribute is always a sorted tuple of non-negative axes (np.sum(x) on a
matrix is `reduce_sum[axis=(0, 1)]`), so equal reductions look equal to common-subexpression
elimination; `keepdims`, `dtype` and `ddof` appear only when they are not the default.
The dtype rule runs the NumPy function on a stand-in with every axis of length 1.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray, carried_origins
from .batching import axis_batching
from .registry import (UntraceableError, array_method, bind, call_source, define_function,
                       normalize_axes, normalize_axis, reject_arguments, static, static_dtype,
                       traces, ufunc_methods)


def _reduced_shape(shape: tuple, axis: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axis else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axis)


def _reduction_rule(function):
    def abstract_eval(aval, axis, ddof=0, **attrs):
        tiny = np.zeros((1,) * aval.ndim, aval.dtype)  # every axis of length 1: cheap, exact
        dtype = np.asarray(function(tiny, axis=axis, **attrs)).dtype
        keepdims = attrs.get("keepdims", False)
        shape = _reduced_shape(aval.shape, axis, keepdims)
        kept = _reduced_shape(tuple(range(aval.ndim)), axis, False)
        origins = carried_origins(aval, [i if i in kept else None for i in range(aval.ndim)]
                                  if keepdims else kept)
        return AbstractArray(shape, dtype, aval.device, origins)
    return abstract_eval


def _options(keepdims=False, dtype=None, ddof=0) -> dict:
    """The optional attributes, only where they differ from NumPy's defaults."""
    options = {}
    if keepdims:
        options["keepdims"] = True
    if dtype is not None:
        options["dtype"] = static_dtype(dtype)
    if ddof:
        options["ddof"] = static(ddof, "ddof")
    return options


_REDUCTIONS = {  # primitive name -> (NumPy function, its signature's kind, the callables)
    "reduce_sum": (np.sum, "sum", (np.sum,)),
    "reduce_prod": (np.prod, "sum", (np.prod,)),
    "mean": (np.mean, "sum", (np.mean,)),
    "reduce_max": (np.max, "extremum", (np.max, np.amax)),
    "reduce_min": (np.min, "extremum", (np.min, np.amin)),
    "reduce_any": (np.any, "extremum", (np.any,)),
    "reduce_all": (np.all, "extremum", (np.all,)),
    "var": (np.var, "spread", (np.var,)),
    "std": (np.std, "spread", (np.std,)),
}


# NumPy computes these as a ufunc's reduce, whose axes `_ufunc_axes` gives; np.mean, np.var and
# np.std count the elements along the axes first, and raise AxisError for axis 0 of a 0-d array.
_UFUNC_REDUCTIONS = frozenset({"reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                               "reduce_any", "reduce_all"})


def _static_axis(axis, numpy_name: str):
    """The axis argument, known while tracing; NumPy refuses a bool for an integer."""
    axis = static(axis, f"the axis of {numpy_name}")
    if any(isinstance(item, bool) for item in (axis if isinstance(axis, tuple) else (axis,))):
        raise TypeError(f"{numpy_name}: an axis must be an integer, not {axis!r}")
    return axis


def _ufunc_axes(axis, ndim: int, numpy_name: str) -> tuple:
    """The axes a ufunc's reduce or accumulate takes `axis` for, as NumPy converts it
    (PyArray_ConvertMultiAxis): None is every axis, and an int 0 or -1 of a 0-d array is none,
    "a special case for backwards compatibility"."""
    if axis is None:
        return tuple(range(ndim))
    if ndim == 0 and axis in (0, -1):
        return ()
    for item in axis if isinstance(axis, tuple) else (axis,):
        if not -ndim <= item < ndim:
            raise np.exceptions.AxisError(item, ndim, f"in {numpy_name}")
    return normalize_axes(axis, ndim, numpy_name)


# The ufunc of each reduction that takes `initial`: NumPy's reduction starts from it.
_STARTS_FROM_INITIAL = {"reduce_sum": np.add, "reduce_prod": np.multiply,
                        "reduce_max": np.maximum, "reduce_min": np.minimum}


def _reduce(name, numpy_name, a, axis, dtype=None, out=None, keepdims=False, ddof=0,
            initial=np._NoValue, where=np._NoValue, **unsupported):
    if name not in _STARTS_FROM_INITIAL:
        unsupported["initial"] = initial
    where = np._NoValue if where is True else where  # (True: NumPy's default, every element)
    if name not in ("reduce_sum", "mean"):
        unsupported["where"] = where
    reject_arguments(numpy_name, out=out, **unsupported)
    axis = _static_axis(axis, numpy_name)
    if name in _UFUNC_REDUCTIONS:
        axes = _ufunc_axes(axis, np.ndim(a), numpy_name)
    else:
        axes = normalize_axes(axis, np.ndim(a), numpy_name)
    options = _options(keepdims, dtype, ddof)
    if where is not np._NoValue:
        a, options = _masked(name, a, axes, options, where)
        if name == "mean":  # the sum of the elements kept over their count
            count = bind("reduce_sum", np.broadcast_to(where, np.shape(a)), axis=axes,
                         **{"keepdims": True} if keepdims else {})
            total = bind("reduce_sum", a, axis=axes, **options)  # (divided in its own dtype)
            return total / count.astype(np.real(np.zeros((), total.dtype)).dtype)
    if initial is np._NoValue or initial is None:  # (None: no initial, as NumPy reads it)
        return bind(name, a, axis=axes, **options)
    return _from_initial(name, a, axes, options, initial)


def _masked(name, a, axes, options, where):
    """np.sum(a, where=w) and np.mean(a, where=w) as NumPy computes them: `a` with the elements
    w leaves out as zeros, summed in the dtype of np.mean's result (a float one for integers),
    NumPy's ValueError where w does not broadcast to a's shape. Returns (a masked, options)."""
    _check_where(where, np.shape(a))
    if name == "mean":
        dtype = getattr(a, "dtype", None) or np.asarray(a).dtype
        options = {**options, "dtype": options.get("dtype") or np.mean(np.zeros(1, dtype)).dtype}
    return np.where(where, a, 0), options


def _check_where(where, shape: tuple) -> None:
    """NumPy's ValueError where a reduction's where= does not broadcast to its array's shape."""
    if len(np.shape(where)) > len(shape) or np.broadcast_shapes(np.shape(where), shape) != shape:
        raise ValueError(f"non-broadcastable operand with shape {np.shape(where)} doesn't match "
                         f"the broadcast shape {shape} (where= of numpy's reduction)")


def _from_initial(name, a, axes, options, initial):
    """np.sum(a, axis, initial=c) and the like (np.prod, np.max, np.min): the reduction without
    it combined with c by the reduction's ufunc, c cast to the result's dtype as NumPy casts it
    (np.max of an int array with initial=2.5 starts from 2); of no elements, c alone."""
    shape = np.shape(a)
    if name in ("reduce_max", "reduce_min") and any(shape[axis] == 0 for axis in axes):
        dtype = a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype
        result_shape = _reduced_shape(shape, axes, options.get("keepdims", False))
        return np.broadcast_to(_cast(initial, dtype), result_shape).copy()
    reduced = bind(name, a, axis=axes, **options)
    return _STARTS_FROM_INITIAL[name](reduced, _cast(initial, reduced.dtype))


def _cast(value, dtype):
    """`value` (a Python number, an array or a traced value) as a 0-d array of `dtype`."""
    if hasattr(value, "_builder"):
        return value.astype(dtype)
    return np.asarray(value).astype(dtype)


def _make_binding(name: str, kind: str, numpy_name: str):
    """A binding with the NumPy function's own signature (positional arguments differ)."""
    unset = np._NoValue
    if kind == "extremum":
        def binding(a, axis=None, out=None, keepdims=False, *, initial=unset, where=unset):
            return _reduce(name, numpy_name, a, axis, None, out, keepdims,
                           initial=initial, where=where)
    elif kind == "spread":
        def binding(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
                    where=unset, mean=unset, correction=unset):
            return _reduce(name, numpy_name, a, axis, dtype, out, keepdims, ddof,
                           where=where, mean=mean, correction=correction)
    else:
        def binding(a, axis=None, dtype=None, out=None, keepdims=False, *, initial=unset,
                    where=unset):
            return _reduce(name, numpy_name, a, axis, dtype, out, keepdims,
                           initial=initial, where=where)
    return binding


for _name, (_function, _kind, _callables) in _REDUCTIONS.items():
    define_function(_name, _function, abstract_eval=_reduction_rule(_function), fresh=True,
                    batching=axis_batching("axis"))
    traces(*_callables)(_make_binding(_name, _kind, f"numpy.{_callables[0].__name__}"))
    array_method(_callables[0])


def _logical_reduce(ufunc, reduction, identity: bool):
    """np.logical_and.reduce as np.all (identity True), np.logical_or.reduce as np.any. An
    `initial` that is as true as the identity changes nothing; one that is not is every result
    (np.logical_and.reduce(x, initial=False) is all False). initial=None is no initial and no
    identity: the same result, but NumPy raises where there is nothing to reduce."""
    def reduce(a, axis=0, keepdims=False, initial=np._NoValue):
        result = reduction(a, axis=axis, keepdims=keepdims)
        if initial is None:
            if None in np.shape(a):
                raise UntraceableError(f"autotrace cannot trace numpy.{ufunc.__name__}.reduce "
                                       f"with initial=None of an array of unknown size")
            if 0 in np.shape(a) and 0 not in np.shape(result):
                raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} "
                                 f"which has no identity")
        if initial is None or initial is np._NoValue or bool(
                static(initial, f"the initial of numpy.{ufunc.__name__}.reduce")) == identity:
            return result
        return ufunc(result, not identity)  # the result's shape and bool dtype, all not identity
    return reduce


for _ufunc, _function in ((np.add, np.sum), (np.multiply, np.prod), (np.maximum, np.max),
                          (np.minimum, np.min)):
    ufunc_methods[(_ufunc.__name__, "reduce")] = _function  # np.add.reduce is np.sum
ufunc_methods[("logical_and", "reduce")] = _logical_reduce(np.logical_and, np.all, True)
ufunc_methods[("logical_or", "reduce")] = _logical_reduce(np.logical_or, np.any, False)


def _array_api_log_add_reduce(ufunc):
    """The reduction over an array-API namespace (NumPy's names `np`), which has no ufunc
    methods: the log of the sum of the exponentials, each taken less the largest term."""
    exp, log = ("exp", "log") if ufunc is np.logaddexp else ("exp2", "log2")

    def reduce(np, a, axis, keepdims=False):
        largest = np.max(a, axis=axis, keepdims=True)
        largest = np.where(largest > -np.inf, largest, 0.0)  # (all -inf: -inf, not nan)
        total = getattr(np, log)(np.sum(getattr(np, exp)(a - largest), axis=axis,
                                        keepdims=True)) + largest
        return total if keepdims else np.reshape(total, _reduced_shape(a.shape, axis, False))
    return reduce


def _log_add_reduce(ufunc):
    """np.logaddexp.reduce (np.logaddexp2's): its own op, which NumPy computes, as no other
    reduction is it; an `initial` is one more term, added by the ufunc itself."""
    name = f"reduce_{ufunc.__name__}"
    numpy_name = f"numpy.{ufunc.__name__}.reduce"
    define_function(name, ufunc.reduce, abstract_eval=_reduction_rule(ufunc.reduce),
                    fresh=True, source=lambda args, attrs: call_source(
                        f"np.{ufunc.__name__}.reduce", args, attrs),
                    array_api_source=lambda args, attrs: call_source(f"np.{name}", args, attrs),
                    array_api_function=_array_api_log_add_reduce(ufunc),
                    batching=axis_batching("axis"))

    def reduce(array, axis=0, keepdims=False, initial=np._NoValue, where=True):
        axes = _ufunc_axes(_static_axis(axis, numpy_name), np.ndim(array), numpy_name)
        if where is not True:  # the elements left out as -inf, which add nothing
            _check_where(where, np.shape(array))
            array = np.where(where, array, -np.inf)
        reduced = bind(name, array, axis=axes, **_options(keepdims))
        if initial is np._NoValue or initial is None:  # (None: no initial, as NumPy reads it)
            return reduced
        return ufunc(reduced, _cast(initial, reduced.dtype))
    reduce.takes_where = True  # (runtime/primitives/elementwise.py apply_ufunc)
    return reduce


for _ufunc in (np.logaddexp, np.logaddexp2):
    ufunc_methods[(_ufunc.__name__, "reduce")] = _log_add_reduce(_ufunc)


# --- argmax and argmin: one axis or none (the flattened array) ----------------------------------

def _arg_rule(function):
    def abstract_eval(aval, axis=None, keepdims=False):
        if axis is None:
            shape = (1,) * aval.ndim if keepdims else ()
        else:
            shape = _reduced_shape(aval.shape, (axis,), keepdims)
        return AbstractArray(shape, np.dtype(np.intp), aval.device)
    return abstract_eval


def _one_axis(a, axis, numpy_name: str):
    """The axis of argmax, argmin, cumsum or cumprod: an int, or None for the flattened array.
    NumPy takes a 0-d array for the 1-d array of its element here: its axis 0 or -1 is None."""
    if axis is None:
        return None
    axis = normalize_axis(_static_axis(axis, numpy_name), max(np.ndim(a), 1), numpy_name)
    return axis if np.ndim(a) else None


def _make_arg_binding(name: str):
    def binding(a, axis=None, out=None, *, keepdims=False):
        reject_arguments(f"numpy.{name}", out=out)
        options = {"keepdims": True} if keepdims else {}
        if (axis := _one_axis(a, axis, f"numpy.{name}")) is not None:
            options["axis"] = axis
        return bind(name, a, **options)
    return binding


def _arg_batching(call):
    """argmax and argmin: of one axis, moved by one; of none, each example flattened."""
    if "axis" in call.attrs:
        return call.bind(call.args[0], axis=call.attrs["axis"] + 1)
    flat = call.bind(np.reshape(call.args[0], (call.size, -1)), axis=1)
    return np.reshape(flat, (call.size, *(1,) * call.example_ndim(0))) \
        if call.attrs.get("keepdims") else flat


for _function in (np.argmax, np.argmin):
    define_function(_function.__name__, _function, abstract_eval=_arg_rule(_function),
                    fresh=True, batching=_arg_batching)
    traces(_function)(_make_arg_binding(_function.__name__))
    array_method(_function)


# --- cumsum and cumprod: one axis, or none (the flattened array) --------------------------------

def _scan_rule(function):
    def abstract_eval(aval, axis=None, dtype=None):
        tiny = np.zeros((1,) * aval.ndim, aval.dtype)
        result_dtype = function(tiny, axis=axis, dtype=dtype).dtype
        flat = aval.size if aval.known else None
        shape = (flat,) if axis is None else aval.shape
        return AbstractArray(shape, result_dtype, aval.device)
    return abstract_eval


def _make_scan_binding(name: str):
    def binding(a, axis=None, dtype=None, out=None):
        reject_arguments(f"numpy.{name}", out=out)
        options = _options(dtype=dtype)
        if (axis := _one_axis(a, axis, f"numpy.{name}")) is not None:
            options["axis"] = axis
        return bind(name, a, **options)
    return binding


def _accumulate(scan):
    """np.add.accumulate as np.cumsum, which takes what accumulate refuses: a 0-d array, no
    axis or many (np.cumsum flattens the array)."""
    def accumulate(a, axis=0):
        axes = _ufunc_axes(_static_axis(axis, "accumulate"), np.ndim(a), "accumulate")
        if np.ndim(a) == 0:
            raise TypeError("cannot accumulate on a scalar")
        if len(axes) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        return scan(a, axis=axes[0])
    accumulate.scan = scan  # (what the source transforms write it as, and differentiate)
    return accumulate


for _function, _ufunc, _array_api in ((np.cumsum, np.add, "cumulative_sum"),
                                      (np.cumprod, np.multiply, "cumulative_prod")):
    define_function(_function.__name__, _function, abstract_eval=_scan_rule(_function),
                    fresh=True, array_api=_array_api,
                    batching=axis_batching("axis", flat_when_none="axis"))
    traces(_function)(_make_scan_binding(_function.__name__))
    array_method(_function)
    ufunc_methods[(_ufunc.__name__, "accumulate")] = _accumulate(_function)  # np.cumsum


# --- functions NumPy writes with the ops above ----------------------------------------------

@traces(np.count_nonzero)
def bind_count_nonzero(a, axis=None, *, keepdims=False):
    """The elements that are not zero (or False), counted as NumPy does: a sum of the test."""
    return np.sum(np.not_equal(a, 0), axis=axis, keepdims=bool(static(
        keepdims, "keepdims of numpy.count_nonzero")), dtype=np.intp)


@traces(np.allclose)
def bind_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of a is close to b's (np.isclose), as one traced bool."""
    return np.all(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@traces(np.searchsorted)
def bind_searchsorted(a, v, side="left", sorter=None):
    """Where each of `v` goes into the sorted 1-d `a`: how many elements of a come before it
    (below it, side="left"; not above it, side="right"), counted by comparing each of `v`
    with every element of `a` (time and memory a.size * v.size)."""
    side = static(side, "side of numpy.searchsorted")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if np.ndim(a) != 1:
        raise ValueError("object too deep for desired array")
    if sorter is not None:
        a = np.take(a, sorter)
    v = np.expand_dims(v, -1)
    before = np.less(a, v) if side == "left" else np.less_equal(a, v)
    if np.result_type(a, v).kind in "fc":  # NumPy sorts NaN last: above every other number
        nan = np.isnan(v)
        before = np.logical_or(before, np.logical_and(nan, np.logical_not(np.isnan(a)))
                               if side == "left" else nan)
    return np.sum(before, axis=-1, dtype=np.intp)


array_method(np.searchsorted)  # grid.searchsorted(v): its index, an integer of no gradient
