"""np.pad in the modes that pad with a statistic or an odd reflection, through every transform;
a second derivative through a loop whose saved index builds a constant with np.block; np.einsum's
casting= checked on its operands, as NumPy checks it; np.linalg.eigvals and eig of a general
real matrix."""
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

RNG = np.random.default_rng(9)
MATRIX = RNG.standard_normal((3, 4))
WEIGHTS = RNG.standard_normal((6, 8))


def pad_maximum(x):
    return np.sum(np.tanh(np.pad(x, ((2, 1), (1, 3)), "maximum")) * WEIGHTS)


def pad_minimum(x):
    return np.sum(np.tanh(np.pad(x, ((2, 1), (1, 3)), "minimum", stat_length=((1, 2), (2, 3))))
                  * WEIGHTS)


def pad_median(x):
    return np.sum(np.tanh(np.pad(x, ((2, 1), (1, 3)), "median", stat_length=2)) * WEIGHTS)


def pad_mean(x):
    return np.sum(np.tanh(np.pad(x, ((2, 1), (1, 3)), "mean", stat_length=((2, 1), (3, 2))))
                  * WEIGHTS)


def pad_odd_reflection(x):
    return np.sum(np.tanh(np.pad(x, ((2, 1), (1, 3)), "reflect", reflect_type="odd")) * WEIGHTS)


@pytest.mark.parametrize("f", [pad_maximum, pad_minimum, pad_median, pad_mean,
                               pad_odd_reflection], ids=lambda f: f.__name__)
def test_pad_modes_through_every_transform(f):
    """Each axis padded from the array padded along the axes before it: the corners too."""
    expected = central_difference(f, MATRIX)
    np.testing.assert_allclose(autotrace.grad(f)(MATRIX), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(MATRIX), expected,
                               rtol=1e-6, atol=1e-8)
    direction = RNG.standard_normal(MATRIX.shape)
    assert autotrace.jvp(f, (MATRIX,), (direction,))[1] == pytest.approx(
        np.sum(expected * direction), rel=1e-6)
    hessian = autotrace.hessian(f)(MATRIX).reshape(MATRIX.size, MATRIX.size)
    np.testing.assert_allclose(hessian @ direction.ravel(), central_difference(
        lambda x: np.sum(autotrace.grad(f)(x) * direction), MATRIX).ravel(), rtol=1e-5,
        atol=1e-6)
    batched = autotrace.vmap(autotrace.grad(f))(np.stack([MATRIX, -MATRIX]))
    np.testing.assert_allclose(batched[1], central_difference(f, -MATRIX), rtol=1e-6,
                               atol=1e-8)
    single = MATRIX.astype(np.float32)
    assert autotrace.grad(f)(single).dtype == np.float32
    assert autotrace.function(autotrace.grad(f))(single).dtype == np.float32
    padded = autotrace.function(lambda x: np.pad(x, 2, "median", stat_length=3))(single)
    assert padded.dtype == np.float32
    np.testing.assert_array_equal(padded, np.pad(single, 2, "median", stat_length=3))


BLOCKS = np.eye(2), np.ones((2, 2)), np.arange(4.0).reshape(2, 2), 2.0 * np.eye(2)


def blocks_in_a_loop(x):
    a, b, c, e = BLOCKS
    total = 0.0
    for k in range(3):
        m = np.block([[a, b * k], [c, e]])
        total = total + np.sum(np.tanh(m @ x)) * x[k]
    return total


def test_a_second_derivative_through_a_loop_whose_index_builds_a_constant():
    """The loop index is saved on the stack that the loop's overwritten arrays are saved on;
    restored from it, it stays an integer without a tangent, and np.block of constants needs
    no derivative."""
    x = np.array([0.5, -1.0, 2.0, 0.3])
    expected = np.stack([central_difference(lambda p: autotrace.grad(blocks_in_a_loop)(p)[i], x)
                         for i in range(4)])
    np.testing.assert_allclose(autotrace.hessian(blocks_in_a_loop)(x), expected, rtol=1e-5,
                               atol=1e-6)

    def directional(p):
        return np.sum(autotrace.grad(blocks_in_a_loop)(p) * x)
    np.testing.assert_allclose(autotrace.grad(directional)(x), expected @ x, rtol=1e-5,
                               atol=1e-6)


OPERANDS = {"float32": np.ones((3, 2), np.float32), "int64": np.ones((3, 2), np.int64)}


def einsum_no_cast(x):
    return np.sum(np.einsum("ij,jk->ik", x, OPERANDS["float32"], casting="no") * x[:, :2])


def einsum_equiv_into_out(x):
    out = np.zeros((2, 2))
    np.einsum("ij,jk->ik", x, OPERANDS["int64"], out=out, casting="equiv")
    return np.sum(out * x[:, :2])


@pytest.mark.parametrize("f, dtype, rule", [(einsum_no_cast, "float32", "no"),
                                            (einsum_equiv_into_out, "int64", "equiv")],
                         ids=["no", "equiv-out"])
def test_einsum_refuses_operands_its_casting_does_not_cast(f, dtype, rule):
    x = np.arange(6.0).reshape(2, 3)
    message = re.escape(f"Iterator operand 1 dtype could not be cast from dtype('{dtype}') to "
                        f"dtype('float64') according to the rule '{rule}'")
    with pytest.raises(TypeError, match=message):
        f(x)
    for run in (lambda: autotrace.grad(f)(x), lambda: autotrace.jvp(f, (x,), (x,)),
                lambda: autotrace.function(f)(x),
                lambda: autotrace.function(autotrace.grad(f))(x)):
        with pytest.raises(TypeError, match=message):
            run()


def einsum_safe(x):
    return np.sum(np.einsum("ij,jk->ik", x, OPERANDS["float32"], casting="safe") ** 2)


def test_einsum_takes_a_casting_its_operands_pass():
    x = np.arange(6.0).reshape(2, 3) / 7.0
    expected = central_difference(einsum_safe, x)
    np.testing.assert_allclose(autotrace.grad(einsum_safe)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(einsum_safe))(x), expected,
                               rtol=1e-6)
    assert autotrace.function(einsum_safe)(x) == pytest.approx(einsum_safe(x))
