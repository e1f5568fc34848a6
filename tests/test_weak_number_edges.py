"""Python numbers a traced loop or `if` carries, where they leave the trace or meet NumPy's
functions: each compared with the eager call exactly (value, dtype, type, error)."""
import linecache
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.ops import UntraceableError

X32 = np.array([1.25, -0.75, 2.0], np.float32)
X8 = np.array([1, -2, 3], np.int8)


def counted(x, start, step):
    """A Python number a traced loop carries: `start`, plus `step` per positive item."""
    n = start
    for i in range(3):
        if x[i] > 0:
            n = n + step
    return n


def scaled(x, start):
    """A Python float a traced loop carries, left `start` (times 1.0 per positive item)."""
    lr = start
    for i in range(3):
        if x[i] > 0:
            lr = lr * 1.0
    return lr


def assert_same(eager, traced):
    assert type(traced) is type(eager)
    if isinstance(eager, np.ndarray | np.generic):
        assert traced.dtype == eager.dtype
        np.testing.assert_array_equal(traced, eager)
    else:
        assert traced == eager


def check(function, x):
    assert_same(function(x), autotrace.function(function)(x))


def loop_count(x):
    n = 0
    for i in range(3):
        if x[i] > 0:
            n += 2
    return n


def if_int(x):
    n = 0
    if x[0] > 0:
        n = 5
    return n


def while_count(x):
    n = 0
    while n < x[0] * 3:
        n += 1
    return n


def if_float(x):
    m = 0.5
    if x[0] > 0:
        m = 5.0
    return m


def several(x):
    n = loop_count(x)
    return n, n * 1.5, -n, [n + 1]


@pytest.mark.parametrize("function", [loop_count, if_int, while_count, if_float, several])
def test_returned_python_number_is_one(function):
    traced = autotrace.function(function)
    for x in (X32, -X32):
        eager, result = function(x), traced(x)
        assert result == eager and type(result) is type(eager)
        if isinstance(eager, tuple):
            assert [type(item) for item in result] == [type(item) for item in eager]
    assert traced(X32) == 4 or function is not loop_count
    assert type(traced(X32)) is type(function(X32))


def test_returned_python_int_from_inner_trace_meets_arrays_as_one():
    inner = autotrace.function(loop_count)
    outer = autotrace.function(lambda x: inner(x) + x)
    result = outer(X32)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.array([5.25, 3.25, 6.0], np.float32))


def number_or_f32(x):
    m = 0.1
    if x[0] > 0:
        m = x[0]
    return m


def int_or_f32(x):
    m = 3
    if x[0] > 0:
        m = x[0]
    return m


def int_or_int8(x):
    m = 3
    if x[0] > 0:
        m = np.int8(5)
    return m


@pytest.mark.parametrize("function, batch", [
    (number_or_f32, np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)),    # float32 every time
    (number_or_f32, np.array([[1.0, 2.0], [-3.0, 4.0]], np.float32)),   # one of each: float64
    (number_or_f32, np.array([[-1.0, 2.0], [-3.0, 4.0]], np.float32)),  # 0.1 every time
    (int_or_f32, np.array([[1.0, 2.0], [-3.0, 4.0]], np.float32)),
    (int_or_f32, np.array([[-1.0, 2.0], [-3.0, 4.0]], np.float32)),     # int64
    (int_or_int8, np.array([[1, 2], [3, 4]], np.int8)),                 # int8
    (int_or_int8, np.array([[1, 2], [-3, 4]], np.int8)),                # int64
    (loop_count, np.array([[1.0, 2.0, -1.0], [3.0, -4.0, -1.0]], np.float32)),
])
def test_vmap_of_either_value_is_np_stack_of_examples(function, batch):
    eager = np.stack([function(x) for x in batch])
    result = autotrace.vmap(function)(batch)
    assert result.dtype == eager.dtype
    np.testing.assert_array_equal(result, eager)


def test_vmap_of_either_value_traced_in_a_function_is_refused():
    batch = np.array([[1.0, 2.0], [-3.0, 4.0]], np.float32)
    with pytest.raises(UntraceableError) as error:
        autotrace.function(autotrace.vmap(number_or_f32))(batch)
    message = str(error.value)
    assert "test_weak_number_edges.py" in message and "if x[0] > 0:" in message
    assert "a NumPy float32 value on one path and a Python float on the other" in message
    assert "np.stack" in message


def test_vmap_of_either_value_of_one_stacked_dtype_traced_in_a_function():
    def f64_or_number(x):
        m = 0.1
        if x[0] > 0:
            m = np.float64(x[0])
        return m
    batch = np.array([[1.0, 2.0], [-3.0, 4.0]], np.float32)
    result = autotrace.function(autotrace.vmap(f64_or_number))(batch)
    assert result.dtype == np.float64
    np.testing.assert_array_equal(result, np.array([1.0, 0.1]))


@pytest.mark.parametrize("function", [
    lambda x: np.isclose(x, scaled(x, 1.25), rtol=0, atol=0),    # compared in float32
    lambda x: np.isclose(scaled(x, 1.25), x, rtol=0, atol=0),
    lambda x: np.isclose(x, scaled(x, 1.25) + 1e-8),
    lambda x: np.isclose(x.astype(np.int8), counted(x, 300, 0)),  # (float64: no overflow)
    lambda x: np.isclose(x.astype(np.int8), counted(x, 1, 0)),
    lambda x: np.round(scaled(x, 0.123456789), 3),
    lambda x: np.round(scaled(x, 0.123456789), 3) + x,
    lambda x: np.imag(scaled(x, 1.2)),
    lambda x: np.imag(counted(x, 3, 1)),
    lambda x: np.real(scaled(x, 1.2)),
    lambda x: np.isreal(scaled(x, 1.2)),
    lambda x: np.iscomplex(scaled(x, 1.2)),
    lambda x: np.angle(scaled(x, 1.2)),
    lambda x: np.sinc(scaled(x, 0.3)) + x,
    lambda x: np.nan_to_num(scaled(x, 0.3)),
    lambda x: np.where(x > 0, x, scaled(x, 0.1)),
    lambda x: np.clip(x, -scaled(x, 0.1), scaled(x, 0.1)),
])
def test_registered_functions_take_a_carried_number_as_numpy_does(function):
    check(function, X32)


@pytest.mark.parametrize("function", [
    lambda x: np.where(x > 0, x, counted(x, 5, 1)),      # int8
    lambda x: np.where(x > 0, x, counted(x, 300, 1)),    # wrapped around, as NumPy's where
    lambda x: np.where(x > 0, x, counted(x, -300, 1)),
    lambda x: np.clip(x, -counted(x, 5, 1), counted(x, 5, 1)),
    lambda x: np.clip(x, counted(x, -300, 0), counted(x, 2, 0)),  # -300: no lower bound
    lambda x: np.clip(x, counted(x, 2, 0), counted(x, 300, 0)),
    lambda x: np.clip(x, counted(x, -300, 0), None),
    lambda x: np.clip(x, None, counted(x, 300, 1)),
    lambda x: np.full(3, counted(x, 5, 1), np.int8),
    lambda x: np.array([counted(x, 3, 1), 1], np.uint8),
])
def test_carried_int_beside_int8_array_as_numpy(function):
    check(function, X8)


def test_carried_int_beside_uint8_array_as_numpy():
    u8 = np.array([1, 200, 3], np.uint8)
    check(lambda x: np.clip(x, counted(x, -5, 1), counted(x, 300, 1)), u8)
    check(lambda x: np.where(x > 100, x, counted(x, -5, 1)), u8)


def fill_300(x):
    y = x.copy()
    y.fill(counted(x, 300, 1))
    return y


def assign_300(x):
    y = x.copy()
    y[0] = counted(x, 300, 1)
    return y


@pytest.mark.parametrize("function, line, number, dtype", [
    (lambda x: np.full(3, counted(x, 300, 1), np.int8), "np.full(3", 302, "int8"),
    (lambda x: np.full_like(x, counted(x, 300, 1)), "np.full_like(x", 302, "int8"),
    (lambda x: np.asarray(counted(x, 300, 1), np.int8), "np.asarray(", 302, "int8"),
    (lambda x: np.array(counted(x, 300, 1), np.int8), "np.array(counted", 302, "int8"),
    (lambda x: np.array([counted(x, 300, 1)], np.int8), "np.array([counted", 302, "int8"),
    (lambda x: np.full(2, counted(x, -9, 1), np.uint8), "np.full(2", -7, "uint8"),
    (lambda x: np.clip(x, counted(x, -400, 0), counted(x, -300, 0)), "np.clip(x, counted",
     -300, "int8"),
    (fill_300, "y.fill(", 302, "int8"),
])
def test_carried_int_out_of_range_raises_overflow_naming_the_line(function, line, number,
                                                                   dtype):
    with pytest.raises(OverflowError, match=f"Python integer {number} out of bounds for "
                                            f"{dtype}"):
        function(X8)
    with pytest.raises(OverflowError) as error:
        autotrace.function(function)(X8)
    message = str(error.value)
    assert f"Python integer {number} out of bounds for {dtype}" in message
    site = re.search(r'File "([^"]+)", line (\d+)', message)
    assert site.group(1) == __file__
    assert line in linecache.getline(__file__, int(site.group(2)))


def test_assigned_carried_int_out_of_range_raises_overflow():
    with pytest.raises(OverflowError, match="Python integer 302 out of bounds for int8"):
        assign_300(X8)
    with pytest.raises(OverflowError, match="Python integer 302 out of bounds for int8"):
        autotrace.function(assign_300)(X8)
    check(lambda x: np.full(3, counted(x, 100, 1), np.int8), X8)


def test_gradient_with_carried_number_in_isclose_and_where():
    def loss(w):
        lr = scaled(w, 0.5)
        mask = np.isclose(w, lr, rtol=0, atol=0)
        return np.sum(np.where(mask, w * 3.0, w * w))
    w = np.array([0.5, -1.0, 2.0], np.float32)
    gradient = autotrace.function(autotrace.grad(loss))(w)
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, np.array([3.0, -2.0, 4.0], np.float32))


def test_exported_function_returns_the_python_number(tmp_path):
    import importlib.util
    path = tmp_path / "counted_module.py"
    autotrace.export(several, X32, str(path))
    spec = importlib.util.spec_from_file_location("counted_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.several(X32)
    assert result == several(X32)
    assert [type(item) for item in result] == [int, float, int, list]
