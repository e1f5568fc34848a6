"""Python's and NumPy's semantics of writes under the transforms.

A new array stays a new array: the derivatives of functions that write into an array they
computed must neither change the caller's arrays nor read values that a write through
another name has changed. And a write keeps what NumPy keeps.
"""
import inspect
import os

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError
from autotrace import TransformError
from autotrace.testing import check_grads


def times_one_then_write(x):
    A = x * 1.0
    A[0] = 0.0
    return np.sum(A) * x[0]


def one_times_then_write(x):
    A = 1.0 * x
    A[0] = 0.0
    return np.sum(A) * x[0]


def divided_by_one_then_write(x):
    A = x / 1.0
    A[0] = 0.0
    return np.sum(A) * x[0]


def power_one_then_write(x):
    A = x ** 1
    A[0] = 0.0
    return np.sum(A) * x[0]


def negated_twice_then_write(x):
    A = -(-x)
    A[0] = 0.0
    return np.sum(A) * x[0]


def reshaped_times_one_then_write(x):
    A = x.reshape(3) * 1.0
    A[0] = 0.0
    return np.sum(A) * x[0]


COPIES_THEN_WRITE = [times_one_then_write, one_times_then_write, divided_by_one_then_write,
                     power_one_then_write, negated_twice_then_write,
                     reshaped_times_one_then_write]


@pytest.mark.parametrize("function", COPIES_THEN_WRITE, ids=lambda f: f.__name__)
def test_an_identity_operation_makes_a_new_array(function):
    # f = (x1 + x2) * x0: the gradient is (x1 + x2, x0, x0)
    x = np.array([1.0, 2.0, 3.0])
    value, gradient = autotrace.value_and_grad(function)(x)
    assert value == 5.0
    np.testing.assert_allclose(gradient, [5.0, 1.0, 1.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("function", COPIES_THEN_WRITE, ids=lambda f: f.__name__)
def test_an_identity_operation_makes_a_new_tangent(function):
    x = np.array([1.0, 2.0, 3.0])
    tangent = np.array([1.0, 1.0, 0.0])
    value, derivative = autotrace.forward(function)(x, tangent=tangent)
    assert (value, derivative) == (5.0, 6.0)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tangent, [1.0, 1.0, 0.0])


def square_sum(x):
    return np.sum(x ** 2)


def test_identities_inside_arithmetic_are_still_folded():
    # power's rule gives `2 * x ** (2 - 1)`: the `** 1` feeds a product, and goes
    assert "* 2 * x\n" in autotrace.source(autotrace.grad(square_sum))
    assert "dx * 2 * x," in autotrace.source(autotrace.forward(square_sum))


# Writes that NumPy makes through other names are refused (tests/test_errors.py); these,
# which change nothing another name sees, are differentiated.

def adds_to_a_float_alias(a, b):
    s = a
    s += b
    return s * s


def extends_a_slice_of_a_list(x):
    items = [x, 2.0 * x]
    head = items[:1]
    head += [x]
    return np.sum(head[0] * head[1])


def accumulates_from_an_item(x):
    total = x[0]
    total += x[1]
    return total * x[2]


def test_writes_that_no_other_name_sees():
    assert autotrace.grad(adds_to_a_float_alias, wrt=(0, 1))(1.5, 2.0) == (7.0, 7.0)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(autotrace.grad(extends_a_slice_of_a_list)(x), 2 * x)
    np.testing.assert_allclose(autotrace.grad(accumulates_from_an_item)(x), [3.0, 3.0, 3.0])


# Assignment through an integer array that repeats a position keeps the last write, as NumPy
# does: the values written before it get no gradient.

def assign_repeated(x):
    A = np.zeros(3)
    A[np.array([0, 0, 2])] = x
    return np.sum(A * np.arange(1, 4))


def add_repeated(x):
    A = np.zeros(3)
    A[[0, 0, 2]] += x  # buffered: A[0] is x[1] alone
    return np.sum(A * np.arange(1, 4))


def assign_repeated_in_two_dimensions(x):
    A = np.zeros((2, 3))
    A[[1, 0, 1], [2, 2, 2]] = x       # A[1, 2] is x[2]
    A[:, [0, 0]] = x[:2] * 2.0        # column 0 is 2 x[1]
    return np.sum(A * np.arange(1.0, 7.0).reshape(2, 3))


@pytest.mark.parametrize("function, expected", [
    (assign_repeated, [0.0, 1.0, 3.0]),
    (add_repeated, [0.0, 1.0, 3.0]),
    (assign_repeated_in_two_dimensions, [0.0, 13.0, 6.0]),
], ids=["assign", "add", "two-dimensions"])
def test_repeated_indices_keep_the_last_write(function, expected):
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(autotrace.grad(function)(x), expected)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(function))(x), expected)
    check_grads(function, (x,), order=2, modes=("reverse", "forward"))


# --- Writes into memory another name reads afterwards ------------------------------------------
# NumPy changes every name that shares the memory; autotrace gives the written name alone a new
# value. Where another name is read after the write, the write is refused in every mode.

def line_of(func, marker: str) -> int:
    """The line of this file where `marker` occurs in the source of `func` (exactly once)."""
    lines, first = inspect.getsourcelines(func)
    found = [first + i for i, line in enumerate(lines) if marker in line]
    assert len(found) == 1, f"{marker!r} occurs {len(found)} times in {func.__name__}"
    return found[0]


class Box:
    def __init__(self, w):
        self.w = w


def same(value):
    return value


def adds_through_an_alias(x):
    A = x * 1.0
    B = A
    A += x
    return np.sum(B * x)


def assigns_through_an_alias(x):
    A = x * 1.0
    B = A
    A[0] = 10.0
    return np.sum(B * x)


def doubles_an_array_a_list_holds(x):
    A = x * 1.0
    L = [A]
    A *= 2.0
    return np.sum(L[0] * x)


def writes_under_a_slice(x):
    A = x * 1.0
    B = A[1:]
    A[1] = 5.0
    return np.sum(B * x[1:])


def writes_under_a_transpose(x):
    A = np.outer(x, x)
    B = A.T
    A[0, 1] = 0.0
    return np.sum(B * 2.0)


def writes_a_reshaped_view(x):
    A = x * 1.0
    B = A.reshape(2, 1)
    B[0, 0] = 0.0
    return np.sum(A * x)


def writes_through_asarray(x):
    A = x * 1.0
    B = np.asarray(A)
    B[0] = 0.0
    return np.sum(A * x)


def writes_through_a_matrix_transpose(x):
    # np.matrix_transpose's view was once missing from the analysis, which took B for a new
    # array: the write into A went unseen and the gradient came out wrong.
    A = np.outer(x, x)
    B = np.matrix_transpose(A)
    B[0, 1] = 0.0
    return np.sum(A)


def writes_an_array_a_dict_holds(x):
    A = x * 1.0
    d = {"a": A}
    A[0] = 0.0
    return np.sum(d["a"] * x)


def writes_an_array_a_tuple_holds(x):
    A = x * 1.0
    pair = (A, x)
    A[0] = 0.0
    return np.sum(pair[0] * x)


def writes_an_array_an_object_holds(x):
    A = x * 1.0
    box = Box(A)
    A[0] = 0.0
    return np.sum(box.w * x)


def writes_what_a_function_returned(x):
    A = x * 1.0
    B = same(A)
    A[0] = 0.0
    return np.sum(B * x)


def writes_what_a_local_lambda_returned(x):
    # autotrace reads the lambda: it returns its argument, so B is A
    same_here = lambda z: z  # noqa: E731
    A = x * 1.0
    B = same_here(A)
    A[0] = 0.0
    return np.sum(B * x)


def writes_a_name_a_local_function_returned(x):
    # the function returns y of the enclosing function: v is y
    def get():
        return y
    y = x * 2.0
    v = get()
    v += x
    return np.sum(y * x)


def appends_to_a_shared_list(x):
    L = [x]
    M = L
    L.append(x * 2.0)
    return np.sum(M[-1])


def adds_at_under_an_alias(x):
    A = x * 1.0
    B = A
    np.add.at(A, np.array([0, 0]), 1.0)
    return np.sum(B * x)


def writes_in_a_loop_what_was_shared(x):
    A = x * 1.0
    B = A
    total = 0.0
    for i in range(2):
        total = total + np.sum(B * x)
        A[i] = 0.0
    return total


def extends_a_shared_list(x):
    L = [x]
    M = L
    L += [x * 2.0]
    return np.sum(M[-1])


def shares_through_a_break(x):
    A = x * 1.0
    B = x * 2.0
    for i in range(3):
        B = A
        if i == 0:
            break
        B = x * 3.0
    A[0] = 0.0
    return np.sum(B * x)


def shares_in_a_while_loop(x):
    A = x * 1.0
    rows = []
    k = 0
    while k < 2:
        rows.append(A)
        k += 1
    A[1] = 0.0
    return np.sum(rows[0] * x)


def shares(what, written, other, bound, read, advice, shown=None, again=False):
    """The refusal's words; `again`: the read is the loop's next iteration's, before the
    write."""
    next_iteration = " (in the loop's next iteration)" if again else ""
    return lambda func: (
        f"{what} changes {written!r} in place, and {other!r} shares its memory "
        f"({shown or bound}, line {line_of(func, bound)}), read after it on line "
        f"{line_of(func, read)}{next_iteration}; autotrace "
        f"gives {written!r} alone a new value. {advice}")


def copy_advice(written, other, bound=None):
    """The advice of a refusal: give `other` a copy, where it was bound (`bound`, `B = A[1:]`)
    to a name, an item or an attribute (`B = A[1:].copy()`), else a copy of `written` to take
    (`rows.append(A.copy())`)."""
    copied = f"{bound}.copy()" if bound else f"{written}.copy()"
    return (f"Give {other!r} a copy if it should keep the old value ({copied}), or "
            f"write into {other!r} too")


def views(what, written, other, bound, read, copy, back=None):
    """The refusal of a write into `written`, bound to memory `other` has (`bound`): work on
    a copy (`copy`) where `other` should keep its old values, else write into `other`, or, given
    `back`, assign the changed copy back to `other` (`A[...] = B.reshape(A.shape)`)."""
    advice = (f"for {other!r} to change as NumPy changes it, change a copy and assign it "
              f"back: {written} = {copy}; ...; {back}; if {other!r} should keep its old "
              f"values, work on the copy alone" if back else
              f"if {other!r} should keep its old values, work on a copy, e.g. {written} = "
              f"{copy}; if it should change too, as in NumPy, write into {other!r} itself")
    return lambda func: (
        f"{what} writes into {written!r}, which may share its memory with {other!r} ({bound}, "
        f"line {line_of(func, bound)}), read after it on line {line_of(func, read)}: the write "
        f"changes {other!r} too, which autotrace does not follow; {advice}")


SHARED_WRITES = [
    (adds_through_an_alias, "A += x", shares(
        "A += ...", "A", "B", "B = A", "return", "Write A = A + ... if 'B' should keep the old "
        "value, or update 'B' too")),
    (assigns_through_an_alias, "A[0] = 10.0", shares(
        "A[0] = ...", "A", "B", "B = A", "return", copy_advice("A", "B", "B = A"))),
    (doubles_an_array_a_list_holds, "A *= 2.0", shares(
        "A *= ...", "A", "L", "L = [A]", "return", "Write A = A * ... if 'L' should keep the "
        "old value, or update 'L' too")),
    (writes_under_a_slice, "A[1] = 5.0", shares(
        "A[1] = ...", "A", "B", "B = A[1:]", "return", copy_advice("A", "B", "B = A[1:]"))),
    (writes_under_a_transpose, "A[0, 1] = 0.0", shares(
        "A[0, 1] = ...", "A", "B", "B = A.T", "return", copy_advice("A", "B", "B = A.T"))),
    (writes_a_reshaped_view, "B[0, 0] = 0.0", views(
        "B[0, 0] = ...", "B", "A", "B = A.reshape(2, 1)", "return", "A.reshape(2, 1).copy()",
        "A[...] = B.reshape(A.shape)")),
    (writes_through_asarray, "B[0] = 0.0", views(
        "B[0] = ...", "B", "A", "B = np.asarray(A)", "return", "np.asarray(A).copy()")),
    (writes_through_a_matrix_transpose, "B[0, 1] = 0.0", views(
        "B[0, 1] = ...", "B", "A", "B = np.matrix_transpose(A)", "return",
        "np.matrix_transpose(A).copy()")),
    (writes_an_array_a_dict_holds, "A[0] = 0.0", shares(
        "A[0] = ...", "A", "d", 'd = {"a": A}', "return", copy_advice("A", "d"),
        shown="d = {'a': A}")),
    (writes_an_array_a_tuple_holds, "A[0] = 0.0", shares(
        "A[0] = ...", "A", "pair", "pair = (A, x)", "return", copy_advice("A", "pair"))),
    (writes_an_array_an_object_holds, "A[0] = 0.0", shares(
        "A[0] = ...", "A", "box", "box = Box(A)", "return", copy_advice("A", "box"))),
    (writes_what_a_function_returned, "A[0] = 0.0", shares(
        "A[0] = ...", "A", "B", "B = same(A)", "return np.sum", copy_advice("A", "B"))),
    (writes_what_a_local_lambda_returned, "A[0] = 0.0", shares(
        "A[0] = ...", "A", "B", "B = same_here(A)", "return np.sum", copy_advice("A", "B"))),
    (writes_a_name_a_local_function_returned, "v += x", views(
        "v += ...", "v", "y", "v = get()", "return np.sum", "get().copy()")),
    (appends_to_a_shared_list, "L.append", shares(
        "L.append(...)", "L", "M", "M = L", "return", copy_advice("L", "M", "M = L"))),
    (adds_at_under_an_alias, "np.add.at", shares(
        "np.add.at(...)", "A", "B", "B = A", "return", copy_advice("A", "B", "B = A"))),
    (extends_a_shared_list, "L += [x * 2.0]", shares(
        "L += ...", "L", "M", "M = L", "return", "Write L = L + ... if 'M' should keep the old "
        "value, or update 'M' too")),
    (shares_through_a_break, "A[0] = 0.0", shares(
        "A[0] = ...", "A", "B", "B = A", "return", copy_advice("A", "B", "B = A"))),
    (shares_in_a_while_loop, "A[1] = 0.0", shares(
        "A[1] = ...", "A", "rows", "rows.append(A)", "return", copy_advice("A", "rows"))),
    (writes_in_a_loop_what_was_shared, "A[i] = 0.0", shares(
        "A[i] = ...", "A", "B", "B = A", "total = total +", copy_advice("A", "B", "B = A"),
        again=True)),
]

MODES = {
    "reverse": lambda f, x: autotrace.grad(f)(x),
    "forward": lambda f, x: autotrace.forward(f)(x),
    "traced": lambda f, x: autotrace.function(autotrace.grad(f))(x),
    "second-order": lambda f, x: autotrace.grad(lambda y: np.sum(autotrace.grad(f)(y)))(x),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("func, marker, message", SHARED_WRITES,
                         ids=[case[0].__name__ for case in SHARED_WRITES])
def test_a_write_another_name_reads_afterwards_is_refused(func, marker, message, mode):
    with pytest.raises(TransformError) as caught:
        MODES[mode](func, np.array([1.0, 2.0]))
    error = caught.value
    assert error.message == message(func)
    assert error.lineno == line_of(func, marker)
    assert os.path.abspath(error.filename) == os.path.abspath(__file__)
    assert error.construct == "write into shared memory"


def test_the_first_reproducers_are_refused_not_wrong():
    # They gave [2, 4] (true [4, 8]) and [11, 4] (true [10, 4]).
    for func in (adds_through_an_alias, assigns_through_an_alias,
                 doubles_an_array_a_list_holds):
        with pytest.raises(TransformError):
            autotrace.grad(func)(np.array([1.0, 2.0]))


def accumulates_rows(x):
    total = x[0]
    total += x[1]  # x[0] is a row of x where x has two axes, a number where it has one
    return np.sum(total * x[1])


def test_an_augmented_assignment_is_checked_where_it_runs_in_place():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(autotrace.grad(accumulates_rows)(x), [2.0, 5.0, 0.0])
    with pytest.raises(TransformError) as caught:
        autotrace.grad(accumulates_rows)(np.ones((2, 3)))
    assert caught.value.message == (
        f"total += ... writes into 'total', which may share its memory with 'x' (total = x[0], "
        f"line {line_of(accumulates_rows, 'total = x[0]')}), read after it on line "
        f"{line_of(accumulates_rows, 'return')}: the write changes 'x' too, which autotrace "
        f"does not follow; for 'x' to change as NumPy changes it, write into it, x[0] = x[0] "
        f"+ ..., or change a copy and assign it back: total = x[0].copy(); ...; x[0] = total; "
        f"if 'x' should keep its old values, work on the copy alone")
    assert caught.value.lineno == line_of(accumulates_rows, "total += x[1]")


# Writes that no other name reads afterwards are followed.

def writes_after_the_last_read_of_an_alias(x):
    A = x * 1.0
    B = A
    s = np.sum(B * x)
    A[0] = 10.0
    A += x
    return s + np.sum(A * x)


def rebinds_the_alias_before_reading_it(x):
    A = x * 1.0
    B = A
    A *= x
    B = x * 3.0
    return np.sum(A * B)


def writes_a_view_of_a_local_read_alone(x):
    A = x * 2.0
    v = A[:2]
    v[0] = 100.0
    v *= x[:2]
    return np.sum(v * x[:2])


def fills_a_list_of_rows(x):
    rows = []
    for i in range(3):
        row = x * float(i)
        row[0] = x[1]
        rows.append(row)
    return np.sum(np.stack(rows) ** 2)


def softmax(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


def writes_what_a_function_made(z):
    # softmax returns a new array, not z: autotrace reads it to see so
    p = softmax(z)
    p[0] -= 1.0
    return np.sum(p * z)


def writes_what_local_functions_made(x):
    # a def and a lambda defined here return new arrays: writing them leaves x as it was
    a = 0.5

    def scaled(z):
        return z * a + np.tanh(x)
    shifted = lambda z: z * a + x  # noqa: E731
    v = scaled(x)
    v *= v
    w = shifted(x)
    kept = w.copy()
    w += x
    return np.sum(v ** 2) + np.sum(np.sin(x)) + np.sum(kept * w)


def replaces_an_item_of_a_list_another_name_took(x):
    # first holds the item, not the list: the list taking a new item leaves it as it was
    items = [x * 2.0, x * 3.0]
    first = items[0]
    items[0] = x * x
    last = items.pop()
    return np.sum(first * items[0] * last)


@pytest.mark.parametrize("func", [writes_after_the_last_read_of_an_alias,
                                  rebinds_the_alias_before_reading_it,
                                  writes_a_view_of_a_local_read_alone, fills_a_list_of_rows,
                                  writes_what_a_function_made,
                                  replaces_an_item_of_a_list_another_name_took,
                                  writes_what_local_functions_made],
                         ids=lambda f: f.__name__)
def test_a_write_no_other_name_reads_afterwards_is_followed(func):
    x = np.array([1.5, -2.0, 0.5])
    check_grads(func, (x,), order=2, modes=("reverse", "forward"))
    np.testing.assert_allclose(autotrace.function(autotrace.grad(func))(x),
                               autotrace.grad(func)(x))


# --- np.add.at, and the other NumPy functions that write into an argument ----------------------

def adds_at_repeated(x):
    g = np.zeros(5)
    np.add.at(g, np.array([0, 0, 1]), x[:3])  # g[0] = x0 + x1: repeated indices add up
    np.add.at(g, np.array([4, 4]), x[3])  # one value, added twice
    return np.sum(g * g)


def test_add_at_adds_up_repeated_indices():
    # It gave a zero gradient. sum(g**2) with g = (x0 + x1, x2, 0, 0, 2 x3).
    x = np.array([1.0, 2.0, 3.0, 4.0])
    expected = [6.0, 6.0, 6.0, 32.0]
    np.testing.assert_allclose(autotrace.grad(adds_at_repeated)(x), expected)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(adds_at_repeated))(x),
                               expected)
    check_grads(adds_at_repeated, (x,), order=2, modes=("reverse", "forward"))


def copies_into(x):
    A = np.zeros(3)
    np.copyto(A, x)
    return np.sum(A)


def puts_along_an_axis(x):
    y = x.copy()
    np.put_along_axis(y, np.array([[0], [1]]), 0.0, axis=1)
    return np.sum(y * np.array([[1.0, 2.0], [3.0, 4.0]]))


def multiplies_at(x):
    A = x * 1.0
    np.multiply.at(A, np.array([0, 0]), 2.0)
    return np.sum(A)


def adds_at_inside_an_expression(x):
    A = x * 1.0
    return np.add.at(A, np.array([0]), 1.0) or np.sum(A)


def replaces_nans_in_place(x):
    A = x * 1.0
    np.nan_to_num(A, copy=False)
    return np.sum(A)


@pytest.mark.parametrize("func, marker, construct, message", [
    (copies_into, "np.copyto", "np.copyto",
     "autotrace cannot differentiate np.copyto(...), which writes into its first argument in "
     "place; assign instead: A[...] = x"),
    (puts_along_an_axis, "np.put_along_axis", "np.put_along_axis",
     "autotrace cannot differentiate np.put_along_axis(...), which writes into its first "
     "argument in place; assign instead: y[np.arange(y.shape[0])[:, None], np.array([[0], "
     "[1]])] = 0.0 (a matrix, axis=1)"),
    (multiplies_at, "np.multiply.at", ".at",
     "autotrace cannot differentiate np.multiply.at(A, np.array([0, 0]), 2.0), which changes "
     "its first argument in place; it follows np.add.at(A, index, values) alone, as a "
     "statement of its own with A a variable (np.subtract.at(A, index, values) is "
     "np.add.at(A, index, -values))"),
    (adds_at_inside_an_expression, "np.add.at", ".at",
     "autotrace cannot differentiate np.add.at(A, np.array([0]), 1.0), which changes its "
     "first argument in place; it follows np.add.at(A, index, values) alone, as a statement "
     "of its own with A a variable (np.subtract.at(A, index, values) is "
     "np.add.at(A, index, -values))"),
    (replaces_nans_in_place, "np.nan_to_num", "np.nan_to_num",
     "autotrace cannot differentiate np.nan_to_num(A, copy=False), which may write into its "
     "first argument in place; assign instead: A = np.nan_to_num(A)"),
], ids=["copyto", "put_along_axis", "multiply.at", "add.at-in-an-expression",
        "nan_to_num-copy-False"])
def test_numpy_functions_that_write_into_an_argument_are_refused(func, marker, construct,
                                                                  message):
    with pytest.raises(TransformError) as caught:
        autotrace.grad(func)
    assert caught.value.message == message
    assert caught.value.lineno == line_of(func, marker)
    assert caught.value.construct == construct


def test_a_traced_nan_to_num_in_place_is_refused():
    # autotrace.function traced np.nan_to_num(A, copy=False) as a new value, leaving A's NaNs
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(replaces_nans_in_place)(np.array([1.0, np.nan, np.inf]))
    assert str(caught.value).startswith(
        "autotrace cannot trace numpy.nan_to_num with copy=False, which writes into its "
        "argument in place; assign the result instead: x = np.nan_to_num(x)")


# --- Arguments changed in place --------------------------------------------------------------
# The gradient is with respect to the argument's value on entry; the derivative works on a copy.

def sets_an_item_of_its_argument(x, a, b):
    x[0] = a * b
    return np.sum(x)


def test_an_argument_written_in_place():
    x = np.array([1.0, 2.0])
    expected = (np.array([0.0, 1.0]), 3.0, 2.0)
    for derivative in (autotrace.grad(sets_an_item_of_its_argument, wrt=(0, 1, 2)),
                       autotrace.function(autotrace.grad(sets_an_item_of_its_argument,
                                                         wrt=(0, 1, 2)))):
        gradient = derivative(x, 2.0, 3.0)
        for got, want in zip(gradient, expected):
            np.testing.assert_allclose(got, want)
    np.testing.assert_array_equal(x, [1.0, 2.0])
    assert autotrace.forward(sets_an_item_of_its_argument, wrt=1)(x, 2.0, 3.0) == (8.0, 3.0)
    tangent = np.array([1.0, 1.0])
    assert autotrace.forward(sets_an_item_of_its_argument)(x, 2.0, 3.0, tangent=tangent) == (
        8.0, 1.0)
    np.testing.assert_array_equal(tangent, [1.0, 1.0])
    # d/da of d/da of (a * a + x1) is 2, and d/db of d/da of (a * b + x1) is 1
    second = autotrace.grad(autotrace.grad(
        lambda a, x: sets_an_item_of_its_argument(x, a, a)), wrt=0)
    assert second(2.0, x) == 2.0
    assert autotrace.grad(autotrace.grad(sets_an_item_of_its_argument, wrt=1), wrt=2)(
        x, 2.0, 3.0) == 1.0
    check_grads(lambda x, a, b: sets_an_item_of_its_argument(x.copy(), a, b), (x, 2.0, 3.0),
                wrt=(0, 1, 2), order=2, modes=("reverse", "forward"))


def doubles_a_dict_entry(p):
    p["w"] = p["w"] * 2.0
    return np.sum(p["w"])


def appends_to_its_argument(xs):
    xs.append(xs[0] * 3.0)
    return xs[0] * xs[-1]


def test_containers_written_in_place():
    p = {"w": np.array([1.0, 2.0])}
    gradient = autotrace.grad(doubles_a_dict_entry)(p)
    np.testing.assert_allclose(gradient["w"], [2.0, 2.0])
    np.testing.assert_array_equal(p["w"], [1.0, 2.0])
    xs = [2.0]
    assert autotrace.grad(appends_to_its_argument)(xs) == [12.0]
    assert xs == [2.0]


def adds_at_in_a_loop_and_a_branch(x):
    total = 0.0
    for i in range(2):
        A = np.zeros(3)
        np.add.at(A, np.array([0, 0]), x[i])
        if i > 0:
            np.add.at(A, np.array([1]), x[i] * x[2])
        total = total + np.sum(A * x)
    return total


def test_add_at_in_a_loop_and_a_branch():
    # total = 2 x0 x0 + 2 x1 x0 + x1 x2 x1
    x = np.array([1.0, 2.0, 3.0])
    expected = [4.0 * 1.0 + 2.0 * 2.0, 2.0 * 1.0 + 2.0 * 2.0 * 3.0, 4.0]
    np.testing.assert_allclose(autotrace.grad(adds_at_in_a_loop_and_a_branch)(x), expected)
    np.testing.assert_allclose(
        autotrace.function(autotrace.grad(adds_at_in_a_loop_and_a_branch))(x), expected)
    check_grads(adds_at_in_a_loop_and_a_branch, (x,), order=2, modes=("reverse", "forward"))


# A function that writes into its argument changes its caller's array, which the caller's
# derivative would not see.

def sets_the_first(A):
    A[0] = 10.0


class Setter:
    def set_first(self, A):
        A[0] = 10.0


SETTER = Setter()


def calls_a_function_that_writes(x):
    A = x * 1.0
    sets_the_first(A)
    return np.sum(A * x)


def calls_a_method_that_writes(x):
    A = x * 1.0
    SETTER.set_first(A)
    return np.sum(A * x)


@pytest.mark.parametrize("func, call, callee, name", [
    (calls_a_function_that_writes, "sets_the_first(A)", sets_the_first, "sets_the_first"),
    (calls_a_method_that_writes, "SETTER.set_first(A)", Setter.set_first, "set_first"),
], ids=["function", "method"])
def test_a_call_that_writes_into_an_argument_read_afterwards_is_refused(func, call, callee,
                                                                        name):
    # Each gave [11, 4] (true [10, 4]).
    with pytest.raises(TransformError) as caught:
        autotrace.grad(func)(np.array([1.0, 2.0]))
    assert caught.value.message == (
        f"{call} changes its argument 'A' in place (A[0] = ..., {os.path.abspath(__file__)}, "
        f"line {line_of(callee, 'A[0] = 10.0')}), which autotrace does not follow into this "
        f"function, and 'A' is read after it on line "
        f"{line_of(func, 'return')}; return the new value from {name} instead")
    assert caught.value.lineno == line_of(func, call)


def sets_the_first_and_sums(A):
    A[0] = 10.0
    return np.sum(A)


def calls_a_function_that_writes_a_dead_array(x):
    return sets_the_first_and_sums(x * 1.0) * x[1]


class Holder:
    def __init__(self, write):
        self.write = write


HOLDER = Holder(sets_the_first_and_sums)


def calls_through_an_attribute(x):
    return HOLDER.write(x * 1.0) * x[1]


def test_a_called_function_that_writes_into_its_argument():
    # Where the caller's source names the function, its call is checked, and the write is
    # followed when nothing reads the argument afterwards: (10 + x1 + x2) x1.
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(autotrace.grad(calls_a_function_that_writes_a_dead_array)(x),
                               [0.0, 10.0 + 2 * 2.0 + 3.0, 2.0])
    # Where it does not, the function refuses the write.
    with pytest.raises(TransformError) as caught:
        autotrace.grad(calls_through_an_attribute)(x)
    assert caught.value.message == (
        "the function changes its argument 'A' in place (A[0] = ...), and it is called by a "
        "function being differentiated, which would not see the change; return the new value "
        "instead, or work on a copy")
    assert caught.value.lineno == line_of(sets_the_first_and_sums, "A[0] = 10.0")


# Writes made where the function's own statements do not show them: in a function defined
# inside it, in a comprehension.

def writes_in_a_nested_function(x):
    A = x * 1.0
    B = A

    def set_first():
        A[0] = 5.0
    set_first()
    return np.sum(B * x)


def appends_in_a_comprehension(x):
    A = x * 1.0
    rows = []
    [rows.append(A) for _ in range(2)]
    A[0] = 0.0
    return np.sum(rows[0] * x)


def test_writes_in_nested_functions_and_comprehensions():
    # They gave [6, 4] (true [5, 4]) and [0, 2] (true [0, 4]).
    x = np.array([1.0, 2.0])
    with pytest.raises(TransformError) as caught:
        autotrace.grad(writes_in_a_nested_function)(x)
    assert caught.value.message == (
        f"set_first() changes 'A' in place (A[0] = ..., line "
        f"{line_of(writes_in_a_nested_function, 'A[0] = 5.0')}), which autotrace does not "
        f"follow into this function, and 'B', which shares its memory, is read after it on "
        f"line {line_of(writes_in_a_nested_function, 'return')}; return the new value from "
        f"set_first instead")
    assert caught.value.lineno == line_of(writes_in_a_nested_function, "set_first()\n")
    with pytest.raises(TransformError) as caught:
        autotrace.grad(appends_in_a_comprehension)(x)
    assert caught.value.message == (
        f"A[0] = ... changes 'A' in place, and 'rows' shares its memory "
        f"([rows.append(A) for _ in range(2)], line "
        f"{line_of(appends_in_a_comprehension, '[rows.append')}), read after it on line "
        f"{line_of(appends_in_a_comprehension, 'return')}; autotrace gives 'A' alone a new "
        f"value. Give 'rows' a copy if it should keep the old value (A.copy()), or write into "
        f"'rows' too")


# `x[2:4] = x[1:3]` copies x's values into x: x does not come to share its own memory, and
# arithmetic on x afterwards (`v = x * 2.0`) makes a new array that a write into x leaves as it
# was. (It was refused: "x *= ... changes 'x' in place, and 'v' shares its memory".) Nor does
# an array that NumPy's ufuncs or arithmetic made hold another array's slice written into it.

def writes_its_own_item_then_scales(x):
    x[0] = x[1]
    v = x * 2.0
    x *= x
    return np.sum(v * x)


def shifts_its_own_slice_then_scales(x):
    y = np.cos(x) * np.sin(x)
    y[2:4] = y[1:3]
    alias = y
    scaled = alias * 1.44
    y *= y
    return np.sum(np.sin(scaled)) + np.sum(y ** 2)


def copies_a_slice_of_another_array(x):
    y = np.cos(x)
    z = -np.sin(x) * 2.0
    y[0:2] = z[1:3]
    scaled = y * 1.5
    z *= z
    return np.sum(scaled * z)


@pytest.mark.parametrize("func", [writes_its_own_item_then_scales,
                                  shifts_its_own_slice_then_scales,
                                  copies_a_slice_of_another_array], ids=lambda f: f.__name__)
def test_a_write_of_its_own_slice_is_a_copy(func):
    x = np.array([0.3, 0.7, 1.1, -0.4, 0.9])
    check_grads(func, (x,), modes=("reverse", "forward"))
    np.testing.assert_allclose(autotrace.function(autotrace.grad(func))(x),
                               autotrace.grad(func)(x))
    np.testing.assert_allclose(autotrace.function(autotrace.forward(func))(x),
                               autotrace.forward(func)(x))


def test_a_write_of_its_own_item_gives_numpys_gradient():
    # x becomes (x1, x1, x2), v = 2x and x = x²: the sum is 2 (2 x1³ + x2³).
    x = np.array([0.3, 0.7, 1.1])
    expected = [0.0, 12.0 * 0.7 ** 2, 6.0 * 1.1 ** 2]
    value = 2.0 * (2.0 * 0.7 ** 3 + 1.1 ** 3)
    assert writes_its_own_item_then_scales(x.copy()) == pytest.approx(value)
    for mode in ("reverse", "traced"):
        np.testing.assert_allclose(MODES[mode](writes_its_own_item_then_scales, x), expected)
    forward = autotrace.forward(writes_its_own_item_then_scales)
    for direction in np.eye(3):
        np.testing.assert_allclose(forward(x, tangent=direction),
                                   (value, np.dot(expected, direction)), atol=1e-12)


def writes_its_own_item_then_a_view(x):
    y = x * 1.0
    y[0] = y[1]
    v = y[1:]
    y *= y
    return np.sum(v * x[1:])


def puts_a_view_into_a_list(x):
    A = x * 1.0
    rows = [x]
    rows[0] = A[1:]
    A *= 2.0
    return np.sum(rows[0] * x[1:])


def puts_a_list_into_itself(x):
    L = [x * 1.0, x * 2.0]
    L[1] = L
    M = L * 2
    L.append(x)
    return np.sum(M[1][-1] * x)


STILL_SHARED = [
    (writes_its_own_item_then_a_view, "y *= y", shares(
        "y *= ...", "y", "v", "v = y[1:]", "return", "Write y = y * ... if 'v' should keep the "
        "old value, or update 'v' too")),
    (puts_a_view_into_a_list, "A *= 2.0", shares(
        "A *= ...", "A", "rows", "rows[0] = A[1:]", "return", "Write A = A * ... if 'rows' "
        "should keep the old value, or update 'rows' too")),
    (puts_a_list_into_itself, "L.append(x)", shares(
        "L.append(...)", "L", "M", "M = L * 2", "return", copy_advice("L", "M"))),
]


@pytest.mark.parametrize("func, marker, message", STILL_SHARED,
                         ids=[case[0].__name__ for case in STILL_SHARED])
def test_a_view_or_a_list_holding_itself_is_still_shared(func, marker, message):
    # A view of y, an array viewed by a list, a list holding itself: NumPy's values change
    # with the write, so autotrace refuses it.
    for mode in ("reverse", "forward", "traced"):
        with pytest.raises(TransformError) as caught:
            MODES[mode](func, np.array([1.0, 2.0, 3.0]))
        assert caught.value.message == message(func)
        assert caught.value.lineno == line_of(func, marker)


def writes_into_a_rebound_result(x):
    x = np.tanh(x)
    x[0] += 0.5
    return np.sum(x)


def test_a_write_into_a_result_whose_rule_reads_it_restores_the_item():
    """`x = np.tanh(x)` binds the tanh's result to x, and tanh's rule reads its result
    (1 - y * y): the item `x[0] += 0.5` changes must be restored before it, though x itself is
    not read in the adjoint sweep (it gave 1 - (tanh(x0) + 0.5)**2 at index 0)."""
    x = np.array([0.3, -0.2, 0.5, 0.1])
    by_hand = 1.0 - np.tanh(x) ** 2
    np.testing.assert_allclose(autotrace.grad(writes_into_a_rebound_result)(x.copy()), by_hand,
                               rtol=1e-14)
    np.testing.assert_allclose(
        autotrace.function(autotrace.grad(writes_into_a_rebound_result))(x.copy()), by_hand,
        rtol=1e-14)
    check_grads(writes_into_a_rebound_result, (x.copy(),), order=2,
                modes=("reverse", "forward"))
