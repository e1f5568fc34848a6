"""autotrace's own vector tanh in fused CPU kernels (runtime/backends/llvm/cpu_vector_math.py):
within 1.5 ulp of the correctly rounded tanh in float64 (2 of NumPy's), 5 in float32 (6.5 of
NumPy's), over every range, and never above 1 in magnitude; NumPy's results on zeros,
infinities, subnormals and NaN; no floating-point flag raised, so the kernel never falls back
to NumPy's calls; and still one kernel in the GELU gradient.
"""
import numpy as np
import pytest

from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)
if not llvm.has_fused_multiply_add():
    pytest.skip("this CPU has no fused multiply-add: kernels call the C library's tanh",
                allow_module_level=True)

import autotrace  # noqa: E402
from autotrace.runtime.backends.llvm.cpu_calls import compiled_kernel  # noqa: E402
from autotrace.runtime.backends.llvm.cpu_kernels import ARRAY, KernelSpec, Step  # noqa: E402
from tests.runtime.test_cpu_fusion import fused_equations, run_fused  # noqa: E402

BITS = {np.dtype(np.float64): np.uint64, np.dtype(np.float32): np.uint32}
# ulps from the correctly rounded tanh, at most, and from NumPy's (the module docstring of
# cpu_vector_math says what each dtype's algorithm is and why float32's is wider)
ULP_BOUNDS = {np.dtype(np.float64): (1.5, 2.0), np.dtype(np.float32): (5.0, 6.5)}


def tanh_kernel(dtype, size: int, numpy_version=None):
    """A kernel computing tanh alone on `size` values of `dtype`."""
    dtype = np.dtype(dtype)
    spec = KernelSpec(((dtype, ARRAY),), (Step("tanh", (("input", 0),), (dtype,), dtype),),
                      (0,))
    return compiled_kernel(spec, (size,), ((size,),), numpy_version)


def ulps(got, expected, dtype) -> np.ndarray:
    """|got - expected| in ulps of `dtype` at the expected value, the smaller ulp where the
    expected value is a power of two (below 1.0 an ulp is half what it is above)."""
    rounded = np.abs(expected).astype(dtype)
    ulp = np.spacing(np.nextafter(rounded, dtype(0)))
    wide = np.longdouble if dtype == np.float64 else np.float64
    return (np.abs(got.astype(wide) - expected) / ulp.astype(wide)).astype(np.float64)


def float64_values(rng) -> np.ndarray:
    """Values of every exponent, subnormals included, and dense runs where the algorithm
    changes branch (|x| = 1) and where tanh rounds to 1 (|x| near 19.06) or is clamped (20)."""
    count = 200_000
    spread = np.exp2(rng.uniform(-1075, 8, count)) * rng.choice([-1.0, 1.0], count)
    return np.concatenate([spread, np.linspace(-25, 25, 100_001),
                           np.linspace(0.99, 1.01, 20_001), np.linspace(-1.01, -0.99, 20_001),
                           np.linspace(18.9, 20.1, 20_001), np.linspace(-1e-3, 1e-3, 20_001)])


def float32_values() -> np.ndarray:
    """Every 97th float32 from 2 ** -14, below which tanh rounds to x, to 10, above which it
    rounds to 1, both signs, and every float32 within 2 ** -12 of 1 and from 7.5 to 9.5, where
    tanh is within a few ulps of 1 and the error is largest."""
    def every_float32(low: float, high: float, step: int = 1) -> np.ndarray:
        return np.arange(np.float32(low).view(np.uint32), np.float32(high).view(np.uint32),
                         step, dtype=np.uint32).view(np.float32)

    values = np.concatenate([every_float32(2.0 ** -14, 10.0, 97),
                             every_float32(1 - 2.0 ** -12, 1 + 2.0 ** -12),
                             every_float32(7.5, 9.5)])
    return np.concatenate([values, -values])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tanh_within_its_ulp_bound(dtype):
    values = (float64_values(np.random.default_rng(0)) if dtype == np.float64
              else float32_values())
    got = tanh_kernel(dtype, values.size).unchecked(values)
    assert got.dtype == dtype
    assert np.abs(got).max() <= 1.0
    exact_bound, numpy_bound = ULP_BOUNDS[np.dtype(dtype)]
    # NumPy's own: glibc's tanh, or NumPy's SIMD versions
    assert ulps(got, np.tanh(values), dtype).max() <= numpy_bound
    if dtype == np.float64 and np.finfo(np.longdouble).nmant < 63:
        return  # no wider type to take as the exact tanh
    wide = np.longdouble if dtype == np.float64 else np.float64
    assert ulps(got, np.tanh(values.astype(wide)), dtype).max() <= exact_bound


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tanh_of_special_values_is_numpys(dtype):
    info = np.finfo(dtype)
    values = np.array([0.0, -0.0, np.inf, -np.inf, info.max, -info.max, info.tiny, -info.tiny,
                       info.smallest_subnormal, -info.smallest_subnormal, info.tiny / 3,
                       1e-30, -1e-30, 20.0, -20.0, 25.0, 1e10], dtype)
    called = []
    kernel = tanh_kernel(dtype, values.size, lambda *args: called.append(args))
    got = kernel(values)
    # no floating-point flag NumPy warns on was raised: the kernel's results are its own
    assert called == []
    np.testing.assert_array_equal(got.view(BITS[np.dtype(dtype)]),
                                  np.tanh(values).view(BITS[np.dtype(dtype)]))
    nans = np.array([np.nan, -np.nan, np.nan], dtype)
    assert np.isnan(tanh_kernel(dtype, 3, lambda *args: called.append(args))(nans)).all()
    assert called == []


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gelu_gradient_is_one_kernel_with_autotraces_tanh(dtype):
    def gelu_loss(x):
        return np.sum(0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3))))

    x = np.random.default_rng(1).standard_normal(4099).astype(dtype)
    (got,), graph = run_fused(autotrace.grad(gelu_loss), x)
    [equation] = fused_equations(graph)
    ir = equation.attrs["kernel"].ir
    called = {line.split("@")[1].split("(")[0] for line in ir.splitlines() if " call " in line}
    # no libm, no libmvec: LLVM's intrinsics and the module's own tanh
    assert all(name.startswith(("llvm.", "autotrace.tanh.")) for name in called), called
    scalar = "double" if dtype == np.float64 else "float"
    assert f"x {scalar}>" in ir  # float32 computes in float32 lanes
    inner = np.float64(0.7978845608028654) * (x + 0.044715 * x.astype(np.float64) ** 3)
    t = np.tanh(inner)
    expected = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (
        1 + 3 * 0.044715 * x.astype(np.float64) ** 2)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-14 if dtype == np.float64 else 2e-6,
                               atol=1e-15 if dtype == np.float64 else 1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_interleaved_kernel_computes_what_one_register_at_a_time_does(monkeypatch, dtype):
    from autotrace.runtime.backends.llvm import cpu_kernels

    def function(x, y):
        t = np.tanh(x * 0.8 + y)
        return 0.5 * x * (1.0 - t * t) + t

    x = np.linspace(-6.0, 6.0, 1003).astype(dtype)  # 1003: the tail too
    y = np.linspace(-1.0, 1.0, 1003).astype(dtype)
    (interleaved,), graph = run_fused(function, x, y)
    [equation] = fused_equations(graph)
    one_register = llvm.vector_width(x.dtype)
    assert cpu_kernels.kernel_width(equation.attrs["kernel"].spec) == max(
        one_register, min(2 * one_register, cpu_kernels.MAX_WIDTH))
    monkeypatch.setattr(cpu_kernels, "interleaves", lambda spec: False)
    (narrow,), graph = run_fused(function, x, y)
    [equation] = fused_equations(graph)
    assert cpu_kernels.kernel_width(equation.attrs["kernel"].spec) == one_register
    bits = BITS[np.dtype(dtype)]
    np.testing.assert_array_equal(interleaved.view(bits), narrow.view(bits))
    tolerance = 1e-14 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(interleaved, function(x, y), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("function", [
    lambda x: np.sum(np.tanh(x) * 2.0),            # a sum: its order is the lanes'
    lambda x: np.tanh(x) * np.exp(x)])             # the C library's exp takes one register
def test_kernels_that_sum_or_call_the_c_library_stay_one_register_wide(function):
    from autotrace.runtime.backends.llvm import cpu_kernels
    x = np.linspace(-3.0, 3.0, 1003)
    [equation] = fused_equations(run_fused(function, x)[1])
    spec = equation.attrs["kernel"].spec
    assert not cpu_kernels.interleaves(spec)
    assert cpu_kernels.kernel_width(spec) == llvm.vector_width(np.float64)
