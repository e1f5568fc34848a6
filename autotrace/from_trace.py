"""Derivatives of functions whose source cannot be read, built from a trace of them.

A function typed at the interactive prompt (`python -i`, the plain REPL) or made by exec() of a
string has no source for the transforms to read. `autotrace.grad` and the other operators then
trace it on each call, as `autotrace.function` would (runtime/tracing/tracer.py), write the trace as a
readable Python function, one NumPy call a line (runtime/execution/graph_python.py), and differentiate
that source with the same transforms:

    def f(x):                            # f's trace for x: f64[3], as autotrace.source shows it
        a = np.sin(x)  # f64[3]
        b = np.sum(a, axis=(0,))  # f64[]
        return b

Decisions:
- The function is traced again on every call, and the derivative generated once per distinct
  trace (the printed source and its constants): so globals, attributes and random draws are
  read when it is called, as the function itself would read them, never a stale copy.
- Python control flow on Python values is unrolled by the trace, for the values of the call.
  `autotrace.cond` and `autotrace.while_loop` become `if` and `while` statements again; an `if`
  or `while` on an array value cannot be traced without the source, and is an error that
  says what to do. A function whose source is readable but that calls one whose source is not
  is traced as a whole, its own control flow converted first (as autotrace.function does).
- Python floats among the differentiated arguments are traced as float64 scalars; other Python
  values are constants of the trace.
"""
from __future__ import annotations

import dataclasses
import inspect
import os
import re
import sys
import types
import warnings
from collections import OrderedDict

import numpy as np

from autotrace.conversion import for_tracing
from autotrace.transforms.analysis.calls import own_rules_met
from autotrace.traced_function import _positional_names
from autotrace.trace_errors import explain_trace_error, raised_by_user_code
from autotrace.runtime.ops import source_globals
from autotrace.runtime.execution.graph_python import UnprintableGraphError, graph_statements
from autotrace.runtime.user_frames import code_site
from autotrace.runtime.tracing.signature import ParameterBinding
from autotrace.runtime.containers import rebuild
from autotrace.runtime.derivatives.structure import _is_traced
from autotrace.runtime.tracing.tracer import (TracerConversionError, _Slot, leaves_with_paths, map_arrays,
                                      sorted_keys, trace)
from autotrace.transforms.codegen.codegen import load_function
from autotrace.transforms.codegen.naming import python_name, seed_keyword_taken
from autotrace.transforms.derivative_record import Derivative, derivative_record
from autotrace.transforms.called_functions import caller_of, classify_value_safely
from autotrace.transforms.traced_calls import TRACED_DERIVATIVES, traced_call
from autotrace.transforms.errors import SourceUnavailableError, TransformError
from autotrace.transforms.front.front_end import Session
from autotrace.transforms.pipeline import forward_function, reverse_function
from autotrace.transforms.wrt import WithRespectTo

# How many derivatives (distinct traces) one function built from traces keeps.
MAX_TRACES = 32

_SEEDS = ("dy", "tangent")


class TracedSourceWarning(UserWarning):
    """A derivative is built from a trace, because the function's source cannot be read.

    Examples:
        >>> import warnings
        >>> square = eval("lambda x: x * x")     # made by eval: no source to read
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     autotrace.grad(square)(3.0)
        6.0
        >>> caught[0].category.__name__
        'TracedSourceWarning'
    """


def traceable(function) -> bool:
    """Whether `function` can stand in for its source by being traced: a Python function (a
    lambda, one made by exec), a method of one, or a derivative built from traces; or be
    called from a one-line function (a NumPy function with a derivative rule: np.sin)."""
    function = getattr(function, "__autotrace_python_function__", function)
    if inspect.ismethod(function):
        function = function.__func__
    return isinstance(function, TracedDerivative) or inspect.isfunction(function) or \
        classify_value_safely(function) == "rule"


def derivative_from_trace(build, function, wrt: WithRespectTo, optimized: bool,
                          error: SourceUnavailableError, **options):
    """The derivative `build` makes (reverse_function, forward_function) of `function`,
    differentiating a trace of it per call; `error` (why its source could not be read) is
    raised where it cannot be traced."""
    function = getattr(function, "__autotrace_python_function__", function)
    if not traceable(function):
        raise error
    name = getattr(function, "__name__", "function")
    if not isinstance(function, TracedDerivative):
        unreadable = re.search(r"'([^']*)'", error.message)  # the function named in it
        unreadable = unreadable.group(1) if unreadable else name
        whose = ("its derivative" if unreadable == name
                 else f"the derivative of {name!r}, which calls it,")
        warnings.warn(
            f"autotrace: the source of {unreadable!r} cannot be read (it was typed at an "
            f"interactive prompt or made by exec): {whose} is built from a trace, made on "
            f"each call; autotrace.source shows the traced function and its derivative.",
            TracedSourceWarning, stacklevel=_callers_level())
    if inspect.ismethod(function):
        # A bound method: its function, with `self` bound and not differentiated.
        inner = TracedDerivative(build, function.__func__, wrt.past_self(), optimized, options)
        return types.MethodType(inner, function.__self__)
    return TracedDerivative(build, function, wrt, optimized, options)


class TracedDerivative:
    """A derivative of a function without readable source: called like the derivative the
    transforms generate (same arguments, same seed keyword), it traces the function for the
    call and runs the derivative generated from that trace (kept per distinct trace)."""

    # A call of it that generated code resolves when it runs is derived as a function
    # without source is: from its traces (transforms/traced_calls.py).
    __autotrace_traced_call__ = True

    def __init__(self, build, function, wrt: WithRespectTo, optimized: bool, options: dict,
                 built: dict | None = None):
        self.build = build
        self.function = function
        self.wrt = wrt
        self.optimized = optimized
        self.options = options
        self.__name__ = getattr(function, "__name__", "function")
        self.__qualname__ = getattr(function, "__qualname__", self.__name__)
        self.__doc__ = f"A derivative of {self.__name__}, built from traces of it."
        forward = getattr(build, "__name__", "") == "forward_function"
        seed = _free_keyword("tangent" if forward else "dy", _unbatched(function))
        # Its record, less its source (what it made last: see __autotrace_derivative__).
        self._record = Derivative(mode="forward" if forward else "reverse", wrt=wrt,
                                  seed=seed, primal=function)
        # What the transforms differentiate when generated code calls it: itself, whose
        # source cannot be read, so that the calling function is traced as a whole.
        self.__autotrace_python_function__ = self
        # NumPy functions take their arguments as given (binding would pass every default).
        self._binding = ParameterBinding(_root(function) if inspect.isfunction(_root(
            function)) else None)
        self.__signature__ = _signature_with(_unbatched(function), seed)
        # The seed keywords of the derivatives this one differentiates (`dy` for a Hessian's
        # gradient): passed through, not bound to the function's parameters.
        self._inner_seeds = []
        while isinstance(function, TracedDerivative):
            self._inner_seeds.append(function.seed)
            function = function.function
        # printed source -> [(namespace, generated)]; `built`: shared with others
        self._built: OrderedDict = OrderedDict() if built is None else built
        self._latest = None

    @property
    def seed(self) -> str:
        """The keyword its seed (`dy`, `tangent`) is given by."""
        return self._record.seed

    @property
    def __autotrace_derivative__(self) -> Derivative:
        """Its record (autotrace/transforms/derivative_record.py), whose source is the function
        as traced last, and its derivative (what autotrace.source shows)."""
        return dataclasses.replace(self._record, source=self._source())

    def __call__(self, *args, **kwargs):
        seed = kwargs.pop(self.seed, None)
        inner_seeds = {key: kwargs.pop(key) for key in self._inner_seeds if key in kwargs}
        args, kwargs = self._binding.bind(args, kwargs)
        kwargs.update(inner_seeds)
        generated = self.generated_for(args, kwargs)
        if seed is not None:
            kwargs[derivative_record(generated).seed] = seed
        if _traced((args, kwargs)):  # called while a caller is traced: convert its if/while
            generated = for_tracing(generated)
        return generated(*args, **kwargs)

    def generated_for(self, args: tuple, kwargs: dict):
        """The derivative generated for this call's trace of the function (built if new)."""
        if isinstance(self.function, TracedDerivative):
            # A derivative built from traces: differentiate its generated source for the call.
            inner_kwargs = {key: value for key, value in kwargs.items()
                            if key != self.function.seed}
            primal = self.function.generated_for(args, inner_kwargs)
            key, namespace = ("derivative", id(primal)), {"": primal}
        elif not inspect.isfunction(self.function) and not traced_call(self.function):
            # np.sin: `def call_sin(x0): ...`
            primal = caller_of(self.function, args, kwargs)
            key, namespace = ("caller", id(primal)), {"": primal}
        else:
            primal = None
            source, namespace = traced_source(self.function, args, kwargs, self.wrt)
            key = source
        for known_namespace, generated in self._built.get(key, ()):
            if _same_values(known_namespace, namespace):
                self._built.move_to_end(key)
                self._latest = generated
                return generated
        values = dict(namespace)  # before the printed function is defined in it
        if primal is None:
            primal = load_function(source, python_name(self.__name__), namespace,
                                   hint=python_name(self.__name__))
            # A function autotrace wrote, no derivative: its source is all its record holds.
            primal.__autotrace_derivative__ = Derivative(source=source)
        generated = self.build(primal, self.wrt, session=Session(self.optimized, outermost=True),
                               **self.options)
        generated.__autotrace_derivative__ = dataclasses.replace(
            derivative_record(generated), traced_primal=primal)
        built = self._built.setdefault(key, [])
        built.append((values, generated))
        del built[:-MAX_TRACES]  # a function that draws random numbers traces anew each call
        self._built.move_to_end(key)
        while len(self._built) > MAX_TRACES:
            self._built.popitem(last=False)
        self._latest = generated
        return generated

    def _source(self) -> str | None:
        """What autotrace.source shows: the function as traced last, and its derivative (None
        where what it derived last is a call of a NumPy function, which it did not print)."""
        if self._latest is None:
            return (f"# The source of {self.__name__} cannot be read: its derivative is built "
                    f"from a trace of it on each call.\n# Call it, then autotrace.source shows "
                    f"the traced function and its derivative.\n")
        latest = derivative_record(self._latest)
        traced = derivative_record(latest.traced_primal)
        if traced is None:
            return None
        return (f"# The source of {self.__name__} cannot be read: autotrace traced it (as it "
                f"ran for the last call)\n# and differentiated the trace.\n"
                f"{traced.source}\n{latest.source}")

    def __repr__(self) -> str:
        return f"<autotrace derivative of {self.__name__}, built from traces>"


# A call generated code resolves when it runs of a callable derived by tracing it (an
# autotrace.vmap): its derivative, built from its traces (transforms/traced_calls.py).
TRACED_DERIVATIVES.update(
    reverse=lambda func, wrt, built: TracedDerivative(reverse_function, func, wrt, True, {},
                                                      built),
    forward=lambda func, wrt, built: TracedDerivative(forward_function, func, wrt, True, {},
                                                      built))


def _callers_level() -> int:
    """The stacklevel of a warning raised here that points at the user's call of autotrace."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_AUTOTRACE_DIR):
        frame, level = frame.f_back, level + 1
    return level


_AUTOTRACE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _same_values(known: dict, new: dict) -> bool:
    """Whether two namespaces of printed traces hold the same constants."""
    if known.keys() != new.keys():
        return False
    for name, value in new.items():
        old = known[name]
        if old is value:
            continue
        if isinstance(value, (np.ndarray, np.generic)) and isinstance(old, (np.ndarray,
                                                                           np.generic)):
            if old.dtype != value.dtype or np.shape(old) != np.shape(value) or \
                    not np.array_equal(old, value, equal_nan=value.dtype.kind in "fc"):
                return False
        elif not (type(old) is type(value) and _is_plain(value) and old == value):
            return False
    return True


def _is_plain(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, complex, str))


def _signature_with(function, seed: str):
    """The signature of a derivative of `function`: its parameters and the seed keyword."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a NumPy function without one
        return None
    parameters = list(signature.parameters.values())
    kinds = inspect.Parameter
    at = len(parameters) - (1 if parameters and parameters[-1].kind is kinds.VAR_KEYWORD else 0)
    parameters.insert(at, kinds(seed, kinds.KEYWORD_ONLY, default=None))
    return signature.replace(parameters=parameters)


def _traced(tree) -> bool:
    found = []
    map_arrays(tree, lambda leaf: found.append(_is_traced(leaf)))
    return any(found)


def _root(function):
    """The Python function a derivative built from traces is, in the end, a derivative of."""
    while isinstance(function, TracedDerivative):
        function = function.function
    return function


def _is_vmap(function) -> bool:
    """Whether `function` is an autotrace.vmap (derived by tracing it, and no derivative)."""
    return traced_call(function) and not isinstance(function, TracedDerivative)


def _unbatched(function):
    """The function an autotrace.vmap maps (whose parameters it takes); any other as it is."""
    return function.function if _is_vmap(function) else function


def _seed_taken(function, keyword: str) -> bool:
    """Whether a derivative's seed keyword must not be `keyword` (see naming.seed_keyword)."""
    if isinstance(function, TracedDerivative):
        return keyword == function.seed or _seed_taken(function.function, keyword)
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return code is not None and seed_keyword_taken(code, keyword)


def _free_keyword(base: str, function) -> str:
    while _seed_taken(function, base):
        base += "_"
    return base


# --- printing a trace ---------------------------------------------------------------------------

def traced_source(function, args: tuple, kwargs: dict, wrt: WithRespectTo) -> tuple:
    """(source, namespace): `function` traced for this call (its arguments bound to its
    parameters, defaults filled in), written as a Python function with its parameters, one
    NumPy call a line."""
    parameters = _parameters(_unbatched(function))
    if _is_vmap(function):  # (an autotrace.vmap binds no defaults)
        parameters = _filled(parameters, len(args), kwargs)
    differentiated = wrt.names_among([p.name for p in parameters])
    names = _argument_names(parameters, len(args), kwargs)
    traced_args = tuple(_floats_as_scalars(value) if name in differentiated else value
                        for (_, name), value in zip(names[0], args))
    traced_kwargs = {key: _floats_as_scalars(value) if names[1][key][1] in differentiated
                     else value for key, value in kwargs.items()}
    met: list = []  # functions whose gradient the user wrote, which a trace does not keep
    token = own_rules_met.set(met)
    try:
        graph, structure = trace(for_tracing(function), traced_args, traced_kwargs,
                                 protect_arguments=True,
                                 parameters=_positional_names(_unbatched(function)))
    except Exception as trace_error:  # noqa: BLE001 - re-raised, saying why it was traced
        explain_trace_error(trace_error, traced_args, traced_kwargs)
        if raised_by_user_code(trace_error):
            raise  # the user's own error, as their code raised it
        advice = ("A trace cannot follow Python control flow (if, while, bool(), float()) on "
                  "array values: use np.where, autotrace.cond or autotrace.while_loop there, "
                  "or define the function in a .py file." if isinstance(
                      trace_error, TracerConversionError) else
                  "Define the function in a .py file to differentiate its source.")
        raise TransformError(
            f"{_cannot_read(function)}, and tracing it failed: "
            f"{type(trace_error).__name__}: {trace_error}\n  {advice}") from None
    finally:
        own_rules_met.reset(token)
    if met:
        raise TransformError(
            f"{_cannot_read(function)}, but it calls {met[0]}, whose gradient you wrote "
            f"(custom_vjp, custom_gradient, custom_jvp, stop_gradient or a rule you "
            f"registered): a trace keeps its values, not that gradient. "
            + ("Differentiate inside the vmap instead (autotrace.vmap(autotrace.grad(f)))."
               if _is_vmap(function) else
               "Define the function in a .py file to differentiate its source."))
    if structure.captured or structure.written:
        raise TransformError(
            f"{_cannot_read(function)}, but it reads or "
            f"writes autotrace.Variables, which a derivative built from a trace does not "
            f"follow yet. Pass their values as arguments"
            + ("." if _is_vmap(function) else ", or define it in a .py file."))
    inputs = [expression for value, base in _bases(traced_args, traced_kwargs, names)
              for expression, _ in leaves_with_paths(value, base)]
    namespace = {"np": np, **source_globals}
    parameter_names = {p.name for p in parameters}
    try:
        lines, outputs = graph_statements(graph, inputs, namespace,
                                          reserved=parameter_names | set(_SEEDS))
    except UnprintableGraphError as unprintable:
        saved = "stack" in str(unprintable)  # (a traced `if` or loop's derivative's stack)
        filename, line = code_site() or (None, None)
        if filename is not None and filename.startswith("<autotrace"):
            filename, line = None, None  # (generated code: the user's line is unknown)
        raise TransformError(
            f"{_cannot_read(function)}, but its trace holds {unprintable}"
            + (" (the values a derivative of a traced `if` or loop saves), which a derivative "
               "built from a trace cannot take again" if saved else "")
            + (". Differentiate inside the vmap instead (autotrace.vmap(autotrace.hessian(f)), "
               "or jacfwd(jacfwd(f)), which nest through traced control flow)"
               if saved and _is_vmap(function) else ""),
            filename, line) from None
    result = _result_source(structure.template, outputs, namespace)
    signature = ", ".join(_signature_text(parameters))
    name = python_name(getattr(function, "__name__", "f"))
    body = [f"# {name} traced for {_call_text(graph, inputs)}"] + lines + [f"return {result}"]
    source = f"def {name}({signature}):\n" + "".join(f"    {line}\n" for line in body)
    return source, namespace


def _cannot_read(function) -> str:
    if _is_vmap(function):
        return (f"autotrace differentiates a call of {function!r} (inside a function it "
                f"differentiates) by tracing the batch")
    return (f"the source of {getattr(function, '__name__', function)!r} cannot be read (it was "
            f"typed at an interactive prompt or made by exec, or calls a function that was), "
            f"so autotrace differentiates a trace of it")


def _parameters(function) -> list:
    try:
        return list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a NumPy function without a signature: one argument
        return [inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY)]


def _filled(parameters: list, count: int, kwargs: dict) -> list:
    """The parameters a call with `count` positional arguments and `kwargs` fills, each
    named (`args_0` for the first filling `*args`): what the printed trace takes."""
    kinds = inspect.Parameter
    positional = [p for p in parameters if p.kind in (kinds.POSITIONAL_ONLY,
                                                      kinds.POSITIONAL_OR_KEYWORD)]
    varargs = next((p.name for p in parameters if p.kind is kinds.VAR_POSITIONAL), "args")
    named = {p.name: p for p in parameters if p.kind in (kinds.POSITIONAL_OR_KEYWORD,
                                                         kinds.KEYWORD_ONLY)}
    filled = positional[:count] + [kinds(f"{varargs}_{index}", kinds.POSITIONAL_ONLY)
                                   for index in range(count - len(positional))]
    return filled + [named.get(key) or kinds(key, kinds.KEYWORD_ONLY) for key in kwargs
                     if key not in {p.name for p in filled}]


def _argument_names(parameters: list, count: int, kwargs: dict) -> tuple:
    """(the expression each positional argument is in the printed function, and the
    parameter it fills; the same for each keyword argument, by key)."""
    kinds = inspect.Parameter
    positional = [p.name for p in parameters if p.kind in (kinds.POSITIONAL_ONLY,
                                                           kinds.POSITIONAL_OR_KEYWORD)]
    varargs = next((p.name for p in parameters if p.kind is kinds.VAR_POSITIONAL), "args")
    varkw = next((p.name for p in parameters if p.kind is kinds.VAR_KEYWORD), "kwargs")
    named = {p.name for p in parameters if p.kind not in (kinds.VAR_POSITIONAL,
                                                          kinds.VAR_KEYWORD)}
    by_position = [(name, name) for name in positional[:count]] + [
        (f"{varargs}[{index}]", varargs) for index in range(count - len(positional))]
    by_keyword = {key: (key, key) if key in named else (f"{varkw}[{key!r}]", varkw)
                  for key in kwargs}
    return by_position, by_keyword


def _bases(args: tuple, kwargs: dict, names: tuple) -> list:
    """(argument, the expression for it in the printed function), in the trace's order of
    inputs: positional arguments, then keywords by sorted key."""
    by_position, by_keyword = names
    return [(value, expression) for value, (expression, _) in zip(args, by_position)] + [
        (kwargs[key], by_keyword[key][0]) for key in sorted_keys(kwargs)]


def _floats_as_scalars(value):
    """`value` with its Python floats as float64 scalars, which the trace follows."""
    if isinstance(value, float):
        return np.float64(value)
    if isinstance(value, (tuple, list)):
        return rebuild(value, [_floats_as_scalars(item) for item in value])
    if isinstance(value, dict):
        return type(value)((key, _floats_as_scalars(item)) for key, item in value.items())
    return value


def _signature_text(parameters: list) -> list:
    kinds = inspect.Parameter
    texts, keyword_only_marked = [], False
    for index, parameter in enumerate(parameters):
        if parameter.kind is kinds.VAR_POSITIONAL:
            texts.append(f"*{parameter.name}")
            keyword_only_marked = True
        elif parameter.kind is kinds.VAR_KEYWORD:
            texts.append(f"**{parameter.name}")
        else:
            if parameter.kind is kinds.KEYWORD_ONLY and not keyword_only_marked:
                texts.append("*")
                keyword_only_marked = True
            texts.append(parameter.name)
        following = parameters[index + 1] if index + 1 < len(parameters) else None
        if parameter.kind is kinds.POSITIONAL_ONLY and (
                following is None or following.kind is not kinds.POSITIONAL_ONLY):
            texts.append("/")
    return texts


def _call_text(graph, inputs: list) -> str:
    shown = [f"{expression}: {var.aval}" for expression, var in zip(inputs, graph.inputs)]
    return ", ".join(shown) if shown else "no array arguments"


def _result_source(template, outputs: list, namespace: dict) -> str:
    """Python source that builds the function's result from the graph's output expressions."""
    if isinstance(template, _Slot):
        return outputs[template.index]
    if isinstance(template, (tuple, list)):
        items = [_result_source(item, outputs, namespace) for item in template]
        if isinstance(template, tuple) and hasattr(type(template), "_fields"):
            return f"{_constant(type(template), namespace)}({', '.join(items)})"
        if type(template) is list:
            return f"[{', '.join(items)}]"
        text = f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        return text if type(template) is tuple else \
            f"{_constant(type(template), namespace)}({text})"
    if isinstance(template, dict):
        items = ", ".join(f"{_constant(key, namespace)}: "
                          f"{_result_source(value, outputs, namespace)}"
                          for key, value in template.items())
        return "{" + items + "}" if type(template) is dict else \
            f"{_constant(type(template), namespace)}({{{items}}})"
    return _constant(template, namespace)


def _constant(value, namespace: dict) -> str:
    """A Python value the printed function returns or uses: its literal, or a global."""
    if _is_plain(value) and not (isinstance(value, float) and not np.isfinite(value)):
        return repr(value)
    name = f"value{sum(1 for key in namespace if key.startswith('value'))}"
    namespace[name] = value
    return name


__all__ = ["derivative_from_trace", "TracedDerivative", "TracedSourceWarning", "traceable"]
