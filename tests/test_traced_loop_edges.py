"""Traced derivatives of loops with a `break` on a traced value, which run as graph loops.

A derivative of a derivative notes the object state before each call it runs again
(`_written1 = state_writes_log(...)`), and a loop that calls a helper carries that record from
one iteration to the next: a traced loop carries the record its body made, as a value known
while tracing."""
import numpy as np
import pytest

import autotrace


def cubic(w):
    return np.sum(w ** 2) + np.sum(w ** 3) / 3


def shrink_until_small(w):
    for it in range(10):
        loss = cubic(w)
        if loss < 0.1:
            break
        w = w * 0.5
    return loss


def shrink_hessian(w):
    """By hand: the loop stops after k halvings at v = w / 2**k, where loss = cubic(v), whose
    Hessian in v is diag(2 + 2 v); in w it is that times (1 / 2**k)**2."""
    scale = 1.0
    while cubic(w * scale) >= 0.1:
        scale *= 0.5
    return np.diag(2 + 2 * w * scale) * scale ** 2


TANGENT = np.array([1.0, -2.0, 0.5])

SECOND_ORDER = {
    "function(hessian)": lambda f: autotrace.function(autotrace.hessian(f)),
    "function(jacfwd(grad))": lambda f: autotrace.function(autotrace.jacfwd(autotrace.grad(f))),
    "function(jacrev(grad))": lambda f: autotrace.function(autotrace.jacrev(autotrace.grad(f))),
    "function(forward(grad))": lambda f: autotrace.function(
        lambda w: autotrace.forward(autotrace.grad(f))(w, tangent=TANGENT)[1]),
}


@pytest.mark.parametrize("form", list(SECOND_ORDER))
def test_second_derivative_of_a_loop_that_calls_a_helper_and_breaks(form):
    x = np.array([0.3, -0.8, 0.5])  # two halvings
    expected = shrink_hessian(x)
    if form == "function(forward(grad))":
        expected = expected @ TANGENT
    np.testing.assert_allclose(SECOND_ORDER[form](shrink_until_small)(x), expected, rtol=1e-12)
    x = np.array([1.0, 2.0, -0.5])  # four halvings: the same trace, another trip count
    expected = shrink_hessian(x)
    if form == "function(forward(grad))":
        expected = expected @ TANGENT
    np.testing.assert_allclose(SECOND_ORDER[form](shrink_until_small)(x), expected, rtol=1e-12)

