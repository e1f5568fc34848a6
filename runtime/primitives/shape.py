"""Shape ops: reshape, transpose, broadcast_to, concatenate, stack, and what NumPy builds from
them (squeeze, expand_dims, ravel, swapaxes, moveaxis, split, flip, rot90, hstack, vstack, ...),
plus roll (and fftshift), tile, repeat, diag, diagonal, tril, triu, trace, sort, argsort,
take. insert, delete and append are in insert.py, pad and diff in pad.py.

Questions about a traced array's shape (np.shape, np.ndim, np.size, np.result_type) are
answered while tracing and record nothing.

A function whose result NumPy makes a view of its argument says so in its row (`view=`: how the
tracer writes a new value of the view back into the argument, runtime/tracing/views.py), as one
whose result is a list of views, or always a new array, does (FunctionFacts).
"""
from __future__ import annotations

import numpy as np

from ..abstract import (AbstractArray, broadcast_shapes, carried_origins,
                                        unknown_dimension_error)
from .. import array_api_index
from ..devices import reshape_view
from ..unknown_sizes import static_shape
from .registry import (SAME_NAME, UntraceableError, array_method, bind, declare,
                       define_function, define_runtime_function, define_traced_function, is_traced,
                       normalize_axes, normalize_axis, read_only_view,
                       reject_arguments, shape_of, size_of, static, traces, untraceable_shape)
from .batching import axis_batching, shifted
from .elementwise import check_unknown_sizes
from .index import getitem
from .shape_batching import (AXIS, TWO_AXES, broadcast_like_batching, broadcast_to_batching,
                             diag_batching, join_batching,
                             last_two_axes_batching, roll_batching,
                             take_along_axis_batching, take_batching, tile_batching)
from .unknown_reshape import unknown_reshape_shape


def _dtype(value) -> np.dtype:
    """The dtype of a traced or concrete array (not a Python scalar: those are weak)."""
    dtype = getattr(value, "dtype", None)
    return dtype if dtype is not None else np.asarray(value).dtype


# --- questions answered while tracing -----------------------------------------------------------

traces(np.shape)(lambda a: tuple(a.shape))
traces(np.ndim)(lambda a: len(a.shape))
traces(np.iscomplexobj)(lambda x: _dtype(x).kind == "c")
traces(np.isrealobj)(lambda x: _dtype(x).kind != "c")


# The size of a dimension known only at run time (None in an input_signature), as a traced
# integer: gradients of means divide by it.
define_function("dimension_size", lambda a, *, axis: np.int64(np.shape(a)[axis]),
                abstract_eval=lambda aval, *, axis: AbstractArray((), np.int64, aval.device),
                source=lambda args, attrs: f"np.int64(np.shape({args[0]})[{attrs['axis']}])",
                batching=lambda call: np.broadcast_to(
                    call.bind(call.args[0], axis=shifted(call.attrs["axis"])), (call.size,)))


def dimension_size(a, axis: int):
    """`a.shape[axis]` as a traced i64[] (for a dimension of unknown size)."""
    return bind("dimension_size", a, axis=axis)


@traces(np.size)
def bind_size(a, axis=None):
    size = (None if None in a.shape else size_of(a.shape)) if axis is None else a.shape[axis]
    if size is None:
        raise unknown_dimension_error("numpy.size", a.aval)
    return size


@traces(np.result_type)
def bind_result_type(*arrays_and_dtypes):
    return np.result_type(*[np.zeros((), value.dtype) if hasattr(value, "_builder") else value
                            for value in arrays_and_dtypes])


# --- reshape and its relatives ------------------------------------------------------------------

# A -1 stays in the attribute only where `a` has a dimension of unknown size: then it is `?`.
# Written with the shape positional: NumPy before 2.1 calls that parameter `newshape`, and
# CuPy still does.
def _reshaped(aval, shape) -> AbstractArray:
    return AbstractArray(tuple(None if n == -1 else n for n in shape), aval.dtype, aval.device,
                         _reshape_origins(aval, shape))


def _reshape_batching(call):
    return call.bind(call.args[0], shape=(call.size, *call.attrs["shape"]))


define_function("reshape", lambda a, shape: np.reshape(a, shape), abstract_eval=_reshaped,
                source=lambda args, attrs: f"np.reshape({args[0]}, {attrs['shape']!r})",
                batching=_reshape_batching)
# A reshape that must give a view (copy=False): it raises NumPy's ValueError where the memory
# layout of the array when the graph runs allows none, as NumPy's does. Batched, the layout is
# the batch's, not an example's: a reshape.
define_runtime_function("reshape_view", reshape_view, _reshaped, batching=lambda call: bind(
    "reshape", call.args[0], shape=(call.size, *call.attrs["shape"])))


def _reshape_origins(aval, shape) -> tuple | None:
    """The origin of the one unknown dimension of the result where it is the one of `aval`
    carried through: the known dimensions on either side hold as many elements."""
    unknown = [axis for axis, n in enumerate(aval.shape) if n is None]
    if len(unknown) != 1 or shape.count(-1) != 1 or aval.origins is None or \
            size_of(n for n in aval.shape if n is not None) != size_of(
                n for n in shape if n != -1):
        return None
    return carried_origins(aval, [unknown[0] if n == -1 else None for n in shape])


def reshape(a, shape, name: str = "reshape"):
    """`np.reshape(a, shape)` with -1 resolved, as a `reshape[shape=...]` op (`name`
    "reshape_view": one that must be a view, copy=False)."""
    shape = static(static_shape(shape if isinstance(shape, (tuple, list)) else (shape,)),
                   "a shape")
    if None in np.shape(a):
        return bind(name, a, shape=unknown_reshape_shape(a, shape))
    if None in shape and shape.count(None) + shape.count(-1) == 1:
        shape = tuple(-1 if n is None else n for n in shape)  # `a` is known: resolve it
    size = size_of(np.shape(a))
    if -1 in shape:
        known = size_of(n for n in shape if n != -1)
        shape = tuple(size // known if known and n == -1 else n for n in shape)
    if size_of(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return bind(name, a, shape=tuple(int(n) for n in shape))


# How a C-order reshape and ravel make their views (runtime/tracing/views.py reads them: a chain
# of these from a 1-d array made in the function is surely a view).
RESHAPE, RAVEL = "a reshape", "a ravel"


def _reshaped_back(order="C"):
    """How a new value of a reshape in `order` (C or F) is written back: reshaped, in that
    order, into the shape of its base."""
    return lambda base, value: np.reshape(value, base.shape, order=order)


def _same_but_unit(a: tuple, b: tuple) -> bool:
    return [size for size in a if size != 1] == [size for size in b if size != 1]


def _reshape_view(view, a, shape=None, order="C", *, newshape=None, copy=None):
    """A view, but for copy=True; NumPy makes it one whatever the layout where it only adds or
    removes axes of length 1 (and of a 1-d array made in the function, runtime/tracing/views.py
    adds), and with copy=False, where NumPy's is a view or raises."""
    if copy:
        return None
    how = RESHAPE if order == "C" else f"an {order}-order reshape"
    return _reshaped_back(order), copy is False or _same_but_unit(a.shape, view.shape), how


def _unit_axes_view(view, a, axis=None):
    return _reshaped_back(), True, ""


@traces(np.reshape, view=_reshape_view)
def bind_reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Order "F" reads and places the items down the columns: the C-order reshape of the
    transpose into the reversed shape, transposed (a view where NumPy's is one). "A" follows
    the memory layout, which the trace does not know. copy=True gives a new array; copy=False
    a view, or NumPy's ValueError when the graph runs, where the array's layout allows none."""
    shape = newshape if shape is None else shape
    if order not in ("C", "F"):
        raise UntraceableError(
            f"autotrace cannot trace numpy.reshape with order={order!r}: the order of the "
            f"items is that of the memory layout, which the trace does not know; give "
            f"order='C' or order='F'")
    name = "reshape_view" if copy is False else "reshape"
    if order == "F":
        reversed_shape = tuple(shape)[::-1] if isinstance(shape, (tuple, list)) else shape
        result = transpose(reshape(transpose(a), reversed_shape, name))
    else:
        result = reshape(a, shape, name)
    return bind("copy", result) if copy else result


# np.ravel is a view where the array is C-contiguous when the graph runs, else a copy (of a
# strided 1-d array too, which a reshape would view): its own op, whose NumPy call decides.
define_function("ravel", np.ravel, abstract_eval=lambda aval: AbstractArray(
                    (None if None in aval.shape else size_of(aval.shape),), aval.dtype,
                    aval.device, _reshape_origins(aval, (-1,))),
                batching=lambda call: reshape(call.args[0], (call.size, -1)))


@traces(np.ravel, view=lambda view, a, order="C": (
    _reshaped_back("F" if order == "F" else "C"), False,
    RAVEL if order == "C" else f"an {order}-order ravel"))
def bind_ravel(a, order="C"):
    """Of an array of more than one dimension, order "F" runs down the columns: the C-order
    ravel of its transpose (a view just where NumPy's is one: the transpose of an F-contiguous
    array is C-contiguous). "A" and "K" follow the memory layout, which the trace does not
    know."""
    if order == "C" or np.ndim(a) <= 1:
        return bind("ravel", a)
    if order == "F":
        return bind("ravel", transpose(a))
    raise UntraceableError(
        f"autotrace cannot trace numpy.ravel with order={order!r} of an array of "
        f"{np.ndim(a)} dimensions: the order of its items is that of the memory layout, "
        f"which the trace does not know; give order='C' or order='F'")


@traces(np.squeeze, view=_unit_axes_view, array_api_function=SAME_NAME)
def bind_squeeze(a, axis=None):
    shape = np.shape(a)
    if axis is None and None in shape:  # whether an unknown dimension is 1 shows only later
        raise unknown_dimension_error("numpy.squeeze without axis=", a.aval)
    axes = (tuple(i for i, n in enumerate(shape) if n == 1) if axis is None
            else normalize_axes(axis, len(shape), "numpy.squeeze"))
    if any(shape[i] not in (1, None) for i in axes):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return reshape(a, tuple(n for i, n in enumerate(shape) if i not in axes))


@traces(np.expand_dims, view=_unit_axes_view)
def bind_expand_dims(a, axis):
    ndim = np.ndim(a) + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    axes = normalize_axes(axis, ndim, "numpy.expand_dims")
    dims = iter(np.shape(a))
    return reshape(a, tuple(1 if i in axes else next(dims) for i in range(ndim)))


def _atleast(ndim: int, array):
    shape = np.shape(array)
    if len(shape) >= ndim:
        return array
    if ndim == 3 and len(shape) == 2:
        return reshape(array, shape + (1,))
    if ndim == 3 and len(shape) == 1:
        return reshape(array, (1,) + shape + (1,))
    return reshape(array, (1,) * (ndim - len(shape)) + shape)


def _at_least_view(view, *arrays):
    return (_reshaped_back(), True, "") if len(arrays) == 1 else None


for _ndim, _function in ((1, np.atleast_1d), (2, np.atleast_2d), (3, np.atleast_3d)):
    traces(_function, view=_at_least_view, container=True)(lambda *arys, _ndim=_ndim: (
        _atleast(_ndim, arys[0]) if len(arys) == 1 else tuple(_atleast(_ndim, a) for a in arys)))


# --- transpose and its relatives ----------------------------------------------------------------

def _transpose_source(args, attrs) -> str:
    # The method is a tenth of the cost of np.transpose's Python wrapper, and gradients of
    # unrolled loops hold one transpose per step.
    axes = attrs["axes"]
    if axes == tuple(reversed(range(len(axes)))):
        return f"{args[0]}.T"
    return f"{args[0]}.transpose({axes})"


define_function("transpose", np.transpose, source=_transpose_source,
                abstract_eval=lambda aval, axes: AbstractArray(
                    tuple(aval.shape[i] for i in axes), aval.dtype, aval.device,
                    carried_origins(aval, axes)),
                array_api_source=lambda args, attrs: (
                    f"np.transpose({args[0]}, {attrs['axes']!r})"),
                batching=lambda call: call.bind(
                    call.args[0], axes=(0, *(axis + 1 for axis in call.attrs["axes"]))))


def transpose(a, axes=None):
    ndim = np.ndim(a)
    axes = tuple(reversed(range(ndim))) if axes is None else tuple(
        normalize_axis(i, ndim, "numpy.transpose") for i in static(axes, "transpose's axes"))
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"axes {axes} don't match an array of {ndim} dimensions")
    return bind("transpose", a, axes=axes)


def _transpose_view(view, a, axes=None):
    axes = tuple(range(a.ndim))[::-1] if axes is None else \
        tuple(axis % a.ndim for axis in axes)
    inverse = tuple(int(axis) for axis in np.argsort(axes))
    return (lambda base, value: np.transpose(value, inverse)), True, ""


traces(np.transpose, np.permute_dims, view=_transpose_view)(
    lambda a, axes=None: transpose(a, axes))
traces(np.matrix_transpose, np.linalg.matrix_transpose,
       view=lambda view, x: ((lambda base, value: np.matrix_transpose(value)), True, ""))(
    lambda x: transpose(x, (*range(np.ndim(x) - 2), -1, -2)))


def _swapaxes_view(view, a, axis1, axis2):
    return (lambda base, value: np.swapaxes(value, axis1, axis2)), True, ""


@traces(np.swapaxes, view=_swapaxes_view)
def bind_swapaxes(a, axis1, axis2):
    axes = list(range(np.ndim(a)))
    i, j = (normalize_axis(axis, len(axes), "numpy.swapaxes") for axis in (axis1, axis2))
    axes[i], axes[j] = axes[j], axes[i]
    return transpose(a, axes)


def _moveaxis_view(view, a, source, destination):
    return (lambda base, value: np.moveaxis(value, destination, source)), True, ""


@traces(np.moveaxis, view=_moveaxis_view, array_api_function=SAME_NAME)
def bind_moveaxis(a, source, destination):
    ndim = np.ndim(a)
    source = normalize_axes_in_order(source, ndim)
    destination = normalize_axes_in_order(destination, ndim)
    order = [i for i in range(ndim) if i not in source]
    for axis_to, axis_from in sorted(zip(destination, source)):
        order.insert(axis_to, axis_from)
    return transpose(a, order)


def normalize_axes_in_order(axis, ndim: int) -> tuple:
    axes = static(axis, "an axis")
    axes = axes if isinstance(axes, tuple) else (axes,)
    return tuple(normalize_axis(i, ndim, "numpy.moveaxis") for i in axes)


# --- broadcast_to -------------------------------------------------------------------------------

define_function("broadcast_to", np.broadcast_to, abstract_eval=lambda aval, shape:
                AbstractArray(shape, aval.dtype, aval.device), batching=broadcast_to_batching)


@traces(np.broadcast_to, view=read_only_view)
def bind_broadcast_to(array, shape, subok=False):
    shape = static(static_shape(shape if isinstance(shape, (tuple, list)) else (shape,)),
                   "a shape")
    if None in shape:
        raise unknown_dimension_error(f"numpy.broadcast_to to shape {shape}",
                                      getattr(array, "aval", None))
    if broadcast_shapes(np.shape(array), shape) != shape:
        raise ValueError(f"cannot broadcast an array of shape {np.shape(array)} to {shape}")
    return bind("broadcast_to", array, shape=shape)


def _broadcast_like_rule(aval, like):
    if broadcast_shapes(shape_of(aval), like.shape) != like.shape:
        raise ValueError(f"cannot broadcast an array of shape {shape_of(aval)} to {like.shape}")
    dtype = aval.dtype if isinstance(aval, AbstractArray) else np.result_type(aval)
    return AbstractArray(like.shape, dtype, like.device, like.origins)


# `a` broadcast to the shape of `like`, which may hold sizes known only at run time (gradients
# flowing back to x[mask] are broadcast this way): a read-only view, as np.broadcast_to gives.
define_function("broadcast_like", lambda a, like: np.broadcast_to(a, np.shape(like)),
                abstract_eval=_broadcast_like_rule,
                source=lambda args, attrs: f"np.broadcast_to({args[0]}, np.shape({args[1]}))",
                batching=broadcast_like_batching)


def broadcast_like(a, like):
    """`np.broadcast_to(a, like.shape)` for a traced `like` whose shape may be unknown."""
    return bind("broadcast_like", a, like)


# Its views are np.broadcast_to's, which the binding calls.
@traces(np.broadcast_arrays, views_in_list=True, container=True, array_api_function=SAME_NAME)
def bind_broadcast_arrays(*args, subok=False):
    shape = broadcast_shapes(*[np.shape(a) for a in args])
    if None in shape:  # those already of that shape stay: their unknown sizes are checked equal
        check_unknown_sizes("numpy.broadcast_arrays", args)
        return tuple(a if tuple(np.shape(a)) == shape else np.broadcast_to(a, shape)
                     for a in args)
    return tuple(np.broadcast_to(a, shape) for a in args)


# --- joining and splitting ----------------------------------------------------------------------

def _concatenate_rule(*avals, axis):
    first = shape_of(avals[0])
    if any(len(shape_of(a)) != len(first) for a in avals):
        raise ValueError("all the input arrays to concatenate must have the same number of "
                         "dimensions")
    sizes = [shape_of(a)[axis] for a in avals]
    total = None if None in sizes else sum(sizes)
    dtype = np.result_type(*[a.dtype for a in avals])
    return AbstractArray(first[:axis] + (total,) + first[axis + 1:], dtype, avals[0].device)


def _stack_rule(*avals, axis):
    shape = shape_of(avals[0])
    if any(shape_of(a) != shape for a in avals):
        raise ValueError("all input arrays to stack must have the same shape")
    dtype = np.result_type(*[a.dtype for a in avals])
    return AbstractArray(shape[:axis] + (len(avals),) + shape[axis:], dtype, avals[0].device)


def _join_source(path):
    return lambda args, attrs: f"{path}(({', '.join(args)},), axis={attrs['axis']})"


define_function("concatenate", lambda *arrays, axis: np.concatenate(arrays, axis=axis),
                abstract_eval=_concatenate_rule, source=_join_source("np.concatenate"),
                fresh=True, batching=join_batching)
define_function("stack", lambda *arrays, axis: np.stack(arrays, axis=axis),
                abstract_eval=_stack_rule, source=_join_source("np.stack"), fresh=True,
                batching=join_batching)


@traces(np.concatenate, makes_array=True)
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    reject_arguments("numpy.concatenate", out=out, dtype=dtype)
    arrays = list(arrays)
    if axis is None:
        arrays, axis = [reshape(a, (-1,)) for a in arrays], 0
    axis = normalize_axis(static(axis, "the axis"), np.ndim(arrays[0]), "numpy.concatenate")
    return bind("concatenate", *arrays, axis=axis)


@traces(np.stack, makes_array=True)
def bind_stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    reject_arguments("numpy.stack", out=out, dtype=dtype)
    # (a Python number among them an array of its own dtype, as NumPy's asanyarray makes it)
    arrays = [array if is_traced(array) else np.asanyarray(array) for array in arrays]
    axis = normalize_axis(static(axis, "the axis"), np.ndim(arrays[0]) + 1, "numpy.stack")
    return bind("stack", *arrays, axis=axis)


traces(np.vstack, makes_array=True)(
    lambda tup, *, dtype=None, casting="same_kind": concatenate(
        [_atleast(2, a) for a in tup], 0, dtype=dtype))


@traces(np.hstack, makes_array=True)
def bind_hstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [_atleast(1, a) for a in tup]
    return concatenate(arrays, 0 if np.ndim(arrays[0]) == 1 else 1, dtype=dtype)


traces(np.dstack)(lambda tup: concatenate([_atleast(3, a) for a in tup], 2))


@traces(np.column_stack)
def bind_column_stack(tup):
    arrays = [reshape(a, (-1, 1)) if np.ndim(a) < 2 else a for a in tup]
    return concatenate(arrays, 1)


def _split(ary, indices_or_sections, axis, even: bool):
    shape = np.shape(ary)
    axis = normalize_axis(static(axis, "the axis"), len(shape), "numpy.split")
    length = shape[axis]
    sections = static(indices_or_sections, "indices_or_sections of numpy.split")
    if isinstance(sections, int) and length is None:
        raise unknown_dimension_error("numpy.split into sections along it", ary.aval)
    if isinstance(sections, int):
        if even and length % sections:
            raise ValueError("array split does not result in an equal division")
        small, extra = divmod(length, sections)
        sizes = [small + 1] * extra + [small] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        bounds = [0, *sections, length]
    prefix = (slice(None),) * axis
    return [getitem(ary, prefix + (slice(start, stop),))
            for start, stop in zip(bounds[:-1], bounds[1:])]


# Each split's `views_in_list`: (the axis, indices_or_sections) of a call, for the tracer to
# make each piece the view of the array it is.
traces(np.split, views_in_list=lambda ary, indices_or_sections, axis=0: (
    axis, indices_or_sections), container=True, array_api_function=array_api_index.split)(
    lambda ary, indices_or_sections, axis=0: _split(ary, indices_or_sections, axis, even=True))
traces(np.array_split, views_in_list=lambda ary, indices_or_sections, axis=0: (
    axis, indices_or_sections), container=True)(
    lambda ary, indices_or_sections, axis=0: _split(ary, indices_or_sections, axis, even=False))
traces(np.hsplit, views_in_list=lambda ary, indices_or_sections: (
    1 if ary.ndim > 1 else 0, indices_or_sections))(
    lambda ary, indices_or_sections: _split(ary, indices_or_sections,
                                            1 if np.ndim(ary) > 1 else 0, even=True))
traces(np.vsplit, views_in_list=lambda ary, indices_or_sections: (0, indices_or_sections))(
    lambda ary, indices_or_sections: _split(ary, indices_or_sections, 0, even=True))
# np.unstack traces not (it has no binding), but its pieces are views all the same.
declare(np.unstack, views_in_list=True)


@traces(np.dsplit, views_in_list=lambda ary, indices_or_sections: (2, indices_or_sections))
def bind_dsplit(ary, indices_or_sections):
    if np.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2, even=True)


def _flip_view(view, m, axis=None):
    return (lambda base, value: np.flip(value, axis)), True, ""


@traces(np.flip, view=_flip_view)
def bind_flip(m, axis=None):
    ndim = np.ndim(m)
    axes = normalize_axes(axis, ndim, "numpy.flip")
    return getitem(m, tuple(slice(None, None, -1) if i in axes else slice(None)
                            for i in range(ndim)))


traces(np.fliplr, view=lambda view, m: ((lambda base, value: np.fliplr(value)), True, ""))(
    lambda m: bind_flip(m, 1))
traces(np.flipud, view=lambda view, m: ((lambda base, value: np.flipud(value)), True, ""))(
    lambda m: bind_flip(m, 0))


def _rot90_view(view, m, k=1, axes=(0, 1)):
    return (lambda base, value: np.rot90(value, -k, axes)), True, ""


@traces(np.rot90, view=_rot90_view)
def bind_rot90(m, k=1, axes=(0, 1)):
    """NumPy's own construction: a quarter turn is a flip and a swap of the two axes."""
    ndim = np.ndim(m)
    axes = static(axes, "the axes of numpy.rot90")
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    first, second = (normalize_axis(axis, ndim, "numpy.rot90") for axis in axes)
    if first == second:
        raise ValueError("Axes must be different.")
    k = static(k, "the k of numpy.rot90") % 4
    if k == 0:
        return getitem(m, (slice(None),))
    if k == 2:
        return bind_flip(bind_flip(m, first), second)
    swapped = list(range(ndim))
    swapped[first], swapped[second] = second, first
    if k == 1:
        return transpose(bind_flip(m, second), swapped)
    return bind_flip(transpose(m, swapped), second)


def _half_shift(x, axes, sign: int):
    """np.fft.fftshift (sign 1) and ifftshift (sign -1): a roll by half of each axis."""
    axes = tuple(range(np.ndim(x))) if axes is None else static(axes, "the axes of a shift")
    axes = axes if isinstance(axes, tuple) else (axes,)
    shape = np.shape(x)
    return np.roll(x, tuple(sign * (shape[axis] // 2) for axis in axes), axes)


traces(np.fft.fftshift)(lambda x, axes=None: _half_shift(x, axes, 1))
traces(np.fft.ifftshift)(lambda x, axes=None: _half_shift(x, axes, -1))


# --- functions kept whole: NumPy computes them, the rule runs them on stand-ins ----------------

for _function in (np.roll, np.tril, np.triu):
    define_traced_function(_function, fresh=True, array_api_function=SAME_NAME,
                           batching=roll_batching if _function is np.roll
                           else last_two_axes_batching)
define_traced_function(np.tile, fresh=True, makes_array=True, batching=tile_batching)
define_traced_function(np.repeat, fresh=True, batching=axis_batching(
    "axis", defaults={"axis": None}, flat_when_none="axis"))
define_traced_function(np.trace, fresh=True, batching=TWO_AXES)
for _function in (np.sort, np.argsort):
    define_traced_function(_function, fresh=True, batching=AXIS)
# Not fresh: read-only views, as NumPy's (np.diag's of a matrix; of a vector, a new matrix).
define_traced_function(np.diagonal, view=read_only_view, batching=TWO_AXES)
define_traced_function(np.diag, array_api_function=array_api_index.diag, batching=diag_batching,
                       view=lambda view, v, k=0: read_only_view(view) if np.ndim(v) == 2 else None)
define_traced_function(np.take, 2, fresh=True, array_api_function=array_api_index.take,
                       batching=take_batching)
define_traced_function(np.take_along_axis, 2, fresh=True, batching=take_along_axis_batching)

def _data_dependent(function):
    def binding(*args, **kwargs):
        raise untraceable_shape(f"numpy.{function.__name__}")
    return binding


for _function in (np.nonzero, np.argwhere, np.flatnonzero, np.unique, np.compress, np.extract):
    traces(_function)(_data_dependent(_function))
declare(np.nonzero, array_api_function=SAME_NAME)

# Functions autotrace does not trace, whose calls it reads all the same (in the user's source,
# and in derivative code that runs on array-API arrays). Making an array from Python values (a
# shape, a list) records nothing: while tracing, the result is a constant of the graph; and
# np.asarray and its kin of a traced value are refused (runtime/tracing/tracer.py __array__).
declare(np.zeros, np.ones, np.empty, np.full, np.array, np.arange, np.linspace, np.eye,
        np.identity, makes_array=True)
declare(np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.require,
        np.asarray_chkfinite, np.real_if_close, np.rollaxis, view=True)
declare(np.searchsorted, np.isin, np.unique_values, array_api_function=SAME_NAME)

# ndarray methods that are these functions.
for _function in (np.squeeze, np.swapaxes, np.diagonal, np.ravel, np.trace, np.take, np.repeat,
                  np.argsort, np.nonzero):
    array_method(_function)
