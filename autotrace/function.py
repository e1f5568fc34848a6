"""`autotrace.function`: a Python function traced once per input signature into a cached,
optimized graph, with tf.function's rules.

    @autotrace.function
    def double(a):
        print("Tracing with", a)      # runs while tracing only
        return a + a

    double(np.array([1, 2]))          # traces, prints, runs the graph
    double(np.array([3, 4]))          # same signature: runs the cached graph, prints nothing

The signature of a call is its arrays' (shape, dtype, device), Python scalars, strings and
None by value, containers recursively, other objects by identity (see runtime/signature.py).
Python side effects run only while tracing. Control flow on Python values is unrolled into
the graph; control flow on traced array values is an error that says so.
"""
from __future__ import annotations

import functools
import inspect
import re
import threading
import warnings
from typing import Callable

from runtime.cache import TraceCache
from runtime.executor import compile_graph
from runtime.passes import optimize
from runtime.signature import signature_and_arrays
from runtime.tracer import trace

# After this many traces within the last RETRACE_WINDOW calls, one warning says why.
RETRACE_LIMIT = 5

# How deep this thread is in tracing: a traced function called while another one traces is
# inlined into that trace rather than traced (and cached) on its own.
_TRACING = threading.local()


class _Entry:
    """One trace: the optimized graph, the code that runs it, and the output's structure."""

    def __init__(self, graph, run, source, structure):
        self.graph = graph
        self.run = run
        self.source = source
        self.structure = structure


class Function:
    """A function traced per input signature; calls with a known signature run its graph.

    Attributes:
        trace_count: how many times the Python function has been traced.
    """

    def __init__(self, python_function: Callable, max_traces: int = 64):
        if not callable(python_function):
            raise TypeError(f"autotrace.function expects a function, got "
                            f"{type(python_function).__name__}")
        self.python_function = python_function
        # grad(function(f)) differentiates f's source: the transforms look for this.
        self.__autotrace_python_function__ = python_function
        self._cache = TraceCache(maxsize=max_traces)
        self._warned = False
        self._parameters = tuple(_parameter_names(python_function))
        functools.update_wrapper(self, python_function)

    @property
    def trace_count(self) -> int:
        return self._cache.trace_count

    def __call__(self, *args, **kwargs):
        if getattr(_TRACING, "depth", 0):
            # Called while tracing (by itself or by another traced function): inline it.
            return self.python_function(*args, **kwargs)
        key, arrays = signature_and_arrays(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            reason = self._cache.explain(key, self._parameters)
            entry = self._cache.get_or_build(key, lambda: self._build(args, kwargs))
            self._warn_about_retracing(reason)
        return entry.structure.unflatten(entry.run(*arrays))

    def _build(self, args, kwargs) -> _Entry:
        _TRACING.depth = getattr(_TRACING, "depth", 0) + 1
        try:
            graph, structure = trace(self.python_function, args, kwargs)
        finally:
            _TRACING.depth -= 1
        graph = optimize(graph)
        label = re.sub(r"\W", "_", getattr(self.python_function, "__name__", "graph"))
        run, source = compile_graph(graph, name=label.strip("_") or "graph")
        return _Entry(graph, run, source, structure)

    def _warn_about_retracing(self, reason: str) -> None:
        if self._warned or self._cache.retrace_count() < RETRACE_LIMIT:
            return
        self._warned = True
        warnings.warn(
            f"{self.__name__} was traced {self._cache.retrace_count()} times in its last "
            f"{len(self._cache.recent_calls())} calls; the latest because "
            f"{reason}. Each new signature traces again: "
            "pass arrays rather than changing Python numbers, and keep shapes fixed.",
            RuntimeWarning, stacklevel=3)

    def _entry(self, args, kwargs) -> _Entry:
        key, _ = signature_and_arrays(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache.get_or_build(key, lambda: self._build(args, kwargs))
        return entry

    def graph(self, *args, **kwargs):
        """The optimized graph traced for these arguments' signature (tracing if needed);
        `str()` of it prints one operation a line."""
        return self._entry(args, kwargs).graph

    def source(self, *args, **kwargs) -> str:
        """The Python source the executor runs for these arguments' signature."""
        return self._entry(args, kwargs).source

    def clear_cache(self) -> None:
        """Forget every trace; the next call traces again."""
        self._cache.clear()

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __repr__(self) -> str:
        return f"<autotrace.function {getattr(self, '__qualname__', self.__name__)}>"


def _parameter_names(function) -> list:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def function(python_function: Callable | None = None, *, max_traces: int = 64):
    """Trace `python_function` per input signature into cached, optimized graphs.

    Use as `@autotrace.function`, `@autotrace.function(max_traces=...)` or
    `autotrace.function(f)`. The result is called like f; its `trace_count`, `graph(*args)`,
    `source(*args)` and `clear_cache()` show and reset what was traced. At most `max_traces`
    traces are kept (least recently used out).

    Example:
        >>> step = autotrace.function(autotrace.grad(loss))
        >>> step(w, X, y); step.trace_count
        1
    """
    if python_function is None:
        return lambda f: Function(f, max_traces=max_traces)
    return Function(python_function, max_traces=max_traces)
