"""A stack of matrices times one matrix (runtime/backends/row_products.py): on the CPU backends
the traced graph multiplies the stack's rows in one product, `row_product(a, b)`, where the
stack is C-contiguous, and falls back on np.matmul where it is not; every other product stays
np.matmul."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.row_products import row_product
from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.execution.executor import compile
from autotrace.runtime.tracing.tracer import trace
from tests.runtime.helpers import optimized_ops

rng = np.random.default_rng(7)
BACKENDS = ["numpy"] + (["llvm"] if backend_named("llvm").available() is None else [])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_stack_times_a_matrix_is_one_product_of_its_rows(backend, dtype):
    x = rng.standard_normal((3, 5, 16, 8)).astype(dtype)
    w = rng.standard_normal((8, 12)).astype(dtype)
    assert optimized_ops(lambda x, w: x @ w, x, w, backend=backend) == ["matmul_rows"]
    graph, _ = trace(lambda x, w: np.tanh(x @ w), (x, w))
    executable = compile(graph, backend_named(backend))
    for call in range(2):  # the second call writes into the buffer the first one kept
        (result,) = executable.run(x + call, w)
        expected = np.tanh((x + call) @ w)
        assert result.shape == expected.shape and result.dtype == dtype
        tolerance = 1e-5 if dtype == np.float32 else 1e-13  # a sum of 8 products: rounding
        np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)


def test_a_traced_gradient_of_a_dense_layer_over_tokens_shows_the_row_products():
    x, w = rng.standard_normal((4, 6, 8)), rng.standard_normal((8, 3))
    gradient = autotrace.function(autotrace.grad(lambda x, w: np.sum(np.tanh(x @ w)),
                                                 wrt=(0, 1)))
    dx, dw = gradient(x, w)
    y = np.tanh(x @ w)
    np.testing.assert_allclose(dx, (1 - y * y) @ w.T, rtol=1e-13)
    np.testing.assert_allclose(dw, np.einsum("btk,btn->kn", x, 1 - y * y), rtol=1e-13)
    source = gradient.source(x, w)
    assert "row_product(a, b, out=_kept0)" in source  # the forward product, into a buffer


@pytest.mark.parametrize("a", [
    np.transpose(rng.standard_normal((6, 5, 4)), (0, 2, 1)),       # each matrix transposed
    rng.standard_normal((4, 6, 5))[:, ::2],                        # every other row
    np.broadcast_to(rng.standard_normal((1, 3, 5)), (4, 3, 5)),    # one matrix, four times
])
def test_a_stack_that_is_not_c_contiguous_is_multiplied_as_a_stack(a):
    b = rng.standard_normal((5, 2))
    assert not a.flags.c_contiguous
    np.testing.assert_array_equal(row_product(a, b), np.matmul(a, b))
    out = np.empty((*a.shape[:-1], 2))
    assert row_product(a, b, out=out) is out
    np.testing.assert_array_equal(out, np.matmul(a, b))


def test_rows_into_a_buffer_and_empty_stacks():
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    out = np.empty((2, 3, 5))
    assert row_product(a, b, out=out) is out
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-14)
    strided_out = np.empty((2, 3, 10))[..., ::2]  # not C-contiguous: NumPy's stack product
    assert row_product(a, b, out=strided_out) is strided_out
    np.testing.assert_array_equal(strided_out, np.matmul(a, b))
    assert row_product(np.zeros((2, 0, 4)), b).shape == (2, 0, 5)
    np.testing.assert_array_equal(row_product(np.zeros((2, 3, 0)), np.zeros((0, 5))),
                                  np.zeros((2, 3, 5)))


def test_other_products_stay_matmuls():
    matrix, stack = rng.standard_normal((6, 6)), rng.standard_normal((2, 6, 6))
    assert optimized_ops(lambda a, b: a @ b, matrix, matrix) == ["matmul"]
    assert optimized_ops(lambda a, b: a @ b, stack, stack) == ["matmul"]
    assert optimized_ops(lambda a, b: a @ b, matrix, stack) == ["matmul"]
    assert optimized_ops(lambda a, b: a @ b, stack[:1], matrix) == ["matmul"]  # one matrix
