"""A matmul read through one transpose and then reshaped (runtime/backends/transposed_products.py):
on the CPU backends the traced graph writes the product straight into the transposed layout,
`transposed_product(a, b, ...)`, so that the reshape is a view; every other product stays
np.matmul."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.backends.transposed_products import layout, transposed_product
from autotrace.runtime.execution.executor import compile
from autotrace.runtime.tracing.tracer import trace
from tests.runtime.helpers import optimized_ops

rng = np.random.default_rng(11)
BACKENDS = ["numpy"] + (["llvm"] if backend_named("llvm").available() is None else [])


def merge_heads(weights, values):  # attention's (batch, heads, tokens, d) -> (batch, tokens, h*d)
    batch, heads, tokens, _ = weights.shape
    return np.reshape(np.transpose(weights @ values, (0, 2, 1, 3)), (batch, tokens, -1))


def keys_gradient(queries, scores):  # (b, h, d, t) @ (b, h, t, t), rows moved to the last axis
    batch, heads, depth, tokens = queries.shape
    return np.reshape(np.transpose(queries @ scores, (0, 3, 1, 2)), (batch, tokens, -1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_merged_heads_are_written_in_place_bit_for_bit(backend, dtype):
    weights = rng.standard_normal((3, 4, 8, 8)).astype(dtype)
    values = rng.standard_normal((3, 4, 8, 5)).astype(dtype)
    assert optimized_ops(merge_heads, weights, values, backend=backend) == [
        "matmul_transposed", "reshape"]
    graph, _ = trace(lambda w, v: np.tanh(merge_heads(w, v)), (weights, values))
    executable = compile(graph, backend_named(backend))
    for call in range(2):  # the second call writes into the buffer the first one kept
        (result,) = executable.run(weights + call, values)
        expected = np.tanh(merge_heads(weights + call, values))
        assert result.shape == (3, 8, 20) and result.dtype == dtype
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_moved_to_the_last_axis_are_a_transposed_product(backend):
    queries, scores = rng.standard_normal((2, 3, 5, 7)), rng.standard_normal((2, 3, 7, 7))
    assert optimized_ops(keys_gradient, queries, scores, backend=backend) == [
        "matmul_transposed", "reshape"]
    (result,) = compile(trace(keys_gradient, (queries, scores))[0],
                        backend_named(backend)).run(queries, scores)
    np.testing.assert_allclose(result, keys_gradient(queries, scores), rtol=1e-13, atol=1e-13)
    assert result.flags.c_contiguous and result.shape == (2, 7, 15)


@pytest.mark.parametrize("axes, view, swap", [
    ((0, 2, 1, 3), (0, 2, 1, 3), False),
    ((0, 3, 1, 2), (0, 2, 1, 3), True),   # swapped: (0, 2, 1, 3), its own inverse
    ((1, 0), (0, 1), True),
    ((2, 0, 1), (1, 0, 2), True),         # swapped: (1, 0, 2)
    ((1, 0, 2), (1, 0, 2), False),
])
def test_layout_and_the_product_it_writes(axes, view, swap):
    assert layout(axes) == (view, swap)
    a = rng.standard_normal((2, 4, 3, 5)[4 - len(axes):]) if len(axes) > 2 else \
        rng.standard_normal((3, 5))
    b = rng.standard_normal((2, 4, 5, 6)[4 - len(axes):]) if len(axes) > 2 else \
        rng.standard_normal((5, 6))
    expected = np.transpose(a @ b, axes)
    result = transposed_product(a, b, view, swap, expected.shape)
    assert result.flags.c_contiguous
    np.testing.assert_allclose(result, expected, rtol=1e-14, atol=1e-14)
    out = np.empty(expected.shape)
    assert transposed_product(a, b, view, swap, expected.shape, out=out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-14)


def test_broadcast_stacks_and_float32():
    a = rng.standard_normal((4, 1, 3, 5)).astype(np.float32)
    b = rng.standard_normal((2, 5, 6)).astype(np.float32)
    function = lambda a, b: np.reshape(np.transpose(a @ b, (1, 2, 0, 3)), (-1,))  # noqa: E731
    assert optimized_ops(function, a, b) == ["matmul_transposed", "reshape"]
    (result,) = compile(trace(function, (a, b))[0], backend_named("numpy")).run(a, b)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, function(a, b))


def test_other_transposed_products_stay_matmuls():
    a, b = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 5, 6))
    # no reshape reads the transpose: matmuls read transposes as they are
    assert optimized_ops(lambda a, b: np.transpose(a @ b, (0, 2, 1, 3)) @ np.ones((6, 2)),
                         a, b)[0] == "matmul"
    # the product is read as it is too
    assert "matmul_transposed" not in optimized_ops(
        lambda a, b: np.reshape(np.transpose(a @ b, (0, 2, 1, 3)), (-1,)) + np.sum(a @ b),
        a, b)
    # the product's rows and columns both leave the last two axes
    assert "matmul_transposed" not in optimized_ops(
        lambda a, b: np.reshape(np.transpose(a @ b, (3, 2, 0, 1)), (-1,)), a, b)
    # integers are NumPy's own loop, not BLAS
    ints = (np.arange(120).reshape(2, 3, 4, 5), np.arange(180).reshape(2, 3, 5, 6))
    assert "matmul_transposed" not in optimized_ops(merge_heads, *ints)


def test_a_traced_attention_gradient_writes_its_heads_in_place():
    x = rng.standard_normal((2, 6, 8))
    w = rng.standard_normal((8, 8)) / 3

    def loss(w, x):
        heads = np.transpose(np.reshape(x @ w, (2, 6, 2, 4)), (0, 2, 1, 3))
        scores = heads @ np.swapaxes(heads, -1, -2)
        weights = np.exp(scores) / np.sum(np.exp(scores), axis=-1, keepdims=True)
        return np.sum(np.tanh(merge_heads(weights, heads)))

    gradient = autotrace.function(autotrace.grad(loss))
    expected = autotrace.grad(loss)(w, x)
    np.testing.assert_allclose(gradient(w, x), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gradient(w, x), expected, rtol=1e-12, atol=1e-12)
    assert "transposed_product(" in gradient.source(w, x)


def test_a_returned_product_is_a_new_array_on_every_call():
    weights, values = rng.standard_normal((3, 4, 8, 8)), rng.standard_normal((3, 4, 8, 5))
    merged = autotrace.function(merge_heads)
    first = merged(weights, values)
    kept = first.copy()
    second = merged(weights + 1, values)
    assert not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_array_equal(second, merge_heads(weights + 1, values))
    assert "transposed_product(a, b, (0, 2, 1, 3), False, (3, 8, 4, 5))" in merged.source(
        weights, values)


def merged_and_heads(weights, values):
    batch, heads, tokens, _ = weights.shape
    heads_first = np.transpose(weights @ values, (0, 2, 1, 3))
    return np.reshape(heads_first, (batch, tokens, -1)), heads_first


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_results_that_would_share_the_transposed_product_stay_apart(backend):
    # NumPy's reshape of the transposed product is a copy: written transposed, the reshape
    # would be a view of the other result. The product stays a matmul.
    weights, values = rng.standard_normal((3, 4, 8, 8)), rng.standard_normal((3, 4, 8, 5))
    assert "matmul_transposed" not in optimized_ops(merged_and_heads, weights, values,
                                                    backend=backend)
    merged, heads = compile(trace(merged_and_heads, (weights, values))[0],
                            backend_named(backend)).run(weights, values)
    assert not np.shares_memory(merged, heads)
    expected_merged, expected_heads = merged_and_heads(weights, values)
    np.testing.assert_array_equal(merged, expected_merged)
    merged[...] = 0.0
    np.testing.assert_array_equal(heads, expected_heads)
