"""Structural NumPy forms, in every mode (eager and traced, both derivative modes, the traced
primal): np.sort of the flattened array and np.take_along_axis of an argsort; np.pad with a pair
of fill values, a pair per axis, and fill values computed from the input; np.linalg.norm of a
Python list; reading `x.flat[i]` (writes through it refused, saying what to write); and
`x.reshape(shape, copy=False)`, a view or NumPy's ValueError. Values are checked against NumPy,
gradients against central differences."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError
from autotrace.transforms.errors import TransformError
from tests.numeric import central_difference, check_every_mode

X = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
WEIGHTS = np.arange(1.0, 21.0).reshape(4, 5)  # as many as X padded by 1 on each side


def assert_traced_value(function, x=X):
    np.testing.assert_allclose(autotrace.function(function)(x), function(x), rtol=1e-12)


# --- sort and take_along_axis of an argsort -------------------------------------------------------

def sorted_flat(x):
    return np.sum(np.sort(x, axis=None) * np.arange(1.0, 7.0) ** 2)


def taken_along_rows(x):
    return np.sum(np.take_along_axis(x, np.argsort(x, axis=1), axis=1) * np.arange(3.0) ** 2)


def taken_along_columns(x):
    return np.sum(np.take_along_axis(x, np.argsort(x, axis=0), axis=0) * np.array([[1.0], [3.0]]))


def taken_along_the_last_axis(x):
    return np.sum(np.take_along_axis(x ** 2, np.argsort(x, axis=-1), axis=-1) * np.arange(3.0))


def sorted_list(x):
    s = np.sort([x[0, 2], x[1, 0] * 2.0, x[1, 2]])  # np.sort, not a list's sort method
    return s[0] * 3.0 + s[2] * s[1]


@pytest.mark.parametrize("function", [sorted_flat, taken_along_rows, taken_along_columns,
                                      taken_along_the_last_axis, sorted_list])
def test_sorted_orders_in_every_mode(function):
    assert_traced_value(function)
    check_every_mode(function, X)


def test_traced_gradient_of_a_flat_sort_sends_each_item_back():
    expected = central_difference(sorted_flat, X)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(sorted_flat))(X), expected,
                               rtol=1e-6)
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(sorted_flat))(np.stack([X, -X])),
                               [expected, central_difference(sorted_flat, -X)], rtol=1e-6)


# --- np.pad with fill values ----------------------------------------------------------------------

def padded_with_a_pair(x):
    return np.sum(np.pad(x, 1, constant_values=(1.0, 2.0)) * WEIGHTS)


def padded_with_a_pair_per_axis(x):
    return np.sum(np.pad(x, 1, constant_values=((1.0, 2.0), (3.0, 4.0))) * WEIGHTS ** 2)


def padded_with_a_pair_from_the_input(x):
    return np.sum(np.pad(x, 1, constant_values=(x[0, 0], 2.0 * x[1, 1])) * WEIGHTS ** 2)


def padded_unevenly_with_pairs_from_the_input(x):
    sides = ((x[0, 0] ** 2, 2.0), (x[1, 2], np.sin(x[0, 1])))
    return np.sum(np.pad(x, ((1, 0), (2, 1)), constant_values=sides) ** 2)


def padded_with_one_value_from_the_input(x):
    return np.sum(np.pad(x, 1, constant_values=x[0, 0] ** 2) * WEIGHTS)


def padded_with_a_column_of_values(x):
    return np.sum(np.pad(x, 1, constant_values=[[x[0, 0] ** 2], [x[1, 1]]]) ** 2)


@pytest.mark.parametrize("function", [
    padded_with_a_pair, padded_with_a_pair_per_axis, padded_with_a_pair_from_the_input,
    padded_unevenly_with_pairs_from_the_input, padded_with_one_value_from_the_input,
    padded_with_a_column_of_values])
def test_pad_fill_values_in_every_mode(function):
    assert_traced_value(function)
    check_every_mode(function, X)


def test_pad_fill_values_from_the_input_under_vmap():
    batch = np.stack([X, X + 1.0])
    function = padded_unevenly_with_pairs_from_the_input
    np.testing.assert_allclose(autotrace.vmap(function)(batch), [function(x) for x in batch])
    np.testing.assert_allclose(autotrace.function(autotrace.vmap(autotrace.grad(function)))(
        batch), [central_difference(function, x) for x in batch], rtol=1e-6)


def test_pad_gradient_of_the_fill_values_has_their_structure():
    def padded(x, sides):
        return np.sum(np.pad(x, ((1, 2), (0, 1)), constant_values=sides) * 2.0)
    gradient = autotrace.grad(padded, argnums=1)(X, ((1.0, 2.0), (3.0, 4.0)))
    # NumPy pads the rows within the array's own 3 columns (1 row before, 2 after), then the
    # columns over every row (none before, 1 after, 5 rows): the corners are the columns'.
    assert gradient == ((6.0, 12.0), (0.0, 10.0))
    traced = autotrace.function(autotrace.grad(padded, argnums=1))(X, (1.0, 2.0))
    assert traced == (6.0 + 0.0, 12.0 + 10.0)  # a (before, after) pair for both axes
    by_hand = np.pad(np.zeros((2, 3)), ((1, 2), (0, 1)), constant_values=[[1, 2], [3, 4]])
    assert [np.sum(by_hand == side) for side in (1, 2, 3, 4)] == [3, 6, 0, 5]


# --- np.pad(mode="linear_ramp") --------------------------------------------------------------------

def ramped_to_zero(x):
    return np.sum(np.pad(x, ((2, 1), (1, 3)), mode="linear_ramp") * np.arange(35.0).reshape(5, 7))


def ramped_to_ends_from_the_input(x):
    ends = ((x[0, 0] ** 2, 2.0), (x[1, 2], np.sin(x[0, 1])))
    return np.sum(np.pad(x, ((1, 2), (3, 1)), mode="linear_ramp", end_values=ends) ** 2)


def ramped_to_one_end_from_the_input(x):
    return np.sum(np.tanh(np.pad(x, 2, mode="linear_ramp", end_values=x[1, 1] * 3.0)))


@pytest.mark.parametrize("function", [ramped_to_zero, ramped_to_ends_from_the_input,
                                      ramped_to_one_end_from_the_input])
def test_pad_linear_ramp_in_every_mode(function):
    assert_traced_value(function)
    check_every_mode(function, X)


def test_pad_linear_ramp_to_traced_ends_of_an_integer_array_is_refused():
    def ramped(x):
        return np.pad(x.astype(np.int64), 2, mode="linear_ramp", end_values=x[0])
    with pytest.raises(TypeError, match="NumPy rounds the ramps of a int64 array"):
        autotrace.function(ramped)(np.ones(2))


# --- np.linalg.norm of a Python list --------------------------------------------------------------

def norm_of_two_items(x):
    return np.linalg.norm([x[0, 0], x[1, 1]])


def one_norm_of_items_and_a_constant(x):
    return np.linalg.norm([x[0, 0], 2.0, x[1, 2]], ord=1)


def norm_of_a_nested_list(x):
    return np.linalg.norm([[x[0, 0], 2.0], [x[1, 2], x[0, 1]]])


def norms_of_rows_in_a_list(x):
    return np.sum(np.linalg.norm([x[0], x[1]], axis=0))


def vector_norm_of_a_tuple(x):
    return np.linalg.vector_norm((x[0, 0], x[1, 1]))


def three_norm_of_a_list(x):
    return np.linalg.norm([x[0, 0], x[1, 1]], 3)


@pytest.mark.parametrize("function", [
    norm_of_two_items, one_norm_of_items_and_a_constant, norm_of_a_nested_list,
    norms_of_rows_in_a_list, vector_norm_of_a_tuple, three_norm_of_a_list])
def test_norm_of_a_list_in_every_mode(function):
    assert_traced_value(function)
    check_every_mode(function, X)
    tangent = np.ones_like(X)
    np.testing.assert_allclose(
        autotrace.function(autotrace.forward(function))(X, tangent=tangent)[1],
        np.sum(central_difference(function, X)), rtol=1e-6)


def test_numpy_functions_read_a_list_of_traced_values_as_an_array():
    def exponentials(x):
        return np.sum(np.exp([x[0, 0], x[1, 1]])) + np.linalg.det([[x[0, 0], 1.0], [x[1, 1], 2.0]])
    assert_traced_value(exponentials)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(exponentials))(X),
                               central_difference(exponentials, X), rtol=1e-6)


# --- x.flat ---------------------------------------------------------------------------------------

def flat_item(x):
    return x.flat[3] * 2.0 + x.flat[-1] ** 3


def flat_slice(x):
    return np.sum(x.flat[::2] ** 2)


def flat_items_at_an_index_array(x):
    return np.sum(x.flat[np.array([[0, 5], [5, 2]])] ** 2)


def flat_items_of_a_transpose(x):
    return np.sum((2.0 * x).T.flat[1:5] ** 2) + np.sum(x.flat[...] ** 3)


def flat_items_iterated(x):
    return sum(item ** 2 * weight for item, weight in zip(x.flat, range(1, 7)))


def flat_items_in_a_loop(x):
    total = 0.0
    for i in range(x.size):
        total = total + x.flat[i] ** 2 * i
    return total


@pytest.mark.parametrize("function", [flat_item, flat_slice, flat_items_at_an_index_array,
                                      flat_items_of_a_transpose, flat_items_iterated,
                                      flat_items_in_a_loop])
def test_flat_reads_in_every_mode(function):
    assert_traced_value(function)
    check_every_mode(function, X)


def test_flat_read_is_a_copy():
    def written_after(x):
        items = x.flat[::2]
        items[0] = 100.0
        return np.sum(x) + np.sum(items)
    np.testing.assert_allclose(autotrace.function(written_after)(X), written_after(X))


def written_through_flat(x):
    y = x * 1.0
    y.flat[2] = 7.0
    return np.sum(y ** 2)


def test_write_through_flat_is_refused_when_differentiated():
    for derivative in (autotrace.grad, autotrace.forward):
        with pytest.raises(TransformError) as caught:
            derivative(written_through_flat)(X)
        assert str(caught.value) == (
            f'File "{__file__}", line {written_through_flat.__code__.co_firstlineno + 2}: '
            "autotrace cannot differentiate a write through y.flat[...]; write into the array "
            "at the place the flat index stands for instead: "
            "y[np.unravel_index(i, y.shape)] = v")


def test_write_through_flat_is_refused_when_traced():
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(written_through_flat)(X)
    assert str(caught.value).startswith(
        "autotrace cannot trace a write through .flat[...] of a traced array; write into the "
        "array at the place the flat index stands for instead: "
        "a[np.unravel_index(i, a.shape)] = v")
    assert "y.flat[2] = 7.0" in str(caught.value)  # the user's line


def test_every_write_through_flat_is_refused_when_traced():
    def through_a_name(x):
        y = x * 1.0
        items = y.flat
        items[2] = 7.0
        return np.sum(y ** 2)

    def added_through_flat(x):
        y = x * 1.0
        y.flat[2] += 7.0
        return np.sum(y ** 2)

    def assigned_to_flat(x):
        y = x * 1.0
        y.flat = 7.0
        return np.sum(y ** 2)
    for function in (through_a_name, added_through_flat):
        with pytest.raises(UntraceableError, match="a write through .flat"):
            autotrace.function(function)(X)
        with pytest.raises(TransformError):
            autotrace.grad(function)(X)
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(assigned_to_flat)(X)
    assert str(caught.value).startswith(
        "autotrace cannot trace an assignment to .flat of a traced array; write into the array "
        "itself instead: a[...] = v")


def test_write_at_the_unraveled_index_instead():
    def written(x):
        y = x * 1.0
        y[np.unravel_index(2, y.shape)] = 7.0
        return np.sum(y ** 2)
    np.testing.assert_allclose(autotrace.function(written)(X), written_through_flat(X))


# --- reshape(copy=False) --------------------------------------------------------------------------

def reshaped_view_written(x):
    y = x * 1.0
    view = y.reshape(-1, copy=False)
    view[0] = 10.0
    return np.sum(y ** 2) + np.sum(view)


def base_written_under_a_reshaped_view(x):
    y = x * 1.0
    view = np.reshape(y, (3, 2), copy=False)
    y[0, 0] = 7.0
    return np.sum(view ** 2)


def reshaped_transpose_without_a_copy(x):
    return np.sum(x.T.reshape(-1, copy=False) ** 2)


@pytest.mark.parametrize("function", [reshaped_view_written, base_written_under_a_reshaped_view])
def test_traced_reshape_without_copy_is_a_view(function):
    assert_traced_value(function)


def test_traced_reshape_without_copy_raises_where_numpy_does():
    with pytest.raises(ValueError) as expected:
        reshaped_transpose_without_a_copy(X)
    for traced in (autotrace.function(reshaped_transpose_without_a_copy),
                   autotrace.function(autotrace.grad(reshaped_transpose_without_a_copy))):
        with pytest.raises(ValueError) as caught:
            traced(X)
        assert str(caught.value) == str(expected.value)


def test_traced_reshape_without_copy_follows_the_layout_of_each_call():
    def reshaped(x):
        return np.sum(x.reshape((3, 2), copy=False) * np.arange(6.0).reshape(3, 2))
    traced = autotrace.function(reshaped)
    assert traced(X) == reshaped(X)
    with pytest.raises(ValueError) as expected:
        reshaped(np.asfortranarray(X))
    with pytest.raises(ValueError) as caught:  # the same graph, an array laid out by columns
        traced(np.asfortranarray(X))
    assert str(caught.value) == str(expected.value)
    check_every_mode(reshaped, X)
