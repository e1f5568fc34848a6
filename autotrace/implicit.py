"""Gradients with respect to the Variables a function reads: `implicit_grad`.

    model = Model()                                   # holds Variables W and B
    def loss(model, x, y):
        return np.mean((model.predict(x) - y) ** 2)

    grads_and_vars = autotrace.implicit_grad(loss)(model, x, y)   # [(dW, W), (dB, B)]
    optimizer.apply_gradients(grads_and_vars)

f's derivative is generated from its source in implicit mode (transforms/front/front_end.py
`Session`): besides its arguments, the Variables it reaches through attributes of its
arguments (at any depth: `self.layers[0].kernel`), through globals and closures, classes and
modules, and parameters' defaults, and inside the functions and modules it calls carry
gradient. Where the adjoint code reaches such a Variable, it hands the gradient to a sink
(`deposit(self.W, bW)` in `autotrace.source`), which sums them per Variable. Non-trainable
Variables get none.
"""
from __future__ import annotations

import inspect
import weakref
from typing import Callable

from autotrace.operators import reverse
from autotrace.conversion import for_tracing
from autotrace.runtime.held_state import holds_state
from autotrace.runtime.state import collecting, current_scope, deposit
from autotrace.runtime.derivatives.structure import array_module
from autotrace.transforms.front.function_caches import made_from
from autotrace.transforms.analysis.live_names import is_current


# Each function's implicit derivatives, per (wrt, optimized): built once, however many
# implicit_grad(f) wrappers are made (a training loop may make one per step); kept on the
# function (transforms/front/function_caches.py), other callables' here.
_KIND = "__autotrace_implicit_derivatives__"
_derivatives: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _derived_function(f):
    """(the Python function implicit_grad derives for `f`, the object it is a method of or
    None): a module's `call`, a bound method's function, or `f` itself."""
    if hasattr(type(f), "__autotrace_call__"):
        f = f.__autotrace_call__
    traced = getattr(f, "__autotrace_python_function__", None)
    if inspect.ismethod(traced):  # autotrace.function of a method: the method, bound
        f = traced
    return (f.__func__, f.__self__) if inspect.ismethod(f) else (f, None)


class _DerivativesOf:
    """The generated derivatives of one function, to read with autotrace.source."""

    def __init__(self, f):
        self._f = f

    def values(self) -> list:
        return list(made_from(_derived_function(self._f)[0], _KIND, _derivatives).values())


class ImplicitGradient:
    """What `implicit_value_and_grad(f)` returns (see there); `implicit_grad` wraps it."""

    # For the transforms: a call of it may read Variables, and it has no derivative of its own.
    __autotrace_reads_state__ = True
    __autotrace_no_rule_hint__ = (
        "the gradients implicit_grad returns cannot be differentiated again; for higher "
        "derivatives pass the values as arguments and nest autotrace.grad")

    def __init__(self, f: Callable, optimized: bool, values_only: bool = False):
        if not callable(f):
            raise TypeError(f"implicit_grad expects a function, got {type(f).__name__}")
        self.f, self.optimized, self.values_only = f, optimized, values_only
        self.__name__ = getattr(f, "__name__", type(f).__name__)
        self.__doc__ = getattr(f, "__doc__", None)
        self.__autotrace_implicit__ = _DerivativesOf(f)

    def __call__(self, *args, **kwargs):
        if hasattr(self.f, "build_for") and args:  # a module: build it before its call
            self.f.build_for(args[0])
        function, owner = _derived_function(self.f)
        if owner is not None:
            args = (owner,) + args
        wrt = tuple(position for position, value in enumerate(args) if holds_state(value)) + \
            tuple(name for name, value in kwargs.items() if holds_state(value))
        derivatives = made_from(function, _KIND, _derivatives)
        derivative = derivatives.get((wrt, self.optimized))
        if derivative is None or not is_current(derivative):  # made again after a rebinding
            derivative = derivatives[(wrt, self.optimized)] = reverse(
                function, wrt, self.optimized, with_value=True, implicit=True)
        if current_scope() is not None:  # traced: convert its control flow, as for grad
            derivative = for_tracing(derivative)
        with collecting() as sink:
            value, gradients = derivative(*args, **kwargs)
            for where, gradient in zip(wrt, gradients):  # Variables passed as arguments
                deposit(args[where] if isinstance(where, int) else kwargs[where], gradient)
        pairs = sorted(sink.gradients.values(), key=lambda pair: getattr(pair[0], "_uid", 0))
        pairs = [(_like_variable(gradient, variable), variable) for variable, gradient in pairs]
        return pairs if self.values_only else (value, pairs)

    def __repr__(self) -> str:
        kind = "implicit_grad" if self.values_only else "implicit_value_and_grad"
        return f"<autotrace.{kind} of {self.__name__}>"


def implicit_value_and_grad(f: Callable, *, optimized: bool = True) -> ImplicitGradient:
    """Like `implicit_grad`, but the returned function gives `(f's value, grads_and_vars)`.

    Examples:
        >>> W = autotrace.Variable(3.0, name="W")
        >>> value, grads = implicit_value_and_grad(lambda x: W * x * x)(2.0)
        >>> [(float(gradient), variable.name) for gradient, variable in grads]
        [(4.0, 'W')]
        >>> float(value)
        12.0
    """
    return ImplicitGradient(f, optimized)


def implicit_grad(f: Callable, *, optimized: bool = True) -> ImplicitGradient:
    """The gradients of `f` with respect to every trainable Variable it reads.

    Arguments:
        f: a Python function (or bound method, or module) of arrays, Variables, and objects,
            modules, lists and dicts holding Variables, passed by position or keyword; it may
            also read Variables from globals and closures, class and module attributes, and
            parameters' defaults. Its value must be a scalar (or the gradient is of its sum).
        optimized: as for `grad`.

    Returns:
        A function taking f's arguments and returning a list of `(gradient, variable)` pairs,
        one for each trainable Variable that f's value depends on, in the order the Variables
        were created; each gradient has its Variable's shape and dtype. The list fits
        `optimizer.apply_gradients` directly.

    Assignments to Variables while f runs take effect when the gradient is done (the adjoint
    sweep recomputes parts of f, which must see the same values); reading a Variable after
    assigning it in f is an error.

    Examples:
        >>> W = autotrace.Variable(3.0, name="W")
        >>> implicit_grad(lambda x: W * x * x)(2.0)
        [(array(4.), <autotrace.Variable 'W' shape=() dtype=float64, numpy=3.>)]
    """
    return ImplicitGradient(f, optimized, values_only=True)


def _like_variable(gradient, variable):
    """`gradient` with its Variable's dtype and shape (a 0-d array for a 0-d Variable)."""
    if getattr(gradient, "_builder", None) is not None:  # traced
        if gradient.dtype != variable.dtype:
            gradient = gradient.astype(variable.dtype)
        return gradient
    return array_module(gradient).asarray(gradient, dtype=variable.dtype).reshape(
        variable.shape)
