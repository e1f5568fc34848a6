"""`L[k] op= v` checked when it runs (transforms/front/shared_items.py): where the source does
not say which items of L share memory (an index that is no constant, a list made by `append` or
a comprehension, or returned by a function), the write is refused where another item that the
function reads afterwards shares the item's memory, in every mode, and differentiated where
none does (each against finite differences in every mode).
"""
import inspect
import re
import textwrap

import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError
from tests.numeric import check_every_mode
from tests.test_alias_refusals import Box

X = np.array([0.3, -0.7, 1.1, 0.4])


def writes_an_item_by_an_index_another_item_views(x):
    A = x * 2.0
    rows = [A, A[1:]]
    i = len(x) - len(x)  # 0, not a constant
    rows[i] *= 2.0
    return np.sum(rows[1] * x[1:])


def writes_an_item_of_an_appended_list(x):
    A = x * 2.0
    rows = []
    rows.append(A)
    rows.append(A[1:])
    rows[0] *= 2.0
    return np.sum(rows[1] * x[1:])


def writes_an_item_of_a_comprehension(x):
    A = x * 2.0
    rows = [A[k:] for k in range(2)]
    rows[0] *= 2.0
    return np.sum(rows[1] * x[1:])


def writes_a_value_of_a_dict_by_a_computed_key(x):
    A = x * 2.0
    d = {"w": A, "b": A[::-1]}
    key = "w" if len(x) > 2 else "b"
    d[key] *= 2.0
    return np.sum(d["b"] * x)


def writes_an_item_a_nested_list_views(x):
    A = x * 2.0
    rows = [A]
    rows.append([A[1:], np.cos(x)])
    rows[0] *= 2.0
    return np.sum(rows[1][0] * x[1:])


@pytest.mark.parametrize("function", [writes_an_item_by_an_index_another_item_views,
                                      writes_an_item_of_an_appended_list,
                                      writes_an_item_of_a_comprehension,
                                      writes_a_value_of_a_dict_by_a_computed_key,
                                      writes_an_item_a_nested_list_views],
                         ids=lambda f: f.__name__)
def test_an_item_changed_in_place_that_another_item_shares_is_refused_when_run(function):
    source = textwrap.dedent(inspect.getsource(function))
    target = next(line.split()[0] for line in source.splitlines() if "*= 2.0" in line)
    container = target.split("[")[0]
    message = re.escape(
        f"{target} *= ... changes the item {target} in place where it is an array, and another "
        f"item of {container} may share its memory, read after it on line ")
    for transform in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f)),
                      autotrace.forward):
        with pytest.raises(TransformError, match=message):
            transform(function)(X)
    assert autotrace.function(function)(X) == pytest.approx(function(X))  # traced: NumPy's


def adds_into_items_of_new_arrays(x):
    rows = [np.zeros(4) for _ in range(3)]
    for i in range(3):
        rows[i] += x * (i + 1.0)
    rows[len(x) - 4] *= np.sin(x)
    return np.sum(rows[0] * rows[2]) + np.sum(rows[1] ** 2)


def scales_one_half_of_an_array(x):
    A = x * 2.0
    halves = [A[:2], A[2:]]
    halves[len(x) - 4] *= np.cos(x[:2])  # the halves do not overlap
    return np.sum(halves[1] * x[2:]) + np.sum(halves[0] ** 2)


@pytest.mark.parametrize("function", [adds_into_items_of_new_arrays,
                                      scales_one_half_of_an_array],
                         ids=lambda f: f.__name__)
def test_items_that_share_no_memory_are_differentiated(function):
    check_every_mode(function, X)


def writes_an_item_beside_an_object_holding_a_view(x):
    A = x * 2.0
    rows = [A, Box(A[1:], 0.0)]
    i = len(x) - len(x)
    rows[i] *= 2.0
    return np.sum(rows[1].w * x[1:])


def _two_views(x):
    A = x * 2.0
    return [A, A[1:]]


def writes_an_item_of_a_list_a_function_returned(x):
    rows = _two_views(x)
    rows[0] *= 2.0
    return np.sum(rows[1] * x[1:])


def extends_a_list_that_is_another_item(x):
    inner = [x[0]]
    rows = [inner, inner]
    rows[0] += [x[1]]  # extends inner: rows[1] too
    return sum(rows[1]) * x[2]


@pytest.mark.parametrize("function", [writes_an_item_beside_an_object_holding_a_view,
                                      writes_an_item_of_a_list_a_function_returned,
                                      extends_a_list_that_is_another_item],
                         ids=lambda f: f.__name__)
def test_what_another_item_holds_is_looked_into(function):
    target = next(line.split()[0] for line in inspect.getsource(function).splitlines()
                  if "rows[" in line and "= " in line and "+=" in line or "*=" in line)
    message = re.escape(f"{target} ")
    for transform in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f)),
                      autotrace.forward):
        with pytest.raises(TransformError, match=message + r".* changes the item"):
            transform(function)(X)


def writes_an_item_at_an_index_a_call_gives(x):
    rows = [x * 1.0, x * 3.0, x * 5.0]
    order = [2, 0, 1]
    rows[order.pop()] *= 2.0  # rows[1], once
    return np.sum(rows[0] * rows[1]) + np.sum(rows[2] ** 2)


def writes_the_only_item_read_of_an_appended_list(x):
    A = x * 2.0
    rows = []
    rows.append(A)
    rows.append(A[1:])  # shares A's memory, but is not read after the write
    rows[0] *= 3.0
    return np.sum(rows[0] * x)


def scales_rows_of_one_matrix(x):
    A = np.sin(x) * np.cos(x[:3, None])  # (3, 4)
    rows = [A[k] for k in range(3)]  # views of A, no two sharing an element
    for i in range(3):
        rows[i] *= x
    return np.sum(rows[0] * rows[2]) + np.sum(rows[1])


@pytest.mark.parametrize("function", [writes_an_item_at_an_index_a_call_gives,
                                      writes_the_only_item_read_of_an_appended_list,
                                      scales_rows_of_one_matrix],
                         ids=lambda f: f.__name__)
def test_writes_no_other_item_read_afterwards_shares_are_differentiated(function):
    check_every_mode(function, X)
    assert autotrace.function(function)(X) == pytest.approx(function(X))


def scales_an_item_of_a_list_passed_in(x, rows):
    i = len(x) - len(x)
    rows[i] *= x
    return np.sum(rows[1] * x[1:])


def test_items_of_an_argument_keep_their_sharing_when_copied():
    A = X * 2.0
    with pytest.raises(TransformError, match=re.escape(
            "rows[i] *= ... changes the item rows[i] in place where it is an array, and "
            "another item of rows may share its memory")):
        autotrace.grad(scales_an_item_of_a_list_passed_in)(X, [A, A[1:]])
    np.testing.assert_array_equal(A, X * 2.0)  # the caller's arrays are as they were
    B = np.stack([X, X])
    gradient = autotrace.grad(scales_an_item_of_a_list_passed_in)(X, [B[0], B[1, 1:]])
    np.testing.assert_allclose(gradient, [0.0, *B[1, 1:]])  # d/dx of sum(B[1, 1:] * x[1:])


def scales_one_argument_reads_another(x, y):
    x *= 2.0  # NumPy's changes y too where y is x's memory
    return np.sum(x * y)


def writes_an_item_of_one_argument_reads_another(x, y):
    x[0] = 5.0
    return np.sum(x * y)


@pytest.mark.parametrize("function, write", [
    (scales_one_argument_reads_another, "x *= ..."),
    (writes_an_item_of_one_argument_reads_another, "x[0] = ...")], ids=["op", "item"])
def test_an_argument_changed_in_place_that_another_argument_shares_is_refused(function, write):
    A = X * 1.0
    message = re.escape(f"the function changes argument 'x' in place ({write}), and argument "
                        f"'y' shares its memory")
    for shared in (A, A[::-1]):
        with pytest.raises(TransformError, match=message):
            autotrace.grad(function, argnums=(0, 1))(A, shared)
    np.testing.assert_array_equal(A, X)
    # arguments of their own: d/dx and d/dy against finite differences
    y = X[::-1] * 3.0
    value, (gx, gy) = autotrace.value_and_grad(function, argnums=(0, 1))(X * 1.0, y)
    assert value == pytest.approx(function(X * 1.0, y * 1.0))
    for gradient, wrt in ((gx, 0), (gy, 1)):
        expected = [(function(*[p + e * (k == wrt) for k, p in enumerate((X, y))])
                     - function(*[p - e * (k == wrt) for k, p in enumerate((X, y))])) / 2e-6
                    for e in np.eye(4) * 1e-6]
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-6)
