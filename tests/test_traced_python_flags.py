"""autotrace.function(autotrace.grad(f)) where f's control flow tests a Python bool: a flag that
the derivative keeps (`not _returned`, after an early return) or a condition on Python values,
inside a traced `if` or loop. The flag stays a Python bool, so the adjoint `if` on it stays a
Python `if`; its gradients agree with eager autotrace.grad and with finite differences."""
import inspect

import numpy as np
import pytest

import autotrace
from tests.test_traced_gradients import assert_one_trace_serves


# --- statements after a return in a traced branch -----------------------------------------------
# Unreachable, but they stay in the derivative under the flag `not _returned`, a Python False.
# The flag must stay a Python bool after the traced `if`, so that the adjoint `if` on it stays a
# Python `if` too and never reads the values its body would have saved.

def loop_after_a_return_in_a_traced_branch(x, a):
    if np.mean(x) < -0.64:
        return np.sum(x) * a
        while a < 2:
            a = np.cos(a)
    return np.sum(x) * a


def assignment_after_a_return_in_a_traced_else(x, a):
    if np.cos(x)[-1] < -0.12:
        pass
    else:
        return np.sum(x) * a
        x = np.exp(x)
    return np.sum(np.sin(x)) * a


def item_write_after_a_return_in_a_traced_branch(x, a):
    if np.tanh(x).sum() > -0.36:
        t = np.copy((x - np.mean(x))[np.array([2, 0, 1])])
        return np.sum(t ** 2) + np.sum(x ** 2) + np.sum(x) * a
        x[-1] = x[::-1][1]
    return np.sum(x ** 2) + np.sum(x) * a


@pytest.mark.parametrize("function", [loop_after_a_return_in_a_traced_branch,
                                      assignment_after_a_return_in_a_traced_else,
                                      item_write_after_a_return_in_a_traced_branch])
def test_statements_after_a_return_in_a_traced_branch(function):
    returns, goes_on = np.array([-1.5, -0.7, 2.0]), np.array([-1.5, -0.9, -1.3])
    assert_one_trace_serves(function, [returns, goes_on, -returns, -goes_on], 0.8)


def test_statements_after_a_return_in_a_traced_branch_by_hand():
    traced = autotrace.function(autotrace.grad(loop_after_a_return_in_a_traced_branch, wrt=1))
    x = np.array([-1.0, -2.0, 0.5])
    assert traced(x, 0.8) == pytest.approx(-2.5, abs=1e-14)
    assert traced(-x, 0.8) == pytest.approx(2.5, abs=1e-14)


# --- a condition on Python values inside a traced loop ------------------------------------------
# `a > 5.0` is a Python bool inside autotrace.function (a float argument is a constant). The
# loop must keep it, and the values saved with it, a Python bool: the adjoint `if` on it then
# stays a Python `if`, and never traces the branch whose saved values were never assigned.

def python_and_traced_condition_in_a_traced_loop(x, a):
    v = np.sin(x) * a
    k = np.tanh(np.sum(x))
    while k < 2.0:
        k = k + 0.5
        if a > 5.0 and x[-1] > -0.78:
            v[0] *= np.sum(x)
        else:
            v = v * np.cos(x)
    return np.sum(v ** 2) + np.sum(x) * a


def python_condition_beside_a_break_in_a_traced_loop(x, a):
    v = np.sin(x) * a
    w = np.tanh(v.sum())
    while w < 1.17:
        if -0.62 > 0.41 and x[-1] > -0.78:
            v[0] *= np.log(np.exp(x) + 1.0).sum()
        else:
            if x[0] > -0.27:
                break
            a = np.exp(np.tanh(np.cos(-0.66)))
    return np.sum(v ** 2) + np.sum(np.sin(x)) + np.sum(x) * a


def numpy_condition_in_a_traced_loop(x, a):
    # (random program 3156) `np.sqrt(...) > 0.5` is a NumPy bool, np.True_, known while tracing:
    # a flag as a Python bool is; the adjoint if on it traced the branch never taken, whose
    # saved values were never assigned (TypeError: float / NoneType)
    w = np.tanh(a)
    while w < 1.03:
        w = w + 0.5 + np.dot(x, x) ** 2
        if (a + (-0.79)) > 0.56 or np.sqrt(np.sin(-0.58) ** 2 + 1.0) > 0.5:
            t = x
        else:
            x = np.log(1.0 + x[::-1] ** 2)
    return np.sum(np.sin(x)) + np.sum(x) * a


@pytest.mark.parametrize("function", [python_and_traced_condition_in_a_traced_loop,
                                      python_condition_beside_a_break_in_a_traced_loop,
                                      numpy_condition_in_a_traced_loop])
def test_condition_on_python_values_in_a_traced_loop(function):
    inputs = [np.array([0.78, -1.42, -0.97, -0.69]), np.array([0.2, 1.4, 0.9, 0.7]),
              np.array([1.5, 1.4, 0.9, 0.7])]  # several iterations, one, none
    assert_one_trace_serves(function, inputs, 0.52)


def none_until_a_traced_branch(x, a):
    n = None
    if np.sum(x) > 0:
        n = 2
    y = x ** 2
    if n is None:
        y = x ** 3
    return np.sum(y) * a


def none_until_a_traced_loop(x, a):
    seen = None
    k = np.sum(x)
    while k < 2.0:
        k = k + 1.0
        seen = a > 5.0
    y = x ** 2
    if seen is None:
        y = y * x
    return np.sum(y) * a


def nothing():
    return None


def none_from_a_call(x, a):
    n = nothing()
    if np.sum(x) > 0:
        n = x[1] * 2.0
    y = x ** 2
    if n is None:
        y = x ** 3
    return np.sum(y) * a


OPTIONS = {"scale": None}


def none_from_an_item_through_a_name(x, a):
    given = OPTIONS["scale"]
    n = given
    if np.sum(x) > 0:
        n = x[1] * 2.0
    y = x ** 2
    if n is None:
        y = x ** 3
    return np.sum(y) * a


@pytest.mark.parametrize("function, line, statement", [
    (none_until_a_traced_branch, 2, "if np.sum(x) > 0:"),
    (none_until_a_traced_loop, 3, "while k < 2.0:"),
    (none_from_a_call, 2, "if np.sum(x) > 0:"),
    (none_from_an_item_through_a_name, 3, "if np.sum(x) > 0:")])
def test_a_users_none_is_a_value_not_a_placeholder(function, line, statement):
    """A variable the user sets to None (`n = None`, or a value that may be None: a call of a
    Python function, an item of a dict, a name bound to either) and assigns under a traced
    condition cannot be traced (the traced function refuses it too): the traced gradient
    refuses it naming the user's line, where it gave zeros for the None and so took the wrong
    branch of `is None`."""
    x, a = np.array([-0.3, -0.7, -1.1, 0.2]), 0.8
    first = inspect.getsourcelines(function)[1]
    for traced in (autotrace.function(function), autotrace.function(autotrace.grad(function))):
        with pytest.raises(autotrace.runtime.tracing.control_scope.ControlFlowError) as error:
            traced(x, a)
        assert str(error.value).startswith(f"{__file__}:{first + line}: {statement}")
        assert "None" in str(error.value)
    # Eagerly, the gradient is the one by hand: the sum is negative, so the branch leaves n
    # None (y = x ** 3), and the loop runs, setting `seen` (y = x ** 2).
    by_hand = 2 * x * a if function is none_until_a_traced_loop else 3 * x ** 2 * a
    np.testing.assert_allclose(autotrace.grad(function)(x, a), by_hand, rtol=1e-14)
