"""Writes that an unpacking or a nested function sees later, where the source does not show a
read after the write: refused (or followed, where nothing else sees them), never a wrong
gradient.

- `A[0], A[1] = A[1], A[0]`: Python makes the right side's tuple first, of views of A's rows,
  then assigns from left to right, so NumPy's A[1] gets what `A[0] = ...` left there;
- a nested function or lambda reads the names it closes over when it is called, so a view it
  reads, called after a write into the array, sees the write;
- a nested function writes into an enclosing array through a view it takes itself
  (`r = A[0]; r *= 2.0`), or a function through a view of a global array.
"""
import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.numeric import central_difference, check_every_mode

X = np.array([0.3, -0.7, 1.2])
W = np.arange(9.0).reshape(3, 3)
GLOBAL_MATRIX = np.ones((3, 3))
GLOBAL_VECTOR = np.array([1.0, 2.0, 3.0])


def swaps_rows_by_unpacking(x):
    A = np.outer(x, x) + np.diag(x)
    A[0], A[1] = A[1], A[0]
    return np.sum(A * W)


def assigns_a_column_then_takes_it(x):
    A = np.outer(x, x) + np.diag(x)
    A[:, 0], B = A[:, 1], A[:, 0]
    return np.sum(B * np.array([1.0, 2.0, 3.0])) + np.sum(A * W)


def reads_a_row_in_a_closure_after_a_write(x):
    A = np.outer(x, x)
    row = A[0]

    def energy():
        return np.sum(row * row)
    A[0, 1] = x[2] ** 3
    return energy()


def reads_a_row_in_a_lambda_after_a_write(x):
    A = np.outer(x, x)
    row = A[1]
    e = lambda: np.sum(row ** 2)  # noqa: E731
    A[1, 2] = x[0] ** 2
    return e()


def reads_a_row_through_two_closures(x):
    A = np.outer(x, x)
    row = A[0]

    def inner():
        return row

    def outer():
        return np.sum(inner() ** 2)
    A[0, 1] = x[2] ** 3
    return outer()


def writes_through_a_view_in_a_nested_function(x):
    A = np.outer(x, x)

    def step():
        r = A[0]
        r *= 2.0
    step()
    return np.sum(A * W)


def writes_a_row_of_a_loop_in_a_nested_function(x):
    A = np.outer(x, x)

    def step():
        for r in A:
            r[0] = 1.0
    step()
    return np.sum(A * W)


def writes_through_a_view_of_a_global(x):
    r = GLOBAL_MATRIX[0]
    r *= x[0]
    return np.sum(GLOBAL_MATRIX * x)


COPY_ADVICE = "; autotrace gives 'A' alone a new value. Give 'row' a copy if it should keep"
REFUSED = [
    (swaps_rows_by_unpacking, 3, (
        "A[0] = ... writes into 'A' before A[1] = A[0] is assigned, and the right side's A[0] "
        "is a view of 'A' where that is an array, not a copy: NumPy assigns what the write "
        "left there, which autotrace does not follow. To swap, write A[[0, 1]] = A[[1, 0]], "
        "or copy the item: A[0], A[1] = A[1], A[0].copy()")),
    (assigns_a_column_then_takes_it, 3, (
        "A[:, 0] = ... writes into 'A' before B = A[:, 0] is assigned, and the right side's "
        "A[:, 0] is a view of 'A' where that is an array, not a copy: NumPy assigns what the "
        "write left there, which autotrace does not follow. Copy the item: A[:, 0], B = "
        "A[:, 1], A[:, 0].copy()")),
    (reads_a_row_in_a_closure_after_a_write, 7, (
        "A[0, 1] = ... changes 'A' in place, and 'row' shares its memory (row = A[0], line "
        "{first+2}), read after it on line {first+7} (by energy, which reads it)" + COPY_ADVICE)),
    (reads_a_row_in_a_lambda_after_a_write, 5, (
        "A[1, 2] = ... changes 'A' in place, and 'row' shares its memory (row = A[1], line "
        "{first+2}), read after it on line {first+5} (by e, which reads it)" + COPY_ADVICE)),
    (reads_a_row_through_two_closures, 10, (
        "A[0, 1] = ... changes 'A' in place, and 'row' shares its memory (row = A[0], line "
        "{first+2}), read after it on line {first+10} (by outer, which reads it)"
        + COPY_ADVICE)),
    (writes_through_a_view_in_a_nested_function, 7, (
        "step() changes 'A' in place (r *= ..., line {first+5}), which autotrace does not "
        "follow into this function, and 'A' is read after it on line {first+7}; return the "
        "new value from step instead")),
    (writes_a_row_of_a_loop_in_a_nested_function, 7, (
        "step() changes 'A' in place (r[0] = ..., line {first+5}), which autotrace does not "
        "follow into this function, and 'A' is read after it on line {first+7}; return the "
        "new value from step instead")),
    (writes_through_a_view_of_a_global, 3, (
        "the function changes 'GLOBAL_MATRIX' in place (r *= ...), a global or closure "
        "variable that it does not make")),
]

MODES = {
    "reverse": lambda f, x: autotrace.grad(f)(x),
    "forward": lambda f, x: autotrace.forward(f)(x),
    "traced": lambda f, x: autotrace.function(autotrace.grad(f))(x),
    "batched": lambda f, x: autotrace.vmap(autotrace.grad(f))(np.stack([x, 2.0 * x])),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("func, line, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_a_write_seen_later_through_a_view_is_refused(func, line, message, mode):
    first = func.__code__.co_firstlineno
    expected = message.replace("{first+", "{").format(
        *range(first, first + 20)) if "{first" in message else message
    with pytest.raises(TransformError) as caught:
        MODES[mode](func, X.copy())
    assert caught.value.message.startswith(expected)
    assert caught.value.lineno == first + line - 1


def swaps_two_numbers(x):
    a = x * 1.0
    a[0], a[2] = a[2], a[0]  # items of a vector are numbers: a swap
    return np.sum(a * np.arange(1.0, 4.0))


def swaps_two_arrays_of_a_list(x):
    items = [x * 1.0, np.sin(x)]
    items[0], items[1] = items[1], items[0]
    return np.sum(items[0] * np.arange(1.0, 4.0))


def swaps_two_arrays_of_a_list_it_is_given(x, items):
    items[0], items[1] = items[1], items[0]
    return np.sum(items[0] * x)


def swaps_rows_by_a_list_index(x):
    A = np.outer(x, x) + np.diag(x)
    A[[0, 1]] = A[[1, 0]]
    return np.sum(A * W)


def swaps_rows_by_unpacking_copies(x):
    A = np.outer(x, x) + np.diag(x)
    A[0], A[1] = A[1], A[0].copy()
    return np.sum(A * W)


def unpacks_a_row_with_another_value(x):
    A = np.outer(x, x)
    r, s = A[0], x * 2.0
    A[1, 1] = 0.0
    return np.sum(A * W) + np.sum(s * x)


def reads_the_array_itself_in_a_closure(x):
    A = np.outer(x, x)

    def energy():
        return np.sum(A[0] * A[0])
    A[0, 1] = x[2] ** 3
    return energy()


def takes_a_view_inside_a_closure(x):
    A = np.outer(x, x)

    def energy():
        row = A[0]
        return np.sum(row * row)
    A[0, 1] = x[2] ** 3
    return energy()


def reads_a_view_in_a_closure_before_a_write(x):
    A = np.outer(x, x)
    row = A[0]
    e = lambda: np.sum(row * row)  # noqa: E731
    before = e()
    A[0, 1] = x[2] ** 3
    return before + np.sum(A)


def scales_a_copy_in_a_nested_function(x):
    A = np.outer(x, x)

    def scaled():
        r = A[0] * 1.0
        r *= 2.0
        return r
    return np.sum(scaled() * x) + np.sum(A * W)


def adds_an_item_of_a_global_vector(x):
    total = GLOBAL_VECTOR[1]
    total += np.sum(x ** 2)
    return total * x[0]


FOLLOWED = [swaps_two_numbers, swaps_two_arrays_of_a_list, swaps_rows_by_a_list_index,
            swaps_rows_by_unpacking_copies, unpacks_a_row_with_another_value,
            reads_the_array_itself_in_a_closure, takes_a_view_inside_a_closure,
            reads_a_view_in_a_closure_before_a_write, scales_a_copy_in_a_nested_function,
            adds_an_item_of_a_global_vector]


@pytest.mark.parametrize("func", FOLLOWED, ids=lambda f: f.__name__)
def test_what_no_later_read_sees_is_followed_in_every_mode(func):
    check_every_mode(func, X.copy())
    batch = np.stack([X, 2.0 * X])
    np.testing.assert_allclose(
        autotrace.vmap(autotrace.grad(func))(batch),
        np.stack([central_difference(func, row) for row in batch]), rtol=1e-6, atol=1e-8)


def test_a_given_list_of_arrays_is_swapped_and_a_given_matrix_refused():
    items = [np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])]
    gradient = autotrace.grad(swaps_two_arrays_of_a_list_it_is_given)(X, list(items))
    np.testing.assert_allclose(gradient, items[1])
    with pytest.raises(TransformError, match=r"A\[\[0, 1\]\] = A\[\[1, 0\]\]|items\[0\]\.copy"):
        autotrace.grad(swaps_two_arrays_of_a_list_it_is_given)(X, np.outer(X, X))


# --- the advice of refusals names the view to copy, or a rewrite autotrace follows -----------

def swaps_through_a_name_for_a_row(x):
    A = np.outer(x, x)
    r = A[0]
    A[0] = A[1]
    A[1] = r
    return np.sum(A * W)


def scales_the_rows_it_enumerates(x):
    A = np.outer(x, x)
    for i, row in enumerate(A):
        row *= (i + 1.0)
    return np.sum(A * W)


def scales_a_row_it_unpacked(x):
    A = np.outer(x, x)
    r0, r1, r2 = A
    r1 *= x[0]
    return np.sum(A * W)


def adds_into_a_slice_by_out(x):
    a = np.concatenate([x, x])
    np.add(a[:3], a[3:], out=a[3:])
    return np.sum(a * np.arange(6.0))


def multiplies_into_an_overlapping_slice_by_out(x):
    # (NumPy's ufuncs read inputs that overlap out as if copied first)
    a = np.concatenate([x, x])
    np.multiply(a[:4], a[2:], out=a[2:])
    return np.sum(a * np.arange(6.0))


def returns_the_slice_written_by_out(x):
    a = np.concatenate([x, x])
    b = np.sin(a[1:], out=a[:-1])
    return np.sum(a * np.arange(6.0)) + np.sum(b * b)


def adds_into_a_slice(x):
    a = np.concatenate([x, x])
    a[3:] = np.add(a[:3], a[3:])
    return np.sum(a * np.arange(6.0))


def writes_into_a_transpose(x):
    A = np.outer(x, x)
    A.T[0] = x * 3.0
    return np.sum(A * W)


def writes_a_column(x):
    A = np.outer(x, x)
    A[:, 0] = x * 3.0
    return np.sum(A * W)


def puts_a_value(x):
    a = x * 1.0
    a.put([0], 2.0)
    return np.sum(a ** 2)


def multiplies_into_its_out_by_position(x):
    a = x * 1.0
    c = a
    np.multiply(a, x, a)
    return np.sum(c)


ADVICE = [
    (swaps_through_a_name_for_a_row, "Give 'r' a copy if it should keep the old value "
     "(r = A[0].copy()), or write into 'r' too"),
    (scales_the_rows_it_enumerates, "work on a copy, e.g. row = row.copy() (first thing in "
     "the loop)"),
    (scales_a_row_it_unpacked, "work on a copy, e.g. r1 = r1.copy() right after line {2}"),
    (writes_into_a_transpose, "autotrace can assign into `name[index]` only, not through A.T "
     "(A.T[0] = ...): write into the array itself, e.g. for a matrix A[:, 0] = ..."),
    (puts_a_value, "autotrace cannot differentiate .put(), which changes 'a' in place; "
     "compute a new value instead: a[np.unravel_index([0], a.shape)] = 2.0"),
    (multiplies_into_its_out_by_position, "np.multiply(a, x, a) changes 'a' in place, and 'c' "
     "shares its memory (c = a, line {2}), read after it on line {4}; autotrace gives 'a' alone "
     "a new value. Give 'c' a copy if it should keep the old value (c = a.copy())"),
]


@pytest.mark.parametrize("func, advice", ADVICE, ids=[c[0].__name__ for c in ADVICE])
def test_the_advice_names_the_view_and_a_rewrite_that_is_followed(func, advice):
    first = func.__code__.co_firstlineno
    with pytest.raises(TransformError) as caught:
        autotrace.grad(func)(X.copy())
    assert advice.format(*range(first, first + 10)) in caught.value.message


@pytest.mark.parametrize("func", [adds_into_a_slice, writes_a_column],
                         ids=lambda f: f.__name__)
def test_the_rewrites_advised_are_followed(func):
    check_every_mode(func, X.copy())


@pytest.mark.parametrize("func", [adds_into_a_slice_by_out,
                                  multiplies_into_an_overlapping_slice_by_out,
                                  returns_the_slice_written_by_out], ids=lambda f: f.__name__)
def test_out_into_a_slice_gives_numpys_value_in_every_mode(func):
    # out=a[3:] is a view of a: the call is followed as the write a[3:] = np.add(...)
    # (transforms/front/out_arguments.py), no longer refused with that rewrite as advice.
    check_every_mode(func, X.copy())
    np.testing.assert_allclose(autotrace.function(func)(X.copy()), func(X.copy()), rtol=1e-12)
    batch = np.stack([X, 2.0 * X, -X])
    np.testing.assert_allclose(autotrace.vmap(func)(batch), [func(x.copy()) for x in batch],
                               rtol=1e-12)
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(func))(batch),
                               [central_difference(func, x.copy()) for x in batch],
                               rtol=1e-6, atol=1e-8)
