"""np.fill_diagonal(a, val, wrap), a statement of its own, is the write into a's diagonal it is
(transforms/front/out_arguments.py): the gradient reaches a's other items and val, in every
mode, and the write meets arguments, views and globals as `a[i, i] = v` does."""
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

X = np.array([0.3, -0.7, 1.1, 0.5])
RNG = np.random.default_rng(3)


def scalar_on_the_diagonal(x):
    a = np.outer(x, x)
    np.fill_diagonal(a, x[0] * 3.0)
    return np.sum(np.sin(a))


def values_on_a_tall_diagonal(x):
    a = np.reshape(np.concatenate([x, x, x, x, x, x[:1]]), (7, 3)) * 1.5
    np.fill_diagonal(a, x[:2] ** 2, wrap=True)  # repeated down the rows, past the square
    return np.sum(np.cos(a) * np.arange(21.0).reshape(7, 3))


def list_on_a_cube(x):
    a = np.ones((2, 2, 2)) * x[0]
    np.fill_diagonal(a, [x[1], x[2]])
    return np.sum(a ** 2 * np.arange(8.0).reshape(2, 2, 2))


def too_many_values(x):
    a = np.outer(x[:3], x[1:])
    np.fill_diagonal(a, np.outer(x, x) * 0.5)  # cut to three values, row by row
    return np.sum(np.tanh(a))


def filled_in_a_branch(x):
    a = np.outer(x, x)
    if x[0] > 0:
        np.fill_diagonal(a, val=x[1], wrap=False)
    return np.sum(a * a)


FUNCTIONS = [scalar_on_the_diagonal, values_on_a_tall_diagonal, list_on_a_cube, too_many_values,
             filled_in_a_branch]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)
    np.testing.assert_array_equal(autotrace.function(f)(X), f(X))


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_vmap_and_hessian(f):
    batch = RNG.standard_normal((3, 4)) + 0.5
    np.testing.assert_allclose(autotrace.vmap(f)(batch), [f(row) for row in batch])
    gradients = autotrace.vmap(autotrace.grad(f))(batch)
    for gradient, row in zip(gradients, batch):
        np.testing.assert_allclose(gradient, central_difference(f, row), rtol=1e-6, atol=1e-8)
    expected = np.stack([central_difference(lambda y: autotrace.grad(f)(y)[i], X)
                         for i in range(4)])
    np.testing.assert_allclose(autotrace.hessian(f)(X), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(f))(X), expected,
                               rtol=1e-5, atol=1e-6)


def filled_argument(a, v):
    np.fill_diagonal(a, v)
    return np.sum(a ** 3)


def test_an_argument_written_gets_its_gradient_on_entry():
    a, v = np.arange(9.0).reshape(3, 3) / 4, np.array([0.5, -1.0])
    for derivative in (autotrace.grad(filled_argument, wrt=(0, 1)),
                       autotrace.function(autotrace.grad(filled_argument, wrt=(0, 1)))):
        given = a.copy()
        gradient_a, gradient_v = derivative(given, v)
        np.testing.assert_array_equal(given, a)  # the derivative writes into a copy
        # The diagonal is overwritten: its items get none; v[0] is written twice, v[1] once.
        by_hand = 3 * a ** 2
        np.fill_diagonal(by_hand, 0.0)
        np.testing.assert_allclose(gradient_a, by_hand)
        np.testing.assert_allclose(gradient_v, [3 * 0.25 * 2, 3 * 1.0])
    _, tangent = autotrace.jvp(filled_argument, (a, v), (np.ones((3, 3)), np.ones(2)))
    assert tangent == pytest.approx(np.sum(by_hand) + np.sum(gradient_v))


def test_float32_stays_float32():
    def f(x):
        a = np.outer(x, x)
        np.fill_diagonal(a, x * 2.0)
        return np.sum(a * a)
    x = X.astype(np.float32)
    for derivative in (autotrace.grad(f), autotrace.function(autotrace.grad(f))):
        assert derivative(x).dtype == np.float32


@pytest.mark.parametrize("shape, val, wrap", [
    ((3, 3), 2.5, False), ((5, 3), [1.0, 2.0], True), ((5, 3), [1.0, 2.0], False),
    ((3, 5), np.arange(7.0), False), ((3, 3, 3), [4.0, 5.0], False), ((3, 3), 2.7, False)])
def test_traced_writes_what_numpy_writes(shape, val, wrap):
    dtype = int if isinstance(val, float) and val == 2.7 else float

    def f(x):
        a = np.zeros(shape, dtype) + x
        np.fill_diagonal(a, val, wrap)
        return a
    expected = np.zeros(shape, dtype) + 1
    np.fill_diagonal(expected, val, wrap)
    result = autotrace.function(f)(np.array(1, dtype))
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def filled_vector(x):
    np.fill_diagonal(x, 1.0)
    return np.sum(x)


def filled_with_nothing(x):
    a = np.outer(x, x)
    np.fill_diagonal(a, [])
    return np.sum(a)


def filled_with_complex(x):
    a = np.outer(x, x)
    np.fill_diagonal(a, 1j)
    return np.sum(a)


def test_numpys_errors_and_the_empty_val():
    with pytest.raises(ValueError, match="^array must be at least 2-d$"):
        autotrace.grad(filled_vector)(X.copy())
    with pytest.raises(ValueError, match="^array must be at least 2-d"):
        autotrace.function(filled_vector)(X.copy())
    with pytest.raises(TypeError, match="not 'complex'"):
        autotrace.grad(filled_with_complex)(X)
    with pytest.raises(ValueError, match=r"^autotrace follows np\.fill_diagonal\(a, val\) where "
                                         r"val holds values; with none it writes nothing"):
        autotrace.grad(filled_with_nothing)(X)


def read_through_a_view(x):
    a = np.outer(x, x)
    row = a[1]
    np.fill_diagonal(a, x)
    return np.sum(row * x)


def read_through_a_view_by_index(x):
    a = np.outer(x, x)
    row = a[1]
    a[np.arange(4), np.arange(4)] = x
    return np.sum(row * x)


def test_a_view_read_after_is_refused_as_for_an_item_write():
    for function, write in ((read_through_a_view, "np.fill_diagonal(a, x)"),
                            (read_through_a_view_by_index, "a[np.arange(4), np.arange(4)] = ...")):
        line = function.__code__.co_firstlineno + 3
        with pytest.raises(autotrace.TransformError) as error:
            autotrace.grad(function)(X)
        assert (f"line {line}: {write} changes 'a' in place, and 'row' shares its memory"
                in str(error.value))
    line = read_through_a_view.__code__.co_firstlineno + 3
    with pytest.raises(autotrace.TransformError, match=f"line {line}: np.fill_diagonal"):
        autotrace.forward(read_through_a_view)(X, tangent=X)
    # Traced, the view sees the write, as NumPy's does.
    assert autotrace.function(read_through_a_view)(X) == pytest.approx(read_through_a_view(X))


GLOBAL = np.zeros((2, 2))


def filled_global(x):
    np.fill_diagonal(GLOBAL, x[0])
    return np.sum(GLOBAL * x[0])


def test_a_global_written_is_refused_naming_the_call():
    expected = re.escape("the function changes 'GLOBAL' in place (np.fill_diagonal(GLOBAL, "
                         "x[0])), a global or closure variable that it does not make")
    with pytest.raises(autotrace.TransformError, match=expected):
        autotrace.grad(filled_global)(X)
    with pytest.raises(Exception, match=expected):
        autotrace.function(filled_global)(X)


def filled_in_an_expression(x):
    a = np.outer(x, x)
    return np.fill_diagonal(a, x[1]), np.sum(a * a)


def test_a_call_that_is_no_statement_of_its_own_is_refused():
    with pytest.raises(autotrace.TransformError, match=re.escape(
            "autotrace follows np.fill_diagonal(a, val) as a statement of its own, with a a "
            "variable, not np.fill_diagonal(a, x[1]); write it so")):
        autotrace.grad(filled_in_an_expression)(X)
    with pytest.raises(Exception, match=re.escape(
            "autotrace cannot trace np.fill_diagonal of a traced value: it writes into a in "
            "place, which autotrace follows where the call is a statement of its own")):
        autotrace.function(filled_in_an_expression)(X)
