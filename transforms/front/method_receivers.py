"""Whether `r.sum(axis=0)` is NumPy's `np.sum(r, axis=0)`: known before running, or found then.

A-normal form (transforms/front/anf.py) writes the methods of an array that are NumPy functions
of it (`x.sum(axis=0)`, `x.reshape(2, 3)`, `x.T`) as those functions, so that their derivative
rules apply. That is right only where the receiver is an array: a module (`xp.sum(x)`, where
`xp = array_namespace(x)`) or an object of the user's with a method of that name
(`scaler.clip(x)`) runs something else. `ReceiverKinds` tells each receiver's kind from the
source:

- ARRAY: surely an array or a number (a NumPy function's result, arithmetic, a global array,
  what a function of the user's returns that is one): NumPy's function, `np.sum(r, axis=0)`;
- OTHER: surely no array (a module, an object of a class of the user's, a list): the
  receiver's own method, derived when it runs (transforms/dynamic_calls.py);
- PASSED: a value passed in (a parameter, an attribute or item of one: `self.w`), an array in
  nearly all code: NumPy's function, after a check, when the code runs, that refuses another
  value, saying what to write (`check_array_method(s, 'clip')`);
- UNKNOWN: what a call returns that autotrace cannot tell (a method's result, a function's
  returning either): both, in an `if` on what the receiver is when the code runs:

      _t1 = is_array_method(xp, 'sum')
      if _t1:
          _t2 = np.sum(xp, x)
      else:
          _t2 = xp.sum(x)
"""
from __future__ import annotations

import inspect
import linecache
import sys
import types

import gast
import numpy as np

from ..analysis.call_results import own_function
from ..codegen.nodes import add_children, copy_tree
from ..codegen.templates import name
from .line_map import user_place
from .function_caches import made_from
from .parsing import MISSING, read_function, resolve
from .settled_kinds import names_in, settle
from .star_arguments import joined, unpacks
from ..rules.core import constant
from ...runtime.ops import array_methods, numpy_functions, ufunc_methods
from ...runtime.primitives.linalg import sublist_subscripts

ARRAY, OTHER, PASSED, UNKNOWN = "array", "other", "passed", "unknown"

# Packages whose classes' methods are an array's: NumPy's arrays and scalars, autotrace's traced
# values and Variables, CuPy's arrays (and Python's numbers) answer `x.sum()` as np.sum(x) does.
_LIBRARY_PACKAGES = {"numpy", "cupy", "autotrace", "builtins"}
# Builtins whose result is a number (and `range`, whose items are).
_NUMBER_BUILTINS = {len, int, float, complex, bool, range}
# Attributes of an array that are arrays (`x.T.sum()`).
_ARRAY_ATTRIBUTES = {"T", "real", "imag"}
# Methods of an array that A-normal form writes as NumPy's functions, whose results are arrays.
_NUMPY_METHODS = set(array_methods) | {"reshape", "transpose", "flatten"}
# Methods it calls through helpers as they are (anf.HELPER_METHODS): of an array, an array.
_OWN_METHODS = {"astype", "copy", "item"}
# Methods whose positional arguments form one shape or axes argument: `x.reshape(2, 3)`.
PACKED_METHODS = {"reshape": "reshape", "transpose": "transpose"}
# How deep `ReceiverKinds` reads the functions a function calls, for what they return.
_CALLEE_DEPTH = 2
# The attribute of one of autotrace's own functions that keeps the kind of what it returns.
_RETURNED_KIND = "__autotrace_returned_kind__"


def is_array_method(value, method: str) -> bool:
    """Whether `value.<method>` is the ndarray method or property of that name, which
    `np.<method>(value, ...)` computes: False for a module (whose `<method>` is its function)
    and for an object that has an attribute `<method>` of its own, or of a class not NumPy's,
    CuPy's or autotrace's (a method of the user's); True for an array, a NumPy scalar, a
    number, a traced value, an autotrace.Variable.

    Examples:
        >>> import numpy as np
        >>> is_array_method(np.ones(3), "sum"), is_array_method(np, "sum")
        (True, False)
    """
    if type(value) is np.ndarray:  # (the common case, first)
        return True
    if isinstance(value, types.ModuleType):
        return False
    try:
        if method in vars(value):
            return False
    except TypeError:  # no __dict__: an array, a number
        pass
    for cls in type(value).__mro__:
        if method in vars(cls):
            return is_library_class(cls)
    # (An object that makes its attributes when asked, `__getattr__`, may make this one.)
    maker = next((cls for cls in type(value).__mro__ if "__getattr__" in vars(cls)), None)
    return maker is None or is_library_class(maker) or not hasattr(value, method)


def is_library_class(cls) -> bool:
    """Whether `cls` is NumPy's, CuPy's, autotrace's or Python's own."""
    return (getattr(cls, "__module__", None) or "").split(".")[0] in _LIBRARY_PACKAGES


def check_array_method(value, method: str) -> None:
    """Raise TypeError where `value.<method>` is not the array method that autotrace made of
    it (see is_array_method): the error names the user's line and what to write instead."""
    if is_array_method(value, method):
        return
    frame = sys._getframe(1)  # the generated function's
    place = user_place(frame.f_code.co_filename, frame.f_lineno)
    where = ""
    if place is not None:
        text = linecache.getline(*place).strip()
        where = f"{place[0]}, line {place[1]}" + (f" (`{text}`)" if text else "") + ": "
    held = next((n for n, v in frame.f_locals.items() if v is value and n[:1] != "_"),
                "<value>")  # (its name in the user's code, where it has one)
    if method == "T":
        read, numpy, own = f"{held}.T", f"the array's transpose np.transpose({held})", "attribute"
        instead = f"getattr({held}, 'T')"
    elif method == "flat":
        read, numpy, own = f"{held}.flat[...]", f"the array's items np.ravel({held})[...]", \
            "attribute"
        instead = f"getattr({held}, 'flat')[...]"
    else:
        read, numpy, own = f"{held}.{method}(...)", f"the array method np.{method}({held}, ...)", \
            "method"
        instead = f"{type(value).__qualname__}.{method}({held}, ...)"
    if isinstance(value, types.ModuleType):
        what = f"the module {value.__name__}, whose {method} is its function"
        function = f"{held}_{method}" if held.isidentifier() else method
        instead = f"{function} = {held}.{method}`, then `{function}(...)"
    else:
        what = f"a {type(value).__qualname__}, whose {method} is its own {own}"
    raise TypeError(f"{where}autotrace reads `{read}`, on a value passed in, as {numpy}, but "
                    f"{held} is {what}; to use that, write `{instead}`")


constant(is_array_method, check_array_method)  # tests of what a value is: no gradient


class ReceiverKinds:
    """`of(receiver, method)`: ARRAY, OTHER, PASSED or UNKNOWN (see the module docstring) for
    the receiver of a method call or attribute read, a node of `function`'s source. A name is
    known as far as every assignment to it agrees; a parameter is PASSED (but one annotated
    `np.ndarray`), and so is what a loop, `with` or unpacking binds."""

    def __init__(self, function: gast.FunctionDef, namespace: dict, depth: int = 0):
        self.namespace = namespace
        self.depth = depth
        self.returned = {}  # id of a function called -> the kind of what it returns
        self.parameters = _parameter_kinds(function.args, namespace)
        bindings = {parameter: [kind] for parameter, kind in self.parameters.items()}
        for target, value in name_bindings(function.body):
            bindings.setdefault(target, []).append(value)
        self.locals = set(bindings)  # (and the parameters, which the body may assign)
        self.kinds: dict[str, str] = {}
        settle(self.kinds, self.locals, {target: names_in(values) for target, values in
                                         bindings.items()},
               lambda target: _join(value if isinstance(value, str) else self._kind(value)
                                    for value in bindings[target]))

    def of(self, receiver, method: str) -> str:
        """The kind of `receiver` as the receiver of `.<method>`."""
        if isinstance(receiver, gast.Name):
            if receiver.id in ("self", "cls") and receiver.id in self.parameters:
                return OTHER  # `self.flatten(x)`, `self.T`: the object's (a layer's) own
            if self._is_global(receiver.id):
                # What it holds now: a rebinding to a value of another type makes the
                # derivative stale (transforms/analysis/live_names.py).
                value = self.namespace[receiver.id]
                return ARRAY if is_array_method(value, method) else OTHER
        return self._kind(receiver) or UNKNOWN

    def renamed(self, renames: dict) -> None:
        """Names A-normal form gave variables (a comprehension's, renamed `old -> new`): of
        the kinds of the old."""
        for old, new in renames.items():
            self.locals.add(new)
            self.kinds[new] = self.kinds.get(old, PASSED)

    def returns(self, function) -> str:
        """The kind of what `function` (a node's) returns: PASSED as UNKNOWN (it may return
        what it is given)."""
        kind = _join((self._kind(node.value) or UNKNOWN) if node.value is not None else OTHER
                     for node in return_statements(function.body))
        return OTHER if kind is None else UNKNOWN if kind == PASSED else kind

    def _is_global(self, identifier: str) -> bool:
        return identifier not in self.locals and identifier in self.namespace

    def _kind(self, node) -> str | None:
        if isinstance(node, gast.Name):
            return self._name(node.id)
        if isinstance(node, gast.Constant):
            return ARRAY if isinstance(node.value, (bool, int, float, complex)) else OTHER
        if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            return ARRAY  # differentiated as NumPy's ufuncs (transforms/analysis/calls.py)
        if isinstance(node, gast.BoolOp):
            return _join(self._kind(value) for value in node.values)
        if isinstance(node, gast.IfExp):
            return _join((self._kind(node.body), self._kind(node.orelse)))
        if isinstance(node, (gast.List, gast.Tuple, gast.Dict, gast.Set, gast.ListComp,
                             gast.DictComp, gast.SetComp, gast.JoinedStr)):
            return OTHER
        if isinstance(node, gast.Subscript):
            return self._part(self._kind(node.value))
        if isinstance(node, gast.Attribute):
            value = resolve(node, self.namespace)
            if value is not MISSING:
                return _value_kind(value)
            base = self._kind(node.value)
            if node.attr in _ARRAY_ATTRIBUTES and base in (ARRAY, PASSED):
                return ARRAY  # (of a value passed in: after its check)
            return self._part(base)
        if isinstance(node, gast.Call):
            return self._call(node)
        return UNKNOWN

    def _name(self, identifier: str) -> str | None:
        if identifier in self.locals:
            return self.kinds.get(identifier)
        if identifier in self.namespace:
            kind = _value_kind(self.namespace[identifier])
            # A global a function called reads, unlike the function's own, may be rebound
            # unseen by the derivative (live_names.py watches the function's own).
            return UNKNOWN if kind == ARRAY and self.depth else kind
        return UNKNOWN

    @staticmethod
    def _part(base) -> str | None:
        """The kind of an item or attribute of a value of kind `base` (None: not known yet)."""
        if base is None:
            return None
        return ARRAY if base == ARRAY else UNKNOWN if base == UNKNOWN else PASSED

    def _call(self, node) -> str:
        func = node.func
        callee = resolve(func, self.namespace)
        if isinstance(func, gast.Attribute) and callee is MISSING:
            if isinstance(resolve(func.value, self.namespace), np.ufunc):
                return ARRAY  # np.add.reduce(x)
            base = self._kind(func.value)
            if base is None:
                return None  # (not known yet: see __init__)
            if func.attr in _NUMPY_METHODS and base in (ARRAY, PASSED):
                return ARRAY  # (of a value passed in: after its check)
            if func.attr in _OWN_METHODS and base in (ARRAY, PASSED):
                return base
            return UNKNOWN
        try:
            if isinstance(callee, np.ufunc) or callee in numpy_functions \
                    or callee in _NUMBER_BUILTINS:
                return ARRAY
        except TypeError:  # unhashable
            return UNKNOWN
        if isinstance(callee, type):  # an instance of the class
            return _class_kind(callee)
        if inspect.isfunction(callee):
            return self._returned_by(callee)
        return UNKNOWN

    def _returned_by(self, function) -> str:
        """The kind of what a function of the user's returns, read from its source."""
        key = id(function)
        if key not in self.returned:
            self.returned[key] = UNKNOWN  # (while it is read: a recursive call)
            if self.depth < _CALLEE_DEPTH:
                self.returned[key] = self._read_returned(function)
        return self.returned[key]

    def _read_returned(self, function) -> str:
        """The kind of what `function` returns, its source read one call deeper. autotrace's
        own functions (the runtime helpers generated code calls, read by every analysis) are
        read once per depth and kept on the function, as alias_calls.returned_parameters
        keeps them: their source and their module's names do not change."""
        kept = made_from(function, _RETURNED_KIND) if own_function(function) else {}
        if self.depth not in kept:
            try:
                parsed = read_function(function)
            except Exception:  # noqa: BLE001 - no source: nothing known
                return UNKNOWN
            kinds = ReceiverKinds(parsed.node, parsed.namespace, self.depth + 1)
            kept[self.depth] = kinds.returns(parsed.node)
        return kept[self.depth]


def _parameter_kinds(arguments, namespace: dict) -> dict:
    """The kind of each parameter as passed: PASSED, but ARRAY for one annotated `np.ndarray`,
    OTHER for one whose default is a module (`xp=np`, as array-API code takes its module)."""
    positional = arguments.posonlyargs + arguments.args
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    kinds = {}
    for argument, default in zip(positional + arguments.kwonlyargs,
                                 defaults + list(arguments.kw_defaults)):
        kinds[argument.id] = PASSED
        if argument.annotation is not None and \
                resolve(argument.annotation, namespace) is np.ndarray:
            kinds[argument.id] = ARRAY
        elif default is not None and isinstance(resolve(default, namespace), types.ModuleType):
            kinds[argument.id] = OTHER
    for extra in (arguments.vararg, arguments.kwarg):
        if extra is not None:
            kinds[extra.id] = OTHER  # a tuple, a dict
    return kinds


def _value_kind(value) -> str:
    """ARRAY for a value whose array methods are NumPy's functions (an array, a number, a
    Variable), OTHER for a module, a class or function, or an object of a class that is no
    array's; UNKNOWN for an array of a class of the user's, which may define any of them."""
    if isinstance(value, (types.ModuleType, type)) or callable(value) and not hasattr(
            type(value), "__array_function__"):
        return OTHER
    return _class_kind(type(value))


def _class_kind(cls) -> str:
    """The kind of an instance of `cls`."""
    if not (issubclass(cls, (np.ndarray, np.generic, bool, int, float, complex))
            or hasattr(cls, "__array_function__") or hasattr(cls, "__array_ufunc__")):
        return OTHER  # its attributes of array methods' names are its own
    return ARRAY if is_library_class(cls) else UNKNOWN  # (a user's may define any method)


def _join(kinds) -> str | None:
    """The kind of a value that may be of any of `kinds` (None: not known yet)."""
    kinds = {kind for kind in kinds if kind is not None}
    if len(kinds) <= 1:
        return kinds.pop() if kinds else None
    return PASSED if kinds <= {ARRAY, PASSED} else UNKNOWN


def name_bindings(statements):
    """(name, value) for each binding of a name in `statements`, leaving out the functions,
    classes and lambdas defined there (their own scopes); a kind instead of a value where
    the name is no value's (PASSED for what a loop, `with` or unpacking binds)."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            yield node.name, OTHER
            continue
        if isinstance(node, gast.Lambda):
            continue
        if isinstance(node, gast.Assign):
            for target in node.targets:
                yield from _assigned(target, node.value)
            pending.append(node.value)
            continue
        if isinstance(node, (gast.AnnAssign, gast.NamedExpr)) and node.value is not None:
            yield from _assigned(node.target, node.value)
            pending.append(node.value)
            continue
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            yield node.target.id, gast.BinOp(left=node.target, op=node.op, right=node.value)
            pending.append(node.value)
            continue
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name) and \
                isinstance(node.iter, gast.Call) and resolve(node.iter.func, {}) is range:
            yield node.target.id, ARRAY  # a count
            pending.extend(node.body + node.orelse + [node.iter])
            continue
        if isinstance(node, gast.ExceptHandler) and node.name is not None:
            yield node.name.id, OTHER
            pending.extend(node.body)
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            yield node.id, PASSED
        add_children(node, pending.append)


def _assigned(target, value):
    if isinstance(target, gast.Name):
        yield target.id, value
    elif isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, (gast.Tuple,
                                                                           gast.List)) \
            and len(target.elts) == len(value.elts) and not any(
                isinstance(e, gast.Starred) for e in target.elts + value.elts):
        for element, item in zip(target.elts, value.elts):
            yield from _assigned(element, item)
    else:
        for node in gast.walk(target):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                yield node.id, PASSED


def return_statements(statements):
    """The return statements of `statements`, leaving out those of functions defined there."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef,
                             gast.Lambda)):
            continue
        if isinstance(node, gast.Return):
            yield node
        add_children(node, pending.append)


class ArrayMethodCalls:
    """The part of A-normal form (transforms/front/anf.py `Normalizer`) that writes a call of
    an array method, `receiver.<method>(...)`, or a read of `receiver.T`, by the receiver's
    kind (`receivers`, a ReceiverKinds)."""

    receivers: ReceiverKinds

    def array_method(self, receiver, method: str, args, keywords):
        """`receiver.<method>(*args, **keywords)` (`receiver.T` for method "T") as the module
        docstring tells, by the receiver's kind."""
        kind = self.receivers.of(receiver, method)
        if kind == ARRAY:
            return self.numpy_method(receiver, method, args, keywords)
        receiver = self.atom(receiver)
        if kind == OTHER:
            return self.own_method(receiver, method, args, keywords)
        helper = self.helper_name("check_array_method" if kind == PASSED else "is_array_method")
        test = gast.Call(func=name(helper), keywords=[],
                         args=[copy_tree(receiver), gast.Constant(value=method, kind=None)])
        if kind == PASSED:
            self.emit(gast.Expr(value=test), self.current)
            return self.numpy_method(receiver, method, args, keywords)
        # The arguments once, before the test: each branch reads the same names.
        args = [gast.Starred(value=self.atom(a.value), ctx=gast.Load())
                if isinstance(a, gast.Starred) else self.atom(a) for a in args]
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value)) for k in keywords]
        test = self.atom(test)
        result = self.namer.temporary("t")

        def branch(write):  # `result = <the call as write writes it>`
            return self.assigned(result, lambda: write(
                copy_tree(receiver), method, copy_tree(args), copy_tree(keywords)))
        self.emit(gast.If(test=test, body=branch(self.numpy_method),
                          orelse=branch(self.own_method)), self.current)
        return name(result)

    def array_attribute(self, receiver, attribute: str):
        """`receiver.T`, `.real` or `.imag`. `.T` is np.transpose(receiver) wherever the receiver
        may be an array (`array_method`). `.real` and `.imag` are np.real and np.imag where the
        receiver surely is an array, and are read as they are elsewhere: a class of the user's
        may hold the parts of a complex value in fields of those names (an array's parts read
        so get np.real's and np.imag's gradients, runtime/derivatives/items.py)."""
        if attribute == "T":
            return self.array_method(receiver, "T", [], [])
        if self.receivers.of(receiver, attribute) == ARRAY:
            return self.numpy_call(attribute, [receiver], [])
        return gast.Attribute(value=self.atom(receiver), attr=attribute, ctx=gast.Load())

    def numpy_method(self, receiver, method: str, args, keywords):
        """`receiver.<method>(...)` of an array, as the NumPy function it is."""
        if method == "T":
            return self.numpy_call("transpose", [receiver], [])
        if method == "flatten":  # a copy always; np.ravel is a view where it can be
            return self.numpy_call("copy", [self.numpy_call(
                "ravel", [receiver] + args, keywords)], [])
        if method in PACKED_METHODS:
            if len(args) > 1 or unpacks(args, []):
                args = [joined(args, "tuple")]
            return self.numpy_call(PACKED_METHODS[method], [receiver] + args, keywords)
        return self.numpy_call(method, [receiver] + args, keywords)

    def flat_items(self, receiver, index):
        """`receiver.flat[index]` (index: in A-normal form) of an array, or of a value passed
        in (checked when the code runs): its items in C order at the flat `index`, a new array
        as NumPy's flat iterator gives, `np.take(np.ravel(receiver), positions)` where
        `positions = np.arange(np.size(receiver))[index]`; `np.ravel(receiver)` for index
        None (what `for v in receiver.flat` iterates). None for a receiver that may be no
        array: its own `flat` is read as it is."""
        kind = self.receivers.of(receiver, "flat")
        if kind not in (ARRAY, PASSED):
            return None
        receiver = self.atom(receiver)
        if kind == PASSED:
            test = gast.Call(func=name(self.helper_name("check_array_method")), keywords=[],
                             args=[copy_tree(receiver), gast.Constant(value="flat", kind=None)])
            self.emit(gast.Expr(value=test), self.current)
        if index is None:
            return self.numpy_call("ravel", [receiver], [])
        every_position = self.numpy_call(
            "arange", [self.numpy_call("size", [copy_tree(receiver)], [])], [])
        positions = gast.Subscript(value=self.atom(every_position), slice=index, ctx=gast.Load())
        items = self.numpy_call("ravel", [copy_tree(receiver)], [])
        return self.numpy_call("take", [items, positions], [])

    def ufunc_reduction(self, func, args, keywords):
        """A ufunc's method as the NumPy function it is, whose rules apply, or None for any
        other call, or one that unpacks its arguments:
        - `np.add.reduce(a, axis, dtype, out, ...)` as the NumPy reduction (runtime's
          ufunc_methods: np.sum(a, axis=0, ...), np.max, ...); a dtype for a reduction that
          takes none (np.max) casts `a` first, as NumPy reduces in it;
        - `np.add.accumulate(a, axis, dtype, out)` as np.cumsum(a, axis=0, ...), and
          np.multiply's as np.cumprod;
        - `np.subtract.outer(a, b, ...)` as np.subtract(a reshaped to a.shape + (1,) * b.ndim,
          b as an array, ...), as NumPy computes it."""
        owner = resolve(func.value, self.namespace) if isinstance(func, gast.Attribute) \
            and func.attr in ("reduce", "accumulate", "outer") else None
        if not isinstance(owner, np.ufunc) or unpacks(args, keywords):
            return None
        if func.attr == "outer":
            return self.ufunc_outer(owner, args, keywords)
        function = ufunc_methods.get((owner.__name__, func.attr))
        function = getattr(function, "scan", None) if func.attr == "accumulate" else function
        if function is None or getattr(np, function.__name__, None) is not function:
            return None
        given = dict(zip(("axis", "dtype", "out"), args[1:]))
        given.update((keyword.arg, keyword.value) for keyword in keywords)
        array = given.pop("array", args[0] if args else None)
        given.setdefault("axis", gast.Constant(value=0, kind=None))  # reduce's default
        if func.attr == "accumulate" and not (isinstance(given["axis"], gast.Constant) and type(
                given["axis"].value) is int):  # (np.cumsum takes None, which accumulate refuses)
            return None
        dtype = given.pop("dtype", None)
        if dtype is not None and "dtype" in inspect.signature(function).parameters:
            given["dtype"] = dtype
        elif dtype is not None:
            array = gast.Call(func=name(self.helper_name("astype")), args=[array, dtype],
                              keywords=[])
        return self.numpy_call(function.__name__, [array],
                               [gast.keyword(arg=key, value=value) for key, value in given.items()])

    def ufunc_outer(self, ufunc: np.ufunc, args, keywords):
        if ufunc.nin != 2 or len(args) != 2 or getattr(np, ufunc.__name__, None) is not ufunc:
            return None
        a, b = (self.atom(arg) for arg in args)
        ones = gast.BinOp(left=gast.Tuple(elts=[gast.Constant(value=1, kind=None)],
                                          ctx=gast.Load()),
                          op=gast.Mult(), right=self.numpy_call("ndim", [copy_tree(b)], []))
        shape = gast.BinOp(left=self.numpy_call("shape", [copy_tree(a)], []), op=gast.Add(),
                           right=ones)
        column = self.numpy_call("reshape", [a, shape], [])
        # (outer makes arrays of both: a Python number is no weak scalar there)
        row = self.numpy_call("reshape", [b, self.numpy_call("shape", [copy_tree(b)], [])],
                              [])
        return self.numpy_call(ufunc.__name__, [column, self.atom(row)], keywords)

    def singular_values(self, func, args, keywords):
        """`np.linalg.svd(a, compute_uv=False)` as `np.linalg.svdvals(a)`, which it computes and
        whose rules apply (svd's are of its factors); None for any other call, one that unpacks
        its arguments, and one with hermitian= (which reads one triangle of `a`)."""
        if resolve(func, self.namespace) is not np.linalg.svd or unpacks(args, keywords):
            return None
        given = dict(zip(("a", "full_matrices", "compute_uv", "hermitian"), args))
        given.update((keyword.arg, keyword.value) for keyword in keywords)
        compute_uv = given.get("compute_uv")
        if "hermitian" in given or "a" not in given or not (
                isinstance(compute_uv, gast.Constant) and compute_uv.value is False):
            return None
        linalg = gast.Attribute(value=name(self.numpy_name), attr="linalg", ctx=gast.Load())
        return self.call(gast.Attribute(value=linalg, attr="svdvals", ctx=gast.Load()),
                         [given["a"]], [])

    def einsum_sublists(self, func, args, keywords):
        """`np.einsum(a, [0, 1], b, [1, 2], [0, 2])` as `np.einsum('AB,BC->AC', a, b)`, whose
        rules apply, where every sublist is a list or tuple of ints (and `...`) written in the
        call; None for any other call."""
        if resolve(func, self.namespace) is not np.einsum or unpacks(args, keywords) or \
                len(args) < 2 or isinstance(args[0], gast.Constant):
            return None
        pairs = args[:len(args) - len(args) % 2]  # (array, sublist) pairs, then the output's
        sublists = [*pairs[1::2], *args[len(pairs):]]
        def label(node):  # an int, `...` (or the name Ellipsis), or None for anything else
            value = node.value if isinstance(node, gast.Constant) else resolve(
                node, self.namespace) if isinstance(node, gast.Name) and \
                node.id == "Ellipsis" else None
            return value if type(value) is int or value is Ellipsis else None
        if not all(isinstance(sublist, (gast.List, gast.Tuple)) and all(
                label(node) is not None for node in sublist.elts) for sublist in sublists):
            return None
        labels = [[label(node) for node in sublist.elts] for sublist in sublists]
        try:
            subscripts = sublist_subscripts(labels[:len(pairs) // 2],
                                            (labels[len(pairs) // 2:] or [None])[0])
        except ValueError:  # a label NumPy refuses: its error, when the call runs
            return None
        return self.numpy_call("einsum", [gast.Constant(value=subscripts, kind=None),
                                          *pairs[0::2]], keywords)

    def own_method(self, receiver, method: str, args, keywords):
        """`receiver.<method>(...)` as it is written: the method of the object (an atom)."""
        attribute = gast.Attribute(value=receiver, attr=method, ctx=gast.Load())
        return attribute if method == "T" else self.call(attribute, args, keywords)

    def assigned(self, target: str, make_value) -> list:
        """The statements that compute `make_value()` and assign it to `target`."""
        saved, self.out = self.out, []
        try:
            value = make_value()
            self.emit(gast.Assign(targets=[name(target, store=True)], value=value,
                                  type_comment=None), self.current)
            return self.out
        finally:
            self.out = saved
