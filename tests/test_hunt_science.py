"""Scientific and container-heavy programs whose traced values once differed from NumPy's."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


# --- a concrete array changed in place between two uses in a traced function -------------------

def weights_changed_between_uses(x):
    c = np.ones(3)
    y = x * c
    c[0] = 10.0
    return y * c


def indices_advanced_in_place(x):
    idx = np.array([0, 1])
    y = x[idx]
    idx += 1
    return y * x[idx]


def stencil_weights_changed_in_loop(x):
    w = np.ones(3)
    acc = x
    for i in range(3):
        acc = acc * w
        w[i] = 2.0 + i
    return acc


def list_changed_between_uses(x):
    scales = [1.0, 2.0, 3.0]
    y = x * scales
    scales[0] = 7.0
    return y + np.asarray(scales) * x


def matrix_changed_between_products(x):
    A = np.eye(3)
    v = A @ x
    A[0, 1] = 5.0
    return A @ v


CHANGED_CONSTANTS = [weights_changed_between_uses, indices_advanced_in_place,
                     stencil_weights_changed_in_loop, list_changed_between_uses,
                     matrix_changed_between_products]


@pytest.mark.parametrize("f", CHANGED_CONSTANTS, ids=lambda f: f.__name__)
def test_traced_value_reads_a_changed_concrete_array_anew(f):
    x = np.array([1.0, 2.0, 3.0])
    expected = f(x)
    traced = autotrace.function(f)
    for _ in range(2):  # the traced call and the cached graph
        result = traced(x)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected)
    batch = np.stack([x, 2 * x])
    np.testing.assert_allclose(autotrace.vmap(f)(batch), np.stack([f(x), f(2 * x)]),
                               rtol=1e-12)


def test_weights_changed_between_uses_by_hand():
    x = np.array([1.0, 2.0, 3.0])
    # y * c = x * [1, 1, 1] * [10, 1, 1]
    np.testing.assert_array_equal(autotrace.function(weights_changed_between_uses)(x),
                                  [10.0, 2.0, 3.0])
    # x[[0, 1]] * x[[1, 2]]
    np.testing.assert_array_equal(autotrace.function(indices_advanced_in_place)(x),
                                  [2.0, 6.0])


@pytest.mark.parametrize("f", CHANGED_CONSTANTS, ids=lambda f: f.__name__)
def test_traced_gradient_reads_a_changed_concrete_array_anew(f):
    x = np.array([0.3, -0.8, 1.2])

    def loss(point):
        return np.sum(f(point) ** 2)
    expected = central_difference(loss, x)
    np.testing.assert_allclose(autotrace.grad(loss)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(x), expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(loss))(x), expected,
                               rtol=1e-6, atol=1e-8)


def test_an_unchanged_concrete_array_stays_one_constant():
    def f(x):
        c = np.array([1.0, 2.0, 3.0])
        return x * c + c * x

    text = str(autotrace.function(f).graph(np.ones(3)))
    assert "const0" in text and "const1" not in text


def test_a_constant_holding_nan_or_negative_zero_is_read_bit_for_bit():
    def f(x):
        c = np.array([np.nan, 0.0, 1.0])
        y = x + c
        c[1] = -0.0
        return y, np.copysign(x, c)

    x = np.array([1.0, 2.0, 3.0])
    expected = f(x)
    np.testing.assert_array_equal(expected[1], [1.0, -2.0, 3.0])
    for got, want in zip(autotrace.function(f)(x), expected):
        np.testing.assert_array_equal(got, want)


# --- an array multiplied by a list or tuple of weights, in a traced gradient -------------------

def list_weights_squared(x):
    y = x * [1.0, 2.0, 3.0]
    return np.sum(y * y)


def tuple_weights_on_the_left(x):
    w = (0.5, 1.0, 1.5)
    return np.sum(np.sin(w * x) * x)


def list_weights_changed_after_use(x):
    scales = [1.0, 2.0, 3.0]
    y = x * scales
    scales[0] = 7.0
    return np.sum(y * x)


@pytest.mark.parametrize("f", [list_weights_squared, tuple_weights_on_the_left,
                               list_weights_changed_after_use], ids=lambda f: f.__name__)
def test_traced_gradient_of_an_array_times_a_list(f):
    x = np.array([0.3, -0.8, 1.2])
    expected = central_difference(f, x)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected,
                               rtol=1e-6, atol=1e-8)
    batch = np.stack([x, -x])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch),
                               np.stack([expected, central_difference(f, -x)]),
                               rtol=1e-6, atol=1e-8)


def test_list_weights_gradient_by_hand():
    # d/dx sum((x * w) ** 2) = 2 * x * w ** 2
    x = np.array([0.3, -0.8, 1.2])
    np.testing.assert_allclose(autotrace.function(autotrace.grad(list_weights_squared))(x),
                               2 * x * np.array([1.0, 4.0, 9.0]), rtol=1e-12)


# --- an in-place operator with a list or tuple operand, traced ---------------------------------

def scaled_in_place_by_lists(x):
    y = x.copy()
    y *= [1.0, 2.0, 3.0]
    y += (0.5, 0.25, 0.0)
    return y


def int_counts_in_place_by_list(x):
    counts = x.astype(np.int32)
    counts += [1, 2, 3]
    counts //= [2, 1, 2]
    return counts


def scaled_in_place_by_a_list_of_traced(x):
    y = x.copy()
    y *= [x[0], 2.0, 1.0]
    return y


@pytest.mark.parametrize("f", [scaled_in_place_by_lists, int_counts_in_place_by_list,
                               scaled_in_place_by_a_list_of_traced], ids=lambda f: f.__name__)
def test_in_place_operator_with_a_list_operand_is_traced(f):
    x = np.array([3.0, -1.0, 2.0])
    expected = f(x)
    result = autotrace.function(f)(x)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_in_place_operator_with_a_list_keeps_numpys_casting_error():
    def f(x):
        counts = x.astype(np.int32)
        counts += [1.5, 2.0, 0.0]
        return counts

    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from dtype"):
        autotrace.function(f)(np.array([3.0, -1.0, 2.0]))


# --- second derivatives, run as one batched call, of code that accumulates into an array -------

def binned_energy(x):
    bins = np.zeros(2)
    for i in range(3):
        bins[i % 2] += x[i] ** 2
    return np.sum(bins * np.array([1.0, 3.0]))


def test_jacrev_of_a_gradient_accumulating_into_a_made_array():
    x = np.array([0.3, -0.8, 1.2])
    expected = np.diag([2.0, 6.0, 2.0])  # bins = [x0^2 + x2^2, x1^2], weighted 1 and 3
    np.testing.assert_allclose(autotrace.hessian(binned_energy)(x), expected, rtol=1e-12)
    gradient = autotrace.grad(binned_energy)
    np.testing.assert_allclose(autotrace.jacrev(gradient)(x), expected, rtol=1e-12)
    rows = autotrace.vmap(lambda row: autotrace.vjp(gradient, x)[1](row)[0])(np.eye(3))
    np.testing.assert_allclose(rows, expected, rtol=1e-12)


def clipped_iterates(x):
    y = x.copy()
    for _ in range(2):
        y = np.where(y > 0, y * 0.5, y * 2)
        y[y < -1] = -1.0
    return np.sum(y ** 2)


def test_second_derivative_through_a_masked_write_in_a_loop():
    x = np.array([0.3, -0.8, 1.2, 0.05, -0.2, 0.7])
    gradient = autotrace.grad(clipped_iterates)
    expected = np.stack([central_difference(lambda p: gradient(p)[i], x) for i in range(6)])
    # y ends as x / 4 where x > 0 (slope 1/8 of y ** 2 twice), 4 x where -1/4 < x < 0
    np.testing.assert_allclose(np.diag(expected), [0.125, 0, 0.125, 0.125, 32, 0.125],
                               atol=1e-6)
    np.testing.assert_allclose(autotrace.hessian(clipped_iterates)(x), expected, atol=1e-6)
    np.testing.assert_allclose(autotrace.jacrev(gradient)(x), expected, atol=1e-6)

    def directional(point):
        return np.sum(gradient(point) * np.arange(6.0))
    np.testing.assert_allclose(autotrace.function(autotrace.grad(directional))(x),
                               expected.T @ np.arange(6.0), atol=1e-6)


# --- Jacobians of code that selects with a boolean mask of the point itself ---------------------

def squared_where_negative(x):
    y = x.copy()
    y[x < 0] = x[x < 0] ** 2
    y[2] = y[0] * y[1]
    return y


@pytest.mark.parametrize("jacobian", [autotrace.jacfwd, autotrace.jacrev, autotrace.jacobian],
                         ids=lambda j: j.__name__)
def test_jacobian_of_a_mask_selection_fixed_by_the_point(jacobian):
    x = np.array([0.3, -0.8, 1.2, 0.05, -0.2, 0.7])
    expected = np.stack([central_difference(lambda p: squared_where_negative(p)[i], x)
                         for i in range(6)])
    np.testing.assert_allclose(jacobian(squared_where_negative)(x), expected, atol=1e-6)


def column_sums_of_positive_rows(x):
    m = x.reshape(3, 2)
    return np.sum(m[np.sum(m, axis=1) > 0] ** 2, axis=0)


@pytest.mark.parametrize("jacobian", [autotrace.jacfwd, autotrace.jacrev],
                         ids=lambda j: j.__name__)
def test_jacobian_of_a_sum_over_rows_a_mask_selects(jacobian):
    x = np.array([0.3, -0.8, 1.2, 0.05, -0.2, 0.7])
    # rows 1 and 2 are selected (sums 1.25 and 0.5): d/dx of x ** 2 summed down the columns
    expected = np.zeros((2, 6))
    expected[0, [2, 4]] = 2 * x[[2, 4]]
    expected[1, [3, 5]] = 2 * x[[3, 5]]
    np.testing.assert_allclose(jacobian(column_sums_of_positive_rows)(x), expected,
                               rtol=1e-12)


def test_vmap_of_a_mask_selection_that_differs_per_example_is_refused():
    with pytest.raises(autotrace.runtime.tracing.tracer_batching.BatchingError,
                       match="x\\[mask\\] with a traced mask has as many rows as the mask"):
        autotrace.vmap(squared_where_negative)(np.array([[0.3, -0.8, 1.2], [-1.0, 2.0, 0.5]]))


# --- what the refusal of an in-place sort tells the user to write instead -----------------------

def sorted_columns(x):
    m = x.reshape(2, 3).copy()
    m.sort(axis=0)
    return np.sum(m * np.arange(6.0).reshape(2, 3))


def test_refused_sort_suggests_the_same_sort_with_its_arguments():
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(sorted_columns)(np.arange(6.0)[::-1].copy())
    assert str(error.value).endswith(
        "autotrace cannot differentiate .sort(), which changes 'm' in place; compute a new "
        "value instead: m = np.sort(m, axis=0) for an array, m = sorted(m, axis=0) for a list")

    def rewritten(x):  # the suggestion, which sorts the same way
        m = x.reshape(2, 3).copy()
        m = np.sort(m, axis=0)
        return np.sum(m * np.arange(6.0).reshape(2, 3))
    x = np.array([0.3, -0.8, 1.2, 0.05, -0.2, 0.7])
    assert rewritten(x) == sorted_columns(x)
    np.testing.assert_allclose(autotrace.grad(rewritten)(x), central_difference(rewritten, x),
                               rtol=1e-6, atol=1e-8)


# --- an array raised to a list (or tuple) of exponents ------------------------------------------

def list_exponents(x):
    return np.sum(np.abs(x) ** [2, 3, 2]) + np.sum(x ** (2.0, 4.0, 1.0))


def test_gradient_of_an_array_raised_to_a_list_of_exponents():
    x = np.array([0.3, -0.8, 1.2])
    # |x| ** [2, 3, 2] and x ** [2, 4, 1]: 2 x, 3 x |x|, 2 x; 2 x, 4 x ** 3, 1
    expected = np.array([2 * 0.3 + 2 * 0.3, 3 * -0.8 * 0.8 + 4 * -0.8 ** 3, 2 * 1.2 + 1.0])
    np.testing.assert_allclose(central_difference(list_exponents, x), expected, rtol=1e-6)
    np.testing.assert_allclose(autotrace.grad(list_exponents)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(list_exponents))(x), expected,
                               rtol=1e-12)
    _, tangent = autotrace.jvp(list_exponents, (x,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-12)


def test_a_list_raised_to_a_list_stays_pythons_error():
    def f(x):
        return np.sum(x) * ([2.0] ** [3.0])[0]

    with pytest.raises(TypeError, match="unsupported operand type"):
        autotrace.grad(f)(np.ones(2))


# --- np.bincount with weights, and the np.add.at it is, in every mode -------------------------

def class_totals(w):
    labels = np.array([0, 1, 0, 2, 1, 3])
    return np.sum(np.bincount(labels, weights=w ** 2) ** 2)


def class_totals_with_add_at(w):
    labels = np.array([0, 1, 0, 2, 1, 3])
    out = np.zeros_like(w ** 2, shape=4)
    np.add.at(out, labels, w ** 2)
    return np.sum(out ** 2)


def test_bincount_and_add_at_every_mode():
    w = np.array([0.3, -0.8, 1.2, 0.05, -0.2, 0.7])
    expected = central_difference(class_totals, w)
    assert class_totals_with_add_at(w) == pytest.approx(class_totals(w), rel=1e-14)
    for f in (class_totals, class_totals_with_add_at):
        assert autotrace.function(f)(w) == pytest.approx(class_totals(w))
        np.testing.assert_allclose(autotrace.grad(f)(w), expected, rtol=1e-6)
        np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(w), expected,
                                   rtol=1e-6)
