"""np.pad in the modes that pad with a statistic or an odd reflection, through every transform;
np.einsum's casting= checked on its operands, as NumPy checks it; np.linalg.eigvals and eig of a
general real matrix; a complex gradient begun by a real part."""
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.ops import UntraceableError
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
    if f not in (pad_minimum, pad_odd_reflection):  # (each kind of rule once from here)
        return
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


@pytest.mark.parametrize("number", [2.0, 2, 1j], ids=["float", "int", "complex"])
def test_einsum_takes_a_python_number_as_the_array_numpy_makes_of_it(number):
    """np.einsum makes a float64 (int64, complex128) array of a Python number: beside a float32
    operand it computes in float64 and passes casting='safe', and 'no' names operand 0."""
    x = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    traced = autotrace.function(lambda x: np.einsum("i,->i", x, number))(x)
    expected = np.einsum("i,->i", x, number)
    assert traced.dtype == expected.dtype
    np.testing.assert_allclose(traced, expected)
    with pytest.raises(TypeError, match=r"^Iterator operand 0 dtype could not be cast from "
                                        r"dtype\('float32'\) to dtype\('(float64|complex128)'\) "
                                        r"according to the rule 'no'$"):
        autotrace.function(lambda x: np.einsum("i,->i", x, number, casting="no"))(x)


def general_matrix():
    """A real matrix with the eigenvalues 0.5 +- 1.5i, 2.1 and 3.2."""
    basis = RNG.standard_normal((4, 4)) + 2.0 * np.eye(4)
    values = np.diag([0.5, 0.5, 2.1, 3.2])
    values[0, 1], values[1, 0] = -1.5, 1.5
    return basis @ values @ np.linalg.inv(basis)


GENERAL = general_matrix()
SCALES = np.arange(1.0, 5.0)


def eigenvalue_energy(a):
    return np.sum(np.abs(np.linalg.eigvals(a)) ** 2 * SCALES)


def eig_values_parts(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w) * SCALES) + np.sum(np.imag(w) ** 2 * SCALES)


def complex_eigenvalues(a):
    return np.sum(np.abs(np.linalg.eigvals(a + 0j)) ** 2 * SCALES)


def eigenvector_phases(a):
    """The imaginary parts of the eigenvectors: their phase, fixed as NumPy fixes it (the
    largest component real), and their norm."""
    w, v = np.linalg.eig(a + 0j)
    return np.sum(np.imag(v) * np.arange(16.0).reshape(4, 4)) + np.sum(np.abs(v[1:]) ** 3)


@pytest.mark.parametrize("f", [eigenvalue_energy, eig_values_parts, complex_eigenvalues,
                               eigenvector_phases], ids=lambda f: f.__name__)
def test_eigenvalues_and_eigenvectors_of_a_general_matrix(f):
    expected = central_difference(f, GENERAL)
    np.testing.assert_allclose(autotrace.grad(f)(GENERAL), expected, rtol=1e-5, atol=1e-6)
    value, gradient = autotrace.value_and_grad(f)(GENERAL)
    assert value == pytest.approx(f(GENERAL))
    np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-6)
    direction = RNG.standard_normal(GENERAL.shape)
    assert autotrace.jvp(f, (GENERAL,), (direction,))[1] == pytest.approx(
        np.sum(expected * direction), rel=1e-5)
    assert autotrace.grad(f)(GENERAL.astype(np.float32)).dtype == np.float32
    if f in (eigenvalue_energy, complex_eigenvalues):  # np.linalg.eigvals twice
        hessian = autotrace.hessian(f)(GENERAL).reshape(16, 16)
        np.testing.assert_allclose(hessian @ direction.ravel(), central_difference(
            lambda a: np.sum(autotrace.grad(f)(a) * direction), GENERAL).ravel(), rtol=1e-4,
            atol=1e-5)
    if f in (complex_eigenvalues, eigenvector_phases):  # traced: a complex matrix's
        assert autotrace.function(f)(GENERAL) == pytest.approx(f(GENERAL))
        np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(GENERAL), expected,
                                   rtol=1e-5, atol=1e-6)
        batched = autotrace.vmap(autotrace.grad(f))(np.stack([GENERAL, GENERAL]))
        np.testing.assert_allclose(batched[1], expected, rtol=1e-5, atol=1e-6)


def test_a_real_matrix_eigenvalues_are_refused_where_traced_and_eigenvectors_twice():
    with pytest.raises(UntraceableError, match=re.escape(
            "autotrace cannot trace numpy.linalg.eigvals of a real matrix: NumPy returns its "
            "eigenvalues real where all are real and complex where one is not")):
        autotrace.function(eigenvalue_energy)(GENERAL)
    with pytest.raises(autotrace.TransformError, match=re.escape(
            "the second derivatives of np.linalg.eig's eigenvectors have no rule")):
        autotrace.hessian(eigenvector_phases)(GENERAL)


def std_into_int(x):
    out = np.zeros((), np.int64)
    np.std(x, out=out)
    return np.sum(x ** 2) + out


def ptp_into_int(x):
    out = np.zeros(2, np.int64)
    np.ptp(x, axis=1, out=out)
    return np.sum(x ** 2) + np.sum(out)


def round_into_int(x):
    out = np.zeros((2, 2), np.int64)
    np.round(x * 3.0, out=out)
    return np.sum(x ** 2) + np.sum(out)


@pytest.mark.parametrize("f", [std_into_int, ptp_into_int, round_into_int],
                         ids=lambda f: f.__name__)
def test_a_float_result_into_an_int_out_is_refused_as_numpy_refuses_it(f):
    x = np.array([[0.3, 1.7], [2.9, -1.2]])
    with pytest.raises(TypeError, match="Cannot cast ufunc '[a-z]+' output from dtype"
                                        r"\('float64'\) to dtype\('int64'\)"):
        f(x)
    for run in (lambda: autotrace.grad(f)(x), lambda: autotrace.jvp(f, (x,), (x,)),
                lambda: autotrace.function(f)(x)):
        with pytest.raises(TypeError, match=r"Cannot cast ufunc '[a-z]+' output from dtype"
                                            r"\('float64'\) to dtype\('int64'\)"):
            run()


def int_statistics_into_outs(x):
    counts = np.floor(x * 3.0).astype(np.int64)
    spread = np.zeros(2, np.int64)
    rounded = np.zeros((2, 2), np.int64)
    deviation = np.zeros((), np.float32)
    np.ptp(counts, axis=1, out=spread)
    np.round(counts, out=rounded)
    np.std(counts, out=deviation)
    return np.sum(x ** 2) + np.sum(spread) + np.sum(rounded * x) + deviation


def test_int_statistics_into_outs_numpy_takes():
    """Integers carry no gradient: the outs hold NumPy's values, and the gradient flows
    around them."""
    x = np.array([[0.3, 1.7], [2.9, -1.2]])
    counts = np.floor(x * 3.0)
    assert autotrace.function(int_statistics_into_outs)(x) == pytest.approx(
        int_statistics_into_outs(x))
    np.testing.assert_allclose(autotrace.grad(int_statistics_into_outs)(x), 2.0 * x + counts)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(int_statistics_into_outs))(x),
                               2.0 * x + counts)


PAD_OPTIONS = dict(mode="edge")


def pad_by_unpacked_options(x):
    return np.sum(np.tanh(np.pad(x, ((2, 1), (1, 3)), **PAD_OPTIONS)) * WEIGHTS)


def test_a_second_derivative_of_a_call_with_unpacked_keywords():
    """The gradient of the call's arguments tuple has no gradient (None) for pad_width: the
    second derivative adds nothing there."""
    direction = RNG.standard_normal(MATRIX.shape)

    def directional(x):
        return np.sum(autotrace.grad(pad_by_unpacked_options)(x) * direction)
    np.testing.assert_allclose(autotrace.grad(directional)(MATRIX),
                               central_difference(directional, MATRIX), rtol=1e-5, atol=1e-6)
