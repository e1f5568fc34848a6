"""Gradients shaped like their values: zeros, ones and sums over nested containers.

A gradient has the structure of what it is the gradient of: an array gets an array of the same
shape, a Python float a float, a tuple/list/dict/namedtuple the same container of gradients.
Integer and boolean values carry no gradient; their gradient is a zero of float type.
"""
from __future__ import annotations

import numbers
import sys

import numpy as np

from .objects import (ObjectGradient, add_objects, gradient_beside_state,
                      is_dataclass_instance, is_plain_object,
                      iterates_by_its_methods, map_fields, refuse_object_iteration)
from ..array_subclasses import arguments_of, refuse_subclass_arguments
from ..devices import array_module
from ..containers import (ClearedList, float_dtype, is_namedtuple,  # noqa: F401
                          rebuild, zeros_like)
from ..pytrees import any_registered, registered
# (fresh_gradients, which generated code calls, is named from here too)
from .fresh_memory import _IMMUTABLE, _apart_from_arguments, fresh_gradients  # noqa: F401
from .no_gradient import check_output, refuse_text_argument
from .real_only import is_complex, real_part
from ..held_state import holds_state
from ..state import StateCell, StateError, current_sink
from ..abstract import UnknownSizeError, is_unknown


def zero_seed(value):
    """The gradient of the result of a call made for its effect on its object, which no
    gradient reached: zeros, but for an object an empty ObjectGradient (its zeros are None,
    which a derivative takes for no seed given, that is ones)."""
    zero = zeros_like(value)
    return ObjectGradient() if zero is None and is_plain_object(value) else zero


def ones_like(value):
    """Ones with the structure of `value`: the default seed for a function's output."""
    if isinstance(value, (tuple, list)):
        return rebuild(value, [ones_like(v) for v in value])
    if isinstance(value, dict):
        return rebuild(value, ((k, ones_like(v)) for k, v in value.items()))
    if isinstance(value, (bool, numbers.Integral, float, complex)) and not hasattr(value, "dtype"):
        return 1.0
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        if isinstance(value, np.generic):
            return np.dtype(float_dtype(value.dtype)).type(1)
        if None in value.shape:  # traced, with sizes known only at run time
            return np.ones_like(value, dtype=float_dtype(value.dtype))
        return array_module(value).ones(value.shape, dtype=float_dtype(value.dtype))
    if is_dataclass_instance(value):
        return map_fields(ones_like, value)
    if registered(type(value)) is not None:  # by attribute, as generated code reads it
        return by_attribute(value, [ones_like(child)
                                    for child in registered(type(value)).flatten(value)[0]])
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
    """The sum of two gradients of the same value (containers are summed element by element;
    None, no gradient, adds nothing to a container's either)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (tuple, list)):
        if isinstance(b, (tuple, list)) and len(a) != len(b):
            return _add_lengths(a, b)
        return rebuild(a, [add(x, y) for x, y in zip(a, b)])
    if isinstance(a, ObjectGradient) or isinstance(b, ObjectGradient) or \
            is_dataclass_instance(a):
        return add_objects(a, b, add)
    if isinstance(a, dict) and isinstance(b, dict):
        # A key one of them lacks has no gradient there yet (a dict filled in a loop, read
        # before and after the loop): the sum has the keys of both.
        total = rebuild(a, ((k, add(v, b[k]) if k in b else v) for k, v in a.items()))
        total.update((k, v) for k, v in b.items() if k not in a)
        return total
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


class _NoGradient:
    """What a caller's adjoint sweep sends a call whose value no gradient reached (its zero
    gradient is None, an object's): the call's derivative starts from zeros, not from the
    ones that no gradient given (None) means to a derivative called by the user."""

    def __repr__(self) -> str:
        return "NO_GRADIENT"


NO_GRADIENT = _NoGradient()


def seed(value, dy):
    """The gradient that starts the adjoint sweep: `dy` if given (it must have the structure
    and shapes of `value`, the function's output), else ones like `value` (zeros where the
    caller's sweep sends NO_GRADIENT)."""
    if dy is None:  # (an output that carries no gradient is refused, as JAX does)
        if isinstance(value, np.inexact):  # a loss, most often: check_output and ones_like's
            return value.dtype.type(1)     # answer, without their walk through the kinds
        check_output(value, dy)
        return ones_like(value)
    if type(dy) is np.ndarray and type(value) is np.ndarray and dy.shape == value.shape and (
            dy.dtype.kind == "c" or value.dtype.kind != "c"):
        # The gradient a caller hands a called function's derivative, most often: nothing to
        # rebuild or check, and no imaginary part to make (what the walk below would find).
        return dy
    if dy is NO_GRADIENT:
        return zero_seed(value)
    if any_registered():
        dy = _registered_by_attribute(value, dy)
    _check_seed(value, dy, "")
    return _on_entries_of(value, _complex_where_complex(value, dy))


def _complex_where_complex(value, dy):
    """`dy` with a real entry made complex where the output's is complex: a complex value's
    gradient is complex from its first term on (complex_parts.py), so a complex term added
    into an item of it later keeps its imaginary part."""
    if isinstance(value, (tuple, list)) and isinstance(dy, (tuple, list)):
        items = [_complex_where_complex(v, g) for v, g in zip(value, dy)]
        return dy if _same_items(items, dy) else rebuild(dy, items)
    if isinstance(value, dict) and isinstance(dy, dict):
        items = {key: _complex_where_complex(value[key], item) if key in value else item
                 for key, item in dy.items()}
        return dy if _same_items(items.values(), dy.values()) else rebuild(dy, items.items())
    if is_complex(value) and carries_gradient(dy) and not is_complex(dy):
        return dy + 0j
    return dy


def _registered_by_attribute(value, dy):
    """`dy` with the seed of each instance of a registered pytree type in the output `value`,
    given as an instance of its type, made the ObjectGradient generated code reads (by the
    attributes that hold its children)."""
    node_type = registered(type(value))
    if node_type is not None and type(dy) is type(value):
        return by_attribute(value, [
            _registered_by_attribute(child, seed) for child, seed in
            zip(node_type.flatten(value)[0], node_type.flatten(dy)[0])])
    if isinstance(value, (tuple, list)) and isinstance(dy, (tuple, list)) and \
            len(dy) == len(value):
        items = [_registered_by_attribute(v, g) for v, g in zip(value, dy)]
        return dy if _same_items(items, dy) else rebuild(dy, items)
    if isinstance(value, dict) and isinstance(dy, dict):
        items = {key: _registered_by_attribute(value[key], item) if key in value else item
                 for key, item in dy.items()}
        return dy if _same_items(items.values(), dy.values()) else type(dy)(items.items())
    return dy


def by_attribute(value, child_gradients: list) -> ObjectGradient:
    """The ObjectGradient of an instance of a registered type whose children (as its flatten
    gives them) have `child_gradients`: each under the attribute that holds the child."""
    children = registered(type(value)).flatten(value)[0]
    return ObjectGradient((holder_of(value, index, child), gradient) for index, (child, gradient)
                          in enumerate(zip(children, child_gradients)))


def holder_of(value, index: int, child) -> str:
    """The one attribute of `value` that holds its child number `index`; a TypeError where
    none or several do, whose gradient cannot be told."""
    attributes = vars(value) if hasattr(value, "__dict__") else {}
    holders = [name for name, held in attributes.items() if held is child]
    if len(holders) != 1:
        where = ("no attribute of it holds it" if not holders else
                 f"the attributes {', '.join(map(repr, holders))} all hold it")
        raise TypeError(
            f"cannot give the gradient of a {type(value).__qualname__} as one: autotrace "
            f"finds the gradient of each child its flatten function returns by the "
            f"attribute holding it, and for child {index} (a {type(child).__name__}) "
            f"{where}; make flatten return the attributes themselves, each held once")
    return holders[0]


def _on_entries_of(value, dy):
    """`dy` with the entries of `value`'s ObjectGradients alone (where `value` is a gradient
    that a derivative returns, differentiated again: an attribute absent from it is a
    constant zero, whatever gradient reaches it)."""
    if isinstance(value, ObjectGradient):
        return ObjectGradient((k, _on_entries_of(v, None if dy is None else dy.get(k)))
                              for k, v in value.items())
    if isinstance(value, (tuple, list)) and isinstance(dy, (tuple, list)):
        return rebuild(dy, [_on_entries_of(v, g) for v, g in zip(value, dy)])
    return dy


def _check_seed(value, dy, path: str) -> None:
    """`dy` against the output `value`; `path` leads to both from the top (`[0]['w']`)."""
    if dy is not None and _is_traced(value) and _unknown_sizes(value) and \
            not _unknown_sizes(dy):
        raise UnknownSizeError(
            f"dy{path} has shape {_shape(dy)}, but the size of {_output(path)} "
            f"({value.aval}) is known only when the traced graph runs (the elements a traced "
            f"boolean mask selects, x[mask]), so no seed can be shaped like it while the "
            f"gradient is traced (by autotrace.function, vmap or jacrev). Run it untraced "
            f"(autotrace.jacobian(f) runs it once per row), or keep the shape: "
            f"np.where(mask, x, 0.0)")
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


def _output(path: str) -> str:
    return f"output{path}" if path else "the output"


def _unknown_sizes(value) -> bool:
    """Whether `value` is traced with a dimension whose size only the graph's run knows."""
    return is_unknown(getattr(value, "aval", None))


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

    The caller may write into what it gets: an array that may share memory with an argument
    of the derivative (`f(x) = x` gives `dy` itself inside) is copied, and only such a one.

    Raises TypeError for an integer or boolean argument, which has no gradient (as in JAX:
    `x * x` would give one, `x + 1` none). Inside a container such values get a zero.
    The gradient goes to the user, who gets none for an object other than a dataclass (see
    `match_for_caller`).
    """
    if type(value) is not np.ndarray or type(gradient) is not np.ndarray:
        # (Two arrays, the common case, have no registered type to rebuild, no object's
        # gradient.)
        if any_registered() and current_sink() is None:
            gradient = as_registered_types(gradient, value)
        if isinstance(gradient, ObjectGradient):
            if current_sink() is not None:  # implicit_grad: its Variables got their gradients
                return None
            if holds_state(value):
                _raise_holds_state(value)
            raise TypeError(f"cannot take a gradient through attribute "
                            f"{next(iter(gradient))!r} of a {type(value).__name__}; "
                            f"{_ARGUMENT_KINDS}")
    frame = sys._getframe(1)
    arguments = arguments_of(frame)
    _refuse_integral(value, frame, arguments)
    return _apart_from_arguments(_match(gradient, value), frame, arguments)


def match_for_caller(gradient, value):
    """`match`, in a derivative that generated code calls: the gradient of an object the
    caller built (an ObjectGradient) goes back to it. An integer argument gets zeros: the
    caller passes it along with values that carry gradient (`x, k = step(x, k)` in a loop,
    a loop segment's counter), and the user asked for no gradient of it (`match` says so
    where they do): zeros, as the caller's gradient of it is."""
    if _is_integral(value):
        return zeros_like(value)
    return _match(gradient, value)


def unmatch(g, gradient):
    """The adjoint of `match`'s change of form: `g`, a gradient in the form of `match`'s result,
    in the form of the `gradient` it was given. A list or tuple argument (np.quantile's q, a
    list of coefficients) whose gradient a rule computes as one array is handed back as a list
    of numbers: the gradient of that list is made that array again (a list of arrays, nested
    lists, stacked as np.array would stack them), in the array's dtype."""
    if not isinstance(g, (tuple, list)) or not hasattr(gradient, "shape") or \
            not hasattr(gradient, "dtype"):
        return g
    return array_module(gradient).reshape(_stacked(g, gradient), gradient.shape)


def _stacked(g, like):
    """The nested lists and tuples `g` as one array in the dtype of `like` (zeros for an empty
    one, whose shape the caller sets)."""
    xp = array_module(like)
    if isinstance(g, (tuple, list)):
        if not g:
            return xp.zeros((0,), dtype=like.dtype)
        return xp.stack([_stacked(item, like) for item in g])
    if isinstance(g, numbers.Number) and not hasattr(g, "dtype"):
        return xp.asarray(g, dtype=like.dtype)
    return g.astype(like.dtype) if g.dtype != like.dtype else g


def as_registered_types(gradient, value):
    """`gradient` (or a tangent) with the gradient of each instance of a registered pytree
    type in `value` (runtime/pytrees.py), which generated code gathers by attribute (an
    ObjectGradient, None where none reached it), made an instance of its type
    (`_registered_gradient`): what `match` hands the user, and a Jacobian is made of."""
    if registered(type(value)) is not None and (
            gradient is None or isinstance(gradient, ObjectGradient)):
        return _registered_gradient(gradient or {}, value)
    if isinstance(value, (tuple, list)) and isinstance(gradient, (tuple, list)) and \
            len(gradient) == len(value):
        items = [as_registered_types(g, v) for g, v in zip(gradient, value)]
        return gradient if _same_items(items, gradient) else rebuild(gradient, items)
    if isinstance(value, dict) and isinstance(gradient, dict) and \
            not isinstance(gradient, ObjectGradient):
        items = {key: as_registered_types(item, value[key]) if key in value else item
                 for key, item in gradient.items()}
        return gradient if _same_items(items.values(), gradient.values()) else \
            rebuild(gradient, items.items())
    return gradient


def _same_items(items, originals) -> bool:
    """Whether a walk left every item as it was (the container is then kept itself)."""
    return all(item is original for item, original in zip(items, originals))


def _registered_gradient(gradient, value):
    """The gradient of an instance of a registered pytree type (runtime/pytrees.py), which
    generated code gathers by attribute (`gradient`, attribute -> gradient): an instance of
    the type, made by its unflatten from the gradients of the children its flatten gives (the
    attributes that hold them; zeros for one no gradient reached). A TypeError where a child
    is held by no attribute or by several, whose gradient cannot be told."""
    node_type = registered(type(value))
    children, aux = node_type.flatten(value)
    gradients = []
    for index, child in enumerate(children):
        child_gradient = as_registered_types(gradient.get(holder_of(value, index, child)), child)
        gradients.append(zeros_like(child) if child_gradient is None
                         else _match(child_gradient, child))
    return node_type.unflatten(aux, gradients)


def refuse_integral_argument(value) -> None:
    """Raise TypeError for an integer or boolean argument of the user's function that a
    forward derivative is taken with respect to: the rule, and the message, of `match` in a
    reverse one, so that every mode refuses what `grad` refuses."""
    _refuse_integral(value, sys._getframe(1))


def _refuse_integral(value, frame, arguments: dict | None = None) -> None:
    """Raise for an integer or boolean argument (`frame`: the generated function's; `arguments`:
    its arguments_of(frame) if read already), and for any argument that is an np.matrix or a
    masked array, whose operations were differentiated as np.ndarray's."""
    refuse_subclass_arguments(frame, arguments)  # every argument, differentiated or not
    if isinstance(value, (str, bytes)):
        refuse_text_argument(value, _parameter_holding(value, frame))
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
    if type(value) is np.ndarray:
        return value.dtype.kind in "biu"
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return True
    dtype = getattr(value, "dtype", None)
    return (dtype is not None and not isinstance(value, StateCell)
            and np.dtype(dtype).kind in "biu")


def _parameter_holding(value, frame) -> str:
    """The name of the parameter of the generated function (frame) that holds `value`."""
    return next((name for name, given in arguments_of(frame).items() if given is value), "?")


def _match(gradient, value):
    if type(value) is np.ndarray and type(gradient) is np.ndarray:  # the common case, first
        return gradient if gradient.dtype == value.dtype else in_dtype_of(gradient, value)
    if isinstance(value, float) and not hasattr(value, "dtype"):
        # Inside a trace a float argument is a constant; its gradient stays traced.
        return real_part(gradient) if _is_traced(gradient) else float(real_part(gradient))
    if isinstance(value, (tuple, list)):
        return rebuild(value, [_match(g, v) for g, v in zip(gradient, value)])
    if isinstance(value, dict):
        return rebuild(value, ((k, _match(gradient[k], v)) for k, v in value.items()))
    if isinstance(value, np.ndarray) and isinstance(gradient, (float, int, np.generic)):
        return np.asarray(real_part(gradient), dtype=float_dtype(value.dtype)).reshape(value.shape)
    if gradient is None and current_sink() is None and not isinstance(value, StateCell) \
            and holds_state(value) and not gradient_beside_state(value):
        _raise_holds_state(value)  # (one with floats beside them has one: None, none reached)
    node_type = registered(type(value))
    if node_type is not None and type(gradient) is type(value):
        # an instance of a registered pytree type: its children matched, its aux data its own
        children, aux = node_type.flatten(value)
        return node_type.unflatten(aux, [
            _match(zeros_like(v) if g is None else g, v)
            for g, v in zip(node_type.flatten(gradient)[0], children)])
    if is_dataclass_instance(value) and type(gradient) is type(value):
        return map_fields(lambda g, v: _match(zeros_like(v) if g is None else g, v),
                          gradient, value)
    if _is_traced_zero_d_array(value) and not _is_traced_zero_d_array(gradient):
        # A traced 0-d array argument: its gradient a 0-d array too, as the eager one is (a
        # ufunc's or sum's 0-d result is a NumPy scalar, which np.copy makes an array).
        return np.copy(in_dtype_of(gradient, value))
    return in_dtype_of(gradient, value)


def _is_traced_zero_d_array(value) -> bool:
    """Whether `value` is a traced value known to stand for a 0-d NumPy array, not a NumPy
    scalar (runtime/tracing/type_checks.py)."""
    return _is_traced(value) and getattr(value, "ndim", None) == 0 and \
        getattr(value, "_is_zero_d_array", lambda: False)()


def in_dtype_of(gradient, value):
    """`gradient` (or a tangent) in the dtype of `value` where both are floating or complex,
    containers item by item: as in JAX, a float32 argument of a function that computes in
    float64 gets a float32 gradient, and a float64 one of a float32 computation a float64 one.
    A complex gradient of a real value is its real part (real_only.real_part)."""
    return item_by_item(_leaf_in_dtype_of, gradient, value)


def item_by_item(leaf, gradient, value):
    """`leaf(g, v)` for each leaf g of `gradient` and its value v, through the tuples, lists
    and dicts both have alike; a container the two do not share is a leaf."""
    if isinstance(value, (tuple, list)) and isinstance(gradient, (tuple, list)) \
            and len(value) == len(gradient):
        return rebuild(gradient, [item_by_item(leaf, g, v) for g, v in zip(gradient, value)])
    if isinstance(value, dict) and isinstance(gradient, dict) and gradient.keys() == value.keys():
        # in the value's order, which code iterating the two (`d.items()`) pairs them by
        return rebuild(gradient, ((k, item_by_item(leaf, gradient[k], v))
                                  for k, v in value.items()))
    return leaf(gradient, value)


def _leaf_in_dtype_of(gradient, value):
    dtype, given = getattr(value, "dtype", None), getattr(gradient, "dtype", None)
    if dtype is None or given is None or given == dtype or not hasattr(gradient, "astype"):
        return gradient
    kinds = np.dtype(dtype).kind + np.dtype(given).kind
    return gradient if kinds not in ("ff", "cc", "cf", "fc") else \
        (real_part(gradient) if kinds == "fc" else gradient).astype(dtype)


def _is_traced(value) -> bool:
    """True for a value being traced (runtime.tracing.tracer.Tracer), which has no concrete value."""
    return getattr(value, "_builder", None) is not None


def like_container(gradient, value):
    """`gradient` (a sequence of gradients) in the container kind of `value`. For an object
    of the user's, which iterates by its own methods, None (refuse_object_iteration)."""
    if isinstance(value, (tuple, list)):
        return rebuild(value, list(gradient))
    if hasattr(value, "shape") and isinstance(gradient, (list, tuple)):
        return array_module(value).stack(gradient) if len(gradient) else zeros_like(value)
    if iterates_by_its_methods(value):
        return refuse_object_iteration(value, gradient)  # raises, or None: none reached it
    return gradient


def cast_like(gradient, value):
    """`gradient` in the floating dtype of `value`."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(gradient, "astype"):
        return gradient
    target = float_dtype(dtype)
    if getattr(gradient.dtype, "kind", None) == "c" and np.dtype(target).kind != "c":
        gradient = np.real(gradient)  # (a real value's gradient: the real part, said so)
    return gradient.astype(target)


def carries_gradient(value) -> bool:
    """Whether `value` is something gradients are taken of: numbers, arrays, and containers."""
    if isinstance(value, (tuple, list, dict, float, complex)) or (
            isinstance(value, numbers.Number) and not isinstance(value, bool)):
        return True
    return hasattr(value, "dtype") and hasattr(value, "shape")


def fresh_tangent(tangent):
    """The output tangent a forward derivative hands back to its caller: an array in it that
    may share memory with an argument of the derivative (a tangent the caller passed, which
    `tangent_seed` passes on as it is: `f(x) = x` gives it back) is copied, and only such a
    one, as `match` does for a gradient. The caller may write into what it gets without
    changing its own tangents."""
    if isinstance(tangent, _IMMUTABLE):
        return tangent
    return _apart_from_arguments(tangent, sys._getframe(1))
