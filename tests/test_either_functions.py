"""An either-value (a Python number on one path of a traced `if`, a NumPy scalar on the other)
given to a NumPy function, or returned, is what NumPy makes of it on the path taken
(runtime/tracing/tracer_eithers.py): never the number rounded to the scalar's dtype (1e40 is
inf as a float32), and refused at the `if` where NumPy gives two dtypes by the path.
"""
from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

import autotrace
from autotrace.runtime.ops import UntraceableError
from tests.numeric import check_every_mode

NUMBER_PATH = np.array([0.5, 2.0], np.float32)  # np.sum(x) > 0: the Python number
SCALAR_PATH = np.array([-0.5, -2.0], np.float32)  # else: np.float32(1.0)
PATHS = [NUMBER_PATH, SCALAR_PATH]


# How the refusals of a variable of two types on two paths close
ONE_TYPE = ("give the variable one type on every path (write np.%s(...) of the Python number "
            "set on one of them)")


def big_or_one(x, use, number=1e40):
    big = number if np.sum(x) > 0 else np.float32(1.0)
    return use(x, big)


# NumPy gives one dtype on both paths: the traced result is NumPy's, value and dtype
SAME_DTYPE = {
    "where": lambda x, big: np.where(x > 1, big, x),  # (1e40 weak: inf as float32)
    "where_other": lambda x, big: np.where(x > 1, x, big),
    "clip": lambda x, big: np.clip(x, 0, big),
    "maximum": lambda x, big: np.maximum(x, big),
    "full_like": lambda x, big: np.full_like(x, big),
    "full_float32": lambda x, big: np.full(2, big, dtype=np.float32),
    "asarray_float32": lambda x, big: np.asarray(big, np.float32),
    "linspace_from_item": lambda x, big: np.linspace(x[1], big, 3),
    "array_of_list": lambda x, big: np.array([big, 1.0]),
    "cumsum_of_list": lambda x, big: np.cumsum([big, 1.0]),
    "max_of_list": lambda x, big: np.max([big, 2.0]),
    "float64": lambda x, big: np.float64(big),
    "isfinite": lambda x, big: np.isfinite(big),
    "heaviside": lambda x, big: np.heaviside(x, big),
    "fill": lambda x, big: _filled(x, big),
}


def _filled(x, big):
    y = np.zeros_like(x)
    y.fill(big)
    return y


def _assert_numpys(traced, eager):
    """Of one type, dtype, shape and value (NaN where NumPy's is NaN)."""
    assert type(traced) is type(eager)
    if isinstance(eager, (tuple, list)):
        assert len(traced) == len(eager)
        for traced_item, eager_item in zip(traced, eager):
            _assert_numpys(traced_item, eager_item)
        return
    assert np.asarray(traced).dtype == np.asarray(eager).dtype
    np.testing.assert_array_equal(traced, eager, strict=True)


@pytest.mark.parametrize("x", PATHS, ids=["number", "scalar"])
@pytest.mark.parametrize("name", sorted(SAME_DTYPE))
def test_a_numpy_function_of_an_either_value_is_numpys_on_each_path(name, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (1e40 cast to float32: inf)
        eager = big_or_one(x, SAME_DTYPE[name])
        traced = autotrace.function(big_or_one)(x, SAME_DTYPE[name])
    _assert_numpys(traced, eager)


def test_the_number_is_never_rounded_to_the_scalars_dtype():
    where = autotrace.function(big_or_one)(NUMBER_PATH, SAME_DTYPE["where"], 0.1)
    assert where.dtype == np.float32 and where[1] == np.float32(0.1)
    linspace = autotrace.function(big_or_one)(NUMBER_PATH, lambda x, big: np.array([big, 1.0]),
                                              0.1)
    assert linspace.dtype == np.float64 and linspace[0] == 0.1  # (not float32's 0.1)


# NumPy gives a float64 array on one path, a float32 one on the other: one graph cannot
TWO_DTYPES = {
    "np.full": lambda x, big: np.full(3, big),
    "np.asarray": lambda x, big: np.asarray(big),
    "np.concatenate": lambda x, big: np.concatenate([x, [big]]),
    "np.linspace": lambda x, big: np.linspace(0, big, 3),
    "np.sum": lambda x, big: np.sum(big),
    "np.stack": lambda x, big: np.stack([big, x[0]]),
}


@pytest.mark.parametrize("x", PATHS, ids=["number", "scalar"])
@pytest.mark.parametrize("name", sorted(TWO_DTYPES))
def test_a_numpy_function_that_gives_two_dtypes_by_the_path_is_refused(name, x):
    dtypes = {np.asarray(big_or_one(path, TWO_DTYPES[name])).dtype for path in PATHS}
    assert dtypes == {np.dtype(np.float64), np.dtype(np.float32)}
    line = big_or_one.__code__.co_firstlineno + 1
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(big_or_one)(x, TWO_DTYPES[name])
    assert str(caught.value).startswith(
        f"{__file__}:{line}: number if np.sum(x) > 0 else np.float32(1.0)\n  leaves this "
        f"variable a Python float on one path and a NumPy float32 value on the other, and "
        f"{name} of it gives a NumPy float64 value or a NumPy float32 value, depending on the "
        f"path: one traced value has one dtype; {ONE_TYPE % 'float32'}")


def multiplied_into(x, big):
    y = np.zeros_like(x)
    np.multiply(x, big, out=y)  # (the write of what is computed on each path and chosen)
    return y


def clipped_into(x, big):
    y = np.zeros_like(x)
    np.clip(x, 0, big, out=y)
    return y


@pytest.mark.parametrize("x", PATHS, ids=["number", "scalar"])
@pytest.mark.parametrize("written", [multiplied_into, clipped_into])
def test_an_out_argument_is_written_once(written, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _assert_numpys(autotrace.function(big_or_one)(x, written), big_or_one(x, written))


RETURNED = {
    "itself": lambda x, big: big,
    "in_a_tuple": lambda x, big: (big, x),
    "in_a_list": lambda x, big: [big],
    "plus_a_number": lambda x, big: big + 1.0,
    "negated": lambda x, big: -big,
}


@pytest.mark.parametrize("x", PATHS, ids=["number", "scalar"])
@pytest.mark.parametrize("name", sorted(RETURNED))
def test_a_returned_either_value_is_the_kind_of_the_path_taken(name, x):
    eager = big_or_one(x, RETURNED[name])
    traced = autotrace.function(big_or_one)(x, RETURNED[name])
    _assert_numpys(traced, eager)
    first = traced[0] if isinstance(traced, (tuple, list)) else traced
    assert type(first) is (float if x is NUMBER_PATH else np.float32)


def test_a_returned_either_value_under_vmap_is_the_stack_of_the_examples():
    batch = np.stack(PATHS)
    examples = np.stack([big_or_one(x, RETURNED["itself"]) for x in PATHS])
    vmapped = autotrace.vmap(big_or_one, in_axes=(0, None))(batch, RETURNED["itself"])
    assert vmapped.dtype == examples.dtype == np.float64
    np.testing.assert_array_equal(vmapped, examples)


def number_or_product(x):
    big = 2.0 if np.sum(x) > 0 else x[0] * x[1]
    return np.sum(np.where(x > 1, big, x) ** 2) + np.sum(np.clip(x, 0, big)) \
        + np.sum(np.maximum(x, big) * np.full_like(x, big))


@pytest.mark.parametrize("x", [np.array([0.5, 2.5, 1.5]), np.array([-0.5, -2.0, 1.5])],
                         ids=["number", "product"])
def test_gradients_through_numpy_functions_of_an_either_value(x):
    check_every_mode(number_or_product, x)
    x32 = x.astype(np.float32)
    eager = autotrace.grad(number_or_product)(x32)
    traced = autotrace.function(autotrace.grad(number_or_product))(x32)
    assert traced.dtype == eager.dtype == np.float32
    np.testing.assert_array_equal(traced, eager)
    assert autotrace.function(number_or_product)(x32) == number_or_product(x32)


def assigned_into_float64(x, big):
    y = np.zeros(3)  # a NumPy array made here: 0.1 is written as 0.1, not as a float32
    y[0] = big
    w = x.astype(np.float64)  # a traced one
    w[1:] = big
    return y, w


@pytest.mark.parametrize("x", PATHS, ids=["number", "scalar"])
def test_an_either_value_assigned_into_an_array_is_cast_as_on_each_path(x):
    eager = big_or_one(x, assigned_into_float64, 0.1)
    _assert_numpys(autotrace.function(big_or_one)(x, assigned_into_float64, 0.1), eager)
    assert (eager[0][0] == 0.1) == (x is NUMBER_PATH)


def item_or_number(x, s, number):
    c = x[0] if s > 0 else number
    y = np.zeros(2, np.uint8)
    y[0] = c
    return y


@pytest.mark.parametrize("s", [1.0, -1.0])
def test_an_int_assigned_that_the_arrays_dtype_does_not_hold_is_refused(s):
    x = np.array([3], np.uint8)
    line = item_or_number.__code__.co_firstlineno + 1
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(item_or_number)(x, np.float64(s), 300)
    assert str(caught.value).startswith(
        f"{__file__}:{line}: x[0] if s > 0 else number\n  leaves this variable a NumPy uint8 "
        f"value on one path and a Python int on the other, and an assignment into an array of "
        f"it raises NumPy's OverflowError on one path (Python integer 300 out of bounds for "
        f"uint8), which one graph cannot raise on that path alone: {ONE_TYPE % 'uint8'}")
    traced = autotrace.function(item_or_number)(x, np.float64(s), 7)
    _assert_numpys(traced, item_or_number(x, s, 7))


@pytest.mark.parametrize("x", PATHS, ids=["number", "scalar"])
@pytest.mark.parametrize("start", [np.float32(0.0), 0.0], ids=["float32", "float64"])
def test_an_either_value_assigned_to_a_variable_is_cast_as_on_each_path(start, x):
    variable = autotrace.Variable(start)

    def assign(x, big):
        variable.assign(big)
        return x
    big_or_one(x, assign, 0.1)
    eager = variable.numpy().copy()
    autotrace.function(big_or_one)(x, assign, 0.1)
    _assert_numpys(variable.numpy(), eager)


class Holder:
    scale = np.zeros(())


def test_an_either_value_kept_in_an_objects_state_is_refused():
    holder = Holder()

    def keep(x, big):
        holder.scale = big
        return x
    line = big_or_one.__code__.co_firstlineno + 1
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(big_or_one)(NUMBER_PATH, keep, 0.1)
    assert str(caught.value) == (
        f"{__file__}:{line}: number if np.sum(x) > 0 else np.float32(1.0)\n  leaves this "
        f"variable a Python number on one path and a NumPy float32 value on the other, and it "
        f"is kept in the function's state (an object's array), which holds one dtype: "
        f"{ONE_TYPE % 'float32'}")


def big_and_x(x):
    big = 1e40 if np.sum(x) > 0 else np.float32(1.0)
    return big, x


def test_an_exported_function_returns_the_kind_of_the_path_taken(tmp_path):
    path = autotrace.export(autotrace.function(big_and_x), autotrace.Spec((2,), np.float32),
                            tmp_path / "big_and_x.py")
    spec = importlib.util.spec_from_file_location("big_and_x_exported", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for x in PATHS:
        _assert_numpys(module.big_and_x(x), big_and_x(x))


# Arithmetic on an either-value keeps each path's kind as Python and NumPy do: `-step` is the
# Python float -0.1 on one path (known while tracing, as NumPy takes a Python float) and a
# float32 on the other, so a NumPy function of it gives NumPy's dtype on each path
def step_or_scalar(x, use):
    step = 0.1 if np.sum(x) > 0 else np.float32(0.01)
    return use(x, step)


DERIVED = {
    "clip_of_negated": lambda x, step: np.clip(x - step * x, -step, step),
    "clip_of_times_one": lambda x, step: np.clip(x, step * 1.0, 1.0),
    "clip_of_difference": lambda x, step: np.clip(x, 0.0 - step, 1 - step),
    "clip_of_abs_and_square": lambda x, step: np.clip(x, abs(step), 2.0 + step ** 2),
    "where_of_product": lambda x, step: np.where(x > 0, x, step * 2),
    "where_of_negated": lambda x, step: np.where(x > 0, x, -step),
    "full_like_of_negated": lambda x, step: np.full_like(x, -step),
    "clip_of_floor_divided": lambda x, step: np.clip(x, step // 0.03, 5.0),
    "returned_negated": lambda x, step: -step,
    "returned_divmod": lambda x, step: divmod(step, 0.03),
}
PATHS_F32 = [np.array([1.0, -2.0, 3.0], np.float32), np.array([-1.0, 2.0, -3.0], np.float32)]


@pytest.mark.parametrize("x", PATHS_F32, ids=["number", "scalar"])
@pytest.mark.parametrize("name", sorted(DERIVED))
def test_a_numpy_function_of_arithmetic_on_an_either_value_is_numpys_on_each_path(name, x):
    eager = step_or_scalar(x, DERIVED[name])
    _assert_numpys(autotrace.function(step_or_scalar)(x, DERIVED[name]), eager)


def test_the_number_of_a_derived_either_value_is_python_s():
    negated = autotrace.function(step_or_scalar)(PATHS_F32[0], DERIVED["returned_negated"])
    assert type(negated) is float and negated == -0.1


def loop_step_or_scalar(x):
    lr = 0.1
    i = 0
    while np.abs(np.sum(x)) * i < 5:  # (a traced loop: lr is a Python float not known)
        lr = lr * 0.5
        i += 1
    step = lr if np.sum(x) > 0 else np.float32(0.01)
    return np.clip(x - step * x, -step, step), np.where(x > 0, x, -step), step


@pytest.mark.parametrize("x", PATHS_F32, ids=["number", "scalar"])
def test_an_either_value_whose_number_is_not_known_meets_numpy_functions_as_numpys(x):
    _assert_numpys(autotrace.function(loop_step_or_scalar)(x), loop_step_or_scalar(x))


def reciprocal_of_step_minus(x):
    step = 0.1 if np.sum(x) > 0 else np.float32(0.01)
    return x * (1.0 / (step - 0.1))  # (Python's ZeroDivisionError on the path not taken)


def test_what_python_raises_on_the_path_not_taken_is_computed_on_the_other():
    x = PATHS_F32[1]
    _assert_numpys(autotrace.function(reciprocal_of_step_minus)(x),
                   reciprocal_of_step_minus(x))


def derived_steps(x):
    step = 0.1 if np.sum(x) > 0 else np.float32(0.25)
    return np.sum(np.clip(x, -step, 1 - step) * x) + np.sum(np.where(x > 0, x, -step) ** 2) \
        + np.sum(x * abs(step) ** 2)


@pytest.mark.parametrize("x", [np.array([0.5, -1.5, 0.05]), np.array([-0.5, 1.5, -0.05])],
                         ids=["number", "scalar"])
def test_gradients_through_numpy_functions_of_arithmetic_on_an_either_value(x):
    check_every_mode(derived_steps, x)
    x32 = x.astype(np.float32)
    eager = autotrace.grad(derived_steps)(x32)
    traced = autotrace.function(autotrace.grad(derived_steps))(x32)
    assert traced.dtype == eager.dtype == np.float32
    np.testing.assert_array_equal(traced, eager)
    _assert_numpys(autotrace.function(derived_steps)(x32), derived_steps(x32))
