"""Trace signatures: the cache key of a call, computed on every call, so it must be cheap.

    signature_of((x, 3, "relu"), {"scale": 2.0})
    -> ((("array", (3, 4), dtype('float64'), "cpu"), (int, 3), (str, "relu")),
        (("scale", (float, 2.0)),))

Rules, one per kind of leaf:
- arrays and NumPy scalars (and Tracers): ("array", shape, dtype, device); their values do not
  matter, they become graph inputs. A 0-d NumPy array's key ends with ZERO_D_ARRAY, which
  tells it from a NumPy scalar.
- Python scalars by type and value: 1, 1.0 and True are three signatures (a literal's type
  changes NumPy's promotion). -0.0 and NaN are keyed by their text (NaN != NaN would miss).
- strings and None by value.
- keyword arguments by sorted name, and, for a function that takes `**kwargs` (which iterates
  in the order given), by their order too where it is another.
- tuples, lists and dicts recursively (dicts by sorted key: their order does not matter;
  namedtuples by their type too); a registered pytree type (runtime/pytrees.py) by its type,
  its aux data (by value: it must be hashable) and its children recursively.
- array leaves that share memory (the same array twice, or overlapping views of one), where
  `memory` asks (a function one of whose traces asked which do, OutputStructure): a third part
  of the key, the pairs of their positions (runtime/tracing/arguments.py memory_shared); keys
  of calls whose arrays share none have two parts. A fourth part, where any do, holds the
  positions of those that share memory with an array that an object among the arguments
  holds (arguments.held_sharing).
- one array object passed as two leaves (`f(a, a)`): a last part of the key, SAME_OBJECTS
  and the pairs of their positions (`same_objects`): the trace hands the function one traced
  value for them, so that `x is y` answers as eagerly.
- anything else by identity, held weakly (`WeakIdentity`, runtime/tracing/identity_keys.py):
  the key does not keep the object alive; `with_release_hook(key, hook)` makes a key whose
  hook runs when an object in it dies, so a cache can evict the entry. Objects that cannot be weakly referenced (`object()`, ufuncs,
  ints' subclasses with __slots__...) are keyed by identity with a strong reference in the key
  (`StrongIdentity`): they live as long as the cache entry.

`signature_and_arrays` returns the key and the array leaves (in the order runtime.tracing.tracer.trace
makes them graph inputs), in one walk.
"""
from __future__ import annotations

import collections
import functools
import inspect

import numpy as np

from ..abstract import abstractify, short_dtype
from ..array_subclasses import ArraySubclassError, is_refused_subclass
from ..devices import device_of, is_gpu_array
from ..containers import field_names, instance_parts, is_dataclass_instance
from ..pytrees import register_pytree_node, registered
from ..primitives.memory import memory_owner
from .arguments import held_sharing, memory_shared
from ..primitives.memory import object_held_arrays
from .identity_keys import WeakIdentity, identity_key
from .tracer import Tracer, sorted_keys


# The last item of a 0-d NumPy array's key: NumPy computes `**` on it with the power ufunc,
# on a NumPy scalar of the same dtype with its scalar arithmetic (runtime/primitives/elementwise.py),
# so the two are traced apart.
ZERO_D_ARRAY = "0-d array"


def _float_key(value: float, arrays):
    if value == 0.0 or value != value:  # -0.0 == 0.0 and nan != nan: key them by their text
        return (float, repr(value))
    return (float, value)


def _sequence_key(tag):
    def key(value, arrays):
        return (tag, *[_key(item, arrays) for item in value])
    return key


def _dict_key(value: dict, arrays):
    """By sorted key (the order of its arrays among the inputs), and its own order where that
    is another: iterating it (`list(d.values())`) reads that."""
    names = sorted_keys(value)
    key = ("dict", *[(name, _key(value[name], arrays)) for name in names])
    order = list(value)
    return key if order == names else (*key, (_ORDER, tuple(order)))


_ORDER = "<the order of its keys>"  # (no key of a dict: its name in the key stands apart)


_KEYS = {
    float: _float_key,
    int: lambda value, arrays: (int, value),
    bool: lambda value, arrays: (bool, value),
    complex: lambda value, arrays: (complex, repr(value)),
    str: lambda value, arrays: (str, value),
    type(None): lambda value, arrays: None,
    tuple: _sequence_key("tuple"),
    list: _sequence_key("list"),
    dict: _dict_key,
}


def _key(value, arrays: list):
    kind = type(value)
    if kind is np.ndarray:
        arrays.append(value)
        return ("array", value.shape, value.dtype, "cpu") if value.ndim else \
            ("array", (), value.dtype, "cpu", ZERO_D_ARRAY)
    make = _KEYS.get(kind)
    if make is not None:
        return make(value, arrays)
    return _other_key(value, arrays)


def _other_key(value, arrays: list):
    if is_refused_subclass(value):  # np.matrix, a masked array: operations of their own
        raise ArraySubclassError(value)
    if isinstance(value, (np.ndarray, np.generic)) or is_gpu_array(value):
        arrays.append(value)
        key = ("array", value.shape, value.dtype, device_of(value))
        return key + (ZERO_D_ARRAY,) if isinstance(value, np.ndarray) and not value.ndim \
            else key
    if isinstance(value, Tracer):
        arrays.append(value)
        return ("array", value.shape, value.dtype, value.device)
    if hasattr(type(value), "__array_namespace__"):  # CuPy's, or an array-API library's
        arrays.append(value)
        aval = abstractify(value)
        return ("array", aval.shape, aval.dtype, aval.device)
    node_type = registered(type(value))
    if node_type is not None:
        children, aux = node_type.flatten(value)
        try:
            hash(aux)
        except TypeError:
            raise TypeError(
                f"a {type(value).__qualname__} is an argument of a traced function, and the "
                f"aux data its flatten function gives, {aux!r}, cannot be hashed: it is part "
                "of the cache key of the trace; return hashable aux data (a tuple, not a "
                "list)") from None
        return (type(value), ("aux", aux), *[_key(child, arrays) for child in children])
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return (type(value), *[_key(item, arrays) for item in value])
    if isinstance(value, (tuple, list)):
        return (type(value), *[_key(item, arrays) for item in value])
    if isinstance(value, dict):
        return (type(value), *_dict_key(value, arrays)[1:])
    if is_dataclass_instance(value):  # by its fields, as a namedtuple, and what it holds beside
        names, kept = instance_parts(value)
        beside = len(names) > len(field_names(type(value))) or kept  # (named in the key)
        return (type(value), *[_key(getattr(value, name), arrays) for name in names],
                *([names, *[(name, kept_key(held)) for name, held in kept.items()]]
                  if beside else ()))
    if isinstance(value, (set, frozenset, collections.deque)):
        return kept_key(value)
    return identity_key(value)


def kept_key(value):
    """The key of a value a trace keeps as it is, not taken apart (a set or deque argument;
    a list, dict or object a dataclass holds beside its fields): what it holds, item by item
    in order (a set's as it iterates), numbers by their text (0.0 and -0.0, 1 and True,
    apart), objects by identity. An array in it is refused: the graph would keep it."""
    if isinstance(value, (list, tuple, set, frozenset, collections.deque)):
        return (type(value), *[kept_key(item) for item in value])
    if isinstance(value, dict):
        return (type(value), *[(kept_key(key), kept_key(item)) for key, item in value.items()])
    if isinstance(value, (np.ndarray, Tracer)) or is_gpu_array(value):
        raise TypeError(_KEPT_ARRAY)
    if isinstance(value, (float, complex, np.generic)):
        return (type(value), repr(value))
    if value is None or isinstance(value, (int, str, bytes)):
        return (type(value), value)
    return identity_key(value)


_KEPT_ARRAY = (
    "an argument holds an array where a trace keeps values as they are: in a set or a deque, "
    "or in a list, dict or object that a dataclass holds beside its fields (set in "
    "__post_init__). The graph would keep that array, where later calls may hold another: "
    "pass arrays in lists, tuples and dicts, or make the attribute a field of the dataclass")


def signature_and_arrays(args: tuple, kwargs: dict, memory: bool = False,
                         names=(), keyword_order: bool = False) -> tuple[tuple, list]:
    """The signature of a call and its array leaves, in graph-input order; with `memory`, a
    third part of the key for arrays that share memory (the module's docstring). `names`, the
    positional parameters' names, name an argument that is refused (ArraySubclassError).
    `keyword_order`: the function takes **kwargs, which iterates in the order given."""
    arrays: list = []
    try:
        key = tuple([_key(value, arrays) for value in args])
        names = sorted(kwargs)
        keywords = tuple([(name, _key(kwargs[name], arrays)) for name in names])
        if keyword_order and list(kwargs) != names:
            keywords += ((_ORDER, tuple(kwargs)),)
        key = (key, keywords)
    except ArraySubclassError as error:
        raise error.named(args, kwargs, names) from None
    shared = memory_shared(arrays) if memory and len(arrays) > 1 else ()
    # and the array leaves that share memory with an array an object among them holds
    held = tuple(sorted({index for index, _ in held_sharing(
        arrays, object_held_arrays((args, kwargs)))})) if memory and arrays else ()
    if held:
        key = key + (shared, held)
    elif shared:
        key = key + (shared,)
    count = len(arrays)
    if count > 1 and (arrays[0] is arrays[1] if count == 2 else
                      len(set(map(id, arrays))) < count):
        key = key + (same_objects(arrays),)
    return key, arrays


SAME_OBJECTS = "<array leaves that are one object>"


def same_objects(arrays: list) -> tuple:
    """The last part of the key of a call that passes one array object as two of its leaves
    (`f(a, a)`): (SAME_OBJECTS, the positions of each leaf after the first of its object,
    with its first's). The trace hands the function one traced value for them, so that
    `x is y` answers as it does eagerly."""
    first, pairs = {}, []
    for index, array in enumerate(arrays):
        earlier = first.setdefault(id(array), index)
        if earlier != index:
            pairs.append((earlier, index))
    return (SAME_OBJECTS, tuple(pairs))


def array_call_key(args: tuple, memory: bool) -> tuple | None:
    """The key of a call whose arguments are all NumPy arrays, by its arrays' shapes and dtypes
    (with `memory`, and the pairs of them that share memory, where any do, as
    signature_and_arrays keys them; the owners first, which is cheap): a cache hit's cheap key
    (autotrace/traced_function.py); None for any other call."""
    described, owners = [], set()
    for value in args:
        if type(value) is not np.ndarray:
            return None
        described.append(value.shape)
        described.append(value.dtype)
        if memory:
            owners.add(id(value) if value.base is None else id(memory_owner(value)))
    shared = memory_shared(list(args)) if memory and len(owners) < len(args) else ()
    if shared:
        described.append(shared)
    count = len(args)  # one array passed twice (`f(a, a)`), found cheaply:
    if (args[0] is args[1] if count == 2 else count > 2 and len(set(map(id, args))) < count) \
            and (not memory or len(owners) < count):
        described.append(same_objects(args))
    return tuple(described)


class ParameterBinding:
    """A call's arguments bound to a function's parameters, as tf.function binds them before it
    keys a trace: for `def f(x, s=1.0)`, `f(x, 2.0)` and `f(x, s=2.0)` are both the call
    `(x, 2.0), {}`, and `f(x)` is `(x, 1.0), {}`. Keyword-only parameters (their defaults
    filled in) and **kwargs stay keywords; *args stay positional.

    Examples:
        >>> ParameterBinding(lambda x, s=1.0, *, k=2: x).bind((3,), {"s": 4.0})
        ((3, 4.0), {'k': 2})
    """

    def __init__(self, function, static_argnums=(), static_argnames=()):
        self.static = None  # the static arguments' StaticArguments, where there are any
        # Defaults are given explicitly to a Python function only (see _python_parameters).
        self.fills_defaults = _python_parameters(function)
        self.var_keyword = False
        try:
            self.signature = inspect.signature(function)
        except (TypeError, ValueError):
            self.signature = None
        if self.signature is None:  # no signature to bind to: calls are keyed as made
            if static_argnums or static_argnames:
                raise TypeError(f"{function!r} has no signature that static arguments can be "
                                "found in; wrap it in a function of your own") from None
            return
        kinds = [parameter.kind for parameter in self.signature.parameters.values()]
        self.positional = sum(kind in (inspect.Parameter.POSITIONAL_ONLY,
                                       inspect.Parameter.POSITIONAL_OR_KEYWORD)
                              for kind in kinds)
        self.varargs = inspect.Parameter.VAR_POSITIONAL in kinds
        self.var_keyword = inspect.Parameter.VAR_KEYWORD in kinds  # (keyed by their order too)
        # A call with all positional arguments and no keywords is bound as it is (the usual
        # call, kept cheap), unless keyword-only defaults are to be filled in.
        self.keywords = inspect.Parameter.KEYWORD_ONLY in kinds or \
            inspect.Parameter.VAR_KEYWORD in kinds
        # Keyword-only parameters that all have defaults (a gradient's `dy=None`): a call that
        # passes none of them binds to those defaults without inspect's binding (~8 us).
        keyword_only = [parameter for parameter in self.signature.parameters.values()
                        if parameter.kind is inspect.Parameter.KEYWORD_ONLY]
        self.keyword_defaults = None
        if self.fills_defaults and inspect.Parameter.VAR_KEYWORD not in kinds and all(
                parameter.default is not inspect.Parameter.empty for parameter in keyword_only):
            self.keyword_defaults = {parameter.name: parameter.default
                                     for parameter in keyword_only}
        if static_argnums or static_argnames:
            self.static = StaticArguments(function, self.signature, static_argnums,
                                          static_argnames)

    def bind(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """(positional arguments, keyword arguments) of the call, defaults filled in, static
        arguments marked (StaticValue); the call as it is where it does not fit the
        parameters (calling the function then says why)."""
        if self.static is not None:
            return self.static.marked(*self._bind(args, kwargs))
        return self._bind(args, kwargs)

    def _bind(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if self.signature is None:
            return args, kwargs
        if not kwargs and (len(args) == self.positional
                           or self.varargs and len(args) > self.positional):
            if not self.keywords:
                return args, kwargs
            if self.keyword_defaults is not None:
                return args, dict(self.keyword_defaults)
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError:
            return args, kwargs
        if self.fills_defaults:
            bound.apply_defaults()
        return bound.args, bound.kwargs


def _python_parameters(function) -> bool:
    """Whether `function`'s parameters are a Python function's, which takes each default given
    explicitly. A NumPy ufunc or function (np.sin, np.sum) or another builtin is called as the
    caller called it: np.sin refuses dtype=None given with signature=None."""
    if isinstance(function, functools.partial):
        return _python_parameters(function.func)
    if inspect.ismethod(function):
        function = function.__func__
    if not inspect.isfunction(function) and not inspect.isclass(function):
        function = getattr(type(function), "__call__", None)  # a callable object's method
    return inspect.isfunction(function) or inspect.isclass(function)


class StaticValue:
    """A static argument (autotrace.jit's static_argnums, static_argnames) in a bound call: a
    pytree node with no children whose aux data is itself, equal to another by `static_key`.
    So the signature keys it by type and value, and tracing, which rebuilds each argument from
    its leaves (runtime/tracing/trees.py map_arrays), hands the function the value itself, a
    Python value of the trace, never a traced one."""

    __slots__ = ("value", "key")

    def __init__(self, value):
        self.value = value
        self.key = static_key(value)

    def __eq__(self, other) -> bool:
        return type(other) is StaticValue and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"static {self.value!r}"


def static_key(value):
    """A static argument's key: Python numbers as other arguments' (`_KEYS`: 2, 2.0 and True
    apart, -0.0 apart from 0.0, NaN equal to itself), NumPy scalars by type and text, and so
    inside tuples, lists and frozensets; any other hashable object by type and its own
    equality. Equal values of other types compute other dtypes (`x * 2` and `x * 2.0`)."""
    kind = type(value)
    if kind in _KEYS and kind is not dict:
        return _KEYS[kind](value, None) if kind not in (tuple, list) else \
            (kind, *[static_key(item) for item in value])
    if isinstance(value, np.generic):
        return (kind, repr(value))
    if isinstance(value, (float, complex)):  # a subclass's: by its number's text too
        return (kind, repr(complex(value) if isinstance(value, complex) else float(value)))
    if isinstance(value, (tuple, list)):
        return (kind, *[static_key(item) for item in value])
    if isinstance(value, frozenset):
        return (kind, frozenset(static_key(item) for item in value))
    return (kind, value)


register_pytree_node(StaticValue, lambda static: ((), static),
                     lambda aux, children: aux.value)


class StaticArguments:
    """Which arguments of a call of `function` are static: the positions (among the bound
    positional arguments) and the keyword-only names that static_argnums and static_argnames
    give, resolved once against its parameters."""

    def __init__(self, function, signature: inspect.Signature, static_argnums,
                 static_argnames):
        self.name = getattr(function, "__qualname__", repr(function))
        numbers = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) else \
            tuple(static_argnames)
        parameters = list(signature.parameters.values())
        positional = [p.name for p in parameters if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters)
        self.positions, self.keywords = set(), set()
        for number in numbers:
            if isinstance(number, bool) or not isinstance(number, int):
                raise TypeError(f"static_argnums of {self.name} must be ints, not {number!r}")
            if not (-len(positional) <= number < len(positional) or varargs and number >= 0):
                raise ValueError(f"static_argnums={number} is out of range: {self.name} has "
                                 f"{len(positional)} positional parameters {tuple(positional)}")
            self.positions.add(number % len(positional) if number < 0 else number)
        for name in names:
            if name in positional:
                self.positions.add(positional.index(name))
            elif any(p.name == name and p.kind is inspect.Parameter.KEYWORD_ONLY
                     for p in parameters):
                self.keywords.add(name)
            else:
                raise ValueError(f"static_argnames: {name!r} is not a parameter of "
                                 f"{self.name}; its parameters are "
                                 f"{tuple(p.name for p in parameters)}")
        self.labels = {position: repr(positional[position]) if position < len(positional)
                       else f"at position {position}" for position in self.positions}

    def marked(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The bound call with each static argument a StaticValue; a TypeError for one that
        cannot be hashed, which a trace cannot be keyed by."""
        args = tuple(self._static(value, self.labels[index]) if index in self.positions
                     else value for index, value in enumerate(args))
        if self.keywords:
            kwargs = {name: self._static(value, repr(name)) if name in self.keywords
                      else value for name, value in kwargs.items()}
        return args, kwargs

    def _static(self, value, label: str) -> StaticValue:
        try:
            hash(value)
        except TypeError:
            raise TypeError(
                f"the static argument {label} of {self.name} must be hashable, as the traces "
                f"are keyed by its value; it is a {type(value).__name__} ({value!r}): pass a "
                "tuple for a list, or do not make it static") from None
        return StaticValue(value)


def signature_of(args: tuple, kwargs: dict | None = None) -> tuple:
    """The hashable cache key of a call `f(*args, **kwargs)` (see the module docstring)."""
    return signature_and_arrays(args, kwargs or {})[0]


# --- explaining a retrace -----------------------------------------------------------------------

def describe_difference(old_key: tuple, new_key: tuple, parameter_names=()) -> str:
    """What changed between two signatures, for a person: `argument 'x': shape (3,) -> (4,)`.

    `parameter_names` names the positional arguments (the function's parameters, in order).
    """
    (old_args, old_kwargs, *old_shared), (new_args, new_kwargs, *new_shared) = old_key, new_key
    old_same, new_same = _same_part(old_shared), _same_part(new_shared)
    if len(old_args) != len(new_args):
        return f"number of positional arguments: {len(old_args)} -> {len(new_args)}"
    for position, (old, new) in enumerate(zip(old_args, new_args)):
        if old != new:
            name = (repr(parameter_names[position]) if position < len(parameter_names)
                    else str(position))
            return f"argument {name}{_difference(old, new)}"
    old_names, new_names = dict(old_kwargs), dict(new_kwargs)
    old_order, new_order = old_names.pop(_ORDER, None), new_names.pop(_ORDER, None)
    if old_names.keys() != new_names.keys():
        return f"keyword arguments: {sorted(old_names)} -> {sorted(new_names)}"
    if old_order != new_order:
        return f"the order of the keyword arguments: {list(old_order or sorted(old_names))} " \
               f"-> {list(new_order or sorted(new_names))}"
    for name in old_names:
        if old_names[name] != new_names[name]:
            return f"argument {name!r}{_difference(old_names[name], new_names[name])}"
    if old_shared != new_shared:
        return f"array arguments that share memory: {_shared_text(old_shared)} -> " \
               f"{_shared_text(new_shared)}"
    if old_same != new_same:
        return f"array arguments that are one object: {_same_text(old_same)} -> " \
               f"{_same_text(new_same)}"
    return "no difference"


def without_same_objects(key: tuple) -> tuple:
    """`key` without its SAME_OBJECTS part (a concrete function's trace serves a call that
    passes one array twice, as it serves one whose arrays share memory where it reads)."""
    return key[:-1] if type(key[-1]) is tuple and key[-1][:1] == (SAME_OBJECTS,) else key


def _same_part(parts: list) -> tuple:
    """The pairs of a key's SAME_OBJECTS part, taken out of `parts` (the key's parts after
    its arguments'); () where it has none."""
    if parts and type(parts[-1]) is tuple and parts[-1][:1] == (SAME_OBJECTS,):
        return parts.pop()[1]
    return ()


def _same_text(pairs: tuple) -> str:
    """`none`, or `leaves 1 and 2` (the call's array leaves, counted from 1)."""
    return ", ".join(f"leaves {i + 1} and {j + 1}" for i, j in pairs) or "none"


def _shared_text(shared: list) -> str:
    """`none`, or `leaves 1 and 2, 1 and 3` (the call's array leaves, counted from 1), and
    `leaf 2 and an array an object argument holds`."""
    pairs, held = (*shared, (), ())[:2]
    texts = [f"leaves {i + 1} and {j + 1}" for i, j in pairs] + [
        f"leaf {i + 1} and an array an object argument holds" for i in held]
    return ", ".join(texts) or "none"


def _difference(old, new) -> str:
    """`: shape (3,) -> (4,)`, or `[0]['w']: ...` for a difference inside a container."""
    if is_array_key(old) and is_array_key(new):
        for part, index, show in (("shape", 1, str), ("dtype", 2, str), ("device", 3, str)):
            if old[index] != new[index]:
                return f": {part} {show(old[index])} -> {show(new[index])}"
        if old[4:] != new[4:]:
            return f": {_kind_of_0d(old)} -> {_kind_of_0d(new)}"
    if _is_registered_key(old) and _is_registered_key(new) and old[0] == new[0] and \
            old[0] is not StaticValue and old[1] == new[1] and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old[2:], new[2:])):  # its children
            if a != b:
                return f"[{index}]{_difference(a, b)}"
    if _is_container_key(old) and _is_container_key(new) and old[0] == new[0]:
        old_items, new_items = old[1:], new[1:]
        if old[0] == "dict" or (isinstance(old[0], type) and issubclass(old[0], dict)):
            old_items, new_items = dict(old_items), dict(new_items)
            orders = (old_items.pop(_ORDER, None), new_items.pop(_ORDER, None))
            if old_items.keys() != new_items.keys():
                return f": keys {sorted_keys(old_items)} -> {sorted_keys(new_items)}"
            for name in old_items:
                if old_items[name] != new_items[name]:
                    return f"[{name!r}]{_difference(old_items[name], new_items[name])}"
            if orders[0] != orders[1]:
                return (f": the order of its keys {list(orders[0] or sorted_keys(old_items))}"
                        f" -> {list(orders[1] or sorted_keys(new_items))}")
        elif len(old_items) != len(new_items):
            return f": length {len(old_items)} -> {len(new_items)}"
        else:
            for index, (a, b) in enumerate(zip(old_items, new_items)):
                if a != b:
                    return f"[{index}]{_difference(a, b)}"
    return f": {_describe(old)} -> {_describe(new)}"


def is_array_key(key) -> bool:
    """Whether `key` (a part of a signature) is an array's: ("array", shape, dtype, device),
    and ZERO_D_ARRAY after those for a 0-d NumPy array."""
    return type(key) is tuple and len(key) in (4, 5) and key[0] == "array" and \
        type(key[1]) is tuple


def _kind_of_0d(key) -> str:
    return "a 0-d array" if key[4:] == (ZERO_D_ARRAY,) else "a NumPy scalar"


def _is_container_key(key) -> bool:
    return type(key) is tuple and bool(key) and (
        key[0] in ("tuple", "list", "dict") or isinstance(key[0], type)
        and issubclass(key[0], (tuple, list, dict)))


def _is_registered_key(key) -> bool:
    """Whether `key` is a registered pytree type's: (type, ("aux", aux data), children...)."""
    return type(key) is tuple and len(key) >= 2 and isinstance(key[0], type) and \
        registered(key[0]) is not None


def _describe(key) -> str:
    if key is None:
        return "None"
    if _is_registered_key(key):
        aux = key[1][1]
        if key[0] is StaticValue:  # its aux data: the StaticValue
            return repr(aux)
        return f"a {key[0].__name__} with aux data {aux!r} and {len(key) - 2} children"
    if is_array_key(key):
        return f"an array {short_dtype(key[2])}[{','.join(map(str, key[1]))}]"
    if type(key) is tuple and len(key) == 2 and key[0] in (int, float, bool, complex, str):
        kind, value = key
        text = value if isinstance(value, str) and kind is not str else repr(value)
        return f"{kind.__name__} {text}"
    if _is_container_key(key):
        kind = key[0] if isinstance(key[0], str) else key[0].__name__
        return f"a {kind} of {len(key) - 1}"
    if type(key) is WeakIdentity and not key.alive:
        return f"{key!r} (since released)"
    return repr(key)
