"""Gradients of objects: dataclass instances, and objects a differentiated function builds.

A dataclass gets a gradient of its own class, as a namedtuple does: an instance whose fields
hold the gradients of the fields (made without running `__init__` or `__post_init__`, so a
frozen dataclass works too). Any other object gets an `ObjectGradient`: a dict of the
gradients of its attributes, by name, where an attribute no gradient reached is absent.

Objects that differentiated code builds, and the gradients of their fields, are
runtime/derivatives/built_objects.py.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import inspect
import numbers
import textwrap
import threading
import types

import numpy as np

from ..containers import (field_names, is_dataclass_instance, rebuild,  # noqa: F401
                          map_fields, new_dataclass)
from ..object_walk import users_classes
from ..primitives.memory import is_users_object
from ..errors import TracingError
from ..user_frames import user_code_site
from ..held_state import holds_state


def operator_on_object(detail: str) -> TypeError:
    """The error of a derivative that met an object of a class of the user's where it took an
    operator for array arithmetic (transforms/front/object_operators.py): `detail` says where."""
    return TypeError(
        f"autotrace differentiated an arithmetic operator as array arithmetic, but an operand "
        f"is an object of a class of yours, which Python hands the operator to ({detail}); "
        f"write the method call, `a.__add__(b)` for `a + b` (where the method may return "
        f"NotImplemented, the one that handles the operands), or keep the object in a name "
        f"bound only to calls of its class (`a = Vec(x)`), so that autotrace sees it is one")


def _refused_arithmetic(symbol: str):
    """An operator of ObjectGradient, `symbol`, that refuses (see ObjectGradient)."""
    def refused(self, *other):
        raise operator_on_object(f"its gradient, of the attributes {[str(key) for key in self]}, "
                                 f"met `{symbol}` in the derivative")
    return refused


class ObjectGradient(dict):
    """The gradient of an object that is no container, array or dataclass: attribute name ->
    the gradient of that attribute (read with runtime.derivatives.items.read_attribute).

    `written`: the slots of the object that the derivative it comes from wrote into, as
    (keys, where, whether the value written carries gradient, whether what the slot held
    passes into it: `+=`, `-=`) (see runtime/derivatives/state_writes.py): the gradient there
    is the one the slot had before the write. Added to the gradient a caller has for the
    object after the call (`add_objects`), what that has at such a slot is the gradient of a
    value the call wrote: refused where that value carries gradient (the derivative called
    took none from its caller for it), else the gradient of what the slot held where that
    passes into it, else dropped. A copy keeps them.

    `recomputed`: the logs (runtime/derivatives/state_log.py) of the calls that a derivative
    of a derivative was running again, from the state their first run saw, when it was made:
    a gradient as of before such a call's writes, which no slot the call wrote may hold where
    it meets that call's adjoint (`refuse_recomputed_at_writes`). A copy, and a sum, keep
    them."""

    written = frozenset()
    recomputed = frozenset()
    rebuilt_from_items = True  # (containers.rebuild: as ObjectGradient(pairs), no copy)
    # Arithmetic on it comes of an operator on an object differentiated as array arithmetic,
    # where the source did not tell it is one (transforms/front/object_operators.py):
    # refused, saying what to write.
    __add__ = __radd__ = _refused_arithmetic("+")
    __sub__ = __rsub__ = _refused_arithmetic("-")
    __mul__ = __rmul__ = _refused_arithmetic("*")
    __truediv__ = __rtruediv__ = _refused_arithmetic("/")
    __floordiv__ = __rfloordiv__ = _refused_arithmetic("//")
    __mod__ = __rmod__ = _refused_arithmetic("%")
    __pow__ = __rpow__ = _refused_arithmetic("**")
    __matmul__ = __rmatmul__ = _refused_arithmetic("@")
    __neg__ = _refused_arithmetic("-")
    __pos__ = _refused_arithmetic("+")
    __abs__ = _refused_arithmetic("abs")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if args and isinstance(args[0], ObjectGradient):
            self.written = args[0].written
            self.recomputed = args[0].recomputed
        if _recomputations.logs:
            self.recomputed = self.recomputed | {_recomputations.logs[-1]}

    def __repr__(self) -> str:
        return f"ObjectGradient({dict.__repr__(self)})"


class _Recomputations(threading.local):
    def __init__(self):
        # the logs of the state_as_at blocks running in this thread, innermost last
        # (runtime/derivatives/state_log.py)
        self.logs: list = []


_recomputations = _Recomputations()


@contextlib.contextmanager
def recomputation(log):
    """Mark the block as the recomputation of the call `log` began before (ObjectGradient's
    `recomputed`)."""
    _recomputations.logs.append(log)
    try:
        yield
    finally:
        _recomputations.logs.pop()


def recomputing() -> bool:
    """Whether a `state_as_at` block is running in this thread."""
    return bool(_recomputations.logs)


def recomputed_call():
    """The log of the call the innermost `state_as_at` block running runs again, or None."""
    return _recomputations.logs[-1] if _recomputations.logs else None


class StateWriteError(ValueError, TracingError):
    """A write into an object's state that generated code cannot make as Python would, or
    whose gradient it cannot follow."""


_NOT_OBJECTS = (type(None), numbers.Number, str, bytes, tuple, list, dict, set, frozenset,
                type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                types.ModuleType, range, slice)


def is_plain_object(value) -> bool:
    """An instance of a user's class that is neither a container, nor an array, nor a
    dataclass: what gets an ObjectGradient."""
    return not (isinstance(value, _NOT_OBJECTS) or hasattr(value, "dtype")
                or is_dataclass_instance(value) or isinstance(value, ObjectGradient))


def generated_dataclass_init(cls) -> bool:
    """A dataclass whose __init__ the decorator wrote (it has no source to read)."""
    if not dataclasses.is_dataclass(cls) or not inspect.isfunction(cls.__init__):
        return False
    try:
        inspect.getsourcelines(cls.__init__.__code__)
    except (OSError, TypeError):
        return True
    return cls.__init__.__code__.co_filename == "<string>"


def with_attribute(gradient, attribute: str, value, add):
    """`gradient` (a dataclass gradient, an ObjectGradient, or None for none yet) with `value`
    added to its entry `attribute` (a new object). An attribute of a dataclass that is none
    of its fields (a class attribute) is a constant: its gradient goes nowhere."""
    if is_dataclass_instance(gradient):
        cls = type(gradient)
        if attribute not in field_names(cls):
            return gradient
        values = {field: getattr(gradient, field) for field in field_names(cls)}
        values[attribute] = add(values[attribute], value)
        return new_dataclass(cls, values)
    out = ObjectGradient(gradient if gradient is not None else {})
    out[attribute] = add(out.get(attribute), value)
    return out


def check_stored(owner, attribute: str) -> bool:
    """Refuse a gradient through `owner.<attribute>` where the class computes it (a
    property) from what may carry gradient: autotrace would need to differentiate the
    getter, and it does not. A property that reads of its object only class attributes
    (`constant_property`) is a constant, and passes: True for it (no gradient of `owner`'s
    to add), False for an attribute stored on the object."""
    if not (is_plain_object(owner) or is_dataclass_instance(owner)):
        return False
    computed = inspect.getattr_static(type(owner), attribute, None)
    if not isinstance(computed, (property, functools.cached_property)):
        return False  # (most attributes: one static lookup, no more)
    if constant_property(owner, attribute):
        return True
    site = user_code_site()  # (of a derivative's code: the user's line it was made from)
    where = "" if site is None else f"File \"{site[0]}\", line {site[1]}: "
    raise TypeError(
        f"{where}autotrace cannot differentiate through the property "
        f"{type(owner).__name__}.{attribute} of an object whose attributes carry gradient; "
        f"make it a method and call it ({attribute}() instead of .{attribute})")


def constant_property(owner, attribute: str) -> bool:
    """Whether `owner.<attribute>` is a property (or cached_property) whose getter reads of
    its object only attributes of the class that hold data (`self.k` of a class's `k = 3.0`,
    not set on `owner`): its value carries no gradient of `owner`'s. Another use of the
    object (passed on, `type(self)`, a method called, `super()`) may read anything: not
    constant."""
    computed = inspect.getattr_static(type(owner), attribute, None)
    getter = computed.fget if isinstance(computed, property) else getattr(
        computed, "func", None)
    names = _object_reads(getter) if isinstance(
        computed, (property, functools.cached_property)) else None
    if names is None:
        return False
    instance = getattr(owner, "__dict__", None) or {}
    return all(name not in instance and _class_data(type(owner), name) for name in names)


def _class_data(cls, name: str) -> bool:
    """Whether `cls.<name>` is data of the class that no call changes (not a descriptor, a
    property or a method, nor a container or an array, which the function may write into)."""
    try:
        held = inspect.getattr_static(cls, name)
    except AttributeError:
        return False
    return _constant_data(held)


def _constant_data(value) -> bool:
    """A number, string or None (or a tuple of them): a value no call changes in place. Not
    a NumPy float or complex scalar: the value a differentiated function's forward sweep
    gives (`A.k = x[0]`, written by code autotrace did not read), which may carry gradient."""
    if isinstance(value, tuple):
        return all(_constant_data(item) for item in value)
    if isinstance(value, (np.floating, np.complexfloating)):
        return False
    return value is None or isinstance(value, (numbers.Number, str, bytes))


def _object_reads(getter) -> frozenset | None:
    """The attribute names a getter reads of its first parameter, where it uses that
    parameter only as `self.<name>` read; else (or with no source to read) None. Read once
    per getter, and kept on it."""
    if not isinstance(getter, types.FunctionType) or "__class__" in getter.__code__.co_freevars:
        return None  # (super() reads its object through __class__)
    if _OBJECT_READS not in getter.__dict__:
        getter.__dict__[_OBJECT_READS] = _read_object_reads(getter)
    return getter.__dict__[_OBJECT_READS]


# What _object_reads found, kept on the getter read.
_OBJECT_READS = "__autotrace_object_reads__"


def _read_object_reads(getter) -> frozenset | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(getter)))
    except (OSError, TypeError, SyntaxError):
        return None
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef) or not function.args.args:
        return None
    own = function.args.args[0].arg
    reads = {id(node.value): node for node in ast.walk(function)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
             and node.value.id == own and isinstance(node.ctx, ast.Load)}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == own and id(node) not in reads:
            return None
        if isinstance(node, ast.arg) and node is not function.args.args[0] and node.arg == own:
            return None
    return frozenset(node.attr for node in reads.values())


def add_objects(a, b, add):
    """The sum of two gradients of one object (either may be None)."""
    if a is None:
        return b
    if b is None:
        return a
    if is_dataclass_instance(a) and is_dataclass_instance(b):
        return map_fields(add, a, b)
    # (a dataclass's gradient may come as a dataclass of gradients, zeros_like's, or by
    # attribute, an object's built in the function: added by field)
    a, b = (ObjectGradient(_fields_of(g)) if is_dataclass_instance(g) else g for g in (a, b))
    if isinstance(b, ObjectGradient) and b.written:
        a = _after_writes(a, b.written)
    out = ObjectGradient(a)
    if isinstance(b, ObjectGradient):
        out.written = out.written | b.written
        out.recomputed = out.recomputed | b.recomputed
    for attribute, value in b.items():
        out[attribute] = add(out.get(attribute), value)
    return out


def _fields_of(instance) -> dict:
    return {name: getattr(instance, name) for name in field_names(type(instance))}


def entry_at(gradient, keys: tuple):
    """The entry of a gradient of an object, dict or list at the path `keys`, or None."""
    for key in keys:
        if gradient is None:
            return None
        if isinstance(gradient, dict):  # (an ObjectGradient is one)
            gradient = gradient.get(key)
        elif isinstance(gradient, (list, tuple)):
            gradient = gradient[key] if -len(gradient) <= key < len(gradient) else None
        elif is_dataclass_instance(gradient):
            gradient = getattr(gradient, key, None)
        else:
            return None
    return gradient


def replaced_at(gradient, keys: tuple, entry, missing=None, depth: int = 0):
    """A copy of `gradient` with `entry` at the path `keys` (None: no gradient there), the
    containers on the way copied, not changed. Where one is missing, `missing(depth)` makes
    it (with `missing` None, a gradient of None stays None)."""
    if gradient is None:
        if missing is None:
            return None
        gradient = missing(depth)
    key, rest = keys[0], keys[1:]
    inner = entry if not rest else replaced_at(entry_at(gradient, (key,)), rest, entry,
                                               missing, depth + 1)
    if isinstance(gradient, dict):
        out = type(gradient)(gradient) if isinstance(gradient, ObjectGradient) else \
            rebuild(gradient, gradient.items())
        if inner is None:
            out.pop(key, None)
        else:
            out[key] = inner
        return out
    if isinstance(gradient, (list, tuple)):
        out = list(gradient)
        out[key] = inner
        return type(gradient)(out) if isinstance(gradient, tuple) else out
    if is_dataclass_instance(gradient):
        values = {field: getattr(gradient, field) for field in field_names(type(gradient))}
        values[key] = inner
        return new_dataclass(type(gradient), values)
    return gradient


def _after_writes(gradient, written):
    """`gradient` (a caller's, after a call) as of before the call's writes `written` (see
    ObjectGradient): StateWriteError where it has one at a slot the call wrote a value that
    carries gradient into, or where it comes from a recomputation; else kept where what the
    slot held passes into what the call wrote (`+=`), dropped elsewhere."""
    refuse_recomputed_at_writes(gradient, written)
    for keys, where, carried, passes in sorted(written, key=repr):
        if carried and nonzero_gradient(entry_at(gradient, keys)):
            raise StateWriteError(
                f"{where}: autotrace cannot differentiate this write into an object's state, "
                "made in a function called by the differentiated one: what it writes is read "
                "back after that call returns, and the derivative of the call does not take "
                "the gradient of what its caller reads back; read it back inside the function "
                "that writes it, or return the value from there and assign it where it is "
                "read")
        if not passes:
            gradient = replaced_at(gradient, keys, None)
    return gradient


def refuse_recomputed_at_writes(gradient, written, log=None) -> None:
    """StateWriteError where `gradient`, made in the recomputation of the call whose log is
    `log` (None: of any call; ObjectGradient's `recomputed`: a gradient of what slots held
    before the call), has one at a slot the call overwrote (`written`), which the call's
    adjoint would take for the gradient of what it wrote there."""
    recomputed = getattr(gradient, "recomputed", frozenset())
    if not recomputed or log is not None and log not in recomputed:
        return
    for keys, where, _, passes in sorted(written, key=repr):
        if not passes and nonzero_gradient(entry_at(gradient, keys)):
            raise StateWriteError(
                f"{where}: autotrace cannot differentiate this write into an object's state in "
                "reverse mode over a derivative that recomputes its call more than once (in a "
                "loop): the call reads what the slot held before, and the gradient the "
                "recomputations give that is not kept apart from the gradient of what it "
                "wrote; take this second derivative in forward over reverse "
                "(autotrace.hessian, or autotrace.jvp of autotrace.grad), or write the value in "
                "the function you differentiate")


def nonzero_gradient(gradient) -> bool:
    """Whether a gradient holds anything but zeros (a traced one may)."""
    if gradient is None:
        return False
    if isinstance(gradient, dict):
        return any(nonzero_gradient(value) for value in gradient.values())
    if isinstance(gradient, (list, tuple)):
        return any(nonzero_gradient(value) for value in gradient)
    if is_dataclass_instance(gradient):
        return any(nonzero_gradient(getattr(gradient, name))
                   for name in field_names(type(gradient)))
    if isinstance(gradient, numbers.Number):
        return gradient != 0
    if type(gradient).__module__ == "numpy" or type(gradient).__module__.startswith("cupy"):
        return bool((gradient != 0).any())
    return True  # a traced value: not known


def iterates_by_its_methods(value) -> bool:
    """Whether `value` is an object of the user's, which `for v in obj`, `list(obj)` or
    `sum(obj)` iterate over by its `__iter__` or `__getitem__`: derivatives do not follow
    those."""
    return is_users_object(value) and (not isinstance(value, (tuple, list, dict))
                                       or defines_its_own(type(value), ("__iter__",)))


def defines_its_own(cls, methods) -> bool:
    """Whether `cls` or a base of it that is the user's defines one of `methods` (a list
    subclass's own `append`, `__iter__`)."""
    return any(method in vars(base) for base in users_classes(cls) for method in methods)


def refuse_object_iteration(value, gradient) -> None:
    """Raise where a gradient or tangent (`gradient`, of the values it gave) reaches the
    values iterating over an object of the user's gave (iterates_by_its_methods)."""
    if nonzero_gradient(gradient):
        name = type(value).__name__
        raise TypeError(
            f"the values of an object of class {name} are iterated over (`for v in obj`, "
            f"`a, b = obj`, list(obj), sum(obj), by its __iter__ or __getitem__), and a "
            f"gradient or tangent "
            f"reaches them: autotrace follows iteration over lists, tuples, dicts and arrays, "
            f"not the methods that iterate over an object. Iterate over what the object holds "
            f"(for v in obj.items), or index it (for i in range(len(obj)): v = obj[i], which "
            f"differentiates {name}.__getitem__)")


def gradient_beside_state(value) -> bool:
    """Whether an object that holds Variables also holds floating values of its own (one the
    function built of a Variable and an array computed from it): those get their gradient
    through the object's, as in an object holding no Variable, and the Variables theirs.
    A module's (an object whose calls run `__autotrace_call__`) are its settings (a layer's
    epsilon), constants: its Variables alone get gradients."""
    if not (is_plain_object(value) or is_dataclass_instance(value)) or \
            getattr(type(value), "__autotrace_call__", None) is not None:
        return False
    return any(floating(item) and not holds_state(item)
               for item in (getattr(value, "__dict__", None) or {}).values())


def floating(value) -> bool:
    """Whether `value` is a float or a floating array, or a container holding one."""
    if isinstance(value, (list, tuple)):
        return any(floating(item) for item in value)
    if isinstance(value, dict):
        return any(floating(item) for item in value.values())
    return isinstance(value, (float, complex)) or getattr(
        getattr(value, "dtype", None), "kind", None) in ("f", "c")
