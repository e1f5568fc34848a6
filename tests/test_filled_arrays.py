"""np.full, np.full_like, np.linspace and np.arange carry the gradient of the values they are
filled from (transforms/rules/filled_arrays.py), in every mode, and trace to NumPy's values
(runtime/tracing/filled_arrays.py).

Each function is checked against central differences: eagerly, traced, in forward mode and to
second order (tests/numeric.py check_every_mode), for scalar and array fill values and
endpoints, with and without the endpoint. arange traces only with Python bounds, so its
derivatives are checked eagerly, and its refusal when traced. Integer results carry no gradient;
float32 ones keep float32. The refusals' messages are checked word for word, and traced primal
values (and dtypes) against NumPy's, bit for bit.
"""
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.ops import UntraceableError
from tests.numeric import central_difference, check_every_mode

X = np.array([0.3, -0.7, 1.2])
WEIGHTS = np.array([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]])


# --- The functions differentiated (module level: autotrace reads their source) -------------

def full_like_fill(x):
    return np.sum(np.full_like(x, x[1]) ** 2)


def linspace_end(x):
    return np.sum(np.linspace(0.0, x[0], 4) ** 2)


def arange_start(x):
    return np.sum(np.arange(x[0], x[0] + 3.0) ** 2)


def full_fill(x):
    return np.sum(np.full(3, x[0]) * x)


def full_array_fill(x):
    return np.sum(np.full((2, 3), np.sin(x)) * WEIGHTS)


def full_list_fill(x):
    return np.sum(np.full((3, 2), [x[0], x[2] ** 2]) ** 2)


def full_like_array_fill(x):
    return np.sum(np.full_like(WEIGHTS, x * x) * WEIGHTS)


def full_like_of_x(x):
    # `a` = x gives only its shape: the gradient comes from the fill value alone.
    return np.sum(np.full_like(x, 2.0) * x + np.full_like(x, np.cos(x[2])) ** 2)


def linspace_both(x):
    return np.sum(np.sin(np.linspace(x[0], x[1] * x[2], 5)))


def linspace_no_endpoint(x):
    return np.sum(np.linspace(x[1], x[0], 4, endpoint=False) ** 3)


def linspace_arrays(x):
    # start of shape (3,), a scalar stop, samples along the last axis: shape (3, 4)
    return np.sum(np.linspace(x, x[0] * 2.0, 4, axis=-1) ** 2 * np.arange(4.0))


def linspace_arrays_axis0(x):
    return np.sum(np.cos(np.linspace(x[:2], x[1:], 3)) * WEIGHTS.T)  # shape (3, 2)


def linspace_one(x):
    return np.sum(np.linspace(x[0], x[1], 1) * x[2])


def linspace_written(x):
    samples = np.linspace(x[0], x[1], 4)
    samples[0] = x[2] ** 2
    return np.sum(samples ** 2)


def full_written(x):
    filled = np.full(3, x[0])
    filled[1] = x[1] * 3.0
    return np.sum(filled * filled * x)


# --- Every mode against finite differences ---------------------------------------------------

EVERY_MODE = [full_like_fill, linspace_end, full_fill, full_array_fill, full_list_fill,
              full_like_array_fill, full_like_of_x, linspace_both, linspace_no_endpoint,
              linspace_arrays, linspace_arrays_axis0, linspace_one, linspace_written,
              full_written]


@pytest.mark.parametrize("f", EVERY_MODE, ids=[f.__name__ for f in EVERY_MODE])
def test_every_mode_matches_finite_differences(f):
    check_every_mode(f, X)
    expected = central_difference(f, X)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(f))(X), expected,
                               rtol=1e-6, atol=1e-8)


def test_the_gradients_the_bug_report_gives():
    np.testing.assert_allclose(autotrace.grad(full_like_fill)(X), [0.0, -4.2, 0.0])
    np.testing.assert_allclose(autotrace.grad(linspace_end)(X), [0.3 * 28 / 9, 0.0, 0.0])
    np.testing.assert_allclose(autotrace.grad(arange_start)(X), [7.8, 0.0, 0.0])
    np.testing.assert_allclose(autotrace.grad(full_fill)(X), [1.1, 0.3, 0.3])


def test_hessians():
    np.testing.assert_allclose(autotrace.hessian(full_fill)(X),
                               [[2.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(autotrace.hessian(linspace_end)(X), np.diag([28 / 9, 0, 0]),
                               atol=1e-12)
    np.testing.assert_allclose(autotrace.hessian(arange_start)(X), np.diag([6.0, 0, 0]))
    for f in (full_array_fill, linspace_both, linspace_arrays):
        hessian = autotrace.hessian(f)(X)
        expected = np.stack([central_difference(lambda x: autotrace.grad(f)(x)[i], X)
                             for i in range(3)])
        np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6)


# --- arange: eager modes, and refused when traced --------------------------------------------

def arange_step(x):
    return np.sum(np.arange(0.25, 2.0, x[2] * 0.3) ** 2 * x[1])


def arange_all(x):
    return np.sum(np.sin(np.arange(x[0], x[2] * 4.0, x[2] * 0.5)))


def arange_stop_alone(x):
    # y_i = i: the single argument, the stop, sets the length only.
    return np.sum(np.arange(x[0] + 2.0) * x[1])


def arange_stop_keyword(x):
    return np.sum(np.arange(x[0], stop=x[0] + 2.0, step=x[2]) ** 2)


ARANGE = [arange_start, arange_step, arange_all, arange_stop_alone, arange_stop_keyword]


@pytest.mark.parametrize("f", ARANGE, ids=[f.__name__ for f in ARANGE])
def test_arange_matches_finite_differences_eagerly(f):
    expected = central_difference(f, X)
    options = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(f)(X), expected, **options)
    np.testing.assert_allclose(autotrace.value_and_grad(f)(X)[1], expected, **options)
    direction = np.random.default_rng(0).standard_normal(3)
    value, tangent = autotrace.jvp(f, (X,), (direction,))
    assert value == f(X)
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    hessian = autotrace.hessian(f)(X)
    np.testing.assert_allclose(hessian, np.stack(
        [central_difference(lambda x: autotrace.grad(f)(x)[i], X) for i in range(3)]),
        rtol=1e-5, atol=1e-6)


def test_arange_gradients_by_hand():
    # y = [x0, x0 + 1, x0 + 2]: d/dx0 sum(y^2) = 2 (3 x0 + 3)
    np.testing.assert_allclose(autotrace.grad(arange_start)(X), [7.8, 0.0, 0.0])
    # y = [0, 1, 2] (x0 + 2 = 2.3): sum(y) * x1
    np.testing.assert_allclose(autotrace.grad(arange_stop_alone)(X), [0.0, 3.0, 0.0])


ARANGE_REFUSED = (
    "autotrace cannot trace numpy.arange with a traced start, stop or step: the length of its "
    "result depends on their values; write start + step * np.arange(n), with a length n "
    "known while tracing")


@pytest.mark.parametrize("f", [arange_start, arange_step, arange_stop_keyword])
def test_a_traced_arange_is_refused(f):
    for traced in (autotrace.function(f), autotrace.function(autotrace.grad(f))):
        with pytest.raises(UntraceableError) as error:
            traced(X)
        assert str(error.value).split("\n")[0] == ARANGE_REFUSED


def arange_of_a_length(x):
    return np.sum((x[0] + x[2] * np.arange(4)) ** 2)


def test_the_refusals_advice_traces():
    check_every_mode(arange_of_a_length, X)


# --- Integer results carry no gradient --------------------------------------------------------

def full_int(x):
    return np.sum(np.sin(np.full(3, x[0] * 10.0, dtype=int)) * x)


def full_like_int(x):
    return np.sum(np.sin(np.full_like(x, x[0] * 10.0, dtype=np.int32)) * x)


def linspace_int(x):
    return np.sum(np.sin(np.linspace(x[2], x[1] * 10.0, 3, dtype=int)))


def arange_int(x):
    return np.sum(np.sin(np.arange(x[0] * 10.0, x[0] * 10.0 + 2.5, dtype=int))) * x[1]


def arange_of_integers(x):
    return np.sum(np.arange(x.size) * x) + np.sum(np.arange(2, 8, 2) * x ** 2)


INTEGER = [full_int, full_like_int, linspace_int, arange_int, arange_of_integers]
X_INTEGER = np.array([0.33, -0.74, 1.27])  # ten times each is away from the integers


@pytest.mark.parametrize("f", INTEGER, ids=[f.__name__ for f in INTEGER])
def test_integer_results_carry_no_gradient(f):
    expected = central_difference(f, X_INTEGER)  # the integers are piecewise constant
    np.testing.assert_allclose(autotrace.grad(f)(X_INTEGER), expected, atol=1e-8)
    direction = np.array([1.0, -2.0, 0.5])
    _, tangent = autotrace.jvp(f, (X_INTEGER,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), abs=1e-8)
    if f is not arange_int:  # whose bounds are traced
        np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X_INTEGER), expected,
                                   atol=1e-8)


def test_integer_results_by_hand():
    # int(3.3) = 3 fills, sin(3) * x: the fill value gets nothing
    np.testing.assert_allclose(autotrace.grad(full_int)(X_INTEGER), np.full(3, np.sin(3)))
    assert not np.any(autotrace.grad(linspace_int)(X_INTEGER))


# --- float32 stays float32 --------------------------------------------------------------------

FLOAT32 = [full_like_fill, linspace_end, full_fill, full_array_fill, full_like_array_fill,
           linspace_both, linspace_arrays, arange_start]


@pytest.mark.parametrize("f", FLOAT32, ids=[f.__name__ for f in FLOAT32])
def test_float32_stays_float32(f):
    x = X.astype(np.float32)
    expected = central_difference(f, X)
    derivatives = [autotrace.grad(f)]
    if f is not arange_start:
        derivatives.append(autotrace.function(autotrace.grad(f)))
    for derivative in derivatives:
        gradient = derivative(x)
        assert gradient.dtype == np.float32
        np.testing.assert_allclose(gradient, expected, rtol=1e-4, atol=1e-5)
    value, tangent = autotrace.forward(f)(x, tangent=np.ones(3, np.float32))
    assert np.result_type(tangent) == np.result_type(value) == np.result_type(f(x))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-4, abs=1e-5)


def test_tangents_of_float32_fills_are_float32():
    def tangent_of(f, *args):
        return autotrace.forward(f)(*args)[1]
    fill = np.float32(0.5)
    assert tangent_of(full_of, fill).dtype == np.float32
    assert tangent_of(full_like_of, fill).dtype == np.float32
    assert tangent_of(linspace_of, fill).dtype == np.float32


def full_of(v):
    return np.full((2, 2), v)


def full_like_of(v):
    return np.full_like(np.ones(3, np.float32), v)


def linspace_of(v):
    return np.linspace(v, 2.0 * v, 3)


# --- linspace with retstep=True has no rule ---------------------------------------------------

def linspace_with_step(x):
    samples, step = np.linspace(x[0], x[1], 5, retstep=True)
    return np.sum(samples ** 2) + step


RETSTEP_REFUSED = (
    "np.linspace with retstep=True has no derivative rule: call it without retstep, and "
    "compute the step as (stop - start) / (num - 1), or (stop - start) / num with "
    "endpoint=False")


def test_retstep_is_refused_in_both_modes():
    for derivative in (autotrace.grad(linspace_with_step), autotrace.forward(linspace_with_step)):
        with pytest.raises(NotImplementedError, match=f"^{re.escape(RETSTEP_REFUSED)}$"):
            derivative(X)


def test_retstep_traces():
    traced = autotrace.function(linspace_with_step)
    assert traced(X) == linspace_with_step(X)


# --- Traced values are NumPy's ----------------------------------------------------------------

def traced_linspace(start, stop, num, endpoint, axis, dtype, retstep):
    return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)


def traced_full(shape, fill_value, dtype):
    return np.full(shape, fill_value, dtype)


def traced_full_like(a, fill_value, dtype, shape):
    return np.full_like(a, fill_value, dtype, shape=shape)


def assert_identical(result, expected):
    """The same values, bit for bit (NaN where NaN), the same dtype, shape and kind."""
    if isinstance(expected, tuple):
        assert isinstance(result, tuple) and len(result) == len(expected)
        for item, expected_item in zip(result, expected):
            assert_identical(item, expected_item)
        return
    assert np.shape(result) == np.shape(expected)
    assert np.result_type(result) == np.result_type(expected)
    np.testing.assert_array_equal(result, expected, strict=False)


_RNG = np.random.default_rng(7)
ENDPOINTS = {
    "f64": np.float64(_RNG.uniform(-3, 3)),
    "f32": np.float32(_RNG.uniform(-3, 3)),
    "f16": np.float16(_RNG.uniform(-3, 3)),
    "int": np.int64(7),
    "array": _RNG.uniform(-3, 3, 2),
    "array-f32": _RNG.uniform(-3, 3, (3, 2)).astype(np.float32),
}
LINSPACE_OPTIONS = [(7, True, 0, None, False), (5, False, 0, None, False),
                    (1, True, 0, None, False), (0, True, 0, None, False),
                    (1, False, 0, None, True), (6, True, -1, None, True),
                    (4, True, 0, np.int32, False), (9, True, 0, np.float32, False),
                    (3, False, 1, None, False)]


@pytest.mark.parametrize("start", ENDPOINTS, ids=str)
@pytest.mark.parametrize("stop", ENDPOINTS, ids=str)
def test_traced_linspace_is_numpys(start, stop):
    start, stop = ENDPOINTS[start], ENDPOINTS[stop]
    for options in LINSPACE_OPTIONS:
        try:
            expected = traced_linspace(start, stop, *options)
        except ValueError:  # shapes that do not broadcast, or no such axis
            continue
        traced = autotrace.function(traced_linspace)  # one trace each: no retracing warning
        assert_identical(traced(start, stop, *options), expected)


def test_traced_linspace_with_one_python_endpoint():
    traced = autotrace.function(linspace_of)
    for fill in (np.float32(0.3), np.float64(-1.7), np.ones((2, 2), np.float32)):
        assert_identical(traced(fill), linspace_of(fill))


FILLS = {"f64": np.float64(-1.25), "f32": np.float32(0.7), "int": np.int64(3),
         "row": np.array([0.5, -2.0, 3.0]), "row-f32": np.array([0.5, -2.0, 3.0], np.float32)}


@pytest.mark.parametrize("fill", FILLS, ids=str)
@pytest.mark.parametrize("shape", [(2, 3), 3, (), (4, 1, 3)], ids=str)
@pytest.mark.parametrize("dtype", [None, np.float32, np.int32], ids=str)
def test_traced_full_and_full_like_are_numpys(fill, shape, dtype):
    fill = FILLS[fill]
    try:
        expected = traced_full(shape, fill, dtype)
    except ValueError:  # a row that does not broadcast to the shape
        return
    assert_identical(autotrace.function(traced_full)(shape, fill, dtype), expected)
    for a in (np.zeros(shape, np.float32), np.zeros(shape, int)):
        assert_identical(autotrace.function(traced_full_like)(a, fill, dtype, None),
                         traced_full_like(a, fill, dtype, None))
    like = np.zeros(5, np.float16)
    assert_identical(autotrace.function(traced_full_like)(like, fill, dtype, shape),
                     traced_full_like(like, fill, dtype, shape))


def full_like_concrete(v):
    return np.full_like(WEIGHTS, v)


def full_of_a_list(v):
    return np.full((2, 2), [v, 1.0])


def written_full(v):
    filled = np.full(3, v)
    filled[0] = 5.0
    return filled


@pytest.mark.parametrize("f", [full_like_concrete, full_of_a_list, written_full, full_of,
                               linspace_of, full_like_of])
def test_traced_fills_of_other_forms(f):
    for v in (np.float64(0.75), np.float32(-2.5)):
        assert_identical(autotrace.function(f)(v), f(v))


def filled_arrays(x):
    samples = np.linspace(x[0], x[1], 4)
    samples[0] = x[2] ** 2
    return (np.full_like(x, x[1]), np.linspace(0.0, x[0], 4), np.full(3, x[0]),
            np.full((2, 3), np.sin(x)), np.full_like(WEIGHTS, x * x),
            np.linspace(x, x[0] * 2.0, 4, axis=-1), np.linspace(x[:2], x[1:], 3), samples,
            np.linspace(x[1], x[0], 4, endpoint=False), np.linspace(x[0], x[1], 1))


def test_traced_functions_give_numpys_values():
    for x in (X, X.astype(np.float32)):
        assert_identical(autotrace.function(filled_arrays)(x), filled_arrays(x))
