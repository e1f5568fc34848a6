"""np.meshgrid: traced (of reshape, broadcast and copy ops) and differentiated in every mode,
dense and sparse, in both indexings, against NumPy and central differences."""
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

Y = np.array([4.0, 5.0])
Z = np.array([[0.5, -1.0], [2.0, 0.1]])  # (flattened by meshgrid, as NumPy does)


def grids(x, indexing, sparse):
    return np.meshgrid(x, Y ** 2, Z, indexing=indexing, sparse=sparse)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_in_every_mode(indexing, sparse):
    def f(x):
        X, Y2, W = grids(x, indexing, sparse)
        return np.sum(np.sin(X * Y2) * W + X ** 2)
    check_every_mode(f, np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_traced_meshgrid_is_numpys(indexing, sparse):
    x = np.array([1.0, 2.0, 3.0])
    traced = autotrace.function(lambda x: grids(x, indexing, sparse))(x)
    expected = grids(x, indexing, sparse)
    assert type(traced) is type(expected) and len(traced) == 3
    for got, want in zip(traced, expected):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    copies = autotrace.function(lambda x: np.meshgrid(x, x))(x)
    copies[0][0, 0] = 9.0  # each grid its own array, as NumPy's copies
    assert copies[1][0, 0] == 1.0 and x[0] == 1.0


def test_meshgrid_of_one_and_of_integer_arguments():
    x = np.array([1.0, 2.0])
    (single,) = autotrace.function(lambda x: np.meshgrid(x * 2))(x)
    np.testing.assert_array_equal(single, [2.0, 4.0])
    counts = np.arange(3)
    np.testing.assert_allclose(
        autotrace.grad(lambda x: np.sum(np.prod(np.meshgrid(x, counts), axis=0)))(x),
        [3.0, 3.0])


def test_vmap_of_meshgrid_and_of_its_gradient():
    batch = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])

    def f(x):
        X, Y2 = np.meshgrid(x, Y)
        return np.sum(X ** 2 * Y2)
    np.testing.assert_array_equal(autotrace.vmap(lambda x: np.meshgrid(x, Y)[0])(batch),
                                  [np.meshgrid(x, Y)[0] for x in batch])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch),
                               [2 * x * np.sum(Y) for x in batch], rtol=1e-12)


def test_meshgrid_of_views_is_refused_in_derivatives():
    with pytest.raises(NotImplementedError, match=r"autotrace does not differentiate "
                       r"np.meshgrid\(\.\.\., copy=False\): its grids are views of its "
                       r"arguments; drop copy=False"):
        autotrace.grad(lambda x: np.sum(np.meshgrid(x, Y, copy=False)[0]))(np.ones(2))
    with pytest.raises(ValueError, match=r"Valid values for `indexing` are 'xy' and 'ij'\."):
        autotrace.function(lambda x: np.meshgrid(x, indexing="yx"))(np.ones(2))


def test_hessian_through_meshgrid():
    def f(x):
        X, Y2 = np.meshgrid(x, x[:2] ** 2, indexing="ij")
        return np.sum(np.sin(X * Y2))
    x = np.array([0.3, -0.7, 1.1])
    gradient = autotrace.grad(f)
    want = np.stack([(gradient(x + step) - gradient(x - step)) / 2e-6
                     for step in 1e-6 * np.eye(3)], axis=-1)
    for hessian in (autotrace.hessian(f), autotrace.jacfwd(autotrace.jacrev(f)),
                    autotrace.jacrev(autotrace.grad(f))):
        np.testing.assert_allclose(hessian(x), want, rtol=1e-6, atol=1e-8)


def test_meshgrid_through_an_unpacked_call():
    # (a variadic rule read at run time gave its whole list as the first argument's gradient)
    keywords = {"indexing": "ij"}

    def f(x):
        X, Y2 = np.meshgrid(x, x[:2] ** 2, **keywords)
        return np.sum(np.sin(X * Y2))
    x = np.array([0.3, -0.7, 1.1])
    expected = central_difference(f, x)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected, rtol=1e-6,
                               atol=1e-8)


# --- writes into a grid: np.meshgrid's grids (copy=True) are arrays of their own --------------

def writes_into_grids(v):
    X, Y2 = np.meshgrid(v[:3], v[3:])
    X[0] = 0.0
    Y2[:, 1] *= 3.0
    return np.sum(np.sin(X * Y2 + v[0]))


def writes_into_three_grids(v):
    X, Y2, W = np.meshgrid(v[:2], v[2:4], v[4:], indexing="ij")
    W += X
    return np.sum(X * Y2 * W)


@pytest.mark.parametrize("f", [writes_into_grids, writes_into_three_grids],
                         ids=lambda f: f.__name__)
def test_a_write_into_one_grid_is_followed_in_every_mode(f):
    v = np.array([0.3, -0.7, 1.1, 0.5, 2.0, -1.5])
    check_every_mode(f, v)
    batch = np.stack([v, 2.0 * v])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch),
                               [central_difference(f, point) for point in batch],
                               rtol=1e-6, atol=1e-8)


def writes_into_a_grid_another_name_holds(v):
    X, Y2 = np.meshgrid(v[:3], v[3:])
    Z = X
    X[0] = 0.0  # (written while Z holds it)
    return np.sum(Z * Y2)


def test_a_write_into_a_grid_that_another_name_holds_is_refused():
    line = _line_of("(written while Z holds it)")
    with pytest.raises(autotrace.TransformError, match=re.escape(
            f'File "{__file__}", line {line}: X[0] = ... changes \'X\' in place, and \'Z\' '
            f"shares its memory (Z = X, line {line - 1}), read after it on line {line + 1}")):
        autotrace.grad(writes_into_a_grid_another_name_holds)(np.ones(6))


def _line_of(marker: str) -> int:
    with open(__file__) as source:
        return next(number for number, text in enumerate(source, 1) if marker in text)
