"""np.linalg.multi_dot, matrix_power and lstsq in user functions, in every mode.

tests/rule_table.py checks their rules by themselves, to second order; here whole functions go
through grad, value_and_grad, vjp, the traced gradient, forward mode and the gradient of a
directional derivative (check_every_mode), and through vmap(grad). Traced, multi_dot makes
NumPy's products in NumPy's order and lstsq is NumPy's, to the bit. lstsq is differentiated and
traced for a of full rank: another rank is refused where it is known, when lstsq has run.
"""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.multi_dot import chain_splits
from tests.numeric import central_difference, check_every_mode

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 6))
C = RNG.standard_normal((6, 2))
D = RNG.standard_normal((2, 5))
ROW = RNG.standard_normal(3)
COLUMN = RNG.standard_normal(5)
SQUARE = np.eye(3) + 0.3 * RNG.standard_normal((3, 3))
TALL = RNG.standard_normal((6, 3))
WIDE = RNG.standard_normal((2, 5))


# --- multi_dot --------------------------------------------------------------------------------

def chain_with_ends(b):
    return np.sum(np.sin(np.linalg.multi_dot([ROW, A, np.reshape(b, (4, 6)), C, D, COLUMN])))


def chain_of_matrices(b):
    return np.sum(np.tanh(np.linalg.multi_dot([A, np.reshape(b, (4, 6)), C])))


def chain_of_two(b):
    return np.sum(np.linalg.multi_dot([np.reshape(b, (4, 6)), C]) ** 2)


@pytest.mark.parametrize("f", [chain_with_ends, chain_of_matrices, chain_of_two])
def test_multi_dot_every_mode(f):
    check_every_mode(f, B.ravel())


def test_multi_dot_gradients_of_every_array():
    def f(row, a, b, c, d, column):
        return np.sin(np.linalg.multi_dot([row, a, b, c, d, column]))
    arrays = (ROW, A, B, C, D, COLUMN)
    gradients = autotrace.grad(f, wrt=tuple(range(6)))(*arrays)
    traced = autotrace.function(autotrace.grad(f, wrt=tuple(range(6))))(*arrays)
    for k, array in enumerate(arrays):
        def along(x, k=k):
            return f(*arrays[:k], x, *arrays[k + 1:])
        expected = central_difference(along, array)
        np.testing.assert_allclose(gradients[k], expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(traced[k], expected, rtol=1e-6, atol=1e-8)


def test_multi_dot_vmap_of_grad():
    def f(b):
        return np.sum(np.linalg.multi_dot([ROW, A, b, C]) ** 2)
    batch = RNG.standard_normal((3, 4, 6))
    expected = [central_difference(f, b) for b in batch]
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch), expected, rtol=1e-6)


@pytest.mark.parametrize("shapes", [
    [(40, 30), (30, 2), (2, 50)],  # (AB)C
    [(2, 30), (30, 40), (40, 50)],  # (AB)C
    [(50, 40), (40, 30), (30, 2)],  # A(BC)
    [(30,), (30, 20), (20, 40), (40, 3), (3, 60)],
    [(10, 30), (30, 5), (5, 60), (60, 2), (2, 70), (70,)],
    [(7,), (7, 50), (50,)],
], ids=["left", "left-wide", "right", "row-first", "column-last", "vectors"])
def test_traced_multi_dot_is_numpys_to_the_bit(shapes):
    rng = np.random.default_rng(len(shapes))
    arrays = [rng.standard_normal(shape) for shape in shapes]
    expected = np.linalg.multi_dot(arrays)
    traced = autotrace.function(lambda *xs: np.linalg.multi_dot(list(xs)))(*arrays)
    assert np.shape(traced) == np.shape(expected)
    assert np.array_equal(traced, expected)


def test_chain_order_is_numpys():
    """The split of each sub-chain, against NumPy's own (private) program where it has one."""
    order = pytest.importorskip("numpy.linalg._linalg")._multi_dot_matrix_chain_order
    rng = np.random.default_rng(3)
    for _ in range(50):
        sizes = [int(size) for size in rng.integers(1, 40, rng.integers(5, 9))]
        splits = order([np.empty((m, n)) for m, n in zip(sizes, sizes[1:])])
        ours = chain_splits(sizes)
        assert all(ours[i, j] == splits[i, j] for (i, j) in ours)


def test_multi_dot_out():
    """out= is the write it is, as for NumPy's other functions."""
    def f(b):
        out = np.zeros((3, 2))
        result = np.linalg.multi_dot([A, np.reshape(b, (4, 6)), C], out=out)
        return np.sum(out ** 2) + np.sum(np.sin(result))
    assert autotrace.function(f)(B.ravel()) == f(B.ravel())
    check_every_mode(f, B.ravel())


# --- matrix_power -----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power_every_mode(n):
    def f(x):
        return np.sum(np.sin(np.linalg.matrix_power(np.reshape(x, (3, 3)), n)))
    check_every_mode(f, SQUARE.ravel())


def test_matrix_power_of_a_stack_vmap_of_grad():
    def f(x):
        return np.sum(np.linalg.matrix_power(x, 3) ** 2)
    batch = np.eye(3) + 0.3 * RNG.standard_normal((2, 4, 3, 3))
    expected = [central_difference(f, x) for x in batch]
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch), expected, rtol=1e-6)


# --- lstsq ------------------------------------------------------------------------------------

def fit(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(np.sin(x)) + 0.5 * np.sum(residuals) + 0.25 * np.sum(s ** 2)


@pytest.mark.parametrize("a, b_shape", [(TALL, (6,)), (TALL, (6, 2)), (WIDE, (2,)),
                                        (WIDE, (2, 3)), (SQUARE, (3,))],
                         ids=["tall-vector", "tall-matrix", "wide-vector", "wide-matrix",
                              "square"])
def test_lstsq_every_mode(a, b_shape):
    b = np.random.default_rng(1).standard_normal(b_shape)
    check_every_mode(lambda x: fit(np.reshape(x, a.shape), b), a.ravel())
    check_every_mode(lambda x: fit(a, np.reshape(x, b_shape)), b.ravel())


def test_lstsq_vmap_of_grad():
    def f(b):
        return fit(TALL, b)
    batch = RNG.standard_normal((3, 6))
    expected = [central_difference(f, b) for b in batch]
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch), expected, rtol=1e-6)


@pytest.mark.parametrize("a, b_shape", [(TALL, (6,)), (TALL, (6, 2)), (WIDE, (2, 3))])
def test_traced_lstsq_is_numpys(a, b_shape):
    b = np.random.default_rng(2).standard_normal(b_shape)
    traced = autotrace.function(lambda a, b: np.linalg.lstsq(a, b))(a, b)
    for got, expected in zip(traced, np.linalg.lstsq(a, b)):
        assert np.shape(got) == np.shape(expected) and np.asarray(got).dtype == expected.dtype
        assert np.array_equal(got, expected)


def rank_deficient():
    a = TALL.copy()
    a[:, 2] = a[:, 1]
    return a


def test_lstsq_of_a_rank_deficient_matrix_is_refused():
    b = np.ones(6)
    message = r"np.linalg.lstsq\(a, b\) for a of full rank only, but this a, of shape \(6, 3\), " \
              r"has rank 2 < 3"
    with pytest.raises(np.linalg.LinAlgError, match="differentiates " + message):
        autotrace.grad(fit)(rank_deficient(), b)
    with pytest.raises(np.linalg.LinAlgError, match="differentiates " + message):
        autotrace.forward(fit)(rank_deficient(), b)
    with pytest.raises(np.linalg.LinAlgError, match="traces " + message):
        autotrace.function(fit)(rank_deficient(), b)
    with pytest.raises(np.linalg.LinAlgError, match="traces " + message):
        autotrace.function(autotrace.grad(fit))(rank_deficient(), b)


def test_lstsq_of_complex_values_is_refused():
    def f(a, b):
        return np.sum(np.linalg.lstsq(a, b)[0])
    complex_a = TALL * (1.0 + 0.5j)
    with pytest.raises(NotImplementedError, match="numpy.linalg.lstsq of complex values"):
        autotrace.grad(f)(complex_a, np.ones(6), dy=1.0 + 0.0j)
    with pytest.raises(NotImplementedError, match="numpy.linalg.lstsq of complex values"):
        autotrace.forward(f)(complex_a, np.ones(6))


def test_lstsq_tangents_have_the_shapes_of_its_results():
    """With a held fixed, the tangents of s (and of the other results) keep their shapes: a
    zero tangent of a is no array of s's shape."""
    b = np.ones(6)
    for wrt in (0, 1):
        values, tangents = autotrace.forward(np.linalg.lstsq, wrt=wrt)(TALL, b)
        for value, tangent in zip(values[:2] + values[3:], tangents[:2] + tangents[3:]):
            assert np.shape(tangent) == np.shape(value)
