"""Calls of callables autotrace derives by tracing them: autotrace.vmap's, whose batched trace
is differentiated as a function without source is (autotrace/from_trace.py builds the
derivatives), and those derivatives built from traces themselves. Generated code reaches them
through vjp_call and jvp_call (transforms/dynamic_calls.py).
"""
from __future__ import annotations

import collections
import weakref

from .analysis.live_names import transform_lock
from .errors import TransformError
from .front.function_caches import made_from
from .wrt import WithRespectTo

# Derivatives built while generated code runs (for calls resolved only then), per function:
# kept on a Python function (transforms/front/function_caches.py), for other callables held weakly,
# but for those that cannot be (NumPy's ufuncs, which live as long as NumPy).
_runtime_derivatives: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_lasting_derivatives: dict = {}


def cache_of(func) -> dict:
    """The derivatives (and callers) built for `func` so far, by key."""
    try:
        return made_from(func, "__autotrace_runtime_derivatives__", _runtime_derivatives)
    except TypeError:  # cannot create a weak reference to it
        return _lasting_derivatives.setdefault(func, {})


# Callables autotrace derives by tracing them, whose type sets `__autotrace_traced_call__`
# (autotrace.vmap's: its batched trace is differentiated, as a function without source is):
# mode ("reverse", "forward") -> build(func, wrt, built), which autotrace/from_trace.py sets;
# `built` holds the derivatives generated from its traces, which those standing for the same
# function share.
TRACED_DERIVATIVES: dict = {}


def traced_call(func) -> bool:
    """Whether `func` is derived by tracing it (see TRACED_DERIVATIVES)."""
    return getattr(type(func), "__autotrace_traced_call__", False)


def traced_derivative(func, wrt: WithRespectTo, mode: str):
    """The derivative of `func` built from its traces, once per `wrt` and mode. Where `func`
    names what it stands for (`__autotrace_traced_key__`: a vmap's function and axes), the
    derivatives generated from traces are shared by all that stand for it
    (`autotrace.vmap(f)(x)` makes a new one each call, traced again, which may read new
    globals: a trace that prints the same is derived once)."""
    owner, same = getattr(func, "__autotrace_traced_key__", (func, None))
    key = (mode, "traced", wrt)
    with transform_lock:
        built = cache_of(owner).setdefault((*key, same, "built"), collections.OrderedDict())
        cache = cache_of(func)
        if key not in cache:
            cache[key] = TRACED_DERIVATIVES[mode](func, wrt, built)
        return cache[key]


def refuse_holding_traced(func, asked: bool) -> None:
    """Refuse a call of `func`, derived by tracing it, where the call's gradient is asked of
    `func` itself (`asked`: the vmapped function holds values that carry gradient: an object's
    attributes, a bound method's object): a trace takes what it holds for constants."""
    target = getattr(func, "__func__", func)  # (@autotrace.vmap on a method, bound)
    if asked and traced_call(target):
        raise TransformError(
            f"autotrace differentiates a call of {target!r} by tracing the batch, and a trace "
            f"takes what the mapped function holds (an object's attributes, a bound method's "
            f"object) for constants, where it holds values that carry gradient here: pass "
            f"them as arguments of the vmapped function instead")
