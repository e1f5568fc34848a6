"""Python's builtins and math functions in differentiated code: those that pass values through
in ways autotrace does not follow are refused at the user's line with what to write instead,
never a silent zero gradient; math.copysign and math.fmod have their NumPy twins' rules."""
import math

import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError
from tests.numeric import central_difference, check_every_mode

X = np.array([0.3, -0.7, 1.2])


def first_of_an_iterator(x):
    return np.sum(next(iter([x * 2.0, x * 3.0])) ** 2)


def remainder_by_divmod(x):
    quotient, remainder = divmod(x, 1.0)
    return np.sum(remainder ** 2)


@pytest.mark.parametrize("function, message", [
    (first_of_an_iterator, "no derivative rule for next: autotrace follows no iterator: take "
                           "the items by index (items[0]) or loop over them with for"),
    (remainder_by_divmod, "no derivative rule for divmod: write x // y and x % y (np.mod is "
                          "differentiated)"),
], ids=["next", "divmod"])
def test_builtins_passing_values_through_are_refused(function, message):
    for differentiate in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f))):
        with pytest.raises(TransformError) as refused:
            differentiate(function)(X)
        assert str(refused.value).endswith(message)
        assert __file__ in str(refused.value)


def counts_with_builtins(x):
    n = next(iter(range(2, 5)))  # no gradient flows through: not refused
    whole, part = divmod(7, 3)
    return np.sum(x ** n) * whole + part


def test_builtins_of_constants_are_constants():
    check_every_mode(counts_with_builtins, X)


def signs_copied(x):
    return np.sum(np.copysign(x, np.array([1.0, -1.0, -2.0])) * x)


def signs_copied_by_math(x):
    return math.copysign(x[0], -1.0) * x[1] + math.fmod(x[2] * 3.0, 1.0) * x[0]


@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus_x"])
def test_copysign_and_fmod_have_gradients(x):
    check_every_mode(signs_copied, x)
    # (math's functions take Python numbers: not traced values)
    expected = central_difference(signs_copied_by_math, x)
    assert autotrace.grad(signs_copied_by_math)(x) == pytest.approx(expected, rel=1e-6)
    direction = np.array([0.5, -1.0, 2.0])
    _, tangent = autotrace.jvp(signs_copied_by_math, (x,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6)


def summed_from_a_start(x):
    return np.sum(sum([x[0:2], x[1:3]], x[::-1][0:2] * 2.0) * np.array([1.0, 10.0]))


def summed_from_a_start_by_keyword(x):
    return sum([x[0], x[1] ** 2], start=x[2] * 3.0) * x[0]


@pytest.mark.parametrize("function", [summed_from_a_start, summed_from_a_start_by_keyword],
                         ids=["positional", "keyword"])
def test_the_start_of_a_builtin_sum_gets_its_gradient(function):
    check_every_mode(function, X)
