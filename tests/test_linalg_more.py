"""np.linalg.qr and the matrix norms of singular values (np.linalg.norm and matrix_norm with
ord=2, -2, 'nuc') in every mode: gradients and tangents against central differences, Hessians
against differences of the gradient, traced values and gradients equal to NumPy's and the
eager ones (in value and dtype), vmap of the gradient equal to a loop, float32 kept float32;
and the calls their rules refuse, refused with what to write instead."""
import numpy as np
import pytest

import autotrace

RNG = np.random.default_rng(7)
EPS = 1e-6


def differences(f, a):
    """The derivative of f at a by central differences, one axis of a's shape after f's."""
    columns = []
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = EPS
        columns.append((np.asarray(f(a + step)) - np.asarray(f(a - step))) / (2 * EPS))
    stacked = np.array(columns).reshape(a.shape + np.shape(columns[0]))
    return np.moveaxis(stacked, tuple(range(a.ndim)), tuple(range(-a.ndim, 0)))


def qr_loss(mode):
    def loss(a):
        factors = np.linalg.qr(a, mode=mode)
        if mode == "r":
            return np.sum(np.sin(factors))
        q, r = factors
        return np.sum(q * np.cos(np.arange(q.shape[-1]))) + np.sum(np.sin(r))
    return loss


def norm_loss(**options):
    def loss(a):
        return np.sum(np.sin(np.linalg.norm(a, **options)))
    return loss


def matrix_norm_loss(**options):
    def loss(a):
        return np.sum(np.sin(np.linalg.matrix_norm(a, **options)))
    return loss


CASES = {  # name: (loss, a batch of inputs: a[0] is differentiated, a vmapped)
    "qr/reduced": (qr_loss("reduced"), RNG.standard_normal((2, 4, 3))),
    "qr/r": (qr_loss("r"), RNG.standard_normal((2, 4, 3))),
    "qr/complete-square": (qr_loss("complete"), RNG.standard_normal((2, 3, 3))),
    "qr/stacked": (qr_loss("reduced"), RNG.standard_normal((2, 2, 3, 2))),
    "norm/2": (norm_loss(ord=2), RNG.standard_normal((2, 3, 4))),
    "norm/-2": (norm_loss(ord=-2), RNG.standard_normal((2, 4, 3))),
    "norm/nuc-axes-keepdims": (norm_loss(ord="nuc", axis=(2, 0), keepdims=True),
                               RNG.standard_normal((2, 3, 2, 4))),
    "matrix_norm/2": (matrix_norm_loss(ord=2), RNG.standard_normal((2, 2, 3, 4))),
    "matrix_norm/nuc-keepdims": (matrix_norm_loss(ord="nuc", keepdims=True),
                                 RNG.standard_normal((2, 3, 3))),
    "matrix_norm/inf": (matrix_norm_loss(ord=np.inf), RNG.standard_normal((2, 3, 4))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_mode_agrees_with_differences(name):
    loss, batch = CASES[name]
    a = batch[0]
    expected = differences(loss, a)
    gradient = autotrace.grad(loss)(a)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)
    direction = RNG.standard_normal(a.shape)
    np.testing.assert_allclose(autotrace.jvp(loss, (a,), (direction,))[1],
                               np.sum(expected * direction), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(a), gradient,
                               rtol=1e-12, atol=1e-12)
    looped = np.stack([autotrace.grad(loss)(example) for example in batch])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(loss))(batch), looped,
                               rtol=1e-10, atol=1e-12)
    if "inf" not in name:  # (a max of sums of |a|: its second derivative is 0)
        np.testing.assert_allclose(autotrace.hessian(loss)(a),
                                   differences(autotrace.grad(loss), a), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda a: np.linalg.qr(a), lambda a: np.linalg.qr(a, mode="r"),
    lambda a: np.linalg.qr(a[..., :3, :], mode="complete"),
    lambda a: np.linalg.norm(a[0], 2), lambda a: np.linalg.norm(a, "nuc", axis=(0, 2)),
    lambda a: np.linalg.matrix_norm(a, ord=-2)], ids=["qr", "qr-r", "qr-complete", "norm-2",
                                                       "norm-nuc-axes", "matrix_norm--2"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_traced_values_are_numpys(call, dtype):
    a = RNG.standard_normal((2, 4, 3)).astype(dtype)
    traced, expected = autotrace.function(call)(a), call(a)
    assert type(traced) is type(expected)
    for got, want in zip(*[x if isinstance(x, tuple) else (x,) for x in (traced, expected)]):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-6 if dtype == np.float32 else 1e-12)
    batch = np.stack([a, a + 1])
    looped = [call(example) for example in batch]
    vmapped = autotrace.vmap(call)(batch)
    for position, got in enumerate(vmapped if isinstance(vmapped, tuple) else (vmapped,)):
        want = np.stack([x[position] if isinstance(x, tuple) else x for x in looped])
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["qr/reduced", "qr/r", "norm/2", "matrix_norm/nuc-keepdims"])
def test_float32_gradients_stay_float32(name):
    loss, batch = CASES[name]
    a = batch[0].astype(np.float32)
    for gradient in (autotrace.grad(loss)(a), autotrace.function(autotrace.grad(loss))(a),
                     autotrace.vmap(autotrace.grad(loss))(batch.astype(np.float32))):
        assert gradient.dtype == np.float32
    np.testing.assert_allclose(autotrace.grad(loss)(a), autotrace.grad(loss)(batch[0]),
                               rtol=1e-3, atol=1e-4)


def test_a_tied_largest_singular_value_shares_the_gradient():
    # the sum of u_k v_k^T over the tied ones, each weighed 1/3 as np.max(svdvals) weighs them
    gradient = autotrace.grad(lambda a: np.linalg.norm(a, 2))(2.0 * np.eye(3))
    np.testing.assert_allclose(gradient, np.eye(3) / 3.0, atol=1e-12)


COMPLEX = "autotrace does not differentiate numpy.linalg.qr of complex values"


@pytest.mark.parametrize("shape, mode, message", [
    ((2, 3), "reduced",
     "np.linalg.qr of a 2x3 matrix (fewer rows than columns) has no derivative rule (nor in "
     "JAX): write q, r1 = np.linalg.qr(a[..., :2]) of its first 2 columns and r2 = q.T @ "
     "a[..., 2:], so that r = [r1, r2]"),
    ((4, 3), "complete",
     "np.linalg.qr of a 4x3 matrix with mode='complete' has no derivative rule: Q's last 1 "
     "columns are any basis of the complement of a's columns, so no gradient is defined for "
     "them; use mode='reduced' (the default)"),
    ((3, 3), "raw",
     "np.linalg.qr with mode='raw' has no derivative rule: autotrace differentiates mode "
     "'reduced' (the default), 'r', and 'complete' of a square matrix"),
    ((3, 3), "complex", COMPLEX)], ids=["wide", "complete-tall", "raw", "complex"])
def test_qr_refusals(shape, mode, message):
    def loss(a):
        if mode == "complex":
            return np.sum(np.abs(np.linalg.qr(a * (1.0 + 1.0j))[1]))
        return np.sum(np.linalg.qr(a, mode=mode)[1])
    a = RNG.standard_normal(shape)
    for differentiate in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f)),
                          lambda f: lambda x: autotrace.jvp(f, (x,), (x,))[1]):
        with pytest.raises(NotImplementedError) as refused:
            differentiate(loss)(a)
        assert str(refused.value).split("\n")[0].startswith(message)


def test_complex_matrix_norms_are_refused():
    a = RNG.standard_normal((3, 3)) * (1.0 + 1.0j)
    with pytest.raises(NotImplementedError, match="numpy.linalg.matrix_norm of complex"):
        autotrace.grad(lambda x: np.linalg.matrix_norm(x * a, ord=2))(np.ones((3, 3)))
    with pytest.raises(NotImplementedError, match="numpy.linalg.norm of complex"):
        autotrace.grad(lambda x: np.linalg.norm(x * a, "nuc"))(np.ones((3, 3)))


def well_conditioned(n, batch=()):
    return RNG.standard_normal(batch + (n, n)) + 2.0 * n * np.eye(n)


MORE = {  # name: (function of one array, a batch of inputs)
    "cond": (lambda a: np.sin(np.linalg.cond(a)), well_conditioned(3, (2,))),
    "cond/-2-stacked": (lambda a: np.sum(np.sin(np.linalg.cond(a, -2))),
                        well_conditioned(3, (2, 2))),
    "cond/tall": (lambda a: np.linalg.cond(a, 2) ** 2, RNG.standard_normal((2, 4, 3))),
    "tensorinv": (lambda a: np.sum(np.sin(np.linalg.tensorinv(a, ind=1))),
                  well_conditioned(4, (2,)).reshape(2, 4, 2, 2)),
    "tensorsolve": (lambda a: np.sum(np.sin(np.linalg.tensorsolve(a, np.arange(1.0, 7.0)))),
                    well_conditioned(6, (2,)).reshape(2, 6, 2, 3)),
    "tensorsolve/axes-in-b": (
        lambda b: np.sum(np.sin(np.linalg.tensorsolve(
            np.reshape(np.eye(6) * 5.0 + np.cos(np.arange(36.0)).reshape(6, 6), (3, 2, 6)), b,
            axes=(1, 0)))), RNG.standard_normal((2, 6))),
}


@pytest.mark.parametrize("name", list(MORE))
def test_cond_and_the_tensor_functions_in_every_mode(name):
    loss, batch = MORE[name]
    a = batch[0]
    expected = differences(loss, a)
    gradient = autotrace.grad(loss)(a)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)
    direction = RNG.standard_normal(a.shape)
    np.testing.assert_allclose(autotrace.jvp(loss, (a,), (direction,))[1],
                               np.sum(expected * direction), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(a), gradient,
                               rtol=1e-12, atol=1e-12)
    looped = np.stack([autotrace.grad(loss)(example) for example in batch])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(loss))(batch), looped,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(autotrace.hessian(loss)(a), differences(autotrace.grad(loss), a),
                               rtol=1e-5, atol=1e-6)
    for dtype in (np.float64, np.float32):
        value = loss(a.astype(dtype))
        traced = autotrace.function(loss)(a.astype(dtype))
        assert traced.dtype == value.dtype and autotrace.grad(loss)(a.astype(dtype)).dtype == dtype
        np.testing.assert_allclose(traced, value, rtol=1e-5)


def test_cond_of_another_p_is_refused():
    with pytest.raises(NotImplementedError) as refused:
        autotrace.grad(lambda a: np.linalg.cond(a, "fro"))(well_conditioned(3))
    assert str(refused.value).split("\n")[0] == (
        "np.linalg.cond with p='fro' has no derivative rule (it has for p=None, 2 and -2): "
        "write np.linalg.norm(x, p) * np.linalg.norm(np.linalg.inv(x), p), which is "
        "differentiated")


def test_matrix_rank_traces_and_carries_no_gradient():
    a = RNG.standard_normal((3, 4, 4))
    a[0, :, 0] = 0.0
    np.testing.assert_array_equal(autotrace.function(np.linalg.matrix_rank)(a), [3, 4, 4])
    np.testing.assert_array_equal(autotrace.vmap(np.linalg.matrix_rank)(a), [3, 4, 4])
    np.testing.assert_array_equal(autotrace.vmap(np.linalg.matrix_rank)(a[:, 0]), [1, 1, 1])
    gradient = autotrace.function(autotrace.grad(
        lambda x: np.sum(x) * np.linalg.matrix_rank(x)))(a[0])
    np.testing.assert_array_equal(gradient, np.full((4, 4), 3.0))
