"""Gradients through the items and attributes that generated code reads and writes.

Generated code writes Python's item and attribute syntax as calls, so that each has a gradient:
`x[i]` and `x[i] = v` on lists, dicts and arrays (with what the primal sweep saves to undo an
assignment), `obj.attr` on namedtuples, dataclasses and other objects, iteration over lists and
dicts, the builtins sum, max, min and sorted over them, and a few methods written as functions
(`astype`, `item`, `copy`). The gradients themselves have the structure of their values
(runtime/derivatives/structure.py).
"""
from __future__ import annotations

import functools
import types

import numpy as np

from .objects import (ObjectGradient, check_stored, field_names,
                      is_dataclass_instance, is_plain_object, with_attribute)
from .complex_parts import imag_gradient
from .copies import sequence  # noqa: F401 (a helper of the derivatives, as items.sequence)
from .real_only import real_part
from .structure import (_ARGUMENT_KINDS, ClearedList, is_namedtuple,
                                                     _is_traced, rebuild, add, like_container,
                                                     zeros_like)
from .snapshots import is_mutable_array
from ..array_api import numpy_dtype
from ..devices import add_at as add_at_in_place, array_module
from ..primitives.index import add_at, get_item, holds_traced, set_item
from ..held_state import holds_state
from ..state import current_sink, deposit


def _sum_to(gradient, value):
    """`gradient` summed over the axes that broadcasting added to `value`'s shape."""
    shape = _list_shape(value) if isinstance(value, (list, tuple)) and hasattr(
        gradient, "shape") else getattr(value, "shape", ())  # (a list written into an array)
    if getattr(gradient, "shape", ()) == shape:
        return gradient
    if not hasattr(gradient, "ndim"):
        gradient = array_module(gradient).asarray(gradient)
    extra = gradient.ndim - len(shape)
    if extra > 0:
        gradient = gradient.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and gradient.shape[i] != 1)
    if axes:
        gradient = gradient.sum(axis=axes, keepdims=True)
    if not hasattr(value, "shape"):
        if isinstance(value, (float, int)) and not _is_traced(gradient):
            return float(real_part(gradient))
        return gradient
    return gradient


def _list_shape(value) -> tuple:
    """The shape NumPy reads `value`, a (nested) list of alike items too, as."""
    if isinstance(value, (list, tuple)):
        return (len(value),) + (_list_shape(value[0]) if value else ())
    return tuple(getattr(value, "shape", ()))


def _basic_index(index) -> bool:
    """True for indices that select each element at most once (ints, slices, None, ...)."""
    if isinstance(index, tuple):
        return all(_basic_index(i) for i in index)
    if isinstance(index, (int, slice, type(None), type(Ellipsis))):
        return True
    return getattr(index, "dtype", None) == bool or getattr(index, "ndim", None) == 0


def _copy(container):
    if isinstance(container, (list, dict)):
        return rebuild(container, container.items()) if isinstance(container, dict) else list(
            container)
    if isinstance(container, tuple):
        return list(container)
    if isinstance(container, (np.generic, float, complex)):  # the gradient of a 0-d array
        return np.array(container)  # (a NumPy number takes no item assignment)
    if _is_traced(container) and container.ndim == 0:  # (the same traced: np.copy's is an array)
        return np.copy(container)
    return container.copy()


def _finish(copied, original):
    if isinstance(original, tuple):
        return rebuild(original, copied)
    return copied


_OBJECT_ITEM_MESSAGE = (
    "a gradient reached an item of a value that is no array, list, tuple or dict, but an "
    "object whose class has __getitem__ (a collections.UserDict or ChainMap, a class of "
    "yours), which autotrace takes for a container's item where the source does not tell the "
    "object's class, or the class has __setitem__ too. Pass a dict (dict(mapping)), or, for a "
    "class of yours, call its method, which autotrace differentiates from its source: "
    "obj.__getitem__(i)")


def _complex_into_real(value, out) -> bool:
    """Whether `value` is complex and `out`, the array it is added into, real."""
    kind = getattr(getattr(value, "dtype", None), "kind", "c" if isinstance(value, complex)
                   else None)
    return kind == "c" and getattr(getattr(out, "dtype", None), "kind", "c") != "c"


def accumulate_item(gradient, index, value):
    """The gradient of a container or array, with `value` added at `index` (a new object)."""
    if gradient is None:  # zeros_like's for an object that is none: a class of the user's
        raise TypeError(_OBJECT_ITEM_MESSAGE)
    if index is Ellipsis and not is_mutable_array(gradient):  # all a list or number holds (read_item)
        return add(gradient, value)
    out = _copy(gradient)
    if isinstance(gradient, dict):  # (a key added after the zeros were made; dict's own
        # methods: a class of the user's may refuse or convert, containers.rebuild)
        dict.__setitem__(out, index, add(dict.get(out, index), value))
        return out
    if isinstance(gradient, (list, tuple)):
        out[index] = add(out[index], value)
        return _finish(out, gradient)
    if _masked_by_traced(out, index) and np.shape(value) == np.shape(out):
        # (read_item saved all of it: the gradient of what it saved is shaped like the whole)
        return out + np.where(_mask_like(index, out), value, 0)
    if _complex_into_real(value, out):  # a real array's gradient: the real part alone means
        value = real_part(value)  # anything (complex_parts.py), and NumPy's cast would warn
    traced_into_concrete = type(out) is np.ndarray and not isinstance(
        value, (np.ndarray, np.generic, float, int))  # inside autotrace.function
    if _basic_index(index):
        if traced_into_concrete or _indexed_by_traced(out, index):
            return set_item(out, index, get_item(out, index) + value)
        out[index] += value
    elif traced_into_concrete or _is_traced(out) or _indexed_by_traced(out, index):
        return add_at(out, index, value)  # repeated indices add up, as in np.add.at
    else:
        add_at_in_place(out, index, value)
    return out


def accumulate_attribute(gradient, attribute: str, value, owner=None):
    """The gradient of `owner` (a namedtuple, dataclass or other object; see runtime/objects)
    with `value`, the gradient of `owner.<attribute>`, added.

    Where the attribute holds Variables, `value` goes to them (runtime/state `deposit`), and
    the object's gradient stays as it is. Where it is a method of `owner` (`owner.method`
    read to be called; of `super()`, a method of its object), `value` is a gradient of
    `owner` itself."""
    if value is None and not is_namedtuple(gradient):
        return gradient
    held = getattr(owner, attribute) if owner is not None else None
    # (A method first: one of an object that holds Variables holds them too, through its
    # self, but its gradient is the object's own; a namedtuple's `_replace` is one.)
    if value is not None and _method_of(held, owner):
        return add(gradient, value)
    if is_namedtuple(gradient):
        return gradient._replace(**{attribute: add(getattr(gradient, attribute), value)})
    if owner is not None:
        if holds_state(held) and not is_dataclass_instance(gradient):
            deposit(held, value)
            return gradient
        if isinstance(owner, type) and current_sink() is not None:
            return gradient  # a class's constant, `type(o).scale` under implicit_grad
    if is_dataclass_instance(gradient) or isinstance(gradient, ObjectGradient) or (
            gradient is None and is_plain_object(owner)):
        if owner is not None:
            if check_stored(owner, attribute):  # a constant property: none of owner's
                return gradient
        return with_attribute(gradient, attribute, value, add)
    if attribute in ("real", "imag") and hasattr(owner, "dtype"):  # an array's parts
        return add(gradient, real_part(value) if attribute == "real" else
                   imag_gradient(value, owner))  # (np.real's and np.imag's gradients)
    raise TypeError(f"cannot take a gradient through attribute {attribute!r} of a "
                    f"{type(owner if owner is not None else gradient).__name__}; "
                    + _ARGUMENT_KINDS)


def attribute_gradient(value, attribute: str, gradient):
    """The gradient of `value` given the gradient of `value.<attribute>` (see
    `accumulate_attribute`)."""
    return accumulate_attribute(zeros_like(value), attribute, gradient, value)


def kept_by_write(derivative, target):
    """The part of `derivative` (the tangent of `value`, or the gradient of the items written)
    that reaches through `target[index] = value`: zeros where target holds integers or
    booleans, which truncate what they are given (a step function, of derivative zero), the
    real part where target is real and value complex (NumPy drops the imaginary part),
    `derivative` itself where target holds what it is given (a list, a dict, a complex or
    object array). Linear in `derivative`."""
    dtype = getattr(target, "dtype", None)
    if dtype is None:
        return derivative
    kind = numpy_dtype(dtype).kind
    if kind in "biu":
        return zeros_like(real_part(derivative))
    return real_part(derivative) if kind == "f" else derivative


def item_gradient(gradient, index, value):
    """The gradient for `value` of the assignment `x[index] = value`, given x's gradient.

    Where an integer-array index names one element of x more than once, x keeps the last
    write (as NumPy does), so the values written before it get no gradient."""
    if index is Ellipsis and not is_mutable_array(gradient):  # all a list or number holds
        return gradient  # (restore_item's, of what read_item saved)
    if isinstance(gradient, dict) and index not in gradient:
        return zeros_like(value)
    if _masked_by_traced(gradient, index) and np.ndim(value) <= np.ndim(gradient) - index.ndim:
        # one value for every element selected: the sum of their gradients, where the mask is
        return _sum_to(np.where(_mask_like(index, gradient), gradient, 0), value)
    selected = get_item(gradient, index)
    if not _basic_index(index) and hasattr(gradient, "shape"):
        if holds_traced(index):  # (in the graph; `[0, p]` with p traced is traced too)
            selected = selected * _kept_writes(None, tuple(gradient.shape), index,
                                               tuple(selected.shape))
        else:  # (the mask reads the shapes and the index alone: a traced gradient's constant)
            kept = _kept_writes(np if _is_traced(gradient) else array_module(gradient),
                                tuple(gradient.shape), index, tuple(selected.shape))
            if not bool(kept.all()):
                selected = selected * kept
    return _sum_to(selected, value)


def _masked_by_traced(array, index) -> bool:
    """An array indexed by a traced boolean mask, whose `array[index]` has as many items as
    the mask has true elements: a number known when the graph runs, which differs between the
    examples of autotrace.vmap. What the derivative saves and clears there is shaped like the
    whole array instead (read_item, clear_item, item_gradient)."""
    return _is_traced(index) and getattr(index, "dtype", None) == np.bool_ and hasattr(
        array, "shape")


def _mask_like(mask, array):
    """The boolean `mask` (of the leading axes of `array`) with unit axes for the others."""
    return np.reshape(mask, (*mask.shape, *(1,) * (np.ndim(array) - mask.ndim)))


def _indexed_by_traced(array, index) -> bool:
    """A concrete array indexed at a traced index (inside autotrace.function): NumPy's own
    indexing cannot read or write it, the traced ops can."""
    return type(array) is np.ndarray and holds_traced(index)


def _kept_writes(xp, x_shape: tuple, index, shape: tuple):
    """A mask shaped like `x[index]` (`shape`), x of `x_shape`, in the array module xp: True
    where the write `x[index] = ...` of that element is the one x keeps (the last one to
    each element). xp None: a traced index, the mask traced too."""
    if xp is None:
        positions = np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)
        written = set_item(np.full(x_shape, -1, dtype=np.intp), index, positions)
        return get_item(written, index) == positions
    positions = xp.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)
    written = xp.full(x_shape, -1, dtype=np.intp)
    written[index] = positions
    return written[index] == positions


def clear_item(gradient, index, like=None):
    """`gradient` with its slot at `index` set to zero (a new object): zeros like
    `like[index]` where `like` is given (the adjoint of clearing a slot whose gradient has
    another length or shape by then: a list grown and stored into the slot), else like the
    slot's own."""
    if index is Ellipsis and not is_mutable_array(gradient):  # all a list or number holds
        return zeros_like(gradient)
    out = _copy(gradient)
    if isinstance(out, dict) and index not in out:
        return out
    if _masked_by_traced(out, index):  # (a scalar zero: no x[mask] to shape)
        return set_item(out, index, 0)
    zeros = zeros_like(get_item(out if like is None else like, index))
    if _indexed_by_traced(out, index) or type(out) is np.ndarray and _is_traced(zeros):
        # (traced zeros: `like` is traced, in a traced derivative of a derivative)
        return set_item(out, index, zeros)
    zeros = ClearedList(zeros) if type(zeros) is list else zeros
    if isinstance(out, dict):
        dict.__setitem__(out, index, zeros)
    else:
        out[index] = zeros
    return _finish(out, gradient)


class _Absent:
    def __repr__(self):
        return "<absent>"


ABSENT = _Absent()


def read_item(container, index):
    """A copy of `container[index]`, saved before an assignment overwrites it. With the index
    `...`, before a call that may write into `container` (transforms/reverse/reverse.py
    `restoring_call_writes`): what it holds, a list's, tuple's, dict's or object's arrays too."""
    if index is Ellipsis:
        return _held(container)
    if isinstance(container, dict):
        return container.get(index, ABSENT)
    if _masked_by_traced(container, index):  # (restore_item writes all of it back)
        return get_item(container, Ellipsis).copy()
    item = get_item(container, index)
    return item.copy() if hasattr(item, "copy") and hasattr(item, "shape") else item


def build_namedtuple(cls, values):
    """`cls(*values)`: a namedtuple built in differentiated code (`P(a, b)` is written
    `build_namedtuple(P, (a, b))`, so that its fields carry gradient)."""
    return cls(*values)


def namedtuple_fields(gradient) -> tuple:
    """The gradients of a namedtuple's fields, given the namedtuple's gradient."""
    return tuple(gradient)


def shape_only(value):
    """What the primal sweep saves of a value the adjoint sweep reads only the shape and dtype of
    (`unbroadcast(g, x)`): a NumPy array becomes a read-only view of a single zero, broadcast to
    its shape, so that a loop does not keep every iteration's array alive; any other value is
    saved as it is."""
    if type(value) is np.ndarray and value.size > 1:
        return _zero_view(value.shape, value.dtype)
    return value


@functools.lru_cache(maxsize=256)
def _zero_view(shape: tuple, dtype):
    return np.broadcast_to(np.zeros((), dtype), shape)  # read-only, so shared safely


def restore_item(container, index, saved):
    """Undo `container[index] = ...` with the value `read_item` saved; returns the container.
    Traced, a NumPy array given a traced value becomes a new traced value, as it does where the
    forward sweep wrote one (set_item): converted code binds the name to what this returns
    (transforms/control_flow/control_flow.py), as it does for `a[i] = v`."""
    if index is Ellipsis:
        _restore_held(container, saved)
    elif saved is ABSENT:
        # (gone already where another name bound to this dict had its key restored first)
        container.pop(index, None)
    elif _masked_by_traced(container, index):  # (read_item saved all of it)
        return set_item(container, Ellipsis, saved)
    elif isinstance(container, np.ndarray):
        return set_item(container, index, saved)
    else:
        container[index] = saved
    return container


class _Held(tuple):
    """What `read_item(value, ...)` saves of a value that is no array: (its items or
    attributes, each as it was, or None for a tuple's; what each of them held)."""


# What `_held` saves of a value no call can have changed: a read-only array, and a container
# met again (a dict holding itself), saved where it was met first.
_UNCHANGED = object()


def _held(value, walked=None):
    """What `value` holds, to be written back by `_restore_held`: an array's copy; a list's,
    dict's or plain object's items (or attributes) and what each holds; a tuple's items' held;
    anything else (a number, a string) as it is. `walked`: the ids of the containers being
    saved, which an item holding one of them does not save again."""
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return _UNCHANGED
    if is_mutable_array(value):
        return get_item(value, Ellipsis).copy()
    walked = set() if walked is None else walked
    if id(value) in walked:
        return _UNCHANGED
    if isinstance(value, (list, tuple)):
        walked.add(id(value))
        saved = _Held((list(value) if isinstance(value, list) else None,
                       [_held(item, walked) for item in value]))
    elif isinstance(value, dict) or is_plain_object(value) and hasattr(value, "__dict__"):
        walked.add(id(value))
        items = dict(value if isinstance(value, dict) else vars(value))
        saved = _Held((items, [_held(item, walked) for item in items.values()]))
    else:
        return value
    # What each item's traced value was (a view's: none), which a write rebinds (moved_items.py)
    saved.versions = [getattr(item, "_var", None) if getattr(item, "_link", 1) is None else
                      object() for item in (saved[0].values() if isinstance(saved[0], dict) else value)]
    return saved


class _Kept:
    """Where `note_kept` marks, in what `_held` saved, an item the call left in its place."""

    def __repr__(self) -> str:
        return "<kept>"


_KEPT = _Kept()


def note_kept(saved, container) -> None:
    """After a call that may write into `container`, mark in `saved` (what `read_item(container,
    ...)` saved before it) each item of a list, dict or object that the call left in its place
    (the very object), and so in what those hold. `restore_item` writes the saved values back
    into the item held then, not into the one saved: the same object eagerly, but in a traced
    `if` or loop the adjoint's item is a value of its own, and only a write into it reaches the
    other names for that array (`b = items[0]` read before the call)."""
    if not isinstance(saved, _Held):
        return
    items, held = saved
    if items is None:  # a tuple's, whose items stay
        for item, item_held in zip(container if isinstance(container, tuple) else (), held):
            note_kept(item_held, item)
        return
    mapping = _mapping(container)
    if isinstance(items, list) and isinstance(container, list):
        places = [(k, container[k]) for k in range(min(len(items), len(container)))]
    elif isinstance(items, dict) and mapping is not None:
        places = [(k, mapping[k]) for k in items if k in mapping]
    else:
        return
    positions = {k: n for n, k in enumerate(items if isinstance(items, dict) else
                                            range(len(items)))}
    for key, now in places:
        if now is items[key]:
            items[key] = _KEPT
            note_kept(held[positions[key]], now)


def _mapping(value):
    """The dict `value` is, or that holds its attributes; None for anything else."""
    if isinstance(value, dict):
        return value
    return vars(value) if hasattr(value, "__dict__") else None


def _restore_held(value, saved) -> None:
    """Write back into `value` (and into what it holds) what `_held` saved of it; into the item
    it holds now where `note_kept` marked it kept."""
    if saved is _UNCHANGED:
        return
    if is_mutable_array(value):
        value[...] = saved
        return
    if not isinstance(saved, _Held):
        return  # a value nothing changes in place
    items, held = saved
    if isinstance(value, list):
        items = [value[k] if item is _KEPT else item for k, item in enumerate(items)]
        value[:] = items
    elif isinstance(value, dict) or hasattr(value, "__dict__"):
        mapping = _mapping(value)
        items = {k: mapping[k] if item is _KEPT else item for k, item in items.items()}
        mapping.clear()
        mapping.update(items)
    for item, item_held in zip(items.values() if isinstance(items, dict) else items or value,
                               held):
        _restore_held(item, item_held)


def dict_items(mapping):
    return list(mapping.items())


def dict_keys(mapping):
    return list(mapping)


def dict_values(mapping):
    return list(mapping.values())


def sort_order(items, key=None, reverse=False):
    """The positions of `items` in the order `sorted(items, key=key, reverse=reverse)` puts
    them (stable, as sorted is): `sorted(items)` is `[items[i] for i in sort_order(items)]`."""
    return sorted(range(len(items)), key=lambda i: items[i] if key is None else key(items[i]),
                  reverse=reverse)


def astype(value, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """`value.astype(dtype, ...)`, as a function; `copy` is passed only where it is not the
    default, so a value whose astype predates the keyword takes the call as before."""
    options = {"copy": copy} if copy is not True else {}
    return value.astype(dtype, order, casting, subok, **options)


def shallow_copy(value):
    """`value.copy()`, as a function: a list or a dict stays one, with its items shared (an
    array is copied as np.copy would)."""
    return value.copy() if hasattr(value, "copy") else value


def item(value):
    """`value.item()`, as a function."""
    return value.item() if hasattr(value, "item") else value


def place_item(like, index, gradient):
    """Zeros shaped like `like`, with `gradient` (broadcast) at `index`: the adjoint of
    `item_gradient`."""
    out = _copy(zeros_like(like))
    if isinstance(out, dict):
        dict.__setitem__(out, index, gradient)
        return out
    if isinstance(out, list):
        out[index] = gradient
        return _finish(out, like)
    return set_item(out, index, gradient)  # (zeros of a concrete array, a traced gradient)


def sequence_gradient(gradient, iterable):
    """The gradient of `iterable` given the gradient of `sequence(iterable)` (an object of
    the user's: structure.like_container)."""
    if isinstance(iterable, dict):
        return zeros_like(iterable)
    return like_container(gradient, iterable)


def values_gradient(gradient, mapping):
    """The gradient of a dict given the gradient of `list(mapping.values())`."""
    return rebuild(mapping, zip(mapping.keys(), gradient))


def items_gradient(gradient, mapping):
    """The gradient of a dict given the gradient of `list(mapping.items())`."""
    return rebuild(mapping, ((key, pair[1]) for key, pair in zip(mapping.keys(), gradient)))


def read_attribute(value, attribute: str):
    """`getattr(value, attribute)`, as a function with a gradient (None for an attribute
    that an ObjectGradient has no entry for: no gradient reached it)."""
    if isinstance(value, ObjectGradient):
        return value.get(attribute)
    return getattr(value, attribute)


def _method_of(held, owner) -> bool:
    """Whether `held`, read from `owner`, is a method of it (of `super()`: of its object): one
    of the user's, an array's operator (`a.__mul__`) or an array's method (`a.__copy__`)."""
    methods = (types.MethodType, types.MethodWrapperType) + (
        (types.BuiltinMethodType,) if isinstance(owner, (np.ndarray, np.generic)) else ())
    return isinstance(held, methods) and (
        held.__self__ is owner or isinstance(owner, super) and held.__self__ is owner.__self__)


def attribute_tangent(tangent, attribute: str, owner):
    """The tangent of `owner.<attribute>`, given the tangent of `owner`: that of a method of
    `owner` (read to be called: a method of the user's, or of an array, `a.__mul__`) is
    `owner`'s own. (Also the gradient of `owner.<attribute>` given that of `owner`; `owner`
    None: a namedtuple's field.)"""
    held = None if owner is None else getattr(owner, attribute)
    if _method_of(held, owner):
        return tangent
    if tangent is not None and owner is not None:
        check_stored(owner, attribute)
    if is_dataclass_instance(tangent) and attribute not in field_names(type(tangent)):
        tangent = None  # a class attribute: a constant
    read = None if tangent is None else read_attribute(tangent, attribute)
    return zeros_like(held) if read is None and owner is not None else read


def extremum_gradient(gradient, result, args):
    """Per-argument gradients of the builtin max/min: all to the first argument chosen."""
    if len(args) == 1:
        items = list(args[0])
        grads, given = [], False
        for item in items:
            chosen = not given and _same(item, result)
            given = given or chosen
            grads.append(gradient if chosen else zeros_like(item))
        return [like_container(grads, args[0])]
    grads, given = [], False
    for item in args:
        chosen = not given and _same(item, result)
        given = given or chosen
        grads.append(gradient if chosen else zeros_like(item))
    return grads


def _same(a, b) -> bool:
    try:
        return bool(a is b or a == b)
    except ValueError:
        return False


def sum_gradient(gradient, iterable):
    """Per-item gradients of the builtin sum over `iterable`."""
    return like_container([_sum_to(gradient, item) for item in iterable], iterable)


def gradient_item(gradient, index, like):
    """`gradient[index]`, or zeros like `like` where a dict gradient lacks the key. A
    concrete gradient (a constant seed times constants) is read at a traced index too."""
    if isinstance(gradient, dict) and index not in gradient:
        return zeros_like(like)
    return get_item(gradient, index)


def pairs_gradient(gradient):
    """The gradient of `list(mapping.items())` given the gradient of the dict it rebuilds."""
    return [(None, value) for value in gradient.values()]
