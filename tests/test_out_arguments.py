"""A NumPy call's `out`, given by keyword or by position, is the write into it that it is, in
every mode: eager reverse, forward, traced, and traced derivatives. Gradients are checked
against central differences, values against NumPy's."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

X = np.array([0.2, 0.7, -0.3])


def tripled_positionally(x):
    y = x * 1.0
    np.multiply(y, 3.0, y)
    return np.sum(y * x)


def tripled_by_keyword(x):
    y = x * 1.0
    np.multiply(y, 3.0, out=y)
    return np.sum(y * x)


def clipped_positionally(x):
    y = x * 1.0
    np.clip(y, 0.0, 0.5, y)
    return np.sum(y * x)


def clipped_by_keyword_of_a_method(x):
    y = x * 1.0
    y.clip(0.0, 0.5, out=y)
    return np.sum(y * x)


def sine_into_a_buffer_and_its_name(x):
    buffer = np.zeros(3)
    same = np.sin(x, out=buffer)
    return np.sum(same * buffer * x)


def tanh_returned_through_out(x):
    y = np.empty_like(x)
    return np.tanh(x * 2.0, out=(y,))


def tanh_returned_through_out_summed(x):
    return np.sum(tanh_returned_through_out(x) * x)


def rows_summed_into_a_row(x):
    total = np.zeros(3)
    np.sum(np.outer(x, x), 0, None, total)
    return np.sum(total * total)


def columns_added_up_by_a_ufunc_method(x):
    # (np.add.reduce has no derivative rule: what it adds up carries no gradient here.)
    total = np.zeros(3)
    np.add.reduce(np.outer(np.arange(2.0), [1.0, -2.0, 0.5]), 0, None, total)
    return np.sum(total * x * x)


SCALAR_FUNCTIONS = [tripled_positionally, tripled_by_keyword, clipped_positionally,
                    clipped_by_keyword_of_a_method, sine_into_a_buffer_and_its_name,
                    tanh_returned_through_out_summed, rows_summed_into_a_row,
                    columns_added_up_by_a_ufunc_method]


def test_the_hand_example():
    # y = 3x, so sum(y * x) = 3 sum(x ** 2), whose gradient is 6x.
    np.testing.assert_allclose(autotrace.grad(tripled_positionally)(X), 6.0 * X)


@pytest.mark.parametrize("function", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_out_is_followed_in_every_mode(function):
    expected = central_difference(function, X)
    np.testing.assert_allclose(autotrace.function(function)(X), function(X), rtol=1e-14)
    np.testing.assert_allclose(autotrace.grad(function)(X), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(function))(X), expected,
                               rtol=1e-6, atol=1e-9)
    direction = np.array([1.0, -0.5, 2.0])
    slope = np.sum(expected * direction)
    np.testing.assert_allclose(autotrace.forward(function)(X, tangent=direction)[1], slope,
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(
        autotrace.function(autotrace.forward(function))(X, tangent=direction)[1], slope,
        rtol=1e-6, atol=1e-9)


def test_a_result_returned_through_out_is_the_out_array():
    np.testing.assert_allclose(autotrace.function(tanh_returned_through_out)(X), np.tanh(2 * X))
    jacobian = autotrace.jacobian(tanh_returned_through_out)(X)
    np.testing.assert_allclose(jacobian, np.diag(2.0 / np.cosh(2 * X) ** 2), rtol=1e-12)


def scales_integers_in_place(x):
    counts = np.arange(3)
    np.multiply(counts, x, counts)
    return np.sum(counts * x)


def test_out_keeps_numpys_casting_rule_in_every_mode():
    with pytest.raises(TypeError) as eager:
        scales_integers_in_place(X)
    message = ("Cannot cast ufunc 'multiply' output from dtype('float64') to dtype('int64') "
               "with casting rule 'same_kind'")
    assert str(eager.value) == message
    for derivative in (autotrace.grad, autotrace.forward, autotrace.function):
        with pytest.raises(TypeError) as raised:
            derivative(scales_integers_in_place)(X)
        assert str(raised.value).startswith(message)


def clipped_by_a_method_with_out_by_position(x):
    y = x * 1.0
    y.clip(0.0, 0.5, y)
    return np.sum(y * x)


def test_an_array_method_given_out_by_position_is_refused_naming_the_line():
    import inspect
    line = inspect.getsourcelines(clipped_by_a_method_with_out_by_position)[1] + 2
    for derivative in (autotrace.grad, autotrace.forward):
        with pytest.raises(autotrace.transforms.errors.TransformError) as raised:
            derivative(clipped_by_a_method_with_out_by_position)(X)
        assert str(raised.value) == (
            f'File "{__file__}", line {line}: y.clip(0.0, 0.5, y) gives an array method its '
            "out argument by position, which autotrace does not follow; write it as a "
            "statement of its own: y[...] = y.clip(0.0, 0.5)")
    # Traced, the write is NumPy's own.
    np.testing.assert_allclose(autotrace.function(clipped_by_a_method_with_out_by_position)(X),
                               clipped_by_a_method_with_out_by_position(X))


def reductions_into_integers(x):
    s, m, c = np.zeros(3, np.int64), np.zeros(2, np.int8), np.zeros(3, np.int32)
    np.sum(x, axis=0, out=s)  # NumPy's reductions cast into out unsafely: truncated
    x.max(axis=1, out=m)
    np.add.accumulate(x[0], out=c)
    return np.sum(x * 2.0) + np.sum(s) + np.sum(m) + np.sum(c)


def einsum_into_float32(x):
    o = np.zeros(2, np.float32)
    np.einsum("ij->j", x, out=o)  # einsum's out must take the result safely
    return np.sum(o)


def test_reductions_cast_into_out_as_numpy_does_and_einsum_refuses_as_numpy_does():
    x = np.array([[1.5, 2.5, -3.75], [3.5, 4.25, 0.5]])
    for transform in (autotrace.function, lambda f: f):
        assert transform(reductions_into_integers)(x) == reductions_into_integers(x)
    np.testing.assert_array_equal(autotrace.grad(reductions_into_integers)(x), np.full((2, 3), 2.0))
    message = ("Iterator requested dtype could not be cast from dtype('float64') to "
               "dtype('float32'), the ")
    with pytest.raises(TypeError, match=r"^Iterator requested dtype could not be cast"):
        einsum_into_float32(x[:, :2])
    for transform in (autotrace.function, autotrace.grad):
        with pytest.raises(TypeError) as raised:
            transform(einsum_into_float32)(x[:, :2])
        assert str(raised.value).startswith(message)
