"""CPU recomputation (runtime/backends/llvm/cpu_recompute.py): arithmetic a later fused region
can compute from what it reads anyway is computed again there, not written and read back; the
results are the same bits."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)

from autotrace.runtime.backends.llvm.backend import LlvmBackend  # noqa: E402
from autotrace.runtime.backends.llvm.cpu_recompute import (  # noqa: E402
    MIN_RECOMPUTED_ELEMENTS, CpuRecompute)
from autotrace.runtime.execution.executor import compile_graph  # noqa: E402
from autotrace.runtime.passes import optimize  # noqa: E402
from autotrace.runtime.tracing.tracer import trace  # noqa: E402

rng = np.random.default_rng(5)


class WithoutRecompute(LlvmBackend):
    def passes(self):
        return [each for each in super().passes() if not isinstance(each, CpuRecompute)]


def compiled(function, args, backend):
    graph = optimize(trace(function, args)[0], backend=backend)
    run, _ = compile_graph(graph, backend=backend)
    return graph, run


def kernels(graph):
    return [equation for equation in graph.equations if equation.primitive.name == "fused_cpu"]


def gelu_layer_loss(x, w, b):
    h = x @ w + b
    y = 0.5 * h * (1.0 + np.tanh(0.7978845608028654 * (h + 0.044715 * h ** 3)))
    return np.sum((y @ w.T) ** 2)


def relu_layer_loss(x, w):
    h = x @ w
    y = np.maximum(h, 0.0) * 1.5 + np.where(h > 1.0, h * h, 0.25)
    return np.sum(np.tanh(y @ w.T))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_gelu_forward_kernel_writes_two_arrays_and_the_gradient_is_the_same_bits(dtype):
    x = rng.standard_normal((128, 64)).astype(dtype)
    w = (rng.standard_normal((64, 256)) / 8).astype(dtype)
    b = rng.standard_normal(256).astype(dtype)
    gradient = autotrace.grad(gelu_layer_loss, wrt=(1, 2))
    recomputed, run = compiled(gradient, (x, w, b), LlvmBackend())
    kept, run_kept = compiled(gradient, (x, w, b), WithoutRecompute())
    # the forward kernel: the GELU (read by the matmul) and the tanh, where it wrote five
    assert [len(equation.outputs) for equation in kernels(kept)][:1] == [5]
    assert [len(equation.outputs) for equation in kernels(recomputed)][:1] == [2]
    assert len(recomputed.equations) > len(kept.equations) - 1  # copies, fused in the backward
    for result, expected in zip(run(x, w, b), run_kept(x, w, b)):
        assert result.dtype == dtype
        np.testing.assert_array_equal(result, expected)
    eager = autotrace.grad(gelu_layer_loss, wrt=(1, 2))(x, w, b)
    for result, expected in zip(run(x, w, b), eager):  # float32 sums cancel: a scale's share
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(result, expected, rtol=tolerance,
                                   atol=tolerance * np.abs(expected).max())


def test_masks_and_selects_are_computed_again_too():
    x, w = rng.standard_normal((256, 64)), rng.standard_normal((64, 128)) / 8
    gradient = autotrace.grad(relu_layer_loss, wrt=1)
    recomputed, run = compiled(gradient, (x, w), LlvmBackend())
    kept, run_kept = compiled(gradient, (x, w), WithoutRecompute())
    written = sum(len(equation.outputs) for equation in kernels(recomputed))
    assert written < sum(len(equation.outputs) for equation in kernels(kept))
    np.testing.assert_array_equal(run(x, w)[0], run_kept(x, w)[0])
    np.testing.assert_allclose(run(x, w)[0], autotrace.grad(relu_layer_loss, wrt=1)(x, w),
                               rtol=1e-11)


def test_small_arrays_and_values_written_anyway_are_read_back():
    # below MIN_RECOMPUTED_ELEMENTS the graph is what it was
    rows = MIN_RECOMPUTED_ELEMENTS // 256 // 2
    x, w, b = rng.standard_normal((rows, 64)), rng.standard_normal((64, 256)) / 8, \
        rng.standard_normal(256)
    gradient = autotrace.grad(gelu_layer_loss, wrt=(1, 2))
    assert str(compiled(gradient, (x, w, b), LlvmBackend())[0]) == str(
        compiled(gradient, (x, w, b), WithoutRecompute())[0])

    # a value a matmul reads is written anyway: read back, not computed again
    def loss(x, w):
        h = x @ w
        s = h * h + 1.0
        return np.sum((s @ w.T) ** 2) + np.sum(np.sqrt(s) * h)

    x, w = rng.standard_normal((256, 64)), rng.standard_normal((64, 128))
    graph, run = compiled(autotrace.grad(loss, wrt=1), (x, w), LlvmBackend())
    kept, run_kept = compiled(autotrace.grad(loss, wrt=1), (x, w), WithoutRecompute())
    assert str(graph) == str(kept)
    np.testing.assert_array_equal(run(x, w)[0], run_kept(x, w)[0])
