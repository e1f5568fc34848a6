"""A write into one part of an array, while a view of another part is read afterwards, is
followed; where the parts meet, it is refused when it runs.

Gaussian elimination keeps a view of the pivot row (`pivot = A[k]`) and writes the rows below
it (`A[i] = A[i] - f * pivot`, i > k): NumPy's pivot never changes, and the gradient is the
one autotrace follows. Which row a write changes is known when it runs, so the check runs
then, before the write: it refuses, at the user's line, only a write whose part meets the view
(`A[k] = ...`, or `A[i]` for an i that turns out to be k), in every mode.
"""
import inspect
import re

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.numeric import central_difference, check_every_mode

THIS_FILE = __file__
# A diagonally dominant matrix and a right-hand side, flattened into one argument.
POINT = np.concatenate([(np.arange(9.0).reshape(3, 3) % 4 / 5 + 4 * np.eye(3)).ravel(),
                        [0.5, -1.0, 2.0]])


def line_of(marker: str) -> int:
    with open(THIS_FILE) as source:
        return next(number for number, text in enumerate(source, 1) if marker in text)


def eliminate(A, b):
    A = A.copy()
    b = b.copy()
    n = A.shape[0]
    for k in range(n):
        pivot = A[k]
        for i in range(k + 1, n):
            f = A[i, k] / pivot[k]
            A[i] = A[i] - f * pivot
            b[i] = b[i] - f * b[k]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


def eliminate_in_place(A, b):
    A = A.copy()
    b = b.copy()
    n = A.shape[0]
    for k in range(n):
        pivot = A[k]
        for i in range(k + 1, n):
            f = A[i, k] / pivot[k]
            A[i] -= f * pivot
            b[i] -= f * b[k]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


def factor_with_row_slices(A):
    A = A.copy()
    n = A.shape[0]
    for k in range(n):
        pivot = A[k, :]
        for i in range(k + 1, n):
            f = A[i, k] / pivot[k]
            A[i, k:] = A[i, k:] - f * pivot[k:]
            A[i, k] = f
    return A


def solved(solve):
    def loss(v):
        A = v[:9].reshape(3, 3)
        return np.sum(np.sin(solve(A, v[9:])))
    loss.__name__ = f"solved_by_{solve.__name__}"
    return loss


def factored(v):
    return np.sum(np.sin(factor_with_row_slices(v[:9].reshape(3, 3))))


FOLLOWED = [solved(eliminate), solved(eliminate_in_place), factored]


def check_vmap(function, points):
    got = autotrace.vmap(autotrace.grad(function))(points)
    want = np.stack([central_difference(function, point) for point in points])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("function", FOLLOWED, ids=lambda f: f.__name__)
def test_rows_written_below_a_pivot_view_are_followed_in_every_mode(function):
    A, b = POINT[:9].reshape(3, 3), POINT[9:]
    np.testing.assert_allclose(eliminate(A, b), np.linalg.solve(A, b))
    check_every_mode(function, POINT)
    check_vmap(function, np.stack([POINT, POINT * 1.1]))
    np.testing.assert_allclose(autotrace.grad(autotrace.function(function))(POINT),
                               central_difference(function, POINT), rtol=1e-6, atol=1e-8)


def normalizes_the_pivot_row(v):
    A = v.reshape(3, 3).copy()
    for k in range(3):
        pivot = A[k]
        A[k] = A[k] / pivot[k]  # (the pivot row itself)
        for i in range(k + 1, 3):
            A[i] = A[i] - A[i, k] * pivot
    return np.sum(A ** 2)


def subtracts_from_every_row(v):
    A = v.reshape(3, 3).copy()
    for k in range(3):
        pivot = A[k]
        for i in range(3):
            A[i] = A[i] - 0.1 * pivot  # (i == k too)
    return np.sum(A ** 2)


def scales_a_column_under_a_row_view(v):
    A = v.reshape(3, 3).copy()
    row = A[0]
    A[:, 1] = 2.0 * A[:, 1]  # (a column: it meets the row)
    return np.sum(A * row)


def writes_an_element_of_the_row(v):
    A = v.reshape(3, 3).copy()
    row = A[1]
    A[1, 2] *= 5.0  # (an element of the row)
    return np.sum(A * row)


def writes_rows_by_a_list(v):
    A = v.reshape(3, 3).copy()
    row = A[0]
    A[[1, 2]] = 2.0 * A[[1, 2]]  # (a list index: the part is not known from the copy it reads)
    return np.sum(A * row)


def writes_a_row_under_a_column_view(v):
    A = v.reshape(3, 3).copy()
    column = A[:, 1]
    A[2] = 3.0 * A[2]  # (a row under a column view)
    return np.sum(A * column)


REFUSED = [
    (normalizes_the_pivot_row, "A[k] = ...", "pivot", "pivot = A[k]", "(the pivot row itself)"),
    (subtracts_from_every_row, "A[i] = ...", "pivot", "pivot = A[k]", "(i == k too)"),
    (scales_a_column_under_a_row_view, "A[:, 1] = ...", "row", "row = A[0]",
     "(a column: it meets the row)"),
    (writes_an_element_of_the_row, "A[1, 2] = ...", "row", "row = A[1]",
     "(an element of the row)"),
    (writes_rows_by_a_list, "A[[1, 2]] = ...", "row", "row = A[0]", "(a list index:"),
    (writes_a_row_under_a_column_view, "A[2] = ...", "column", "column = A[:, 1]",
     "(a row under a column view)"),
]


def _modes(function):
    point = np.linspace(1.0, 2.0, 9)
    return {"grad": lambda: autotrace.grad(function)(point),
            "function of grad": lambda: autotrace.function(autotrace.grad(function))(point),
            "forward": lambda: autotrace.forward(function)(point, tangent=np.ones(9)),
            "vmap of grad": lambda: autotrace.vmap(autotrace.grad(function))(
                np.stack([point, point]))}


@pytest.mark.parametrize("mode", ["grad", "function of grad", "forward", "vmap of grad"])
@pytest.mark.parametrize("function, write, view, bound, marker", REFUSED,
                         ids=lambda p: getattr(p, "__name__", None))
def test_a_write_meeting_a_view_read_afterwards_is_refused_in_every_mode(
        function, write, view, bound, marker, mode):
    line = line_of(marker)
    lines, first = inspect.getsourcelines(function)
    bound_at = first + next(n for n, text in enumerate(lines) if bound in text)
    message = (f'File "{THIS_FILE}", line {line}: {write} changes \'A\' in place, and '
               f"'{view}' shares its memory ({bound}, line {bound_at}), read after it")
    with pytest.raises(TransformError, match=re.escape(message)):
        _modes(function)[mode]()


def skips_the_pivot_row(v):
    A = v.reshape(3, 3).copy()
    for k in range(3):
        pivot = A[k]
        for i in range(3):
            if i != k:
                A[i] = A[i] - 0.1 * pivot
    return np.sum(A ** 2)


def writes_an_element_off_the_row(v):
    A = v.reshape(3, 3).copy()
    row = A[1]
    A[2, 1] = 5.0 * A[2, 1]
    A[0, 0] = A[0, 0] * row[1]
    return np.sum(A * row)


@pytest.mark.parametrize("function", [skips_the_pivot_row, writes_an_element_off_the_row],
                         ids=lambda f: f.__name__)
def test_a_write_beside_a_view_is_followed_where_the_parts_never_meet(function):
    point = np.linspace(1.0, 2.0, 9)
    check_every_mode(function, point)
    check_vmap(function, np.stack([point, point * 0.5]))


def test_the_check_is_readable_in_the_generated_code():
    source = autotrace.source(autotrace.grad(skips_the_pivot_row))
    assert re.search(r"refuse_shared_item\(pivot, .*, written=A, index=i\)\n", source)
