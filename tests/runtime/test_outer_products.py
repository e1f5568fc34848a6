"""Outer products (runtime/backends/outer_products.py): on the CPU backends a matmul whose
contracted length is 1 runs as np.einsum, or on the compiled backend, for two matrices of one
dtype, as its own loop (runtime/backends/llvm/cpu_outer.py), giving NumPy's matmul bit for bit
(special values included), and every other product stays a matmul."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.outer_products import OuterProducts, is_outer_product
from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.execution.executor import compile
from autotrace.runtime.primitives.outer_matmul import MIN_ELEMENTS, matmul_of_one_term
from autotrace.runtime.tracing.tracer import trace

llvm_backend = backend_named("llvm")
compiled = pytest.mark.skipif(llvm_backend.available() is not None,
                              reason=f"no compiled backend here: {llvm_backend.available()}")
OUTER = ("matmul_outer", "outer_cpu")

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -3.0, 1e-30, -1e-30, 1e-200,
           -1e-200, 5e-324, -5e-324, 1.5e-45, -1.5e-45, 3e38, -3e38, 1e300, 0.1, -0.7]


def bits(array):
    array = np.ascontiguousarray(array)
    return array.view(f"u{array.itemsize}")


def run_on(backend_name, function, *args):
    """`function` traced, optimized for the backend and run: (results, optimized graph)."""
    graph, structure = trace(function, args)
    compiled = compile(graph, backend_named(backend_name))
    return compiled.run(*args), compiled.graph


def matmuls(graph):
    return [equation for equation in graph.equations if equation.primitive.name == "matmul"]


@pytest.mark.parametrize("backend_name", ["numpy", "llvm"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [
    ((44, 1), (1, 44)),             # a column times a row
    ((1, 1), (1, 1100)),            # a number times a row
    ((1100, 1), (1, 1)),            # a column times a number
    ((3, 22, 1), (1, 22)),          # batched, the right operand broadcast
    ((2, 1, 22, 1), (3, 1, 22)),    # batched, both broadcast
])
def test_a_product_of_one_term_is_numpys_matmul_bit_for_bit(backend_name, dtype, shapes):
    with np.errstate(all="ignore"):
        values = np.array(SPECIAL).astype(dtype)  # in float32 some overflow, some are 0
        a = np.resize(values, shapes[0])
        b = np.resize(values[::-1], shapes[1])
        expected = np.matmul(a, b)
        (result,), graph = run_on(backend_name, lambda x, y: x @ y, a, b)
    assert not matmuls(graph)
    # the compiled backend's own loop for two matrices, einsum for batched products
    own_loop = backend_name == "llvm" and len(shapes[0]) == len(shapes[1]) == 2
    assert [eq.primitive.name for eq in graph.equations] == [
        "outer_cpu" if own_loop else "matmul_outer"]
    assert result.dtype == expected.dtype and result.shape == expected.shape
    assert np.array_equal(bits(result), bits(expected))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_negative_zero_products_are_positive_zeros_as_numpys(dtype):
    a = np.array([[-0.0], [1.0], [-1e-30]], dtype=dtype)
    b = np.array([[1.0, -0.0, 1e-30]], dtype=dtype)
    (result,), _ = run_on("llvm", lambda x, y: x @ y, a, b)
    assert not np.signbit(result[result == 0]).any()  # NumPy's matmul adds +0.0 to each
    assert np.array_equal(bits(result), bits(np.matmul(a, b)))


@pytest.mark.parametrize("function, args", [
    (lambda x, y: x @ y, (np.ones((40, 2)), np.ones((2, 50)))),               # two terms
    (lambda x, y: x @ y, (np.ones((1, 1)), np.ones((1, 1)))),                 # NumPy's dot
    (lambda x, y: x @ y, (np.ones((20, 1)), np.ones((1, 50)))),               # small
    (lambda x, y: x @ y, (np.ones(1), np.ones((1, 2000)))),                   # a vector
    (lambda x, y: x @ y, (np.ones((40, 1), np.int64), np.ones((1, 50), np.int64))),
    (lambda x, y: x @ y, (np.ones((40, 1), np.complex128), np.ones((1, 50)))),
])
def test_other_products_stay_matmuls(function, args):
    (result,), graph = run_on("llvm", function, *args)
    assert len(matmuls(graph)) == 1
    np.testing.assert_array_equal(result, function(*args))


def test_the_gpu_backends_keep_their_matmul():
    graph, _ = trace(lambda x, y: x @ y, (np.ones((40, 1)), np.ones((1, 50))))
    assert any(is_outer_product(equation) for equation in graph.equations)
    assert not any(isinstance(each, OuterProducts) for each in backend_named("cupy").passes())


def mlp_loss(W1, b1, W2, b2, x, y):
    hidden = np.tanh(x @ W1 + b1)
    return np.mean((hidden @ W2 + b2 - y) ** 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_batch_1_weight_gradients_are_products_of_one_term(dtype):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(shape).astype(dtype)
            for shape in [(64, 32), (32,), (32, 4), (4,), (1, 64), (1, 4)]]
    gradient = autotrace.grad(mlp_loss, wrt=(0, 1, 2, 3))
    traced = autotrace.function(gradient)
    graph = traced.graph(*args)
    # (64, 1) @ (1, 32) is rewritten, (32, 1) @ (1, 4) too small to be
    assert sum(eq.primitive.name in OUTER for eq in graph.equations) == 1
    assert all(equation.outputs[0].aval.size < MIN_ELEMENTS for equation in matmuls(graph)
               if equation.inputs[0].aval.shape[-1] == 1)
    assert matmuls(graph)  # the batch-1 forward products and their input gradients stay
    for result, expected in zip(traced(*args), gradient(*args)):
        assert result.dtype == dtype
        assert np.array_equal(bits(result), bits(expected))


@compiled
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, n", [(1, 1), (3, 1), (2, 7), (5, 15), (4, 16), (3, 17), (2, 33),
                                  (1, 100)])
def test_the_compiled_loop_gives_matmuls_bits_at_every_row_length(dtype, m, n):
    """Rows of every length around the loop's vectors of two registers (8 to 32 lanes) and
    their tails, special values in both operands."""
    from autotrace.runtime.backends.llvm.cpu_outer import outer_product
    with np.errstate(all="ignore"):
        values = np.array(SPECIAL).astype(dtype)
        a = np.resize(values, (m, 1))
        b = np.resize(values[::-1], (1, n))
        expected = np.matmul(a, b)
    result = outer_product(a, b)
    assert result.dtype == dtype and result.flags.c_contiguous
    assert np.array_equal(bits(result), bits(expected))


@compiled
def test_the_compiled_loop_reads_operands_of_any_layout_and_writes_into_out():
    from autotrace.runtime.backends.llvm.cpu_outer import outer_product
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((30, 40))
    column, row = matrix[::3, 5:6], matrix[7:8, ::-2]  # strided, reversed
    out = np.full((10, 20), np.nan)
    assert outer_product(column, row, out) is out
    assert np.array_equal(bits(out), bits(np.matmul(column, row)))
    assert np.array_equal(bits(outer_product(column.T.T, np.asfortranarray(row))),
                          bits(np.matmul(column, row)))


@compiled
def test_the_compiled_loop_refuses_what_it_was_not_made_for():
    from autotrace.runtime.backends.llvm.cpu_outer import outer_product
    with pytest.raises(TypeError, match=r"outer_product takes a column and a row of one float "
                                        r"dtype, not float32\[3, 1\] and float64\[1, 4\]"):
        outer_product(np.ones((3, 1), np.float32), np.ones((1, 4)))
    with pytest.raises(ValueError, match=r"outer_product writes into a C-contiguous "
                                         r"float64\[3, 4\], not float64\[4, 3\]"):
        outer_product(np.ones((3, 1)), np.ones((1, 4)), np.empty((4, 3)))


@compiled
def test_a_product_that_dies_in_the_call_is_written_into_a_kept_buffer():
    """The traced function keeps the product's buffer from call to call
    (runtime/execution/call_buffers.py): each call gives the product of its own inputs."""
    def weighted(x, g, W):
        return np.tanh(x.T @ g) @ W

    rng = np.random.default_rng(2)
    W = rng.standard_normal((32, 8))
    traced = autotrace.function(weighted)
    for _ in range(3):
        x, g = rng.standard_normal((1, 64)), rng.standard_normal((1, 32))
        assert np.array_equal(bits(traced(x, g, W)), bits(weighted(x, g, W)))
    source = traced.source(x, g, W)
    assert "outer_product(" in source and "out=_kept" in source, source


# The eager derivatives' matmul and dot adjoints (runtime/derivatives/adjoint_products.py) call
# matmul_of_one_term, which computes a column times a row as the traced backends do.

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((44, 1), (1, 44)), ((1100, 1), (1, 1)), ((1, 1), (1, 1100)),
                                    ((44, 3), (3, 44)), ((1, 1), (1, 1)), ((4, 1), (1, 4))])
def test_matmul_of_one_term_is_numpys_matmul_bit_for_bit(dtype, shapes):
    with np.errstate(all="ignore"):
        values = np.array(SPECIAL).astype(dtype)
        a = np.resize(values, shapes[0])
        b = np.resize(values[::-1], shapes[1])
        expected = np.matmul(a, b)
        result = matmul_of_one_term(a, b)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_array_equal(bits(result), bits(expected))


def dense_loss(W, b, x):
    return np.sum(np.tanh(x @ W + b) ** 2)


def dense_loss_with_dot(W, x):
    return np.sum(np.dot(x, W) ** 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_weight_gradient_of_a_layer_at_batch_1_is_the_outer_product_numpys_matmul_gives(
        dtype):
    rng = np.random.default_rng(3)
    W, b, x = (rng.standard_normal(shape).astype(dtype) for shape in ((70, 40), (40,), (1, 70)))
    with np.errstate(all="ignore"):
        x[0, :len(SPECIAL)] = np.array(SPECIAL).astype(dtype)  # -0.0, inf, NaN among them
    with np.errstate(all="ignore"):
        grad_W, grad_b = autotrace.grad(dense_loss, wrt=(0, 1))(W, b, x)
        y = np.tanh(x @ W + b)
        g = 2 * y * (1 - y * y)
        expected = np.matmul(x.T, g)
    assert grad_W.dtype == dtype
    np.testing.assert_array_equal(bits(grad_W), bits(expected))
    np.testing.assert_array_equal(grad_b, np.sum(g, axis=0))
    W_dot = rng.standard_normal((70, 40)).astype(dtype)
    x_dot = rng.standard_normal((1, 70)).astype(dtype)
    expected = np.matmul(x_dot.T, 2 * np.dot(x_dot, W_dot))
    got = autotrace.grad(dense_loss_with_dot)(W_dot, x_dot)
    np.testing.assert_array_equal(bits(got), bits(expected))


def one_output_loss(x, w):
    return np.sum((x @ w) ** 2)


def test_the_input_gradient_of_a_layer_of_one_output_is_numpys_matmul():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((64, 30)), rng.standard_normal((30, 1))
    expected = np.matmul(2 * (x @ w), w.T)
    np.testing.assert_array_equal(bits(autotrace.grad(one_output_loss)(x, w)), bits(expected))
