"""det's derivatives of every order it has rules for, near and at singular matrices, against
the exact derivative tensors of its permutation expansion (sums of products of entries, no
division); slogdet's to the third order; complex det in both modes and on array-API arrays;
eigh's eigenvalue gradient at tied eigenvalues, quiet.

det's derivatives are ops of their own (runtime/primitives/adjugates.py), computed from the
singular value decomposition, so a derivative built from a trace (jacfwd(jacrev(det)), which
differentiates the vmap of a gradient) differentiates them by their rules, not through the
decomposition (whose derivative divides by the gaps between singular values: zero at the
identity)."""
import itertools
import warnings

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.adjugates import cofactors, cofactors_jvp, cofactors_jvp_cross
from autotrace.testing import check_grads


def det_derivative(a, order):
    """The tensor of det's `order`-th derivative at `a`, one pair of axes (i, j) per
    differentiation: det(a) = sum_p sign(p) prod_i a[i, p(i)], each term differentiated by
    the entries (r, p(r)) of `order` distinct rows, in each order."""
    n = a.shape[-1]
    tensor = np.zeros((n, n) * order)
    for permutation in itertools.permutations(range(n)):
        sign = np.linalg.det(np.eye(n)[list(permutation)])
        for rows in itertools.permutations(range(n), order):
            rest = [a[k, permutation[k]] for k in range(n) if k not in rows]
            index = sum(((row, permutation[row]) for row in rows), ())
            tensor[index] += sign * np.prod(rest)
    return tensor


def with_singular_values(values, seed=0):
    """U diag(values) V^T for random orthogonal U and V."""
    rng = np.random.default_rng(seed)
    n = len(values)
    u = np.linalg.qr(rng.standard_normal((n, n)))[0]
    v = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return u @ np.diag(values) @ v.T


POINTS = {  # (matrix, whether its det is 0 or nearly)
    "det 1e-8": with_singular_values([1.5, 0.8, 1e-8 / 1.2]),
    "det 1e-12": with_singular_values([1.5, 0.8, 1e-12 / 1.2]),
    "rank 2": with_singular_values([1.5, 0.8, 0.0]),
    "rank 1": with_singular_values([1.5, 0.0, 0.0]),
    "zero": np.zeros((3, 3)),
    "identity": np.eye(3),
    "generic": with_singular_values([1.5, 0.8, 0.6], seed=1),
    "4x4 det 1e-10": with_singular_values([2.0, 1.0, 0.5, 1e-10], seed=2),
    "4x4 rank 2": with_singular_values([2.0, 1.0, 0.0, 0.0], seed=3),
    "4x4 identity": np.eye(4),
}


def third_derivatives(a):
    """det's third derivative at a, by jacfwd, jacrev and eager forward and reverse mode."""
    det = np.linalg.det
    rng = np.random.default_rng(4)
    t, s = rng.standard_normal((2, *a.shape))

    def along_t(b):  # <grad det(b), t>
        return np.sum(autotrace.grad(det)(b) * t)

    def along_t_and_s(b):
        return autotrace.jvp(along_t, (b,), (s,))[1]
    return (t, s), {
        "jacfwd(jacfwd(jacrev))": autotrace.jacfwd(autotrace.jacfwd(autotrace.jacrev(det)))(a),
        "jacrev(jacrev(jacrev))": autotrace.jacrev(autotrace.jacrev(autotrace.jacrev(det)))(a),
        "jacfwd(jacfwd(jacfwd))": autotrace.jacfwd(autotrace.jacfwd(autotrace.jacfwd(det)))(a),
        "grad(jvp(grad))": autotrace.grad(along_t_and_s)(a),
        "jvp(jvp(grad))": np.array([
            autotrace.jvp(along_t_and_s, (a,), (unit.reshape(a.shape),))[1]
            for unit in np.eye(a.size)]).reshape(a.shape),
        "function(grad(jvp(grad)))": autotrace.function(autotrace.grad(along_t_and_s))(a),
    }


@pytest.mark.parametrize("name", list(POINTS))
def test_det_derivatives_of_every_order_near_and_at_singular_matrices(name):
    a = POINTS[name]
    n = a.shape[-1]
    first, second, third = (det_derivative(a, order) for order in (1, 2, 3))
    np.testing.assert_allclose(autotrace.grad(np.linalg.det)(a), first, atol=1e-12)
    for how, hessian in [("hessian", autotrace.hessian(np.linalg.det)(a)),
                         ("jacfwd(jacrev)", autotrace.jacfwd(autotrace.jacrev(np.linalg.det))(a)),
                         ("jacrev(jacrev)", autotrace.jacrev(autotrace.jacrev(np.linalg.det))(a))]:
        np.testing.assert_allclose(hessian, second, atol=1e-12, err_msg=how)
    (t, s), computed = third_derivatives(a)
    contracted = np.einsum("ijklmn,ij,kl->mn", third, t, s)
    for how, value in computed.items():
        if value.shape == (n, n) * 3:
            np.testing.assert_allclose(value, third, atol=1e-12, err_msg=how)
        else:
            np.testing.assert_allclose(value, contracted, atol=1e-11, err_msg=how)


def test_the_third_derivative_near_a_singular_matrix_was_wrong_through_the_inverse():
    # det 2e-8: the inverse's form, det(a) times products of inverses, kept no digit of it
    a = with_singular_values([1.3, 0.9, 2e-8 / 1.17], seed=5)
    rng = np.random.default_rng(6)
    t, s = rng.standard_normal((2, 3, 3))
    np.testing.assert_allclose(cofactors_jvp_cross(t, s, a),
                               np.einsum("ijklmn,ij,kl->mn", det_derivative(a, 3), t, s),
                               atol=1e-13)
    # symmetric in its three directions; zeros along a zero direction
    other = rng.standard_normal((3, 3))
    assert np.sum(cofactors_jvp_cross(t, s, a) * other) == pytest.approx(
        np.sum(cofactors_jvp_cross(other, t, a) * s))
    np.testing.assert_array_equal(cofactors_jvp_cross(t, np.zeros((3, 3)), a), np.zeros((3, 3)))


def test_det_helpers_of_stacks_broadcast_and_batch():
    rng = np.random.default_rng(7)
    stack = np.stack([POINTS["rank 2"], POINTS["generic"], POINTS["det 1e-8"]])
    t, s = rng.standard_normal((2, 3, 3))
    np.testing.assert_allclose(cofactors(stack), [det_derivative(a, 1) for a in stack],
                               atol=1e-12)
    np.testing.assert_allclose(cofactors_jvp(stack, t), [
        np.einsum("ijkl,ij->kl", det_derivative(a, 2), t) for a in stack], atol=1e-12)
    np.testing.assert_allclose(cofactors_jvp_cross(t, s, stack), [
        np.einsum("ijklmn,ij,kl->mn", det_derivative(a, 3), t, s) for a in stack], atol=1e-12)
    # vmapped, with the stack in each argument
    batched = autotrace.vmap(cofactors_jvp_cross, in_axes=(0, None, 0))(stack, s, stack[::-1])
    np.testing.assert_allclose(batched, [cofactors_jvp_cross(stack[i], s, stack[2 - i])
                                         for i in range(3)], atol=1e-12)


def test_derivatives_of_functions_of_det_to_the_third_order():
    def f(a):
        return np.sin(3.0 * np.linalg.det(a))

    for name in ("det 1e-8", "rank 2", "identity", "generic"):
        a = POINTS[name]
        x = np.linalg.det(a)
        d1, d2, d3 = (det_derivative(a, order) for order in (1, 2, 3))
        slopes = [3 * np.cos(3 * x), -9 * np.sin(3 * x), -27 * np.cos(3 * x)]
        hessian = slopes[1] * np.einsum("ij,kl->ijkl", d1, d1) + slopes[0] * d2
        third = (slopes[2] * np.einsum("ij,kl,mn->ijklmn", d1, d1, d1)
                 + slopes[1] * (np.einsum("ijkl,mn->ijklmn", d2, d1)
                                + np.einsum("ijmn,kl->ijklmn", d2, d1)
                                + np.einsum("klmn,ij->ijklmn", d2, d1))
                 + slopes[0] * d3)
        np.testing.assert_allclose(autotrace.hessian(f)(a), hessian, atol=1e-11, err_msg=name)
        np.testing.assert_allclose(
            autotrace.jacfwd(autotrace.jacfwd(autotrace.jacrev(f)))(a), third, atol=1e-10,
            err_msg=name)
        weights = np.random.default_rng(8).standard_normal((3, 3, 3, 3))
        np.testing.assert_allclose(  # grad of (a contraction of) the Hessian
            autotrace.grad(lambda b: np.sum(autotrace.jacfwd(autotrace.jacrev(f))(b) * weights))(
                a), np.einsum("ijklmn,ijkl->mn", third, weights), atol=1e-10, err_msg=name)


def test_a_fourth_derivative_of_det_is_refused():
    det3 = autotrace.jacfwd(autotrace.jacfwd(autotrace.jacrev(np.linalg.det)))
    with pytest.raises(autotrace.TransformError, match=(
            "no tangent rule for autotrace.runtime.primitives.adjugates.cofactors_jvp_cross: "
            "it is the third derivative of np.linalg.det, which autotrace differentiates three "
            "times, not four")):
        autotrace.jacfwd(det3)(np.eye(4))


def test_slogdet_to_the_third_order():
    a = POINTS["generic"] + np.eye(3)
    inverse = np.linalg.inv(a)
    # d^3 log|det a| [X, Y, Z] = tr(B X B Y B Z) + tr(B Y B X B Z), B = inv(a)
    third = (np.einsum("ni,jk,lm->ijklmn", inverse, inverse, inverse)
             + np.einsum("nk,li,jm->ijklmn", inverse, inverse, inverse))

    def logdet(a):
        return np.linalg.slogdet(a)[1]
    np.testing.assert_allclose(
        autotrace.jacfwd(autotrace.jacfwd(autotrace.jacrev(logdet)))(a), third, atol=1e-12)
    np.testing.assert_allclose(
        autotrace.jacrev(autotrace.jacrev(autotrace.jacrev(logdet)))(a), third, atol=1e-12)
    check_grads(logdet, (a,), order=3)
    check_grads(logdet, (-POINTS["det 1e-8"] * 1e2 + np.eye(3),), order=2)


# Complex det: holomorphic, so the gradient given a cotangent u is u times its cofactors (no
# conjugate), the JAX convention: the gradient of a real f of complex a is
# conj(df/dRe(a) + i df/dIm(a)).

def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _complex_gradient_by_differences(f, a, step=1e-6):
    gradient = np.zeros(a.shape, complex)
    for index in np.ndindex(a.shape):
        unit = np.zeros(a.shape)
        unit[index] = step
        along_real = (f(a + unit) - f(a - unit)) / (2 * step)
        along_imaginary = (f(a + 1j * unit) - f(a - 1j * unit)) / (2 * step)
        gradient[index] = along_real - 1j * along_imaginary
    return gradient


def _real_of_det(a):
    return np.real((0.7 - 0.3j) * np.linalg.det(a))


@pytest.mark.parametrize("rank", [3, 2])
def test_complex_det_in_both_modes_against_finite_differences(rank):
    rng = np.random.default_rng(9)
    a = _complex(rng, 3, rank) @ _complex(rng, rank, 3)
    expected = _complex_gradient_by_differences(_real_of_det, a)
    for how, gradient in [("grad", autotrace.grad(_real_of_det)(a)),
                          ("function(grad)", autotrace.function(autotrace.grad(_real_of_det))(a))]:
        np.testing.assert_allclose(gradient, expected, atol=1e-8, err_msg=how)
    np.testing.assert_allclose(autotrace.grad(_real_of_det)(a),
                               (0.7 - 0.3j) * det_derivative_complex(a), atol=1e-12)
    tangent = _complex(rng, 3, 3)
    step = 1e-6
    _, value = autotrace.jvp(np.linalg.det, (a,), (tangent,))
    assert value == pytest.approx((np.linalg.det(a + step * tangent)
                                   - np.linalg.det(a - step * tangent)) / (2 * step), abs=1e-8)

    def along(b):  # the gradient's tangent: det's second derivative, complex
        return autotrace.jvp(autotrace.grad(_real_of_det), (b,), (tangent,))[1]
    differences = (autotrace.grad(_real_of_det)(a + step * tangent)
                   - autotrace.grad(_real_of_det)(a - step * tangent)) / (2 * step)
    np.testing.assert_allclose(along(a), differences, atol=1e-8)
    third = autotrace.jvp(along, (a,), (tangent,))[1]
    np.testing.assert_allclose(third, (along(a + step * tangent) - along(a - step * tangent))
                               / (2 * step), atol=1e-7)


def det_derivative_complex(a):
    """The cofactors of a complex 3x3 matrix from its 2x2 minors."""
    cofactor = np.zeros(a.shape, complex)
    for i, j in np.ndindex(a.shape):
        minor = np.delete(np.delete(a, i, 0), j, 1)
        cofactor[i, j] = (-1) ** (i + j) * (minor[0, 0] * minor[1, 1] - minor[0, 1] * minor[1, 0])
    return cofactor


@pytest.mark.parametrize("rank", [3, 2])
def test_complex_det_gradient_on_array_api_arrays(rank):
    xp = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(10)
    a = _complex(rng, 3, rank) @ _complex(rng, rank, 3)
    gradient = autotrace.function(autotrace.grad(_real_of_det))(xp.asarray(a))
    assert isinstance(gradient, type(xp.asarray(0.0)))
    np.testing.assert_allclose(np.from_dlpack(gradient), (0.7 - 0.3j) * det_derivative_complex(a),
                               atol=1e-12)


def test_eigh_eigenvalue_gradient_at_tied_eigenvalues_is_quiet():
    def weighted_eigenvalues(x):
        w, _ = np.linalg.eigh(np.diag(x))
        return np.sum(w)

    x = np.array([1.0, 1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for gradient in (autotrace.grad(weighted_eigenvalues)(x),
                         autotrace.function(autotrace.grad(weighted_eigenvalues))(x),
                         autotrace.vmap(autotrace.grad(weighted_eigenvalues))(np.stack([x, x]))[0]):
            np.testing.assert_allclose(gradient, [1.0, 1.0, 1.0])


def test_det_third_derivative_on_array_api_arrays():
    xp = pytest.importorskip("array_api_strict")
    a = POINTS["rank 2"]
    rng = np.random.default_rng(11)
    t, s = rng.standard_normal((2, 3, 3))

    def along_t_and_s(b):
        return autotrace.jvp(lambda c: np.sum(autotrace.grad(np.linalg.det)(c) * t), (b,),
                             (s,))[1]
    third = autotrace.function(autotrace.grad(along_t_and_s))(xp.asarray(a))
    np.testing.assert_allclose(np.from_dlpack(third),
                               np.einsum("ijklmn,ij,kl->mn", det_derivative(a, 3), t, s),
                               atol=1e-12)


def test_det_derivatives_in_an_exported_module(tmp_path):
    import importlib.util
    hessian = autotrace.function(autotrace.jacfwd(autotrace.jacrev(np.linalg.det)))
    path = tmp_path / "det_hessian.py"
    autotrace.export(hessian, autotrace.Spec((3, 3)), str(path))
    spec = importlib.util.spec_from_file_location("det_hessian", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("rank 2", "identity"):
        np.testing.assert_allclose(module.jacfwd_jacrev_det(POINTS[name]),
                                   det_derivative(POINTS[name], 2), atol=1e-12, err_msg=name)
