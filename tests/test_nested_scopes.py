"""Nested functions inside nested functions: each reads the variables of the scope it is
defined in, with names shadowed at several levels, in every mode against finite differences."""
import inspect

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode


def reads_an_enclosing_parameter(x):
    def outer(a):
        def inner():
            return a * x
        return inner()
    return np.sum(outer(x))


def three_levels(x):
    c = np.sin(x)

    def level1(a):
        b = a * 2.0

        def level2(t):
            def level3():
                return t * b + a * c + x
            return level3() * t
        return level2(a + 1.0)
    return np.sum(level1(x ** 2))


def shadowed_at_each_level(x):
    a = np.cos(x)

    def outer(a):  # hides f's `a`
        def inner(b):
            a2 = a * b

            def innermost(a):  # hides outer's `a`
                return a * a2
            return innermost(b + 1.0)
        return inner(a) + a
    return np.sum(outer(x * 3.0) * a)


def calls_a_sibling_from_deeper_down(x):
    w = np.exp(x)

    def scale(v):
        return v * w

    def outer(a):
        def inner(b):
            return scale(b) * a
        return inner(a + 1.0)
    return np.sum(outer(x))


def lambda_inside_a_nested_function(x):
    def outer(a):
        square = lambda v: v * a  # noqa: E731
        return square(a) + x
    return np.sum(outer(np.tanh(x)))


CASES = [reads_an_enclosing_parameter, three_levels, shadowed_at_each_level,
         calls_a_sibling_from_deeper_down, lambda_inside_a_nested_function]
X = np.array([0.5, -1.25, 2.0])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_nested_scopes_in_every_mode(f):
    check_every_mode(f, X)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_nested_scopes_traced_hessian_and_vmap(f):
    np.testing.assert_allclose(autotrace.function(f)(X), f(X), rtol=1e-12)
    expected = central_difference(f, X)

    def gradient_entry(point, i):
        return autotrace.grad(f)(point)[i]
    hessian = np.array([central_difference(lambda p: gradient_entry(p, i), X)
                        for i in range(X.size)])
    np.testing.assert_allclose(autotrace.hessian(f)(X), hessian, rtol=1e-5, atol=1e-6)
    batch = np.stack([X, X * 0.5, -X])
    np.testing.assert_allclose(
        autotrace.vmap(autotrace.grad(f))(batch),
        np.stack([central_difference(f, row) for row in batch]), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X), expected,
                               rtol=1e-6, atol=1e-8)


def test_scalar_argument_of_the_reviewed_example():
    def f(x):
        def outer(a):
            def inner():
                return a * x
            return inner()
        return outer(x)
    assert autotrace.grad(f)(1.5) == pytest.approx(3.0)
    value, gradient = autotrace.value_and_grad(f)(1.5)
    assert (value, gradient) == pytest.approx((2.25, 3.0))


def uses_a_deeper_nested_function_as_a_value(x):
    def outer(a):
        def inner():
            return a * x
        g = inner  # marker: used as a value
        return g()
    return outer(x)


def test_an_error_in_a_deeper_nested_function_names_the_users_line():
    with pytest.raises(autotrace.TransformError) as caught:
        autotrace.grad(uses_a_deeper_nested_function_as_a_value)(1.5)
    error = caught.value
    lines, first = inspect.getsourcelines(uses_a_deeper_nested_function_as_a_value)
    marked = first + next(i for i, line in enumerate(lines) if "marker: used" in line)
    assert (error.filename, error.lineno) == (__file__, marked)
    assert error.message == (
        "the nested function 'inner' reads the enclosing function's variables a, x and is "
        "used as a value; autotrace differentiates such functions only where they are "
        "called directly. Pass those variables as arguments instead")
