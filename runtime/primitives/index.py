"""Indexing: reading `x[index]` and writing `x[index] = value`, both as ops.

An index is split into a static template and index arrays. The template holds what is known
while tracing (ints, `StaticSlice`s, None, Ellipsis) and, where an index array goes, an
`IndexInput` naming which of the op's index inputs it is. So there are four primitives:

    getitem[index=(0, 1:3)] x            basic indexing: a view of x
    gather[index=(#0, ::2)] x i          integer-array indexing: a copy
    setitem[index=(0,)] x v              x with x[0] replaced by v (a copy, or x itself
    scatter[index=(#0,)] x v i           when buffer reuse marks `out=0`)

A boolean mask known while tracing becomes its `np.nonzero` index arrays; a traced boolean mask
has a data-dependent shape and cannot be traced.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import array_api_index
from ..abstract import (AbstractArray, broadcast_shapes, is_unknown,
                                        unknown_dimension_error, unknown_origins)
from ..devices import numpy_add_at
from ..graph import StaticSlice
from .batching import NoBatchingRule, refuse_batching, taken_indices, unrolled_batching
from .registry import (Primitive, bind, example, is_traced, register, source_globals,
                       static, untraceable_shape)


@dataclass(frozen=True)
class IndexInput:
    """In an index template: the place of the op's index input number `position`."""

    position: int

    def __repr__(self) -> str:
        return f"#{self.position}"


def split_index(index) -> tuple[tuple, list]:
    """`x[index]`'s index as (static template, index arrays)."""
    template, arrays = [], []

    def add_array(array):
        template.append(IndexInput(len(arrays)))
        arrays.append(array)

    for item in index if isinstance(index, tuple) else (index,):
        if is_traced(item):
            if item.dtype == np.bool_:
                raise untraceable_shape("indexing with a traced boolean mask")
            add_array(item)
        elif isinstance(item, list) and holds_traced(item):
            # A list of traced ints (one a traced `if` chose, `[0, 2] if c else [1, 0]`) is
            # an index array, as NumPy makes of any list.
            add_array(stacked(item))
        elif isinstance(item, range):  # an index array, as NumPy reads it (ints, if empty)
            add_array(np.arange(item.start, item.stop, item.step))
        elif isinstance(item, (list, np.ndarray)):
            array = np.asarray(item)
            for part in np.nonzero(array) if array.dtype == np.bool_ else (array,):
                add_array(part)
        elif isinstance(item, slice):
            bounds = static((item.start, item.stop, item.step), "a slice bound")
            template.append(StaticSlice(*bounds))
        elif item is None or item is Ellipsis or isinstance(item, bool):
            template.append(item)
        elif isinstance(item, (int, np.integer)):
            template.append(int(item))
        else:
            raise IndexError(f"autotrace cannot index with {type(item).__name__} {item!r}")
    return tuple(template), arrays


def holds_traced(value) -> bool:
    """Whether `value` is traced or a (nested) list or tuple holding a traced value."""
    if isinstance(value, (list, tuple)):
        return any(holds_traced(item) for item in value)
    return is_traced(value)


def stacked(items):
    """The array NumPy makes of a (nested) list or tuple of values, some of them traced."""
    return np.stack([stacked(item) if isinstance(item, (list, tuple)) and holds_traced(item)
                     else item if is_traced(item) else np.asarray(item) for item in items])


def as_array(value, otherwise=np.asarray):
    """`value` where it is no list or tuple; else the array NumPy reads it as: the stack of its
    items where some are traced, else `otherwise(value)` (None: the list as it is)."""
    if not isinstance(value, (list, tuple)):
        return value
    if holds_traced(value):
        return stacked(value)
    return value if otherwise is None else otherwise(value)


def build_index(template: tuple, arrays) -> tuple:
    """The NumPy index a template stands for, given its index arrays."""
    return tuple(arrays[item.position] if isinstance(item, IndexInput)
                 else item.to_slice() if isinstance(item, StaticSlice) else item
                 for item in template)


def index_source(template: tuple, arrays) -> str:
    """`0, 1:3, None, ...`: the index as it is written inside brackets."""
    if not template:
        return "()"
    items = [arrays[item.position] if isinstance(item, IndexInput)
             else str(item) if isinstance(item, StaticSlice)
             else "..." if item is Ellipsis else repr(item)
             for item in template]
    return ", ".join(items)


# --- batching (autotrace.vmap) ------------------------------------------------------------------

_ALL = StaticSlice(None, None, None)


def _advanced_offset(template: tuple, ndim: int) -> int:
    """Where the axes of the index arrays go in `x[index]` for an `x` of `ndim` axes: after
    the axes of the items before them where those items (ints count, as NumPy counts them)
    are next to each other; first otherwise."""
    advanced = [position for position, item in enumerate(template)
                if isinstance(item, IndexInput) or type(item) is int]
    if advanced != list(range(advanced[0], advanced[-1] + 1)):
        return 0
    consumed = sum(isinstance(item, (int, StaticSlice, IndexInput)) for item in template)
    offset = 0
    for item in template[:advanced[0]]:
        offset += ndim - consumed if item is Ellipsis else 1
    return offset


def _batched_index(template: tuple, arrays, batched, size: int):
    """The index of a batch for an example's advanced index: an arange over the batch first,
    then the example's items, its index arrays with unit axes after their batch axis so that
    all broadcast. Returns (template, index arrays, the examples' broadcast index ndim)."""
    if any(isinstance(item, bool) for item in template):
        raise NoBatchingRule("its index holds True or False")
    ndims = [np.ndim(array) - is_batched for array, is_batched in zip(arrays, batched)]
    ndim = max(ndims)
    aligned = [np.reshape(array, (size, *(1,) * (ndim - own), *np.shape(array)[1:]))
               if is_batched else array for array, is_batched, own in zip(arrays, batched, ndims)]
    batch = np.arange(size).reshape((size, *(1,) * ndim))
    shifted = tuple(IndexInput(item.position + 1) if isinstance(item, IndexInput) else item
                    for item in template)
    return (IndexInput(0), *shifted), [batch, *aligned], ndim


def _example_layout(offset: int, index_ndim: int, ndim: int) -> tuple:
    """The axes of a batch's advanced selection, (batch, index axes, the rest), in the order
    of one example's ((batch,) the first `offset` of the rest, index axes, the rest)."""
    index_axes = list(range(1, 1 + index_ndim))
    rest = list(range(1 + index_ndim, ndim))
    return (0, *rest[:offset], *index_axes, *rest[offset:])


def _check_ellipsis(template: tuple) -> None:
    advanced = [position for position, item in enumerate(template)
                if isinstance(item, IndexInput) or type(item) is int]
    if any(template[p] is Ellipsis for p in range(advanced[0], advanced[-1] + 1)):
        raise NoBatchingRule("its index has `...` between index arrays")


def batched_gather(x, x_batched: bool, template: tuple, arrays, batched, size: int):
    """`x[index]` for each example, the batch axis first: `x` and the index `arrays` batched
    or not (`x_batched`, `batched`), `template` an example's index (IndexInputs for arrays)."""
    if not x_batched:
        x = np.broadcast_to(x, (size, *np.shape(x)))
    example_ndim = np.ndim(x) - 1
    if not arrays:
        return bind("getitem", x, index=(_ALL, *template))
    _check_ellipsis(template)
    offset = _advanced_offset(template, example_ndim)
    index, index_arrays, index_ndim = _batched_index(template, arrays, batched, size)
    result = bind("gather", x, *index_arrays, index=index)
    layout = _example_layout(offset, index_ndim, np.ndim(result))
    return result if layout == tuple(range(len(layout))) else np.transpose(result, layout)


def _getitem_batching(call):
    call = taken_indices(call, range(1, len(call.args)))
    try:
        return batched_gather(call.args[0], call.batched[0], call.attrs["index"],
                              call.args[1:], call.batched[1:], call.size)
    except NoBatchingRule:  # an index this rule does not lay out: each example's own
        return unrolled_batching(call)


def _selection_shape(call) -> tuple:
    """The shape of one example's `x[index]` in an equation writing into x[index]."""
    def stand_in(position):
        return example(AbstractArray(call.example_shape(position),
                                     np.result_type(call.args[position])))
    index = build_index(call.attrs["index"], [stand_in(p) for p in range(2, len(call.args))])
    return np.shape(stand_in(0)[index])


def _setitem_batching(call):
    """setitem, scatter and scatter_add: x[index] = value for each example."""
    call = taken_indices(call, range(2, len(call.args)))
    try:
        return _batched_setitem(call)
    except NoBatchingRule:  # an index this rule does not lay out: each example's own
        return unrolled_batching(call)


def _batched_setitem(call):
    template, arrays, batched = call.attrs["index"], call.args[2:], call.batched[2:]
    x = call.with_batch(0)  # the op writes into a copy of it
    selection = _selection_shape(call)
    extra = call.example_ndim(1) - len(selection)
    if call.batched[1] and extra > 0:  # NumPy drops a value's leading axes of length 1
        value = np.reshape(call.args[1], (call.size, *call.example_shape(1)[extra:]))
    else:
        value = call.aligned(1, len(selection))
    if not arrays:
        return call.bind(x, value, index=(_ALL, *template))
    _check_ellipsis(template)
    offset = _advanced_offset(template, call.example_ndim(0))
    index, index_arrays, index_ndim = _batched_index(template, arrays, batched, call.size)
    # the value laid out as the batch's selection is: (batch, index axes, the rest)
    value = np.broadcast_to(value, (call.size, *selection) if call.batched[1] else selection)
    layout = _example_layout(offset, index_ndim, len(selection) + 1)
    inverse = tuple(int(axis) for axis in np.argsort(layout))
    if call.batched[1]:
        value = np.transpose(value, inverse)
    else:
        value = np.transpose(value, [axis - 1 for axis in inverse[1:]])
    name = "scatter_add" if call.primitive.name == "scatter_add" else "scatter"
    return bind(name, x, value, *index_arrays, index=index)


# --- reading ------------------------------------------------------------------------------------

def _getitem(x, *arrays, index):
    return x[build_index(index, arrays)]


def _indexed_shape(aval, index_avals, index) -> tuple:
    """The shape of `x[index]`, with None where it depends on a dimension of unknown size."""
    if not any(is_unknown(a) for a in (aval, *index_avals)):
        return np.shape(example(aval)[build_index(index, [example(a) for a in index_avals])])
    # NumPy indexes stand-ins twice, each unknown size replaced by `probe` then `probe + 1`:
    # a dimension of the result that differs between the two is unknown. A slice of an unknown
    # dimension is unknown however it is bounded, so it is probed as a whole slice.
    template = _whole_slices_on_unknown(index, aval.shape)
    probe = 2 + max([abs(item) for item in index if type(item) is int], default=0)
    shapes = []
    for size in (probe, probe + 1):
        def stand_in(a):
            return example(AbstractArray([size if n is None else n for n in a.shape], a.dtype))
        try:
            shapes.append(np.shape(stand_in(aval)[build_index(
                template, [stand_in(a) for a in index_avals])]))
        except ValueError:  # index arrays of unknown size that broadcast
            raise unknown_dimension_error("x[index] with this index", aval,
                                          *index_avals) from None
    return tuple(n if n == m else None for n, m in zip(*shapes))


def _whole_slices_on_unknown(index: tuple, shape: tuple) -> tuple:
    """`index` with each slice of a dimension of unknown size made `:`."""
    consumed = sum(isinstance(item, (int, StaticSlice, IndexInput)) and item is not True
                   and item is not False for item in index)
    template, dim = [], 0
    for item in index:
        if item is Ellipsis:
            dim += len(shape) - consumed
        elif isinstance(item, StaticSlice):
            unknown = dim < len(shape) and shape[dim] is None
            template.append(StaticSlice(None, None, None) if unknown else item)
            dim += 1
            continue
        elif isinstance(item, (int, IndexInput)) and not isinstance(item, bool):
            dim += 1
        template.append(item)
    return tuple(template)


def _getitem_rule(aval, *index_avals, index):
    return AbstractArray(_indexed_shape(aval, index_avals, index), aval.dtype, aval.device)


def _getitem_source(args, attrs):
    return f"{args[0]}[{index_source(attrs['index'], args[1:])}]"


def _array_api_index(args, attrs) -> str:
    """The index as the array-API backend's `np` takes it: `np.s_[...]`."""
    return f"np.s_[{index_source(attrs['index'], args)}]"


def _array_api_getitem_source(args, attrs):
    return f"np.getitem({args[0]}, {_array_api_index(args[1:], attrs)})"


register(Primitive("getitem", _getitem, _getitem_rule, source=_getitem_source,
                   array_api_source=_array_api_getitem_source,
                   array_api_function=array_api_index.getitem, batching=_getitem_batching))
register(Primitive("gather", _getitem, _getitem_rule, source=_getitem_source, fresh=True,
                   array_api_source=_array_api_getitem_source, batching=_getitem_batching))
# Indexing with 0-d integer arrays only (a traced loop counter) is NumPy's basic indexing:
# its result may be a view of x, so it is not fresh (buffer reuse must not write into it).
register(Primitive("index_at", _getitem, _getitem_rule, source=_getitem_source,
                   array_api_source=_array_api_getitem_source, batching=_getitem_batching))


def _mask_select_rule(aval, mask):
    if mask.ndim == 0 or mask.shape != aval.shape[:mask.ndim]:
        raise IndexError(f"a boolean mask of shape {mask.shape} does not match the array it "
                         f"indexes, of shape {aval.shape}")
    return AbstractArray((None, *aval.shape[mask.ndim:]), aval.dtype, aval.device)


_MASK_SELECT_REFUSED = refuse_batching(
    "x[mask] with a traced mask has as many rows as the mask has true elements, which differs "
    "between examples; use np.where(mask, x, 0)")


def _mask_select_batching(call):
    """x[mask] for each example, with one mask for all (a Jacobian's columns, the tangents of
    one point): the mask selects the same rows of every example's x, its batch axis put last."""
    if call.batched[1]:
        return _MASK_SELECT_REFUSED(call)
    selected = getitem(np.moveaxis(call.args[0], 0, -1), call.args[1])
    return np.moveaxis(selected, -1, 0)


_mask_select_batching.refuses = _MASK_SELECT_REFUSED.refuses  # (where the mask is batched)


# `x[mask]` with a traced boolean mask: as many rows as the mask has true elements, a number
# known only at run time (a dimension of unknown size, `?`).
register(Primitive("mask_select", lambda x, mask: x[mask], _mask_select_rule,
                   source=lambda args, attrs: f"{args[0]}[{args[1]}]", fresh=True,
                   batching=_mask_select_batching,
                   array_api_source=lambda args, attrs: f"np.getitem({args[0]}, {args[1]})"))


def _is_traced_mask(index) -> bool:
    return is_traced(index) and index.dtype == np.bool_


def getitem(x, index):
    """`x[index]` as an op: `getitem` for basic indexing, `gather` with index arrays,
    `mask_select` with one traced boolean mask."""
    if _is_traced_mask(index):
        selected = bind("mask_select", x, index)
        # Every selection by one mask has as many rows: the origin of that size is the mask, so
        # values selected by it meet in arithmetic without a run-time check of their sizes.
        selected.graph_var.aval = unknown_origins(selected.aval, index.graph_var)
        return selected
    template, arrays = split_index(index)
    if not arrays:
        return bind("getitem", x, index=template)
    scalar_indices = all(np.ndim(array) == 0 for array in arrays)
    return bind("index_at" if scalar_indices else "gather", x, *arrays, index=template)


# --- writing ------------------------------------------------------------------------------------

def _setitem(x, value, *arrays, index, out=None):
    target = x if out is not None else np.array(x)
    target[build_index(index, arrays)] = value
    return target


def _setitem_rule(aval, value, *index_avals, index):
    _check_value_fits(value, _indexed_shape(aval, index_avals, index))
    return aval


def _check_value_fits(value, target: tuple) -> None:
    """Raise unless a value of `value`'s shape can be written into `x[index]` of shape `target`."""
    value_shape = shape = tuple(value.shape) if isinstance(value, AbstractArray) else ()
    while len(value_shape) > len(target) and value_shape[0] == 1:
        value_shape = value_shape[1:]  # NumPy drops leading length-1 axes of the value
    try:  # an unknown dimension fits any size (NumPy checks when the graph runs)
        fits = all(v is None or t is None or v == t for v, t in zip(
            broadcast_shapes(value_shape, target), target)) and len(value_shape) <= len(target)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"could not broadcast a value of shape {shape} "
                         f"into x[index] of shape {target}")


def _setitem_statements(outputs, args, attrs):
    x, value, target = args[0], args[1], outputs[0]
    index = index_source(attrs["index"], args[2:])
    if "out" in attrs:
        return [f"{x}[{index}] = {value}", f"{target} = {x}"]
    return [f"{target} = np.array({x})", f"{target}[{index}] = {value}"]


def _array_api_setitem_statements(outputs, args, attrs):
    return [f"{outputs[0]} = np.setitem({args[0]}, {_array_api_index(args[2:], attrs)}, "
            f"{args[1]})"]


for _name, _array_api in (("setitem", array_api_index.setitem), ("scatter", None)):
    register(Primitive(_name, _setitem, _setitem_rule, statements=_setitem_statements,
                       fresh=True, writes_into=(0,),
                       array_api_statements=_array_api_setitem_statements,
                       array_api_function=_array_api, batching=_setitem_batching))


def _mask_assign_rule(aval, value, mask, index):
    _check_value_fits(value, _mask_select_rule(aval, mask).shape)
    return aval


def _mask_assign_batching(call):
    """x[mask] = value for each example: `np.where(mask, value, x)` where one example's value
    is the same for every element the mask selects (a scalar, or a row that broadcasts), as
    each example's mask selects as many as it has true elements; else each example's own."""
    x_ndim, mask_ndim = call.example_ndim(0), call.example_ndim(2)
    value_shape = call.example_shape(1)
    while value_shape[:1] == (1,):  # NumPy drops a value's leading axes of length 1
        value_shape = value_shape[1:]
    if len(value_shape) > x_ndim - mask_ndim:  # rows, one a true element: each example's own
        return unrolled_batching(call)
    x = call.with_batch(0)
    mask = call.args[2] if call.batched[2] else np.reshape(call.args[2], (1, *np.shape(
        call.args[2])))
    mask = np.reshape(mask, (*np.shape(mask), *(1,) * (x_ndim - mask_ndim)))
    value = call.args[1]
    if call.batched[1]:
        value = np.reshape(value, (call.size, *(1,) * (x_ndim - len(value_shape)), *value_shape))
    elif np.ndim(value) > len(value_shape):
        value = np.reshape(value, value_shape)
    result = np.where(mask, value, x)
    return result if result.dtype == x.dtype else result.astype(x.dtype)


# `x[mask] = value` with a traced boolean mask (its index is always `(#0,)`, the mask): the value
# is a scalar, or has as many rows as the mask has true elements (NumPy checks that when the
# graph runs). It runs as `setitem` does; only its shape rule differs.
register(Primitive("mask_assign", _setitem, _mask_assign_rule, statements=_setitem_statements,
                   fresh=True, writes_into=(0,),
                   array_api_statements=_array_api_setitem_statements,
                   batching=_mask_assign_batching))


def setitem(x, index, value):
    """`x` with `x[index] = value` applied, as a new value (x itself is not changed)."""
    if _is_traced_mask(index):
        return bind("mask_assign", x, value, index, index=(IndexInput(0),))
    template, arrays = split_index(index)
    return bind("scatter" if arrays else "setitem", x, value, *arrays, index=template)


# --- adding into ------------------------------------------------------------------------------

def _scatter_add(x, value, *arrays, index):
    target = np.array(x, dtype=np.result_type(x, value))
    numpy_add_at(target, build_index(index, arrays), value)
    return target


def _scatter_add_rule(aval, value, *index_avals, index):
    _setitem_rule(aval, value, *index_avals, index=index)
    dtype = np.result_type(aval.dtype, value.dtype if isinstance(value, AbstractArray)
                           else value)
    return AbstractArray(aval.shape, dtype, aval.device)


def _scatter_add_statements(outputs, args, attrs):
    # np.s_ turns the bracketed index (slices included) into the tuple np.add.at takes.
    index = index_source(attrs["index"], args[2:])
    return [f"{outputs[0]} = np.array({args[0]})",
            f"numpy_add_at({outputs[0]}, np.s_[{index}], {args[1]})"]


def _array_api_scatter_add_statements(outputs, args, attrs):
    return [f"{outputs[0]} = np.scatter_add({args[0]}, {_array_api_index(args[2:], attrs)}, "
            f"{args[1]})"]


source_globals["numpy_add_at"] = numpy_add_at
register(Primitive("scatter_add", _scatter_add, _scatter_add_rule,
                   statements=_scatter_add_statements, fresh=True,
                   array_api_statements=_array_api_scatter_add_statements,
                   array_api_function=array_api_index.scatter_add,
                   batching=_setitem_batching))


def add_at(x, index, value):
    """`x` with `np.add.at(x, index, value)` applied, as a new value: repeated indices add up.
    `x` itself is not changed."""
    if _is_traced_mask(index):  # a mask selects each element once: nothing repeats
        return setitem(x, index, getitem(x, index) + value)
    template, arrays = split_index(index)
    return bind("scatter_add", x, value, *arrays, index=template)


def get_item(target, index):
    """`target[index]`: also when `target` is a concrete array and `index` is traced (then
    the result is a traced value; NumPy's own indexing cannot read a traced index)."""
    if not is_traced(target) and isinstance(target, np.ndarray) and holds_traced(index):
        return getitem(target, index)
    return target[index]


def set_item(target, index, value):
    """`target[index] = value`, returning the result: also when `target` is a concrete array
    and `value` or `index` is traced (then the result is a new traced value). A traced
    `target` is changed in place by its own `__setitem__` (runtime/tracing/tracer.py).

    Example: `h = set_item(h, t + 1, np.tanh(h[t] @ W))` in a traced loop.
    """
    if is_traced(target):
        target[index] = value
        return target
    if holds_traced(value) or holds_traced(index):  # (`[0, p]` with p traced, too)
        return setitem(target, index, as_array(value))  # (a list of traced values: stacked)
    target[index] = value
    return target


def is_integer_index(piece) -> bool:
    """Whether an index's `piece` is an integer, a traced 0-d one too (basic indexing)."""
    if getattr(piece, "_builder", None) is not None:  # a traced 0-d int counts as an int
        return piece.ndim == 0 and np.issubdtype(piece.dtype, np.integer)
    return isinstance(piece, (int, np.integer)) and not isinstance(piece, bool)


def indexes_a_view(base, index) -> bool:
    """Whether `base[index]` is a view of `base`'s memory, as NumPy's is: `base` an array (a
    NumPy, CuPy or traced one), `index` basic (integers, slices, ..., None), selecting more
    than a single element (that gives a NumPy scalar) or written with `...`."""
    if not hasattr(base, "ndim") or isinstance(base, (list, tuple, dict)):
        return False
    pieces = index if isinstance(index, tuple) else (index,)
    if not all(piece is None or piece is Ellipsis or isinstance(piece, slice)
               or is_integer_index(piece) for piece in pieces):
        return False
    return any(piece is Ellipsis for piece in pieces) or base.ndim + sum(
        (piece is None) - is_integer_index(piece) for piece in pieces) > 0

