"""float32 scalar graphs compiled into one native function (runtime/backends/llvm/cpu_scalar.py):
arithmetic bit for bit NumPy's, the C library's float functions within
scalar_float32.MAX_ULPS of NumPy's (the largest difference measured is printed), NumPy's dtypes
and result types in mixed float32/float64 graphs, the fallback where NumPy warns in float32,
and the scalar loop's float32 gradient compiled whole.
"""
import math
import warnings

import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.llvm import compiler as llvm, cpu_scalar, cpu_scalar_ir
from autotrace.runtime.backends.llvm.scalar_float32 import (MAX_ULPS, float32_function,
                                                           probe_values, ulp_distance)
from autotrace.runtime.backends.llvm.scalar_loops import find_loops
from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.execution.executor import compile_graph as compile_for
from autotrace.runtime.ops import primitives
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.tracer import trace

if not llvm.available():
    pytest.skip("llvmlite is not installed: no compiled scalar graphs", allow_module_level=True)

f32 = np.float32
SPECIAL = [0.0, -0.0, 1.0, -2.5, 0.1, 1e-40, -3e38, 3e38, 1e20, np.inf, -np.inf, np.nan]


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRACE_CACHE_DIR", str(tmp_path))


def compile_graph(graph):
    """The graph's NumPy version (the llvm backend would run it as native code)."""
    return compile_for(graph, "graph", backend=backend_named("numpy"))


def graph_of(function, *args):
    with np.errstate(all="ignore"):
        return optimize(trace(function, args)[0])


def assert_identical(got, want, where=""):
    """Same type, dtype and bits (nan where NumPy has nan, the sign of zero too)."""
    assert len(got) == len(want)
    for mine, theirs in zip(got, want):
        assert type(mine) is type(theirs), (where, mine, theirs)
        assert np.asarray(mine).dtype == np.asarray(theirs).dtype, (where, mine, theirs)
        assert np.array_equal(mine, theirs, equal_nan=True), (where, mine, theirs)
        assert np.isnan(theirs) or np.signbit(mine) == np.signbit(theirs), (where, mine, theirs)


def on_grid(run, numpy_version, values_x, values_y):
    for a in values_x:
        for b in values_y:
            arguments = (np.asarray(a, f32), np.asarray(b, f32))
            with np.errstate(all="ignore"):
                expected = numpy_version(*arguments)
            assert_identical(run(*arguments), expected, (a, b))


def arithmetic(x, y):
    z = (x + y) * (x - y) / (y * 0.3 + 1.5)
    return (z, np.sqrt(np.abs(x)), -y, np.square(x), 1.0 / x, np.reciprocal(y), x ** 2,
            np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y),
            np.floor(x) + np.ceil(y) + np.trunc(x) + np.rint(y * 2.5), np.positive(y),
            np.fabs(y), x * 3 - 2)


def logic(x, y):
    flags = np.logical_and(x > y, np.logical_not(y > 0.0)) ^ (x < 0.1)
    flags = np.logical_or(np.logical_xor(flags, x >= 1.0), ~(y <= x) & (x != -1.0))
    return (flags, x == y, np.where(flags, x, y * 2.0), np.where(x > y, 0.5, x),
            np.zeros((), np.float32) + x, x * (y > 0.0))


@pytest.mark.parametrize("function", [arithmetic, logic])
def test_float32_arithmetic_and_logic_are_numpys_bit_for_bit(function):
    x, y = np.asarray(0.3, f32), np.asarray(-0.2, f32)
    graph = graph_of(function, x, y)
    assert {str(value.aval.dtype) for equation in graph.equations
            for value in equation.outputs} <= {"float32", "bool"}
    run = cpu_scalar.compile_scalar_graph(graph)
    assert run is not None
    numpy_version, _ = compile_graph(graph)
    on_grid(run, numpy_version, SPECIAL, SPECIAL)
    rng = np.random.default_rng(5)
    on_grid(run, numpy_version, rng.standard_normal(40) * 10.0, rng.standard_normal(5))


UNARY = [name for name, primitive in primitives.items()
         if primitive.libm and not primitive.llvm_intrinsic and getattr(np, name, None) is not None
         and getattr(np, name).nin == 1]
BINARY = ["power", "arctan2", "hypot"]


def test_float32_functions_are_within_max_ulps_of_numpy():
    """Each function the kernel calls on float32 values, on 0-d values through the graph's
    NumPy version: the largest difference in ulps, printed, is at most MAX_ULPS."""
    report, lowered = [], []
    for name in UNARY + BINARY:
        if float32_function(name) is None:
            report.append(f"{name}: stays NumPy's")
            continue
        lowered.append(name)
        ufunc = getattr(np, name)
        arity = ufunc.nin
        arguments = [np.asarray(2.0, f32)] * arity
        graph = graph_of(lambda *values: ufunc(*values), *arguments)
        run = cpu_scalar.compile_scalar_graph(graph)
        assert run is not None, name
        numpy_version, _ = compile_graph(graph)
        values = [probe_values(3000, seed + 11) for seed in range(arity)]
        if arity == 2:
            values[1] = np.where(np.abs(values[1]) < 8, values[1], f32(1.5))
        got, want = [], []
        for point in zip(*values):
            arguments = [np.asarray(value, f32) for value in point]
            with np.errstate(all="ignore"):
                (expected,) = numpy_version(*arguments)
            (result,) = run(*arguments)
            assert type(result) is type(expected) is np.float32, (name, point)
            got.append(result)
            want.append(expected)
        worst = int(ulp_distance(np.array(got), np.array(want)).max())
        report.append(f"{name}: {float32_function(name)[0]}, max {worst} ulp")
        assert worst <= MAX_ULPS, (name, worst)
    print("float32 functions against NumPy's:", "; ".join(report))
    assert {"sin", "cos", "exp", "power", "tanh"} <= set(lowered)


def test_every_op_of_the_float64_path_is_tested_in_float32():
    tested = set(UNARY) | set(BINARY) | {
        "add", "subtract", "multiply", "divide", "negative", "square", "reciprocal", "absolute",
        "sqrt", "maximum", "minimum", "fmax", "fmin", "floor", "ceil", "trunc", "rint",
        "positive", "fabs", "less", "less_equal", "greater", "greater_equal", "equal",
        "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
        "bitwise_or", "bitwise_xor", "invert", "where", "full"}
    supported = {name for name, primitive in primitives.items()
                 if cpu_scalar_ir.lowers(primitive)}
    assert supported - tested <= {"scalar_power"}  # NumPy's scalar **: tested below


def test_mixed_float32_and_float64_compute_in_numpys_dtypes():
    def mixed(x, y):
        return (x * y, x * 0.1, x + 3, np.sqrt(np.abs(x)) * y, x < y, x < 0.1, x == 0.1,
                np.where(x > 0.0, x, y), np.maximum(x, y), x ** y)

    x, y = np.asarray(0.1, f32), np.asarray(0.1, np.float64)
    graph = graph_of(mixed, x, y)
    run = cpu_scalar.compile_scalar_graph(graph)
    assert run is not None
    numpy_version, _ = compile_graph(graph)
    result = run(x, y)
    assert_identical(result, numpy_version(x, y))
    assert_identical(result, mixed(x, y))
    # NumPy 2 compares a float32 with a Python float in float32: f32(0.1) == 0.1 there
    assert [np.asarray(value).dtype for value in result[:4]] == [np.float64, f32, f32, np.float64]
    assert (result[4], result[5], result[6]) == (np.False_, np.False_, np.True_)
    for a in (0.1, -2.5, 1e20, np.inf, np.nan):
        for b in (0.1, 1e300, -0.0):
            arguments = (np.asarray(a, f32), np.asarray(b))
            with np.errstate(all="ignore"):
                assert_identical(run(*arguments), numpy_version(*arguments), (a, b))


def test_scalar_power_of_float32_numbers_is_numpys():
    def powers(x, y):
        return x ** y, (x * f32(2.0)) ** f32(0.5)

    graph = graph_of(powers, f32(0.7), f32(-1.3))
    assert "scalar_power" in {equation.primitive.name for equation in graph.equations}
    run = cpu_scalar.compile_scalar_graph(graph)
    assert run is not None
    for a in SPECIAL:
        for b in SPECIAL:
            with np.errstate(all="ignore"):
                assert_identical(run(f32(a), f32(b)), powers(f32(a), f32(b)), (a, b))


def test_a_float32_overflow_runs_numpy_which_warns():
    """1e20 * 1e20 is finite in double: an f32 computation done in double would miss it."""
    graph = graph_of(lambda x: x * x + np.exp(x * 1e-20), np.asarray(2.0, f32))
    numpy_version, _ = compile_graph(graph)
    run = cpu_scalar.compile_scalar_graph(graph, fallback=numpy_version)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_identical(run(np.asarray(3.0, f32)), numpy_version(np.asarray(3.0, f32)))
    with pytest.warns(RuntimeWarning, match="overflow encountered in multiply"):
        (result,) = run(np.asarray(1e20, f32))
    assert result == np.inf and type(result) is np.float32


def test_a_python_number_that_overflows_float32_is_left_to_numpy():
    graph = graph_of(lambda x: np.sin(x) * 1e300, np.asarray(2.0, f32))
    assert graph.equations[-1].outputs[0].aval.dtype == f32
    assert cpu_scalar.compile_scalar_graph(graph) is None


def scalar_loop(x):
    for _ in range(100):
        x = np.sin(x) * 0.9 + 0.1 * x ** 2
    return x


def test_the_float32_scalar_loop_gradient_is_compiled_native_and_right():
    gradient = autotrace.function(autotrace.grad(scalar_loop))
    x = np.asarray(0.5, f32)
    assert "runs as native code compiled by the llvm backend" in gradient.source(x)
    graph = gradient.graph(x)
    assert len(find_loops(graph)) == 2  # the forward loop and its adjoint, rolled
    numpy_version, _ = compile_graph(graph)
    for value in (0.5, -1.25, 0.0, 2.0):
        point = np.asarray(value, f32)
        got = gradient(point)
        assert type(got) is np.ndarray and got.dtype == f32 and got.ndim == 0  # as x
        (expected,) = numpy_version(point)
        # sin and cos differ from NumPy's by an ulp at most, through 100 steps
        assert abs(got - expected) <= 1e-4 * abs(expected) + 1e-30, (value, got, expected)
        wide = autotrace.function(autotrace.grad(scalar_loop))(np.asarray(value))
        assert abs(got - wide) <= 1e-4 * abs(wide) + 1e-30, (value, got, wide)
        step = 1e-6
        difference = (scalar_loop(np.float64(value) + step)
                      - scalar_loop(np.float64(value) - step)) / (2 * step)
        assert math.isclose(got, difference, rel_tol=1e-3, abs_tol=1e-9), (value, difference)
    for roll in (False, True):
        run = cpu_scalar.compile_scalar_graph(graph, roll=roll)
        assert_identical(run(x), (gradient(x),))
