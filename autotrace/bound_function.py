"""A traced method read from an instance (`obj.step`), as Python binds a method: the instance
passed first, the traces those of the traced function (autotrace/traced_function.py)."""
from __future__ import annotations

import functools
import types

from autotrace.concrete import concrete_function, input_signature_concrete_function


class BoundFunction:
    """A traced method read from an instance (`obj.step`), as a bound method is: calls,
    `graph(...)` and `source(...)` pass the instance first; `trace_count` and the other
    attributes are the traced function's (its traces serve every instance, each keyed by
    identity). `autotrace.grad(obj.step)` differentiates the method's source with `obj`
    bound, as for a plain method."""

    def __init__(self, function: Function, instance):
        functools.update_wrapper(self, function.python_function)
        self.__func__ = function
        self.__self__ = instance
        # What the transforms differentiate and convert: the Python method, bound (its
        # signature, without self, is the one inspect.signature gives).
        self.__autotrace_python_function__ = self.__wrapped__ = types.MethodType(
            function.python_function, instance)

    @property
    def python_function(self):
        return self.__autotrace_python_function__

    def __call__(self, *args, **kwargs):
        return self.__func__(self.__self__, *args, **kwargs)

    def graph(self, *args, optimized: bool = True, **kwargs):
        """The graph a call with these arguments runs (see Function.graph)."""
        return self.__func__.graph(self.__self__, *args, optimized=optimized, **kwargs)

    def source(self, *args, **kwargs) -> str:
        """The Python source the executor runs for these arguments' signature."""
        return self.__func__.source(self.__self__, *args, **kwargs)

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments' signature, the instance passed first (see
        Function.get_concrete_function); call it without the instance."""
        if self.__func__.input_signature is not None:
            if args or kwargs:
                raise TypeError(f"{self.__name__} has an input_signature, which fixes its "
                                f"arguments: call get_concrete_function() without any")
            return input_signature_concrete_function(self.__func__, (self.__self__,))
        return concrete_function(self.__func__, args, kwargs, (self.__self__,))

    def __getattr__(self, attribute):
        # trace_count, cache_size, input_signature, reduce_retracing, clear_cache, ...
        if attribute in ("__func__", "__self__"):  # not set yet (a copy being made)
            raise AttributeError(attribute)
        return getattr(self.__func__, attribute)

    def __eq__(self, other) -> bool:
        return (isinstance(other, BoundFunction) and other.__func__ is self.__func__
                and other.__self__ is self.__self__)

    def __hash__(self) -> int:
        return hash((id(self.__func__), id(self.__self__)))

    def __repr__(self) -> str:
        return (f"<bound autotrace.function {getattr(self, '__qualname__', self.__name__)} "
                f"of {self.__self__!r}>")
