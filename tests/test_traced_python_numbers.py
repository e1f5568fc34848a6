"""A Python number carried through a traced loop or `if` is weak, as NumPy 2 and JAX take it
(runtime/tracing/control_weak.py): `total = 0.0`, then `total = total + np.sum(row)` over
float32 rows, is float32 in the graph as it is eagerly, not float64. Each function here is
traced, and so are its gradient and its tangent; each gives the value and the dtype of the eager
NumPy code, in float32 and float64, and a float32 graph holds no float64 value.
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from tests.test_rule_table_dtypes import dtypes_computed_unlike_traced, graph_dtypes, precision


def rows(X, w):
    total = 0.0  # a `for` over a traced array's rows
    for row in X:
        total = total + np.sum(row * w)
    return total


def traced_range(x, w):
    total = 0.0  # a `for` over a range whose bound is traced
    for i in range(np.sum(x > -10.0)):
        total += x[i] ** 2 * w[i]
    return total


def traced_while(x, w):
    i = 0
    total = 0.0  # a `while` whose condition is traced from its first test
    while i < np.sum(x > -10.0):
        total = total + np.exp(x[i]) * w[i]
        i += 1
    return total


def branch(x, w):
    total = 0.0  # one branch leaves the Python float, the other a scalar of x's dtype
    if np.sum(x) > -100.0:
        total = total + np.sum(x ** 2 * w)
    return total * 2.0


def branch_in_loop(X, w):
    total = 0.0  # the `if` in the first iteration meets the Python float
    for row in X:
        if np.sum(row) > 0.0:
            total = total + np.sum(row * w)
        else:
            total = total - np.sum(row ** 2)
    return total


def weak_later(X, w):
    before, total = 0.0, 0.0  # `before` meets float32 in the second iteration only
    for row in X:
        before = total
        total = total + np.sum(row * w)
    return before * total


def nested(X, w):
    total = 0.0
    for row in X:
        inner = 0.0
        for value in row:
            inner = inner + np.tanh(value)
        total = total + inner * np.sum(w)
    return total


def int_start(X, w):
    total = 0  # a Python int: float32 once it meets the float32 sum
    for row in X:
        total = total + np.sum(row * w)
    return total


def decaying_steps(X, w):
    rate, k = 0.5, 1  # Python numbers the body leaves Python numbers: weak in the loop
    for row in X:
        w = w - rate * np.tanh(w * row) + k * 0.01 * w - rate ** 2 * w
        rate *= 0.9
        k = k + 1
    return np.sum(w) * -rate


def numbers_in_both_branches(x, w):
    scale, shift = 1.0, 0  # each branch leaves them Python numbers: weak after the `if`
    if np.sum(x) > 0.0:
        scale, shift = scale * 2.0, shift + 1
    else:
        scale = -scale
    return np.sum((x * scale + shift) * w)


def counted_in_a_loop_by_an_if(X, w):
    count = 0.0  # the `if` in the loop leaves it a Python float on both paths
    for row in X:
        if np.sum(row) > 0.0:
            count = count + 1.0
    return np.sum(w * count)


def counted_by_a_conditional_expression(X, w):
    count = 0.0  # likewise, by `a if c else b`
    for row in X:
        count = count + 0.5 if np.sum(row * w) > 0.0 else count - 1.0
    return np.sum(w * count)


FUNCTIONS = [rows, traced_range, traced_while, branch, branch_in_loop, weak_later, nested,
             int_start, decaying_steps, numbers_in_both_branches, counted_in_a_loop_by_an_if,
             counted_by_a_conditional_expression]
# Python numbers carried as such, float64 scalars in the graph as they are eagerly
# (`branch`: where the `if` leaves `total` the Python float, `total * 2.0` is Python's)
WEAK_SCALARS = {decaying_steps, numbers_in_both_branches, counted_in_a_loop_by_an_if,
                counted_by_a_conditional_expression, branch}
# Forward mode traces no loop over a traced range (in float64 neither).
UNTRACED_TANGENTS = {traced_range, traced_while}


def arguments(function, dtype):
    rng = np.random.default_rng(3)
    X, w = rng.normal(size=(3, 4)), rng.normal(size=4)
    matrix = function in (rows, branch_in_loop, weak_later, nested, int_start, decaying_steps,
                          counted_in_a_loop_by_an_if, counted_by_a_conditional_expression)
    return (X if matrix else X[0]).astype(dtype), w.astype(dtype)


def assert_same(traced, eager, dtype):
    assert np.result_type(traced) == np.result_type(eager)
    np.testing.assert_allclose(traced, eager, rtol=1e-6 if dtype == np.float32 else 1e-13)


def assert_no_wider(graph, dtype, args, function=None):
    """No value of `graph` is wider than `dtype`, but the scalars of Python's dtypes that
    stand for the Python numbers of a function in WEAK_SCALARS, as eagerly; and each
    equation computes the dtype the graph says, as NumPy does."""
    found = graph_dtypes(graph, scalars=function not in WEAK_SCALARS)
    assert max(precision(d) for d in found) <= precision(dtype), str(graph)
    assert dtypes_computed_unlike_traced(graph, args) == [], str(graph)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_traced_function_computes_what_numpy_does(function, dtype):
    args = arguments(function, dtype)
    eager = function(*args)
    assert np.result_type(eager) == dtype
    traced = autotrace.function(function)
    assert_same(traced(*args), eager, dtype)
    assert_no_wider(traced.graph(*args, optimized=False), dtype, args, function)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_traced_gradient_computes_what_numpy_does(function, dtype):
    args = arguments(function, dtype)
    gradient = autotrace.grad(function, wrt=(0, 1))
    eager = gradient(*args)
    traced = autotrace.function(gradient)
    for traced_part, eager_part in zip(traced(*args), eager):
        assert eager_part.dtype == dtype
        assert_same(traced_part, eager_part, dtype)
    assert_no_wider(traced.graph(*args, optimized=False), dtype, args, function)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("function", [f for f in FUNCTIONS if f not in UNTRACED_TANGENTS],
                         ids=lambda f: f.__name__)
def test_traced_tangent_computes_what_numpy_does(function, dtype):
    args = arguments(function, dtype)
    tangent = autotrace.forward(function, wrt=0)
    eager = tangent(*args)
    traced = autotrace.function(tangent)
    for traced_part, eager_part in zip(traced(*args), eager):
        assert_same(traced_part, eager_part, dtype)
    assert_no_wider(traced.graph(*args, optimized=False), dtype, args, function)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_both_branches_give_the_value_numpy_gives(dtype):
    """The branch that leaves the Python float gives it, as a scalar of the other's dtype."""
    traced = autotrace.function(branch)
    x, w = arguments(branch, dtype)
    low = np.full_like(x, -100.0)
    assert traced(low, w) == branch(low, w) == 0.0
    assert_same(traced(x, w), branch(x, w), dtype)


def test_a_loop_that_runs_no_iteration_gives_the_number_back():
    x, w = np.full(4, -20.0, np.float32), np.ones(4, np.float32)
    assert autotrace.function(traced_while)(x, w) == traced_while(x, w) == 0.0


def test_a_number_the_body_keeps_a_python_number_stays_in_pythons_dtype():
    def halving(X):
        scale = 1.0  # never meets an array: a Python float eagerly, float64 in the graph
        for _ in X:
            scale = scale * 0.5
        return scale

    X = np.ones((3, 4), np.float32)
    traced = autotrace.function(halving)(X)
    assert np.result_type(traced) == np.float64 and traced == halving(X) == 0.125


def test_a_complex_accumulator_takes_complex64_from_float32_rows():
    def spectrum(X):
        z = 0j
        for row in X:
            z = z * 0.5 + np.sum(row)
        return z

    X = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    assert_same(autotrace.function(spectrum)(X), spectrum(X), np.float32)
    assert np.result_type(spectrum(X)) == np.complex64


@pytest.mark.parametrize("negate", [False, True], ids=["then", "else"])
def test_numbers_both_branches_leave_stay_weak_on_either_path(negate):
    x, w = arguments(numbers_in_both_branches, np.float32)
    x = -x if negate else x
    traced = autotrace.function(numbers_in_both_branches)
    assert traced(x, w).dtype == np.float32
    assert traced(x, w) == numbers_in_both_branches(x, w)


def test_a_numpy_function_of_a_weak_number_is_a_numpy_scalar():
    """np.sqrt of a Python float is a float64 NumPy scalar, which is not weak: the float32
    sum times it is float64, eagerly and traced."""
    def shrink(X):
        rate = 4.0
        for _ in X:
            rate = rate * 0.25
        return np.sum(X[0]) * np.sqrt(rate)

    X = np.linspace(0.0, 1.0, 8, dtype=np.float32).reshape(2, 4)
    assert shrink(X).dtype == np.float64
    assert autotrace.function(shrink)(X).dtype == np.float64
    assert autotrace.function(shrink)(X) == shrink(X)


def test_a_weak_number_meeting_float32_is_rounded_to_float32_first():
    """`rate * x` with a Python float rate: NumPy rounds rate to float32, then multiplies;
    the traced loop gives the same bits, the rate decaying in float64 as Python's does."""
    def steps(X):
        rate, x = 0.1, X[0]
        for row in X:
            x = x + rate * row
            rate = rate / 3.0
        return x

    X = np.random.default_rng(5).normal(size=(6, 5)).astype(np.float32)
    np.testing.assert_array_equal(autotrace.function(steps)(X), steps(X))


def test_a_python_int_after_a_traced_if_meets_int8_as_numpy_does():
    # (it was carried as int64 and made the result int64: 400 where NumPy wraps to -112)
    def scaled(x):
        k = 3
        if x[0] > 0:
            k = k + 1
        m = 1 if x[1] > 0 else 2
        return np.array([100, -7], dtype=np.int8) * k, np.array([200], dtype=np.uint8) + m
    for x in (np.array([1.0, 1.0]), np.array([-1.0, -1.0])):
        for traced, eager in zip(autotrace.function(scaled)(x), scaled(x)):
            assert traced.dtype == eager.dtype
            np.testing.assert_array_equal(traced, eager)


def test_a_python_int_after_a_traced_if_compares_as_the_number_itself():
    # (cast to the array's integer dtype for a comparison, -1 became 255 beside uint8)
    def counted(a, b, flag):
        low, high = -1, 1000
        if flag > 0:
            low, high = 0, 2000
        return np.sum(a > low), b < high, a == 256
    u8, i8 = np.array([0, 2, 250], np.uint8), np.array([1, -2, 100], np.int8)
    for flag in (np.int64(0), np.int64(1)):
        for traced, eager in zip(autotrace.function(counted)(u8, i8, flag),
                                 counted(u8, i8, flag)):
            np.testing.assert_array_equal(traced, eager)


def clipped_by_a_carried_number(x):
    lr = 0.1
    i = 0
    while np.abs(np.sum(x)) * i < 5:  # (lr: a Python float the trace does not know)
        lr = lr * 0.5
        i += 1
    return np.clip(x, -lr, lr), np.clip(x, lr, None), np.where(x > 0, x, lr), \
        np.where(x > 0, 2 * lr, x), x.clip(-lr, lr)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_np_where_and_np_clip_take_a_carried_number_as_numpy_takes_the_number(dtype):
    x = np.array([0.02, -2.0, 3.0], dtype)
    traced = autotrace.function(clipped_by_a_carried_number)(x)
    for traced_item, eager_item in zip(traced, clipped_by_a_carried_number(x), strict=True):
        assert traced_item.dtype == eager_item.dtype == dtype
        np.testing.assert_array_equal(traced_item, eager_item)
