"""`autotrace.function`: a Python function traced once per input signature into a cached,
optimized graph, with tf.function's rules (see the example of `Function`).

The signature of a call is its arrays' (shape, dtype, device), Python scalars, strings and None by
value, containers recursively, other objects by identity (see runtime/tracing/signature.py). Python
side effects run only while tracing; arrays written into objects that outlive the call are state of
the graph, read and written back on every call (runtime/object_slots.py). Control flow on Python
values is unrolled into the graph; control flow on traced values is converted before tracing into
graph `cond` and `while` ops (autotrace/conversion.py, transforms/control_flow/control_flow.py).

Two ways trace once for many sizes (runtime/tracing/spec.py): `input_signature=[Spec((None, 3))]`
traces once with the sizes it leaves unknown, and checks every call against it;
`reduce_retracing=True` traces again with a dimension made unknown once it has been seen with two
sizes. There, a Python test of an unknown size is refused (runtime/unknown_sizes.py).
"""
from __future__ import annotations

import functools
import inspect
import re
import sys
import threading
import warnings
from typing import Callable

import numpy as np

from autotrace.concrete import (as_specs, concrete_function, describe_trace,
                                 input_signature_concrete_function, outputs_of,
                                 refuse_shared_memory)
from autotrace.conversion import for_tracing, refuse_untraceable, whole_calls
from autotrace.placement import config
from autotrace.trace_errors import explain_run_error, explain_trace_error
from autotrace.variables import next_variable_number
from autotrace.bound_function import BoundFunction
from autotrace.runtime.devices import device_of
from autotrace.runtime.tracing.cache import TraceCache
from autotrace.runtime.tracing.control_variables import CallInHalvesError
from autotrace.runtime.execution import executor
from autotrace.runtime.object_slots import ObjectSlots, graph_state_of
from autotrace.runtime.tracing.signature import (ParameterBinding, array_call_key,
                                                 signature_and_arrays)
from autotrace.runtime.state import StateError
from autotrace.runtime.tracing.spec import InputSignature, RetracingReducer, placeholders_for
from autotrace.runtime.tracing.tracer import trace

# After this many traces within the last RETRACE_WINDOW calls, one warning says why.
RETRACE_LIMIT = 5

# How deep this thread is in tracing: a traced function called while another one traces is
# inlined into that trace rather than traced (and cached) on its own.
_TRACING = threading.local()


class _Entry:
    """One trace: the graph before and after the passes, the code that runs the optimized one,
    the output's structure, and whether it serves many sizes (a reduce_retracing trace)."""

    def __init__(self, graph, unoptimized, run, source, structure, general=False):
        self.signature = ""  # how pretty_printed_concrete_signatures writes it
        self.graph = graph
        self.unoptimized = unoptimized
        self.run = run
        self.source = source
        self.structure = structure
        self.general = general
        # The slots of objects' state the graph reads and writes (runtime/object_slots.py)
        self.object_state = graph_state_of(structure)


class Function:
    """A function traced per input signature; calls with a known signature run its graph.

    Made by `autotrace.function` and `autotrace.jit`, whose docstrings say what the arguments do.

    Attributes:
        trace_count: how many times the Python function has been traced.
        cache_size: how many traces are kept now (at most `max_traces`).
        input_signature: the InputSignature every call is checked against, or None.
        reduce_retracing: whether dimensions seen with several sizes are traced as unknown.

    Examples:
        >>> @autotrace.function
        ... def double(a):
        ...     print("Tracing with", a)      # runs while tracing only
        ...     return a + a
        >>> double(np.array([1, 2])), double(np.array([3, 4])), double.trace_count
        Tracing with Tracer<i64[2]>
        (array([2, 4]), array([6, 8]), 1)
    """

    def __init__(self, python_function: Callable, input_signature=None,
                 reduce_retracing: bool = False, max_traces: int = 64, *,
                 static_argnums=(), static_argnames=()):
        # Above @staticmethod or @classmethod: the function it holds, bound as it binds it.
        self._binds_as = None
        if isinstance(python_function, (staticmethod, classmethod)):
            self._binds_as, python_function = type(python_function), python_function.__func__
        refuse_untraceable(python_function)
        if not isinstance(max_traces, int) or max_traces < 1:
            raise ValueError(f"autotrace.function: max_traces must be a positive int, "
                             f"not {max_traces!r}")
        self.python_function = python_function
        # grad(function(f)) differentiates f's source: the transforms look for this.
        self.__autotrace_python_function__ = python_function
        self._cache = TraceCache(maxsize=max_traces, on_evict=self._forget_array_calls)
        self._warned = False
        self._parameters = tuple(_parameter_names(python_function))
        self._positional = _positional_names(python_function)
        # Calls are bound to the parameters (defaults filled in) before they are keyed.
        self._binding = ParameterBinding(python_function, static_argnums, static_argnames)
        self.input_signature = (None if input_signature is None
                                else InputSignature(input_signature, python_function))
        self.reduce_retracing = bool(reduce_retracing)
        self._reducer = RetracingReducer(4 * max_traces) if reduce_retracing else None
        # Calls of NumPy arrays alone, by position, skip binding and keying: their key follows
        # from the arrays' shapes and dtypes (`_array_calls` maps those to the key and the
        # entry). Not for functions whose binding adds anything but fixed Python values.
        self._array_calls: dict = {}
        # Counts evictions and clears: a call that found its entry before one of them (in
        # another thread) must not put that entry back among `_array_calls`.
        self._array_generation = 0
        self._array_call_arity = _array_call_arity(self._binding) \
            if input_signature is None and not reduce_retracing else -1
        # Whether calls are keyed by which of their arrays share memory too: from the first
        # trace that asked (OutputStructure.reads_argument_memory) on.
        self._memory_keyed = False
        functools.update_wrapper(self, python_function)
        # Arrays it writes into objects' state, kept as state of its graphs.
        self._object_slots = ObjectSlots(
            getattr(python_function, "__name__", None) or type(python_function).__name__,
            self._positional)

    @property
    def trace_count(self) -> int:
        return self._cache.trace_count

    @property
    def cache_size(self) -> int:
        return len(self._cache)

    def __call__(self, *args, **kwargs):
        if getattr(_TRACING, "depth", 0):
            # Called while tracing (by itself or by another traced function): inline it.
            return for_tracing(self.python_function)(*args, **kwargs)
        array_call = None
        if not kwargs and len(args) == self._array_call_arity:
            if len(args) == 1:  # the usual call, spelled out: this path is the cache hit's cost
                array_call = (args[0].shape, args[0].dtype) if type(args[0]) is np.ndarray \
                    else None
            else:
                array_call = array_call_key(args, self._memory_keyed)
            found = self._array_calls.get(array_call)
            if found is not None:
                key, entry = found
                self._cache.touch(key, entry)
                if entry.object_state is None:
                    return entry.structure.run(entry.run, args)
                return self._run(entry, args, lambda: self._traced_again(
                    key, *self._binding.bind(args, kwargs)))
        if self.input_signature is not None:
            entry, arrays = self._signature_entry(args, kwargs)
            return self._run(entry, arrays, lambda: self._signature_entry(args, kwargs)[0])
        generation = self._array_generation
        args, kwargs = self._binding.bind(args, kwargs)
        key, arrays = signature_and_arrays(args, kwargs, self._memory_keyed, self._positional,
                                           self._binding.var_keyword)
        entry = self._cache.get(key) or self._missed(key, args, kwargs, warn=True)
        if entry.general:
            return self._run_general(entry, key, args, kwargs, arrays)
        if array_call is not None:
            self._array_calls[array_call] = (key, entry)
            if generation != self._array_generation:  # evicted meanwhile: it may be this one
                self._array_calls.pop(array_call, None)
        return self._run(entry, arrays, lambda: self._traced_again(key, args, kwargs))

    def _run(self, entry, arrays, trace_again: Callable):
        """Run `entry`'s graph on a call's `arrays`. Where the graph keeps arrays of objects'
        state that no longer fit it (another shape or dtype, or state it found new when it
        traced, which it read as it was then), `trace_again()` first, for a trace that does.
        """
        state = entry.object_state
        problem = None if state is None else state.problem()
        if problem is not None:
            self._cache.discard(entry)
            entry = trace_again()
            state = entry.object_state
            self._warn_about_retracing(problem)
        try:
            if state is None:
                return entry.structure.run(entry.run, arrays)
            return state.run(entry.structure, entry.run, arrays)
        except IndexError as error:  # an index out of range: the user's line that read it
            explain_run_error(error)
            raise

    def _traced_again(self, key, args, kwargs) -> _Entry:
        return self._cache.get_or_build(key, lambda: self._build(args, kwargs))

    def _forget_array_calls(self, key=None, entry=None) -> None:
        """An entry left the cache: calls of arrays stop finding it (all are forgotten; the
        next call of each kind finds its entry the long way)."""
        self._array_generation += 1
        self._array_calls.clear()

    def _build(self, args, kwargs, general: bool = False, state_known: bool = False,
               identities: bool = True) -> _Entry:
        graph, structure = self.traced_graph(args, kwargs, state_known, identities)
        entry = self._compile(graph, structure, general)
        entry.signature = describe_trace(self, as_specs((tuple(args), dict(kwargs))),
                                         outputs_of(entry))
        if config.log_placement():
            _log_placement(self, graph)
        return entry

    def traced_graph(self, args: tuple, kwargs: dict, state_known: bool = True,
                     identities: bool = True):
        """Trace the Python function on `args` and `kwargs` (arrays, or placeholders from
        runtime/tracing/spec.py) without caching or compiling: (graph as traced, OutputStructure).
        Variables it makes are made as on a first call (autotrace.export uses this).

        A trace that finds an array written into an object's state it did not know of reads
        that state as it is now, and serves one call (runtime/object_slots.py); with
        `state_known` (for a trace that is not run at once: export, a concrete function) it
        is traced again then, now reading that state on every call. With `identities` (a
        trace keyed by which arguments are one object: not export's), `f(a, a)` hands the
        function one traced value for both, so `x is y` answers as it does eagerly."""
        _TRACING.depth = getattr(_TRACING, "depth", 0) + 1
        try:
            first = self.trace_count == 0
            before = next_variable_number()
            graph, structure = self._trace(args, kwargs, first, identities)
            state = graph_state_of(structure)
            if state_known and state is not None and state.once:
                graph, structure = self._trace(args, kwargs, first, identities)
            if first and next_variable_number() > before + 1:
                # Variables were made while tracing. As tf.function does, trace once more,
                # now refusing new ones: made once (a layer built lazily), they exist now;
                # made on every call, the Python function would have a new one each time,
                # where the graph would keep one for all calls.
                try:
                    graph, structure = self._trace(args, kwargs, False, identities)
                except StateError as error:
                    made = getattr(error, "variable_name", None)
                    if made is None:
                        raise
                    raise StateError(
                        f"{self.__name__} makes a new Variable ({made!r}) on every call: a "
                        "traced function may make Variables on its first call only, and "
                        "traced again it made this one again. Make it outside the function, "
                        "or keep it in an object that makes it once (as layers do: "
                        "self.v = ... only if not made yet)") from None
        except Exception as error:
            explain_trace_error(error, args, kwargs)
            raise
        finally:
            _TRACING.depth -= 1
        return graph, structure

    def _trace(self, args, kwargs, allow_state_creation: bool, identities: bool):
        token = None
        how = dict(protect_arguments=True, source=self.python_function, identities=identities,
                   parameters=self._positional, allow_state_creation=allow_state_creation)
        try:
            traced = trace(self._for_tracing(), args, kwargs, **how)
        except CallInHalvesError:
            # A call's derivative run in halves sits in a traced `if` or loop, whose branches
            # and body are graphs of their own: trace again with the calls in `if`s and loops
            # run whole (the `top_calls` of its record, transforms/derivative_record.py).
            token = whole_calls.set(True)
            traced = trace(self._for_tracing(), args, kwargs, **how)
        finally:
            if token is not None:
                whole_calls.reset(token)
        if traced[1].reads_argument_memory and not self._memory_keyed:  # (see __init__)
            self._memory_keyed = True
            self._forget_array_calls()
        return traced

    def _for_tracing(self):
        """What is traced: the Python function converted, keeping the arrays it writes into
        objects' state as state of the graph."""
        return self._object_slots.traced(for_tracing(self.python_function),
                                         self.python_function)

    def _compile(self, unoptimized, structure, general: bool) -> _Entry:
        label = re.sub(r"\W", "_", getattr(self.python_function, "__name__", "graph"))
        compiled = executor.compile(unoptimized, name=label.strip("_") or "graph")
        return _Entry(compiled.graph, unoptimized, compiled.run, compiled.source, structure,
                      general)

    # --- finding the trace for a call --------------------------------------------------------

    def _signature_entry(self, args, kwargs):
        """The input_signature's trace (one a device, and one an instance for a method) and
        the call's arrays, checked."""
        instance, instance_arrays, instance_key = (), [], None
        if self.input_signature.takes_instance:
            if not args:
                raise TypeError(f"{self.input_signature.call_text}: missing the instance "
                                f"(self); call it as a method")
            instance, args = args[:1], args[1:]
            instance_key, instance_arrays = signature_and_arrays(instance, {})
        arrays = self.input_signature.arrays(args, kwargs)
        devices = tuple(device_of(array) for array in arrays)
        entry = self._signature_trace(devices, instance, instance_key)
        refuse_shared_memory(entry.structure, instance_arrays + arrays, self.__name__)
        return entry, instance_arrays + arrays

    def _signature_trace(self, devices: tuple, instance: tuple = (), instance_key=None):
        """The input_signature's trace for arrays on `devices` (and a method's instance)."""
        key = ("input_signature", devices, *([instance_key] if instance else []))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache.get_or_build(key, lambda: self._build(
                (*instance, *self.input_signature.placeholders(devices)), {}))
        return entry

    def _missed(self, key, args, kwargs, warn: bool = False) -> _Entry:
        """The trace for a signature not in the cache: reduce_retracing's widened one if it is
        there, else a new trace (with a warning, once, if `warn` and traces are frequent)."""
        general = self._reducer.generalize(key) if self._reducer is not None and \
            len(key) == 2 else None  # (not for arrays sharing memory: placeholders share none)
        entry = self._cache.get(general) if general is not None else None
        if entry is None:
            reason = self._cache.explain(key, self._parameters) if warn else ""
            entry = self._trace_for(key, general, args, kwargs)
            if warn:
                self._warn_about_retracing(reason)
        return entry

    def _trace_for(self, key, general, args, kwargs) -> _Entry:
        """Trace for a signature not in the cache: for `general`, reduce_retracing's widened
        signature, if there is one (and it traces), else for `key`."""
        if general is not None:
            traced_args, traced_kwargs = placeholders_for(args, kwargs, general)
            try:
                return self._cache.get_or_build(general, lambda: self._build(
                    traced_args, traced_kwargs, general=True))
            except Exception:  # noqa: BLE001 - it traces with concrete sizes instead, below
                self._reducer.give_up(key)
        return self._cache.get_or_build(key, lambda: self._build(args, kwargs))

    def _run_general(self, entry, key, args, kwargs, arrays):
        """Run a trace for many sizes; should it fail for these (unknown sizes it took to be
        equal are not), trace for this call's own sizes, which raises a clear error if the
        function cannot run on them at all."""
        def trace_again():
            return self._traced_again(key, args, kwargs)
        entry.structure.refuse_arguments(arrays)  # (this call's own error: no trace again)
        try:
            return self._run(entry, arrays, trace_again)
        except Exception:  # noqa: BLE001 - traced again below, with this call's sizes
            return self._run(trace_again(), arrays, trace_again)

    def _warn_about_retracing(self, reason: str) -> None:
        if self._warned or self._cache.retrace_count() < RETRACE_LIMIT:
            return
        self._warned = True
        warnings.warn(
            f"{self.__name__} was traced {self._cache.retrace_count()} times in its last "
            f"{len(self._cache.recent_calls())} calls; the latest because "
            f"{reason}. Each new signature traces again: "
            "pass arrays rather than changing Python numbers, and keep shapes fixed "
            "(or use input_signature or reduce_retracing=True).",
            RuntimeWarning, stacklevel=_caller_level())

    def _entry(self, args, kwargs) -> _Entry:
        if self.input_signature is not None:
            return self._signature_entry(args, kwargs)[0]
        args, kwargs = self._binding.bind(args, kwargs)
        key, _ = signature_and_arrays(args, kwargs, self._memory_keyed, self._positional,
                                      self._binding.var_keyword)
        return self._cache.get(key) or self._missed(key, args, kwargs)

    # --- what users look at ------------------------------------------------------------------

    def graph(self, *args, optimized: bool = True, **kwargs):
        """The graph a call with these arguments runs (tracing it if there is none yet).

        Arguments:
            args, kwargs: arguments as for a call (only their signature matters).
            optimized: False for the graph as traced, before the passes (constant folding,
                algebraic simplification, common subexpressions, dead code, buffer reuse).

        Returns:
            a runtime.graph.Graph; `str()` of it prints one operation a line.

        Examples:
            >>> print(double.graph(np.ones(2), optimized=False))
            { lambda a:f64[2] ;
              b:f64[2] = add a a
              in (b) }
        """
        entry = self._entry(args, kwargs)
        return entry.graph if optimized else entry.unoptimized

    def source(self, *args, **kwargs) -> str:
        """The Python source the executor runs for these arguments' signature."""
        return self._entry(args, kwargs).source

    def get_concrete_function(self, *args, **kwargs):
        """The trace for one signature, as a function of its own (autotrace/concrete.py), as
        tf.function's get_concrete_function: traced now if there is none yet.

        Arguments:
            args, kwargs: arguments as for a call, where an `autotrace.Spec` stands for any
                array of its type (None for any size); none with an input_signature (its
                trace for arrays on the CPU).

        Returns:
            a ConcreteFunction: call it with arguments of that signature (a TypeError names
            what differs otherwise); `.graph`, `.source`, `.structured_input_signature`,
            `.structured_outputs` and `.pretty_printed_signature()` describe it.

        Examples:
            >>> double.get_concrete_function(autotrace.Spec((None,))).pretty_printed_signature()
            'double(a: f64[?]) -> f64[?]'
        """
        if self.input_signature is not None:
            if args or kwargs:
                raise TypeError(f"{self.__name__} has an input_signature, which fixes its "
                                f"arguments: call get_concrete_function() without any")
            return input_signature_concrete_function(self)
        return concrete_function(self, args, kwargs)

    def experimental_get_tracing_count(self) -> int:
        """How many times the Python function has been traced (tf.function's name for
        `trace_count`)."""
        return self.trace_count

    def pretty_printed_concrete_signatures(self) -> str:
        """One line per trace in the cache, as ConcreteFunction.pretty_printed_signature
        writes it; the most recently used last."""
        return "\n".join(entry.signature for entry in self._cache.entries())

    def clear_cache(self) -> None:
        """Forget every trace (and what reduce_retracing has seen); the next call traces
        again."""
        self._cache.clear()
        self._forget_array_calls()
        if self._reducer is not None:
            self._reducer.clear()

    def __get__(self, instance, owner=None):
        if self._binds_as is classmethod:
            return BoundFunction(self, owner if owner is not None else type(instance))
        if instance is None or self._binds_as is staticmethod:
            return self
        return BoundFunction(self, instance)

    def __repr__(self) -> str:
        return f"<autotrace.function {getattr(self, '__qualname__', self.__name__)}>"


def _array_call_arity(binding: ParameterBinding) -> int:
    """How many positional arguments a call has that is keyed by its arrays alone: all the
    positional parameters (none of *args), with keyword-only ones left to defaults that are
    fixed Python values (a gradient's `dy=None`); -1 where calls cannot be keyed so."""
    if binding.signature is None or binding.varargs or binding.static is not None:
        return -1
    if binding.keywords and (binding.keyword_defaults is None or not all(
            type(value) in (type(None), bool, int, float, str)
            for value in binding.keyword_defaults.values())):
        return -1
    return binding.positional


# This file's and bound_function.py's: a method bound to a traced function calls through it.
_OWN_FILES = (__file__, BoundFunction.__call__.__code__.co_filename)


def _caller_level() -> int:
    """The stacklevel of a warning raised in this file that points at the line which called
    into it (a traced function, or a method bound to one)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename in _OWN_FILES:
        frame, level = frame.f_back, level + 1
    return level


def _log_placement(function: Function, graph) -> None:
    """One line on standard error: where a new trace runs (its inputs' devices; a graph of
    Python values alone runs on the CPU) and the data it moves (none: graphs run where their
    inputs are)."""
    devices = sorted({value.aval.device for value in graph.inputs}) or ["cpu"]
    print(f"autotrace: {function.__name__} ({len(graph.equations)} ops) runs on "
          f"{', '.join(devices)}; it moves no data between devices", file=sys.stderr)


def _positional_names(function) -> tuple:
    """The names positional arguments fill, in order, with `*args` as "*args"."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(("*" if p.kind is p.VAR_POSITIONAL else "") + p.name for p in parameters
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL))


def _parameter_names(function) -> list:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def function(python_function: Callable | None = None, *, input_signature=None,
             reduce_retracing: bool = False, max_traces: int = 64):
    """Trace `python_function` per input signature into cached, optimized graphs.

    Use as `@autotrace.function`, `@autotrace.function(input_signature=..., ...)` or
    `autotrace.function(f, ...)`. The result is called like f; its `trace_count`,
    `graph(*args)` (`optimized=False` for the graph as traced), `source(*args)` and
    `clear_cache()` show and reset what was traced.

    Arguments:
        python_function: the function to trace.
        input_signature: a list with an `autotrace.Spec` (or a tuple, list or dict of Specs)
            for each leading positional parameter; a method's `self` has none (each instance
            gets a trace of its own, the instance held weakly). The function is traced once,
            with None dimensions of unknown size, and every call is checked against it: a
            call that does not fit raises TypeError naming the argument. Python numbers
            become arrays of their Spec's dtype. Ops whose result needs an unknown size raise
            an error that says to give that dimension a size. Unknown dimensions that meet in
            broadcasting are taken to be equal (the graph checks it when it runs).
        reduce_retracing: once an array argument's dimension has been seen with two sizes,
            trace again with it unknown, so that later sizes reuse that trace. Where the
            function cannot trace (or run) with an unknown size, it is traced per size as
            without this option. Ignored with an input_signature.
        max_traces: how many traces to keep; the least recently used goes first.

    Returns:
        a `Function`, or, without `python_function`, a decorator that makes one.

    Examples:
        >>> @autotrace.function(input_signature=[autotrace.Spec((None, 3))])
        ... def double(x):
        ...     return x + x
        >>> _ = double(np.ones((2, 3))); _ = double(np.ones((5, 3))); double.trace_count
        1
    """
    def make(f):
        return Function(f, input_signature=input_signature, reduce_retracing=reduce_retracing,
                        max_traces=max_traces)
    return make if python_function is None else make(python_function)


def traced_and_instance(function, caller: str):
    """The autotrace.function to trace for `function` (a Function, a bound one, or a Python
    function), and the instance a bound method passes first; `caller` names the API in the
    error for anything else."""
    if isinstance(function, BoundFunction):
        return function.__func__, (function.__self__,)
    if isinstance(function, Function):
        return function, ()
    if callable(function):
        return Function(function), ()
    raise TypeError(f"{caller} expects a function, got {type(function).__name__}")
