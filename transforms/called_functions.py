"""Which function a call resolved at run time means, and its derivatives.

vjp_call and jvp_call (transforms/dynamic_calls.py) get the callee itself: a method of an
argument, a function held in a variable, an object with `__call__`, a functools.partial, a
function with a rule but no source. Here it is unbound into a Python function and its
arguments (the object of a method first), what `wrt` asks of that object is read, and the
function's reverse- or forward-mode derivative is built (once per function and `wrt`).
"""
from __future__ import annotations

import functools
import inspect
import re
import sys
import types

import numpy as np

from ..runtime.derivatives import structure as structure
from ..runtime.derivatives.objects import (gradient_beside_state, is_dataclass_instance,
                                           is_plain_object)
from ..runtime.derivatives.built_objects import (is_namedtuple_replace,
                                                 replace_namedtuple_call)
from ..runtime.primitives.registry import is_traced
from ..runtime.held_state import holds_state
from ..runtime.state import StateCell
from .analysis.argument_writes import IN_PLACE_METHODS, SPECIAL_WRITES
from .analysis.calls import (Checkpointed, CustomGradient, classify_value, describe,
                             own_call_function, runs_own_call)
from .analysis.live_names import is_current, transform_lock
from .front.custom_gradients import custom_caller
from .errors import TransformError
from .front.partials import partial_caller
from .front.python_versions import in_place_refusal, python_version
from .front.varargs import for_call
from .session import Session
from .traced_calls import cache_of
from .wrt import SELF, WithRespectTo
from .rules.core import lists_read_as_arrays
from .codegen.codegen import load_function
from .unpacked_reruns import calling_line as _calling_line, refuse_writer_run_again


def caller_of(func, args, kwargs):
    """For a function with a rule but no source (`np.sin`), a Python function that calls it
    with these arguments (`def call_sin(x0): return sin(x0)`), whose source derivatives of
    derivatives can read (of a list NumPy reads as an array: asarray(x0)); any other as it is."""
    if classify_value_safely(func) != "rule":
        return func
    cache, lists = cache_of(func), lists_read_as_arrays(func, args)
    key = ("caller", len(args), tuple(kwargs), lists)
    if key not in cache:
        label = re.sub(r"\W", "_", getattr(func, "__name__", "function")).strip("_") or "f"
        positional = [f"x{i}" for i in range(len(args))]
        parameters = positional + (["*"] + list(kwargs) if kwargs else [])
        passed = [f"asarray({x})" if i in lists else x for i, x in enumerate(positional)] + [
            f"{k}={k}" for k in kwargs]
        source = (f"def call_{label}({', '.join(parameters)}):\n"
                  f"    return {label}({', '.join(passed)})\n")
        cache[key] = load_function(source, f"call_{label}", {label: func, "asarray": np.asarray},
                                   hint=f"call_{label}")
    return cache[key]


def rule_caller(func, rules: dict):
    """For a function with a rule in `rules` (adjoint_rules or tangent_rules), a Python
    function with the parameters of that rule that calls it: `def sin(x): return
    numpy.sin(x)`. `grad(np.sin)` differentiates it, so the rule gives the derivative (np.sin
    has no Python source, and NumPy's Python functions are no NumPy code to differentiate)."""
    cache = cache_of(func)
    key = ("rule caller", id(rules))
    if key not in cache:
        path = describe(func)
        if not re.fullmatch(r"[A-Za-z_][\w.]*", path):
            path = "function"
        module = path.split(".")[0]
        namespace = {module: func if module == path else sys.modules.get(module)}
        if namespace[module] is None:
            namespace, path, module = {"function": func}, "function", "function"
        signature = rules[func].signature
        if module in signature.parameters:  # a parameter would hide the module
            namespace, path, module = {"function": func}, "function", "function"
        label = path.rsplit(".", 1)[-1]
        if label == module or label in signature.parameters:
            label = "call_" + label
        kinds = inspect.Parameter
        passed = []
        for parameter in signature.parameters.values():
            if parameter.kind is kinds.VAR_POSITIONAL:
                passed.append("*" + parameter.name)
            elif parameter.kind is kinds.KEYWORD_ONLY:
                passed.append(f"{parameter.name}={parameter.name}")
            else:
                passed.append(parameter.name)
        source = (f"def {label}{signature}:\n"
                  f"    return {path}({', '.join(passed)})\n")
        cache[key] = load_function(source, label, namespace, hint=label)
    return cache[key]


def derivative_of(func, wrt: WithRespectTo, implicit: bool = False, split: bool = False):
    """The reverse-mode derivative of the Python function `func`, built once per `wrt` (and
    mode: implicit derivatives hand the gradients of Variables they reach to the sink; split
    ones run in halves, see vjp_start)."""
    key = ("implicit", wrt) if implicit else ("split", wrt) if split else wrt
    return _made_once(func, key, lambda: Session(
        optimized=True, implicit=implicit, called=True).build(
            "split" if split else "reverse", func, wrt))


def _made_once(func, key, build):
    """The derivative of `func` kept under `key` in its cache, made by `build()` where there is
    none yet, or where its namespaces changed (after a rebinding)."""
    cache = cache_of(func)
    made = cache.get(key)  # (made already, most often: read without the lock, which builds)
    if made is None or not is_current(made):
        with transform_lock:
            made = cache.get(key)
            if made is None or not is_current(made):
                made = cache[key] = build()
    return refuse_writer_run_again(made, func)


def unbind_method(func, args, wrt: WithRespectTo):
    if isinstance(func, Checkpointed):  # (vjp_call recomputes it: see there)
        func = func.function
    func = _python_version_of_traced(func)
    method = getattr(type(func), "__autotrace_call__", None)
    if method is not None:  # an object whose calls run one of its methods (a Module)
        build = getattr(func, "build_for", None)
        if build is not None and args:  # its weights made first, as its own call makes them
            build(args[0])
        # (a traced method where its class makes `__call__` an autotrace.function)
        func = _python_version_of_traced(func.__autotrace_call__)
    elif runs_own_call(func):  # an instance of a class with __call__: that method
        func = types.MethodType(own_call_function(type(func)), func)
    if isinstance(func, CustomGradient):  # derived as a call of it, through its grad_fn
        func = custom_caller(func)
    elif isinstance(func, functools.partial):  # its function, with the bound arguments
        func = partial_caller(func)
    func = python_version(func)  # functools.reduce: its Python version, which is derived
    if in_place_refusal(func) is not None:  # (operator.imul handed to functools.reduce)
        raise TransformError(in_place_refusal(func) + _calling_line(),
                             construct="in-place operator")
    if is_namedtuple_replace(func):  # derived as autotrace's twin of it, its object first
        return replace_namedtuple_call, (func.__self__,) + tuple(args), wrt.past_self()
    if inspect.ismethod(func):
        args = (func.__self__,) + tuple(args)
        wrt = wrt.past_self()
        func = func.__func__
    return func, tuple(args), wrt


def asks_for_self(func, wrt) -> tuple:
    """(whether `wrt` asks for the gradient of the called object, whether it has one, wrt
    without it, a WithRespectTo). `wrt` is the tuple of positions and keywords generated code
    passes (or that WithRespectTo). The object of `p.f(x)` where `f` is no method of `p` (a
    function held in an attribute) gets none from the call; a method of an array that carries
    gradient is an error."""
    wrt = WithRespectTo.of(wrt)
    if wrt.items[:1] != (SELF,):
        return False, False, wrt
    wrt = wrt.without_first()
    bound_self = bound_object(func)
    if is_traced(bound_self) and getattr(func, "__name__", None) in _ARRAY_WRITES:
        # a traced array's method that changes it (`a.__setitem__` handed to map) stands for
        # NumPy's, which has no rule (below): the traced value's own Python code writes
        # through views that a derivative of its source would not follow
        bound_self = None
    if bound_self is not None and inspect.ismethod(func) and (func.__module__ or "").startswith(
            "autotrace.") and classify_value_safely(func.__func__) == "rule":
        # a method of autotrace's own with rules (a PyTreeDef's unflatten): its object carries
        # no gradient of it
        return True, False, wrt
    if bound_self is None or holds_state(bound_self) and not gradient_beside_state(bound_self):
        # An object holding only Variables has no gradient of its own: they get theirs (under
        # implicit_grad, else an error says to use it).
        owner = getattr(func, "__self__", None)
        if isinstance(owner, StateCell) and getattr(func, "__name__", None) in _STATE_READS:
            raise TransformError(
                f"cannot differentiate a call of {owner.state_label()}'s {func.__name__} "
                f"method (value, read_value, numpy): use the Variable itself where its value "
                f"is meant (`w * x`, `np.sum(w)`, `w[0]`), which reads it as the array it "
                f"holds (with its gradient where it is trainable)" + _calling_line())
        if structure.carries_gradient(owner) and classify_value_safely(func) != "constant":
            raise TransformError(
                f"no derivative rule for the method "
                f"{'ndarray' if is_traced(owner) else type(owner).__name__}."
                f"{getattr(func, '__name__', '?')} of a value that carries gradient; write it "
                "without the method (an operator or subscript for a container's, a NumPy "
                "function for an array's), or register a rule with @autotrace.register_adjoint")
        return True, False, wrt
    return True, True, wrt


# The methods of an array that change it in place (`__setitem__`, `__iadd__`, `fill`).
_ARRAY_WRITES = SPECIAL_WRITES | IN_PLACE_METHODS


# The methods of a Variable that read its value: a differentiated function reads the Variable
# itself instead.
_STATE_READS = ("value", "read_value", "numpy")


def unbound_call(func, args, kwargs, wrt: WithRespectTo, with_self: bool) -> tuple:
    """(the function, its arguments, wrt, whether a method or a module's call) of a call of
    `func`, the object whose method it is made its first argument (with respect to which too,
    with_self), as a function that takes the arguments as the call passes them (*args)."""
    bound = bound_object(func) is not None
    func, args, wrt = unbind_method(func, args, wrt)
    if with_self:
        wrt = wrt.with_object()
    return for_call(func, len(args), kwargs), args, wrt, bound


def bound_object(func):
    """The object a call of `func` runs a method of, if any (a traced method's too)."""
    if getattr(type(func), "__autotrace_call__", None) is not None or runs_own_call(func):
        return func
    func = _python_version_of_traced(func)
    return func.__self__ if inspect.ismethod(func) else None


def _python_version_of_traced(func):
    """What a call of `func` runs, where it is an autotrace.function: a traced method read from
    its object as the bound Python method, a traced np.sin as np.sin; `func` otherwise."""
    inner = getattr(func, "__autotrace_python_function__", None)
    if inspect.ismethod(inner) or inner is not None and classify_value_safely(inner) == "rule":
        return inner
    return func


def has_tangent(tangents, index: int) -> bool:
    """Whether the tangents of a call's arguments (a sequence, or None) give argument `index`
    one: an object (`self`, or another argument) then counts with its attributes' tangents."""
    return tangents is not None and index < len(tangents) and tangents[index] is not None


def object_with_gradient(value) -> bool:
    """An object whose attributes carry gradient: one the function built (a method's self),
    holding no Variables or floating values beside them."""
    return (is_plain_object(value) or is_dataclass_instance(value)) and (
        not holds_state(value) or gradient_beside_state(value))


def forward_derivative_of(func, wrt: WithRespectTo):
    """The forward-mode derivative of the Python function `func`, built once per `wrt`."""
    return _made_once(func, ("forward", wrt), lambda: Session(
        optimized=True, called=True).build("forward", func, wrt))


def classify_value_safely(func) -> str:
    return classify_value(func).kind
