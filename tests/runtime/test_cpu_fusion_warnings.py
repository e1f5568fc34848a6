"""NumPy's floating-point warnings from fused CPU kernels under NumPy's default error state: a
kernel returns whether it raised an exception flag NumPy warns on (invalid value, division by
zero, overflow; runtime/backends/llvm/cpu_loop.py), and the fused call then runs the region's NumPy
calls, so the warnings are NumPy's own, word for word, and so are the results.
"""
import ctypes
import ctypes.util
import warnings

import numpy as np
import pytest

from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)
if llvm.exception_flags() is None:
    pytest.skip(f"autotrace does not know <fenv.h>'s flags on {llvm.host()[0]}: fused kernels "
                "there do not warn", allow_module_level=True)

from autotrace.runtime.execution.executor import compile_graph  # noqa: E402
from tests.runtime.test_cpu_fusion import (  # noqa: E402
    fused_equations, fused_graph, fusing_backend, sample,
)

POSITIVE = np.linspace(0.5, 2.0, 1003)  # 1003: the kernel's tail runs too
MIXED = np.linspace(-1.0, 1.0, 1003)
SPECIAL = sample(1003)  # inf, -inf, NaN, zeros, 1e300... among random values
FINITE_ROWS = np.linspace(-1.0, 1.0, 64 * 32).reshape(64, 32)

# (name, function, arguments): every region fuses into one kernel
CASES = [
    ("overflow in exp", lambda a: np.exp(a * 1000.0) * 2.0, [MIXED]),
    ("overflow in multiply", lambda a: a * 1e308 * 10.0 + 1.0, [MIXED]),
    ("division by zero", lambda a: 1.0 / (a * 0.0) + a, [POSITIVE]),
    ("invalid in log", lambda a: np.log(a * 2.0) * 3.0, [MIXED]),
    ("invalid in sqrt", lambda a: np.sqrt(a - 0.75) + a, [POSITIVE]),
    ("inf - inf", lambda a: (a * 1e300 * 1e10 - a * 1e301 * 1e9) * 2.0, [POSITIVE]),
    ("special values", lambda a: np.sin(a) * 2.0 + np.maximum(a, 0.0), [SPECIAL]),
    ("inf in, no warning", lambda a: np.tanh(a) * 2.0 + 1.0, [SPECIAL]),
    ("overflow in a sum over rows", lambda a: np.sum(a * 1e308 * 1e10, axis=0), [FINITE_ROWS]),
    ("overflow in a sum", lambda a: np.sum(np.abs(a) * 1e308 + 1e308), [MIXED]),
    ("overflow in a cast", lambda a: (a * 1e300).astype(np.float32) * np.float32(2), [MIXED]),
    ("log of 0 in a scalar input", lambda s, a: np.log(s) * a + 1.0, [np.array(0.0), MIXED]),
    ("finite", lambda a: np.log(a + 1.0) * np.exp(a) + np.sqrt(a), [POSITIVE]),
    ("finite rows", lambda a: np.sum(np.exp(a) * 2.0 + a, axis=-1), [FINITE_ROWS]),
]


def warnings_of(call, *args):
    """(call's results, the messages of the warnings it gives)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = call(*args)
    return results, [f"{warning.category.__name__}: {warning.message}" for warning in caught]


def fused(function, args):
    """The fused graph of `function` (one kernel) compiled, and that kernel."""
    graph = fused_graph(function, *args)
    [equation] = fused_equations(graph)
    run, _ = compile_graph(graph, backend=fusing_backend())
    return run, equation.attrs["kernel"]


@pytest.mark.parametrize("name, function, args", CASES, ids=[case[0] for case in CASES])
def test_a_fused_region_warns_as_numpy(name, function, args):
    run, kernel = fused(function, args)
    expected, numpy_warnings = warnings_of(function, *args)
    (result,), fused_warnings = warnings_of(run, *args)
    assert fused_warnings == numpy_warnings
    assert bool(numpy_warnings) != name.startswith(("finite", "inf in")), numpy_warnings
    assert result.shape == np.shape(expected) and result.dtype == np.asarray(expected).dtype
    if numpy_warnings:  # NumPy's own calls ran: NumPy's results, bit for bit
        assert np.array_equal(result, expected, equal_nan=True)
    else:  # the kernel's: the same values, within glibc's ulp or two (of a term, where a
        # sum cancels: the checked kernel's loop may call another width of vector tanh)
        with np.errstate(all="ignore"):
            unchecked = kernel.unchecked(*args)
        for reference in (unchecked, expected):
            assert np.array_equal(np.isnan(result), np.isnan(reference))
            np.testing.assert_allclose(result, reference, rtol=1e-13, atol=4e-15,
                                       equal_nan=True)


def test_only_a_kernel_that_raised_an_exception_runs_numpys_calls():
    """1003 values: the last 3 run with 5 lanes of padding, which repeat a value (zeros would
    make log(0) divide by zero there, and every call run NumPy's calls)."""
    from autotrace.runtime.backends.llvm import cpu_calls

    _, kernel = fused(lambda a: np.log(a) * 2.0, [POSITIVE])
    numpy_calls = []

    def numpy_version(a):
        numpy_calls.append(a)
        with np.errstate(all="ignore"):
            return np.log(a) * 2.0
    kernel.numpy_version = numpy_version
    call = cpu_calls._wrapper(kernel, kernel.address)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(call(POSITIVE), np.log(POSITIVE) * 2.0, rtol=1e-13)
    assert not numpy_calls
    got = call(MIXED)  # the log of negative values
    assert len(numpy_calls) == 1
    np.testing.assert_array_equal(got, numpy_version(MIXED))  # NumPy's results, returned


def test_with_warnings_as_errors_an_overflow_raises_numpys_warning():
    run, _ = fused(lambda a: np.exp(a * 1000.0) * 2.0, [MIXED])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(POSITIVE * 0.1)  # finite: no warning
        with pytest.raises(RuntimeWarning, match="^overflow encountered in exp$"):
            run(MIXED)


@pytest.mark.skipif(not llvm.has_mxcsr(), reason="MXCSR is read on x86-64 only")
def test_kernels_leave_the_exception_flags_as_they_found_them():
    _, kernel = fused(lambda a: np.exp(a * 1000.0) * 2.0, [MIXED])
    with np.errstate(all="ignore"):
        np.exp(MIXED * 1000.0)  # NumPy leaves overflow and underflow raised
        flags = llvm.floating_point_control()
        assert flags & 0b11000
        kernel.unchecked(POSITIVE)  # raises nothing, and clears nothing
        assert llvm.floating_point_control() == flags
        kernel.unchecked(MIXED)  # raises overflow and underflow: they were raised already
        assert llvm.floating_point_control() == flags
        every = llvm.exception_flags()[1]  # <fenv.h>'s: all but x86's denormal flag
        ctypes.CDLL(ctypes.util.find_library("m")).feclearexcept(every)
        assert llvm.floating_point_control() & every == 0
        kernel.unchecked(MIXED)  # raises overflow and underflow, and puts them down again
        assert llvm.floating_point_control() & every == 0


def test_without_mxcsr_kernels_read_the_flags_with_fenv(monkeypatch):
    """Where the flags are not read in MXCSR (machines other than x86-64), <fenv.h>'s
    functions read them: tested here on this machine's flags."""
    monkeypatch.setattr(llvm, "has_mxcsr", lambda: False)
    run, kernel = fused(lambda a: np.log(a * 2.0) * 3.0, [MIXED])
    assert "fetestexcept" in kernel.ir and "mxcsr" not in kernel.ir
    (result,), caught = warnings_of(run, MIXED)
    assert caught == ["RuntimeWarning: invalid value encountered in log"]
    (result,), caught = warnings_of(run, POSITIVE)
    assert caught == [] and np.array_equal(result, kernel.unchecked(POSITIVE))
