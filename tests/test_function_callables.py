"""What autotrace.function traces besides a plain function, as Python calls it: NumPy's ufuncs
and functions (called with the arguments given, no defaults spelled out), methods made static
or class methods under the decorator, and Enum members that are numbers."""
import enum

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


@pytest.mark.parametrize("function, args, kwargs", [
    (np.sin, (np.array([0.0, 1.0]),), {}),
    (np.add, (np.array([0.0, 1.0]), 2.5), {}),
    (np.sum, (np.arange(6.0).reshape(2, 3),), {}),
    (np.sum, (np.arange(6.0).reshape(2, 3),), {"axis": 1}),
    (np.sum, (np.arange(6.0).reshape(2, 3), 0), {}),
    (np.linalg.norm, (np.arange(6.0).reshape(2, 3),), {}),
    (np.mean, (np.arange(6.0).reshape(2, 3),), {"axis": 0, "keepdims": True}),
])
def test_a_numpy_function_traced_as_numpy_calls_it(function, args, kwargs):
    traced = autotrace.function(function)
    for _ in range(2):
        np.testing.assert_allclose(traced(*args, **kwargs), function(*args, **kwargs))
    assert traced.trace_count == 1


def test_a_numpy_function_with_a_static_axis_and_its_gradient():
    x = np.arange(6.0).reshape(2, 3)
    summed = autotrace.jit(np.sum, static_argnums=1)
    np.testing.assert_array_equal(summed(x, 0), x.sum(0))
    np.testing.assert_array_equal(summed(x, 1), x.sum(1))
    assert summed.trace_count == 2

    def loss(v):
        return np.sum(autotrace.function(np.sin)(v) ** 2)
    np.testing.assert_allclose(autotrace.grad(loss)(x), central_difference(loss, x), rtol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(x),
                               central_difference(loss, x), rtol=1e-6)


class Shapes:
    scale = 3.0

    @autotrace.function
    @staticmethod
    def shifted(x):
        return x + 1.0

    @autotrace.function
    @classmethod
    def scaled(cls, x):
        return x * cls.scale


class Larger(Shapes):
    scale = 5.0


def test_a_traced_static_method_and_class_method_bind_as_python_binds_them():
    x = np.ones(2)
    for owner in (Shapes, Shapes(), Larger, Larger()):
        np.testing.assert_array_equal(owner.shifted(x), x + 1.0)
        np.testing.assert_array_equal(owner.scaled(x), x * type(owner).scale
                                      if not isinstance(owner, type) else x * owner.scale)
    assert Shapes.__dict__["shifted"].trace_count == 1
    assert Shapes.__dict__["scaled"].trace_count == 2  # one a class: each its own trace

    def loss(v):
        return np.sum(Larger().scaled(v) ** 2 + Shapes.shifted(v) ** 2)
    x = np.array([0.5, -1.5])
    np.testing.assert_allclose(autotrace.grad(loss)(x), central_difference(loss, x), rtol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(x),
                               central_difference(loss, x), rtol=1e-6)


class Mode(enum.IntEnum):
    SINGLE = 1
    DOUBLE = 2


class Flags(enum.IntFlag):
    FOUR = 4


class Half(float, enum.Enum):
    HALF = 0.5


def scale(x, mode):
    return x * mode, mode - x, x ** mode, np.multiply(x, mode)


@pytest.mark.parametrize("mode", [Mode.DOUBLE, Flags.FOUR, Half.HALF])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64])
def test_an_enum_member_that_is_a_number_computes_as_numpy_computes_it(mode, dtype):
    """NumPy takes the member as an array of its number (int64 or float64), not a weak
    Python number: float32 * Mode.DOUBLE is float64."""
    x = np.arange(1, 4).astype(dtype)
    for result, expected in zip(autotrace.function(scale)(x, mode), scale(x, mode)):
        assert result.dtype == expected.dtype
        np.testing.assert_allclose(result, expected)


def test_an_enum_member_keys_its_trace_and_stays_a_member():
    def chosen(x, mode):
        return x * mode if mode is Mode.DOUBLE else x - mode
    traced = autotrace.function(chosen)
    x = np.ones(2)
    for mode in (Mode.DOUBLE, Mode.SINGLE, Mode.DOUBLE):
        np.testing.assert_array_equal(traced(x, mode), chosen(x, mode))
    assert traced.trace_count == 2

    def loss(v):
        return np.sum(chosen(v, Mode.DOUBLE) ** 2)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(x),
                               central_difference(loss, x), rtol=1e-6)
