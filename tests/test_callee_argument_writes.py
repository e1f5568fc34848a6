"""A function called that changes its argument in place, by any means, is refused where the
caller reads that argument afterwards, or followed where it does not.

autotrace follows what a call returns. A called function that writes into the array, list or
dict it is given (`v /= n`, `r = v[1:]; r *= 2.0`, `np.multiply(a, b, out=a)`, `lst += [v]`,
`d.update(...)`, `L.remove(...)`, a write one call deeper) changes what the caller reads next,
which a gradient of the call's result alone would miss.
"""
import re

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.numeric import central_difference, check_every_mode

X = np.array([0.3, -0.7, 1.2])
W = np.array([1.0, 2.0, 3.0])
THIS_FILE = __file__


def line_of(marker: str) -> int:
    with open(THIS_FILE) as source:
        return next(number for number, text in enumerate(source, 1) if marker in text)


def normalize(v):
    v /= np.linalg.norm(v)  # (normalize)
    return v


def normalized_in_place(x):
    a = x * 1.0
    normalize(a)  # (call normalize)
    return np.sum(a * W)


def doubles_the_tail(a):
    r = a[1:]
    r *= 2.0  # (through a view)


def tail_doubled(x):
    a = x * 1.0
    doubles_the_tail(a)  # (call doubles_the_tail)
    return np.sum(a * W)


def squares_into(a, v):
    np.multiply(a, v, out=a)  # (out=)


def squared_into(x):
    a = x * 1.0
    squares_into(a, x)  # (call squares_into)
    return np.sum(a * W)


def sets_the_first(a):
    a[0] = a[1] * a[2]


def sets_the_first_one_call_deeper(a):
    sets_the_first(a)  # (one call deeper)


def first_set_one_call_deeper(x):
    a = x * 1.0
    sets_the_first_one_call_deeper(a)  # (call sets_the_first_one_call_deeper)
    return np.sum(a * W)


def adds_to(items, v):
    items += [v]  # (list +=)


def added_to_a_list(x):
    items = [x[0] * 1.0]
    adds_to(items, x[1] * 2.0)  # (call adds_to)
    return sum(items)


def puts_b(d, v):
    d.update(b=v)  # (update)


def updated_dict(x):
    d = {"a": x[0] * 1.0}
    puts_b(d, x[1] ** 2)  # (call puts_b)
    return d["a"] * d.get("b", 1.0)


def drops_the_first(items):
    items.remove(items[0])  # (remove)


def first_dropped(x):
    items = [x[0] * 1.0, x[1] * 2.0]
    drops_the_first(items)  # (call drops_the_first)
    return items[0] * 3.0


def copies_into(a, v):
    np.copyto(a, v)  # (copyto)


def copied_into(x):
    a = x * 1.0
    copies_into(a, x ** 2)  # (call copies_into)
    return np.sum(a * W)


def set_by_a_lambda(x):
    a = x * 1.0
    setter = lambda arr: arr.__setitem__(0, x[1] * 2.0)  # (lambda writes)  # noqa: E731
    setter(a)  # (call setter)
    return np.sum(a * W)


def set_by_a_nested_function(x):
    a = x * 1.0

    def scale_first(b):
        b[0] = b[1] * 3.0  # (nested writes)
    scale_first(a)  # (call scale_first)
    return np.sum(a * W)


def set_by_a_nested_function_one_call_deeper(x):
    a = x * 1.0

    def scale_first(b):
        b[0] = b[1] * 3.0

    def scale_first_of(c):
        scale_first(c)  # (nested call deeper)
    scale_first_of(a)  # (call scale_first_of)
    return np.sum(a * W)


def set_by_a_nested_function_defined_after_its_caller(x):
    a = x * 1.0

    def scale_first_of(c):
        scale_first(c)  # (calls one defined after it)

    def scale_first(b):
        b[0] = b[1] * 3.0
    scale_first_of(a)  # (call the one defined before)
    return np.sum(a * W)


def set_by_a_module_function_a_nested_one_calls(x):
    a = x * 1.0

    def set_first_of(c):
        sets_the_first(c)  # (nested calls a module function)
    set_first_of(a)  # (call set_first_of)
    return np.sum(a * W)


def set_through_a_lambda_calling_a_nested_function(x):
    a = x * 1.0

    def scale_first(b):
        b[0] = b[1] * 3.0
    setter = lambda c: scale_first(c)  # (lambda calls nested)  # noqa: E731
    setter(a)  # (call the lambda)
    return np.sum(a * W)


def set_through_a_view_handed_on(x):
    a = x * 1.0

    def scale_first(b):
        b[0] = b[1] * 3.0

    def scale_tail(c):
        scale_first(c[1:])  # (view handed on)
    scale_tail(a)  # (call scale_tail)
    return np.sum(a * W)


CALLS = [
    (normalized_in_place, "normalize(a)", "v", "v /= ...", "(normalize)", "normalize",
     "(call normalize)"),
    (tail_doubled, "doubles_the_tail(a)", "a", "r *= ...", "(through a view)",
     "doubles_the_tail", "(call doubles_the_tail)"),
    (squared_into, "squares_into(a, x)", "a", "np.multiply(...)", "(out=)", "squares_into",
     "(call squares_into)"),
    (first_set_one_call_deeper, "sets_the_first_one_call_deeper(a)", "a", "sets_the_first(a)",
     "(one call deeper)", "sets_the_first_one_call_deeper",
     "(call sets_the_first_one_call_deeper)"),
    (added_to_a_list, "adds_to(items, x[1] * 2.0)", "items", "items += ...", "(list +=)",
     "adds_to", "(call adds_to)"),
    (updated_dict, "puts_b(d, x[1] ** 2)", "d", "d.update(...)", "(update)", "puts_b",
     "(call puts_b)"),
    (first_dropped, "drops_the_first(items)", "items", "items.remove(...)", "(remove)",
     "drops_the_first", "(call drops_the_first)"),
    (copied_into, "copies_into(a, x ** 2)", "a", "np.copyto(...)", "(copyto)", "copies_into",
     "(call copies_into)"),
    (set_by_a_lambda, "setter(a)", "arr", "arr.__setitem__(...)", "(lambda writes)", "setter",
     "(call setter)"),
    (set_by_a_nested_function, "scale_first(a)", "b", "b[0] = ...", "(nested writes)",
     "scale_first", "(call scale_first)"),
    (set_by_a_nested_function_one_call_deeper, "scale_first_of(a)", "c", "scale_first(c)",
     "(nested call deeper)", "scale_first_of", "(call scale_first_of)"),
    (set_by_a_nested_function_defined_after_its_caller, "scale_first_of(a)", "c",
     "scale_first(c)", "(calls one defined after it)", "scale_first_of",
     "(call the one defined before)"),
    (set_by_a_module_function_a_nested_one_calls, "set_first_of(a)", "c", "sets_the_first(c)",
     "(nested calls a module function)", "set_first_of", "(call set_first_of)"),
    (set_through_a_lambda_calling_a_nested_function, "setter(a)", "c", "scale_first(c)",
     "(lambda calls nested)", "setter", "(call the lambda)"),
    (set_through_a_view_handed_on, "scale_tail(a)", "c", "scale_first(c[1:])",
     "(view handed on)", "scale_tail", "(call scale_tail)"),
]


def every_mode(f):
    return {
        "grad": lambda: autotrace.grad(f)(X),
        "traced grad": lambda: autotrace.function(autotrace.grad(f))(X),
        "vmap of grad": lambda: autotrace.vmap(autotrace.grad(f))(np.stack([X, X])),
        "jvp": lambda: autotrace.jvp(f, (X,), (np.ones(3),)),
        "forward": lambda: autotrace.forward(f)(X),
    }


@pytest.mark.parametrize("f, call, parameter, write, write_marker, callee, call_marker", CALLS,
                         ids=[case[0].__name__ for case in CALLS])
def test_a_call_that_changes_its_argument_read_afterwards_is_refused(
        f, call, parameter, write, write_marker, callee, call_marker):
    reader = "items" if parameter == "items" else "d" if parameter == "d" else "a"
    read = line_of(call_marker) + 1
    expected = (
        f'File "{THIS_FILE}", line {line_of(call_marker)}: {call} changes its argument '
        f"{parameter!r} in place ({write}, {THIS_FILE}, line {line_of(write_marker)}), which "
        f"autotrace does not follow into this function, and {reader!r} is read after it on "
        f"line {read}; return the new value from {callee} instead")
    for mode, run in every_mode(f).items():
        with pytest.raises(TransformError, match=re.escape(expected)):
            run()


def closure_set_by_a_nested_function_one_call_deeper(x):
    a = x * 1.0

    def scale_first():
        a[0] = a[1] * 3.0

    def scale():
        scale_first()  # (closure write one call deeper)
    scale()  # (call scale)
    return np.sum(a * W)


def closure_given_to_a_nested_function(x):
    a = x * 1.0

    def scale_first(b):
        b[0] = b[1] * 3.0

    def scale():
        scale_first(a)  # (closure given to a writer)
    scale()  # (call scale)
    return np.sum(a * W)


def closure_given_to_a_module_function(x):
    a = x * 1.0

    def scale():
        sets_the_first(a)  # (closure given to a module writer)
    scale()  # (call scale)
    return np.sum(a * W)


def closure_viewed_and_handed_to_a_nested_function(x):
    a = x * 1.0

    def scale_first(b):
        b[0] = b[1] * 3.0

    def scale():
        tail = a[1:]
        scale_first(tail)  # (closure viewed and handed on)
    scale()  # (call scale)
    return np.sum(a * W)


CLOSURE_CALLS = [
    (closure_set_by_a_nested_function_one_call_deeper, "scale_first(...)",
     "(closure write one call deeper)"),
    (closure_given_to_a_nested_function, "scale_first(...)", "(closure given to a writer)"),
    (closure_given_to_a_module_function, "sets_the_first(...)",
     "(closure given to a module writer)"),
    (closure_viewed_and_handed_to_a_nested_function, "scale_first(...)",
     "(closure viewed and handed on)"),
]


@pytest.mark.parametrize("f, write, marker", CLOSURE_CALLS,
                         ids=[case[0].__name__ for case in CLOSURE_CALLS])
def test_a_nested_function_that_changes_a_closure_variable_through_a_call_is_refused(
        f, write, marker):
    start = line_of(f"def {f.__name__}(")
    with open(THIS_FILE) as source:
        body = source.read().splitlines()[start:]
    call = start + body.index("    scale()  # (call scale)") + 1
    expected = (
        f'File "{THIS_FILE}", line {call}: scale() changes \'a\' in place ({write}, line '
        f"{line_of(marker)}), which autotrace does not follow into this function, and 'a' "
        f"is read after it on line {call + 1}; return the new value from scale instead")
    for mode, run in every_mode(f).items():
        with pytest.raises(TransformError, match=re.escape(expected)):
            run()


class Scaler:
    def apply(self, a):
        a *= 3.0  # (method scales)


def scaled_by_a_method(x):
    a = x * 1.0
    scaler = Scaler()
    scaler.apply(a)  # (call apply)
    return np.sum(a * W)


def test_a_method_found_when_it_runs_that_changes_its_argument_is_refused():
    expected = (
        f'File "{THIS_FILE}", line {line_of("(call apply)")}: this call of Scaler.apply (found '
        f"only when it runs) changes its argument 'a' in place (a *= ..., {THIS_FILE}, line "
        f"{line_of('(method scales)')}), which autotrace does not follow back into the "
        f"function that calls it")
    for mode, run in every_mode(scaled_by_a_method).items():
        with pytest.raises(TransformError, match=re.escape(expected)):
            run()


# --- followed: nothing reads the argument afterwards, or it is a number ----------------------

def normalized_and_bound_again(x):
    a = x * 1.0
    a = normalize(a)  # (the name holds what it returns)
    return np.sum(a * W)


def normalized_into_another_name(x):
    a = x * 1.0
    b = normalize(a)
    return np.sum(b * W)


def set_first_and_returned(a):
    a[0] = a[1] * a[2]
    return a


def first_set_and_bound_again(x):
    a = x * 1.0
    a = set_first_and_returned(a)
    return np.sum(a * W)


def bumps(t, k):
    t += k  # a number: a new value
    return t


def bumped_number(x):
    t = x[0] * 2.0
    y = bumps(t, x[1])
    return y * t + x[2]


class Stepper:
    def step(self, t, k):
        t *= k  # a number: a new value
        return t


def stepped_number(x):
    stepper = Stepper()
    t = x[0] * 2.0
    y = stepper.step(t, x[1])
    return y * t + x[2]


def assert_followed_in_every_mode(f):
    """grad, the traced gradient, vmap of the gradient and jvp of f at X against central
    differences."""
    expected = central_difference(f, X)
    options = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(f)(X), expected, **options)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X), expected, **options)
    batched = autotrace.vmap(autotrace.grad(f))(np.stack([X, 2.0 * X]))
    np.testing.assert_allclose(batched[0], expected, **options)
    np.testing.assert_allclose(batched[1], central_difference(f, 2.0 * X), **options)
    direction = np.array([0.5, -1.0, 2.0])
    _, tangent = autotrace.jvp(f, (X,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("f", [normalized_and_bound_again, normalized_into_another_name,
                               first_set_and_bound_again, bumped_number, stepped_number],
                         ids=lambda f: f.__name__)
def test_a_call_whose_write_nothing_reads_afterwards_is_followed(f):
    assert_followed_in_every_mode(f)


def test_a_method_called_for_its_result_that_changes_an_array_argument_is_refused():
    def stepped_array(x):
        stepper = Stepper()
        a = x * 1.0
        y = stepper.step(a, x[1])
        return np.sum(y * a)
    expected = (f'File "{THIS_FILE}", line {line_of("t *= k  # a number")}: the function '
                f"changes its argument 't' in place (t *= ...), and it is called by a function "
                f"being differentiated, which would not see the change")
    for mode, run in every_mode(stepped_array).items():
        with pytest.raises(TransformError, match=re.escape(expected)):
            run()


# --- `s op= v` into a name bound to an item of the argument (`s = v[0]`) ----------------------
# An item of a one-dimensional array is a NumPy number, which `s += v[i]` binds anew; of a
# matrix, a view of a row, which it changes in place (NumPy changes the caller's matrix).

def my_sum(v):
    s = v[0]
    for i in range(1, len(v)):
        s += v[i]  # (sum of the items)
    return s


def summed_then_read(x):
    total = my_sum(x)  # (call my_sum)
    return total * x[0]


def first_doubled(v):
    s = v[-1, 0]
    s *= 2.0
    return s


def doubled_then_read(x):
    m = np.reshape(x, (3, 1))
    return first_doubled(m) * m[0, 0]


@pytest.mark.parametrize("f", [summed_then_read, doubled_then_read], ids=lambda f: f.__name__)
def test_a_write_into_a_number_taken_from_an_array_argument_is_followed(f):
    assert_followed_in_every_mode(f)


def rows_summed_then_read(x):
    m = np.reshape(x, (2, 3)) * 1.0
    total = my_sum(m)  # (call my_sum on a matrix)
    return np.sum(total * m[0])


def test_a_write_into_a_row_of_a_matrix_argument_is_refused():
    x = np.arange(1.0, 7.0)
    expected = (
        f'File "{THIS_FILE}", line {line_of("(call my_sum on a matrix)")}: my_sum(m) changes '
        f"its argument 'v' in place (s += ..., {THIS_FILE}, line "
        f"{line_of('(sum of the items)')}), which autotrace does not follow into this "
        f"function, and 'm' is read after it on line {line_of('(call my_sum on a matrix)') + 1}"
        f"; return the new value from my_sum instead")
    runs = {"grad": lambda: autotrace.grad(rows_summed_then_read)(x),
            "traced grad": lambda: autotrace.function(autotrace.grad(rows_summed_then_read))(x),
            "vmap of grad": lambda: autotrace.vmap(autotrace.grad(rows_summed_then_read))(
                np.stack([x, x])),
            "jvp": lambda: autotrace.jvp(rows_summed_then_read, (x,), (np.ones(6),))}
    for mode, run in runs.items():
        with pytest.raises(TransformError, match=re.escape(expected)):
            run()


def item_by_a_given_index(v, i):
    s = v[i]  # (i may be a slice: then a view)
    s += 1.0
    return np.sum(s)


def item_by_a_given_index_then_read(x):
    total = item_by_a_given_index(x, 0)  # (call item_by_a_given_index)
    return total * x[0]


def test_a_write_into_an_item_taken_by_an_index_not_known_to_be_an_integer_is_refused():
    expected = (
        f'File "{THIS_FILE}", line {line_of("(call item_by_a_given_index)")}: '
        f"item_by_a_given_index(x, 0) changes its argument 'v' in place (s += ..., ")
    with pytest.raises(TransformError, match=re.escape(expected)):
        autotrace.grad(item_by_a_given_index_then_read)(X)


# --- followed: a call that writes into an array an earlier statement's adjoint reads -----------
# Nothing reads the argument after the call, but the rule of a statement before it does
# (np.sin(a)'s reads a): the adjoint sweep gets back what the array held before the call, as
# it does for `a[0] = 0.0` written in the function itself.

def zero_the_first(a):
    a[0] = 0.0


def normalize_in_place(v):
    v /= np.linalg.norm(v)


def times_zero(a):
    a *= 0


def zero_the_first_one_call_deeper(a):
    zero_the_first(a)


class Zeroer:
    def zero_first(self, a):
        a[0] = 0.0


ZEROER = Zeroer()


def sine_then_first_zeroed(x):
    a = x * 1.0
    y = np.sum(np.sin(a))
    zero_the_first(a)
    return y


def sine_then_normalized(x):
    a = x * 1.0
    y = np.sum(np.sin(a))
    normalize_in_place(a)
    return y


def square_then_times_zero(x):
    a = x * 1.0
    y = np.sum(a * a)
    times_zero(a)
    return y


def sine_then_zeroed_one_call_deeper(x):
    a = x * 1.0
    y = np.sum(np.sin(a))
    zero_the_first_one_call_deeper(a)
    return y


def product_then_normalized(x):
    a = x * 1.0
    y = a @ (x * 2.0)  # (the rule of @ reads both operands)
    normalize_in_place(a)
    return y


def sine_then_zeroed_by_a_method(x):
    a = x * 1.0
    y = np.sum(np.sin(a))
    ZEROER.zero_first(a)
    return y


def sine_of_another_name_then_zeroed(x):
    a = x * 1.0
    b = a
    y = np.sum(np.sin(b))
    zero_the_first(a)
    return y


def sine_of_a_view_then_zeroed(x):
    a = x * 1.0
    y = np.sum(np.sin(a[1:]))
    times_zero(a[1:])
    return y


def sine_then_zeroed_in_a_loop(x):
    y = 0.0
    for i in range(2):
        a = x * (i + 1.0)
        y = y + np.sum(np.sin(a))
        zero_the_first(a)
    return y


def sine_of_the_argument_then_zeroed(x):
    y = np.sum(np.sin(x))
    zero_the_first(x)
    return y


def sine_of_a_list_item_then_zeroed(x):
    items = [x * 1.0, x * 2.0]
    y = np.sum(np.sin(items[0])) + np.sum(items[1] ** 2)
    zero_the_first(items[0])
    return y


def square_of_a_list_item_then_normalized(x):
    items = [x * 1.0, x * 2.0]
    y = np.sum(np.sin(items[0])) + np.sum(items[1] ** 2)
    normalize_in_place(items[1])
    return y


def zero_the_first_of_the_first(items):
    items[0][0] = 0.0


def sine_then_zeroed_through_the_list(x):
    items = [x * 1.0, x * 2.0]
    y = np.sum(np.sin(items[0]))
    zero_the_first_of_the_first(items)
    return y


FOLLOWED_WRITES = [sine_then_first_zeroed, sine_then_normalized, square_then_times_zero,
                   sine_then_zeroed_one_call_deeper, product_then_normalized,
                   sine_then_zeroed_by_a_method, sine_of_another_name_then_zeroed,
                   sine_of_a_view_then_zeroed, sine_then_zeroed_in_a_loop,
                   sine_of_a_list_item_then_zeroed, square_of_a_list_item_then_normalized,
                   sine_then_zeroed_through_the_list]


@pytest.mark.parametrize("f", FOLLOWED_WRITES, ids=lambda f: f.__name__)
def test_a_call_writing_into_an_array_an_earlier_adjoint_reads_is_followed(f):
    check_every_mode(f, X.copy())
    batched = autotrace.vmap(autotrace.grad(f))(np.stack([X, 2.0 * X]))
    np.testing.assert_allclose(batched[1], central_difference(f, 2.0 * X), rtol=1e-6,
                               atol=1e-8)


def test_a_call_writing_into_the_argument_itself_is_followed_on_its_value_on_entry():
    # (f changes the caller's array: each mode is given its own copy; the derivatives leave
    # it as it was, as where f writes into its argument itself)
    f = sine_of_the_argument_then_zeroed
    expected = central_difference(f, X)
    options = dict(rtol=1e-6, atol=1e-8)
    x = X.copy()
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, **options)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected, **options)
    np.testing.assert_array_equal(x, X)
    batched = autotrace.vmap(autotrace.grad(f))(np.stack([X, 2.0 * X]))
    np.testing.assert_allclose(batched[1], central_difference(f, 2.0 * X), **options)
    direction = np.array([0.5, -1.0, 2.0])
    _, tangent = autotrace.jvp(f, (X.copy(),), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)

    def directional(point):
        return np.sum(autotrace.grad(f)(point) * direction)
    np.testing.assert_allclose(autotrace.grad(directional)(X.copy()),
                               central_difference(directional, X), rtol=1e-5, atol=1e-6)


def copies_zero_into(a):
    np.copyto(a, 0.0)


def sine_then_zeros_copied_in(x):
    a = x * 1.0
    y = np.sum(np.sin(a))
    copies_zero_into(a)
    return y


def test_a_call_of_np_copyto_into_an_array_an_earlier_adjoint_reads_is_followed():
    # (np.copyto has no op to trace: autotrace.function refuses it where it runs)
    f = sine_then_zeros_copied_in
    expected = central_difference(f, X)
    np.testing.assert_allclose(autotrace.grad(f)(X), expected, rtol=1e-6, atol=1e-8)
    direction = np.array([0.5, -1.0, 2.0])
    _, tangent = autotrace.jvp(f, (X,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)

    def directional(point):
        return np.sum(autotrace.grad(f)(point) * direction)
    np.testing.assert_allclose(autotrace.grad(directional)(X),
                               central_difference(directional, X), rtol=1e-5, atol=1e-6)


def sine_of_a_list_argument_then_zeroed(items):
    y = np.sum(np.sin(items[0])) + np.sum(items[1] ** 2)
    zero_the_first(items[0])
    return y


def test_a_call_writing_into_an_item_of_a_list_argument_is_followed():
    f = sine_of_a_list_argument_then_zeroed
    expected = [np.cos(X), 2.0 * (2.0 * X)]
    for gradient in (autotrace.grad(f)([X.copy(), 2.0 * X]),
                     autotrace.function(autotrace.grad(f))([X.copy(), 2.0 * X])):
        for got, want in zip(gradient, expected):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_derivative_restores_the_array_before_the_call_in_its_source():
    source = autotrace.source(autotrace.grad(sine_then_first_zeroed))
    assert ("_held1 = read_item(a, ...)\n    zero_the_first(a)\n    refuse_moved_items(_held1, "
            "a, 'zero_the_first(a)', 'a', " + repr(__file__) + ", ") in source
    assert "note_kept(_held1, a)\n    _stack1.append(_held1)" in source
    assert "# Grad of line" in source and "zero_the_first(a)\n    restore_item(a, ..., " \
        "_stack1.pop())" in source


def sine_then_an_item_of_a_block_doubled(x):
    m = np.reshape(x * 1.0, (3, 1, 1))
    y = np.sum(np.sin(m))
    first_doubled(m)  # (call first_doubled on a block)
    return y


def test_a_write_into_a_view_taken_by_item_indices_a_call_makes_is_refused_in_reverse_mode():
    # `s = v[-1, 0]` of a three-dimensional v is a view, which `s *= 2.0` changes in place:
    # np.sin(m)'s rule would read the changed m
    f = sine_then_an_item_of_a_block_doubled
    expected = (
        f'File "{THIS_FILE}", line {line_of("(call first_doubled on a block)")}: '
        f"first_doubled(m) changes its argument 'v' in place (s *= ..., {THIS_FILE}, line "
        f"{line_of('    s *= 2.0')}) where m has more than 2 dimensions, which autotrace does "
        f"not undo for the derivatives of the statements before it; pass a copy of m "
        f"(m.copy())")
    for run in (lambda: autotrace.grad(f)(X),
                lambda: autotrace.function(autotrace.grad(f))(X),
                lambda: autotrace.vmap(autotrace.grad(f))(np.stack([X, X]))):
        with pytest.raises(TransformError, match=re.escape(expected)):
            run()
    _, tangent = autotrace.jvp(f, (X,), (np.ones(3),))  # forward mode reads no old value
    assert tangent == pytest.approx(np.sum(np.cos(X)))


# --- the same into an item of a list argument, or into each item a loop takes -------------------
# An item of a list of numbers is a number, which `s += v[i]` binds anew; an item that is an
# array (or a list) is changed in place. `for r in v: r += 1.0` takes the items of v one by
# one: numbers of a one-dimensional array, views of the rows of a matrix.

def first_plus(v, i):
    s = v[0]
    s += v[i]  # (first plus)
    return s


def numbers_listed(x):
    v = [x[0], x[1] * 2.0, x[2]]
    total = first_plus(v, 2) + first_plus(v, 1)
    return total * v[0] + np.sum(x ** 2)


def each_item_raised(v):
    total = 0.0
    for r in v:
        r += 1.0  # (each item raised)
        total = total + r * r
    return total


def items_raised_then_read(x):
    return each_item_raised(x) + np.sum(x ** 2)


def each_item_doubled(v):
    total = 0.0
    for r in v:
        r *= 2
        total = total + r
    return total


def items_doubled_then_read(x):
    v = np.cos(x)
    return each_item_doubled(v) * np.sum(v)


@pytest.mark.parametrize("f", [numbers_listed, items_raised_then_read, items_doubled_then_read],
                         ids=lambda f: f.__name__)
def test_a_write_into_a_number_of_a_list_or_of_a_loop_over_an_argument_is_followed(f):
    assert_followed_in_every_mode(f)
    check_every_mode(f, X)


def arrays_listed(x):
    a = x[:2] * 1.0
    v = [a, x[1:] * 1.0]
    s = first_plus(v, 1)  # (call first_plus on a list of arrays)
    return np.sum(s * a)


def rows_raised_then_read(x):
    m = np.reshape(x, (2, 3)) * 1.0
    total = each_item_raised(m)  # (call each_item_raised on a matrix)
    return np.sum(total) + np.sum(m)


@pytest.mark.parametrize("f, call, write, read", [
    (arrays_listed, "first_plus(v, 1)", "s += ...,", "'a', which shares its memory,"),
    (rows_raised_then_read, "each_item_raised(m)", "r += ...,", "'m'")],
    ids=["a list of arrays", "the rows of a matrix"])
def test_a_write_into_an_array_item_of_a_list_or_a_row_is_refused(f, call, write, read):
    x = np.arange(1.0, 5.0) if f is arrays_listed else np.arange(1.0, 7.0)
    line = line_of(f"(call {call.split('(')[0]} on a")
    written_at = line_of("(first plus)") if f is arrays_listed else line_of("(each item raised)")
    expected = (f'File "{THIS_FILE}", line {line}: {call} changes its argument \'v\' in place '
                f"({write} {THIS_FILE}, line {written_at}), which autotrace does not follow "
                f"into this function, and {read} is read after it on line {line + 1}; return "
                f"the new value from {call.split('(')[0]} instead")
    runs = {"grad": lambda: autotrace.grad(f)(x),
            "traced grad": lambda: autotrace.function(autotrace.grad(f))(x),
            "vmap of grad": lambda: autotrace.vmap(autotrace.grad(f))(np.stack([x, x])),
            "jvp": lambda: autotrace.jvp(f, (x,), (np.ones_like(x),))}
    for run in runs.values():
        with pytest.raises(TransformError, match=re.escape(expected)):
            run()


# --- what is saved around such a call: not what no call can change -----------------------------

READ_ONLY = np.array([1.0, 2.0, 3.0])
READ_ONLY.flags.writeable = False


def beside_a_read_only_array(x):
    a = x * 2.0
    y = np.sum(np.sin(a) * READ_ONLY)
    zero_the_first_of_the_first([a, READ_ONLY])
    return y


def zero_the_first_of_v(d):
    d["v"][0] = 0.0


def in_a_dict_holding_itself(x):
    a = x * 2.0
    d = {"v": a}
    d["self"] = d
    y = np.sum(a * x)
    zero_the_first_of_v(d)
    return y


@pytest.mark.parametrize("f", [beside_a_read_only_array, in_a_dict_holding_itself],
                         ids=lambda f: f.__name__)
def test_a_call_given_a_read_only_array_or_a_container_holding_itself_is_followed(f):
    """Restoring wrote into the read-only array (ValueError), and walked the dict holding
    itself without end (RecursionError)."""
    x = np.array([0.3, 0.5, 0.9])
    np.testing.assert_allclose(autotrace.grad(f)(x), central_difference(f, x), rtol=1e-6)
