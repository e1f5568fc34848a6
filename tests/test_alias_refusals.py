"""Which writes the alias analysis refuses: only those another name sees afterwards.

The analysis (transforms/analysis/aliases.py) reads the source for which names may share memory. Where
the source says enough it must not refuse: arithmetic makes a new value (a list's `+` holds
the items of its operands, nothing else does), an attribute of an object the function built is
not the object, an item of `enumerate(u)` or of `np.split(u, 2)` is a view of u, not the
iterator or the list, and a function that returns its argument returns that and nothing new.
Each program below was refused (but the last, a check that a read before the write never is);
each is checked against finite differences in every mode.
The writes that another name does see stay refused, with advice that helps: a copy of a list
holds the same arrays.
"""
import inspect
import os

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.tracing.views import ViewAmbiguityError
from autotrace.testing import check_grads
from tests.numeric import assert_gradients_eager_and_traced, central_difference

X = np.array([0.3, -0.7, 1.1, 0.4])


class Box:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def value(self):
        return self.w * self.b


class Holder:
    def __init__(self, a):
        self.a = a


def same(value):
    return value


# --- formerly refused: nothing another name reads afterwards shares the memory written ------

def an_item_beside_a_power(x):
    # v9 ** 3 is a new array: the dict holds it and v10, neither of which is v9 or a
    a = x * 3.0
    box = Box(x * 2.0, a)
    v9 = box.value() + box.w
    v10 = np.sin(x)
    items12 = {"w": v10, "b": v9 ** 3}
    first = items12["w"]
    first[0] = 0.5
    return np.sum(v9 * a) + np.sum(first * x)


def a_sum_over_enumerate(x):
    u = x * 1.0
    t = 0.0
    for i, r in enumerate(u):
        t = t + r * i
    u[0] = 2.0
    return t + np.sum(u * x)


def a_product_of_split_parts(x):
    u = x * 1.0
    parts = np.split(u, 2)
    v = parts[1] * parts[1]
    u[0] = 2.0
    return np.sum(v) + np.sum(u * x)


def a_product_of_an_attribute(x):
    u = x * 1.0
    b = Holder(u)
    v = b.a * b.a
    u[0] = 2.0
    return np.sum(v) + np.sum(u * x)


def a_product_of_what_a_call_returned(x):
    u = x * 1.0
    w = same(u)
    v = w * w
    u[0] = 3.0
    return np.sum(v) + np.sum(u * x)


CALLEES = {"same": same}


def a_power_of_what_an_unknown_call_returned(x):
    # which function runs, the source does not say: w may be u, but w ** 2 + 1.0 is new
    u = np.cos(x)
    w = CALLEES["same"](u)
    total = w ** 2 + 1.0
    u[1] = 0.0
    return np.sum(total * x) + np.sum(u)


def a_view_read_only_before_the_write(x):
    # never refused: w, which is u, is not read after the write
    u = x * 1.0
    w = same(u)
    s = np.sum(w * w)
    u[0] = 3.0
    return s + np.sum(u * x)


def sizes_read_before_a_write(x):
    # an array's shape, size and ndim are numbers: they share no memory with it
    u = x.reshape(2, 2) * 1.0
    n, m = u.shape
    k, d, s = u.shape[1], u.ndim, u.size
    u[0] -= 1.0
    return np.sum(u ** 2) * (n + m + k + d + s)


def writes_into_a_slice_of_a_sum_with_an_attribute(x, a=0.7):
    # box.value() + box.w is a new array (or, were they lists, a new list): its slice is a
    # view of it, or a new list, and never what box holds (x, a)
    box = Box(np.tanh(x * x), a)
    v = box.value() + box.w
    part = v[2:4]
    scaled = v * a
    part[0] = 1.0
    return np.sum(scaled) + np.sum(part * x[:2]) + np.sum(x) * a


def scales_a_reversed_sum_by_itself(x):
    # x[[1, 3, 2, 0]] is a copy; v and its reversed view are v's memory alone
    box = Box(x[np.array([1, 3, 2, 0])], 2.0)
    v = box.value() + box.w
    reversed_v = v[::-1]
    reversed_v *= v
    return np.sum(reversed_v) + np.sum(x * x)


def a_number_read_from_an_array_before_adding_into_it(x):
    # of an array of one dimension, v[2] is a NumPy number, which `v +=` leaves as it was
    v = np.tanh(x) * 2.0
    s = v[2]
    v += np.sin(v) + (s - v)
    return np.sum(v ** 2) + s * np.sum(x)


def a_number_read_from_an_array_written_into_another_item(x):
    v = np.cos(x) * 2.0
    s = v[1]
    v[0] = s * 3.0
    return np.sum(v ** 2) + s


def a_product_by_a_float_ufunc_before_writing_the_factor(x):
    # x may be a list and `a` an int, `v` a list repeated: but np.exp gives a float, so
    # `u * e` is an array or a number, no repeat of u's items that the write could reach
    a = x[3]
    v = x ** 2 * a + x
    w = np.tanh(np.exp(0.5 * np.tanh(v))[-3])
    while w < 1.9:
        w = w + 0.5
        v = (v + x) - np.mean(v + x)
    v[2:4] = v[1:3]
    cubed = (v ** 3) / (1.5 + (v - np.mean(v)) ** 2) * 1.5
    if x.shape[0] > 3:
        u = v.reshape(4)
    else:
        u = cubed[::-1]
    product = u * np.exp(np.tanh(a))
    u[0:2] = (np.arctan2(product, -1.0) + v)[1:3]
    return np.sum(product ** 2) + np.sum(u * x)


FORMERLY_REFUSED = [an_item_beside_a_power, a_sum_over_enumerate, a_product_of_split_parts,
                    a_product_of_an_attribute, a_product_of_what_a_call_returned,
                    a_power_of_what_an_unknown_call_returned,
                    a_view_read_only_before_the_write, sizes_read_before_a_write,
                    writes_into_a_slice_of_a_sum_with_an_attribute,
                    scales_a_reversed_sum_by_itself,
                    a_number_read_from_an_array_before_adding_into_it,
                    a_number_read_from_an_array_written_into_another_item,
                    a_product_by_a_float_ufunc_before_writing_the_factor]


@pytest.mark.parametrize("function", FORMERLY_REFUSED, ids=lambda f: f.__name__)
def test_a_write_no_other_name_sees_is_differentiated(function):
    for x in (X, -X[::-1]):
        expected = assert_gradients_eager_and_traced(function, x)
        direction = np.array([1.0, -2.0, 0.5, 3.0])
        _, derivative = autotrace.forward(function)(x, tangent=direction)
        assert derivative == pytest.approx(expected @ direction, rel=1e-6, abs=1e-8)
    check_grads(function, (X,), order=2, modes=("reverse", "forward"))


# --- still refused: another name reads the memory written afterwards ------------------------

def line_of(func, marker: str) -> int:
    """The line of this file where `marker` occurs in the source of `func` (exactly once)."""
    lines, first = inspect.getsourcelines(func)
    found = [first + i for i, line in enumerate(lines) if marker in line]
    assert len(found) == 1, f"{marker!r} occurs {len(found)} times in {func.__name__}"
    return found[0]


def writes_an_item_of_a_list(x):
    u = x * 1.0
    items = [u, x]
    items[0][0] = 5.0
    return np.sum(u * x)


def writes_an_item_of_a_dict(x):
    u = x * 1.0
    d = {'a': u, 'b': x}  # the message shows the line as Python prints it
    d['a'][0] = 5.0
    return np.sum(u * x)


def writes_an_item_of_a_tuple(x):
    u = x * 1.0
    t = (u, x)
    t[0][0] = 5.0
    return np.sum(u * x)


def writes_an_item_appended(x):
    u = x * 1.0
    items = []
    items.append(u)
    items[0][1] = 5.0
    return np.sum(u * x)


def writes_an_item_another_name_took(x):
    items = [x * 1.0, x]
    u = items[0]
    items[0][0] = 5.0
    return np.sum(u * x)


def writes_into_a_list_joined_with_plus(x):
    u = x * 1.0
    joined = [x] + [u]
    u[0] = 5.0
    return np.sum(joined[1] * x)


def writes_into_a_list_repeated(x):
    u = x * 1.0
    repeated = [u] * 2
    u[0] = 5.0
    return np.sum(repeated[1] * x)


def writes_an_item_of_a_slice_of_a_list(x):
    u = x * 1.0
    items = [u, x]
    part = items[0:1]  # a new list, holding u itself
    part[0][0] = 5.0
    return np.sum(u * x)


def item_advice(written, other, bound, read, item, rest, put=None):
    def message(func):
        copy = f"item = {item}.copy(); item{rest} = ...; {item} = item"
        advice = (f"work on a copy of the item, e.g. {copy}" if put is None else
                  f"work on a copy of the item, e.g. {copy}, or put a copy into it: {put}")
        return (f"{item}{rest} = ... writes into {written!r}, which may share its memory with "
                f"{other!r} ({bound}, line {line_of(func, bound)}), read after it on line "
                f"{line_of(func, read)}: the write changes {other!r} too, which autotrace does "
                f"not follow; {advice}")
    return message


def changes(what, written, other, bound, read, copied):
    return lambda func: (
        f"{what} changes {written!r} in place, and {other!r} shares its memory ({bound}, line "
        f"{line_of(func, bound)}), read after it on line {line_of(func, read)}; autotrace gives "
        f"{written!r} alone a new value. Give {other!r} a copy if it should keep the old value "
        f"({copied}), or write into {other!r} too")


SHARED_ITEMS = [
    (writes_an_item_of_a_list, "items[0][0] = 5.0", item_advice(
        "items", "u", "items = [u, x]", "return", "items[0]", "[0]",
        put="items = [u.copy(), x]")),
    (writes_an_item_of_a_dict, "d['a'][0] = 5.0", item_advice(
        "d", "u", "d = {'a': u, 'b': x}", "return", "d['a']", "[0]",
        put="d = {'a': u.copy(), 'b': x}")),
    (writes_an_item_appended, "items[0][1] = 5.0", item_advice(
        "items", "u", "items = []", "return", "items[0]", "[1]")),
    (writes_an_item_another_name_took, "items[0][0] = 5.0", changes(
        "items[0][0] = ...", "items[0]", "u", "u = items[0]", "return", "u = items[0].copy()")),
    (writes_into_a_list_joined_with_plus, "u[0] = 5.0", changes(
        "u[0] = ...", "u", "joined", "joined = [x] + [u]", "return", "u.copy()")),
    (writes_an_item_of_a_slice_of_a_list, "part[0][0] = 5.0", item_advice(
        "part", "u", "part = items[0:1]", "return", "part[0]", "[0]")),
    (writes_into_a_list_repeated, "u[0] = 5.0", changes(
        "u[0] = ...", "u", "repeated", "repeated = [u] * 2", "return", "u.copy()")),
]

MODES = {
    "reverse": lambda f, x: autotrace.grad(f)(x),
    "forward": lambda f, x: autotrace.forward(f)(x),
    "traced": lambda f, x: autotrace.function(autotrace.grad(f))(x),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("func, marker, message", SHARED_ITEMS,
                         ids=[case[0].__name__ for case in SHARED_ITEMS])
def test_a_write_into_an_item_another_name_reads_is_refused(func, marker, message, mode):
    with pytest.raises(TransformError) as caught:
        MODES[mode](func, X)
    error = caught.value
    assert error.message == message(func)
    assert error.lineno == line_of(func, marker)
    assert os.path.abspath(error.filename) == os.path.abspath(__file__)
    assert error.construct == "write into shared memory"


def a_row_read_before_adding_into_its_matrix(x):
    v = np.outer(x, x)
    row = v[1]
    v += 1.0
    return np.sum(v ** 2) + np.sum(row)


def a_view_with_no_dimension_read_after_adding_into_its_array(x):
    w = np.tanh(x)
    v = w[..., 0]
    i = Ellipsis
    row = v[i]
    v += 1.0
    return row * x[1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("func, bound", [
    (a_row_read_before_adding_into_its_matrix, "row = v[1]"),
    (a_view_with_no_dimension_read_after_adding_into_its_array, "row = v[i]")],
    ids=["a_row_of_a_matrix", "a_view_with_no_dimension"])
def test_an_item_that_is_a_view_is_refused_when_it_runs(func, bound, mode):
    # v[1] of a matrix is a view, which `v +=` changes, and so is v[i] with i = Ellipsis: the
    # source does not say which an item is, so the check runs with the values (and refuses
    # before any is changed)
    with pytest.raises(TransformError) as caught:
        MODES[mode](func, X)
    error = caught.value
    assert error.message == (
        f"v += ... changes 'v' in place, and 'row' shares its memory ({bound}, line "
        f"{line_of(func, bound)}), read after it on line {line_of(func, 'return')}; "
        f"autotrace gives 'v' alone a new value. Write v = v + ... if 'row' should keep the "
        f"old value, or update 'row' too")
    assert error.lineno == line_of(func, "v += 1.0")
    assert os.path.abspath(error.filename) == os.path.abspath(__file__)
    assert error.construct == "write into shared memory"


def test_a_tuple_gets_copies_put_into_it():
    # an item of a tuple cannot be stored back: the one advice is a copy in the tuple
    with pytest.raises(TransformError) as caught:
        autotrace.grad(writes_an_item_of_a_tuple)(X)
    func = writes_an_item_of_a_tuple
    assert caught.value.message == (
        f"t[0][0] = ... writes into 't', which may share its memory with 'u' (t = (u, x), line "
        f"{line_of(func, 't = (u, x)')}), read after it on line {line_of(func, 'return')}: the "
        f"write changes 'u' too, which autotrace does not follow; put a copy into it, e.g. "
        f"t = (u.copy(), x)")


def test_the_advice_given_for_an_item_is_differentiated():
    # what the message for writes_an_item_of_a_list says to write
    def rewritten(x):
        u = x * 1.0
        items = [u, x]
        item = items[0].copy()
        item[0] = 5.0
        items[0] = item
        return np.sum(u * x) + np.sum(items[0] * x)

    np.testing.assert_allclose(autotrace.grad(rewritten)(X), central_difference(rewritten, X),
                               rtol=1e-6, atol=1e-8)


# --- an error while a derivative is traced names the user's line -------------------------------

def reads_a_ravel_after_a_write(x):
    u = x.reshape(2, 2) * 1.0
    w = u.ravel()
    v = w * w
    u[0, 0] = 3.0
    return np.sum(v)


def test_a_view_ambiguity_in_a_traced_gradient_names_the_users_line():
    # the adjoint sweep brings u[0, 0] back, then reads w for `v = w * w`'s rule: whether w
    # sees it depends on whether ravel made a view, which the trace cannot know
    with pytest.raises(ViewAmbiguityError) as caught:
        autotrace.function(autotrace.grad(reads_a_ravel_after_a_write))(X)
    message = str(caught.value)
    assert message.endswith(
        f'\n  File "{__file__}", line {line_of(reads_a_ravel_after_a_write, "v = w * w")}'
        f"\n    v = w * w"), message
    assert "<autotrace" not in message, message
    # eagerly the arrays are there to see: the gradient is 2 w before the write
    np.testing.assert_allclose(autotrace.grad(reads_a_ravel_after_a_write)(X), 2 * X)


# --- `L[i] op= v` runs the item's own `op=`: an array item changes in place ---------------------

def adds_into_an_item_of_a_list(x):
    u = x * 1.0
    items = [u, x]
    items[0] += 5.0
    return np.sum(u * x)


def scales_an_item_of_a_dict(x):
    u = np.tanh(x)
    d = {'a': u, 'b': x}
    d['a'] *= x
    return np.sum(u * x)


def item_in_place(what, item, other, bound, read, sign):
    return lambda func: (
        f"{what} changes the item {item} in place where it is an array, and {other!r} may "
        f"share its memory ({bound}, line {line_of(func, bound)}), read after it on line "
        f"{line_of(func, read)}; autotrace gives {item} alone a new value. Write {item} = "
        f"{item} {sign} ... if {other!r} should keep the old value, or update {other!r} too")


ITEMS_IN_PLACE = [
    (adds_into_an_item_of_a_list, "items[0] += 5.0", item_in_place(
        "items[0] += ...", "items[0]", "u", "items = [u, x]", "return", "+")),
    (scales_an_item_of_a_dict, "d['a'] *= x", item_in_place(
        "d['a'] *= ...", "d['a']", "u", "d = {'a': u, 'b': x}", "return", "*")),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("func, marker, message", ITEMS_IN_PLACE,
                         ids=[case[0].__name__ for case in ITEMS_IN_PLACE])
def test_an_item_changed_in_place_that_another_name_reads_is_refused(func, marker, message,
                                                                     mode):
    with pytest.raises(TransformError) as caught:
        MODES[mode](func, X)
    assert caught.value.message == message(func)
    assert caught.value.lineno == line_of(func, marker)
    assert os.path.abspath(caught.value.filename) == os.path.abspath(__file__)


@pytest.mark.parametrize("func, expected", [
    (adds_into_an_item_of_a_list, lambda x: np.sum((x + 5.0) * x)),
    (scales_an_item_of_a_dict, lambda x: np.sum(np.tanh(x) * x * x))])
def test_a_traced_item_changed_in_place_changes_every_name_bound_to_it(func, expected):
    # NumPy changes u through the item; the traced function does too
    np.testing.assert_allclose(func(X.copy()), expected(X), rtol=1e-12)
    np.testing.assert_allclose(autotrace.function(func)(X.copy()), expected(X), rtol=1e-12)


def accumulates_into_items(x):
    totals = [np.zeros(4), 0.0]
    params = {"w": x * 2.0, "b": x * 1.0}
    for i in range(3):
        totals[0] += x * i        # a NumPy array only the list holds
        totals[1] += np.sum(x)    # a number: a new value
        for key in params:
            params[key] -= 0.5 * x
    return np.sum(totals[0] * params["w"]) + totals[1] * np.sum(params["b"])


def test_items_changed_in_place_that_no_other_name_reads_are_followed():
    expected = accumulates_into_items(X.copy())
    np.testing.assert_allclose(autotrace.function(accumulates_into_items)(X.copy()), expected,
                               rtol=1e-12)
    assert_gradients_eager_and_traced(accumulates_into_items, X)
    _, tangent = autotrace.forward(accumulates_into_items)(X, tangent=np.ones(4))
    np.testing.assert_allclose(tangent, np.sum(central_difference(accumulates_into_items, X)),
                               rtol=1e-6)
