"""einsum's out= honours casting=; a ufunc's outer with where= is refused as such; a number of a
subclass of float or an IntEnum in a product is a number."""
import enum

import numpy as np
import pytest

import autotrace

X = np.array([[0.3, -1.2, 0.8], [1.5, 2.7, -0.4]])


def einsum_unsafe(x):
    o = np.zeros(3, dtype=np.int64)
    np.einsum("ij->j", x * 10, out=o, casting="unsafe")
    return o


def einsum_same_kind(x):
    o = np.zeros(3, dtype=np.float32)
    np.einsum("ij->j", x, out=o, casting="same_kind")
    return o


@pytest.mark.parametrize("f", [einsum_unsafe, einsum_same_kind])
def test_einsum_out_takes_casting(f):
    want = f(X)
    got = autotrace.function(f)(X)
    assert got.dtype == want.dtype and np.array_equal(got, want)

    def loss(x):
        return np.sum(f(x) * x[0])
    # out's values carry gradient where out is a float array, none where it holds integers
    expected = np.zeros_like(X)
    expected[0] = want
    if want.dtype.kind == "f":
        expected[1] = X[0]
        expected[0] += X[0]
    for mode in (autotrace.grad(loss), autotrace.function(autotrace.grad(loss))):
        assert np.allclose(mode(X), expected, atol=1e-6)


def test_einsum_out_refuses_unsafe_cast_by_default():
    def f(x):
        o = np.zeros(3, dtype=np.float32)
        np.einsum("ij->j", x, out=o)
        return o
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        f(X)
    with pytest.raises(TypeError, match="could not be cast from dtype\\('float64'\\) to "
                                        "dtype\\('float32'\\), the out operand's dtype, "
                                        "according to the rule 'safe'"):
        autotrace.function(f)(X)


def test_outer_with_where_is_refused_as_outer():
    def f(x):
        o = np.zeros((3, 3))
        np.add.outer(x, x, out=o, where=np.eye(3, dtype=bool))
        return o.sum()
    message = "numpy.add.outer with where=: compute it without where= and select"
    with pytest.raises(Exception, match=f"autotrace cannot trace {message}"):
        autotrace.function(f)(X[0])
    with pytest.raises(Exception, match=f"autotrace cannot differentiate {message}"):
        autotrace.grad(f)(X[0])


class Scale(float):
    pass


class Two(enum.IntEnum):
    TWO = 2


@pytest.mark.parametrize("product", [np.dot, np.kron, np.multiply])
@pytest.mark.parametrize("number", [Scale(2.5), Two.TWO])
def test_product_with_a_number_of_a_subclass(product, number):
    x = X[0]

    def f(x):
        return np.sum(product(x, number)) ** 2
    expected = 2 * np.sum(x) * float(number) ** 2  # d/dx (c sum x)^2
    for mode in (autotrace.grad(f), autotrace.function(autotrace.grad(f))):
        assert np.allclose(mode(x), np.full(3, expected))
    assert np.allclose(autotrace.hessian(f)(x), np.full((3, 3), 2 * float(number) ** 2))


def repeated_item(x):
    a = np.zeros(4)
    a[:] = [x[0]] * 4
    return np.sum(a * x)


def concatenated_items(x):
    a = np.zeros(4)
    a[:] = [x[0], x[1]] + [x[2]] * 2
    return np.sum(a * np.arange(4) * x)


@pytest.mark.parametrize("f, hessian", [
    (repeated_item, [[2, 1, 1, 1], [1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]]),
    # x0^2 * 0 + x1 * x1 + 2 x2 x2 + 3 x2 x3
    (concatenated_items, [[0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 4, 3], [0, 0, 3, 0]])])
def test_second_derivative_of_a_list_written_into_an_array(f, hessian):
    x = np.array([0.3, -1.2, 0.8, 1.5])
    for second in (autotrace.jacrev(autotrace.grad(f)),
                   autotrace.function(autotrace.jacrev(autotrace.grad(f)))):
        assert np.allclose(second(x), hessian)
