"""functools.partial objects, as plain functions the transforms can read.

`partial(f, 2.0, y=3.0)` for `def f(a, x, y=1.0)` becomes

    def f(x, *, y=_partial_default_y):      # _partial_default_y is 3.0
        return _partial_callee(_partial_bound0, x, y=y)

with the parameters that `inspect.signature` gives the partial, so `grad(partial(f, y=2.0))`
differentiates with respect to the parameters still open, by index or name. Python flattens a
partial of a partial, so one call reaches f.
"""
from __future__ import annotations

import functools
import inspect
import weakref

import gast

from ..codegen.codegen import load_function
from ..errors import Location, TransformError
from .parsing import parse_function, resolve
from ..codegen.nodes import walk

_callers: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def partial_caller(partial: functools.partial):
    """The plain function that calls `partial.func` as `partial` does (made once per object)."""
    made = _callers.get(partial)
    if made is not None:
        return made
    label = getattr(partial.func, "__name__", "partial")
    label = label if label.isidentifier() else "partial"
    signature = inspect.signature(partial)
    kinds = inspect.Parameter
    namespace = {"_partial_callee": partial.func}
    passed = []
    for index, value in enumerate(partial.args):
        namespace[f"_partial_bound{index}"] = value
        passed.append(f"_partial_bound{index}")
    parameters, starred = [], False
    for parameter in signature.parameters.values():
        if parameter.kind in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD):
            raise TransformError(
                f"cannot differentiate functools.partial of {label!r}: it takes "
                f"{'*' if parameter.kind is kinds.VAR_POSITIONAL else '**'}{parameter.name}; "
                "autotrace differentiates partials of functions with named parameters only. "
                "Wrap the call in a function with named parameters")
        text = parameter.name
        if parameter.default is not kinds.empty:
            namespace[f"_partial_default_{parameter.name}"] = parameter.default
            text += f"=_partial_default_{parameter.name}"
        if parameter.kind is kinds.KEYWORD_ONLY:
            if not starred:
                parameters.append("*")
                starred = True
            passed.append(f"{parameter.name}={parameter.name}")
        else:
            passed.append(parameter.name)
        if parameter.kind is kinds.POSITIONAL_ONLY:
            text += ", /" if _last_positional_only(signature, parameter) else ""
        parameters.append(text)
    source = (f"def {label}({', '.join(parameters)}):\n"
              f"    return _partial_callee({', '.join(passed)})\n")
    function = load_function(source, label, namespace, hint=f"{label}__partial")
    origin = _origin(partial.func)
    if origin is not None:
        function.__autotrace_origin__ = origin
    _callers[partial] = function
    return function


def _last_positional_only(signature, parameter) -> bool:
    only = [p for p in signature.parameters.values() if p.kind is p.POSITIONAL_ONLY]
    return only[-1] is parameter


def _origin(func):
    """Where `func` is written, so that errors in the call point at the user's file."""
    try:
        return caller_location(parse_function(func))
    except TransformError:
        return None


def caller_location(parsed) -> Location:
    """The location for a generated one-line caller of the parsed function: its `return`
    line (line 2) maps to the line of the function's `def`."""
    location = parsed.location
    return Location(location.filename, location.line_of(parsed.node) - 1, location.name)


def check_partials(body, location, namespace: dict, activity, is_constant) -> None:
    """Refuse `functools.partial(f, x)` with an `x` that carries gradient to the result: the
    arguments a partial binds are constants to autotrace, and their gradient would be lost.
    activity(is_constant): the active names, given which calls are constants."""
    partials = [node for statement in body for node in walk(statement)
                if isinstance(node, gast.Call)
                and resolve(node.func, namespace) is functools.partial]
    if not partials:
        return
    constructions = {id(node) for node in partials}
    # Active names as if a partial passed gradient from what it binds to the calls of it.
    active = activity(lambda call: id(call) not in constructions and is_constant(call))
    for node in partials:
        bound = {n.id for argument in node.args[1:] + [k.value for k in node.keywords]
                 for n in walk(argument) if isinstance(n, gast.Name)}
        if bound & active:
            raise location.error(
                node, "functools.partial binds an argument that carries gradient, and "
                "autotrace passes no gradient through the arguments a partial binds; use a "
                "lambda instead (lambda t: f(t, y=x) for partial(f, y=x))",
                "functools.partial")
