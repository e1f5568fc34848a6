"""Row kernels (runtime/backends/llvm/cpu_rows.py, cpu_row_fusion.py): softmax, layer norm,
log-sum-exp and their traced gradients, each reduction over the trailing axis used in the same
rows, fused into one kernel; sums bit for bit NumPy's pairwise sums, maxima exact, means as
np.mean computes them; rows of any length, float32 and float64, NaN and inf, any thread count.
"""
import warnings

import numpy as np
import pytest

from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)

import autotrace  # noqa: E402
from autotrace.runtime.backends.llvm.cpu_rows import ROW_REDUCTIONS  # noqa: E402
from autotrace.runtime.execution.executor import compile_graph  # noqa: E402
from tests.runtime.test_cpu_fusion import (  # noqa: E402
    fused_equations, fused_graph, fusing_backend, run_fused,
)
from autotrace.runtime.backends.llvm import cpu_threads  # noqa: E402
from tests.runtime.test_cpu_threads import (  # noqa: E402
    assert_same_bits, results_by_thread_count,
)

LENGTHS = [10, 64, 100, 128, 300]
DTYPES = [np.float64, np.float32]


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def squared_softmax(x):
    """softmax with a square for the exponential: arithmetic alone, so bit for bit NumPy's."""
    e = (x - np.max(x, axis=-1, keepdims=True)) ** 2
    return e / np.sum(e, axis=-1, keepdims=True), np.min(x, axis=-1)


def layer_norm(x, gain, bias):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-5) * gain + bias


def log_sum_exp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=-1)) + m[..., 0]


def rows(shape, dtype, seed=0):
    generator = np.random.default_rng(seed)
    return (generator.standard_normal(shape) * 3.0).astype(dtype)


def row_reductions_left(graph) -> list:
    """The reductions over the trailing axis of floats that no kernel took."""
    return [equation for equation in graph.equations
            if equation.primitive.name in ROW_REDUCTIONS
            and equation.inputs[0].aval.dtype.kind == "f"]


def assert_fused_as_numpy(function, *args, exact=True, kernels=1):
    """The fused graph's results (the kernels' own) equal NumPy's: bit for bit where `exact`
    (arithmetic and sqrt), else within an ulp or two of glibc's exp and log; every float
    reduction over rows is in a row kernel."""
    with np.errstate(all="ignore"):
        expected = function(*args)
        results, graph = run_fused(function, *args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for result, wanted in zip(results, expected):
        wanted = np.asarray(wanted)
        assert result.shape == wanted.shape and result.dtype == wanted.dtype
        if exact:
            assert np.array_equal(result, wanted, equal_nan=True), np.max(abs(result - wanted))
        else:
            scale = np.max(abs(wanted[np.isfinite(wanted)]), initial=1.0)
            epsilon = np.finfo(wanted.dtype).eps
            np.testing.assert_allclose(result, wanted, rtol=16 * epsilon,
                                       atol=16 * epsilon * scale, equal_nan=True)
    assert kernels is None or len(fused_equations(graph)) == kernels, graph
    assert not row_reductions_left(graph), graph
    row_kernels = [equation.attrs["kernel"] for equation in fused_equations(graph)
                   if equation.attrs["kernel"].spec.row_length]
    assert row_kernels, graph
    return graph


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length", LENGTHS)
def test_softmax_is_one_kernel(length, dtype):
    x = rows((4, 9, length), dtype)
    graph = assert_fused_as_numpy(squared_softmax, x)
    assert [equation.primitive.name for equation in graph.equations] == ["fused_cpu"]
    graph = assert_fused_as_numpy(softmax, x, exact=False)
    assert [equation.primitive.name for equation in graph.equations] == ["fused_cpu"]
    assert "fused_cpu" in str(graph) and "reduce_max" not in str(graph)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length", LENGTHS)
def test_layer_norm_and_its_gradient_are_numpys_bit_for_bit(length, dtype):
    x, gain, bias = rows((40, length), dtype), rows(length, dtype, 1), rows(length, dtype, 2)
    graph = assert_fused_as_numpy(layer_norm, x, gain, bias)
    assert [equation.primitive.name for equation in graph.equations] == ["fused_cpu"]

    def loss(x, gain, bias):
        return np.sum(layer_norm(x, gain, bias) * np.abs(x))

    assert_fused_as_numpy(autotrace.grad(loss), x, gain, bias, kernels=None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length", LENGTHS)
def test_log_sum_exp_and_softmax_gradients(length, dtype):
    x = rows((30, length), dtype)
    graph = assert_fused_as_numpy(log_sum_exp, x, exact=False)
    assert "getitem" in str(graph)  # m[..., 0]: a view of the kernel's per-row maximum

    def loss(x):
        return np.sum(softmax(x) * np.cos(x))

    gradient = autotrace.grad(loss)
    with np.errstate(all="ignore"):
        graph = fused_graph(gradient, x)
    assert not row_reductions_left(graph), graph
    run, _ = compile_graph(graph, backend=fusing_backend())
    scale = np.max(abs(gradient(x)))
    np.testing.assert_allclose(run(x)[0], gradient(x), rtol=0,
                               atol=64 * np.finfo(dtype).eps * scale)
    # the softmax gradient's sum(g * s, -1, keepdims) and s * (g - that) in one kernel
    # (the maximum's gradient compares x with it and counts the ties: integers, NumPy's)
    assert_fused_as_numpy(autotrace.grad(lambda x: np.sum(squared_softmax(x)[0] * x)), x,
                          kernels=None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length", [2, 3, 7, 8, 9, 127, 129, 255, 256, 257, 1000, 1024, 4096])
def test_sums_and_means_of_rows_of_any_length_are_numpys(length, dtype):
    """Rows shorter than 8, and longer than 128, which NumPy's pairwise sum splits."""
    x = rows((3, length), dtype) + dtype(1.0)

    def f(a):
        return np.mean(a, axis=-1), np.sum(a * a, axis=-1, keepdims=True), np.max(a, axis=-1)

    assert_fused_as_numpy(f, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_and_inf_rows_are_numpys(dtype):
    x = rows((8, 100), dtype)
    x[1, 7] = np.nan
    x[2, 99] = np.inf
    x[3, 0] = -np.inf
    x[4, :] = -np.inf
    x[5, 50:] = np.inf
    x[6, ::3] = np.nan
    x[7, 98] = np.nan

    def extremes(a):
        return (np.max(a, axis=-1), np.min(a, axis=-1, keepdims=True) * 2.0,
                np.sum(a * a, axis=-1), np.mean(a - 1.0, axis=-1))

    assert_fused_as_numpy(extremes, x)
    assert_fused_as_numpy(squared_softmax, x)
    assert_fused_as_numpy(layer_norm, x, x[0], x[1])


def test_inputs_of_one_value_per_row_and_rows_of_no_multiple_of_16():
    x, m, bias = rows((300, 10), np.float64), rows((300, 1), np.float64, 1), rows(10, np.float64)
    graph = assert_fused_as_numpy(lambda a, b, c: (a - b) * 2.0 + c, x, m, bias)
    [kernel] = [equation.attrs["kernel"] for equation in fused_equations(graph)]
    assert kernel.spec.row_length == 10
    # rows of 7, 3-d, float32
    x3 = rows((6, 50, 7), np.float32)
    assert_fused_as_numpy(lambda a: a / np.sum(a * a, axis=-1, keepdims=True), x3)


def test_small_regions_stay_numpy():
    # cpu_fusion.worth_fusing: a chain of three equations or more from 256 elements on (the
    # softmax's five), two equations from 1,024
    def shifted(x):
        return x - np.max(x, axis=-1, keepdims=True)

    for function, shape, fused in [(softmax, (4, 32), False), (softmax, (8, 32), True),
                                   (shifted, (8, 64), False), (shifted, (16, 64), True)]:
        graph = fused_graph(function, rows(shape, np.float64), min_elements=None)
        assert ("fused_cpu" in str(graph)) is fused and ("reduce_max" in str(graph)) is not fused


@pytest.mark.parametrize("dtype", DTYPES)
def test_results_do_not_depend_on_the_thread_count(monkeypatch, dtype):
    """Kernels of 1,000 elements or more run in pieces of whole rows, as small as can be."""
    for name in ("MIN_PARALLEL_ELEMENTS", "MIN_PARALLEL_ARITHMETIC_ELEMENTS"):
        monkeypatch.setattr(cpu_threads, name, 1000)
    monkeypatch.setattr(cpu_threads, "MIN_PIECE_ELEMENTS", 1)
    monkeypatch.setattr(cpu_threads, "_settings", {"threads": cpu_threads.cpu_threads()})
    for function, shape in [(softmax, (301, 100)), (squared_softmax, (97, 300)),
                            (lambda a: layer_norm(a, a[0], a[1]), (501, 10))]:
        results, kernels = results_by_thread_count(function, rows(shape, dtype))
        assert any(kernel.parts is not None and kernel.spec.row_length for kernel in kernels)
        assert_same_bits(results)


def test_a_kernel_that_raises_a_floating_point_exception_runs_numpy_and_warns():
    x = rows((64, 100), np.float64)

    def logs(a):
        return np.log(a - np.max(a, axis=-1, keepdims=True)) * 2.0

    graph = fused_graph(logs, x)
    assert not row_reductions_left(graph)
    run, _ = compile_graph(graph, backend=fusing_backend())
    # log(0) divides by zero, the log of a negative value is invalid: NumPy's calls run
    messages, results = [], []
    for call in (run, logs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(call(x))
        messages.append([str(warning.message) for warning in caught])
    assert messages[0] == messages[1] and messages[0]
    assert np.array_equal(results[0][0], results[1], equal_nan=True)


def test_a_reduction_without_keepdims_broadcasts_as_numpy_broadcasts_it():
    """Square rows: np.sum(x, -1) of shape (64,) repeats along the leading axis in x * s."""
    x = rows((64, 64), np.float64)

    def f(a):
        s = np.sum(a * a, axis=-1)
        return a * s + np.max(a, axis=-1), np.log(s) * 2.0

    with np.errstate(all="ignore"):
        expected = f(x)
        results, graph = run_fused(f, x)
    for result, wanted in zip(results, expected):
        np.testing.assert_allclose(result, wanted, rtol=1e-13)
