"""Operators on objects of a class of the user's, written as the method calls Python makes.

On arrays autotrace differentiates an operator as the NumPy ufunc it is
(transforms/analysis/calls.py); on an object of a class the user wrote, `a + b` runs the
class's `__add__`, which autotrace differentiates from its source as a method call. A-normal
form (transforms/front/anf.py) writes the operator as that call where the source tells that an
operand is such an object:

    a = Vec(x)                 a = Vec(x)
    b = a + a          ->      b = a.__add__(a)
    c = 2.0 * b                c = b.__rmul__(2.0)      (a float's __mul__ gives way to it)
    d = -c                     d = c.__neg__()
    e = abs(d)                 e = d.__abs__()
    d += c                     d = d.__add__(c)         (`a += b` is `a = a + b`:
                                                         transforms/front/inplace.py)

`ObjectClasses` tells an operand's classes from the source: a name is known as far as every
assignment to it agrees, to a call of a class of the user's, to the first parameter of one of
its methods (`self`), to what a function or method of the user's returns (read from its
source), or to an operator on such objects (what the class's method returns). An operator
stays as it is where its method mentions `NotImplemented` (it may hand the operator on to the
other operand, which the call would not), where the source does not tell which method Python
calls (`w * a`, where `w` may be a number, whose operator gives way to `a.__rmul__`, or an
array, whose operator makes an array of objects), and where the source does not tell that an
operand is such an object. The primal runs Python's operator then; where gradient passes
through it, the derivative, which takes it for array arithmetic, refuses when it runs, saying
what to write (runtime/derivatives/objects.py operator_on_object).
"""
from __future__ import annotations

import inspect
import numbers
import sys
import types
from typing import NamedTuple

import gast
import numpy as np

from ..analysis.live_names import names_read
from ..codegen.nodes import walk
from ..codegen.templates import index_value
from .method_receivers import ARRAY, is_library_class, name_bindings, return_statements
from .parsing import MISSING, read_function, resolve
from .settled_kinds import names_in, settle
from ...runtime.derivatives.built_objects import build_object
from ...runtime.derivatives.objects import defines_its_own
from ...runtime.derivatives.items import build_namedtuple

# The method each operator calls, and how it is written.
BINARY_METHODS = {gast.Add: ("add", "+"), gast.Sub: ("sub", "-"), gast.Mult: ("mul", "*"),
                  gast.Div: ("truediv", "/"), gast.FloorDiv: ("floordiv", "//"),
                  gast.Mod: ("mod", "%"), gast.Pow: ("pow", "**"), gast.MatMult: ("matmul", "@"),
                  gast.LShift: ("lshift", "<<"), gast.RShift: ("rshift", ">>"),
                  gast.BitAnd: ("and", "&"), gast.BitOr: ("or", "|"),
                  gast.BitXor: ("xor", "^")}
UNARY_METHODS = {gast.USub: ("neg", "-"), gast.UAdd: ("pos", "+"), gast.Invert: ("invert", "~")}

# What a value is, as far as the source tells: NUMBER (a Python number), NO_OBJECT (anything
# else, or not known), or a frozenset of the classes of the user's it is an instance of one of.
NUMBER, NO_OBJECT = "number", "no object"
# Calls whose result is a Python number.
_NUMBER_CALLS = {int, float, complex, bool, len}
# Classes whose instances are no objects of the user's, whatever their subclasses define.
_NOT_USERS = (np.ndarray, np.generic, numbers.Number, str, bytes, list, tuple, dict, set,
              frozenset, type, types.ModuleType, range, slice)
# How deep `ObjectClasses` reads the functions and methods a function calls.
_CALLEE_DEPTH = 2


def is_users_class(cls) -> bool:
    """Whether an instance of `cls` is an object of a class of the user's: no array, number,
    container, string, module or class, and none of NumPy's, CuPy's, autotrace's or Python's.
    A namedtuple class of the user's is one: the operators it defines are its methods (those
    it does not, tuple's, are no Python functions, which `_defined` looks for)."""
    return isinstance(cls, type) and not (
        (issubclass(cls, _NOT_USERS) and not (issubclass(cls, tuple) and hasattr(cls, "_fields"))
         and not _own_container_methods(cls))
        or is_library_class(cls)
        or hasattr(cls, "__array_ufunc__") or hasattr(cls, "__array_function__"))


# The methods of a list, tuple or dict whose work the transforms model themselves.
_CONTAINER_METHODS = frozenset({"append", "pop", "extend", "insert", "__getitem__",
                                "__setitem__", "__iter__", "__add__", "__iadd__", "keys",
                                "values", "items", "get", "setdefault", "update"})


def _own_container_methods(cls) -> bool:
    """Whether `cls`, a subclass of list, tuple or dict of the user's, defines its own of the
    methods the transforms model for those (an `append` that scales what it keeps): then its
    instances are objects whose methods are differentiated, not containers."""
    return issubclass(cls, (list, tuple, dict)) and defines_its_own(cls, _CONTAINER_METHODS)


def method_class(function: gast.FunctionDef, namespace: dict, location):
    """The class of `namespace` one of whose methods `function` (as parsed, at `location`) is,
    or None: its first parameter is then an instance of that class."""
    parameters = [a.id for a in function.args.posonlyargs + function.args.args]
    if not parameters:
        return None
    for value in list(namespace.values()):
        member = vars(value).get(function.name) if isinstance(value, type) else None
        if not inspect.isfunction(member) or not is_users_class(value) or \
                member.__qualname__ != f"{value.__qualname__}.{member.__name__}":
            continue  # (a function defined elsewhere, an attribute of the class too)
        code = member.__code__
        if code.co_firstlineno == location.first_line and \
                list(code.co_varnames[:len(parameters)]) == parameters and \
                (inspect.getsourcefile(code) or code.co_filename) == location.filename:
            return value
    return None


def _join(kinds):
    """What a value that may be any of `kinds` is (None: nothing known yet)."""
    kinds = [kind for kind in kinds if kind is not None]
    if not kinds:
        return None
    if all(isinstance(kind, frozenset) for kind in kinds):
        return frozenset().union(*kinds)
    return NUMBER if all(kind == NUMBER for kind in kinds) else NO_OBJECT


def _overridden_below(cls, method: str) -> bool:
    """Whether a subclass of `cls` (defined by now) has a `method` of its own."""
    own = inspect.getattr_static(cls, method, None)
    return any(inspect.getattr_static(sub, method, None) is not own
               for sub in _subclasses(cls))


def _subclasses(cls) -> set:
    """The subclasses of `cls` defined by now, at any depth."""
    found, pending = set(), list(cls.__subclasses__())
    while pending:
        sub = pending.pop()
        if sub not in found:
            found.add(sub)
            pending.extend(sub.__subclasses__())
    return found


def _defined(classes, method: str) -> list:
    """The classes of `classes` whose `method` is a Python function."""
    return [cls for cls in classes
            if inspect.isfunction(inspect.getattr_static(cls, method, None))]


class ObjectClasses:
    """`of(node)`: NUMBER, NO_OBJECT or the classes of the user's (a frozenset) that the value
    of `node`, an expression of `function`'s source, is an instance of (see the module
    docstring); `self_class`: the class of its first parameter, for a method."""

    def __init__(self, function: gast.FunctionDef, namespace: dict, self_class=None,
                 depth: int = 0, known=None):
        self.function = function
        self.namespace = namespace
        self.self_class = self_class
        self.depth = depth
        # (function, class) -> what it returns; ("NotImplemented", method) -> gives_way
        self.known = {} if known is None else known
        self.kinds = None  # local name -> kind, found when first asked
        self.locals = set()

    @property
    def local_names(self) -> set:
        """The names the function binds (its parameters too)."""
        if self.kinds is None:
            self.kinds = self._local_kinds()
        return self.locals

    def of(self, node):
        """What `node` is (NO_OBJECT where nothing is known)."""
        if self.kinds is None and not isinstance(node, gast.Constant):
            self.kinds = self._local_kinds()
        return self._kind(node) or NO_OBJECT

    def gives_way(self, method) -> bool:
        """Whether the function `method` may return NotImplemented: it mentions it, or calls
        `super()` (whose method may), in its source, or where that cannot be read, in its
        code."""
        key = ("NotImplemented", method)
        if key not in self.known:
            try:
                tree = read_function(method).node
            except Exception:  # noqa: BLE001 - no source: its code tells
                self.known[key] = not names_read(method.__code__).isdisjoint(
                    ("NotImplemented", "super"))
            else:
                self.known[key] = any(isinstance(node, gast.Name) and node.id in (
                    "NotImplemented", "super") for node in walk(tree))
        return self.known[key]

    def returned(self):
        """What `function` returns."""
        if any(isinstance(node, (gast.Yield, gast.YieldFrom)) for node in walk(self.function)):
            return NO_OBJECT
        return _join(NO_OBJECT if node.value is None else self.of(node.value)
                     for node in return_statements(self.function.body)) or NO_OBJECT

    def _local_kinds(self) -> dict:
        arguments = self.function.args
        positional = arguments.posonlyargs + arguments.args
        bindings = {argument.id: [NO_OBJECT] for argument in positional + arguments.kwonlyargs}
        if self.self_class is not None and positional:
            # (an instance of a subclass too, whose methods may go first: binary_method)
            bindings[positional[0].id] = [frozenset({self.self_class,
                                                     *_subclasses(self.self_class)})]
        for extra in (arguments.vararg, arguments.kwarg):
            if extra is not None:
                bindings[extra.id] = [NO_OBJECT]
        for target, value in name_bindings(self.function.body):
            if isinstance(value, str):  # a kind: ARRAY for a count of range, else unknown
                value = NUMBER if value == ARRAY else NO_OBJECT
            bindings.setdefault(target, []).append(value)
        self.kinds, self.locals = {}, set(bindings)
        settle(self.kinds, bindings, {target: names_in(values) | {target}
                                      for target, values in bindings.items()},
               lambda target: _join([self.kinds.get(target)] + [  # (only up: the loop ends)
                   value if isinstance(value, (str, frozenset)) else self._kind(value)
                   for value in bindings[target]]))
        return self.kinds

    def _kind(self, node):
        if isinstance(node, gast.Name):
            if node.id in self.locals:
                return self.kinds.get(node.id)
            value = self.namespace.get(node.id, MISSING)
            if isinstance(value, (bool, int, float, complex)):
                return NUMBER
            # (A global a function called reads may be rebound unseen by the derivative.)
            if not self.depth and is_users_class(type(value)):
                return frozenset({type(value)})
            return NO_OBJECT
        if isinstance(node, gast.Constant):
            return NUMBER if isinstance(node.value, (bool, int, float, complex)) else NO_OBJECT
        if isinstance(node, (gast.BinOp, gast.UnaryOp)):
            return self._operator(node)
        if isinstance(node, gast.IfExp):
            return _join((self._kind(node.body), self._kind(node.orelse)))
        if isinstance(node, gast.BoolOp):
            return _join(self._kind(value) for value in node.values)
        if isinstance(node, gast.Call):
            return self._call(node)
        return NO_OBJECT

    def _operator(self, node):
        """What an operator's result is: what the method Python calls returns."""
        if isinstance(node, gast.UnaryOp):
            if type(node.op) not in UNARY_METHODS:
                return NUMBER  # `not a`: a bool
            left = right = self._kind(node.operand)
        else:
            left, right = self._kind(node.left), self._kind(node.right)
        if left is None or right is None:
            return None
        called = unary_method(UNARY_METHODS[type(node.op)][0], left) \
            if isinstance(node, gast.UnaryOp) else \
            binary_method(BINARY_METHODS[type(node.op)][0], left, right)
        if called is None or called.classes is None:
            return NUMBER if left == right == NUMBER else NO_OBJECT
        return self._returned_by(called.method, called.classes)

    def _call(self, node):
        callee = resolve(node.func, self.namespace)
        if (callee is build_object or callee is build_namedtuple) and node.args:  # a class built
            callee = resolve(node.args[0], self.namespace)
        if is_users_class(callee):
            return frozenset({callee})
        if any(callee is number for number in _NUMBER_CALLS):
            return NUMBER
        if inspect.isfunction(callee) and not is_library_class(callee):
            return self._returns(callee, None)
        if callee is MISSING and isinstance(node.func, gast.Attribute):  # `a.scaled(2.0)`
            receiver = self._kind(node.func.value)
            if isinstance(receiver, frozenset):
                return self._returned_by(node.func.attr, receiver)
        return NO_OBJECT

    def _returned_by(self, method: str, classes):
        """What `method` of an instance of one of `classes` returns."""
        defined = _defined(classes, method)
        if len(defined) < len(classes):
            return NO_OBJECT
        return _join(self._returns(inspect.getattr_static(cls, method), cls)
                     for cls in defined) or NO_OBJECT

    def _returns(self, function, self_class):
        """What `function` returns, `self_class` the class of its first parameter or None."""
        key = (function, self_class)
        if key not in self.known:
            self.known[key] = NO_OBJECT  # (while it is read: a recursive call)
            if self.depth < _CALLEE_DEPTH:
                try:
                    parsed = read_function(function)
                except Exception:  # noqa: BLE001 - no source: nothing known
                    return NO_OBJECT
                callee = ObjectClasses(parsed.node, parsed.namespace, self_class,
                                       self.depth + 1, self.known)
                self.known[key] = callee.returned()
        return self.known[key]


class MethodCall(NamedTuple):
    """The method call Python makes of an operator: `operand` (its index) is the receiver,
    the others the arguments; `classes`: the receiver's, or None where the source does not
    tell that Python calls this method (which it may)."""

    operand: int
    method: str
    classes: frozenset | None


def unary_method(method: str, operand) -> MethodCall | None:
    """The call Python makes of `<op> operand` (`method`: "neg", ...; operand: what
    ObjectClasses tells of it), where it is surely an object of a class of the user's that
    has the method (else None)."""
    method = f"__{method}__"
    if not isinstance(operand, frozenset) or not _defined(operand, method):
        return None
    return MethodCall(0, method, operand if len(_defined(operand, method)) == len(operand)
                      else None)


def binary_method(method: str, left, right) -> MethodCall | None:
    """The call Python makes of `left <op> right` (`method`: "add", ...; left, right: what
    ObjectClasses tells of the operands) where an operand is surely an object of a class of
    the user's that has the method; else None."""
    reflected, method = f"__r{method}__", f"__{method}__"
    left_has = _defined(left, method) if isinstance(left, frozenset) else None
    right_has = _defined(right, reflected) if isinstance(right, frozenset) else None
    if left_has and right_has:
        # A subclass's own reflected method is called first (Python's data model).
        first = [(l, r) for l in left for r in right_has if r is not l and issubclass(r, l)
                 and inspect.getattr_static(r, reflected)
                 is not inspect.getattr_static(l, reflected, None)]
        if first:
            return MethodCall(1, reflected, right if len(left) == len(right) == 1 else None)
    if left_has:
        if not isinstance(right, frozenset) and right != NUMBER and any(
                _overridden_below(cls, reflected) for cls in left):
            # (the right operand may be of a subclass whose reflected method goes first)
            return MethodCall(0, method, None)
        return MethodCall(0, method, left if len(left_has) == len(left) else None)
    if not right_has:
        return None  # no method of an object the source knows: Python looks elsewhere
    if left != NUMBER and left_has is None:
        # (an array's operator, say, makes an array of the results of the object's method)
        return MethodCall(1, reflected, None)
    return MethodCall(1, reflected, right if len(right_has) == len(right) else None)


def _not_the_users(cls) -> bool:
    """Whether `cls` is NumPy's, autotrace's or Python's, its standard library's included."""
    return is_library_class(cls) or \
        (getattr(cls, "__module__", None) or "").split(".")[0] in sys.stdlib_module_names


def _unordered(node, namespace: dict) -> bool:
    """Whether `node` makes a dict or set: a display, a comprehension, dict(...) or set(...)."""
    if isinstance(node, (gast.Dict, gast.Set, gast.DictComp, gast.SetComp)):
        return True
    return isinstance(node, gast.Call) and resolve(node.func, namespace) in (dict, set, frozenset)


def surely_a_list(function, node, namespace: dict) -> bool:
    """Whether `node` is a name `function` binds only to lists it builds (`out = []`,
    `[... for ...]`, `list(...)`), and is no parameter of it."""
    if not isinstance(node, gast.Name):
        return False
    values = _values_bound(function, node.id)
    stores = [n for n in walk(function) if isinstance(n, gast.Name) and n.id == node.id
              and isinstance(n.ctx, (gast.Store, gast.Param))]
    return bool(values) and len(stores) == len(values) and all(
        isinstance(v, (gast.List, gast.ListComp)) or isinstance(v, gast.Call)
        and resolve(v.func, namespace) is list for v in values)


def _values_bound(function, identifier: str) -> list:
    """The values `function` assigns to the name `identifier` (`name = value`)."""
    return [n.value for n in walk(function) if isinstance(n, gast.Assign)
            and any(isinstance(t, gast.Name) and t.id == identifier for t in n.targets)]


class ObjectOperators:
    """The part of A-normal form (transforms/front/anf.py `Normalizer`) that writes an
    operator on an object of a class of the user's as its method call (see the module
    docstring), where `objects` (an ObjectClasses) tells."""

    objects: ObjectClasses

    def iterated_by_its_methods(self, node) -> bool:
        """Whether `node` is a dict or set (a display, or a name the function binds to one),
        or an object of a class of the user's that iterates by an `__iter__` of its own or has
        no `__getitem__`: unpacking it does not index it."""
        if _unordered(node, self.objects.namespace) or isinstance(node, gast.Name) and any(
                _unordered(value, self.objects.namespace)
                for value in _values_bound(self.objects.function, node.id)):
            return True
        classes = self.objects.of(node)
        return isinstance(classes, frozenset) and any(
            not _not_the_users(cls) and (not hasattr(cls, "__getitem__")
                                         or defines_its_own(cls, ("__iter__",)))
            for cls in classes)

    def list_method(self, func) -> bool:
        """Whether `r.append` or `r.pop` is taken for a list's: not where `r` is an object the
        source tells the class of (a class of the user's, whose method is differentiated; a
        deque, whose methods transforms/analysis/object_state.py refuses where they are given
        a value that carries gradient)."""
        return not isinstance(self.objects.of(func.value), frozenset)

    def object_operation(self, node):
        """`node`, a BinOp, UnaryOp or `abs(a)` of the source, as a call on atoms
        (`a.__add__(b)`, `a.__abs__()`), or None where no operand is surely an object of a
        class of the user's, where the source does not tell which method Python calls, or
        where that method mentions NotImplemented."""
        if isinstance(node, gast.UnaryOp) and type(node.op) in UNARY_METHODS:
            operands, (method, _) = [node.operand], UNARY_METHODS[type(node.op)]
            called = unary_method(method, self.objects.of(node.operand))
        elif isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords and \
                not isinstance(node.args[0], gast.Starred) and \
                isinstance(node.func, gast.Name) and \
                node.func.id not in self.objects.local_names and \
                resolve(node.func, self.namespace) is abs:  # abs(a): a.__abs__()
            operands = node.args
            called = unary_method("abs", self.objects.of(node.args[0]))
        elif isinstance(node, gast.BinOp) and type(node.op) in BINARY_METHODS:
            operands, (method, _) = [node.left, node.right], BINARY_METHODS[type(node.op)]
            called = binary_method(method, *map(self.objects.of, operands))
        else:
            return None
        if called is None:
            return None
        if called.classes is None or any(
                self.objects.gives_way(inspect.getattr_static(cls, called.method))
                for cls in called.classes):
            return None  # (see the module docstring)
        side = called.operand
        atoms = [self.atom(operand) for operand in operands]
        receiver, arguments = atoms[side], atoms[:side] + atoms[side + 1:]
        return gast.Call(func=gast.Attribute(value=receiver, attr=called.method,
                                             ctx=gast.Load()),
                         args=arguments, keywords=[])

    def object_item(self, node):
        """`obj[index]` (a Subscript read of the source) as `obj.__getitem__(index)` on atoms
        (a slice as `slice(...)`), where `obj` is surely an object of a class of the user's
        whose every class has its own __getitem__; else None."""
        called = unary_method("getitem", self.objects.of(node.value))
        if called is None or called.classes is None or _defined(called.classes, "__setitem__"):
            return None  # (an object written by item too: its writes are not followed)
        return gast.Call(func=gast.Attribute(value=self.atom(node.value), attr="__getitem__",
                                             ctx=gast.Load()),
                         args=[self._index_value(node.slice)], keywords=[])

    def object_item_write(self, target, value):
        """`obj[index] = value` (`target` a Subscript store of the source, `value` its value) as
        `obj.__setitem__(index, value)`, where `obj` is surely an object of a class of the
        user's whose every class has its own __setitem__: the method is differentiated as any
        method call (a write into the object's state that carries gradient is refused,
        transforms/analysis/object_state.py), where the item model of a list or dict would read
        and restore the item through the object's methods. None otherwise."""
        called = unary_method("setitem", self.objects.of(target.value))
        if called is None or called.classes is None:
            return None
        method = gast.Attribute(value=self.atom(target.value), attr="__setitem__",
                                ctx=gast.Load())
        index = self._index_value(target.slice)
        return gast.Call(func=method, args=[index, self.atom(value)], keywords=[])

    def _index_value(self, index):
        """An index of a subscript as the value Python passes to __getitem__."""
        return index_value(index, self.atom)
