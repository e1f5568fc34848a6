"""Where dtypes and Python's types decide a value, autotrace's is NumPy's, in every mode:

- NumPy's products given lists (np.dot(xs, xs) of a list of lists) read each list as the
  array NumPy makes of it, in their derivatives too;
- a Python int that a traced loop carries meets an array of a narrower integer dtype (int8,
  uint8, ...) as NumPy converts it: where it does not fit, OverflowError at the user's line,
  on every backend;
- the operator module's in-place functions on immutable values (`functools.reduce(
  operator.imul, x.shape, 1)`, `operator.iadd(n, 1)`) are the operators they compute with,
  and are refused, at the user's line, where they would change an array in place.
"""
import functools
import inspect
import operator

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference
from tests.test_backend_agreement import run_traced

RNG = np.random.default_rng(11)


def line_of(function, text: str) -> int:
    """The line of this file where `function`'s source holds `text`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


# NumPy's products of lists.

PRODUCTS = {
    "dot": np.dot, "matmul": np.matmul, "inner": np.inner, "outer": np.outer,
    "tensordot": np.tensordot, "tensordot_1": lambda a, b: np.tensordot(a, b, 1),
    "vdot": np.vdot, "kron": np.kron, "cross": np.cross,
}


@pytest.mark.parametrize("product", PRODUCTS.values(), ids=PRODUCTS.keys())
def test_products_of_lists_have_the_gradients_of_the_arrays_numpy_reads(product):
    def f(xs):
        return np.sum(product(xs, xs) ** 2)

    matrix = RNG.standard_normal((3, 3))
    xs = matrix.tolist()
    expected = central_difference(lambda a: f(a.tolist()), matrix)
    for gradient in (autotrace.grad(f)(xs), autotrace.function(autotrace.grad(f))(xs)):
        assert isinstance(gradient, list) and isinstance(gradient[0], list)
        np.testing.assert_allclose(np.array(gradient), expected, rtol=1e-6, atol=1e-8)
    direction = RNG.standard_normal((3, 3))
    value, tangent = autotrace.jvp(f, (xs,), (direction.tolist(),))
    assert value == pytest.approx(f(xs))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6)


def dot_of_a_list_and_an_array(x):
    rows = [x[0] * 2.0, x[1]]
    return np.sum(np.dot(rows, x) * np.matmul(x, rows))


def test_a_list_of_traced_rows_meets_an_array():
    x = RNG.standard_normal((2, 2))
    expected = central_difference(dot_of_a_list_and_an_array, x)
    for gradient in (autotrace.grad(dot_of_a_list_and_an_array)(x),
                     autotrace.function(autotrace.grad(dot_of_a_list_and_an_array))(x),
                     autotrace.vmap(autotrace.grad(dot_of_a_list_and_an_array))(x[None])[0]):
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)


# The operator module's in-place functions.

def scaled_by_sizes(x):
    n = functools.reduce(operator.imul, x.shape, 1)
    m = operator.iadd(n, 1)
    m = operator.isub(m, 3)
    s = 0.0
    for v in x.ravel():
        s = operator.iadd(s, v * v)  # a Python float, then a NumPy one: new values
    shape = operator.iconcat(x.shape, (1,))
    return s * m / n * len(shape)


def test_in_place_operators_on_immutable_values_compute_new_values():
    x = RNG.standard_normal((2, 3))
    assert scaled_by_sizes(x) == pytest.approx(np.sum(x * x) * 4 / 6 * 3)
    expected = 2 * x * 4 / 6 * 3
    np.testing.assert_allclose(autotrace.grad(scaled_by_sizes)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(scaled_by_sizes))(x),
                               expected, rtol=1e-12)
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(scaled_by_sizes))(x[None])[0],
                               expected, rtol=1e-12)
    direction = RNG.standard_normal((2, 3))
    value, tangent = autotrace.forward(scaled_by_sizes)(x, tangent=direction)
    assert value == pytest.approx(scaled_by_sizes(x))
    assert tangent == pytest.approx(np.sum(expected * direction))


def sizes_multiplied(x):
    return x * functools.reduce(operator.imul, x.shape, 1)


def test_reduce_of_imul_over_a_shape_under_every_transform():
    x = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(autotrace.grad(lambda x: np.sum(sizes_multiplied(x)))(x),
                               np.full((2, 3), 6.0))
    value, tangent = autotrace.jvp(sizes_multiplied, (x,), (np.ones((2, 3)),))
    np.testing.assert_allclose(value, 6 * x)
    np.testing.assert_allclose(tangent, np.full((2, 3), 6.0))


def adding_into_a_list(x):
    xs = [x]
    _ = operator.iadd(xs, [x])  # changes xs
    return np.sum(xs[0] * len(xs))


def test_in_place_operators_on_lists_are_refused_at_the_users_line():
    x = np.array([0.3, 0.7])
    message = (f'File "{__file__}", line {line_of(adding_into_a_list, "_ = operator.iadd")}: '
               f"operator.iadd changes its first argument in place where that is an array or a "
               f"list (it runs a += b)")
    for run in (lambda: autotrace.grad(adding_into_a_list)(x),
                lambda: autotrace.forward(adding_into_a_list)(x),
                lambda: autotrace.function(autotrace.grad(adding_into_a_list))(x)):
        with pytest.raises(TypeError) as refused:
            run()
        assert str(refused.value).startswith(message)


# Python ints a traced loop carries, meeting narrower integer arrays.

def stepped(a, limit, step):
    """`a` combined (`a + k`, `k * a`, `a - k`, `a // k` or `a > k`) with a Python int k that
    a traced loop carries: `step` times the number of passes, which `limit` decides."""
    k, s = 0, np.sum(limit)
    while s < 3.0:
        k = k + step
        s = s + 1.0
    return a + k, k * a, a - k, np.floor_divide(a, k), a > k


def _outcome(run):
    try:
        return run()
    except OverflowError as error:
        return error


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "uint64"])
def test_a_carried_int_meets_an_integer_array_as_numpy_converts_it(dtype, backend):
    a = np.array([1, 2, 3], dtype)
    line = line_of(stepped, "return a + k")
    info = np.iinfo(dtype)
    for step in (7, -1, 100, 200, 40000, 2 ** 31 // 3 + 1, 2 ** 40):
        expected = _outcome(lambda: stepped(a, np.zeros(1), step))
        result = _outcome(lambda: run_traced(backend, lambda: autotrace.function(stepped),
                                             (a, np.zeros(1), step))[0])
        if isinstance(expected, OverflowError):
            assert not info.min <= 3 * step <= info.max
            assert isinstance(result, OverflowError)
            assert str(result).startswith(
                f'File "{__file__}", line {line}: Python integer {3 * step} out of bounds '
                f"for {dtype} (a Python int that this traced loop or if carries")
            assert str(expected) == f"Python integer {3 * step} out of bounds for {dtype}"
        else:
            assert not isinstance(result, OverflowError), result
            for value, reference in zip(result, expected):
                assert value.dtype == reference.dtype
                np.testing.assert_array_equal(value, reference)


def weighted_by_a_counter(x, a, limit):
    k, s = 0, np.sum(limit)
    while s < 3.0:
        k = k + 150
        s = s + 1.0
    return np.sum(x * (a + k))


def test_a_carried_int_out_of_an_int8_arrays_bounds_under_grad_and_vmap():
    x, limit = np.array([0.5, 1.5]), np.zeros(1)
    wide = np.array([1, 2], np.int16)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(weighted_by_a_counter))(
        x, wide, limit), [451.0, 452.0])
    np.testing.assert_allclose(autotrace.vmap(weighted_by_a_counter, in_axes=(None, None, 0))(
        x, wide, np.array([[0.0], [1.5]])), [903.5, 603.5])
    narrow = np.array([1, 2], np.int8)
    with pytest.raises(OverflowError, match="Python integer 450 out of bounds for int8"):
        weighted_by_a_counter(x, narrow, limit)
    for run in (lambda: autotrace.function(autotrace.grad(weighted_by_a_counter))(
                    x, narrow, limit),
                lambda: autotrace.vmap(weighted_by_a_counter, in_axes=(None, None, 0))(
                    x, narrow, np.array([[0.0], [1.5]]))):
        with pytest.raises(OverflowError, match="Python integer 450 out of bounds for int8 "):
            run()


def test_a_carried_int_out_of_bounds_on_the_array_api_backend():
    xp = pytest.importorskip("array_api_strict")
    traced = autotrace.function(weighted_by_a_counter)
    x, limit = xp.asarray([0.5, 1.5]), xp.zeros(1)
    assert float(traced(x, xp.asarray([1, 2], dtype=xp.int16), limit)) == 903.5
    with pytest.raises(OverflowError, match="Python integer 450 out of bounds for int8 "):
        traced(x, xp.asarray([1, 2], dtype=xp.int8), limit)


# `y op= v` into a float32 (or float16) array y keeps y's dtype, as NumPy's in-place ufunc does.

WEIGHTS = np.array([1.0, 2.0, 3.0])


def added(y, v):
    y += v
    return y


def subtracted(y, v):
    y -= v
    return y


def multiplied(y, v):
    y *= v
    return y


def divided(y, v):
    y /= v
    return y


def added_to_a_slice(y, v):
    y[1:] += v[1:]
    return y


# each update, and the gradient of np.sum(WEIGHTS * update(2, x * x + 1)) by hand
UPDATES = {
    "add": (added, lambda x: WEIGHTS * 2 * x),
    "subtract": (subtracted, lambda x: -WEIGHTS * 2 * x),
    "multiply": (multiplied, lambda x: WEIGHTS * 4 * x),
    "divide": (divided, lambda x: -WEIGHTS * 4 * x / (x * x + 1) ** 2),
    "slice": (added_to_a_slice, lambda x: WEIGHTS * 2 * x * [0, 1, 1]),
}


def _program(update, dtype):
    def updated(x):
        y = np.zeros_like(x, dtype=dtype) + 2.0
        return update(y, x * x + 1.0)

    def loss(x):
        return np.sum(WEIGHTS.astype(dtype) * updated(x))
    return updated, loss


def assert_same(result, expected):
    assert np.asarray(result).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", UPDATES)
def test_an_update_in_place_keeps_the_arrays_dtype_in_every_mode(name, dtype):
    update, gradient_by_hand = UPDATES[name]
    updated, loss = _program(update, dtype)
    x = np.array([0.3, -1.7, 2.2])
    expected, expected_loss = updated(x), loss(x)
    assert expected.dtype == dtype and expected_loss.dtype == dtype
    assert_same(autotrace.function(updated)(x), expected)
    assert_same(autotrace.vmap(updated)(np.stack([x, x])), np.stack([expected, expected]))
    direction = np.array([0.5, 1.0, -2.0])
    value, tangent = autotrace.jvp(updated, (x,), (direction,))
    assert_same(value, expected)
    assert tangent.dtype == dtype
    gradient = gradient_by_hand(x)
    for value, found in (autotrace.value_and_grad(loss)(x),
                         autotrace.function(autotrace.value_and_grad(loss))(x)):
        assert_same(value, expected_loss)
        assert found.dtype == np.float64  # (x's)
        np.testing.assert_allclose(found, gradient, rtol=1e-12)
    value, tangent = autotrace.forward(loss)(x, tangent=direction)
    assert_same(value, expected_loss)
    assert tangent.dtype == dtype
    np.testing.assert_allclose(tangent, np.sum(gradient * direction), rtol=1e-2 if
                               dtype == np.float16 else 1e-6)
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(loss))(np.stack([x, -x])),
                               np.stack([gradient, gradient_by_hand(-x)]), rtol=1e-12)


def test_an_update_in_place_of_a_number_or_a_numpy_scalar_rebinds_it():
    def f(x):
        s, t = 1.0, np.float32(1.0)
        s += x
        t += x
        return s * t

    x = np.array([0.25, 0.5])
    assert_same(autotrace.function(f)(x), f(x))
    assert f(x).dtype == np.float64
    value, gradient = autotrace.value_and_grad(lambda x: np.sum(f(x)))(x)
    assert_same(value, np.sum(f(x)))
    np.testing.assert_allclose(gradient, 2 * (1 + x), rtol=1e-12)
