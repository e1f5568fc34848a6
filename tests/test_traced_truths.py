"""`and`, `or`, `not` and chained comparisons of traced numbers under autotrace.function.

Python's `a and b` is b where a is true, else a (`a or b` the other way round), computing b only
where it is needed: traced, a `cond` of the two operands, promoted to one dtype (a bool and a
float give a float). They gave a truth (`np.sum(x) or 5.0` was True). A function with no other
control flow than `not` or a chained comparison raised TracerConversionError.
"""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control import ControlFlowError
from tests.numeric import central_difference


def operands(x, i):
    return (np.sum(x) or 5.0, x[0] and x[1] * 3.0, (x[0] < 0) or x[2] > 1,
            x[0] > 0 and x[1] > 0 and x[2] > 0, x[2] * 2.0 or x[1] or -1.0,
            i < 3 and x[i] > 0)


def in_range(x):
    return 0 < x[0] < 2


def in_range_computed(x):
    return -1.0 <= np.sum(x) * 0.5 < x[1] * 10.0


def negated(x):
    return not (x[0] > 0)


POINTS = [np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.0, 0.0]), np.zeros(3),
          np.array([0.0, 3.0, -2.0]), np.array([2.5, -0.1, 0.7])]


@pytest.mark.parametrize("x", POINTS)
def test_and_or_give_the_operand_python_gives(x):
    traced = autotrace.function(operands)
    for index in (0, 2):
        for got, expected in zip(traced(x, index), operands(x, index)):
            assert got == expected
            # (the dtype: the operands', or a float where a bool meets a float)
            assert np.result_type(got) == (np.float64 if isinstance(expected, float)
                                           else np.result_type(expected))


@pytest.mark.parametrize("function", [in_range, in_range_computed, negated])
@pytest.mark.parametrize("x", POINTS)
def test_not_and_chained_comparisons_alone_are_converted(function, x):
    got = autotrace.function(function)(x)
    assert got == function(x) and isinstance(got, (bool, np.bool_))


def test_the_gradient_through_or_is_that_of_the_operand_taken():
    def loss(x):
        return (np.sum(x ** 2) - 1.0 or 5.0) * 2.0
    for x, expected in ((np.array([1.0, 2.0]), [4.0, 8.0]), (np.array([1.0, 0.0]), [0.0, 0.0])):
        np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(x), expected)
        np.testing.assert_allclose(autotrace.function(loss)(x), loss(x))


def short_circuits(x):
    return ((np.sum(x ** 2) > 1.0) and np.sum(np.sin(x))) + (
        (x[0] > 0) and (x[1] > 0) and np.prod(x)) + ((np.sum(x) > 0) or np.sum(x ** 3))


def rebound_test(x):
    t = np.sum(x) > 0  # (the `if` a gradient writes for `t = a and b`, but the user's own)
    if t:
        t = np.sum(x ** 3)
    return t * 2.0


@pytest.mark.parametrize("function", [short_circuits])
@pytest.mark.parametrize("x", [np.array([0.5, 1.0]), np.array([0.1, 0.2]), np.array([-0.5, 1.0]),
                               np.array([-0.5, -1.0])])
def test_traced_gradients_of_a_truth_or_a_number(function, x):
    # (the gradient's `if` left a bool on one side and a float on the other: refused)
    expected = central_difference(function, x)
    np.testing.assert_allclose(autotrace.grad(function)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(function))(x), expected,
                               rtol=1e-6, atol=1e-8)
    assert autotrace.function(function)(x) == function(x)


@pytest.mark.parametrize("transform", [lambda f: f, autotrace.grad, autotrace.value_and_grad])
def test_a_users_if_leaving_a_truth_or_a_number_is_refused(transform):
    # (Python gives a bool on one path and a float on the other: one graph cannot)
    with pytest.raises(ControlFlowError, match=(
            r"variable 't' is f64\[\] after the true branch and bool\[\] after the false "
            r"branch; both branches must give it the same shape and dtype")):
        autotrace.function(transform(rebound_test))(np.array([0.5, 1.0]))


def test_a_python_number_on_the_right_keeps_pythons_type_and_range():
    # (`or -1` beside uint8 raised OverflowError while tracing; a number the right side gave
    # came back a 0-d array, the left a NumPy scalar, from one trace)
    def peak(a):
        return np.max(a) or -1

    def total(x):
        return np.sum(x) or 1.0
    traced = autotrace.function(peak)
    for a in (np.array([3, 4], np.uint8), np.zeros(2, np.uint8)):
        assert traced(a) == peak(a)
    traced = autotrace.function(total)
    for x in (np.array([0.3, 0.4]), np.zeros(2)):
        got = traced(x)
        assert got == total(x) and type(got) is np.float64
    assert traced.trace_count == 1
