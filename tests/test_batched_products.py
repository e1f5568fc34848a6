"""vmap of a matrix product with a matrix the same for every example is one matrix product
of the batch (not one per example), and agrees with a loop over the examples."""
import numpy as np
import pytest

import autotrace

B = 5


def values(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)


def matmul_input_shapes(graph) -> list:
    return [tuple(tuple(value.aval.shape) for value in equation.inputs)
            for equation in graph.equations if equation.primitive.name == "matmul"]


def looped(f, in_axes, args):
    size = next(np.shape(a)[0] for a, axis in zip(args, in_axes) if axis == 0)
    return np.stack([f(*[a[i] if axis == 0 else a for a, axis in zip(args, in_axes)])
                     for i in range(size)])


# (name, function, in_axes, arguments, the shapes of the one matmul of the batched graph)
SHARED_MATRIX = [
    ("vector times matrix", lambda x, w: x @ w, (0, None), [values(B, 3), values(3, 4)],
     [((B, 3), (3, 4))]),
    ("matrix times matrix", lambda x, w: x @ w, (0, None), [values(B, 2, 3), values(3, 4)],
     [((B * 2, 3), (3, 4))]),
    ("stack times matrix", lambda x, w: x @ w, (0, None), [values(B, 2, 6, 3), values(3, 4)],
     [((B * 12, 3), (3, 4))]),
    ("matrix times vector", lambda w, x: w @ x, (None, 0), [values(4, 3), values(B, 3)],
     [((B, 3), (3, 4))]),
    # np.dot, and np.tensordot over one axis, are np.matmul where b has at most two axes
    ("dot of vector and matrix", np.dot, (0, None), [values(B, 3), values(3, 4)],
     [((B, 3), (3, 4))]),
    ("dot of stack and matrix", np.dot, (0, None), [values(B, 2, 3), values(3, 4)],
     [((B * 2, 3), (3, 4))]),
    ("dot of matrix and vector", np.dot, (None, 0), [values(4, 3), values(B, 3)],
     [((B, 3), (3, 4))]),
    ("tensordot over one axis", lambda x, w: np.tensordot(x, w, axes=1), (0, None),
     [values(B, 2, 3), values(3, 4)], [((B * 2, 3), (3, 4))]),
    ("tensordot over the last axis", lambda w, x: np.tensordot(w, x, axes=([-1], [0])),
     (None, 0), [values(4, 3), values(B, 3)], [((B, 3), (3, 4))]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, f, in_axes, args, shapes", SHARED_MATRIX,
                         ids=[case[0] for case in SHARED_MATRIX])
def test_a_shared_matrix_makes_one_product_of_the_batch(name, f, in_axes, args, shapes, dtype):
    args = [a.astype(dtype) for a in args]
    batched = autotrace.vmap(f, in_axes=in_axes)
    got = batched(*args)
    expected = looped(f, in_axes, args)
    assert got.shape == expected.shape and got.dtype == dtype
    tolerance = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    assert matmul_input_shapes(batched.graph(*args)) == shapes


def test_a_matrix_the_function_holds_is_shared_too():
    held = values(4, 3)

    def f(x):
        return held @ x + x[:, None].T @ held.T

    x = values(B, 3)
    batched = autotrace.vmap(f)
    np.testing.assert_allclose(batched(x), looped(f, (0,), [x]), rtol=1e-12, atol=1e-12)
    assert matmul_input_shapes(batched.graph(x)) == [((B, 3), (3, 4)), ((B, 3), (3, 4))]


# Products whose matrices differ between examples keep one product per example.
OTHERS = [
    ("matrices of the batch times a vector", lambda w, x: w @ x, (0, None),
     [values(B, 4, 3), values(3)]),
    ("shared vector times matrices", lambda x, w: x @ w, (None, 0), [values(3), values(B, 3, 4)]),
    ("shared matrix times matrices", lambda w, x: w @ x, (None, 0),
     [values(4, 3), values(B, 3, 2)]),
    ("stack of matrices times vectors", lambda w, x: w @ x, (None, 0),
     [values(2, 4, 3), values(B, 3)]),
    ("both batched", lambda x, w: x @ w, (0, 0), [values(B, 3), values(B, 3, 4)]),
    ("dot of vectors", np.dot, (0, None), [values(B, 3), values(3)]),
    ("dot of a stack and matrices", np.dot, (None, 0), [values(2, 4, 3), values(B, 3, 5)]),
    ("dot with a stack second", np.dot, (0, None), [values(B, 4, 3), values(2, 3, 5)]),
    ("dot of a vector and matrices", np.dot, (None, 0), [values(3), values(B, 3, 5)]),
    ("dot, both batched", np.dot, (0, 0), [values(B, 4, 3), values(B, 3, 2)]),
    ("dot with a scalar", np.dot, (0, None), [values(B, 3), np.float64(2.5)]),
    ("tensordot over two axes", lambda x, w: np.tensordot(x, w, axes=2), (0, None),
     [values(B, 2, 3), values(2, 3, 4)]),
    ("tensordot of a vector and matrices", lambda v, x: np.tensordot(v, x, axes=1),
     (None, 0), [values(3), values(B, 3, 4)]),
]


@pytest.mark.parametrize("name, f, in_axes, args", OTHERS, ids=[case[0] for case in OTHERS])
def test_other_products_agree_with_a_loop(name, f, in_axes, args):
    got = autotrace.vmap(f, in_axes=in_axes)(*args)
    np.testing.assert_allclose(got, looped(f, in_axes, args), rtol=1e-12, atol=1e-12)


def test_per_example_gradients_and_jacrev_multiply_whole_batches():
    def loss(w1, w2, x):
        return np.sum(np.tanh(np.tanh(x @ w1) @ w2) ** 2)

    w1, w2, x = values(6, 4), values(4, 3), values(B, 6)
    per_example = autotrace.vmap(autotrace.grad(loss, wrt=(0, 1)), in_axes=(None, None, 0))
    got = per_example(w1, w2, x)
    one = autotrace.grad(loss, wrt=(0, 1))
    for index in range(2):
        expected = np.stack([one(w1, w2, example)[index] for example in x])
        np.testing.assert_allclose(got[index], expected, rtol=1e-12, atol=1e-12)
    # forward: x @ w1, h @ w2; backward: dy @ w2.T (the weights' gradients are outer products)
    assert matmul_input_shapes(per_example.graph(w1, w2, x)) == [
        ((B, 6), (6, 4)), ((B, 4), (4, 3)), ((B, 3), (3, 4))]

    def layers(w1, w2, v):
        return np.tanh(w2 @ np.tanh(w1 @ v))

    w1, w2, v = values(5, 4), values(3, 5), values(4)
    np.testing.assert_allclose(autotrace.jacrev(layers, wrt=2)(w1, w2, v),
                               autotrace.jacobian(layers, wrt=2)(w1, w2, v),
                               rtol=1e-12, atol=1e-12)
