"""NumPy calls whose result is a view of an argument, the argument itself, or a new array.

np.einsum of one operand that sums nothing ('ij->ji', 'ii->i') is a writeable view of it;
np.array(A, copy=None), A.astype(A.dtype, copy=False), np.asarray_chkfinite(A),
np.real_if_close(A) of a real A, np.rollaxis(A, ...) and np.linalg.matrix_power(A, 1) give A
itself or a view. A traced function follows a write through them as NumPy does; a derivative,
which follows values, refuses a write that another name sees, naming both lines. Fancy and
boolean indexing of an array (`A[[0, 2]]`, `A[A > 0]`), np.diff of n=1 and an einsum that sums
make new arrays: writes into them are differentiated.

Keywords the rules now take (astype's copy=, np.sum's and np.mean's where=, np.diff's prepend=
and append=, np.linalg.svd's compute_uv=False) are checked against finite differences in every
mode, traced and batched too.
"""
import inspect
import re

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.numeric import (assert_gradients_eager_and_traced, central_difference,
                           check_every_mode)

X = np.array([0.3, -0.7, 1.2])


def line_of(function, marker: str) -> int:
    lines, first = inspect.getsourcelines(function)
    found = [first + index for index, line in enumerate(lines) if marker in line]
    assert len(found) == 1, marker
    return found[0]


# --- views the transforms did not know: a write through them changes the array ------------

def einsum_diagonal(x):
    A = np.outer(x, x) + 1.0
    d = np.einsum('ii->i', A)      # a writeable view of A's diagonal
    d *= x
    return np.sum(A * A)


def einsum_transpose(x):
    A = np.outer(x, x) + 1.0
    v = np.einsum('ij->ji', A)     # a view of A
    v[0, 0] = 3.0 * x[0] * x[1]
    return np.sum(A * A)


def einsum_optimized(x):
    A = np.outer(x, x) + 1.0
    v = np.einsum('ij->ji', A, optimize=True)
    A[0, 1] = 5.0 * x[2]
    return np.sum(v * v * np.arange(1.0, 10.0).reshape(3, 3))


def array_without_copy(x):
    A = np.outer(x, x) + 1.0
    v = np.array(A, copy=None)     # A itself: NumPy 2 copies only where it must
    v[0, 0] = 3.0 * x[0] * x[1]
    return np.sum(A * A)


def astype_without_copy(x):
    A = np.outer(x, x) + 1.0
    v = A.astype(np.float64, copy=None)
    A[0, 0] = 3.0 * x[0] * x[1]
    return np.sum(v * v * np.arange(1.0, 10.0).reshape(3, 3))


def matrix_power_one(x):
    A = np.outer(x, x) + 1.0
    v = np.linalg.matrix_power(A, 1)   # A itself
    v[0, 0] = 3.0 * x[0] * x[1]
    return np.sum(A * A)


def checked_finite(x):
    A = np.outer(x, x) + 1.0
    v = np.asarray_chkfinite(A)    # A itself
    v[0, 0] = 3.0 * x[0] * x[1]
    return np.sum(A * A)


def rolled_axis(x):
    A = np.outer(x, x) + 1.0
    v = np.rollaxis(A, 1)          # a view of A
    v[0, 0] = 3.0 * x[0] * x[1]
    return np.sum(A * A)


def real_if_close(x):
    A = np.outer(x, x) + 1.0
    v = np.real_if_close(A)        # A itself, A being real
    v[0, 0] = 3.0 * x[0] * x[1]
    return np.sum(A * A)


WRITES_THROUGH_VIEWS = [
    (einsum_diagonal, "d *= ", "d = np.einsum('ii->i', A)"),
    (einsum_transpose, "v[0, 0] = ", "v = np.einsum('ij->ji', A)"),
    (array_without_copy, "v[0, 0] = ", "v = np.array(A, copy=None)"),
    (matrix_power_one, "v[0, 0] = ", "v = np.linalg.matrix_power(A, 1)"),
    (checked_finite, "v[0, 0] = ", "v = np.asarray_chkfinite(A)"),
    (rolled_axis, "v[0, 0] = ", "v = np.rollaxis(A, 1)"),
    (real_if_close, "v[0, 0] = ", "v = np.real_if_close(A)"),
]


@pytest.mark.parametrize("function, write, bound", WRITES_THROUGH_VIEWS,
                         ids=[case[0].__name__ for case in WRITES_THROUGH_VIEWS])
def test_a_write_through_a_view_a_function_returned_is_refused(function, write, bound):
    # (were differentiated as writes into new arrays: wrong values and gradients)
    message = (f"line {line_of(function, write)}: .*which may share its memory with 'A' "
               + re.escape(f"({bound}, line {line_of(function, bound)})"))
    with pytest.raises(TransformError, match=message):
        autotrace.grad(function)(X)
    with pytest.raises(TransformError, match=message):
        autotrace.function(autotrace.grad(function))(X)


@pytest.mark.parametrize("function", [einsum_optimized, astype_without_copy],
                         ids=["einsum_optimized", "astype_without_copy"])
def test_a_write_into_the_array_a_view_reads_is_refused(function):
    line = line_of(function, "A[0, ")
    with pytest.raises(TransformError, match=f"line {line}: A.* changes 'A' in place, and 'v' "
                                             f"shares its memory"):
        autotrace.grad(function)(X)


@pytest.mark.parametrize("function", [einsum_diagonal, einsum_transpose, einsum_optimized,
                                      array_without_copy, astype_without_copy,
                                      matrix_power_one],
                         ids=lambda function: function.__name__)
def test_a_traced_function_writes_through_the_view_as_numpy(function):
    np.testing.assert_allclose(autotrace.function(function)(X), function(X.copy()))


def test_a_traced_einsum_view_of_a_batch_follows_each_write():
    batch = np.stack([X, X * 1.5, -X])
    expected = np.array([einsum_diagonal(row) for row in batch])
    np.testing.assert_allclose(autotrace.vmap(einsum_diagonal)(batch), expected)


@pytest.mark.parametrize("subscripts, shape, view", [
    ("ii->i", (3, 3), True), ("ij->ji", (3, 4), True), ("ij", (3, 4), True),
    ("ji", (3, 4), True), ("...ii->...i", (2, 3, 3), True), ("iij->ji", (3, 3, 2), True),
    ("ii", (3, 3), False), ("ii->", (3, 3), False), ("ij->i", (3, 4), False),
    ("ijk->ij", (2, 3, 4), False)])
def test_a_traced_einsum_is_a_view_where_numpy_s_is(subscripts, shape, view):
    operand = np.arange(float(np.prod(shape))).reshape(shape)
    assert np.shares_memory(np.einsum(subscripts, operand), operand) == view

    def written(a):
        a = a * 1.0
        e = np.einsum(subscripts, a)
        e *= 2.0
        return a, e

    for got, expected in zip(autotrace.function(written)(operand), written(operand.copy())):
        np.testing.assert_allclose(got, expected)


# --- new arrays the analysis took for views: writes into them are differentiated ------------

def fancy_list(x):
    A = x * 1.0
    c = A[[0, 2]]          # a copy in NumPy
    c *= 10.0
    return np.sum(A) + np.sum(c * x[:2])


def boolean_mask(x):
    A = x * 1.0
    c = A[A > 0]           # a copy
    c *= 10.0
    return np.sum(A * x) + np.sum(c)


def index_array(x):
    A = np.outer(x, x) + 1.0
    rows = np.array([2, 0])
    c = A[rows, 1:]        # advanced indexing with a slice: a copy too
    c[0, 0] = 7.0 * x[1]
    A[0, 0] = 2.0
    return np.sum(A * A) + np.sum(c * c)


def first_differences(x):
    A = np.outer(x, x) + 1.0
    v = np.diff(A)         # n=1: a new array
    v[0, 0] = 3.0 * x[0] * x[1]
    return np.sum(A * A) + np.sum(v * v)


def summing_einsum(x):
    A = np.outer(x, x) + 1.0
    v = np.einsum('ij->i', A)
    v[0] = 3.0 * x[0] * x[1]
    return np.sum(A * A) + np.sum(v * v)


@pytest.mark.parametrize("function", [fancy_list, boolean_mask, index_array,
                                      first_differences, summing_einsum],
                         ids=lambda function: function.__name__)
def test_a_write_into_a_copy_is_differentiated(function):
    check_every_mode(function, X)
    if function is boolean_mask:
        return  # (how many elements a mask selects differs between examples: no vmap)
    batch = np.stack([X, X * 1.5])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(function))(batch),
                               [central_difference(function, row) for row in batch],
                               rtol=1e-6, atol=1e-8)


def an_item_of_a_list(x):
    A = x * 1.0
    rows = [A, x * 2.0]
    c = rows[[0, 1][0]]    # an item of a list, not a copy
    c *= 10.0
    return np.sum(rows[0] * x)


def differences_of_order_zero(x):
    A = x * 1.0
    v = np.diff(A, n=0)    # A itself
    v[0] = 3.0
    return np.sum(A * x)


@pytest.mark.parametrize("function, write", [(an_item_of_a_list, "c *= "),
                                             (differences_of_order_zero, "v[0] = ")],
                         ids=["an_item_of_a_list", "differences_of_order_zero"])
def test_what_may_still_share_memory_stays_refused(function, write):
    with pytest.raises(TransformError, match=f"line {line_of(function, write)}: .*may share "
                                             f"its memory"):
        autotrace.grad(function)(X)


# --- keywords the rules take ----------------------------------------------------------------

def astype_copy_false(x):
    y = x.astype(np.float64, copy=False)
    return np.sum(y * y * x)


def astype_keywords(x):
    y = x.astype(np.float64, order="C", casting="same_kind", copy=True)
    return np.sum(np.sin(y) * x)


def sum_where(x):
    return np.sum(x ** 3, where=x > 0)


def sum_where_axis(x):
    M = np.outer(x, x)
    return np.sum(np.sum(np.sin(M), axis=0, where=np.array([True, False, True])) ** 2)


def mean_where(x):
    return np.mean(np.exp(x), where=x < 1.0)


def mean_where_keepdims(x):
    M = np.outer(x, x) + x
    return np.sum(np.mean(M ** 2, axis=1, keepdims=True, where=M > 0.0) ** 2)


def differences_prepended(x):
    return np.sum(np.diff(x, prepend=0.5) ** 2)


def differences_joined(x):
    return np.sum(np.diff(x ** 2, n=2, prepend=x[0] * 2.0, append=x[1:]) ** 2)


def differences_along_rows(x):
    M = np.outer(x, x)
    return np.sum(np.diff(M, axis=0, append=M[:1] * 3.0) ** 3)


def singular_values(x):
    M = np.outer(x, x) + np.diag(x + 2.0)
    return np.sum(np.linalg.svd(M, compute_uv=False) ** 2)


KEYWORDS = [astype_copy_false, astype_keywords, sum_where, sum_where_axis, mean_where,
            mean_where_keepdims, differences_prepended, differences_joined,
            differences_along_rows, singular_values]


@pytest.mark.parametrize("function", KEYWORDS, ids=lambda function: function.__name__)
def test_a_call_with_these_keywords_is_differentiated(function):
    # (were refused: the rules took no such keyword, or svd's raised without the user's line)
    check_every_mode(function, X)
    batch = np.stack([X, X * 1.5])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(function))(batch),
                               [central_difference(function, row) for row in batch],
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("function", [sum_where, mean_where, differences_joined],
                         ids=lambda function: function.__name__)
def test_a_traced_function_takes_these_keywords(function):
    np.testing.assert_allclose(autotrace.function(function)(X), function(X))
    assert_gradients_eager_and_traced(function, X)


def test_a_traced_mean_where_computes_in_the_argument_s_dtype():
    x = X.astype(np.float32)
    traced = autotrace.function(lambda x: np.mean(x, where=x > 0))
    assert traced(x).dtype == np.mean(x, where=x > 0).dtype == np.float32
    np.testing.assert_allclose(traced(x), np.mean(x, where=x > 0), rtol=1e-6)
    with pytest.raises(ValueError, match="non-broadcastable"):
        autotrace.function(lambda x: np.sum(x, where=np.ones((2, 3), bool)))(X)
