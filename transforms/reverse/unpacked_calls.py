"""The derivatives of calls that unpack their arguments: `f(*items)`, `f(**options)`.

A-normal form writes such a call as `apply_unpacked(f, arguments, keywords)` (see
runtime/derivatives/unpacking.py). Which arguments carry gradient is known only when the call
runs, so the rules below hand the call to `vjp_call` and `jvp_call` with the positions and
keywords of the floating-point arguments found then (and the object whose method `f` is, whose
gradient is that of `f`, as for a call resolved when it runs), and give each argument its own
gradient back: `d[arguments]` is a tuple with one entry per positional argument (None for a
shape's integers), `d[keywords]` a dict. The helpers have rules of their own, so a derivative
that contains such a call can be differentiated again.

Those derivatives run the function again, after the call itself ran it: a write into an
object's state (a batch norm's running mean) would be made twice, the derivative taken from
the state the first run left. Each run again is watched (runtime/derivatives/state_log.py
`writes_refused`): a write is taken back and refused, naming it and the call. A random draw
would give other numbers: each run again starts from the random states noted right before the
call (`states`, runtime/derivatives/random_states.py), and where those may not be all the call
draws from, its value is checked against the call's (unpacked_reruns.py `refuse_other_draws`).
"""
from __future__ import annotations

import inspect
from contextlib import contextmanager

import numpy as np

from ...runtime.derivatives.random_states import RANDOM_SOURCES, random_states, same_draws
from ...runtime.derivatives.state_log import writes_refused
from ...runtime.derivatives.structure import zeros_like
from ...runtime.derivatives.unpacking import (apply_unpacked, keywords_parts, keywords_tangent,
                                             merged_keywords)
from ..analysis.argument_writes import PARAMETERS_WRITTEN
from ...runtime.derivatives.objects import floating
from ..called_functions import bound_object, object_with_gradient
from ..wrt import SELF
from ..dynamic_calls import (jvp_call, jvp_call_tangent, vjp_call, vjp_call_tangent,
                             vjp_call_transpose)
from ..front.function_caches import made_from
from ..rules.core import adjoint, constant, d, tangent
from ..unpacked_reruns import RUNS_AGAIN_UNPACKED, calling_line, refuse_other_draws


@contextmanager
def _run_again(states):
    """Around a derivative that runs the function again, after apply_unpacked ran it: a write
    into an object's state, which the first run made, is refused (the second run saw it); the
    random sources draw what they drew for the call (`states`, as they were before it)."""
    with writes_refused(lambda: "autotrace cannot differentiate this write into an object's "
                        f"state here: {RUNS_AGAIN_UNPACKED}{calling_line()}"):
        with same_draws(states):
            yield


def floating_wrt(function, arguments: tuple, keywords: dict) -> tuple:
    """What vjp_call differentiates a call of `function` for: the object whose method it is
    (SELF), then the positions and keywords of the arguments holding floating-point values (a
    shape's integers have none), or objects whose attributes carry gradient (a random
    generator's carry none)."""
    def carries(value):
        return floating(value) or object_with_gradient(value) and not isinstance(
            value, RANDOM_SOURCES)
    return ((SELF,) if bound_object(function) is not None or _builtin_method_of_a_value(
        function) else ()) + tuple(i for i, a in enumerate(arguments) if carries(a)) + tuple(
        k for k, v in keywords.items() if carries(v))


def _builtin_method_of_a_value(function) -> bool:
    """Whether `function` is a builtin method of a floating array or number, or of a list,
    tuple or dict holding one (`a.sum` of an ndarray, `items.pop`): its object carries
    gradient, which vjp_call and jvp_call ask for (and refuse, where the method has no rule,
    as for a call of it without unpacking), not left out as none."""
    owner = getattr(function, "__self__", None)
    return not inspect.ismethod(function) and isinstance(
        owner, (np.ndarray, np.generic, float, complex, list, tuple, dict)) and floating(owner)


def by_argument(gradients, wrt: tuple, arguments: tuple, keywords: dict) -> tuple:
    """`(the function's, a tuple by position, a dict by keyword)` from the gradients (or
    tangents) vjp_call gives for `wrt`."""
    found = dict(zip(wrt, gradients))
    return (found.get(SELF), tuple(found.get(i) for i in range(len(arguments))),
            type(keywords)((k, found.get(k)) for k in keywords))


def in_wrt_order(parts, wrt: tuple, arguments: tuple, keywords: dict) -> tuple:
    """The inverse of `by_argument`: the entries for `wrt`, in its order (zeros for none)."""
    own, positional, named = parts if parts is not None else (None, (), {})
    positional, named = positional or (), named or {}
    values = []
    for w in wrt:
        if w == SELF:
            values.append(own)
            continue
        given = (positional[w] if w < len(positional) else None) if isinstance(w, int) \
            else named.get(w)
        like = arguments[w] if isinstance(w, int) else keywords[w]
        values.append(zeros_like(like) if given is None else given)
    return tuple(values)


def unpacked_vjp(function, arguments, keywords, dy, states=None, value=None):
    """The gradients of `apply_unpacked(function, arguments, keywords, states)`, whose value
    was `value`, given `dy`: of the function (of the object whose method it is), of each
    positional argument (a tuple), of each keyword (a dict)."""
    wrt = floating_wrt(function, arguments, keywords)
    if not wrt:
        return by_argument((), wrt, arguments, keywords)
    with _run_again(states):
        gradients = vjp_call(function, arguments, keywords, dy, wrt)
        refuse_other_draws(function, arguments, keywords, states, value)
    return by_argument(gradients, wrt, arguments, keywords)


def unpacked_vjp_transpose(function, arguments, keywords, dy, gradient, states=None):
    """The gradients of `unpacked_vjp(function, arguments, keywords, dy, states)` for the
    function, arguments, dy and keywords, given the gradient of its result."""
    wrt = floating_wrt(function, arguments, keywords)
    if not wrt:
        return None, by_argument((), wrt, arguments, keywords)[1], None, {}
    flat = in_wrt_order(gradient, wrt, arguments, keywords)
    with _run_again(states):
        transposed = vjp_call_transpose(function, arguments, keywords, dy, wrt, flat)
    return transposed[3], transposed[0], transposed[1], transposed[2]


def unpacked_vjp_tangent(function, arguments, keywords, dy, function_tangent,
                         arguments_tangent, dy_tangent, keywords_tangent, states=None):
    """The tangent of `unpacked_vjp(function, arguments, keywords, dy, states)`."""
    wrt = floating_wrt(function, arguments, keywords)
    if not wrt:
        return by_argument((), wrt, arguments, keywords)
    with _run_again(states):
        tangents = vjp_call_tangent(function, arguments, keywords, dy, wrt,
                                    arguments_tangent or zeros_like(arguments), dy_tangent,
                                    keywords_tangent, function_tangent)
    return by_argument(tangents, wrt, arguments, keywords)


def unpacked_jvp(function, arguments, keywords, function_tangent, arguments_tangent,
                 keywords_tangent, states=None, value=None):
    """The tangent of `apply_unpacked(function, arguments, keywords, states)`, whose value was
    `value`, given the tangents of the function (None for one that carries none), its
    arguments (a tuple) and keywords (a dict)."""
    wrt = floating_wrt(function, arguments, keywords)
    if function_tangent is None and wrt[:1] == (SELF,):
        wrt = wrt[1:]  # the object whose method it is carries no tangent
    if not wrt:  # (the call not run again: `items.pop` would change its list twice)
        return zeros_like(function(*arguments, **keywords) if value is None else value)
    tangents = in_wrt_order((function_tangent, arguments_tangent, keywords_tangent), wrt,
                            arguments, keywords)
    with _run_again(states):
        again, tangent = jvp_call(function, arguments, keywords, tangents, wrt)
    refuse_other_draws(function, arguments, keywords, states, value, again)
    return tangent


def unpacked_jvp_tangent(function, arguments, keywords, function_tangent, arguments_tangent,
                         keywords_tangent, tangents_tangent, states=None):
    """The tangent of `unpacked_jvp(function, arguments, keywords, function_tangent,
    arguments_tangent, keywords_tangent, states)` given tangents of all six
    (`tangents_tangent`: of the last three, in that order)."""
    wrt = floating_wrt(function, arguments, keywords)
    if function_tangent is None and wrt[:1] == (SELF,):
        wrt = wrt[1:]
    if not wrt:
        return zeros_like(function(*arguments, **keywords))
    given = (function_tangent, arguments_tangent, keywords_tangent)
    tangents = in_wrt_order(given, wrt, arguments, keywords)
    second = in_wrt_order(tangents_tangent[3:], wrt, arguments, keywords)
    with _run_again(states):
        return jvp_call_tangent(function, arguments, keywords, tangents, wrt,
                                tangents_tangent[1], tangents_tangent[2], second,
                                tangents_tangent[0])[1]


constant(floating_wrt)
constant(random_states)
# (it writes into none of its arguments: the analysis of writes into arguments of the code that
# calls it, generated or autotrace's, need not read its source)
made_from(random_states, PARAMETERS_WRITTEN)["written"] = ()


@adjoint(apply_unpacked)
def _apply_unpacked(y, function, arguments, keywords, states=None):
    gradients = unpacked_vjp(function, arguments, keywords, d[y], states, y)
    d[function] = gradients[0]
    d[arguments] = gradients[1]
    d[keywords] = gradients[2]


@tangent(apply_unpacked)
def _apply_unpacked_tangent(y, function, arguments, keywords, states=None):
    d[y] = unpacked_jvp(function, arguments, keywords, d[function], d[arguments], d[keywords],
                        states, y)


@tangent(unpacked_jvp)
def _unpacked_jvp_tangent(y, function, arguments, keywords, function_tangent,
                          arguments_tangent, keywords_tangent, states=None, value=None):
    d[y] = unpacked_jvp_tangent(function, arguments, keywords, function_tangent,
                                arguments_tangent, keywords_tangent,
                                (d[function], d[arguments], d[keywords], d[function_tangent],
                                 d[arguments_tangent], d[keywords_tangent]), states)


@adjoint(unpacked_vjp)
def _unpacked_vjp(y, function, arguments, keywords, dy, states=None, value=None):
    transposed = unpacked_vjp_transpose(function, arguments, keywords, dy, d[y], states)
    d[function] = transposed[0]
    d[arguments] = transposed[1]
    d[dy] = transposed[2]
    d[keywords] = transposed[3]


@tangent(unpacked_vjp)
def _unpacked_vjp_tangent(y, function, arguments, keywords, dy, states=None, value=None):
    d[y] = unpacked_vjp_tangent(function, arguments, keywords, dy, d[function], d[arguments],
                                d[dy], d[keywords], states)


# merged_keywords and its two helpers are linear, and each other's transposes.
@adjoint(merged_keywords)
def _merged_keywords(y, *dicts):
    d[dicts] = keywords_parts(d[y], dicts)


@tangent(merged_keywords)
def _merged_keywords_tangent(y, *dicts):
    d[y] = keywords_tangent(d[dicts], dicts)


@adjoint(keywords_parts)
def _keywords_parts(y, gradient, dicts):
    d[gradient] = keywords_tangent(d[y], dicts)


@tangent(keywords_parts)
def _keywords_parts_tangent(y, gradient, dicts):
    d[y] = keywords_parts(d[gradient], dicts)


@adjoint(keywords_tangent)
def _keywords_tangent(y, tangents, dicts):
    d[tangents] = keywords_parts(d[y], dicts)


@tangent(keywords_tangent)
def _keywords_tangent_tangent(y, tangents, dicts):
    d[y] = keywords_tangent(d[tangents], dicts)
