"""Writes of floats into arrays that hold integers or booleans, and of complex numbers into real
arrays, in every mode.

`y[0] = x[0] * 3` into an integer y truncates: y[0] is a step function of x[0], whose derivative
is zero. The tangent written into dy (forward mode) and the gradient the write passes back to
its value (reverse mode) are zero; what a real y keeps of a complex value is its real part, and
so is its tangent. Each expected value below is computed by hand at x = [1.5, -0.4, 2.3].
"""
import re
import warnings

import numpy as np
import pytest

import autotrace

X = np.array([1.5, -0.4, 2.3])
E0 = np.array([1.0, 0.0, 0.0])
ONES = np.ones(3)


def int_item(x):
    y = np.zeros(3, dtype=int)
    y[0] = x[0] * 3  # y = [4, 0, 0]: f = 4 x0
    return np.sum(y * x)


def bool_item(x):
    m = np.zeros(3, dtype=bool)
    m[0] = x[0]  # m = [True, False, False]: f = x0
    return np.sum(m * x)


def int_slice(x):
    y = np.arange(3)
    y[1:] = x[1:] * 10  # y = [0, -4, 23]: f = -4 x1 + 23 x2
    return np.sum(y * x)


def int_whole(x):
    y = np.zeros(3, dtype=int)
    y[:] = x * 3  # y = [4, -1, 6]
    return np.sum(y * x)


def uint8_ellipsis(x):
    y = np.zeros(3, dtype=np.uint8)
    y[...] = x * 3 + 10  # y = [14, 8, 16]
    return np.sum(y * x)


def int32_rows(x):
    y = np.zeros((2, 3), dtype=np.int32)
    y[0] = x * 4  # [6, -1, 9]
    y[1, :2] = x[:2] * 3  # [4, -1, 0]: f = 10 x0 - 2 x1 + 9 x2
    return np.sum(y * x)


def int_item_added(x):
    y = np.zeros(3, dtype=int)
    y[0] += x[0] * 3  # y = [4, 0, 0]
    return np.sum(y * x)


def chained(x):
    y = x.copy()
    z = np.zeros(3, dtype=int)
    z[0] = y[0] * 3  # z[0] = 4
    y[1] = z[0] * y[1]  # y = [x0, 4 x1, x2]: f = x0^2 + 16 x1^2 + x2^2
    return np.sum(y ** 2)


def int_matmul(x):
    y = np.zeros((3, 3), dtype=int)
    y[0, 0] = x[0] * 3  # y @ x = [4 x0, 0, 0]
    return np.sum(y @ x)


def int_diagonal(x):
    y = np.zeros((3, 3), dtype=int)
    np.fill_diagonal(y, x * 3)  # diag [4, -1, 6]
    return np.sum(y @ x)


def int_out(x):
    y = np.zeros(3, dtype=int)
    np.floor(x * 3, out=y, casting="unsafe")  # y = [4, -2, 6]
    return np.sum(y * x)


def int_out_product(x):
    y = np.empty(3, dtype=np.int32)
    np.multiply(x, 2, out=y, casting="unsafe")  # y = [3, 0, 4]
    return np.sum(y * x)


def complex_into_real(x):
    y = np.zeros(3)
    y[:] = x * (2 + 5j)  # y = 2 x (the imaginary part dropped): f = 2 sum(x^2)
    return np.sum(y * x)


def complex_item_into_real(x):
    y = np.zeros(3)
    y[0] = x[0] * (2 + 5j) * x[1]  # y[0] = 2 x0 x1: f = 2 x0^2 x1
    return np.sum(y * x)


# (function, its gradient at X, its Hessian at X)
CASES = [
    (int_item, [4.0, 0.0, 0.0], np.zeros((3, 3))),
    (bool_item, [1.0, 0.0, 0.0], np.zeros((3, 3))),
    (int_slice, [0.0, -4.0, 23.0], np.zeros((3, 3))),
    (int_whole, [4.0, -1.0, 6.0], np.zeros((3, 3))),
    (uint8_ellipsis, [14.0, 8.0, 16.0], np.zeros((3, 3))),
    (int32_rows, [10.0, -2.0, 9.0], np.zeros((3, 3))),
    (int_item_added, [4.0, 0.0, 0.0], np.zeros((3, 3))),
    (chained, [3.0, -12.8, 4.6], np.diag([2.0, 32.0, 2.0])),
    (int_matmul, [4.0, 0.0, 0.0], np.zeros((3, 3))),
    (int_diagonal, [4.0, -1.0, 6.0], np.zeros((3, 3))),
    (int_out, [4.0, -2.0, 6.0], np.zeros((3, 3))),
    (int_out_product, [3.0, 0.0, 4.0], np.zeros((3, 3))),
    (complex_into_real, [6.0, -1.6, 9.2], np.eye(3) * 4.0),
    (complex_item_into_real, [-2.4, 4.5, 0.0],
     np.array([[-1.6, 6.0, 0.0], [6.0, 0.0, 0.0], [0.0, 0.0, 0.0]])),
]
IDS = [case[0].__name__ for case in CASES]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        yield


@pytest.mark.parametrize("function, gradient, hessian", CASES, ids=IDS)
def test_reverse_modes(function, gradient, hessian):
    np.testing.assert_allclose(autotrace.grad(function)(X.copy()), gradient, atol=1e-12)
    np.testing.assert_allclose(autotrace.vjp(function, X.copy())[1](1.0)[0], gradient,
                               atol=1e-12)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(function))(X.copy()),
                               gradient, atol=1e-12)


@pytest.mark.parametrize("function, gradient, hessian", CASES, ids=IDS)
def test_forward_modes(function, gradient, hessian):
    gradient = np.array(gradient)
    for tangent in (E0, ONES):
        expected = gradient @ tangent
        value, derivative = autotrace.jvp(function, (X.copy(),), (tangent,))
        assert value == pytest.approx(function(X.copy()))
        assert derivative == pytest.approx(expected, abs=1e-12)
        assert autotrace.forward(function)(X.copy(), tangent=tangent)[1] == pytest.approx(
            expected, abs=1e-12)
        traced = autotrace.function(lambda x, t: autotrace.jvp(function, (x,), (t,)))
        assert traced(X.copy(), tangent)[1] == pytest.approx(expected, abs=1e-12)
        assert autotrace.linearize(function, X.copy())[1](tangent) == pytest.approx(
            expected, abs=1e-12)
    np.testing.assert_allclose(autotrace.jacfwd(function)(X.copy()), gradient, atol=1e-12)


@pytest.mark.parametrize("function, gradient, hessian", CASES, ids=IDS)
def test_second_derivatives(function, gradient, hessian):
    np.testing.assert_allclose(autotrace.hessian(function)(X.copy()), hessian, atol=1e-12)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(function))(X.copy()),
                               hessian, atol=1e-12)
    np.testing.assert_allclose(autotrace.hvp(function)(X.copy(), ONES), hessian @ ONES,
                               atol=1e-12)


@pytest.mark.parametrize("function, gradient, hessian", CASES, ids=IDS)
def test_vmap_of_jvp(function, gradient, hessian):
    # Rows of X2: X, and X with its second entry moved (no write changes its integer).
    X2 = np.stack([X, X + np.array([0.0, 0.01, 0.0])])
    expected = [np.array(gradient) @ ONES, None]
    expected[1] = np.array(autotrace.grad(function)(X2[1].copy())) @ ONES
    batched = autotrace.vmap(lambda x, t: autotrace.jvp(function, (x,), (t,))[1])
    np.testing.assert_allclose(batched(X2, np.stack([ONES, ONES])), expected, atol=1e-12)


def integer_output(x):
    y = np.zeros(3, dtype=int)
    y[0] = x[0] * 3
    return y * 1.0


def test_an_integer_array_written_gives_a_zero_tangent_of_its_output():
    value, tangent = autotrace.jvp(integer_output, (X.copy(),), (E0,))
    np.testing.assert_array_equal(value, [4.0, 0.0, 0.0])
    np.testing.assert_array_equal(tangent, [0.0, 0.0, 0.0])
    assert tangent.dtype == np.float64
    np.testing.assert_array_equal(autotrace.jacfwd(integer_output)(X.copy()), np.zeros((3, 3)))


def test_out_into_an_integer_array_keeps_numpys_refusal():
    def multiplied_into_ints(x):
        y = np.zeros(3, dtype=int)
        np.multiply(x, 2, out=y)  # NumPy refuses: float64 does not cast to int64 so
        return np.sum(y * x)
    message = ("Cannot cast ufunc 'multiply' output from dtype('float64') to dtype('int64') "
               "with casting rule 'same_kind'")
    with pytest.raises(TypeError, match=re.escape(message)):
        multiplied_into_ints(X.copy())
    with pytest.raises(TypeError, match=re.escape(message)):
        autotrace.grad(multiplied_into_ints)(X.copy())


def added_into_ints(x):
    y = np.zeros(3, dtype=int)
    y += x * 2
    return np.sum(y * x)


def added_into_an_int_slice(x):
    y = np.zeros(3, dtype=int)
    y[1:] += x[1:]
    return np.sum(y * x)


def divided_ints(x):
    y = np.ones(3, dtype=int)
    y /= 2
    return np.sum(y * x)


def added_into_a_mask(x):
    m = x > 0
    m += 1
    return np.sum(m * x)


@pytest.mark.parametrize("function, ufunc, dtype, line", [
    (added_into_ints, "add", "int64", "y += x * 2"),
    (added_into_an_int_slice, "add", "int64", "y[1:] += x[1:]"),
    (divided_ints, "divide", "int64", "y /= 2"),
    (added_into_a_mask, "add", "bool", "m += 1"),
])
def test_an_in_place_operator_keeps_numpys_refusal_to_cast(function, ufunc, dtype, line):
    result = "int64" if dtype == "bool" else "float64"
    numpys = (f"Cannot cast ufunc '{ufunc}' output from dtype('{result}') to dtype('{dtype}') "
              f"with casting rule 'same_kind'")
    with pytest.raises(TypeError, match=re.escape(numpys)):
        function(X.copy())
    number = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1)
                  if text.strip() == line)
    message = (f"{numpys} (File \"{__file__}\", line {number}: the array changed in place "
               f"there keeps its dtype, {dtype})")
    for derivative in (lambda: autotrace.grad(function)(X.copy()),
                       lambda: autotrace.jvp(function, (X.copy(),), (ONES,)),
                       lambda: autotrace.hessian(function)(X.copy()),
                       lambda: autotrace.function(autotrace.grad(function))(X.copy()),
                       lambda: autotrace.vmap(autotrace.grad(function))(np.stack([X, X]))):
        with pytest.raises(TypeError, match=re.escape(message)):
            derivative()


def in_place_operators_numpy_allows(x):
    y = np.zeros(3)
    y += x * 2  # 2 x
    y[0] += x[1]  # [2 x0 + x1, 2 x1, 2 x2]
    n = np.zeros(3, dtype=int)
    n += 2
    n[0] += x[0]  # a NumPy integer item: n = [3, 2, 2]
    L = [x[0]]
    L += [x[1] * 2]
    s = 0
    s += x[0] * x[2]
    return np.sum(y * x) + np.sum(n * x) + L[0] * L[1] + s


def test_in_place_operators_numpy_allows_are_differentiated():
    # f = 2 sum(x^2) + x0 x1 + 3 x0 + 2 x1 + 2 x2 + 2 x0 x1 + x0 x2
    x0, x1, x2 = X
    gradient = [4 * x0 + 3 * x1 + 3 + x2, 4 * x1 + 3 * x0 + 2, 4 * x2 + 2 + x0]
    hessian = np.array([[4.0, 3.0, 1.0], [3.0, 4.0, 0.0], [1.0, 0.0, 4.0]])
    np.testing.assert_allclose(autotrace.grad(in_place_operators_numpy_allows)(X.copy()),
                               gradient)
    assert autotrace.jvp(in_place_operators_numpy_allows, (X.copy(),), (ONES,))[1] == \
        pytest.approx(sum(gradient))
    np.testing.assert_allclose(autotrace.hessian(in_place_operators_numpy_allows)(X.copy()),
                               hessian, atol=1e-12)
    np.testing.assert_allclose(
        autotrace.function(autotrace.grad(in_place_operators_numpy_allows))(X.copy()), gradient)
