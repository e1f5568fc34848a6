"""A ufunc's and a reduction's optional arguments as NumPy reads them, in every mode: an `out`
given as None (by position too) is no out; `initial=` starts np.sum, np.prod, np.max, np.min
and np.<ufunc>.reduce from a value (cast to the result's dtype, and the whole result of an empty
max); `dtype=` runs a ufunc in the loop NumPy picks for that output dtype, and a reduction in
that dtype. Values (and dtypes) are checked against NumPy, gradients against central
differences."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

X = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])


def assert_traced_like_numpy(function, *args):
    result, expected = autotrace.function(function)(*args), function(*args)
    if not isinstance(expected, tuple):
        result, expected = (result,), (expected,)
    for value, reference in zip(result, expected, strict=True):
        assert np.asarray(value).dtype == np.asarray(reference).dtype
        np.testing.assert_allclose(value, reference, rtol=1e-6)


# --- out=None ----------------------------------------------------------------------------------

def added_with_no_out(x):
    return np.sum(np.add(x, 2.0 * x, None) ** 2)


def products_and_sines_with_no_out(x):
    return np.sum(np.multiply(x, x, None) + np.sin(x, None))


def clipped_with_no_out(x):
    return np.sum(np.clip(x, 0.0, 2.5, None) ** 2)


def reduced_with_no_out(x):
    return np.sum(np.add.reduce(x, 0, None, None) ** 2)


def summed_by_the_method_with_no_out(x):
    return np.sum(x.sum(0, None, None) ** 2)


def added_with_no_out_by_keyword(x):
    return np.sum(np.add(x, x, out=(None,)) ** 2) + np.sum(np.sin(x, out=None))


@pytest.mark.parametrize("function", [
    added_with_no_out, products_and_sines_with_no_out, clipped_with_no_out,
    reduced_with_no_out, summed_by_the_method_with_no_out, added_with_no_out_by_keyword])
def test_out_none_is_no_out(function):
    assert_traced_like_numpy(function, X)
    check_every_mode(function, X)


# --- initial= ----------------------------------------------------------------------------------

def summed_from_initial(x):
    return np.sum(np.sum(x, axis=0, initial=2.0) ** 2)


def added_by_reduce_from_initial(x):
    return np.sum(np.add.reduce(x, axis=1, initial=1.5) ** 2)


def maxima_from_initial(x):
    return np.sum(np.maximum.reduce(x, axis=0, initial=2.5) ** 2)


def row_maxima_from_initial(x):
    return np.sum(np.max(x, axis=1, initial=3.5) ** 2) + np.sum(x.max(axis=0, initial=2.5))


def products_from_initial(x):
    return np.sum(np.prod(x, axis=0, initial=2.0)) + np.sum(
        np.multiply.reduce(x, axis=1, initial=-0.5))


def minimum_from_initial(x):
    return np.sum(np.min(x, initial=0.0) * x) + np.sum(
        np.minimum.reduce(x, initial=1.25, keepdims=True) * x)


def summed_from_an_initial_of_the_input(x):
    return np.sum(np.sum(x ** 2, axis=1, initial=x[0, 1]) ** 2)


def products_from_an_initial_of_the_input(x):
    return np.sum(np.prod(x, axis=1, initial=np.sin(x[1, 0])) ** 2)


def maxima_from_an_initial_of_the_input(x):
    return np.sum(np.max(x, axis=1, keepdims=True, initial=x[0, 2] * 1.75) ** 2)


@pytest.mark.parametrize("function", [
    summed_from_initial, added_by_reduce_from_initial, maxima_from_initial,
    row_maxima_from_initial, products_from_initial, minimum_from_initial,
    summed_from_an_initial_of_the_input, products_from_an_initial_of_the_input,
    maxima_from_an_initial_of_the_input])
def test_initial_in_every_mode(function):
    assert_traced_like_numpy(function, X)
    check_every_mode(function, X)


def test_initial_is_cast_to_the_result_dtype():
    integers = np.array([[1, 2], [3, 4]])

    def reductions(a):
        return (np.sum(a, initial=0.5), np.max(a, axis=0, initial=2.5),
                np.prod(a, axis=1, initial=1.5), np.sum(a.astype(np.float32), initial=0.1))
    result, expected = autotrace.function(reductions)(integers), reductions(integers)
    for value, reference in zip(result, expected):
        assert np.asarray(value).dtype == np.asarray(reference).dtype
        np.testing.assert_array_equal(value, reference)


def test_empty_maximum_is_its_initial():
    def maxima(a):
        return np.max(a, axis=0, initial=1.0), np.minimum.reduce(a, axis=0, initial=-2.0)
    empty = np.zeros((0, 3))
    for value, reference in zip(autotrace.function(maxima)(empty), maxima(empty)):
        np.testing.assert_array_equal(value, reference)


def test_tie_with_initial_splits_the_gradient():
    def maximum(x):
        return np.max(x, initial=4.0) * 3.0
    # x[1, 1] is 4.0, as is the initial value: each gets half.
    expected = np.zeros_like(X)
    expected[1, 1] = 1.5
    np.testing.assert_allclose(autotrace.grad(maximum)(X), expected)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(maximum))(X), expected)

    def from_the_input(x):
        return np.max(x, initial=x[1, 1])
    expected[1, 1] = 1.0  # both halves reach x[1, 1]
    np.testing.assert_allclose(autotrace.grad(from_the_input)(X), expected)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(from_the_input))(X), expected)


# --- dtype= ------------------------------------------------------------------------------------

def added_in_float32(x):
    return np.add(x, x, dtype=np.float32)


def sine_in_float64(x):
    return np.sin(x, dtype=np.float64)


def added_to_a_number_in_float32(x):
    return np.add(x, 1.5, dtype=np.float32)


def reduced_in_float32(x):
    return np.add.reduce(x, 0, np.float32), np.maximum.reduce(x, axis=1, dtype=np.float32)


@pytest.mark.parametrize("function", [added_in_float32, sine_in_float64,
                                      added_to_a_number_in_float32, reduced_in_float32])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dtype_gives_numpy_values_and_dtypes(function, dtype):
    assert_traced_like_numpy(function, X.astype(dtype))


def test_dtype_numpy_cannot_cast_to_raises_numpy_error():
    def to_integers(x):
        return np.add(x, 1, dtype=np.int64)
    with pytest.raises(TypeError) as expected:
        to_integers(X)
    with pytest.raises(TypeError) as caught:
        autotrace.function(to_integers)(X)
    assert str(caught.value) == str(expected.value)


def test_dtype_in_every_mode():
    def in_float64(x):
        return np.sum(np.sin(x, dtype=np.float64) ** 2) + np.sum(
            np.divide(x, 2.0 + x * x, dtype=np.float64)) + np.sum(
            np.add.reduce(x, 1, np.float64) ** 2)
    assert_traced_like_numpy(in_float64, X)
    check_every_mode(in_float64, X)


def test_dtype_gradient_of_float32_arguments_is_float32():
    def in_float64(x):
        return np.sum(np.sin(x, dtype=np.float64) ** 2)
    x32 = X.astype(np.float32)
    expected = 2.0 * np.sin(X) * np.cos(X)
    for gradient in (autotrace.grad(in_float64)(x32),
                     autotrace.function(autotrace.grad(in_float64))(x32)):
        assert gradient.dtype == np.float32
        np.testing.assert_allclose(gradient, expected, rtol=1e-6)


def test_float32_sum_gradient_matches_float64():
    def in_float32(x):
        return np.sum(np.add(x, x, dtype=np.float32) ** 2)
    expected = central_difference(lambda x: np.sum((x + x) ** 2), X)
    np.testing.assert_allclose(autotrace.grad(in_float32)(X), expected, rtol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(in_float32))(X), expected,
                               rtol=1e-6)


# --- a ufunc's outer and accumulate ------------------------------------------------------------

def pair_energy(x):
    d = np.subtract.outer(x, x[0] ** 2)  # pairwise differences: shape x.shape + (3,)
    return np.sum(np.exp(-d ** 2) * np.multiply.outer(x, np.arange(1.0, 4.0)))


def running_sums(x):
    return np.sum(np.add.accumulate(x) ** 2) + np.sum(np.multiply.accumulate(x, 1, float))


@pytest.mark.parametrize("function", [pair_energy, running_sums])
def test_outer_and_accumulate_in_every_mode(function):
    check_every_mode(function, X)
    assert_traced_like_numpy(function, X)


def test_a_ufunc_method_without_a_rule_names_itself_and_the_users_line():
    def running_log_sum(x):
        return np.sum(np.logaddexp.accumulate(x))
    line = running_log_sum.__code__.co_firstlineno + 1
    with pytest.raises(autotrace.TransformError, match=(
            r"^no derivative rule for numpy\.logaddexp\.accumulate, called at run time with "
            r"arguments that carry gradient; register one with @autotrace\.register_adjoint\n"
            rf'  File "{__file__}", line {line}\n'
            r"    return np\.sum\(np\.logaddexp\.accumulate\(x\)\)$")):
        autotrace.grad(running_log_sum)(np.array([0.3, -0.7, 1.2]))


@pytest.mark.parametrize("function", [
    lambda x: np.sum(x * np.add.outer(np.array([100, 120], dtype=np.int8), 100)),
    lambda x: np.sum(np.multiply.outer(x.astype(np.float32), 2.5)),
    lambda x: np.sum(np.add.outer(x, x[:2], dtype=np.float32)),
])
def test_outer_makes_arrays_of_both_operands(function):
    # (a Python number is no weak scalar in outer: int8 + 100 is int64 there, float32 * 2.5
    # float64; it wrapped in int8 and stayed float32)
    x = np.array([0.5, -1.5])
    value, gradient = autotrace.value_and_grad(function)(x)
    assert value == function(x) and np.asarray(value).dtype == np.asarray(function(x)).dtype
    # (each is linear in x: a wide step is exact, and steps over float32's rounding)
    np.testing.assert_allclose(gradient, central_difference(function, x, eps=0.25), rtol=1e-5)
    assert_traced_like_numpy(function, x)


def test_accumulate_over_no_axis_is_numpys_error():
    with pytest.raises(Exception, match="accumulate does not allow multiple axes"):
        autotrace.grad(lambda x: np.sum(np.add.accumulate(x, axis=None)))(X)
