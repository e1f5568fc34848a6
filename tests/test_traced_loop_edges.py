"""Traced derivatives of loops with a `break` on a traced value, which run as graph loops.

A derivative of a derivative notes the object state before each call it runs again
(`_written1 = state_writes_log(...)`), and a loop that calls a helper carries that record from
one iteration to the next: a traced loop carries the record its body made, as a value known
while tracing. An adjoint sweep's accumulator starts in its primal's dtype (`bx =
zeros_like(x)`, float32) and, where the primal loop computes in float64, takes float64 in its
first iteration, as it does run as written; a user's variable whose dtype changes from one
iteration to the next is refused at the user's line."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control import ControlFlowError
from tests.numeric import central_difference


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


def fixed_point_break(x):
    z = np.zeros(6)
    for i in range(100):
        z_new = np.tanh(0.5 * z + x)
        if np.max(np.abs(z_new - z)) < 1e-10:
            z = z_new
            break
        z = z_new
    return np.sum(z ** 2)


def test_float32_gradient_of_a_loop_that_computes_in_float64():
    x = np.array([0.3, -0.8, 1.2, 0.05, -0.2, 0.7], dtype=np.float32)
    eager = autotrace.grad(fixed_point_break)(x)
    traced = autotrace.function(autotrace.grad(fixed_point_break))(x)
    assert eager.dtype == traced.dtype == np.float32
    np.testing.assert_array_equal(traced, eager)
    expected = central_difference(fixed_point_break, x.astype(np.float64))
    np.testing.assert_allclose(traced, expected, rtol=1e-6)


def float32_state(x):
    z = np.zeros(6, np.float32)
    for i in range(100):
        z = np.tanh(0.5 * z + x)
        if np.max(np.abs(z)) < 1e-10:
            break
    return np.sum(z ** 2)


def test_a_variable_whose_dtype_changes_in_the_primal_loop_is_refused():
    x = np.array([0.3, -0.8, 1.2, 0.05, -0.2, 0.7])
    line = float32_state.__code__.co_firstlineno + 2
    with pytest.raises(ControlFlowError) as error:
        autotrace.function(autotrace.grad(float32_state))(x)
    message = str(error.value)
    assert message.startswith(f"{__file__}:{line}: for i in range(100): (derivative code ")
    assert ("variable 'z' changes from f32[6] to f64[6] in one iteration of this for loop on a "
            "traced value; a traced loop must keep each variable's shape and dtype") in message


class _Counter:
    def __init__(self):
        self.n = 0

    def step(self, v):
        self.n += 1  # a write into the object's state, no gradient
        return v * 1.1


def _count_until_large(x):
    counter, v = _Counter(), x[0]
    for i in range(6):
        v = counter.step(v) + x[1] * x[2]
        if v > 1.0:
            break
    return v * counter.n


def test_a_state_writing_call_in_a_traced_loop_is_refused_under_a_second_derivative():
    # the writes would be noted once, while the body was traced, and read back for every
    # iteration: a Hessian of 2/3 of its value (c.n read as 4 for 6)
    x = np.array([0.3, -0.4, 0.5])
    expected = autotrace.hessian(_count_until_large)(x)  # eagerly: right
    np.testing.assert_allclose(expected, [central_difference(
        lambda t: autotrace.grad(_count_until_large)(t)[i], x) for i in range(3)],
        rtol=1e-5, atol=1e-6)
    for second in (autotrace.hessian, lambda f: autotrace.jacfwd(autotrace.grad(f))):
        with pytest.raises(ControlFlowError, match=r"a call in this for loop writes into an "
                           r"object's state \(attribute 'n' of a _Counter, written at "
                           r"test_traced_loop_edges.py:\d+\), and autotrace cannot trace a "
                           r"second derivative"):
            autotrace.function(second(_count_until_large))(x)
