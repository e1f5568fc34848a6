"""Gradients shaped like their values: zeros, ones and sums over nested containers.

A gradient has the structure of what it is the gradient of: an array gets an array of the same
shape, a Python float a float, a tuple/list/dict/namedtuple the same container of gradients.
Integer and boolean values carry no gradient; their gradient is a zero of float type.
"""
from __future__ import annotations

import functools
import numbers
import sys
import types

import numpy as np

from runtime.derivatives.objects import (
    ObjectGradient, add_objects, check_stored, field_names, is_dataclass_instance,
    is_plain_object, map_fields, with_attribute,
)
from runtime.devices import add_at as add_at_in_place, array_module
from runtime.ops_index import add_at, set_item
from runtime.state import StateCell, StateError, current_sink, deposit, holds_state


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


class ClearedList(list):
    """The zeros `clear_item` leaves in the slot of a list's gradient that an assignment
    (`rows[0] = row`) cleared. The list the slot held before may have had another length than
    the one assigned, so the gradient of the slot's earlier reads, of that other length, takes
    the place of these zeros when added to them (they add nothing, whatever their length)."""


def _rebuild(value, items):
    """A container of the same kind as `value` holding `items` (a plain list for a
    ClearedList: the items may be no zeros)."""
    if _is_namedtuple(value):
        return type(value)(*items)
    if type(value) is ClearedList:
        return list(items)
    return type(value)(items)


def _float_dtype(dtype):
    return dtype if np.issubdtype(dtype, np.inexact) else np.float64


def zeros_like(value):
    """The zero gradient of `value`, with its structure."""
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [zeros_like(v) for v in value])
    if isinstance(value, dict):
        return type(value)((k, zeros_like(v)) for k, v in value.items())
    if isinstance(value, (bool, numbers.Integral, float)) and not hasattr(value, "dtype"):
        return 0.0
    if isinstance(value, complex) and not hasattr(value, "dtype"):
        return 0j
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        if isinstance(value, np.generic):
            return np.dtype(_float_dtype(value.dtype)).type(0)
        if type(value) is not np.ndarray:  # a CuPy array or a traced value: its own zeros
            return array_module(value).zeros_like(value, dtype=_float_dtype(value.dtype))
        return np.zeros(value.shape, dtype=_float_dtype(value.dtype))
    if is_dataclass_instance(value) and not holds_state(value):
        return map_fields(zeros_like, value)  # a dataclass gets a dataclass of gradients
    # None, strings, functions and other objects carry no gradient.
    return None


def ones_like(value):
    """Ones with the structure of `value`: the default seed for a function's output."""
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [ones_like(v) for v in value])
    if isinstance(value, dict):
        return type(value)((k, ones_like(v)) for k, v in value.items())
    if isinstance(value, (bool, numbers.Integral, float)) and not hasattr(value, "dtype"):
        return 1.0
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        if isinstance(value, np.generic):
            return np.dtype(_float_dtype(value.dtype)).type(1)
        if None in value.shape:  # traced, with sizes known only at run time
            return np.ones_like(value, dtype=_float_dtype(value.dtype))
        return array_module(value).ones(value.shape, dtype=_float_dtype(value.dtype))
    if is_dataclass_instance(value):
        return map_fields(ones_like, value)
    raise TypeError(f"cannot make a seed gradient for a value of type {type(value).__name__}")


def accumulate(gradient, contribution):
    """`add(gradient, contribution)`, for the statement `b = accumulate(b, c)` of generated
    code: the sum is written into the gradient's own buffer where nothing else can see it (the
    statement's name holds the only reference, as NumPy checks for its temporaries), which
    saves an array per contribution in a loop."""
    if (type(gradient) is np.ndarray and type(contribution) is np.ndarray
            and contribution.shape == gradient.shape and contribution.dtype == gradient.dtype
            and gradient.flags.owndata and gradient.flags.writeable
            and sys.getrefcount(gradient) <= _ONLY_THE_CALLERS):
        return np.add(gradient, contribution, out=gradient)
    return add(gradient, contribution)


def _references_seen(gradient, contribution) -> int:
    return sys.getrefcount(gradient)


def _only_the_callers() -> int:
    """The references `accumulate` sees to an array that only its caller's name holds
    (measured, since interpreters count them differently)."""
    if not hasattr(sys, "getrefcount"):
        return 0  # no reference counts: never write in place
    array = np.zeros(2)
    return _references_seen(array, None)


_ONLY_THE_CALLERS = _only_the_callers()


def add(a, b):
    """The sum of two gradients of the same value (containers are summed element by element)."""
    if isinstance(a, (tuple, list)):
        if isinstance(b, (tuple, list)) and len(a) != len(b):
            return _add_lengths(a, b)
        return _rebuild(a, [add(x, y) for x, y in zip(a, b)])
    if isinstance(a, ObjectGradient) or isinstance(b, ObjectGradient) or \
            is_dataclass_instance(a):
        return add_objects(a, b, add)
    if isinstance(a, dict) and isinstance(b, dict):
        # A key one of them lacks has no gradient there yet (a dict filled in a loop, read
        # before and after the loop): the sum has the keys of both.
        total = type(a)((k, add(v, b[k]) if k in b else v) for k, v in a.items())
        total.update((k, v) for k, v in b.items() if k not in a)
        return total
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _add_lengths(a, b):
    """The sum of two list gradients of different lengths: one of them the zeros of a cleared
    slot (see ClearedList), else an error, never a sum that drops items."""
    if type(a) is ClearedList:
        return b
    if type(b) is ClearedList:
        return a
    raise ValueError(
        f"autotrace cannot add two gradients of one list that have {len(a)} and {len(b)} "
        "items: the list changed its length where autotrace does not follow the change. Make "
        "a new list where the function changes one's length (items = items + [value], "
        "items = items[:-1]) and assign it to the name or slot that held the old one")


def seed(value, dy):
    """The gradient that starts the adjoint sweep: `dy` if given (it must have the structure
    and shapes of `value`, the function's output), else ones like `value`."""
    if dy is None:
        return ones_like(value)
    _check_seed(value, dy, "")
    return _on_entries_of(value, dy)


def _on_entries_of(value, dy):
    """`dy` with the entries of `value`'s ObjectGradients alone (where `value` is a gradient
    that a derivative returns, differentiated again: an attribute absent from it is a
    constant zero, whatever gradient reaches it)."""
    if isinstance(value, ObjectGradient):
        return ObjectGradient((k, _on_entries_of(v, None if dy is None else dy.get(k)))
                              for k, v in value.items())
    if isinstance(value, (tuple, list)) and isinstance(dy, (tuple, list)):
        return _rebuild(dy, [_on_entries_of(v, g) for v, g in zip(value, dy)])
    return dy


def _check_seed(value, dy, path: str) -> None:
    """`dy` against the output `value`; `path` leads to both from the top (`[0]['w']`)."""
    if dy is None or _is_traced(value) or _is_traced(dy):
        return  # no gradient here, or shapes known only when the trace runs
    output = f"output{path}" if path else "the output"
    if isinstance(value, ObjectGradient) or isinstance(dy, ObjectGradient):
        return  # attributes absent from either are zeros (see _on_entries_of)
    if isinstance(value, (tuple, list, dict)):
        if isinstance(value, dict):
            same = isinstance(dy, dict) and set(dy) == set(value)
        else:
            same = isinstance(dy, (tuple, list)) and len(dy) == len(value)
        if not same:
            raise TypeError(f"dy{path} must have the structure of {output}, "
                            f"{_described(value)}; got {_described(dy)}")
        for key in (value if isinstance(value, dict) else range(len(value))):
            _check_seed(value[key], dy[key], f"{path}[{key!r}]")
        return
    if not carries_gradient(value):
        return
    if isinstance(dy, (tuple, list, dict)) or not carries_gradient(dy):
        raise TypeError(f"dy{path} must have the structure of {output}, {_described(value)}; "
                        f"got {_described(dy)}")
    if _shape(dy) != _shape(value):
        raise ValueError(f"dy{path} has shape {_shape(dy)}, but {output} has shape "
                         f"{_shape(value)}: dy{path} is its gradient, shaped like it")


def _shape(value) -> tuple:
    return tuple(getattr(value, "shape", ()))


def _described(value) -> str:
    if isinstance(value, dict):
        return f"a dict with keys {', '.join(repr(k) for k in value)}"
    if isinstance(value, (tuple, list)):
        kind = type(value).__name__
        return f"a {kind} of {len(value)}"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"an array of shape {_shape(value)}"
    return f"a {type(value).__name__}"


def implicit_seed(value, dy):
    """`seed`, in the derivatives implicit_grad generates: it also says that the forward pass
    of the run in progress is over (runtime/state.py; a plain `grad` called inside the loss
    must not say so)."""
    sink = current_sink()
    if sink is not None:
        sink.epochs[-1].forward_done = True
    return seed(value, dy)


def match(gradient, value):
    """`gradient` in the form of `value`, the argument it is the gradient of: a float for a
    Python float, a 0-d result for a scalar (arithmetic on a Python float argument often yields
    a NumPy scalar or a 0-d array; users expect the gradient of a float to be a float).

    Raises TypeError for an integer or boolean argument, which has no gradient (as in JAX:
    `x * x` would give one, `x + 1` none). Inside a container such values get a zero.
    The gradient goes to the user, who gets none for an object other than a dataclass (see
    `match_for_caller`).
    """
    if isinstance(gradient, ObjectGradient):
        if current_sink() is not None:  # implicit_grad: its Variables got their gradients
            return None
        if holds_state(value):
            _raise_holds_state(value)
        raise TypeError(f"cannot take a gradient through attribute {next(iter(gradient))!r} "
                        f"of a {type(value).__name__}; {_ARGUMENT_KINDS}")
    _refuse_integral(value, sys._getframe(1))
    return _match(gradient, value)


def match_for_caller(gradient, value):
    """`match`, in a derivative that generated code calls: the gradient of an object the
    caller built (an ObjectGradient) goes back to it."""
    _refuse_integral(value, sys._getframe(1))
    return _match(gradient, value)


def _refuse_integral(value, frame) -> None:
    """Raise for an integer or boolean argument (`frame`: the generated function's)."""
    if _is_integral(value):
        parameter = _parameter_holding(value, frame)
        if not hasattr(value, "dtype") or isinstance(value, np.generic):
            given, instead = f"the {type(value).__name__} {value}", f"{float(value)!r}"
        else:
            given, instead = f"an array of {value.dtype}", f"{parameter}.astype(float)"
        raise TypeError(
            f"argument {parameter!r} is {given}: gradients are taken with respect to "
            f"floating-point values; pass {instead} instead, or leave {parameter!r} out of "
            "`wrt`")


# What a differentiated argument may be, for the errors that say so.
_ARGUMENT_KINDS = ("pass arrays, or a namedtuple, dict or dataclass of arrays, as the "
                   "differentiated argument (or Variables, with autotrace.implicit_grad)")


def _raise_holds_state(value):
    raise StateError(
        f"autotrace.grad cannot differentiate with respect to a {type(value).__name__} "
        "that holds Variables (it has no gradient of its own); use "
        "autotrace.implicit_grad(f) for the gradients of its Variables")


def _is_integral(value) -> bool:
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return True
    dtype = getattr(value, "dtype", None)
    return (dtype is not None and not isinstance(value, StateCell)
            and np.dtype(dtype).kind in "biu")


def _parameter_holding(value, frame) -> str:
    """The name of the parameter of the generated function (frame) that holds `value`."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = [n for n in code.co_varnames[:count] if frame.f_locals.get(n) is value]
    return names[0] if names else "?"


def _match(gradient, value):
    if isinstance(value, float) and not hasattr(value, "dtype"):
        # Inside a trace a float argument is a constant; its gradient stays traced.
        return gradient if _is_traced(gradient) else float(gradient)
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [_match(g, v) for g, v in zip(gradient, value)])
    if isinstance(value, dict):
        return type(value)((k, _match(gradient[k], v)) for k, v in value.items())
    if isinstance(value, np.ndarray) and isinstance(gradient, (float, int, np.generic)):
        return np.asarray(gradient, dtype=_float_dtype(value.dtype)).reshape(value.shape)
    if gradient is None and current_sink() is None and not isinstance(value, StateCell) \
            and holds_state(value):
        _raise_holds_state(value)
    if is_dataclass_instance(value) and type(gradient) is type(value):
        return map_fields(lambda g, v: _match(zeros_like(v) if g is None else g, v),
                          gradient, value)
    return in_dtype_of(gradient, value)


def in_dtype_of(gradient, value):
    """`gradient` (or a tangent) in the dtype of `value` where both are floating or complex,
    containers item by item: as in JAX, a float32 argument of a function that computes in
    float64 gets a float32 gradient, and a float64 one of a float32 computation a float64 one.
    A complex gradient of a real value is left as it is (its imaginary part is no rounding)."""
    if isinstance(value, (tuple, list)) and isinstance(gradient, (tuple, list)) \
            and len(value) == len(gradient):
        return _rebuild(gradient, [in_dtype_of(g, v) for g, v in zip(gradient, value)])
    if isinstance(value, dict) and isinstance(gradient, dict) and gradient.keys() == value.keys():
        return type(gradient)((k, in_dtype_of(g, value[k])) for k, g in gradient.items())
    dtype, given = getattr(value, "dtype", None), getattr(gradient, "dtype", None)
    if dtype is None or given is None or given == dtype or not hasattr(gradient, "astype"):
        return gradient
    if np.dtype(dtype).kind + np.dtype(given).kind not in ("ff", "cc", "cf"):
        return gradient
    return gradient.astype(dtype)


def _is_traced(value) -> bool:
    """True for a value being traced (runtime.tracer.Tracer), which has no concrete value."""
    return getattr(value, "_builder", None) is not None


def _sum_to(gradient, value):
    """`gradient` summed over the axes that broadcasting added to `value`'s shape."""
    shape = getattr(value, "shape", ())
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
            return float(gradient)
        return gradient
    return gradient


def _basic_index(index) -> bool:
    """True for indices that select each element at most once (ints, slices, None, ...)."""
    if isinstance(index, tuple):
        return all(_basic_index(i) for i in index)
    if isinstance(index, (int, slice, type(None), type(Ellipsis))):
        return True
    return getattr(index, "dtype", None) == bool


def _copy(container):
    if isinstance(container, (list, dict)):
        return type(container)(container.copy()) if isinstance(container, dict) else list(
            container)
    if isinstance(container, tuple):
        return list(container)
    return container.copy()


def _finish(copied, original):
    if isinstance(original, tuple):
        return _rebuild(original, copied)
    return copied


def accumulate_item(gradient, index, value):
    """The gradient of a container or array, with `value` added at `index` (a new object)."""
    out = _copy(gradient)
    if isinstance(gradient, dict):
        out[index] = add(out.get(index), value)  # a key added after the zeros were made
        return out
    if isinstance(gradient, (list, tuple)):
        out[index] = add(out[index], value)
        return _finish(out, gradient)
    traced_into_concrete = type(out) is np.ndarray and not isinstance(
        value, (np.ndarray, np.generic, float, int))  # inside autotrace.function
    if _basic_index(index):
        if traced_into_concrete:
            return set_item(out, index, out[index] + value)
        out[index] += value
    elif traced_into_concrete or _is_traced(out):
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
    if _is_namedtuple(gradient):
        return gradient._replace(**{attribute: add(getattr(gradient, attribute), value)})
    if value is None:
        return gradient
    if owner is not None:
        held = getattr(owner, attribute)
        # (A method first: one of an object that holds Variables holds them too, through
        # its self, but its gradient is the object's own.)
        if isinstance(held, types.MethodType) and (
                held.__self__ is owner or isinstance(owner, super)
                and held.__self__ is owner.__self__):
            return add(gradient, value)
        if holds_state(held) and not is_dataclass_instance(gradient):
            deposit(held, value)
            return gradient
    if is_dataclass_instance(gradient) or isinstance(gradient, ObjectGradient) or (
            gradient is None and is_plain_object(owner)):
        if owner is not None:
            check_stored(owner, attribute)
        return with_attribute(gradient, attribute, value, add)
    raise TypeError(f"cannot take a gradient through attribute {attribute!r} of a "
                    f"{type(owner if owner is not None else gradient).__name__}; "
                    + _ARGUMENT_KINDS)


def attribute_gradient(value, attribute: str, gradient):
    """The gradient of `value` given the gradient of `value.<attribute>` (see
    `accumulate_attribute`)."""
    return accumulate_attribute(zeros_like(value), attribute, gradient, value)


def item_gradient(gradient, index, value):
    """The gradient for `value` of the assignment `x[index] = value`, given x's gradient.

    Where an integer-array index names one element of x more than once, x keeps the last
    write (as NumPy does), so the values written before it get no gradient."""
    if isinstance(gradient, dict) and index not in gradient:
        return zeros_like(value)
    selected = gradient[index]
    if not _basic_index(index) and hasattr(gradient, "shape") and not _is_traced(gradient) \
            and not any(_is_traced(part) for part in _index_parts(index)):
        selected = selected * _kept_writes(gradient, index, selected.shape)
    return _sum_to(selected, value)


def _index_parts(index):
    return index if isinstance(index, tuple) else (index,)


def _kept_writes(gradient, index, shape):
    """A mask shaped like `x[index]`: True where the write `x[index] = ...` of that element
    is the one x keeps (the last one to each element)."""
    xp = array_module(gradient)
    positions = xp.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)
    written = xp.full(gradient.shape, -1, dtype=np.intp)
    written[index] = positions
    return written[index] == positions


def clear_item(gradient, index, like=None):
    """`gradient` with its slot at `index` set to zero (a new object): zeros like
    `like[index]` where `like` is given (the adjoint of clearing a slot whose gradient has
    another length or shape by then: a list grown and stored into the slot), else like the
    slot's own."""
    out = _copy(gradient)
    if isinstance(out, dict) and index not in out:
        return out
    zeros = zeros_like((out if like is None else like)[index])
    out[index] = ClearedList(zeros) if type(zeros) is list else zeros
    return _finish(out, gradient)


class _Absent:
    def __repr__(self):
        return "<absent>"


ABSENT = _Absent()


def read_item(container, index):
    """A copy of `container[index]`, saved before an assignment overwrites it."""
    if isinstance(container, dict):
        return container.get(index, ABSENT)
    item = container[index]
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


def restore_item(container, index, saved) -> None:
    """Undo `container[index] = ...` with the value `read_item` saved."""
    if saved is ABSENT:
        del container[index]
    else:
        container[index] = saved


def sequence(iterable):
    """Something indexable that iterates like `iterable` (arrays, tuples as they are; a list
    copied, as it is when the loop starts: the function may append to it later, and the
    adjoint sweep reads what the loop read)."""
    if isinstance(iterable, (tuple, range)) or hasattr(iterable, "shape"):
        return iterable
    return list(iterable)


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


def astype(value, dtype):
    """`value.astype(dtype)`, as a function."""
    return value.astype(dtype)


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
    if isinstance(out, (list, dict)):
        out[index] = gradient
        return _finish(out, like)
    out[index] = gradient
    return out


def sequence_gradient(gradient, iterable):
    """The gradient of `iterable` given the gradient of `sequence(iterable)`."""
    if isinstance(iterable, dict):
        return zeros_like(iterable)
    return like_container(gradient, iterable)


def like_container(gradient, value):
    """`gradient` (a sequence of gradients) in the container kind of `value`."""
    if isinstance(value, (tuple, list)):
        return _rebuild(value, list(gradient))
    if hasattr(value, "shape") and isinstance(gradient, (list, tuple)):
        return array_module(value).stack(gradient) if len(gradient) else zeros_like(value)
    return gradient


def values_gradient(gradient, mapping):
    """The gradient of a dict given the gradient of `list(mapping.values())`."""
    return type(mapping)(zip(mapping.keys(), gradient))


def items_gradient(gradient, mapping):
    """The gradient of a dict given the gradient of `list(mapping.items())`."""
    return type(mapping)((key, pair[1]) for key, pair in zip(mapping.keys(), gradient))


def cast_like(gradient, value):
    """`gradient` in the floating dtype of `value`."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(gradient, "astype"):
        return gradient
    return gradient.astype(_float_dtype(dtype))


def read_attribute(value, attribute: str):
    """`getattr(value, attribute)`, as a function with a gradient (None for an attribute
    that an ObjectGradient has no entry for: no gradient reached it)."""
    if isinstance(value, ObjectGradient):
        return value.get(attribute)
    return getattr(value, attribute)


def attribute_tangent(tangent, attribute: str, owner):
    """The tangent of `owner.<attribute>`, given the tangent of `owner`: that of a method of
    `owner` (read to be called) is `owner`'s own. (Also the gradient of `owner.<attribute>`
    given that of `owner`; `owner` None: a namedtuple's field.)"""
    held = None if owner is None else getattr(owner, attribute)
    if isinstance(held, types.MethodType) and (
            held.__self__ is owner or isinstance(owner, super)
            and held.__self__ is owner.__self__):
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
    """`gradient[index]`, or zeros like `like` where a dict gradient lacks the key."""
    if isinstance(gradient, dict) and index not in gradient:
        return zeros_like(like)
    return gradient[index]


def pairs_gradient(gradient):
    """The gradient of `list(mapping.items())` given the gradient of the dict it rebuilds."""
    return [(None, value) for value in gradient.values()]


def carries_gradient(value) -> bool:
    """Whether `value` is something gradients are taken of: numbers, arrays, and containers."""
    if isinstance(value, (tuple, list, dict, float, complex)) or (
            isinstance(value, numbers.Number) and not isinstance(value, bool)):
        return True
    return hasattr(value, "dtype") and hasattr(value, "shape")


def snapshot(value):
    """A copy of `value` that later in-place changes to its arrays and lists do not reach."""
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [snapshot(v) for v in value])
    if isinstance(value, dict):
        return type(value)((k, snapshot(v)) for k, v in value.items())
    if hasattr(value, "copy") and hasattr(value, "shape"):
        return value.copy()
    return value


def tangent_seed(value, tangent):
    """The tangent a forward derivative starts from: `tangent` if given, else ones like
    `value` (a tuple of values takes a tuple of tangents), in the dtype of its value."""
    return ones_like(value) if tangent is None else in_dtype_of(tangent, value)


def tangent_like(tangent, value):
    """`tangent` broadcast to `value`'s shape (after forward mode dropped a zero term that
    would have broadcast it)."""
    shape = getattr(value, "shape", None)
    if shape is None or getattr(tangent, "shape", None) == shape:
        return tangent
    return array_module(value).broadcast_to(tangent, shape).copy()
