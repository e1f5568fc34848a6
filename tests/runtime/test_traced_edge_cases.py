"""Edge cases where a traced function must give exactly NumPy's result, or NumPy's error.

Each case runs the function eagerly on NumPy and through autotrace.function twice (the trace,
then the cached graph): values (bit for bit, nan and the sign of zero too), dtype and shape.
- `a ** 2`, `a ** -1`, `a ** 0.5`: NumPy's ndarray `**` computes them with np.square,
  np.reciprocal and np.sqrt (a bool array squared is int8; complex, float16 and longdouble
  round as those ufuncs do, not as power).
- dtype= of a function kept whole (np.trace) as float, np.float32, 'f4' or np.dtype: the graph's
  source is valid Python.
- np.logical_and.reduce / np.logical_or.reduce with initial=.
- axis 0 or -1 of a 0-d array, which NumPy's ufunc reductions, argmax and cumsum take, and
  np.mean and ufunc.accumulate refuse.
"""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError, literal_source


def _same(result, expected) -> bool:
    if isinstance(expected, tuple):
        return isinstance(result, tuple) and len(result) == len(expected) and all(
            _same(r, e) for r, e in zip(result, expected))
    result, expected = np.asarray(result), np.asarray(expected)
    if result.shape != expected.shape or result.dtype != expected.dtype:
        return False
    if expected.dtype.kind == "c":
        return _same(result.real, expected.real) and _same(result.imag, expected.imag)
    if expected.dtype.kind == "f":
        return bool(np.array_equal(result, expected, equal_nan=True)
                    and np.array_equal(np.signbit(result), np.signbit(expected)))
    return bool(np.array_equal(result, expected))


def assert_like_numpy(function, *args):
    """function(*args) traced, then from the cache, is NumPy's result or raises NumPy's error."""
    try:
        with np.errstate(all="ignore"):
            expected = function(*args)
    except Exception as error:  # noqa: BLE001 - NumPy's error, whichever it is
        traced = autotrace.function(function)
        for _ in range(2):
            with pytest.raises(type(error)):
                traced(*args)
        return
    traced = autotrace.function(function)
    for _ in range(2):
        with np.errstate(all="ignore"):
            result = traced(*args)
        assert _same(result, expected), (function.__name__, args, result, expected)
    assert traced.trace_count == 1


# --- `**` of an array: NumPy's fast paths -------------------------------------------------------

def square_power(a):
    return a ** 2


def reciprocal_power(a):
    return a ** -1


def sqrt_power(a):
    return a ** 0.5


def first_power(a):
    return a ** 1


def float_square_power(a):
    return a ** 2.0


def bool_power(a):
    return a ** True


def power_of_argument(a, exponent):
    return a ** exponent


def power_of_numpy_integer(a):
    return a ** np.int64(2)


DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64",
          "longdouble", "complex64", "complex128"]
POWERS = [square_power, reciprocal_power, sqrt_power, float_square_power, bool_power,
          power_of_numpy_integer]


def _values(dtype: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    x = rng.standard_normal(64) * np.exp(rng.uniform(-6, 6, 64))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(64) * np.exp(rng.uniform(-6, 6, 64))
    if np.dtype(dtype).kind in "fc":
        x = np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0]])
    elif np.dtype(dtype).kind in "iu":
        x = np.concatenate([x, [0, 1, 2, 3, -3]]) % 100
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("function", POWERS, ids=lambda function: function.__name__)
def test_powers_of_arrays_are_numpys(function, dtype):
    array = _values(dtype)
    assert_like_numpy(function, array)
    assert_like_numpy(function, array[1:2].reshape(()).copy())  # a 0-d array: an array's `**`
    assert_like_numpy(function, array[1])  # a NumPy scalar: NumPy's scalar arithmetic


@pytest.mark.parametrize("dtype", DTYPES)
def test_first_powers_are_numpys(dtype):
    # (complex too: runtime/passes/algebra.py leaves x ** 1 of a complex x alone, whose zero's
    # sign NumPy's complex power drops: -0.0 ** 1 is 0.0)
    assert_like_numpy(first_power, _values(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("exponent", [2, -1, 0.5, 2.0])
def test_powers_of_arguments_are_numpys(dtype, exponent):
    assert_like_numpy(power_of_argument, _values(dtype), exponent)


def test_a_bool_array_squared_is_int8():
    flags = np.array([True, False, True])
    for result in (autotrace.function(square_power)(flags),
                   autotrace.function(power_of_argument)(flags, 2)):
        assert result.dtype == np.int8 and result.tolist() == [1, 0, 1]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "float32", "float64"])
def test_the_power_loop_agrees_with_the_fast_paths_where_power_stays(dtype):
    # runtime/primitives/elementwise.py keeps `power` for these dtypes: its loop computes
    # x ** 2, x ** -1 and x ** 0.5 as np.square, np.reciprocal and np.sqrt do, bit for bit
    x = _values(dtype)
    with np.errstate(all="ignore"):
        assert _same(np.power(x, 2), np.square(x))
        if x.dtype.kind == "f":
            assert _same(np.power(x, -1), np.reciprocal(x))
            assert _same(np.power(x, 0.5), np.sqrt(x))


def bool_power_of_a_loop_counter(flags, x):
    n = 0
    while np.sum(x) > n:  # a traced loop: n is a Python int the trace does not know
        n = n + 1
    return flags ** n


def bool_power_of_a_loop_float(flags, x):
    exponent = 0.0
    while np.sum(x) > exponent:  # a Python float: NumPy's power, whatever its value
        exponent = exponent + 0.5
    return flags ** exponent


def test_a_bool_array_to_a_python_float_a_traced_loop_carries_is_numpys():
    assert_like_numpy(bool_power_of_a_loop_float, np.array([True, False]), np.array([0.25]))


def test_a_bool_array_to_a_python_int_a_traced_loop_carries_is_refused():
    flags, x = np.array([True, False]), np.array([1.0, 0.5])
    assert bool_power_of_a_loop_counter(flags, x).dtype == np.int8  # n is 2 here, 1 elsewhere
    with pytest.raises(UntraceableError, match="int8 where the int is 2"):
        autotrace.function(bool_power_of_a_loop_counter)(flags, x)


# --- dtype= is an np.dtype in the graph, whichever way it is spelled ----------------------------

def trace_in_float32(m):
    return np.trace(m, dtype=np.float32)


def trace_in_python_float(m):
    return m.trace(dtype=float)


def trace_in_f4(m):
    return np.trace(m, 1, dtype="f4")


def trace_in_int(m):
    return m.trace(dtype=int)


def trace_in_dtype(m):
    return np.trace(m, dtype=np.dtype(np.complex64))


@pytest.mark.parametrize("function", [trace_in_float32, trace_in_python_float, trace_in_f4,
                                      trace_in_int, trace_in_dtype],
                         ids=lambda function: function.__name__)
def test_a_dtype_argument_makes_valid_source(function):
    m = np.arange(12.0).reshape(3, 4) * 1.25
    assert_like_numpy(function, m)
    traced = autotrace.function(function)
    compile(traced.source(m), "<traced>", "exec")
    assert "<class" not in str(traced.graph(m))


def test_scalar_types_print_as_source():
    assert literal_source(np.float32) == "np.float32"
    assert literal_source(float) == "float"
    assert literal_source(np.dtype("f4")) == "np.float32"
    with pytest.raises(TypeError, match="no Python source"):
        literal_source(Opaque)


class Opaque:
    """A type that neither NumPy nor Python's builtins name."""


# --- np.logical_and.reduce and np.logical_or.reduce with initial= -------------------------------

def and_initially_true(x):
    return np.logical_and.reduce(x, axis=0, initial=True)


def and_initially_false(x):
    return np.logical_and.reduce(x, axis=0, initial=False)


def or_initially_false(x):
    return np.logical_or.reduce(x, axis=1, initial=False)


def or_initially_true_kept(x):
    return np.logical_or.reduce(x, axis=None, keepdims=True, initial=True)


def and_of_floats_initially_half(x):
    return np.logical_and.reduce(x, axis=-1, initial=0.5)


def and_without_identity(x):
    return np.logical_and.reduce(x, axis=0, initial=None)


def and_over_everything_initially_false(x):
    return np.logical_and.reduce(x, axis=None, initial=False)


LOGICAL_REDUCTIONS = [and_initially_true, and_initially_false, or_initially_false,
                      or_initially_true_kept, and_of_floats_initially_half,
                      and_without_identity, and_over_everything_initially_false]


@pytest.mark.parametrize("function", LOGICAL_REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([[True, False, True], [True, True, False]]),
                               np.array([[1.5, 0.0], [2.0, -1.0]]), np.zeros((0, 3), bool),
                               np.zeros((2, 0), bool)], ids=["bools", "floats", "0x3", "2x0"])
def test_logical_reductions_with_initial_are_numpys(function, x):
    assert_like_numpy(function, x)


def and_where(x):
    return np.logical_and.reduce(x, axis=0, where=x)


def test_a_logical_reduction_with_where_is_refused():
    with pytest.raises(UntraceableError, match="where="):
        autotrace.function(and_where)(np.array([True, False]))


# --- axis 0 or -1 of a 0-d array -----------------------------------------------------------------

def sum_0(x):
    return np.sum(x, axis=0)


def sum_last(x):
    return np.sum(x, axis=-1)


def sum_0_kept(x):
    return np.sum(x, axis=0, keepdims=True)


def sum_first_of_tuple(x):
    return np.sum(x, axis=(0,))  # NumPy: AxisError for a 0-d array


def sum_1(x):
    return np.sum(x, axis=1)


def sum_bool_axis(x):
    return np.sum(x, axis=True)  # NumPy: TypeError


def prod_last(x):
    return np.prod(x, axis=-1)


def max_0(x):
    return np.max(x, axis=0)


def min_last(x):
    return np.min(x, axis=-1)


def any_0(x):
    return np.any(x, axis=0)


def all_last(x):
    return np.all(x, axis=-1)


def mean_0(x):
    return np.mean(x, axis=0)  # NumPy: AxisError for a 0-d array


def std_last(x):
    return np.std(x, axis=-1)


def argmax_last(x):
    return np.argmax(x, axis=-1)


def argmin_0_kept(x):
    return np.argmin(x, axis=0, keepdims=True)


def argmax_minus_2(x):
    return np.argmax(x, axis=-2)  # NumPy: AxisError for a 0-d or 1-d array


def cumsum_last(x):
    return np.cumsum(x, axis=-1)


def cumprod_last(x):
    return np.cumprod(x, axis=-1)


def cumsum_0_in_float32(x):
    return np.cumsum(x, axis=0, dtype=np.float32)


def methods(x):
    return x.sum(axis=0), x.max(axis=-1), x.all(axis=0), x.argmax(axis=-1), x.cumsum(axis=0)


def add_reduce(x):
    return np.add.reduce(x)


def maximum_reduce_last(x):
    return np.maximum.reduce(x, axis=-1)


def or_reduce_initially_false(x):
    return np.logical_or.reduce(x, initial=False)


def add_accumulate(x):
    return np.add.accumulate(x)  # NumPy: TypeError for a 0-d array


def add_accumulate_everything(x):
    return np.add.accumulate(x, axis=None)  # NumPy: ValueError beyond one dimension


def multiply_accumulate_of_tuple(x):
    return np.multiply.accumulate(x, axis=(-1,))


AXIS_CASES = [sum_0, sum_last, sum_0_kept, sum_first_of_tuple, sum_1, sum_bool_axis, prod_last,
              max_0, min_last, any_0, all_last, mean_0, std_last, argmax_last, argmin_0_kept,
              argmax_minus_2, cumsum_last, cumprod_last, cumsum_0_in_float32, methods,
              add_reduce, maximum_reduce_last, or_reduce_initially_false, add_accumulate,
              add_accumulate_everything, multiply_accumulate_of_tuple]


@pytest.mark.parametrize("function", AXIS_CASES, ids=lambda function: function.__name__)
@pytest.mark.parametrize("x", [np.array(2.5), np.array(True), np.float64(-1.5),
                               np.array([1.5, -2.0, 3.0]), np.array([[1.0, 0.0], [2.0, 3.0]])],
                         ids=["0-d", "0-d bool", "scalar", "1-d", "2-d"])
def test_axes_of_reductions_are_numpys(function, x):
    assert_like_numpy(function, x)
