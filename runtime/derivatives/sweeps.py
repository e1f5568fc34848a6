"""A called function's derivative, run in two halves: its primal sweep where the call is, its
adjoint sweep where the caller's adjoint sweep reaches the call.

The derivative of a function that other differentiated code calls is a generator: it runs
the function's primal sweep, hands back the value (`dy = yield value`), and, sent the
gradient of that value, runs its adjoint sweep and returns the gradients. The caller's primal
sweep calls `primal_sweep` in place of the call, so the function runs once, its side effects
(a counter, a cache the object keeps, a lazily made parameter) happen once, and what its
adjoint sweep needs is kept from that run instead of computed again.
"""
from __future__ import annotations

import weakref

from .objects import refuse_recomputed_at_writes
from .state_log import innermost_log
from .structure import NO_GRADIENT, add, zeros_like


def primal_sweep(adjoint):
    """Run the derivative `adjoint` (a generator, not started) up to its adjoint sweep;
    return the value of the call."""
    log = innermost_log()  # (the call's, where a derivative of a derivative notes its writes)
    value = next(adjoint)
    if isinstance(value, TakingObjectGradient):
        _taking[adjoint] = log
        value = value.value
    return value


def adjoint_sweep(adjoint, gradient, after=None, *, with_object: bool = False,
                  by_user: bool = False):
    """Run the adjoint sweep of `adjoint`, whose primal sweep ran, given the gradient of the
    call's value; return the gradients of the call's arguments.

    with_object: the call is a method's, and `after` the gradient its caller has of the object
    after the call (None: none), which the gradients returned then include: the method's
    derivative takes it where it writes into the object's state (it yields a
    TakingObjectGradient),
    so that what the caller reads back of what the method wrote passes its gradient on to
    what the method wrote it from; else it is added to the object's gradient returned."""
    taken = with_object and adjoint in _taking
    log = _taking.get(adjoint) if taken else None
    if gradient is None and not by_user:  # (an object's zero gradient: structure.NO_GRADIENT;
        gradient = NO_GRADIENT  # `by_user`: the user's call, where None asks for ones)
    try:
        adjoint.send(SentGradients(gradient, after) if taken else gradient)
    except StopIteration as finished:
        gradients = finished.value
    else:
        raise RuntimeError("internal: a derivative's adjoint sweep handed back a second value")
    return object_gradient_first(gradients, after, taken, log) if with_object else gradients


def object_gradient_first(gradients: tuple, after, taken: bool, log=None) -> tuple:
    """The gradients of a method's call, the first its object's before the call, given the
    gradient `after` its caller has of the object after the call (None: none), which the
    method's derivative took (`taken`: it started its adjoint sweep from it, and what it
    hands back includes it) or not (it is added: refused where it is the gradient of what
    the method wrote, runtime/derivatives/objects.py `add_objects`).

    A gradient taken may come from a derivative of a derivative's recomputation of a later
    call (ObjectGradient's `recomputed`): of the state before that call, which is the state
    after this one. One from the recomputation of this very call (whose writes `log` notes,
    where a derivative of a derivative notes them) is of the state before it: held apart
    from it outside loops (transforms/reverse/reverse_control.py `held_apart_adjoint`), refused
    where it reaches a slot the call overwrote."""
    if not taken and after is not None:
        return (add(after, gradients[0]),) + tuple(gradients[1:])
    if taken and log is not None:
        refuse_recomputed_at_writes(after, getattr(gradients[0], "written", ()), log)
    return gradients


class SentGradients:
    """What a caller sends a method's derivative that takes its object's gradient: the
    gradient of the call's value, and that of the object after the call."""

    __slots__ = ("value", "after")

    def __init__(self, value, after):
        self.value, self.after = value, after


class TakingObjectGradient:
    """The value a method's derivative run in halves yields where it takes the gradient of its
    object after the call from what its caller sends (`sent_gradients`)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# The derivatives running that yielded a TakingObjectGradient -> the log of their call (see
# `object_gradient_first`), or None.
_taking = weakref.WeakKeyDictionary()


def sent_gradients(sent, value):
    """(the gradient of the call's value, that of the object `value` after the call) from what
    the caller sent: zeros for the object where it sent none."""
    if isinstance(sent, SentGradients):
        return sent.value, sent_object_gradient(sent.after, value)
    return sent, zeros_like(value)


def sent_object_gradient(after, value):
    """The gradient of the object `value` after a call of its method, as the method's
    derivative run whole takes it from its caller (a keyword, `vjp_call`'s `after`): zeros
    where it sent none."""
    return zeros_like(value) if after is None else after
