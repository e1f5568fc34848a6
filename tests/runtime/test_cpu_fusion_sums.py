"""Sums over some axes in fused CPU kernels (runtime/backends/llvm/cpu_reductions.py): a sum over
leading axes (a bias gradient, d.sum(axis=0)) or over trailing axes (np.sum(x, axis=-1)) is
added up in the loop that computes what it sums, bit for bit as NumPy adds it, in the summed
dtype, keepdims or not, NaN and inf included, beside the kernel's other outputs.
"""
import numpy as np
import pytest

from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)

from tests.runtime.test_cpu_fusion import (  # noqa: E402
    fused_equations, run_fused, sample,
)

# (shape, axis, keepdims): leading axes, trailing axes, negative axes, all axes
SUMS = [((64, 256), 0, False), ((7, 48), (0,), True), ((3, 5, 32), (0, 1), False),
        ((3, 5, 32), (-3, -2), True), ((100, 16), -1, False), ((50, 128), 1, True),
        ((9, 4, 16), (1, 2), False), ((9, 4, 16), (-1, -2), True), ((2, 3, 4, 16), 3, False),
        ((9, 64), None, True), ((33, 48), (0, 1), False)]


def assert_same_as_numpy(function, *args):
    """Results of the fused graph (the kernels' own, run_fused) equal NumPy's bit for bit,
    shapes and dtypes included. The functions are arithmetic: glibc's tanh or exp may differ
    from NumPy's by an ulp."""
    with np.errstate(all="ignore"):
        expected = function(*args)
        results, graph = run_fused(function, *args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(results) == len(expected)
    for result, wanted in zip(results, expected):
        wanted = np.asarray(wanted)
        assert result.shape == wanted.shape and result.dtype == wanted.dtype, (result, wanted)
        assert np.array_equal(result, wanted, equal_nan=True), np.max(abs(result - wanted))
        assert np.array_equal(np.signbit(result), np.signbit(wanted))
    return graph


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, axis, keepdims", SUMS)
def test_sum_over_axes_is_added_in_the_loop(shape, axis, keepdims, dtype):
    x = sample(int(np.prod(shape)), dtype, seed=7).reshape(shape)
    x = np.where(np.isfinite(x) & (abs(x) < 1e30), x, dtype(0.5))

    def f(a):
        return np.sum((a * 3.0 + 1.0) * a, axis=axis, keepdims=keepdims)

    if axis is None or len(np.shape(np.sum(x, axis=axis))) == 0:  # a sum of all elements
        (total,), graph = run_fused(f, x)  # is blocked and compensated: not NumPy's order
        np.testing.assert_allclose(total, f(x), rtol=1e-13 if dtype == np.float64 else 1e-6)
        assert total.shape == f(x).shape and total.dtype == dtype
    else:
        graph = assert_same_as_numpy(f, x)
    assert [equation.primitive.name for equation in graph.equations] == ["fused_cpu"]
    # the graph shows the sum as the kernel's output: nothing is written and read again
    summed = np.sum(x, axis=axis, keepdims=keepdims)
    letter = "f64" if dtype == np.float64 else "f32"
    assert f"b:{letter}[{','.join(map(str, summed.shape))}] = fused_cpu" in str(graph), graph


def test_a_region_with_outputs_summed_and_not():
    x = sample(40 * 32, seed=3).reshape(40, 32)
    x = np.where(np.isfinite(x), x, 0.25) * 1e-3

    def f(a):
        t = np.abs(a) * 3.0
        return t, np.sum(t, axis=0), np.sum(t + 1.0, axis=-1, keepdims=True), np.sum(a * a)

    graph = assert_same_as_numpy(f, x)
    [equation] = fused_equations(graph)
    # the array first, then the sums: of all elements, over leading, over trailing axes
    assert [var.aval.shape for var in equation.outputs] == [(40, 32), (), (32,), (40, 1)]
    assert "reduce_sum" not in str(graph)


@pytest.mark.parametrize("axis", [0, -1])
def test_sums_of_nan_and_inf_are_numpys(axis):
    x = np.tile(sample(64, seed=4), (24, 1))  # every row and every column has special values
    x[3, :] = np.inf        # a row of inf, and columns with inf and -inf: inf - inf is NaN
    x[5, ::2] = -np.inf
    x[:, 7] = np.nan
    x[:, 9] = -0.0
    assert_same_as_numpy(lambda a: np.sum(a * 2.0 + 1e308, axis=axis), x)  # overflows too
    assert_same_as_numpy(lambda a: np.sum(a * -0.0, axis=axis), x)


@pytest.mark.parametrize("register_bytes", [16, 32])
def test_sums_with_narrower_vectors_are_numpys(monkeypatch, register_bytes):
    """With SSE or AVX vectors of 2 or 4 doubles, NumPy's eight accumulators of a trailing sum
    are 4 or 2 vectors, and rows still add up bit for bit as NumPy's."""
    monkeypatch.setattr(llvm, "vector_width",
                        lambda dtype: register_bytes // np.dtype(dtype).itemsize)
    x = sample(24 * 128, seed=5).reshape(24, 128)
    x = np.where(np.isfinite(x) & (abs(x) < 1e30), x, -2.0)
    for dtype in (np.float64, np.float32):
        value = x.astype(dtype)
        assert_same_as_numpy(lambda a: (np.sum(np.maximum(a, 0.5) + a, axis=-1),
                                        np.sum(np.maximum(a, 0.5) + a, axis=0)), value)
        assert_same_as_numpy(lambda a: np.sum(np.square(a) * a, axis=(1,), keepdims=True),
                             value.reshape(48, 64))


def test_a_sum_read_by_its_own_region_is_computed_first():
    """d - d.sum(axis=0) needs the whole sum before its first row: a second loop."""
    x = sample(64 * 32, seed=6).reshape(64, 32)
    x = np.where(np.isfinite(x), x, 0.5)
    graph = assert_same_as_numpy(lambda a: a * 1e-3 - np.sum(np.abs(a) * 1e-3, axis=0), x)
    assert [equation.primitive.name for equation in graph.equations] == [
        "fused_cpu", "subtract"]


def test_bias_gradient_of_a_dense_layer_is_fused():
    """The traced gradient of tanh(X @ W + b): the bias gradient is summed in the kernel that
    computes the preactivation's gradient, at the default size threshold."""
    import autotrace
    from autotrace.runtime.backends.selection import cpu_backend

    generator = np.random.default_rng(0)
    W, b = generator.standard_normal((32, 256)) * 0.1, generator.standard_normal(256) * 0.1
    X = generator.standard_normal((64, 32))

    def loss(W, b, X):
        return np.sum(np.tanh(X @ W + b) ** 2)

    results = {}
    before = cpu_backend()
    try:
        for backend in ("numpy", "llvm"):
            cpu_backend(backend)
            traced = autotrace.function(autotrace.grad(loss, wrt=(0, 1)))
            results[backend] = traced(W, b, X)
            graph = str(traced.graph(W, b, X))
    finally:
        cpu_backend(before)
    assert "f64[256] = fused_cpu" in graph and "reduce_sum" not in graph, graph
    for fused, reference in zip(results["llvm"], results["numpy"]):
        # (tanh's vector form may differ by an ulp: a gradient that cancels keeps an ulp or
        # two of the largest values as its absolute difference)
        np.testing.assert_allclose(fused, reference, rtol=1e-13,
                                   atol=1e-15 * np.max(np.abs(reference)))
    hidden = np.tanh(X @ W + b)
    np.testing.assert_allclose(results["llvm"][1], np.sum(2 * hidden * (1 - hidden ** 2),
                                                          axis=0), rtol=1e-12)
