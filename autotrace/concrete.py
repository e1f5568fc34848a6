"""One trace of an `autotrace.function` as a function of its own: what
`Function.get_concrete_function` returns, as tf.function's does.

    traced = autotrace.function(f)
    concrete = traced.get_concrete_function(autotrace.Spec((None, 3)), 2.0)
    concrete(np.ones((5, 3)), 2.0)     # runs the trace; another signature is a TypeError
    print(concrete.graph)              # the graph it runs

A concrete function is made for the signature of its arguments, where an `autotrace.Spec`
stands for any array of its type (None: any size). It is in the Function's cache like any
trace, so a call of the Function with arrays of that signature (all sizes given) runs it too.
"""
from __future__ import annotations

import itertools

from autotrace.runtime.abstract import AbstractArray, abstractify
from autotrace.runtime.devices import device_of
from autotrace.runtime.tracing.arguments import memory_shared
from autotrace.runtime.tracing.signature import (describe_difference, is_array_key,
                                                 signature_and_arrays, without_same_objects)
from autotrace.runtime.tracing.spec import Spec, placeholders_of
from autotrace.runtime.tracing.tracer import map_arrays


class ConcreteFunction:
    """One trace of an autotrace.function, for one signature (see the module docstring).

    Attributes:
        function: the autotrace.function it is a trace of.
        graph: the optimized graph a call runs; `graph_as_traced` is it before the passes.
        source: the Python the executor runs for it.
        structured_input_signature: (args, kwargs) it takes, each array as an autotrace.Spec.
        structured_outputs: what it returns, each array as an autotrace.Spec.

    Examples:
        >>> f = autotrace.function(lambda x: np.tanh(x) * 2)
        >>> concrete = f.get_concrete_function(np.ones(3))
        >>> concrete
        <autotrace.ConcreteFunction <lambda>(x: f64[3]) -> f64[3]>
        >>> concrete(np.zeros(3))
        array([0., 0., 0.])
        >>> print(concrete.graph)
        { lambda x:f64[3] ;
          b:f64[3] = tanh x
          c:f64[3] = multiply[out=0] b 2
          in (c) }
    """

    def __init__(self, function, entry, inputs: tuple, flatten, bound: tuple = ()):
        self.function = function
        self._bound = bound  # a method's instance, passed first
        self._entry = entry
        self._flatten = flatten  # (args, kwargs) -> the graph's array inputs, or TypeError
        self.structured_input_signature = inputs
        self.structured_outputs = outputs_of(entry)

    @property
    def graph(self):
        return self._entry.graph

    @property
    def graph_as_traced(self):
        return self._entry.unoptimized

    @property
    def source(self) -> str:
        return self._entry.source

    def __call__(self, *args, **kwargs):
        arrays = self._flatten((*self._bound, *args), kwargs)
        state = self._entry.object_state
        if state is None:
            return self._entry.structure.run(self._entry.run, arrays)
        problem = state.problem()
        if problem is not None:  # the arrays of objects' state it reads changed type
            raise TypeError(
                f"the concrete function {self.pretty_printed_signature()} no longer fits the "
                f"state of the objects it reads: {problem}. Call {_name(self.function)} "
                f"itself (it traces again), or get a new concrete function")
        return state.run(self._entry.structure, self._entry.run, arrays)

    def pretty_printed_signature(self) -> str:
        """`name(x: f64[?,3], scale: 2.0) -> f64[?,3]`: the arguments it takes and what it
        returns, arrays written as graphs print their types."""
        return describe_trace(self.function, self.structured_input_signature,
                              self.structured_outputs, skip=len(self._bound))

    def __repr__(self) -> str:
        return f"<autotrace.ConcreteFunction {self.pretty_printed_signature()}>"


def concrete_function(function, args: tuple, kwargs: dict,
                      bound: tuple = ()) -> ConcreteFunction:
    """The trace of `function` (an autotrace.Function) for these arguments, Specs standing
    for arrays, after `bound` (a method's instance); traced now if the cache has none."""
    args, kwargs = function._binding.bind(
        *placeholders_of(((*bound, *args), dict(kwargs))))
    # (one array given twice is two inputs: the concrete function serves any arrays of these
    # types, as it did before traces were keyed by which arguments are one object)
    key = without_same_objects(signature_and_arrays(args, kwargs)[0])
    general = any(None in aval.shape for aval in _avals(args, kwargs))
    entry = function._cache.get(key) or function._cache.get_or_build(
        key, lambda: function._build(args, kwargs, general=general, state_known=True,
                                     identities=False))

    def flatten(call_args, call_kwargs):
        call_args, call_kwargs = function._binding.bind(call_args, call_kwargs)
        call_key, arrays = signature_and_arrays(call_args, call_kwargs,
                                                entry.structure.reads_argument_memory)
        if not _fits(key, without_same_objects(call_key)):
            raise TypeError(
                f"the concrete function {describe_trace(function, inputs, None, len(bound))} "
                f"takes other arguments: this call differs in "
                f"{describe_difference(key, _widened(key, call_key), function._parameters)}. "
                f"Call {_name(function)} itself (it traces new signatures), or get a "
                f"concrete function for these arguments")
        return arrays

    inputs = as_specs((args[len(bound):], kwargs))
    return ConcreteFunction(function, entry, inputs, flatten, bound)


def input_signature_concrete_function(function, bound: tuple = ()) -> ConcreteFunction:
    """The concrete function of a Function made with an input_signature (its CPU trace), for
    the instance `bound` of a method."""
    signature = function.input_signature
    if signature.takes_instance and not bound:
        raise TypeError(f"{signature.call_text} is a method: get its concrete function from "
                        f"an instance (obj.{_name(function)}.get_concrete_function())")
    placeholders = signature.placeholders(itertools.repeat("cpu"))
    devices = ("cpu",) * len(_avals(placeholders, {}))
    instance_key, instance_arrays = signature_and_arrays(bound, {})
    entry = function._signature_trace(devices, bound, instance_key)

    def flatten(call_args, call_kwargs):
        arrays = signature.arrays(call_args[len(bound):], call_kwargs)
        elsewhere = [device for device in map(device_of, arrays) if device != "cpu"]
        if elsewhere:
            raise TypeError(f"{_name(function)}'s concrete function runs on the CPU, and "
                            f"this call passes arrays on {elsewhere[0]}; call "
                            f"{_name(function)} itself, which traces for their device")
        return instance_arrays + arrays

    return ConcreteFunction(function, entry, as_specs((placeholders, {})), flatten, bound)


def refuse_shared_memory(structure, arrays: list, name: str) -> None:
    """Raise TypeError where `arrays` (a call's array leaves) share memory and the trace that
    runs them (made for arrays sharing none: an input_signature's) asked which of its arrays
    share memory (OutputStructure.reads_argument_memory): it would run as if none did."""
    shared = memory_shared(arrays) if structure.reads_argument_memory else ()
    if shared:
        first, second = shared[0]
        raise TypeError(
            f"{name} was traced for its input_signature with arrays that share no memory, and "
            f"its trace depends on which of its array arguments share memory (it changes a "
            f"copy of one in place, as a gradient of a function that writes into its argument "
            f"does); this call passes arrays that share memory (array arguments {first + 1} "
            f"and {second + 1}, counted from 1). Pass a copy of one (x.copy()), or leave "
            f"input_signature out, so that it traces for them")


def describe_trace(function, inputs: tuple, outputs, skip: int = 0) -> str:
    """`name(x: f64[?,3], scale: 2.0) -> f64[?,3]` for a trace of `function` taking `inputs`
    ((args, kwargs), arrays as Specs; the first `skip` parameters, a method's instance, left
    out) and returning `outputs` (None: the arguments alone)."""
    args, kwargs = inputs
    names = function._parameters[skip:]
    parameters = [f"{names[index]}: {_text(value)}" if index < len(names)
                  else _text(value) for index, value in enumerate(args)] + [
        f"{name}: {_text(value)}" for name, value in kwargs.items()]
    text = f"{_name(function)}({', '.join(parameters)})"
    return text if outputs is None else f"{text} -> {_text(outputs)}"


def outputs_of(entry):
    """What a trace returns, each array as a Spec."""
    results = [Spec(var.aval.shape, var.aval.dtype) for var in entry.graph.outputs]
    return entry.structure.unflatten(
        tuple(results[:len(results) - len(entry.structure.written)]))


def as_specs(value):
    """`value` with each array (or placeholder) replaced by the Spec of its type (an array-API
    library's dtype as NumPy's)."""
    def spec(leaf):
        aval = leaf.aval if isinstance(getattr(leaf, "aval", None), AbstractArray) \
            else abstractify(leaf)
        return Spec(aval.shape, aval.dtype)
    return map_arrays(value, spec)


def _name(function) -> str:
    """The traced function's name; a callable object without one is named by its class."""
    return getattr(function, "__name__", None) or type(function.python_function).__name__


def _avals(args, kwargs) -> list:
    found = []
    map_arrays((args, kwargs), lambda leaf: found.append(leaf) or leaf)
    return found


def _fits(expected, actual) -> bool:
    """Whether a call's signature `actual` is one the trace for `expected` runs: the same, but
    where `expected` has a size None, any size."""
    if is_array_key(expected) and is_array_key(actual):
        return expected[2:] == actual[2:] and len(expected[1]) == len(actual[1]) and all(
            want is None or want == have for want, have in zip(expected[1], actual[1]))
    if type(expected) is tuple and type(actual) is tuple and len(expected) == len(actual):
        return all(_fits(want, have) for want, have in zip(expected, actual))
    return expected == actual


def _widened(expected, actual):
    """`actual` with the sizes that `expected` leaves open (None) made None too, so that what
    differs between them is what does not fit."""
    if is_array_key(expected) and is_array_key(actual) and \
            len(expected[1]) == len(actual[1]):
        shape = tuple(None if want is None else have
                      for want, have in zip(expected[1], actual[1]))
        return (actual[0], shape, *actual[2:])
    if type(expected) is tuple and type(actual) is tuple and len(expected) == len(actual):
        return tuple(_widened(want, have) for want, have in zip(expected, actual))
    return actual


def _text(value) -> str:
    """A Spec as graphs print types (`f64[?,3]`), containers of them, Python values' repr."""
    if isinstance(value, Spec):
        return str(AbstractArray(value.shape, value.dtype, "cpu"))
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_text(item)}" for key, item in value.items()) + "}"
    if isinstance(value, tuple) and not hasattr(type(value), "_fields"):
        inner = ", ".join(_text(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_text(item) for item in value) + "]"
    return repr(value)

