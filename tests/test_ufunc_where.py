"""A ufunc's where= beside out=, as people write it (np.divide(a, b, out=np.zeros_like(a),
where=b != 0)): NumPy's value and dtype in every mode, out written in place, a gradient with no
NaN from the elements left out, which flows to out's old contents there."""
import inspect

import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError
from tests.numeric import central_difference, check_every_mode

HERE = __file__
W = np.array([0.5, -1.0, 2.0, 1.5, -0.7])
B = np.array([2.0, 0.0, -4.0, 0.0, 1.3])  # (safe_divide's denominators)


def safe_divide(a):
    r = np.divide(a, B, out=np.zeros_like(a), where=B != 0)
    return np.sum(r * W)


def log_or_minus_inf(x):
    r = np.log(x, out=np.full_like(x, -np.inf), where=x > 0)
    return np.sum(np.exp(r) * W)


def sqrt_of_positive(v):
    s = np.sqrt(v, out=np.zeros_like(v), where=v > 0.05)
    return np.sum(s * W)


def arcsin_inside(x):
    # At the elements left out arcsin is given 0, not 1, where its derivative is infinite.
    s = np.arcsin(x, out=np.zeros_like(x), where=np.abs(x) < 0.95)
    return np.sum(s * W)


def arccosh_above_one(x):
    s = np.arccosh(x + 0.6, out=np.zeros_like(x), where=x > 0.45)
    return np.sum(s * W)


def true_divide_into_res(x):
    res = x * x  # a variable written in place; its old values stay where the mask is False
    np.true_divide(np.sin(x), x + 2.0, out=res, where=x < 0.6)
    return np.sum(res * W)


def add_into_c(x):
    c = np.cos(x)
    r = np.add(x, x * x, out=c, where=np.array([True, False, True, False, True]))
    return np.sum(r * W) + np.sum(c * c)


def exp_in_place(x):
    y = x * 2.0
    np.exp(y, out=y, where=y < 0)
    return np.sum(y * W)


def power_of_positive(x):
    c = x * 1.0
    np.power(x, 1.5, out=c, where=x > 0)  # a Python number as an operand: as it is
    return np.sum(c * W)


def sqrt_into_row(x):
    H = np.zeros((2, 5))
    np.sqrt(x, out=H[1], where=x > 0)
    return np.sum(H * H * 3.0)


X = np.array([0.5, -0.3, 0.97, 2.0, 0.4])
CASES = [safe_divide, log_or_minus_inf, sqrt_of_positive, arcsin_inside, arccosh_above_one,
         true_divide_into_res, add_into_c, exp_in_place, power_of_positive, sqrt_into_row]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_values_and_gradients_in_every_mode(f):
    with np.errstate(all="ignore"):
        value = f(X)
    assert autotrace.function(f)(X) == pytest.approx(value, rel=1e-12)
    check_every_mode(f, X)
    gradient = autotrace.grad(f)(X)
    assert np.all(np.isfinite(gradient))
    batched = autotrace.vmap(autotrace.grad(f))(np.stack([X, X[::-1]]))
    np.testing.assert_allclose(batched, [gradient, autotrace.grad(f)(X[::-1])], rtol=1e-12)
    np.testing.assert_allclose(autotrace.vmap(f)(np.stack([X, 2 * X])),
                               [value, autotrace.function(f)(2 * X)], rtol=1e-12)


def test_a_view_of_out_sees_the_write():
    def through_a_view(x):
        res = x * x
        v = res[1:]
        np.true_divide(np.sin(x), x + 2.0, out=res, where=x < 0.6)
        np.exp(v[1:], out=v[1:], where=v[1:] > 0.3)  # a write into a view reaches res
        r = np.add(x, 1.0, out=res, where=x > 0)
        r[0] = 9.0  # r is res itself, as NumPy returns out
        return res * 1.0, v * 1.0
    for got, expected in zip(autotrace.function(through_a_view)(X), through_a_view(X)):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_the_safe_division_has_no_nan_in_the_denominators_gradient():
    def f(a, b):
        r = np.divide(a, b, out=np.zeros_like(a), where=b != 0)
        return np.sum(r ** 2)
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([2.0, 0.0, 4.0])
    by_hand = (np.array([0.5, 0.0, 0.375]), np.array([-0.25, 0.0, -0.28125]))  # 2a/b², -2a²/b³
    for transform in (autotrace.grad, lambda f, wrt: autotrace.function(autotrace.grad(f, wrt))):
        for got, expected in zip(transform(f, wrt=(0, 1))(a, b), by_hand):
            np.testing.assert_array_equal(got, expected)


def test_the_gradient_reaches_outs_old_contents_and_a_python_number():
    def power_of(x, p, c):
        np.power(x, p, out=c, where=x > 0)
        return np.sum(c * W)
    grad = autotrace.grad(power_of, wrt=(1, 2))
    gradient_p, gradient_c = grad(X, 1.5, np.ones(5))
    expected = central_difference(lambda p: power_of(X, p[0], np.ones(5)), np.array([1.5]))
    assert gradient_p == pytest.approx(expected[0], rel=1e-6)
    np.testing.assert_array_equal(gradient_c, np.where(X > 0, 0.0, W))


def test_the_value_is_numpys_with_its_dtype_and_out_is_returned():
    def divides(a, b, mask):
        c = np.full(a.shape, 7, dtype=np.float32)
        r = np.true_divide(a, b, out=c, where=mask)
        return r, c
    a, b = np.array([1, 2, 3]), np.array([3, 0, 7])
    for mask in (b != 0, [True, False, True]):
        traced, c = autotrace.function(divides)(a, b, mask)
        expected, _ = divides(a, b, mask)
        assert traced.dtype == np.float32 and c.dtype == np.float32
        np.testing.assert_array_equal(traced, expected)
        np.testing.assert_array_equal(c, expected)

    def small(x):
        s = np.log(x, out=np.zeros_like(x), where=x > 1)
        return np.sum(s * s)
    x32 = np.array([0.5, 2.0, 3.0], np.float32)
    assert autotrace.function(small)(x32).dtype == np.float32
    assert autotrace.grad(small)(x32).dtype == np.float32
    assert autotrace.function(autotrace.grad(small))(x32).dtype == np.float32


def test_where_true_is_the_plain_call():
    def logs(x):
        c = np.zeros_like(x)
        np.log(x, out=c, where=True)
        return np.sum(c * W)
    x = np.abs(X) + 0.1
    np.testing.assert_allclose(autotrace.grad(logs)(x), W / x, rtol=1e-12)
    assert autotrace.function(logs)(x) == pytest.approx(logs(x), rel=1e-12)


def logs_without_out(x):
    return np.sum(np.log(x, where=x > 0))


def logs_with_an_int_mask(x):
    c = np.zeros_like(x)
    np.log(x, out=c, where=(x > 0).astype(int))
    return np.sum(c)


def logs_inside_a_sum(x):
    c = np.zeros_like(x)
    return np.sum(np.log(x, out=c, where=x > 0))


def test_refusals_and_numpys_errors():
    with pytest.raises(TransformError) as raised:
        autotrace.grad(logs_inside_a_sum)(X)
    assert str(raised.value).endswith(
        "write it as a statement of its own: result = np.log(x, out=c, where=x > 0)")
    line = inspect.getsourcelines(logs_without_out)[1] + 1
    advice = ("numpy.log with where= and no out=: NumPy leaves the elements that where= leaves "
              "out uninitialised (whatever the memory held); give out= the values they should "
              "keep, as in ")
    with pytest.raises(TransformError) as raised:
        autotrace.grad(logs_without_out)(X)
    assert str(raised.value) == (f'File "{HERE}", line {line}: autotrace cannot differentiate '
                                 + advice + "np.log(x, out=np.zeros_like(x), where=x > 0)")
    with pytest.raises(NotImplementedError) as raised:
        autotrace.function(logs_without_out)(X)
    assert str(raised.value).startswith("autotrace cannot trace " + advice +
                                        "np.log(x, out=np.zeros_like(x), where=m)\n")
    message = ("Cannot cast array data from dtype('int64') to dtype('bool') according to the "
               "rule 'safe'")
    for transform in (autotrace.grad, autotrace.function):
        with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
            transform(logs_with_an_int_mask)(np.abs(X))
