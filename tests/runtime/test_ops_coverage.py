"""More of the op registry, compiled and compared with eager NumPy: linear algebra results,
ufunc methods, complex and integer dtypes, methods, and the rarer shape functions."""
import warnings

import numpy as np
import pytest

from tests.runtime.helpers import assert_same, compiled

rng = np.random.default_rng(1)
m = rng.standard_normal((4, 4))
v = rng.standard_normal(4)
spd = m @ m.T + 4 * np.eye(4)
c = (m + 1j * m).astype(np.complex128)


def sorted_copy(a):
    b = a.copy()
    b.sort(axis=0)
    return b


def filled(a):
    b = a.copy()
    b.fill(3.0)
    return b


def incremented(a, i):
    b = a.copy()
    b[i] = b[i] + 1.0
    return b


CASES = {
    "svd": (lambda a: np.linalg.svd(a), (m,)),
    "svd_values": (lambda a: np.linalg.svd(a, compute_uv=False), (m,)),
    "qr": (lambda a: np.linalg.qr(a), (m,)),
    "pinv_eigvalsh": (lambda a: (np.linalg.pinv(a), np.linalg.eigvalsh(a)), (spd,)),
    "matrix_power": (lambda a: (np.linalg.matrix_power(a, 3), np.linalg.matrix_power(a, -1),
                                np.linalg.matrix_power(a, 1) + 1.0), (spd,)),
    "norms": (lambda a: (np.linalg.norm(a, ord=2), np.linalg.norm(a, "fro"),
                         np.linalg.norm(a, axis=1, keepdims=True)), (m,)),
    "solve_matrix": (lambda a, b: np.linalg.solve(a, b), (spd, m)),
    "kron_cross_vecdot": (lambda a, b: (np.kron(a, b), np.cross(b[:3], b[1:]), np.vecdot(a, b)),
                          (m, v)),
    "einsum_views": (lambda a, b: (np.einsum("ij,j->i", a, b, optimize=True),
                                   np.einsum("ij->ji", a) + 1, np.einsum("ii->i", a) * 2), (m, v)),
    "ufunc_methods": (lambda a: (np.add.reduce(a, axis=0), np.maximum.reduce(a),
                                 np.add.accumulate(a, axis=1), np.multiply.outer(a[0], a[1])),
                      (m,)),
    "complex": (lambda z: (z.real, z.imag, np.conj(z), np.abs(z), z * 2j), (c,)),
    "bool_ops": (lambda a: ((a > 0) & (a < 1), ~(a > 0), (a > 0) ^ True, np.any(a > 0, axis=0)),
                 (m,)),
    "int_ops": (lambda a: (a.astype(np.int32) * 3 // 2, (a * 10).astype(int) % 3,
                           np.cumsum(a.astype(np.int8))), (m,)),
    "integer_power": (lambda a: (a ** 2, 2 ** a), (np.arange(1, 5),)),
    "mean_dtype": (lambda a: (np.mean(a, dtype=np.float32), a.sum(dtype=np.float32),
                              a.astype(np.float32).mean()), (m,)),
    "diff_argsort": (lambda a: (np.diff(a), np.diff(a, n=2, axis=0), np.argsort(a),
                                np.diff(a, n=0) + 1.0), (m,)),
    "elementwise_functions": (lambda a: (np.isclose(a, 0.5), np.angle(a), np.sinc(a),
                                         np.nan_to_num(a / 0.0)), (m,)),
    "round": (lambda a: (np.round(a, 2), a.round(1), np.around(a)), (m,)),
    "infinities": (lambda a: (np.isposinf(a / 0.0), np.isneginf(a / 0.0),
                              np.nan_to_num(a / 0.0, posinf=2.0, neginf=-3.0)), (m,)),
    "divmod_where": (lambda a: (divmod(a, 0.7), np.where(a > 0, a, 0.0)), (m,)),
    "trace_diag": (lambda a: (a.trace(), a.diagonal(1), np.diag(a[0]), np.diag(a, k=-1) + 1.0),
                   (m,)),
    "iteration": (lambda a: sum(row for row in a), (m,)),
    "atleast": (lambda a: (np.atleast_2d(a[0]), np.atleast_3d(a), np.atleast_1d(a[0, 0])), (m,)),
    "stacks_and_splits": (lambda a: (np.column_stack([a[0], a[1]]), np.hsplit(a, 2),
                                     np.vsplit(a, 2)), (m,)),
    "flips": (lambda a: (np.fliplr(a), np.flipud(a), np.flip(a, axis=(0, 1))), (m,)),
    "fftshift": (lambda a: (np.fft.fftshift(a[:3]), np.fft.ifftshift(a[:3], axes=1),
                            np.fft.fftshift(a[0], axes=-1)), (m,)),
    "rot90": (lambda a: (np.rot90(a), np.rot90(a, -1), np.rot90(a, 6), np.rot90(a, 4) + 1.0,
                         np.rot90(a[None], 3, axes=(2, 0))), (m,)),
    "insert": (lambda a: (np.insert(a, 1, 7.0), np.insert(a, 1, a[0], axis=1),
                          np.insert(a, [2], a[:, :1] * 2, axis=1),
                          np.insert(a, slice(0, 4, 2), -1.0, axis=0),
                          np.insert(a, [4, 0, 4], a[0, :3], axis=None),
                          np.insert(np.arange(4), 2, a[0, :2])), (m,)),
    "delete_append": (lambda a: (np.delete(a, 1), np.delete(a, [3, 0, 3], axis=1),
                                 np.delete(a, slice(None, None, 2), axis=0),
                                 np.delete(a[0], [True, False, True, False]),
                                 np.append(a, a[0]), np.append(a, a[:1] * 2, axis=0),
                                 np.append(a[0], 2.5)), (m,)),
    "dsplit_linalg_transpose": (lambda a: (*np.dsplit(a.reshape(2, 2, 4), [1, 3]),
                                           np.linalg.matrix_transpose(a)), (m,)),
    "squeeze_expand": (lambda a: (a[None].squeeze(), a[:, :1].squeeze(axis=1),
                                  np.expand_dims(a, (0, 2))), (m,)),
    "methods": (lambda a: (a.prod(axis=0), a.var(), a.std(axis=1), a.any(), a.all(), a.argmin(),
                           a.cumprod(axis=0), a.swapaxes(0, 1), a.take([1, 2]), a.repeat(2),
                           a.dot(v), a.mT, a.conjugate(), a.nbytes, a.itemsize), (m,)),
    "in_place_methods": (lambda a: (sorted_copy(a), filled(a)), (m,)),
    "matrix_transpose": (lambda a: np.matrix_transpose(a[None]), (m,)),
    "full_like_traced": (lambda a: np.full_like(a, a[0, 0]), (m,)),
    "pad_constant": (lambda a: np.pad(a, 1, constant_values=2.0), (m,)),
    "concatenate_concrete": (lambda a: np.concatenate([a, np.zeros((1, 4))]), (m,)),
    "take_along_axis": (lambda a: np.take_along_axis(a, np.argmax(a, axis=1, keepdims=True),
                                                     axis=1), (m,)),
    "scatter": (incremented, (m, np.array([0, 2]))),
    "negative_steps": (lambda a: (a[-1], a[::-2], a[..., -1], a[1:-1, ::3]), (m,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_matches_eager(name):
    function, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nan_to_num(a / 0.0) divides by zero
        call, _ = compiled(function, *args)
        assert_same(call(*args), function(*args))
