"""A call of a function that writes into what it is given (`set_first(a)` running
`a[0] = 0.0`, `v *= 2.0`, `lst[0][0] = 0.0`), made in an `if` or loop on a traced value.

Eagerly, reverse mode saves what the call may write and restores it before the call's adjoint
(written_by_calls.py). Traced, the `if` or loop becomes one graph op, which carries the names
the call changes (the array, the list holding it, the names a list was made of) so that the
change leaves the op; the adjoint writes the saved values back into the items the call left
in their place, which the other names for those arrays (`b = items[0]`) see. Each function
here is checked against finite differences and eager grad in every mode, traced and batched.

A call changing the caller's argument through a list it is handed is refused by a traced
function, naming the write and the call; the derivative writes into a copy of the argument
and is traced.
"""
import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.tracing.arguments import ArgumentChangedError
from tests.numeric import central_difference

THIS_FILE = __file__
POINTS = [np.array([0.7, 1.3, -0.4]), np.array([-0.6, 1.1, 0.9]),
          np.array([-0.5, -1.2, 0.8])]  # the branches taken differ
DIRECTION = np.array([0.3, -1.1, 0.6])


def line_of(marker: str) -> int:
    with open(THIS_FILE) as source:
        return next(number for number, text in enumerate(source, 1) if marker in text)


# --- the helpers called ----------------------------------------------------------------------

def set_first(v):
    v[0] = 0.0  # (set_first's write)


def doubled(v):
    v *= 2.0


def set_first_of_list(lst):
    lst[0][0] = 0.0  # (set_first_of_list's write)


def halve_first_of_list(lst):
    lst[0] = lst[0] * 0.5  # a new array in the list: the old one stays as it was


def set_first_of_dict(d):
    d["w"][0] = 0.0


def through_another(v):
    set_first(v)


class Zeroer:
    def zero(self, v):
        v[0] = 0.0


ZEROER = Zeroer()


# --- functions whose gradient eager grad follows -------------------------------------------

def written_in_the_branch(x):
    a = x * 2.0
    b = np.sin(a)
    if x[0] > 0:
        set_first(a)
    return np.sum(b * x)


def doubled_in_the_branch(x):
    a = x * 2.0
    b = np.sin(a)
    if x[0] > 0:
        doubled(a)
    return np.sum(b * x)


def written_in_else(x):
    a = np.cos(x)
    b = a * x
    if x[0] > 0:
        c = 1.0
    else:
        set_first(a)
        c = 2.0
    return np.sum(b) * c


def written_in_elif(x):
    a = x * 2.0
    b = np.cos(a)
    if x[0] > 0:
        c = 1.0
    elif x[1] > 0:
        set_first(a)
        c = 3.0
    else:
        c = 2.0
    return np.sum(b * x) * c


def written_by_a_method(x):
    a = x * 2.0
    b = np.sin(a)
    if x[0] > 0:
        ZEROER.zero(a)
    return np.sum(b * x)


def written_one_call_deeper_by_keyword(x):
    a = x * 2.0
    b = np.sin(a)
    if x[1] > 0:
        through_another(v=a)
    return np.sum(b * x)


def written_into_an_item_of_a_list(x):
    items = [x * 2.0]
    b = np.sin(items[0])
    if x[0] > 0:
        set_first(items[0])
    return np.sum(b * x)


def written_through_the_list(x):
    items = [x * 2.0]
    b = np.sin(items[0])
    if x[0] > 0:
        set_first_of_list(items)
    return np.sum(b * x)


def written_through_the_list_into_a_view_read_before(x):
    items = [x * 2.0]
    b = np.sin(items[0][0:2])  # a view of the array the call writes into
    if x[0] > 0:
        set_first_of_list(items)
    return np.sum(b * x[1:3])


def an_item_of_the_list_replaced(x):
    items = [x * 2.0]
    b = np.sin(items[0])
    if x[0] > 0:
        halve_first_of_list(items)
    return np.sum(b * x)


def written_through_a_list_made_in_the_call(x):
    y = x * 1.0
    b = np.sin(y)
    if x[0] > 0:
        set_first_of_list([y])
    return np.sum(b * x)


def written_through_a_dict(x):
    d = {"w": x * 2.0}
    b = np.sin(d["w"])
    if x[1] > 0:
        set_first_of_dict(d)
    return np.sum(b * x)


def written_in_a_loop_under_an_if(x):
    total = 0.0
    for i in range(3):
        a = x * (i + 1.0)
        b = np.sin(a)
        if x[i] > 0:
            set_first(a)
        total = total + np.sum(b * x)
    return total


def written_in_a_traced_loop(x):
    total = 0.0
    for i in range(np.sum(x > 0)):
        a = x * 2.0
        b = np.sin(a)
        doubled(a)
        total = total + np.sum(b * x)
    return total


FOLLOWED = [written_in_the_branch, doubled_in_the_branch, written_in_else, written_in_elif,
            written_by_a_method, written_one_call_deeper_by_keyword,
            written_into_an_item_of_a_list, written_through_the_list,
            written_through_the_list_into_a_view_read_before, an_item_of_the_list_replaced,
            written_through_a_list_made_in_the_call, written_through_a_dict,
            written_in_a_loop_under_an_if, written_in_a_traced_loop]


def write_then_replace(lst):
    lst[0][0] = 0.0  # written into, then replaced  (write_then_replace's)
    lst[0] = lst[0] * 0.5


def write_then_replace_in_dict(d):
    d["w"][0] = 0.0
    d["w"] = d["w"] * 0.5


def swap_then_write(lst):
    lst[0], lst[1] = lst[1], lst[0]
    lst[0][0] = 0.0


def write_then_pop(lst):
    lst[0][1] = 3.0
    lst.pop()


def an_item_written_then_removed(x):
    items = [x * 2.0]
    b = np.sin(items[0])
    if x[0] > 0:
        write_then_pop(items)  # (an item written then removed)
    return np.sum(b * x)


def an_item_written_then_replaced(x):
    items = [x * 2.0]
    b = np.sin(items[0])
    if x[0] > 0:
        write_then_replace(items)  # (an item written then replaced)
    return np.sum(b * x)


def a_dict_item_written_then_replaced(x):
    d = {"w": x * 2.0}
    b = np.sin(d["w"])
    if x[0] > 0:
        write_then_replace_in_dict(d)  # (a dict item written then replaced)
    return np.sum(b * x)


def items_swapped_then_written(x):
    items = [x * 2.0, x * 3.0]
    b = np.sin(items[1])
    if x[0] > 0:
        swap_then_write(items)  # (items swapped then written)
    return np.sum(b * x)


MOVED = [(an_item_written_then_replaced, "write_then_replace(items)", "items",
          "(an item written then replaced)"),
         (a_dict_item_written_then_replaced, "write_then_replace_in_dict(d)", "d",
          "(a dict item written then replaced)"),
         (items_swapped_then_written, "swap_then_write(items)", "items",
          "(items swapped then written)"),
         (an_item_written_then_removed, "write_then_pop(items)", "items",
          "(an item written then removed)")]


@pytest.mark.parametrize("f, call, container, marker", MOVED, ids=[m[0].__name__ for m in MOVED])
def test_an_item_written_then_moved_in_a_traced_branch_is_refused(f, call, container, marker):
    """Eagerly the gradient is right; traced, the restore could not reach the names read
    before the call, so every traced derivative refuses at the call's line."""
    x = POINTS[0]
    np.testing.assert_allclose(autotrace.grad(f)(x), central_difference(f, x), rtol=1e-6,
                               atol=1e-8)
    message = (f'File "{THIS_FILE}", line {line_of(marker)}: {call} writes into an array that '
               f"{container} holds and replaces, moves or removes it in {container}, inside a "
               f"traced `if` or loop, which autotrace does not undo for the derivatives of the "
               f"statements before it; leave the written item in its place, or return the new "
               f"item and assign it after the `if` or loop")
    for derivative in (autotrace.function(autotrace.grad(f)),
                       lambda x: autotrace.vmap(autotrace.grad(f))(x[None]),
                       autotrace.function(autotrace.hessian(f))):
        with pytest.raises(TransformError) as error:
            derivative(x)
        assert str(error.value) == message


def gradient_differences(f, x):
    """The gradient of f at x by central differences, checked against eager grad."""
    expected = central_difference(f, x)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    return expected


@pytest.mark.parametrize("f", FOLLOWED, ids=[f.__name__ for f in FOLLOWED])
def test_the_traced_function_and_its_gradient_agree_with_numpy(f):
    traced, traced_gradient = autotrace.function(f), autotrace.function(autotrace.grad(f))
    for x in POINTS:
        before = x.copy()
        assert traced(x) == pytest.approx(f(x.copy()), rel=1e-12)
        expected = gradient_differences(f, x)
        np.testing.assert_allclose(traced_gradient(x), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(autotrace.grad(autotrace.function(f))(x), expected,
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("f", FOLLOWED, ids=[f.__name__ for f in FOLLOWED])
def test_the_batched_gradient_agrees_with_each_point(f):
    batch = np.stack(POINTS)
    expected = np.stack([gradient_differences(f, x) for x in POINTS])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch), expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.vmap(f)(batch), [f(x.copy()) for x in POINTS],
                               rtol=1e-12)


@pytest.mark.parametrize("f", FOLLOWED, ids=[f.__name__ for f in FOLLOWED])
def test_forward_mode_and_the_hessian_agree_with_differences(f):
    for x in POINTS:
        expected = gradient_differences(f, x) @ DIRECTION
        for forward in (autotrace.forward(f), autotrace.function(autotrace.forward(f))):
            value, tangent = forward(x, tangent=DIRECTION)
            assert value == pytest.approx(f(x.copy()), rel=1e-12)
            assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-8)
        # (the Hessian's product with a direction, by differences of the eager gradient)
        curvature = central_difference(
            lambda point: autotrace.grad(f)(point) @ DIRECTION, x, eps=1e-5)
        for hessian in (autotrace.hessian(f), autotrace.function(autotrace.hessian(f))):
            np.testing.assert_allclose(hessian(x) @ DIRECTION, curvature, rtol=1e-5,
                                       atol=1e-6)


# --- a write that a later line reads: traced, followed; differentiated, refused as eagerly ----

def read_after_the_branch(x):
    a = x * 2.0
    if x[0] > 0:
        set_first(a)  # (set_first read after)
    return np.sum(a * x)


def written_in_a_loop_and_passed_again(x):
    a = x * 2.0
    b = np.sin(a)
    for i in range(2):
        if x[i] > 0:
            set_first(a)  # (set_first in a loop)
    return np.sum(b * x)


def test_a_write_read_after_the_traced_branch_is_followed():
    traced, batched = autotrace.function(read_after_the_branch), \
        autotrace.vmap(read_after_the_branch)
    for x in POINTS:
        assert traced(x) == pytest.approx(read_after_the_branch(x.copy()), rel=1e-12)
    np.testing.assert_allclose(batched(np.stack(POINTS)),
                               [read_after_the_branch(x.copy()) for x in POINTS], rtol=1e-12)


def test_the_branch_carries_the_array_the_call_writes():
    # `a` is a result of the traced if: the graph's cond gives back the array set_first wrote
    graph = str(autotrace.function(read_after_the_branch).graph(POINTS[0]))
    assert "cond[" in graph and "setitem[index=(0,)]" in graph


@pytest.mark.parametrize("f, marker, read, again", [
    (read_after_the_branch, "(set_first read after)", "return np.sum(a * x)", False),
    (written_in_a_loop_and_passed_again, "(set_first in a loop)", "(set_first in a loop)",
     True)])
def test_the_derivative_of_a_write_read_afterwards_is_refused_traced_as_eagerly(
        f, marker, read, again):
    next_iteration = " (in the loop's next iteration)" if again else ""
    written = line_of("(set_first's write)")
    expected = (f"set_first(a) changes its argument 'v' in place (v[0] = ..., {THIS_FILE}, "
                f"line {written}), which autotrace does not follow "
                f"into this function, and 'a' is read after it on line "
                f"{line_of(read)}{next_iteration}; return the new value from set_first "
                f"instead")
    for derivative in (lambda: autotrace.grad(f)(POINTS[0]),
                       lambda: autotrace.function(autotrace.grad(f))(POINTS[0]),
                       lambda: autotrace.vmap(autotrace.grad(f))(np.stack(POINTS))):
        with pytest.raises(TransformError) as refused:
            derivative()
        assert refused.value.message == expected
        assert refused.value.lineno == line_of(marker)


# --- an argument handed on to a function writing into it (itself or in a list) -------------

def argument_handed_on_in_a_list(x):
    s = np.sum(np.sin(x))
    set_first_of_list([x])  # (handed on in a list)
    return s


def argument_held_by_a_list_handed_on(x):
    s = np.sum(np.sin(x))
    items = [x]
    if x[1] > 0:
        set_first_of_list(items)  # (list holding it handed on)
    return s


def argument_written_in_the_branch(x):
    s = np.sum(np.sin(x))
    if x[1] > 0:
        set_first(x)  # (the argument handed on)
    return s


def a_copy_held_by_a_list_handed_on(x):
    s = np.sum(np.sin(x))
    items = [x * 1.0]
    b = np.tanh(items[0])
    if x[1] > 0:
        set_first_of_list(items)
    return s + np.sum(b * x)


LIST_WRITE = "lst[0][0] = 0.0  # (set_first_of_list's write)"


@pytest.mark.parametrize("f, callee, written, call", [
    (argument_handed_on_in_a_list, "set_first_of_list", LIST_WRITE,
     "set_first_of_list([x])  # (handed on in a list)"),
    (argument_held_by_a_list_handed_on, "set_first_of_list", LIST_WRITE,
     "set_first_of_list(items)  # (list holding it handed on)"),
    (argument_written_in_the_branch, "set_first", "v[0] = 0.0  # (set_first's write)",
     "set_first(x)  # (the argument handed on)")])
def test_a_traced_write_into_the_argument_names_the_write_and_the_call(f, callee, written,
                                                                      call):
    with pytest.raises(ArgumentChangedError) as refused:
        autotrace.function(f)(POINTS[0])
    assert str(refused.value).splitlines()[0] == (
        f"the traced function changes argument 'x' in place: `{written}` ({THIS_FILE}, line "
        f"{line_of(written)}, in {callee}) "
        f"writes into it, run by `{call}` on line {line_of(call)}, which hands "
        f"it on (itself, a view of it, or in a list, tuple, dict or object). Called eagerly, "
        f"that changes the caller's array, but a traced call cannot, so the change would be "
        f"lost. Hand on a copy (x.copy()), or make a new array and return it instead; arrays "
        f"made inside the function may be changed in place")


@pytest.mark.parametrize("f", [argument_handed_on_in_a_list, argument_held_by_a_list_handed_on,
                               argument_written_in_the_branch])
def test_the_derivative_writes_into_a_copy_of_an_argument_handed_on(f):
    # As for set_first(x): the caller's array keeps its values, eagerly and traced
    traced = autotrace.function(autotrace.grad(f))
    for x in POINTS:
        before = x.copy()
        expected = np.cos(x)  # (the sum of sines, taken before the write)
        np.testing.assert_allclose(autotrace.grad(f)(x), expected, rtol=1e-12)
        np.testing.assert_allclose(traced(x), expected, rtol=1e-12)
        np.testing.assert_array_equal(x, before)


def test_a_list_holding_a_copy_of_the_argument_is_followed():
    f = a_copy_held_by_a_list_handed_on
    traced, traced_gradient = autotrace.function(f), autotrace.function(autotrace.grad(f))
    for x in POINTS:
        before = x.copy()
        assert traced(x) == pytest.approx(f(x.copy()), rel=1e-12)
        expected = gradient_differences(f, x)
        np.testing.assert_allclose(traced_gradient(x), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(x, before)
