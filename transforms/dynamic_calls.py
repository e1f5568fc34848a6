"""Calls that generated code resolves only when it runs: `vjp_call` and `jvp_call`.

Where the transforms cannot tell, before running, which function a call means (a method of an
argument, a function held in a variable, a module), generated code calls these with the callee
itself; they derive it then (transforms/called_functions.py finds the function a call means
and builds its derivative, once per function and `wrt`), or apply its rule. Under
`implicit_grad` (a gradient sink open), a method's `self` that holds Variables is
differentiated too, so the Variables it reads get their gradients.
"""
from __future__ import annotations

import contextlib
import contextvars
import sys

import numpy as np

from ..runtime.derivatives import structure as structure
from ..runtime.derivatives.objects import floating, recomputed_call
from ..runtime.derivatives.random_states import random_states, same_draws
from ..runtime.derivatives.sweeps import adjoint_sweep, object_gradient_first, primal_sweep
from ..runtime.held_state import holds_state
from ..runtime.state import current_scope, current_sink
from ..runtime.derivatives.whole_calls import end_whole_call, run_again_as_of, whole_call_state
from ..runtime.primitives.recompute_barrier import recompute_from
from ..runtime.scopes import gradient_scope, name_scope
from .analysis.calls import Checkpointed, has_tangent_rule, no_rule_hint
from .called_functions import (asks_for_self, bound_object, caller_of, classify_value_safely,
                               derivative_of, forward_derivative_of, has_tangent,
                               object_with_gradient, unbind_method, unbound_call)
from .errors import TransformError
from .reverse.built_objects_and_super import as_function, unsupported_construction
from .front.python_versions import operator_method_version
from .front.varargs import for_call
from .analysis.random_draws import refuse_draws_in
from .derivative_record import derivative_record
from .codegen.naming import seed_keyword
from .traced_calls import refuse_holding_traced, traced_call, traced_derivative
from .rules.core import adjoint, adjoint_rules, d, tangent
from .wrt import WithRespectTo
from .rule_evaluation import rule_jvp, rule_vjp
from .unpacked_reruns import calling_line as _calling_line


# How a derivative built at run time is called: as it is, or, while code converted for
# autotrace.function calls vjp_call or jvp_call, converted in its turn (autotrace/conversion.py
# sets this), so that control flow on traced values in the function it derives converts too.
derivative_conversion = contextvars.ContextVar("derivative_conversion", default=None)


def _as_called(derivative):
    convert = derivative_conversion.get()
    return derivative if convert is None else convert(derivative)


def vjp_call(func, args, kwargs, dy, wrt, after=None):
    """The gradients of `func(*args, **kwargs)` for the arguments in `wrt`, given `dy` (and
    first, where `wrt` starts with SELF, the gradient of the object whose method it runs).

    after: where `wrt` starts with SELF, the gradient the caller has of that object after the
    call (None: none). The object's gradient handed back, as of before the call, includes
    it: a method's derivative that writes into its object takes it by a keyword of its own
    (its record's `object_after`, transforms/derivative_record.py), so that what the caller reads
    back of what the method wrote passes its gradient on; for any other it is added
    (runtime/derivatives/sweeps.py `object_gradient_first`).

    Generated code calls this where it could not tell, before running, which function a call
    meant (a method of an argument, a function held in a variable). A call that opens a name
    scope (a Module's) has its gradient computed in the matching gradient scope
    (`gradients/<module>`), as a `with autotrace.name_scope(...)` block's adjoint is.
    """
    scope = _scope_of(func)
    with contextlib.nullcontext() if scope is None else gradient_scope(scope):
        return _unscoped_vjp_call(func, args, kwargs, dy, wrt, after)


def _scope_of(func):
    """The name scope a call of `func` opens (a Module's name), or None."""
    if getattr(type(func), "__autotrace_scope__", None) is None:
        return None
    return func.__autotrace_scope__


def _unscoped_vjp_call(func, args, kwargs, dy, wrt, after=None):
    if isinstance(func, Checkpointed):  # recomputed from its inputs (autotrace.checkpoint),
        # behind barriers as in transforms/reverse/reverse_calls.py `recomputed_inputs`
        refuse_draws_in(func.function, "a function that autotrace.checkpoint marks")
        args, kwargs = recompute_from(tuple(args), dy), recompute_from(kwargs, dy)
        return recompute_from(vjp_call(func.function, args, kwargs, dy, wrt, after), dy)
    func = as_function(operator_method_version(func, args))  # (a.__mul__: a * b)
    asked, with_self, wrt = asks_for_self(func, wrt)
    refuse_holding_traced(func, asked)
    if asked and not with_self:  # (the object's gradient passes the call unchanged)
        return (after,) + tuple(_callee_vjp(func, args, kwargs, dy, wrt, None, False))
    return _callee_vjp(func, args, kwargs, dy, wrt, after, with_self)


def _callee_vjp(func, args, kwargs, dy, wrt, after, with_self: bool):
    """The gradients `_unscoped_vjp_call` gives, once `func` is the callee itself and what its
    object gets is settled (`with_self`: the object's gradient is asked for and it has one,
    given first): a call through a variable (a callable object held in a global, resolved
    on each step) looks at its callee once."""
    if classify_value_safely(func) == "constant":  # a bound method that draws random numbers
        _refuse_holding_arguments(func)
        return (after,) * with_self + tuple(None for _ in wrt.items)
    bound_self = bound_object(func)
    func, args, wrt = unbind_method(func, args, wrt)
    if traced_call(func):  # (it converts its call while a caller is traced)
        derivative, seed = _derivative_and_seed(func, args, kwargs, wrt, "reverse")
        return derivative(*args, **{seed: dy}, **kwargs)
    func = for_call(func, len(args), kwargs)  # one that takes *args: as called
    implicit = current_sink() is not None
    if with_self or implicit and bound_self is not None and holds_state(bound_self):
        # The method may read Variables through `self`: differentiate for it too; its own
        # gradient went to the sink (the caller passed no `self` and expects none back).
        derivative = derivative_of(func, wrt.with_object(), implicit)
        taking = _takes_object_gradient(derivative, after if with_self else None)
        gradients = _as_called(derivative)(*args, **{seed_keyword(func): dy}, **taking, **kwargs)
        if not with_self:
            return gradients[1:]
        return object_gradient_first(gradients, after, bool(taking), recomputed_call())
    kind = classify_value_safely(func)
    if kind == "rule":
        parameters = list(adjoint_rules[func].signature.parameters.values())
        gradients = rule_vjp(func, *args, **kwargs)[1](dy)
        # (None for an argument that the rule gives no gradient: a window's size)
        return wrt.from_rule(parameters, gradients)
    if kind != "user":
        raise TransformError(
            f"no derivative rule for {_called(func)}, called at run time with arguments that "
            "carry gradient; "
            + (no_rule_hint(func) or "register one with @autotrace.register_adjoint")
            + _calling_line())
    derivative = _as_called(derivative_of(func, wrt, implicit))
    return derivative(*args, **{seed_keyword(func): dy}, **kwargs)


# Builtins that autotrace differentiates where they are called by name (the front end writes
# them out) and takes for constants otherwise: their values hold their arguments.
_HOLDING_BUILTINS = (sorted, reversed, enumerate, zip)


def _refuse_holding_arguments(func) -> None:
    """Refuse a call, made through a variable, of a callee taken for a constant whose value
    holds its arguments' values (a class it cannot build from its fields, sorted): the
    gradient that reaches them through the value would be lost."""
    if isinstance(func, type):
        reason = unsupported_construction(func)
        if reason is not None:
            raise TransformError(
                f"autotrace cannot differentiate building a {func.__name__} from values that "
                f"carry gradient: {reason}" + _calling_line())
    if any(func is builtin for builtin in _HOLDING_BUILTINS):
        raise TransformError(
            f"autotrace differentiates {func.__name__}(...) called by its name, not through "
            f"a variable that holds it: call {func.__name__} itself" + _calling_line())


def _called(func) -> str:
    """How a no-rule error names `func`: a ufunc's method as `numpy.maximum.accumulate`."""
    owner = getattr(func, "__self__", None)
    if isinstance(owner, np.ufunc):
        return f"numpy.{owner.__name__}.{func.__name__}"
    return repr(getattr(func, "__name__", func))


def _takes_object_gradient(derivative, after) -> dict:
    """The keyword argument by which `derivative`, of a method, takes the gradient `after` of
    its object after the call, if it takes one (see vjp_call), else none."""
    record = derivative_record(derivative)
    keyword = None if record is None else record.object_after
    return {} if keyword is None or after is None else {keyword: after}


def vjp_start(func, args, kwargs, wrt):
    """The derivative of `func(*args, **kwargs)` for the arguments in `wrt`, to run in halves
    (runtime/derivatives/sweeps.py): a generator yielding the call's value, then, sent its
    gradient, returning the gradients vjp_call would. A user's function or method runs its
    primal sweep once; a call autotrace derives otherwise (a rule, a module's call in its
    name scope, a checkpointed call) runs as called, and vjp_call gives its gradients."""
    adjoint = _split_derivative(func, args, kwargs, wrt)
    if adjoint is None:
        return _called_whole(func, args, kwargs, wrt, derivative_conversion.get())
    return adjoint


def _called_whole(func, args, kwargs, wrt, conversion):
    """The call, then vjp_call's gradients; converted for tracing as vjp_start was called
    (a generator runs after the call that made it returned). vjp_call runs the call again:
    from the random states it began with, so that it draws what the call drew (a Dropout
    layer's mask)."""
    states, scope = random_states(func, args, kwargs), current_scope()
    before = None if scope is None else scope.values_now()
    with whole_call_state(sys._getframe()) as eager_before:  # (eagerly: its writes allowed)
        value = (func if conversion is None else conversion(func))(*args, **kwargs)
    try:
        gradient = yield value
    except BaseException:  # (closed, never run again)
        end_whole_call(eager_before)
        raise
    token = derivative_conversion.set(conversion)
    try:
        # the run again also reads the state cells as the call did (a batch-norm layer's
        # moving averages), and its writes are dropped: the call made them
        with contextlib.nullcontext() if scope is None or current_scope() is not scope \
                else scope.as_of(before), \
                same_draws(states), run_again_as_of(eager_before):
            return vjp_call(func, args, kwargs, gradient, wrt)
    finally:
        derivative_conversion.reset(token)


def _split_derivative(func, args, kwargs, wrt):
    """vjp_start's generator for a user's function or method, or None for another callee."""
    if isinstance(func, Checkpointed) or _scope_of(func) is not None or \
            current_sink() is not None:
        return None
    func = as_function(operator_method_version(func, args))  # (a.__mul__: a * b)
    asked, with_self, wrt = asks_for_self(func, wrt)
    if asked and not with_self:
        adjoint = _split_derivative(func, args, kwargs, wrt)
        return None if adjoint is None else _with_gradients_first(adjoint, (None,))
    if classify_value_safely(func) != "user":
        return None
    func, args, wrt, _ = unbound_call(func, args, kwargs, wrt, with_self)
    if classify_value_safely(func) != "user":
        return None
    return _as_called(derivative_of(func, wrt, split=True))(*args, **kwargs)


def _with_gradients_first(adjoint, first: tuple):
    gradient = yield primal_sweep(adjoint)
    return first + tuple(adjoint_sweep(adjoint, gradient))


def vjp_call_transpose(func, args, kwargs, dy, wrt, gradient, after=None):
    """The gradients of `vjp_call(func, args, kwargs, dy, wrt, after)` for `args`, `dy`, the
    keyword arguments, the object whose method `func` is (None where it is none) and
    `after`."""
    func = as_function(operator_method_version(func, args))  # (a.__mul__: a * b)
    asked, with_self, wrt = asks_for_self(func, wrt)
    after_gradient = None
    if asked and not with_self:  # the object's entry: `after` (see vjp_call)
        after_gradient, *gradient = gradient
    elif after is not None:  # added to the object's gradient, or taken (below)
        after_gradient = tuple(gradient)[0]
    func, args, wrt, bound = unbound_call(func, args, kwargs, wrt, with_self)
    derivative, seed = _derivative_and_seed(func, args, kwargs, wrt, "reverse")
    # (an object whose attributes carry gradient counts, `self` or another argument: the
    # derivative's gradients depend on its attributes too)
    numeric = tuple(i for i, a in enumerate(args) if structure.carries_gradient(a)
                    or object_with_gradient(a))
    named = tuple(k for k, v in kwargs.items() if structure.carries_gradient(v)
                  or object_with_gradient(v))
    taking = _takes_object_gradient(derivative, after if with_self else None)
    grads = vjp_call(derivative, args, {**kwargs, **taking, seed: dy}, tuple(gradient),
                     numeric + named + tuple(taking) + (seed,))
    by_position = dict(zip(numeric, grads[:len(numeric)]))
    by_keyword = dict(zip(named, grads[len(numeric):len(numeric) + len(named)]))
    if taking:
        after_gradient = grads[-2]
    first = 1 if bound else 0  # the gradients of the call's own arguments, not of `self`
    return (tuple(by_position.get(i) for i in range(first, len(args))), grads[-1],
            {k: by_keyword.get(k) for k in kwargs}, by_position.get(0) if bound else None,
            after_gradient)


def jvp_call(func, args, kwargs, tangents, wrt):
    """`(value, tangent)` of `func(*args, **kwargs)` for tangents of the arguments in `wrt`;
    the forward-mode twin of `vjp_call` (SELF in `wrt`: the first tangent is that of the
    object whose method `func` is). A call that opens a name scope (a Module's) computes
    both in it."""
    scope = _scope_of(func)
    with contextlib.nullcontext() if scope is None else name_scope(scope):
        return _unscoped_jvp_call(func, args, kwargs, tangents, wrt)


def _unscoped_jvp_call(func, args, kwargs, tangents, wrt):
    func = as_function(operator_method_version(func, args))  # (a.__mul__: a * b)
    asked, with_self, wrt = asks_for_self(func, wrt)
    refuse_holding_traced(func, asked)
    if asked and not with_self:  # a function held in an attribute of the object
        tangents = tuple(tangents)[1:]
    func, args, wrt, _ = unbound_call(func, args, kwargs, wrt, with_self)
    if traced_call(func):
        derivative, seed = _derivative_and_seed(func, args, kwargs, wrt, "forward")
        return derivative(*args, **{seed: tangents}, **kwargs)
    kind = classify_value_safely(func)
    if has_tangent_rule(func):  # (a tangent rule registered alone, too)
        by_position = dict(zip(wrt.items, tangents))
        return rule_jvp(func, args, [by_position.get(i) for i in range(len(args))], **kwargs)
    if kind != "user":
        raise TransformError(
            f"no tangent rule for {_called(func)}, called at run time with arguments that "
            "carry a tangent; "
            + (no_rule_hint(func) or "register one with @autotrace.register_tangent")
            + _calling_line())
    return _as_called(forward_derivative_of(func, wrt))(
        *args, **{seed_keyword(func, "tangent"): tangents}, **kwargs)


def _derivative_and_seed(func, args, kwargs, wrt: WithRespectTo, mode: str) -> tuple:
    """(the derivative of `func`, called with these arguments, in `mode`, and the keyword it
    takes its seed by), for a derivative of the call's derivative."""
    if traced_call(func):
        derivative = traced_derivative(func, wrt, mode)
        return derivative, derivative.seed
    func = caller_of(func, args, kwargs)
    if mode == "reverse":
        return derivative_of(func, wrt), seed_keyword(func)
    return forward_derivative_of(func, wrt), seed_keyword(func, "tangent")


def jvp_call_tangent(func, args, kwargs, tangents, wrt, arguments_tangent, keywords_tangent,
                     tangents_tangent, function_tangent=None):
    """The tangent of `jvp_call(func, args, kwargs, tangents, wrt)` (a `(value, tangent)`
    pair) given tangents of args, the keyword arguments, the tangents and the called object:
    forward mode over the forward derivative of func."""
    func = as_function(operator_method_version(func, args))  # (a.__mul__: a * b)
    asked, with_self, wrt = asks_for_self(func, wrt)
    if asked and not with_self:  # the object's entry: it has none (see jvp_call)
        tangents, tangents_tangent = tuple(tangents)[1:], tuple(tangents_tangent)[1:]
    func, args, wrt, bound = unbound_call(func, args, kwargs, wrt, with_self)
    if bound:  # a method, or a module's call: `self` first
        arguments_tangent = (function_tangent,) + tuple(arguments_tangent)
    derivative, seed = _derivative_and_seed(func, args, kwargs, wrt, "forward")
    numeric = tuple(i for i, a in enumerate(args) if floating(a)
                    or has_tangent(arguments_tangent, i) and object_with_gradient(a))
    named = tuple(k for k, v in kwargs.items() if (floating(v) or object_with_gradient(v))
                  and keywords_tangent is not None and keywords_tangent.get(k) is not None)
    second = (tuple(arguments_tangent[i] for i in numeric)
              + tuple(keywords_tangent[k] for k in named) + (tuple(tangents_tangent),))
    return jvp_call(derivative, args, {**kwargs, seed: tuple(tangents)}, second,
                    numeric + named + (seed,))[1]


@tangent(jvp_call)
def _jvp_call_tangent(y, function, arguments, keywords, tangents, wrt):
    d[y] = jvp_call_tangent(function, arguments, keywords, tangents, wrt, d[arguments],
                            d[keywords], d[tangents], d[function])


def jvp_call_transpose(func, args, kwargs, tangents, wrt, gradient):
    """The gradients of `jvp_call(func, args, kwargs, tangents, wrt)` (a `(value, tangent)`
    pair, whose gradient is `gradient`) for `args`, the tangents, the keyword arguments and the
    object whose method `func` is (None where it is none): reverse mode over the forward
    derivative of func."""
    func = as_function(operator_method_version(func, args))  # (a.__mul__: a * b)
    asked, with_self, wrt = asks_for_self(func, wrt)
    if asked and not with_self:  # the object's entry: it has none (see jvp_call)
        tangents = tuple(tangents)[1:]
    func, args, wrt, bound = unbound_call(func, args, kwargs, wrt, with_self)
    derivative, seed = _derivative_and_seed(func, args, kwargs, wrt, "forward")
    numeric = tuple(i for i, a in enumerate(args) if structure.carries_gradient(a)
                    or object_with_gradient(a))
    named = tuple(k for k, v in kwargs.items() if structure.carries_gradient(v)
                  or object_with_gradient(v))
    grads = vjp_call(derivative, args, {**kwargs, seed: tuple(tangents)}, gradient,
                     numeric + named + (seed,))
    by_position = dict(zip(numeric, grads[:len(numeric)]))
    by_keyword = dict(zip(named, grads[len(numeric):len(numeric) + len(named)]))
    tangents_gradient = tuple(grads[-1])
    if asked and not with_self:
        tangents_gradient = (None,) + tangents_gradient
    first = 1 if bound else 0  # the gradients of the call's own arguments, not of `self`
    return (tuple(by_position.get(i) for i in range(first, len(args))), tangents_gradient,
            {k: by_keyword.get(k) for k in kwargs}, by_position.get(0) if bound else None)


@adjoint(jvp_call)
def _jvp_call(y, function, arguments, keywords, tangents, wrt):
    transposed = jvp_call_transpose(function, arguments, keywords, tangents, wrt, d[y])
    d[arguments] = transposed[0]
    d[tangents] = transposed[1]
    d[keywords] = transposed[2]
    d[function] = transposed[3]


def vjp_call_tangent(func, args, kwargs, dy, wrt, arguments_tangent, dy_tangent,
                     keywords_tangent=None, function_tangent=None, after=None,
                     after_tangent=None):
    """The tangent of `vjp_call(func, args, kwargs, dy, wrt, after)` given tangents of args,
    dy, the keyword arguments (a dict, or None where none has one), the called object and
    `after`."""
    func = as_function(operator_method_version(func, args))  # (a.__mul__: a * b)
    asked, with_self, wrt = asks_for_self(func, wrt)
    if asked and not with_self:  # the object's entry: `after` (see vjp_call)
        return (after_tangent,) + tuple(vjp_call_tangent(func, args, kwargs, dy, wrt,
                                                         arguments_tangent, dy_tangent,
                                                         keywords_tangent))
    func, args, wrt, bound = unbound_call(func, args, kwargs, wrt, with_self)
    if bound:  # a method, or a module's call: `self` first
        arguments_tangent = (function_tangent,) + tuple(arguments_tangent)
    derivative, seed = _derivative_and_seed(func, args, kwargs, wrt, "reverse")
    numeric = tuple(i for i, a in enumerate(args) if structure.carries_gradient(a)
                    or has_tangent(arguments_tangent, i) and object_with_gradient(a))
    named = tuple(k for k, v in kwargs.items() if (structure.carries_gradient(v)
                                                   or object_with_gradient(v))
                  and keywords_tangent is not None and keywords_tangent.get(k) is not None)
    taking = _takes_object_gradient(derivative, after if with_self else None)
    if taking and after_tangent is None:
        after_tangent = structure.zeros_like(after)
    tangents = (tuple(arguments_tangent[i] for i in numeric)
                + tuple(keywords_tangent[k] for k in named)
                + tuple(after_tangent for _ in taking) + (dy_tangent,))
    out = jvp_call(derivative, args, {**kwargs, **taking, seed: dy}, tangents,
                   numeric + named + tuple(taking) + (seed,))[1]
    if with_self and after is not None and not taking:  # added to the object's gradient
        out = (structure.add(after_tangent, out[0]),) + tuple(out[1:])
    return out


@tangent(vjp_call)
def _vjp_call_tangent(y, function, arguments, keywords, dy, wrt, after=None):
    d[y] = vjp_call_tangent(function, arguments, keywords, dy, wrt, d[arguments], d[dy],
                            d[keywords], d[function], after, d[after])


@adjoint(vjp_call)
def _vjp_call(y, function, arguments, keywords, dy, wrt, after=None):
    transposed = vjp_call_transpose(function, arguments, keywords, dy, wrt, d[y], after)
    d[arguments] = transposed[0]
    d[dy] = transposed[1]
    d[keywords] = transposed[2]
    d[function] = transposed[3]
    d[after] = transposed[4]

