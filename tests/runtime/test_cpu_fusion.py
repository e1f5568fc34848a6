"""CPU fusion (runtime/backends/llvm/cpu_fusion.py): every operation a fused kernel computes agrees
with NumPy, special values included; regions with several outputs, scalar inputs, float32, bool
temporaries; the size threshold; the disk cache of object code; denormals survive kernels.
"""
import os
import subprocess
import sys
import time
import timeit
import warnings

import numpy as np
import pytest

from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)

from autotrace.runtime.backends.llvm.cpu_fusion import (  # noqa: E402
    MIN_CHAIN_ELEMENTS, MIN_FUSED_ELEMENTS, CpuFusion)
from autotrace.runtime.backends.llvm.cpu_kernels import UNDERFLOWS_BELOW  # noqa: E402
from autotrace.runtime.backends.llvm.backend import LlvmBackend  # noqa: E402
from autotrace.runtime.execution.executor import compile_graph  # noqa: E402
from autotrace.runtime.passes import optimize  # noqa: E402
from autotrace.runtime.tracing.signature import signature_and_arrays  # noqa: E402
from autotrace.runtime.tracing.tracer import trace  # noqa: E402

rng = np.random.default_rng(0)
# A kernel's vector tanh or exp may differ from NumPy's by an ulp or two of a term (8.9e-16 for
# terms below 8: AVX2's vector tanh does, where AVX-512's agrees to 1e-13 relative). A sum that
# cancels to near zero keeps that absolute difference, which is far more than 1e-13 of it.
LIBM_ABSOLUTE = 4e-15
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-310,
                    -1e-310, 5e-324, 1e300, -1e300, 700.0, -745.0, 1e6, 3.0, -3.0])


def sample(size=1003, dtype=np.float64, seed=0):
    """Random values of several scales, with the special values first (1003: not a multiple
    of any vector width, so the tail runs too)."""
    generator = np.random.default_rng(seed)
    values = generator.standard_normal(size) * generator.choice([0.1, 1.0, 10.0], size)
    if size >= len(SPECIAL):
        values[:len(SPECIAL)] = generator.permutation(SPECIAL)
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        return values.astype(dtype)


def fusing_backend(min_elements=None) -> LlvmBackend:
    """The llvm backend, fusing regions of at least `min_elements` (its default if None)."""
    backend = LlvmBackend()
    backend.min_elements = min_elements
    return backend


def fused_graph(function, *args, min_elements=1):
    return optimize(trace(function, args)[0], backend=fusing_backend(min_elements))


def run_fused(function, *args, min_elements=1):
    """(the fused graph's results, the graph), computed by the kernels themselves whatever
    NumPy's error state and the values (where NumPy would warn, or under np.errstate, a fused
    call runs the region's NumPy calls instead: tests/runtime/test_cpu_fusion_warnings.py)."""
    graph = fused_graph(function, *args, min_elements=min_elements)
    for equation in fused_equations(graph):
        equation.attrs["kernel"].call = equation.attrs["kernel"].unchecked
    run, _ = compile_graph(graph, backend=fusing_backend())
    return run(*signature_and_arrays(args, {})[1]), graph


def fused_equations(graph):
    return [equation for equation in graph.equations if equation.primitive.name == "fused_cpu"]


def assert_matches_numpy(function, *args, rtol=1e-13, signed_zeros=True):
    with np.errstate(all="ignore"):
        expected = function(*args)
        results, graph = run_fused(function, *args)
    assert len(fused_equations(graph)) == 1, graph
    expected = expected if isinstance(expected, tuple) else (expected,)
    for result, wanted in zip(results, expected):
        assert result.dtype == wanted.dtype and result.shape == wanted.shape
        np.testing.assert_allclose(result, wanted, rtol=rtol, atol=0, equal_nan=True)
        if not signed_zeros:
            continue
        # the sign of zeros is NumPy's too
        same = (result == wanted) & (wanted == 0)
        assert np.array_equal(np.signbit(result[same]), np.signbit(wanted[same]))
    return graph


UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin", "cos",
         "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
         "arctanh", "absolute", "floor", "ceil", "trunc", "rint", "negative", "square"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin",
          "arctan2", "hypot", "power"]
COMPARISONS = ["greater", "greater_equal", "less", "less_equal", "equal", "not_equal"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_operation_matches_numpy(name):
    ufunc = getattr(np, name)
    assert_matches_numpy(lambda x: ufunc(x) * 3.0, sample())


@pytest.mark.parametrize("name", BINARY)
def test_binary_operation_matches_numpy(name):
    ufunc = getattr(np, name)
    x, y = sample(seed=1), sample(seed=2)
    y[5:25] = x[:20]  # equal operands: maximum(-0.0, 0.0) and the like
    y[30:50] = -x[:20]
    assert_matches_numpy(lambda a, b: ufunc(a, b) * 3.0, x, y)


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_float32_operation_matches_numpy(name):
    ufunc = getattr(np, name)
    args = [sample(dtype=np.float32, seed=seed) for seed in range(ufunc.nin)]
    # IEEE leaves the sign of fmax(-0.0, 0.0) open, and NumPy's float32 and float64 loops
    # answer differently
    assert_matches_numpy(lambda *xs: ufunc(*xs) * 3.0, *args, rtol=2e-6,
                         signed_zeros=name not in ("fmax", "fmin"))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_without_libmvec_kernels_call_libm_per_element(monkeypatch, dtype):
    from autotrace.runtime.backends.llvm import cpu_kernels
    monkeypatch.setattr(cpu_kernels.llvm, "vector_math", lambda *args: None)
    x, y = sample(dtype=dtype, seed=1), sample(dtype=dtype, seed=2)
    rtol = 1e-13 if dtype == np.float64 else 2e-6
    function = lambda a, b: np.tanh(a) * np.exp(b) + np.arctan2(a, b) - a ** 2.5  # noqa: E731
    with np.errstate(all="ignore"):
        graph = fused_graph(function, x, y)
    assert "call double @exp(" in graph.equations[0].attrs["kernel"].ir or dtype != np.float64
    assert_matches_numpy(function, x, y, rtol=rtol)


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison_and_where_match_numpy(name):
    ufunc = getattr(np, name)
    x, y = sample(seed=1), sample(seed=2)
    y[::3] = x[::3]
    assert_matches_numpy(lambda a, b: np.where(ufunc(a, b), a, b * 2.0), x, y)
    assert_matches_numpy(lambda a, b: np.logical_not(ufunc(a * 2.0, b)), x, y)


def test_logical_operations_and_bool_outputs():
    x, y = sample(seed=1), sample(seed=2)
    assert_matches_numpy(lambda a, b: np.logical_and(a > 0, b < 1), x, y)
    assert_matches_numpy(lambda a, b: np.logical_or(a > 0, np.logical_not(b < 1)), x, y)
    assert_matches_numpy(lambda a, b: np.where(a * b, a, b), x, y)  # a float condition


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 4, 7, -1, -2, 3.0, 0.5, 2.5, -3.5])
def test_power_of_literal_matches_numpy(exponent):
    assert_matches_numpy(lambda x: x ** exponent * 3.0 - 1.0, sample())
    x = np.array([1e80, 1e-80, 1e154, 1e-154, 1e-310, -1e80, -0.0, -np.inf] * 4)
    assert_matches_numpy(lambda a: -(a ** exponent * 3.0), x, rtol=2e-15)


def test_special_values_propagate_as_in_numpy():
    x = np.array([np.inf, -np.inf, 0.0, -1.0, np.nan] * 4)
    results, graph = run_fused(lambda a: (np.tanh(a) * 1.0, -np.log(a), np.maximum(a, 2.0) + 0),
                               x)
    tanh, negative_log, maximum = results
    assert fused_equations(graph)
    assert tanh[0] == 1.0 and tanh[1] == -1.0 and np.isnan(tanh[4])
    assert negative_log[2] == np.inf and np.isnan(negative_log[3]) and np.isnan(negative_log[4])
    assert np.isnan(maximum[4]) and maximum[0] == np.inf and maximum[1] == 2.0


@pytest.mark.parametrize("name, dtype, edge", [
    ("exp", np.float64, -745.1332191019412), ("exp", np.float32, -103.97208),
    ("exp2", np.float64, -1075.0), ("exp2", np.float32, -150.0)])
def test_exp_of_what_underflows_to_zero(name, dtype, edge):
    # Lanes below UNDERFLOWS_BELOW (a masked attention score, -1e9) are given 0 to compute and
    # set to +0.0, as NumPy's exp gives them; around the edge where results become subnormal,
    # libmvec's results stand, within an ulp or two of NumPy's (which differ on this CPU).
    ufunc = getattr(np, name)
    near = edge + np.linspace(-2.0, 2.0, 41)
    x = np.tile(np.concatenate([near, [-1e9, -np.inf, np.nan, 0.0, -1.0, edge - 40.0]]),
                3).astype(dtype)
    with np.errstate(all="ignore"):
        expected = ufunc(x) + 0.0
        (result,), graph = run_fused(lambda a: ufunc(a) + 0.0, x)
    (kernel,) = [equation.attrs["kernel"] for equation in fused_equations(graph)]
    assert "fcmp olt" in kernel.ir  # the lanes that underflow, told apart
    assert result.dtype == dtype
    below = x < UNDERFLOWS_BELOW[name, np.dtype(dtype)]
    assert below.sum() == 3 * (len(near[near < UNDERFLOWS_BELOW[name, np.dtype(dtype)]]) + 3)
    assert np.all(result[below] == 0) and not np.any(np.signbit(result[below]))
    assert np.all(expected[below] == 0)
    tiny = np.finfo(dtype).smallest_subnormal
    np.testing.assert_allclose(result, expected, rtol=1e-6 if dtype == np.float32 else 1e-13,
                               atol=2 * tiny, equal_nan=True)


def test_mixed_float32_and_float64_and_casts():
    x32, x64 = sample(dtype=np.float32, seed=1), sample(seed=2)
    assert_matches_numpy(lambda a, b: np.tanh(a * 0.5) + b, x32, x64, rtol=2e-6)
    assert_matches_numpy(lambda a, b: (np.exp(a) * 2.0).astype(np.float64) * b, x32, x64,
                         rtol=2e-6)
    assert_matches_numpy(lambda a, b: np.sin(b).astype(np.float32) * a, x32, x64, rtol=2e-6)
    assert_matches_numpy(lambda a: (a > 0).astype(np.float64) * a, x64)


def test_region_with_several_outputs():
    x, w = rng.standard_normal((40, 30)), rng.standard_normal((30, 30))

    def layer(x, w):
        h = np.tanh(x * 2.0 + 1.0)        # read by the matmul, outside the region
        s = np.exp(h) * x                  # returned
        return h @ w, s, s * h + (h @ w)   # the last reads the matmul: a second region

    expected = layer(x, w)
    results, graph = run_fused(layer, x, w)
    first, second = fused_equations(graph)
    assert len(first.outputs) == 2 and len(second.outputs) == 1
    for result, wanted in zip(results, expected):
        np.testing.assert_allclose(result, wanted, rtol=1e-13, atol=LIBM_ABSOLUTE)


def test_scalar_inputs_and_constants():
    x, s = sample(), np.float64(0.25)
    scale = np.array(3.0)
    assert_matches_numpy(lambda a, b: np.exp(a * b) + b, x, s)
    assert_matches_numpy(lambda a, b: np.tanh(a * scale) - np.array(2.5) * b, x, np.array(-1.5))


def test_rows_broadcast_along_leading_axes():
    x, bias, row32 = sample(64 * 48 * 3).reshape(3, 64, 48), sample(48, seed=5), sample(
        32, dtype=np.float32, seed=6)
    assert_matches_numpy(lambda a, b: np.tanh(a + b) * b, x, bias)
    assert_matches_numpy(lambda a, b: np.exp(a * 0.5) * b, x, bias.reshape(1, 48))
    assert_matches_numpy(lambda a, b: np.maximum(a, b) * 2.0, x, x[0])
    y32 = sample(32 * 7, dtype=np.float32).reshape(7, 32)
    assert_matches_numpy(lambda a, b: np.sin(a) * b + 1.0, y32, row32, rtol=2e-6)
    (result,), graph = run_fused(lambda a, b, c: np.sum(np.tanh(a * b) + c), x, bias, x[0])
    assert fused_equations(graph)
    np.testing.assert_allclose(result, np.sum(np.tanh(x * bias) + x[0]), rtol=1e-13)
    # a row whose length is no multiple of every vector width, or a column: a row kernel
    # (tests/runtime/test_cpu_rows.py)
    for a, b in [(sample(3 * 47).reshape(3, 47), sample(47, seed=1)),
                 (sample(64 * 48).reshape(64, 48), sample(64, seed=2).reshape(64, 1))]:
        graph = assert_matches_numpy(lambda a, b: np.tanh(a + b) * 2.0, a, b)
        assert fused_equations(graph)[0].attrs["kernel"].spec.row_length == a.shape[-1]


def test_input_that_is_not_contiguous():
    x = rng.standard_normal((50, 40))
    assert_matches_numpy(lambda a: np.tanh(a.T * 2.0) + a.T, x)
    graph = fused_graph(lambda a: np.tanh(a * 2.0) + 1.0, x.T)
    run, _ = compile_graph(graph)
    np.testing.assert_allclose(run(x.T)[0], np.tanh(x.T * 2.0) + 1.0, rtol=1e-13,
                               atol=LIBM_ABSOLUTE)


@pytest.mark.parametrize("size", [3, 8, 1003, 100_000])
def test_sum_of_a_region_value_is_added_in_the_loop(size):
    import math
    x, y = (np.where(np.isfinite(v) & (np.abs(v) < 1e10), v, 0.5)
            for v in (sample(size, seed=1), sample(size, seed=2)))

    def function(a, b):
        t = np.tanh(a * 0.5) * b
        return np.sum(t), t + 1.0

    (total, array), graph = run_fused(function, x, np.cos(y))
    [equation] = fused_equations(graph)
    assert [var.aval.shape for var in equation.outputs] == [(size,), ()]
    assert type(total) is np.float64 and array.shape == (size,)
    values = np.tanh(x * 0.5) * np.cos(y)
    exact = math.fsum(values.tolist())
    assert abs(total - exact) <= 1e-15 * np.abs(values).sum() + 1e-300
    np.testing.assert_allclose(array, values + 1.0, rtol=1e-13, atol=LIBM_ABSOLUTE)


@pytest.mark.parametrize("special, expected", [
    ([np.inf], np.inf), ([-np.inf], -np.inf), ([np.inf, -np.inf], np.nan), ([np.nan], np.nan),
    ([1e308, 1e308], np.inf), ([-0.0], 0.0)])
def test_sum_of_special_values_is_numpys(special, expected):
    x = np.full(1003, 0.25)
    x[[17 * i for i in range(len(special))]] = special
    if special == [-0.0]:
        x[:] = -0.0
    with np.errstate(all="ignore"):
        total, graph = run_fused(lambda a: np.sum(a * 2.0), x)
    assert fused_equations(graph)
    with np.errstate(all="ignore"):
        wanted = np.sum(x * 2.0)
    assert np.array_equal(total[0], wanted, equal_nan=True)
    if not np.isfinite(expected):
        assert np.array_equal(total[0], expected, equal_nan=True)
    assert np.signbit(total[0]) == np.signbit(wanted)


def test_a_sum_is_read_only_after_its_loop():
    """softmax: the division by the sum is a second loop, never the loop that adds it up."""
    x = sample(1003, seed=4)
    x = np.where(np.isfinite(x) & (np.abs(x) < 100), x, 0.5)

    def softmax_and_log(a):
        e = np.exp(a - 3.0)
        p = e / np.sum(e)
        return p * 2.0, np.log(np.sum(np.exp(a))) + a * 0.5

    expected = softmax_and_log(x)
    results, graph = run_fused(softmax_and_log, x)
    assert len(fused_equations(graph)) >= 2
    for result, wanted in zip(results, expected):
        np.testing.assert_allclose(result, wanted, rtol=1e-13)


def test_a_scalar_input_and_a_sum_in_one_kernel():
    """Scalar parameters and the sums' accumulators are named apart in the kernel's IR."""
    def f(scale, x):
        y = np.exp(scale * x * 0.01)  # scale is the kernel's first input
        return y, np.sum(y)

    x, scale = sample(), np.array(1.5)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel that fails to build warns and runs NumPy
        (y, total), graph = run_fused(f, scale, x)
        wanted_y, wanted_total = f(scale, x)
    assert len(fused_equations(graph)) == 1, graph
    np.testing.assert_allclose(y, wanted_y, rtol=1e-13)
    np.testing.assert_allclose(total, wanted_total, rtol=1e-13)


def test_under_a_numpy_error_state_a_region_runs_as_numpy():
    """np.errstate(all="raise") raises as unfused NumPy would; the kernel runs otherwise."""
    x = np.linspace(-1.0, 1.0, 1003)
    graph = fused_graph(lambda a: np.log(a * 2.0) * 3.0, x)
    assert len(fused_equations(graph)) == 1
    run, _ = compile_graph(graph, backend=fusing_backend())
    with np.errstate(all="raise"), pytest.raises(FloatingPointError,
                                                 match="invalid value encountered in log"):
        run(x)
    with np.errstate(all="ignore"):
        [ignored] = run(x)
        expected = np.log(x * 2.0) * 3.0
    assert np.array_equal(ignored, expected, equal_nan=True)  # NumPy's own calls, bit for bit
    # the default state: NumPy's warning (tests/runtime/test_cpu_fusion_warnings.py)
    with pytest.warns(RuntimeWarning, match="invalid value encountered in log"):
        [warned] = run(x)
    assert np.array_equal(warned, expected, equal_nan=True)


def test_values_of_unknown_size_stay_numpy():
    import autotrace

    traced = autotrace.function(lambda x: np.tanh(x * 2.0) + x,
                                input_signature=[autotrace.Spec((None,))])
    graph = optimize(traced.graph(sample(), optimized=False), backend=fusing_backend(1))
    assert not fused_equations(graph)
    np.testing.assert_allclose(traced(sample(5)), np.tanh(sample(5) * 2.0) + sample(5))


def test_sum_in_float32_and_sums_that_stay_numpy():
    x = sample(1003, dtype=np.float32, seed=3)
    x = np.where(np.isfinite(x), x, np.float32(1.5))
    (total,), graph = run_fused(lambda a: np.sum(np.sin(a) * 2.0), x)
    assert fused_equations(graph) and total.dtype == np.float32
    np.testing.assert_allclose(total, np.sum(np.sin(x.astype(np.float64)) * 2.0), rtol=1e-6)
    # columns of no multiple of 16 elements, a middle axis, a dtype argument, or a sum of an
    # input alone are left to NumPy (rows of any length are a row kernel's: test_cpu_rows.py)
    m, cube = rng.standard_normal((40, 30)), rng.standard_normal((4, 16, 144))
    for function, value in [(lambda a: np.sum(np.exp(a) * 2.0, axis=0), m),
                            (lambda a: np.sum(np.exp(a) * 2.0, axis=1), cube),
                            (lambda a: np.sum(np.exp(a) * 2.0, dtype=np.float32), m),
                            (lambda a: np.sum(a) + np.exp(a) * 2.0, m)]:
        graph = fused_graph(function, value)
        assert "reduce_sum" in [equation.primitive.name for equation in graph.equations]


def test_a_compiled_graph_with_a_kernel_inlined_into_a_trace_records_the_kernel():
    x = sample()
    inner, _ = compile_graph(fused_graph(lambda a: np.tanh(a * 2.0) + a, x))
    outer, _ = trace(lambda a: inner(a * 3.0)[0], (x,))
    assert [eq.primitive.name for eq in outer.equations] == ["multiply", "fused_cpu"]
    run, _ = compile_graph(outer)
    np.testing.assert_allclose(run(x)[0], np.tanh(x * 6.0) + x * 3.0, rtol=1e-13)
    for wrong in [np.ones(1002), "not an array"]:
        with pytest.raises(TypeError, match=r"fused_\w+ takes arrays of shape \(1003,\)"):
            inner(wrong)


def random_program(seed):
    """A random chain of elementwise ops on three (30, 48) arrays and a row of 48 that
    broadcasts, with ops between them that no kernel computes (a matmul, a transpose round trip,
    sums over an axis and over all): the regions must close, merge and order themselves so that
    every reader comes after its value.
    """
    generator = np.random.default_rng(seed)
    unary = [np.tanh, np.sin, np.exp, lambda v: v * 0.5, np.negative, lambda v: v ** 2]
    binary = [np.add, np.subtract, np.multiply, np.maximum, lambda a, b: np.where(a > b, a, b)]
    steps = [(generator.integers(11), generator.integers(1000), generator.integers(1000))
             for _ in range(12)]

    def program(x, y, z, row):
        values = [x, y, z]
        for kind, first, second in steps:
            a, b = values[first % len(values)], values[second % len(values)]
            if kind < 4:
                values.append(unary[(first + second) % len(unary)](np.tanh(a)))
            elif kind < 7:
                values.append(binary[(first + second) % len(binary)](a, b))
            elif kind == 7:
                values.append(np.tanh(a @ np.eye(48) * 0.1))
            elif kind == 8:
                values.append(np.sum(a, axis=0) * 0.01 + b)
            elif kind == 9:
                values.append(np.tanh(b * np.sum(a)) + a.T.T)
            else:
                values.append(binary[(first + second) % len(binary)](a, row))
        return values[-1], values[-3] * 2.0, np.sum(values[-2])
    return program


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_give_numpys_results(seed):
    program = random_program(seed)
    arrays = [rng.standard_normal((30, 48)) for _ in range(3)] + [rng.standard_normal(48)]
    with np.errstate(all="ignore"):
        expected = program(*arrays)
        results, graph = run_fused(program, *arrays)
    assert fused_equations(graph)
    for result, wanted in zip(results, expected):
        np.testing.assert_allclose(result, wanted, rtol=1e-12, atol=1e-12)


def test_only_regions_of_two_equations_and_enough_elements_fuse():
    def function(x):
        return np.tanh(x * 2.0)
    assert not fused_equations(fused_graph(lambda x: np.tanh(x), sample()))
    small, large = np.ones(MIN_FUSED_ELEMENTS - 1), np.ones(MIN_FUSED_ELEMENTS)
    assert not fused_equations(fused_graph(function, small, min_elements=MIN_FUSED_ELEMENTS))
    assert fused_equations(fused_graph(function, large, min_elements=MIN_FUSED_ELEMENTS))
    # by default, also a chain of MIN_CHAIN_EQUATIONS from MIN_CHAIN_ELEMENTS on
    assert not fused_equations(fused_graph(function, small, min_elements=None))
    chain = lambda x: np.tanh(x * 2.0) + x  # noqa: E731 - three equations
    for size, fused in [(MIN_CHAIN_ELEMENTS - 1, False), (MIN_CHAIN_ELEMENTS, True)]:
        graph = fused_graph(chain, np.ones(size), min_elements=None)
        assert len(fused_equations(graph)) == fused, size
        assert len(graph.equations) == (1 if fused else 3)
    assert CpuFusion().min_elements is None


def test_graph_and_source_stay_readable():
    graph = fused_graph(lambda x, y: (np.tanh(x * y), np.exp(x * y)), sample(), sample())
    [equation] = fused_equations(graph)
    name = equation.attrs["kernel"].name
    assert str(graph).splitlines()[1] == (
        f"  c:f64[1003] d:f64[1003] = fused_cpu[kernel={name}] a b")
    run, source = compile_graph(graph)
    assert f"    c, d = {name}(a, b)  # f64[1003] f64[1003]" in source.splitlines()


def test_gelu_gradient_end_to_end():
    import autotrace

    def gelu_loss(x):
        y = 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
        return np.sum(y)

    x = rng.standard_normal(100_000)
    traced = autotrace.function(autotrace.grad(gelu_loss))
    expected = traced(x)
    start = time.perf_counter()
    graph = optimize(traced.graph(x, optimized=False), backend=fusing_backend())
    print(f"passes with the gelu gradient's kernel compiled or loaded: "
          f"{(time.perf_counter() - start) * 1e3:.1f} ms")
    assert [eq.primitive.name for eq in graph.equations] == ["fused_cpu"]
    run, _ = compile_graph(graph)
    (result,) = run(x)
    t = np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3))
    by_hand = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (
        1 + 3 * 0.044715 * x ** 2)
    # the gradient crosses zero near x = -0.75: compare where its terms do not cancel
    scale = 1e-13 * np.abs(by_hand).max()
    np.testing.assert_allclose(result, expected, rtol=1e-13, atol=scale)
    np.testing.assert_allclose(result, by_hand, rtol=1e-12, atol=scale)


# --- the compiler and its cache ------------------------------------------------------------------

TWICE_IR = """
define double @twice(double %x) {
  %y = fadd double %x, %x
  ret double %y
}
"""


def test_denormals_survive_kernels():
    import ctypes
    # MXCSR: bits 0-5 are exception flags that any arithmetic sets; 6-15 are the controls
    controls = 0xFFC0
    control = llvm.floating_point_control()
    results, _ = run_fused(lambda x: np.tanh(x * 1e-300) * 1e-10 + x, sample())
    assert np.float64(5e-324) * 1.0 != 0
    assert np.float64(1e-310) / 2.0 > 0
    if control is not None:
        assert llvm.floating_point_control() & controls == control & controls
        assert not control & (1 << 15) and not control & (1 << 6)  # FTZ, DAZ off
    # a kernel computing on denormals gives them, not zero
    x = np.full(64, 1e-310)
    (result,), _ = run_fused(lambda a: a * 0.5 + a * 0.25, x)
    assert result[0] == x[0] * 0.5 + x[0] * 0.25 and result[0] != 0
    address = llvm.compile_module(TWICE_IR, ["twice"])["twice"]
    assert ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)(5e-324) == 1e-323


def test_disk_cache_is_read_and_a_corrupt_entry_recompiled(tmp_path, monkeypatch):
    import ctypes
    ir = TWICE_IR + f"; {tmp_path}\n"  # a module no other test compiled in this process
    monkeypatch.setenv("AUTOTRACE_CACHE_DIR", str(tmp_path / "first"))
    start = time.perf_counter()
    llvm.compile_module(ir, ["twice"])
    print(f"cold compile of a one-line module: {(time.perf_counter() - start) * 1e3:.1f} ms")
    [cached] = (tmp_path / "first").iterdir()
    assert cached.name == llvm.cache_key(ir) + ".o"

    # another directory holding the same file: loaded from it, nothing compiled
    second = tmp_path / "second"
    second.mkdir()
    (second / cached.name).write_bytes(cached.read_bytes())
    monkeypatch.setenv("AUTOTRACE_CACHE_DIR", str(second))
    compiled = []
    original = llvm._compile_object
    monkeypatch.setattr(llvm, "_compile_object", lambda text: compiled.append(text) or original(
        text))
    start = time.perf_counter()
    address = llvm.compile_module(ir, ["twice"])["twice"]
    print(f"disk cache hit: {(time.perf_counter() - start) * 1e3:.2f} ms")
    assert compiled == []
    assert ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)(2.5) == 5.0

    # a corrupt file (a flipped byte in its object code) is compiled again and rewritten
    third = tmp_path / "third"
    third.mkdir()
    data = bytearray(cached.read_bytes())
    data[-10] ^= 0xFF
    (third / cached.name).write_bytes(bytes(data))
    monkeypatch.setenv("AUTOTRACE_CACHE_DIR", str(third))
    address = llvm.compile_module(ir, ["twice"])["twice"]
    assert compiled == [ir]
    assert ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)(2.5) == 5.0
    assert (third / cached.name).read_bytes() == cached.read_bytes()
    assert llvm.read_cached_object(third / "missing.o") is None


def test_without_llvmlite_autotrace_imports_and_nothing_fuses():
    program = (
        "import numpy as np, autotrace\n"
        "from autotrace.runtime.backends.llvm import compiler as llvm\n"
        "from autotrace.runtime.backends.llvm.cpu_fusion import CpuFusion\n"
        "from autotrace.runtime.tracing.tracer import trace\n"
        "graph = trace(lambda x: np.tanh(x * 2.0), (np.ones(5000),))[0]\n"
        "assert not llvm.available() and CpuFusion().run(graph) is graph\n"
        "print('ok')\n")
    completed = _run_without_llvmlite(program)
    assert completed.stdout.strip() == "ok", completed.stderr


def _run_without_llvmlite(program: str, **environment) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "always", "-c",
                           "import sys; sys.modules['llvmlite'] = None\n" + program],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY), **environment})


TRACE_TWICE = (
    "import numpy as np, autotrace\n"
    "f = autotrace.function(lambda x: np.tanh(x * 2.0))\n"
    "g = autotrace.function(lambda x: np.sum(x * x))\n"
    "x = np.linspace(-1.0, 1.0, 5000)\n"
    "assert np.array_equal(f(x), np.tanh(x * 2.0)) and g(x) == np.sum(x * x)\n"
    "print(str(f.graph(x)).count('fused'))\n")


def test_without_llvmlite_traced_functions_warn_once_and_run_on_numpy():
    completed = _run_without_llvmlite(TRACE_TWICE, AUTOTRACE_CPU_BACKEND="auto")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "0"  # no fused region: the NumPy backend ran the graph
    warnings_shown = [line for line in completed.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warnings_shown) == 1, completed.stderr
    assert warnings_shown[0].startswith("<string>:6: RuntimeWarning: ")  # the first call
    assert ("RuntimeWarning: autotrace's compiled CPU backend cannot run here: llvmlite did not "
            "load (ModuleNotFoundError: No module named 'llvmlite.binding'; 'llvmlite' is not a "
            "package). Traced functions run on the NumPy backend, one NumPy call per "
            "operation. Reinstall llvmlite (pip install llvmlite), or set "
            "AUTOTRACE_CPU_BACKEND=numpy to choose the NumPy backend without this warning."
            ) in warnings_shown[0]


def test_choosing_the_numpy_backend_without_llvmlite_warns_nothing():
    completed = _run_without_llvmlite(TRACE_TWICE, AUTOTRACE_CPU_BACKEND="numpy")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "0" and "Warning" not in completed.stderr


def test_cache_key_depends_on_the_ir():
    assert llvm.cache_key(TWICE_IR) != llvm.cache_key(TWICE_IR + "; another\n")
    assert len(llvm.cache_key(TWICE_IR)) == 64


def test_vector_math_names():
    width = llvm.vector_width(np.float64)
    assert width in (2, 4, 8) and llvm.vector_width(np.float32) == 2 * width
    symbol = llvm.vector_math("tanh", np.float64, width)
    if symbol is None:
        print("libmvec is not loaded in this process: kernels call libm once per element")
    else:
        letter = {2: "b", 4: "d", 8: "e"}[width]
        assert symbol == f"_ZGV{letter}N{width}v_tanh"
        assert llvm.vector_math("tanh", np.float32, 2 * width) == (
            f"_ZGV{letter}N{2 * width}v_tanhf")
        assert llvm.vector_math("atan2", np.float64, width, 2) == f"_ZGV{letter}N{width}vv_atan2"
    assert llvm.vector_math("no_such_function", np.float64, width) is None
    assert llvm.vector_math("tanh", np.int64, width) is None


def test_call_overhead_is_printed():
    x = np.ones(1000)
    [equation] = fused_equations(fused_graph(lambda a: np.tanh(a) * 2.0, x))
    kernel = equation.attrs["kernel"]
    number = 20_000
    seconds = min(timeit.repeat(lambda: kernel(x), number=number, repeat=3)) / number
    empty = min(timeit.repeat(lambda: np.empty(1000), number=number, repeat=3)) / number
    print(f"fused call on 1,000 elements: {seconds * 1e6:.2f} us "
          f"(np.empty alone {empty * 1e6:.2f} us)")
    print(kernel.call.source)
    assert "define i8 @fused_" in kernel.ir
    np.testing.assert_allclose(kernel(x), np.tanh(x) * 2.0, rtol=1e-13)
