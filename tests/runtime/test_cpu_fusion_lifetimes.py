"""Fused CPU regions keep few arrays alive (runtime/backends/llvm/cpu_fusion.py,
MAX_LATE_INPUTS): a sum over steps of products, as an RNN's weight gradient, stays a chain of
small kernels or adds instead of one kernel reading every step's product; results stay
NumPy's, bit for bit."""
import numpy as np
import pytest

from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)

import autotrace  # noqa: E402
from tests.runtime.test_cpu_fusion import fused_equations, run_fused  # noqa: E402

rng = np.random.default_rng(0)


def products_read(equation, graph):
    made_by_matmul = {id(var) for each in graph.equations if each.primitive.name == "matmul"
                      for var in each.outputs}
    return sum(id(value) in made_by_matmul for value in equation.inputs)


def sum_of_products(xs, w):
    total = xs[0] @ w
    for x in xs[1:]:
        total = total + np.maximum(x @ w, 0.0)
    return total


def test_a_sum_over_steps_does_not_read_every_product_in_one_kernel():
    xs, w = rng.standard_normal((12, 32, 16)), rng.standard_normal((16, 64))
    results, graph = run_fused(sum_of_products, xs, w)
    assert fused_equations(graph)  # maximum and the add still fuse
    for equation in fused_equations(graph):
        assert products_read(equation, graph) <= 3  # not all 12
    assert np.array_equal(results[0], sum_of_products(xs, w))


def test_a_product_still_joins_the_chain_it_feeds():
    def gradient_like(h, g, w):
        return (g @ w.T) * (1.0 - np.tanh(h) ** 2)
    args = rng.standard_normal((32, 64)), rng.standard_normal((32, 48)), rng.standard_normal(
        (64, 48))
    results, graph = run_fused(gradient_like, *args)
    assert [eq.primitive.name for eq in graph.equations][-1] == "fused_cpu"
    assert len(fused_equations(graph)) == 1
    np.testing.assert_allclose(results[0], gradient_like(*args), rtol=1e-13)


def rnn_loss(Wx, Wh, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh)
    return np.sum(h ** 2)


def test_rnn_weight_gradients_are_the_eager_ones_and_read_few_products():
    Wx, Wh = 0.1 * rng.standard_normal((16, 64)), 0.05 * rng.standard_normal((64, 64))
    xs, h0 = rng.standard_normal((20, 32, 16)), np.zeros((32, 64))
    gradient = autotrace.grad(rnn_loss, wrt=(0, 1))
    traced = autotrace.function(gradient)
    graph = traced.graph(Wx, Wh, xs, h0)
    assert fused_equations(graph)
    assert max(products_read(equation, graph) for equation in fused_equations(graph)) <= 3
    for result, expected in zip(traced(Wx, Wh, xs, h0), gradient(Wx, Wh, xs, h0)):
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-14)
