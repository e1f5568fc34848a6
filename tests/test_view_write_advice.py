"""The advice of a refusal of a write through a view whose array is read afterwards keeps the
program's meaning: NumPy's write changes the array, so the advice says to write into the
array, or to change a copy and assign it back (a copy alone would leave the array as it was,
and the result would change). Following it gives NumPy's values and gradients in every mode.
"""
import inspect
import re

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.tracing.control_scope import ControlFlowError
from tests.numeric import check_every_mode

RNG = np.random.default_rng(11)
WEIGHTS = np.arange(12.0).reshape(4, 3)


def line_of(function, marker: str) -> int:
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, text in enumerate(lines) if marker in text)


def gram_schmidt_through_a_view(A):
    Q = A.copy()
    for j in range(Q.shape[1]):
        q = Q[:, j]
        q /= np.linalg.norm(q)
    return np.sum(Q * WEIGHTS)


def gram_schmidt_into_the_array(A):  # the refusal's first advice
    Q = A.copy()
    for j in range(Q.shape[1]):
        Q[:, j] = Q[:, j] / np.linalg.norm(Q[:, j])
    return np.sum(Q * WEIGHTS)


def gram_schmidt_on_a_copy_assigned_back(A):  # its second
    Q = A.copy()
    for j in range(Q.shape[1]):
        q = Q[:, j].copy()
        q /= np.linalg.norm(q)
        Q[:, j] = q
    return np.sum(Q * WEIGHTS)


def writes_a_transpose(A):
    B = A.copy()
    Bt = B.T
    Bt[0] = Bt[0] * 2 + 1
    return np.sum(np.sin(B))


def writes_a_transpose_copy_back(A):
    B = A.copy()
    Bt = B.T.copy()
    Bt[0] = Bt[0] * 2 + 1
    B[...] = Bt.T
    return np.sum(np.sin(B))


def writes_a_reshaped_view(x):
    y = x.copy()
    M = y.reshape(2, 3)
    M[:, 0] = M[:, 0] ** 2
    return np.sum(y * np.arange(6))


def writes_a_reshaped_copy_back(x):
    y = x.copy()
    M = y.reshape(2, 3).copy()
    M[:, 0] = M[:, 0] ** 2
    y[...] = M.reshape(y.shape)
    return np.sum(y * np.arange(6))


def refusal(func, write, view, base, bound, read, advice):
    return (f"{write} writes into {view!r}, which may share its memory with {base!r} ({bound}, "
            f"line {line_of(func, bound)}), read after it on line {line_of(func, read)}: the "
            f"write changes {base!r} too, which autotrace does not follow; {advice}")


REFUSED = [
    (gram_schmidt_through_a_view, np.ones((4, 3)), refusal(
        gram_schmidt_through_a_view, "q /= ...", "q", "Q", "q = Q[:, j]", "return",
        "for 'Q' to change as NumPy changes it, write into it, Q[:, j] = Q[:, j] / ..., or "
        "change a copy and assign it back: q = Q[:, j].copy(); ...; Q[:, j] = q; if 'Q' "
        "should keep its old values, work on the copy alone")),
    (writes_a_transpose, np.ones((3, 3)), refusal(
        writes_a_transpose, "Bt[0] = ...", "Bt", "B", "Bt = B.T", "return",
        "for 'B' to change as NumPy changes it, change a copy and assign it back: "
        "Bt = B.T.copy(); ...; B[...] = Bt.T; if 'B' should keep its old values, work on the "
        "copy alone")),
    (writes_a_reshaped_view, np.ones(6), refusal(
        writes_a_reshaped_view, "M[:, 0] = ...", "M", "y", "M = y.reshape(2, 3)", "return",
        "for 'y' to change as NumPy changes it, change a copy and assign it back: "
        "M = y.reshape(2, 3).copy(); ...; y[...] = M.reshape(y.shape); if 'y' should keep its "
        "old values, work on the copy alone")),
]


@pytest.mark.parametrize("func, x, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_a_write_through_a_view_is_refused_with_advice_that_keeps_its_meaning(func, x, message):
    with pytest.raises(TransformError) as caught:
        autotrace.grad(func)(x)
    assert caught.value.message == message


@pytest.mark.parametrize("advised, original, x", [
    (gram_schmidt_into_the_array, gram_schmidt_through_a_view, RNG.standard_normal((4, 3))),
    (gram_schmidt_on_a_copy_assigned_back, gram_schmidt_through_a_view,
     RNG.standard_normal((4, 3))),
    (writes_a_transpose_copy_back, writes_a_transpose, RNG.standard_normal((3, 3))),
    (writes_a_reshaped_copy_back, writes_a_reshaped_view, RNG.standard_normal(6)),
], ids=["into-the-array", "copy-assigned-back", "transpose", "reshape"])
def test_the_advised_rewrite_keeps_numpys_value_and_is_differentiated(advised, original, x):
    assert advised(x.copy()) == pytest.approx(original(x.copy()), rel=1e-12)
    assert autotrace.function(advised)(x) == pytest.approx(original(x.copy()), rel=1e-12)
    check_every_mode(advised, x)


def written_through_either(x):
    u = x.copy()
    un = np.zeros(3)
    if x.shape[0] > 5:
        un = u
    un[0] = x[0]
    return u * 2.0


def test_a_traced_write_is_advised_to_make_the_array_traced_not_to_drop_a_copy():
    # (u0.copy() of a traced value is traced: zeros in its place would lose its values)
    with pytest.raises(ControlFlowError, match=re.escape(
            "np.zeros_like(x, shape=3) in place of np.zeros(3) (line "
            f"{line_of(written_through_either, 'un = np.zeros(3)')})")):
        autotrace.function(written_through_either)(np.ones(3))
