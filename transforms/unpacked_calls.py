"""The derivatives of calls that unpack their arguments: `f(*items)`, `f(**options)`.

Front-end passes write such a call as `apply_unpacked(f, arguments, keywords)` (or, for a method
of an object, `apply_method_unpacked(p, 'method', arguments, keywords)`; see
runtime/derivatives/unpacking.py). Which arguments carry gradient is known only when the call
runs, so the rules below hand the call to `vjp_call` and `jvp_call` with the positions and
keywords of the floating-point arguments found then, and give each argument its own gradient
back: `d[arguments]` is a tuple with one entry per positional argument (None for a shape's
integers), `d[keywords]` a dict. The helpers have rules of their own, so a derivative that
contains such a call can be differentiated again.
"""
from __future__ import annotations

from ..runtime.derivatives.structure import zeros_like
from ..runtime.derivatives.unpacking import (apply_method_unpacked, apply_unpacked,
                                             keywords_parts, keywords_tangent, merged_keywords)
from .dynamic_calls import (SELF, _floating, jvp_call, vjp_call, vjp_call_tangent,
                            vjp_call_transpose)
from .rules.core import adjoint, constant, d, tangent


def floating_wrt(arguments: tuple, keywords: dict) -> tuple:
    """The positions and keywords of the arguments gradients are taken of: those holding
    floating-point values (a shape's integers have none)."""
    return tuple(i for i, a in enumerate(arguments) if _floating(a)) + tuple(
        k for k, v in keywords.items() if _floating(v))


def by_argument(gradients, wrt: tuple, arguments: tuple, keywords: dict) -> tuple:
    """`(tuple by position, dict by keyword)` from the gradients vjp_call gives for `wrt`."""
    found = dict(zip(wrt, gradients))
    return (tuple(found.get(i) for i in range(len(arguments))),
            type(keywords)((k, found.get(k)) for k in keywords))


def in_wrt_order(parts, wrt: tuple, arguments: tuple, keywords: dict) -> tuple:
    """The inverse of `by_argument`: the entries for `wrt`, in its order (zeros for none)."""
    positional, named = parts if parts is not None else ((), {})
    positional, named = positional or (), named or {}
    values = []
    for w in wrt:
        given = (positional[w] if w < len(positional) else None) if isinstance(w, int) \
            else named.get(w)
        like = arguments[w] if isinstance(w, int) else keywords[w]
        values.append(zeros_like(like) if given is None else given)
    return tuple(values)


def unpacked_vjp(function, arguments, keywords, dy):
    """The gradients of `apply_unpacked(function, arguments, keywords)`, given `dy`:
    `(one per positional argument, a dict of one per keyword)`."""
    wrt = floating_wrt(arguments, keywords)
    if not wrt:
        return by_argument((), wrt, arguments, keywords)
    return by_argument(vjp_call(function, arguments, keywords, dy, wrt), wrt, arguments,
                       keywords)


def unpacked_vjp_transpose(function, arguments, keywords, dy, gradient):
    """The gradients of `unpacked_vjp(function, arguments, keywords, dy)` for arguments, dy
    and keywords, given the gradient of its result."""
    wrt = floating_wrt(arguments, keywords)
    if not wrt:
        return by_argument((), wrt, arguments, keywords)[0], None, {}
    flat = in_wrt_order(gradient, wrt, arguments, keywords)
    transposed = vjp_call_transpose(function, arguments, keywords, dy, wrt, flat)
    return transposed[0], transposed[1], transposed[2]


def unpacked_vjp_tangent(function, arguments, keywords, dy, arguments_tangent, dy_tangent,
                         keywords_tangent):
    """The tangent of `unpacked_vjp(function, arguments, keywords, dy)`."""
    wrt = floating_wrt(arguments, keywords)
    if not wrt:
        return by_argument((), wrt, arguments, keywords)
    tangents = vjp_call_tangent(function, arguments, keywords, dy, wrt,
                                arguments_tangent or zeros_like(arguments), dy_tangent,
                                keywords_tangent)
    return by_argument(tangents, wrt, arguments, keywords)


def unpacked_jvp(function, arguments, keywords, arguments_tangent, keywords_tangent):
    """The tangent of `apply_unpacked(function, arguments, keywords)` given the tangents of
    its arguments (a tuple) and keywords (a dict)."""
    wrt = floating_wrt(arguments, keywords)
    if not wrt:
        return zeros_like(function(*arguments, **keywords))
    tangents = in_wrt_order((arguments_tangent, keywords_tangent), wrt, arguments, keywords)
    return jvp_call(function, arguments, keywords, tangents, wrt)[1]


def method_vjp(owner, method: str, arguments, keywords, dy):
    """The gradients of `apply_method_unpacked(owner, method, arguments, keywords)`: of the
    object, of each positional argument (a tuple), of each keyword (a dict)."""
    wrt = floating_wrt(arguments, keywords)
    gradients = vjp_call(getattr(owner, method), arguments, keywords, dy, (SELF,) + wrt)
    return (gradients[0],) + by_argument(gradients[1:], wrt, arguments, keywords)


def method_vjp_transpose(owner, method: str, arguments, keywords, dy, gradient):
    """The gradients of `method_vjp(owner, method, arguments, keywords, dy)` for the object,
    arguments, dy and keywords, given the gradient of its result."""
    wrt = floating_wrt(arguments, keywords)
    flat = (gradient[0],) + in_wrt_order(gradient[1:], wrt, arguments, keywords)
    transposed = vjp_call_transpose(getattr(owner, method), arguments, keywords, dy,
                                    (SELF,) + wrt, flat)
    return transposed[3], transposed[0], transposed[1], transposed[2]


def method_vjp_tangent(owner, method: str, arguments, keywords, dy, owner_tangent,
                       arguments_tangent, dy_tangent, keywords_tangent):
    """The tangent of `method_vjp(owner, method, arguments, keywords, dy)`."""
    wrt = floating_wrt(arguments, keywords)
    tangents = vjp_call_tangent(getattr(owner, method), arguments, keywords, dy, (SELF,) + wrt,
                                arguments_tangent or zeros_like(arguments), dy_tangent,
                                keywords_tangent, owner_tangent)
    return (tangents[0],) + by_argument(tangents[1:], wrt, arguments, keywords)


def method_jvp(owner, method: str, arguments, keywords, owner_tangent, arguments_tangent,
               keywords_tangent):
    """The tangent of `apply_method_unpacked(owner, method, arguments, keywords)`."""
    wrt = floating_wrt(arguments, keywords)
    tangents = in_wrt_order((arguments_tangent, keywords_tangent), wrt, arguments, keywords)
    return jvp_call(getattr(owner, method), arguments, keywords, (owner_tangent,) + tangents,
                    (SELF,) + wrt)[1]


constant(floating_wrt)


@adjoint(apply_unpacked)
def _apply_unpacked(y, function, arguments, keywords):
    gradients = unpacked_vjp(function, arguments, keywords, d[y])
    d[arguments] = gradients[0]
    d[keywords] = gradients[1]


@tangent(apply_unpacked)
def _apply_unpacked_tangent(y, function, arguments, keywords):
    d[y] = unpacked_jvp(function, arguments, keywords, d[arguments], d[keywords])


@adjoint(unpacked_vjp)
def _unpacked_vjp(y, function, arguments, keywords, dy):
    transposed = unpacked_vjp_transpose(function, arguments, keywords, dy, d[y])
    d[arguments] = transposed[0]
    d[dy] = transposed[1]
    d[keywords] = transposed[2]


@tangent(unpacked_vjp)
def _unpacked_vjp_tangent(y, function, arguments, keywords, dy):
    d[y] = unpacked_vjp_tangent(function, arguments, keywords, dy, d[arguments], d[dy],
                                d[keywords])


@adjoint(apply_method_unpacked)
def _apply_method_unpacked(y, owner, method, arguments, keywords):
    gradients = method_vjp(owner, method, arguments, keywords, d[y])
    d[owner] = gradients[0]
    d[arguments] = gradients[1]
    d[keywords] = gradients[2]


@tangent(apply_method_unpacked)
def _apply_method_unpacked_tangent(y, owner, method, arguments, keywords):
    d[y] = method_jvp(owner, method, arguments, keywords, d[owner], d[arguments], d[keywords])


@adjoint(method_vjp)
def _method_vjp(y, owner, method, arguments, keywords, dy):
    transposed = method_vjp_transpose(owner, method, arguments, keywords, dy, d[y])
    d[owner] = transposed[0]
    d[arguments] = transposed[1]
    d[dy] = transposed[2]
    d[keywords] = transposed[3]


@tangent(method_vjp)
def _method_vjp_tangent(y, owner, method, arguments, keywords, dy):
    d[y] = method_vjp_tangent(owner, method, arguments, keywords, dy, d[owner], d[arguments],
                              d[dy], d[keywords])


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
