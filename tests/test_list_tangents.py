"""Forward mode of NumPy functions given a list or tuple that is one at run time only (a
parameter, an item, a callee's argument): the tangent is the array NumPy reads the list as.

The rules combine tangents with Python's operators (`d[x] * 2`, `d[x1] + d[x2]`), which on
the list of tangents would repeat or join it: `np.mean(np.multiply(2, xs))` got the tangent
1.0 for 2.0.
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace

EPS = 1e-6


def doubled_mean(xs):
    return np.mean(np.multiply(2, xs))


def sum_added(xs):
    return np.sum(np.add(xs, xs) ** 2)


def scaled_sine(xs):
    return np.sum(np.sin(xs) * 2)


def shifted(xs):
    return np.sum(np.subtract(3, xs) ** 2)


FUNCTIONS = [doubled_mean, sum_added, scaled_sine, shifted]


def as_kind(values: np.ndarray, kind: str):
    """`values` as the list, tuple, list of lists or list of 0-d arrays named `kind`."""
    if kind == "list":
        return [float(v) for v in values.ravel()]
    if kind == "tuple":
        return tuple(float(v) for v in values.ravel())
    if kind == "list of lists":
        return [[float(v) for v in row] for row in values.reshape(2, -1)]
    return [np.array(v) for v in values.ravel()]


KINDS = ["list", "tuple", "list of lists", "list of 0-d arrays"]
X = np.array([0.5, -1.0, 2.0, 0.25])
V = np.array([1.0, 0.5, -0.75, 2.0])


def directional(f, kind):
    """f's derivative at X along V, by central differences."""
    return (f(as_kind(X + EPS * V, kind)) - f(as_kind(X - EPS * V, kind))) / (2 * EPS)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_forward_form_reads_a_list_as_numpy_does(f, kind):
    expected = directional(f, kind)
    xs, vs = as_kind(X, kind), as_kind(V, kind)
    assert autotrace.jvp(f, (xs,), (vs,))[1] == pytest.approx(expected, rel=1e-7)
    assert autotrace.forward(f)(xs, tangent=vs)[1] == pytest.approx(expected, rel=1e-7)
    assert autotrace.linearize(f, xs)[1](vs) == pytest.approx(expected, rel=1e-7)
    traced = autotrace.function(lambda x, v: autotrace.jvp(f, (x,), (v,))[1])
    assert float(traced(xs, vs)) == pytest.approx(expected, rel=1e-7)


def test_the_tangent_of_the_example_is_two():
    # d/dt mean(2 * ([1, 2] + t [1, 1])) = 2
    assert autotrace.jvp(doubled_mean, ([1.0, 2.0],), ([1.0, 1.0],))[1] == 2.0


def inner(xs):
    return np.sum(np.multiply(2, xs) ** 2)


def through_callees(x):
    return inner([x[0], x[1]]) + inner((x[0], x[1]))


def test_a_callee_given_a_list_in_jacfwd_hessian_and_hvp():
    # through_callees(x) = 8 (x0^2 + x1^2): gradient 16 x, Hessian 16 I
    x, v = np.array([1.0, 2.0]), np.array([1.0, 0.5])
    np.testing.assert_allclose(autotrace.jacfwd(through_callees)(x), 16 * x, rtol=1e-12)
    np.testing.assert_allclose(autotrace.hessian(through_callees)(x), 16 * np.eye(2),
                               rtol=1e-12)
    np.testing.assert_allclose(autotrace.hvp(through_callees)(x, v), 16 * v, rtol=1e-12)
    assert autotrace.jvp(through_callees, (x,), (v,))[1] == pytest.approx(16 * (1.0 + 1.0))
    batched = autotrace.vmap(lambda t: autotrace.jvp(through_callees, (x,), (t,))[1])
    np.testing.assert_allclose(batched(np.eye(2)), 16 * x, rtol=1e-12)


def test_hvp_of_a_function_of_a_list():
    # inner(xs) = 4 (x0^2 + x1^2): its Hessian is 8 I
    product = autotrace.hvp(inner)([1.0, 2.0], [1.0, 0.5])
    np.testing.assert_allclose(np.asarray(product), [8.0, 4.0], rtol=1e-12)


def applied(function, xs):
    return np.mean(function(2, xs))


def through_a_function_given(xs):
    return applied(np.multiply, xs)


def test_a_numpy_function_known_when_it_runs_reads_the_list_as_an_array():
    assert autotrace.jvp(through_a_function_given, ([1.0, 2.0],), ([1.0, 1.0],))[1] == 2.0
    assert autotrace.jvp(through_a_function_given, ((1.0, 2.0),), ((1.0, 1.0),))[1] == 2.0


def repeated(xs):
    ys = xs * 2  # a list repeated, as Python's operator does
    return np.sum(np.asarray(ys) * np.arange(4.0))


def test_python_operators_keep_repeating_lists():
    # sum((x0, x1, x0, x1) * (0, 1, 2, 3)) = 2 x0 + 4 x1
    assert autotrace.jvp(repeated, ([1.0, 2.0],), ([1.0, 0.0],))[1] == 2.0
    assert autotrace.jvp(repeated, ([1.0, 2.0],), ([0.0, 1.0],))[1] == 4.0


def test_an_array_tangent_read_as_array_is_no_copy_a_later_write_changes():
    def written(x):
        y = np.positive(x)
        y[0] = 0.0
        return np.sum(x * y)
    x, v = np.array([1.0, 2.0]), np.array([1.0, 1.0])
    # x0 * 0 + x1 * x1: the derivative along (1, 1) is 2 x1
    assert autotrace.jvp(written, (x,), (v,))[1] == pytest.approx(4.0)
    assert v.tolist() == [1.0, 1.0]
