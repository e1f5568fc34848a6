"""A variable that a traced `if` leaves a Python number on one path and a NumPy scalar on the
other (`m = 0.1`, `if x[0] > 0: m = x[0]`) is an either-value (runtime/tracing/weak_scalars.py):
what is computed from it is what NumPy computes on the path taken, not the number rounded to the
other path's dtype; where the two paths would give two dtypes of arrays it is refused, and a
traced loop refuses a start its dtype does not hold where it may run no iteration.
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control import ControlFlowError
from autotrace.runtime.ops import UntraceableError
from tests.numeric import check_every_mode


def number_or_scalar(x, y):
    m = 0.1  # a Python float
    if x[0] > 0:
        m = x[0]  # a NumPy scalar of x's dtype
    return m * y


def sentinel(x):
    found = -1  # a Python int, out of uint8's range
    for i in range(x.shape[0]):
        if x[i] > 100:
            found = x[i]
    return found


def number_then_arithmetic(x, y):
    m = 0.1
    if x[0] > 0:
        m = x[0]
    return (m + 0.3) * y, -m * y, m ** 2 * y, (m == 0.1) * y


def zero_trips(x, y):
    s = 0.1
    i = 0
    while x[i] > 0:
        s = s + x[i]
        i += 1
    return s * y


X32 = [np.array([-1.0, 2.0], np.float32), np.array([2.0, 1.0], np.float32)]


@pytest.mark.parametrize("x", X32, ids=["number", "scalar"])
@pytest.mark.parametrize("y_dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_a_number_one_branch_leaves_is_not_rounded(x, y_dtype):
    y = np.array([1.0, 10.0], y_dtype)
    for function in (number_or_scalar, number_then_arithmetic):
        eager, traced = function(x, y), autotrace.function(function)(x, y)
        for eager_part, traced_part in zip(np.broadcast_arrays(*np.atleast_1d(eager)),
                                           np.broadcast_arrays(*np.atleast_1d(traced))):
            assert traced_part.dtype == eager_part.dtype
            np.testing.assert_array_equal(traced_part, eager_part)


@pytest.mark.parametrize("x", [np.array([1, 2, 3], np.uint8), np.array([1, 200, 3], np.uint8)],
                         ids=["none", "found"])
def test_an_int_out_of_the_other_paths_range_is_kept(x):
    assert autotrace.function(sentinel)(x) == sentinel(x)


def test_two_dtypes_of_arrays_by_the_path_are_refused():
    # 0.1 * a float16 array is float16, a float32 scalar times it float32: no one dtype
    y = np.array([1.0, 10.0], np.float16)
    with pytest.raises(UntraceableError, match=r"number_or_scalar|if x\[0\] > 0:[\s\S]*a Python "
                       r"float on one path and a NumPy float32 value on the other[\s\S]*one "
                       r"traced value has one dtype"):
        autotrace.function(number_or_scalar)(X32[0], y)


def test_a_start_the_loop_dtype_does_not_hold_is_refused():
    with pytest.raises(ControlFlowError, match=r"variable 's' starts as the Python float 0.1 "
                       r"before this while loop on a traced value, whose body makes it "
                       r"float32, and float32 does not hold 0.1 exactly"):
        autotrace.function(zero_trips)(X32[0], np.array([10.0]))


def test_an_int_start_out_of_range_of_a_loop_is_refused():
    def first_large(x):
        found = -1
        for v in x:  # a traced loop over the array
            if v > 100:
                found = v + 0
        return found
    with pytest.raises(ControlFlowError, match=r"variable 'found' starts as the Python int -1"
                       r"[\s\S]*does not hold -1 \(NumPy compares the number as it is"):
        autotrace.function(first_large)(np.array([1, 200, 3], np.uint8))


def either_gradient(x):
    m = 0.1
    if x[0] > 0:
        m = x[0] * x[1]
    return np.sum(m * x) + m ** 2


def float32_either(x):
    m = 0.1  # a Python float, or a float32 scalar: 0.1 * x is float64, not 0.1 rounded
    if x[0] > 0:
        m = (x[0] * x[1]).astype(np.float32)
    return np.sum(m * x)


@pytest.mark.parametrize("x", [np.array([0.7, -1.3, 0.4]), np.array([-0.7, 1.3, 0.4])],
                         ids=["scalar", "number"])
def test_gradients_through_a_number_one_branch_leaves(x):
    check_every_mode(either_gradient, x)
    eager = autotrace.grad(float32_either)(x)
    np.testing.assert_array_equal(autotrace.function(autotrace.grad(float32_either))(x), eager)
    np.testing.assert_array_equal(autotrace.function(float32_either)(x), float32_either(x))
    vmapped = autotrace.vmap(autotrace.grad(either_gradient))(np.stack([x, -x]))
    np.testing.assert_allclose(vmapped[0], autotrace.grad(either_gradient)(x), rtol=1e-12)
    np.testing.assert_allclose(vmapped[1], autotrace.grad(either_gradient)(-x), rtol=1e-12)


def nested_either(x):
    m = 0.5
    if x[0] > 0:
        if x[1] > 0:  # an either-value made inside the outer branch, joined again after it
            m = x[1] * x[2]
    return np.sum(m * x)


@pytest.mark.parametrize("x", [np.array([0.7, 1.3, 0.4]), np.array([0.7, -1.3, 0.4]),
                               np.array([-0.7, 1.3, 0.4])], ids=["both", "outer", "none"])
def test_an_either_value_of_a_nested_if(x):
    assert autotrace.function(nested_either)(x) == nested_either(x)
    check_every_mode(nested_either, x)


def number_or_float64(x, y):
    if x[0] > 0:
        c = 2.0  # a Python float: weak, 2.0 * a float32 array is float32
    else:
        c = np.float64(3.0)  # a NumPy float64: times a float32 array, float64
    return c * y  # (number or float64 times y)


def number_or_float64_in_numpy_functions(x, y):
    if x[0] > 0:
        c = 2.0
    else:
        c = np.float64(3.0)
    return np.sin(c) * y, c + 1.0, c * x  # (float64 on both paths)


FLOAT32_Y = np.array([1.0, 10.0], np.float32)
PATHS = [np.array([1.5, -2.0]), np.array([-1.5, 2.0])]


@pytest.mark.parametrize("x", PATHS, ids=["number", "float64"])
def test_a_number_or_a_float64_times_a_float32_array_is_refused(x):
    line = number_or_float64.__code__.co_firstlineno
    expected = (
        f"{__file__}:{line + 1}: if x[0] > 0:\n  leaves this variable a Python float on one "
        f"path and a NumPy float64 value on the other, and np.multiply of it gives a NumPy "
        f"float32 value or a NumPy float64 value, depending on the path: one traced value has "
        f"one dtype; give the variable one type on every path (write np.float64(...) of the "
        f"Python number set on one of them)")
    assert number_or_float64(x, FLOAT32_Y).dtype == (np.float32 if x[0] > 0 else np.float64)
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(number_or_float64)(x, FLOAT32_Y)
    assert str(caught.value).startswith(expected)
    with pytest.raises(UntraceableError) as caught:
        autotrace.vmap(number_or_float64, in_axes=(0, None))(np.stack(PATHS), FLOAT32_Y)
    assert str(caught.value).startswith(expected)


@pytest.mark.parametrize("x", PATHS, ids=["number", "float64"])
def test_a_number_or_a_float64_where_numpy_gives_one_dtype_is_traced(x):
    y64 = FLOAT32_Y.astype(np.float64)
    for function, y in [(number_or_float64, y64),
                        (number_or_float64_in_numpy_functions, FLOAT32_Y)]:
        eager, traced = function(x, y), autotrace.function(function)(x, y)
        pairs = zip(eager, traced) if isinstance(eager, tuple) else [(eager, traced)]
        for eager_part, traced_part in pairs:
            assert np.asarray(traced_part).dtype == np.asarray(eager_part).dtype
            np.testing.assert_array_equal(traced_part, eager_part)


def number_or_float64_expression(x, y):
    c = 2.0 if x[0] > 0 else np.float64(3.0)
    return c * y


@pytest.mark.parametrize("x", PATHS, ids=["number", "float64"])
def test_a_number_or_a_float64_by_a_conditional_expression(x):
    line = number_or_float64_expression.__code__.co_firstlineno
    expected = (
        f"{__file__}:{line + 1}: 2.0 if x[0] > 0 else np.float64(3.0)\n  leaves this variable "
        f"a Python float on one path and a NumPy float64 value on the other, and np.multiply "
        f"of it gives a NumPy float32 value or a NumPy float64 value, depending on the path")
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(number_or_float64_expression)(x, FLOAT32_Y)
    assert str(caught.value).startswith(expected)
    y64 = FLOAT32_Y.astype(np.float64)
    traced = autotrace.function(number_or_float64_expression)(x, y64)
    assert traced.dtype == np.float64
    np.testing.assert_array_equal(traced, number_or_float64_expression(x, y64))


def positive_or_three(x, o):
    c = x[0] if x[0] > 0 else 3
    return c * o


def positive_or_three_statement(x, o):
    if x[0] > 0:
        c = x[0]
    else:
        c = 3
    return c * o


def positive_or_half(x, h):
    c = x[0] if x[0] > 0 else 0.5
    return c * h


INT8_O = np.array([100, -100], np.int8)


@pytest.mark.parametrize("f, x, other, kinds", [
    # NumPy: 3 * o is int8 ([44, -44]), the float32 item times it float32
    (positive_or_three, np.array([-1.5], np.float32), INT8_O,
     "a NumPy float32 value or a NumPy int8 value"),
    (positive_or_three_statement, np.array([0], np.uint8), INT8_O,
     "a NumPy int16 value or a NumPy int8 value"),
    # 0.5 * h is float16, the float32 item times it float32
    (positive_or_half, np.array([-1.5], np.float32), np.array([1000.3], np.float16),
     "a NumPy float32 value or a NumPy float16 value")], ids=["int", "statement", "float16"])
def test_a_number_or_an_item_is_never_the_items_dtype_where_numpy_tells_them_apart(
        f, x, other, kinds):
    eager = f(x, other)
    assert eager.dtype == other.dtype  # (the number's path, which x takes)
    first, second = ("NumPy uint8 value", "Python int") if x.dtype == np.uint8 else (
        "NumPy float32 value", f"Python {'int' if f is positive_or_three else 'float'}")
    line = f.__code__.co_firstlineno + 1
    text = "if x[0] > 0:" if f is positive_or_three_statement else (
        f"x[0] if x[0] > 0 else {3 if f is positive_or_three else 0.5}")
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(f)(x, other)
    assert str(caught.value).startswith(
        f"{__file__}:{line}: {text}\n  leaves this variable a {first} on one path and a "
        f"{second} on the other, and np.multiply of it gives {kinds}, depending on the path: "
        f"one traced value has one dtype; give the variable one type on every path (write "
        f"np.{first.split()[1]}(...) of the Python number set on one of them)")


def item_or_number(x, o, s, number):
    c = x[0] if s > 0 else number
    return c * o


@pytest.mark.parametrize("s", [1.0, -1.0])
def test_an_int_that_the_other_paths_dtype_does_not_hold_is_refused(s):
    x = np.array([3], np.int8)
    line = item_or_number.__code__.co_firstlineno + 1
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(item_or_number)(x, INT8_O, np.float64(s), 300)
    assert str(caught.value).startswith(
        f"{__file__}:{line}: x[0] if s > 0 else number\n  leaves this variable a Python int "
        f"on one path and a NumPy int8 value on the other, and np.multiply of it casts the int "
        f"300 to int8, which does not hold it (NumPy raises OverflowError for an int out of "
        f"its range): give the variable one type on every path (write np.int8(...) of the "
        f"Python number set on one of them)")
    # one it holds: NumPy's int8 on both paths
    traced = autotrace.function(item_or_number)(x, INT8_O, np.float64(s), -2)
    eager = item_or_number(x, INT8_O, s, -2)
    assert traced.dtype == eager.dtype == np.int8
    np.testing.assert_array_equal(traced, eager)


def number_or_float64_chosen_again(x, s):
    c = 3.0 if s > 0 else np.float64(2.0)
    d = c if s > 5 else c
    return d * x


@pytest.mark.parametrize("s", [1.0, 6.0, -1.0])
def test_an_either_value_chosen_by_a_conditional_expression_stays_one(s):
    line = number_or_float64_chosen_again.__code__.co_firstlineno + 2
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(number_or_float64_chosen_again)(X32F[0], np.float64(s))
    assert str(caught.value).startswith(
        f"{__file__}:{line}: c if s > 5 else c\n  leaves this variable a Python float on one "
        f"path and a NumPy float64 value on the other, and np.multiply of it gives a NumPy "
        f"float32 value or a NumPy float64 value, depending on the path")
    x = X32F[0].astype(np.float64)
    traced = autotrace.function(number_or_float64_chosen_again)(x, np.float64(s))
    np.testing.assert_array_equal(traced, number_or_float64_chosen_again(x, s))
    assert traced.dtype == np.float64


X32F = [np.array([0.1, 0.7], np.float32)]
