"""What a call in user code means to the gradient: a rule, a constant, or a function to derive."""
from __future__ import annotations

import builtins
import contextvars
import functools
import inspect
import re
import sys
import types
from dataclasses import dataclass

import gast
import numpy as np

from ...runtime.held_state import holds_state
from ...runtime.state import StateCell
from ..front.parsing import MISSING, resolve
from ..front.python_versions import PYTHON_VERSIONS
from ..rules.core import adjoint_rules, constant_functions, tangent_rules
from ..rules.refused import refused_reason

# Python operators and the NumPy functions whose rules they use.
BINARY_OPERATORS = {
    gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply, gast.Div: np.true_divide,
    gast.Pow: np.power, gast.MatMult: np.matmul, gast.Mod: np.mod,
    gast.FloorDiv: np.floor_divide,
}
UNARY_OPERATORS = {gast.USub: np.negative, gast.UAdd: np.positive}
# Operators with no derivative: on bits, and on dicts and sets (`d | e` merges).
_UNDIFFERENTIATED = {gast.BitOr: "|", gast.BitAnd: "&", gast.BitXor: "^", gast.LShift: "<<",
                     gast.RShift: ">>"}


def binary_operator(node, location, is_active):
    """The NumPy function whose rules the operator of the BinOp `node` uses; for one with no
    derivative, None where no operand `is_active` (a mask `m | n`, whose name a derivative's
    stack may make look active), else a TransformError at the line."""
    function = BINARY_OPERATORS.get(type(node.op))
    if function is None and (is_active(node.left) or is_active(node.right)):
        raise location.error(
            node, f"autotrace cannot differentiate `{_UNDIFFERENTIATED[type(node.op)]}` of "
            f"values that carry gradient: it differentiates arithmetic operators (for dicts, "
            f"which `|` merges, copy one and assign the other's items: e = dict(d); "
            f"e[k] = v)", "operator")
    return function

# Builtins whose results carry no gradient. (Not set and frozenset, whose items may: they are
# refused where they hold values that carry gradient, transforms/rules/refused.py.)
CONSTANT_BUILTINS = {
    len, range, int, bool, str, isinstance, type, print, repr, id, hash, enumerate, zip,
    round, any, all, callable, hasattr, sorted, ord, chr,
    format, issubclass, reversed, slice, object,
}


# While set (a list), the functions whose gradient the user wrote (custom_vjp, custom_gradient,
# custom_jvp, stop_gradient, a rule registered for a function of theirs) that a trace runs are
# noted in it (converted code notes its calls, stop_gradient itself): a derivative built from a
# trace, which keeps their values and not their gradients, refuses them
# (autotrace/from_trace.py; autotrace/batching.py keeps those of each vmap's trace).
own_rules_met = contextvars.ContextVar("own_rules_met", default=None)


def note_own_rule(callee, own: bool = False) -> None:
    """Note `callee` in own_rules_met where it is set and callee's gradient is the user's
    (`own`: said by the callee itself)."""
    met = own_rules_met.get()
    if met is None:
        return
    module = (getattr(callee, "__module__", None) or "").split(".")[0]
    if own or isinstance(callee, CustomGradient) or module not in _LIBRARY_PACKAGES | {
            "math", "builtins"} and _is_rule(callee):
        met.append(getattr(callee, "__qualname__", None) or repr(callee))


def _is_rule(callee) -> bool:
    try:
        return classify_value(callee).kind == "rule"
    except TypeError:
        return False


@dataclass
class Call:
    """kind: "rule", "constant", "user" (a Python function to derive), "dynamic" (known only
    when it runs), or "unknown" (a callable with no rule). `value` is the resolved callable."""

    kind: str
    value: object = None
    checkpointed: bool = False  # a user function whose call reverse mode recomputes


def classify(func_node, namespace: dict) -> Call:
    """What the callee expression `func_node` of a call is."""
    if isinstance(func_node, gast.Attribute) and func_node.attr in ("append", "pop"):
        if resolve(func_node, namespace) is MISSING:
            return Call("list_" + func_node.attr)
    value = resolve(func_node, namespace)
    if value is MISSING:
        return Call("dynamic")
    call = classify_value(value)
    if call.kind == "user" and _bound_to_state(call.value):
        # A method of an object holding Variables (`predict = model.predict`, or an object
        # with __call__, held in a global or a closure): resolved when the derivative runs,
        # as a Module's call is, where the method is differentiated for its object too and
        # the Variables it reads through `self` get their gradients (under implicit_grad).
        return Call("dynamic", value)
    return call


def _bound_to_state(function) -> bool:
    """Whether `function` is a method bound to an object that holds Variables (not one of a
    Variable's own)."""
    return inspect.ismethod(function) and not isinstance(function.__self__, StateCell) and (
        holds_state(function.__self__))


class CustomGradient:
    """A function whose gradient its author gives (see autotrace.custom_gradient).

    `function` returns `(value, grad_fn)`; calling the object returns the value alone.
    """

    def __init__(self, function):
        self.function = function

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)[0]


class CustomVJP(CustomGradient):
    """A function whose reverse-mode derivative its author gives as two functions (see
    autotrace.custom_vjp): `fwd(*args) -> (value, residuals)` and `bwd(*nondiff, residuals,
    dy)` -> one gradient (or None, for zeros) per argument not in `nondiff_argnums`, those
    arguments coming first. Called directly, it is the function itself."""

    def __init__(self, function, nondiff_argnums: tuple = ()):
        super().__init__(function)
        self.fwd = self.bwd = None
        self.nondiff_argnums = _positions(function, nondiff_argnums)

    def defvjp(self, fwd, bwd) -> None:
        """Give the rules: fwd and bwd as above (the decorated function's docstring)."""
        if not callable(fwd) or not callable(bwd):
            raise TypeError(f"{getattr(self, '__name__', 'f')}.defvjp(fwd, bwd) takes two "
                            f"functions, not {type(fwd).__name__} and {type(bwd).__name__}")
        self.fwd, self.bwd = fwd, bwd
        self.__dict__.pop("_autotrace_functions", None)  # (made from the rules given last)

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)


def _positions(function, nondiff_argnums) -> tuple:
    """nondiff_argnums checked against `function`'s positional parameters, in order."""
    name = getattr(function, "__name__", "the function")
    if isinstance(nondiff_argnums, int) and not isinstance(nondiff_argnums, bool):
        nondiff_argnums = (nondiff_argnums,)
    try:
        count = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                    for p in inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        count = None
    if not isinstance(nondiff_argnums, (tuple, list)) or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n < (count or n + 1)
            for n in nondiff_argnums) or len(set(nondiff_argnums)) != len(nondiff_argnums):
        raise ValueError(f"custom_vjp({name}): nondiff_argnums must be distinct positions of "
                         f"its parameters (ints from 0 to {(count or 1) - 1}), not "
                         f"{nondiff_argnums!r}")
    return tuple(sorted(nondiff_argnums))


class CustomJVP(CustomGradient):
    """A function whose forward-mode derivative its author gives (see autotrace.custom_jvp):
    `jvp(primals, tangents) -> (value, tangent)`. Called directly, it is the function
    itself."""

    def __init__(self, function):
        super().__init__(function)
        self.jvp = None

    def defjvp(self, jvp) -> None:
        """Give the rule: jvp as above (the decorated function's docstring)."""
        if not callable(jvp):
            raise TypeError(f"{getattr(self, '__name__', 'f')}.defjvp(jvp) takes a function, "
                            f"not {type(jvp).__name__}")
        self.jvp = jvp
        self.__dict__.pop("_autotrace_functions", None)

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)


class Checkpointed:
    """A function whose calls reverse mode recomputes instead of storing what they compute
    (see autotrace.checkpoint): the primal sweep calls `function` plainly, and the adjoint
    sweep runs it again, from its inputs, before its adjoint. Called directly, it is
    `function`; everything else (forward mode, tracing) sees `function` itself."""

    def __init__(self, function):
        self.function = function
        self.__autotrace_python_function__ = function  # what parsing and tracing read

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)


class FieldsOf:
    """`FieldsOf(P)(*args)`: the attributes `P(*args)` would set, as a dict (what autotrace
    differentiates of a constructor call; see transforms/reverse/built_objects_and_super.py)."""

    def __init__(self, cls):
        self.cls = cls
        self.__name__ = f"fields_of_{cls.__name__}"
        self.__code__ = cls.__init__.__code__  # the names the derivative may not take

    def __call__(self, *args, **kwargs):
        instance = self.cls.__new__(self.cls)
        self.cls.__init__(instance, *args, **kwargs)
        return Fields(vars(instance), instance)

    def __repr__(self) -> str:
        return f"<fields of {self.cls.__qualname__}>"


class Fields(dict):
    """The attributes `__init__` set, and the object it set them on (what `build_object` then
    returns, so that the object the function goes on with is the one `__init__` made)."""

    __slots__ = ("instance",)

    def __init__(self, attributes=(), instance=None):
        super().__init__(attributes)
        self.instance = instance


def classify_value(value) -> Call:
    if isinstance(value, FieldsOf):
        return Call("user", value)
    if isinstance(value, Checkpointed):
        inner = classify_value(value.function)
        if inner.kind != "user":  # (autotrace.checkpoint refuses such functions)
            return inner
        return Call("user", inner.value, checkpointed=True)
    if isinstance(value, CustomGradient):
        return Call("custom", value)
    wrapped = getattr(value, "__autotrace_python_function__", None)
    if wrapped is not None:  # a traced function: differentiate the Python function inside
        try:
            if wrapped in adjoint_rules:  # a traced NumPy function (np.sin): its rule
                return Call("rule", wrapped)
        except TypeError:  # unhashable
            pass
        return Call("custom" if isinstance(wrapped, CustomGradient) else "user", wrapped)
    try:
        if value in PYTHON_VERSIONS:  # functools.reduce: derived from a Python version's source
            return Call("user", PYTHON_VERSIONS[value])
        # Constants first: floor_divide has rules too, for `a // b` (see rules/elementwise.py).
        if value in constant_functions or value in CONSTANT_BUILTINS or (
                inspect.ismethod(value) and value.__func__ in constant_functions):
            return Call("constant", value)
        if value in adjoint_rules:
            return Call("rule", value)
    except TypeError:  # unhashable callables
        pass
    if inspect.isfunction(value) and (hasattr(value, "__autotrace_no_rule_hint__")
                                      or refused_reason(value) is not None):
        # (autotrace's, not differentiated, or NumPy's Python function that autotrace
        # refuses, np.lib.stride_tricks.as_strided: the hint says why, not its source)
        return Call("unknown", value)
    if inspect.ismethod(value) or inspect.isfunction(value):
        return Call("user", value)
    if isinstance(value, functools.partial):  # its function is known when the call runs
        return Call("dynamic", value)
    if getattr(type(value), "__autotrace_traced_call__", False):
        # An autotrace.vmap: derived from its batched trace when the call runs
        # (transforms/traced_calls.py TRACED_DERIVATIVES).
        return Call("dynamic", value)
    if hasattr(type(value), "__autotrace_call__"):
        # An object that says which method a call of it runs (autotrace.Module: `call`, after
        # building itself on the first call): resolved when the derivative runs.
        return Call("dynamic", value)
    if runs_own_call(value):  # an instance of a class with __call__: derive that method
        return Call("user", types.MethodType(own_call_function(type(value)), value))
    if isinstance(value, type) and not issubclass(value, (int, float, complex, bool)):
        if value.__module__ == "builtins" or value.__module__.startswith("numpy") or \
                value.__module__.split(".")[0].lstrip("_") in sys.stdlib_module_names:
            return Call("unknown", value)  # (operator.methodcaller("append", v) keeps v)
        return Call("constant", value)  # constructing a user's object: its fields are constants
    return Call("unknown", value)


def has_tangent_rule(value) -> bool:
    """Whether `value` has a registered tangent rule, which forward mode uses rather than its
    source (a rule registered alone, with no adjoint rule, too)."""
    try:
        return value in tangent_rules
    except TypeError:  # unhashable callables
        return False


def tangent_rule_only(value) -> bool:
    """A function with a tangent rule and no adjoint rule: what reverse-mode errors tell."""
    try:
        return value in tangent_rules and value not in adjoint_rules
    except TypeError:
        return False


# Packages whose callable objects are not differentiated from the source of their __call__:
# NumPy's (np.vectorize, np.poly1d) run code that is no differentiable NumPy; autotrace's own
# have rules, or say why they have none.
_LIBRARY_PACKAGES = {"numpy", "cupy", "autotrace"}


def runs_own_call(value) -> bool:
    """Whether calling `value` runs a `__call__` method written in Python by the author of its
    class (not NumPy's or autotrace's): autotrace differentiates such a call as that method."""
    if isinstance(value, type) or hasattr(value, "__autotrace_no_rule_hint__"):
        return False
    method = own_call_function(type(value))
    package = (getattr(type(value), "__module__", None) or "").split(".")[0]
    return inspect.isfunction(method) and (package not in _LIBRARY_PACKAGES or getattr(
        type(value), "__autotrace_differentiable__", False))


def own_call_function(cls):
    """The function `cls.__call__` runs: itself, or the Python function of a `__call__` that
    is an autotrace.function (a traced call is differentiated as its Python function)."""
    method = getattr(cls, "__call__", None)
    return getattr(method, "__autotrace_python_function__", method)


def no_rule_hint(function) -> str | None:
    """What a no-rule error says to do about `function` instead of registering a rule: the
    hint a function carries (`__autotrace_no_rule_hint__`), or why autotrace refuses NumPy's
    (transforms/rules/refused.py); None for neither."""
    hint = getattr(function, "__autotrace_no_rule_hint__", None)
    return hint if hint is not None else refused_reason(function)


def rule_template(function, label: str, mode: str) -> str:
    """The registration a no-rule error suggests for `function` (mode "adjoint" or
    "tangent"): a template with the function's own parameters where inspect finds them."""
    parameters = _template_parameters(function)
    inputs = [parameter for parameter, _ in parameters if parameter != "*"]
    result = next(n for n in ("y", "out", "result", "y_") if n not in inputs)
    signature = ", ".join([result] + [text for _, text in parameters])
    short = re.sub(r"\W", "_", label.rsplit(".", 1)[-1]).strip("_") or "function"
    required = [p for p, text in parameters if "=" not in text and "*" not in text]
    differentiable = required or inputs[:1]
    lines = [f"    @autotrace.register_{mode}({label})", f"    def {short}_{mode}({signature}):"]
    if mode == "adjoint":
        for position, parameter in enumerate(differentiable):
            lines.append(f"        d[{parameter}] = d[{result}] * ..." + (
                f"   # the gradient of {parameter}, given d[{result}], the gradient of "
                f"{result}" if position == 0 else ""))
    else:
        terms = " + ".join(f"d[{parameter}] * ..." for parameter in differentiable)
        given = ", ".join(f"d[{parameter}]" for parameter in differentiable)
        lines.append(f"        d[{result}] = {terms}   # the tangent of {result}, given {given}, "
                     f"the tangent{'s' if len(differentiable) > 1 else ''} of "
                     f"{', '.join(differentiable)}")
    return "\n".join(lines) + "\n"


def _template_parameters(function) -> list:
    """(name, how the template writes it) for each parameter of `function`; one, x, where
    inspect finds none. A ufunc's inputs are x (or x1, x2, ...), as NumPy names them."""
    if isinstance(function, np.ufunc):
        names = ["x"] if function.nin == 1 else [f"x{i + 1}" for i in range(function.nin)]
        return [(n, n) for n in names]
    if isinstance(function, np.vectorize):
        function = function.pyfunc  # vectorize(f) takes f's parameters
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return [("x", "x")]
    kinds = inspect.Parameter
    parameters, starred = [], False
    for parameter in signature.parameters.values():
        if parameter.kind is kinds.VAR_KEYWORD:
            continue  # a template may not take **kwargs
        if parameter.kind is kinds.VAR_POSITIONAL:
            parameters.append((parameter.name, "*" + parameter.name))
            starred = True
            continue
        if parameter.kind is kinds.KEYWORD_ONLY and not starred:
            parameters.append(("*", "*"))
            starred = True
        text = parameter.name
        if parameter.default is not kinds.empty:
            text += "=" + (repr(parameter.default) if _is_literal(parameter.default)
                           else "None")
        parameters.append((parameter.name, text))
    return parameters or [("x", "x")]


def _is_literal(value) -> bool:
    if isinstance(value, tuple):
        return all(_is_literal(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


def describe(value, fallback: str | None = None) -> str:
    """A name people can import `value` by (`numpy.linalg.qr`), for error messages; else
    `fallback` (the call's own text), else its bare name."""
    return _importable_path(value) or fallback or getattr(value, "__name__", repr(value))


def _importable_path(value) -> str | None:
    """`module.qualified.name` if importing that really gives `value`, else None."""
    short = getattr(value, "__name__", None)
    if not isinstance(short, str):
        return None
    qualified = getattr(value, "__qualname__", short)
    module = getattr(value, "__module__", None)
    if module == "builtins" or (module is None and not isinstance(value, np.ufunc)):
        return short if getattr(builtins, short, None) is value else None
    for candidate in ("numpy", "numpy.linalg", "numpy.fft", module):
        found = sys.modules.get(candidate) if candidate else None
        for part in qualified.split("."):
            found = getattr(found, part, None)
        if found is value and found is not None:
            return f"{candidate}.{qualified}"
    return None


def is_builtin(value) -> bool:
    return getattr(builtins, getattr(value, "__name__", ""), None) is value
