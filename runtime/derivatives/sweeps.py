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


def primal_sweep(adjoint):
    """Run the derivative `adjoint` (a generator, not started) up to its adjoint sweep;
    return the value of the call."""
    return next(adjoint)


def adjoint_sweep(adjoint, gradient):
    """Run the adjoint sweep of `adjoint`, whose primal sweep ran, given the gradient of the
    call's value; return the gradients of the call's arguments."""
    try:
        adjoint.send(gradient)
    except StopIteration as finished:
        return finished.value
    raise RuntimeError("internal: a derivative's adjoint sweep handed back a second value")
