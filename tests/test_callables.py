"""The callables users write: decorated functions, defaults, custom gradients, partials, *args
and the math module, each checked against finite differences in reverse mode, forward mode,
second order and traced (autotrace.function of the gradient)."""
import functools
import math
import os

import numpy as np
import pytest

import autotrace
from autotrace import TransformError

THIS_FILE = os.path.abspath(__file__)


def difference(f, x: float, eps: float = 1e-6) -> float:
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def check_scalar(f, x: float, second_order: bool = True, traced: bool = True):
    """f's derivative at x from grad, forward, grad of grad and the traced gradient, each
    against central differences (of f, or of its gradient)."""
    expected = difference(f, x)
    assert autotrace.grad(f)(x) == pytest.approx(expected, rel=1e-6, abs=1e-8)
    value, tangent = autotrace.forward(f)(x)
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-8)
    if traced:
        traced_gradient = autotrace.function(autotrace.grad(f))(np.float64(x))
        assert float(traced_gradient) == pytest.approx(expected, rel=1e-6, abs=1e-8)
    if second_order:
        second = difference(autotrace.grad(f), x)
        assert autotrace.grad(autotrace.grad(f))(x) == pytest.approx(second, rel=1e-5,
                                                                     abs=1e-6)


# 1. Decorators: the decorated function is differentiated as it is called.

def doubles(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)
    return wrapper


def plus_sine(fn):  # no functools.wraps
    def wrapper(x):
        return fn(x) + np.sin(x)
    return wrapper


def scaled(factor):  # a decorator with arguments
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(x):
            return factor * fn(x)
        return wrapper
    return decorate


def registered(fn):  # returns the function unchanged
    fn.registered = True
    return fn


@doubles
def doubled_square(x):
    return x * x


@plus_sine
def cube_plus_sine(x):
    return x ** 3


@doubles
@scaled(3.0)
@plus_sine
def stacked(x):
    return x * x


@registered
def kept(x):
    return np.exp(x)


def calls_decorated(x):
    return doubled_square(x) + stacked(x) * x


@pytest.mark.parametrize("f", [doubled_square, cube_plus_sine, stacked, kept, calls_decorated])
def test_decorated_function_is_differentiated_as_called(f):
    check_scalar(f, 0.7)


def test_decorator_with_wraps_is_not_skipped():
    assert autotrace.grad(doubled_square)(3.0) == 12.0
    assert autotrace.forward(doubled_square)(3.0) == (18.0, 12.0)
    assert autotrace.function(doubled_square)(3.0) == 18.0


@autotrace.function
@doubles
def traced_doubled(x):
    return x * x


def test_autotrace_decorators_over_a_user_decorator():
    assert traced_doubled(np.float64(3.0)) == 18.0
    assert autotrace.grad(traced_doubled)(3.0) == 12.0


# 2. Defaults are the values Python evaluated, never re-read from source.

squares_by = [lambda x, k=k: x * k * k for k in [1.0, 2.0]]


def make_weighted():
    made = []
    for w in (np.array([1.0, 2.0]), np.array([3.0, 4.0])):
        def weighted(x, w=w, *, s=w[0], p=2.0):
            return np.sum(x * w) * s ** p
        made.append(weighted)
    return made


def test_default_naming_an_enclosing_variable():
    assert autotrace.grad(squares_by[1])(1.0) == 4.0
    check_scalar(squares_by[1], 1.5)


def test_array_and_keyword_only_defaults_come_from_the_function():
    weighted = make_weighted()[1]
    x = np.ones(2)
    expected = np.array([27.0, 36.0])
    np.testing.assert_allclose(autotrace.grad(weighted)(x), expected)
    assert autotrace.forward(weighted)(x)[1] == pytest.approx(63.0)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(weighted))(x), expected)


def nested_default_reads_local(x):
    ks = [1.0, 2.0]
    scales = [lambda y, k=k: y * k for k in ks]  # marker: nested default
    return scales[1](x)


def test_nested_default_reading_a_local_is_an_error():
    with pytest.raises(TransformError) as caught:
        autotrace.grad(nested_default_reads_local)(1.0)
    error = caught.value
    assert os.path.abspath(error.filename) == THIS_FILE
    assert error.construct == "nested function default"
    assert error.message == (
        "a default of a lambda reads the enclosing function's variable k; autotrace evaluates "
        "the defaults of nested functions once. Pass k as an argument instead")
