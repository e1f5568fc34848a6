"""Lists and tuples under the transforms: concatenation, repetition and growing in place.

A concatenation's gradient splits into its operands' lengths; a repetition's sums the copies.
Where the transform cannot tell a list from an array (a parameter, an item of a list), the
generated code decides when it runs, so one derivative serves both. `extend` and `insert`
are followed as the appends and pops they are made of.
"""
import collections
import collections.abc
import functools
import heapq
import operator
import random
import re

import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads

X = np.array([0.5, -1.0, 2.0])


def list_concatenation(x):
    pair = [x] + [x * 2]
    return pair[0] + pair[1]


def tuple_concatenation(x):
    pair = (x,) + (x * 2,)
    return pair[0] * pair[1]


def list_repetition(x):
    copies = [x] * 3
    return np.sum(np.stack(copies) * np.arange(3)[:, None])


def repetition_from_the_left(x):
    copies = 2 * [x, x * 3.0]
    return np.sum(np.stack(copies) * np.arange(4.0)[:, None])


def tuple_repetition(x):
    copies = (x,) * 3
    return np.sum(copies[0] * copies[1] * copies[2])


def augmented_concatenation(x):
    items = [x]
    for i in range(3):
        items += [x * (i + 1.0)]
    return np.sum(np.stack(items) ** 2)


def concatenation_of_lists_of_lists(x):
    nested = [[x]] + [[x * 2.0]]
    pair = nested[0] + nested[1]
    return np.sum(pair[0] * pair[1])


def pop_then_multiply(x):
    items = [x, 2 * x]
    last = items.pop()
    return last * items[0]


def square_three_times(x):
    for i in range(3):
        x = x * x
    return x


SEQUENCE_FUNCTIONS = [list_concatenation, tuple_concatenation, list_repetition,
                      repetition_from_the_left, tuple_repetition, augmented_concatenation,
                      concatenation_of_lists_of_lists, pop_then_multiply]


def test_a_concatenation_splits_its_gradient_between_the_operands():
    np.testing.assert_allclose(autotrace.grad(list_concatenation)(X), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(autotrace.grad(tuple_concatenation)(X), 4 * X)


def test_a_repetition_sums_the_gradients_of_its_copies():
    np.testing.assert_allclose(autotrace.grad(list_repetition)(X), [3.0, 3.0, 3.0])
    # copies: x, 3x, x, 3x, weighted 0, 1, 2, 3
    np.testing.assert_allclose(autotrace.grad(repetition_from_the_left)(X), [14.0] * 3)
    np.testing.assert_allclose(autotrace.grad(tuple_repetition)(X), 3 * X ** 2)


def test_augmented_concatenation_appends():
    # items: x, x, 2x, 3x; the sum of their squares is 15 x**2
    np.testing.assert_allclose(autotrace.grad(augmented_concatenation)(X), 30 * X)


@pytest.mark.parametrize("function", SEQUENCE_FUNCTIONS, ids=lambda f: f.__name__)
def test_second_and_third_derivatives(function):
    check_grads(function, (X,), order=2, modes=("reverse", "forward"))
    check_grads(function, (X,), order=3)


def test_third_derivative_of_a_loop():
    # the adjoint of a loop concatenates the gradients it pops; x ** 8 has third derivative
    # 336 x ** 5
    third = autotrace.grad(autotrace.grad(autotrace.grad(square_three_times)))(0.7)
    assert third == pytest.approx(336 * 0.7 ** 5)


def test_second_derivative_of_list_pop():
    # x * 2x: the Hessian of its sum is 4 I
    def first_entry_of_gradient(x):
        return autotrace.grad(pop_then_multiply)(x)[0]
    np.testing.assert_allclose(autotrace.grad(first_entry_of_gradient)(X), [4.0, 0.0, 0.0])


def test_traced_gradient_of_augmented_concatenation():
    traced = autotrace.function(autotrace.grad(augmented_concatenation))
    np.testing.assert_allclose(traced(X), 30 * X)


def weigh(items):
    """The sum of the items (the rows of an array), the first weighted 1, the next 2, ..."""
    total = 0.0
    for i in range(len(items)):
        total = total + (i + 1.0) * np.sum(items[i])
    return total


def join_and_weigh(a, b):
    joined = a + b
    return weigh(joined)


def repeat_and_weigh(a, n):
    copies = a * n
    return weigh(copies)


def test_one_derivative_serves_lists_and_arrays():
    gradient = autotrace.grad(join_and_weigh, wrt=(0, 1))
    rows = np.ones((3, 2))
    # lists: joined is [a0, b0, b1], weighted 1, 2, 3
    ga, gb = gradient([X], [X, X])
    np.testing.assert_allclose(np.stack(ga), [[1.0] * 3])
    np.testing.assert_allclose(np.stack(gb), [[2.0] * 3, [3.0] * 3])
    assert type(ga) is list and type(gb) is list
    # arrays: joined is a + b, each row weighted 1, 2, 3
    ga, gb = gradient(rows, rows)
    np.testing.assert_allclose(ga, [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    np.testing.assert_allclose(gb, ga)
    check_grads(join_and_weigh, ([X, 2 * X], [3 * X]), wrt=(0, 1), order=2)


def test_one_derivative_serves_repetition_and_scaling():
    gradient = autotrace.grad(repeat_and_weigh)
    # a list repeated twice: copies weighted 1, 2, 3, 4
    result = gradient([X, 2 * X], 2)
    np.testing.assert_allclose(np.stack(result), [[4.0] * 3, [6.0] * 3])
    # an array scaled by 2: its rows weighted 1, 2
    np.testing.assert_allclose(gradient(np.ones((2, 3)), 2), [[2.0] * 3, [4.0] * 3])
    check_grads(repeat_and_weigh, ([X, 2 * X], 3), order=2)


def concatenated_literals(x):
    pair = [x] + [2.0 * x]
    return np.sum(np.stack(pair * 2))


def arithmetic_only(x, y):
    return np.sum(x ** 2 - 2 * x * y)


def test_generated_code_decides_only_where_the_transform_cannot():
    known_lists = autotrace.source(autotrace.grad(concatenated_literals))
    assert "first_items(" in known_lists and "sum_copies(" in known_lists
    assert "concatenates(" not in known_lists and "repeats(" not in known_lists
    known_arrays = autotrace.source(autotrace.grad(arithmetic_only, wrt=(0, 1)))
    for helper in ("concatenates(", "repeats(", "first_items(", "sum_copies("):
        assert helper not in known_arrays


def variables_named_like_helpers(x):
    copies = [x] * 2
    unbroadcast = copies[0] * 2.0
    return np.sum(unbroadcast * x[0] + copies[1])


def test_variables_named_like_the_helpers_rules_call():
    # the rules of `*` call `unbroadcast` and `sum_copies`' adjoint calls `copies`: the
    # generated code must call those, not the variables
    check_grads(variables_named_like_helpers, (X,), order=2)


# --- Growing a list in place -------------------------------------------------------------------

def extend_then_add(x):
    items = [x]
    items.extend([x * 2])
    return items[0] + items[1]


def insert_then_multiply(x):
    items = [x]
    items.insert(0, x * 3)
    return items[0] * items[1]


def insert_anywhere(x):
    items = [x, 2.0 * x, 3.0 * x]
    items.insert(-1, x ** 2)        # before the last
    items.insert(10, np.sin(x))     # past the end: appended
    items.insert(-10, 5.0 * x)      # before the start: first
    return np.sum(np.stack(items) * np.arange(1.0, 7.0)[:, None])


def extend_with_itself(x):
    items = [x, x * x]
    items.extend(items)
    items.extend((x,))
    return np.sum(np.stack(items) * np.arange(1.0, 6.0)[:, None])


GROWING_FUNCTIONS = [extend_then_add, insert_then_multiply, insert_anywhere,
                     extend_with_itself]


def test_extend_and_insert_carry_gradient():
    np.testing.assert_allclose(autotrace.grad(extend_then_add)(X), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(autotrace.grad(insert_then_multiply)(X), 6 * X)
    # items: 5x, x, 2x, x**2, 3x, sin x, weighted 1 to 6
    expected = 5 + 2 + 6 + 8 * X + 15 + 6 * np.cos(X)
    np.testing.assert_allclose(autotrace.grad(insert_anywhere)(X), expected)
    value, tangent = autotrace.forward(extend_then_add)(X, tangent=np.ones(3))
    np.testing.assert_allclose(value, 3 * X)
    np.testing.assert_allclose(tangent, [3.0, 3.0, 3.0])


@pytest.mark.parametrize("function", GROWING_FUNCTIONS, ids=lambda f: f.__name__)
def test_extend_and_insert_to_higher_orders(function):
    check_grads(function, (X,), order=2, modes=("reverse", "forward"))
    check_grads(function, (X,), order=3)


def pop_unread(x):
    items = [x * x, 2.0 * x]
    items.append(x ** 3)
    items.pop()
    return np.sum(items[0] * items[-1])


def test_hessian_through_a_pop_whose_value_is_unread():
    # 2 x ** 3: the Hessian is diagonal, 12 x
    np.testing.assert_allclose(np.diag(autotrace.hessian(pop_unread)(X)), 12 * X)


def pop_first(x):
    """The first item popped: x * 2x + 3x / 2 = 2 x**2 + 1.5 x."""
    items = [x, x * 2.0, x * 3.0]
    first = items.pop(0)
    return np.sum(first * items[0] + 0.5 * items[1])


def pop_from_the_middle(x):
    """2x popped (position -2), then what is at 1 (3x) popped unread: 2x * x * x = 2 x**3."""
    items = [x, x * 2.0, x * 3.0]
    middle = items.pop(-2)
    items.pop(1)
    return np.sum(middle * items[0] * x)


def pop_a_queue(x):
    """items x, x**2, x**3, x**4 taken from the front, each times the last, and the last
    alone: x**5 + x**6 + x**7 + x**4."""
    items = [x]
    for i in range(3):
        items.append(items[-1] * x)
    total = 0.0
    while len(items) > 1:
        first = items.pop(0)
        total = total + first * items[-1]
    return np.sum(total + items[0])


def test_pop_at_an_index_takes_that_item():
    # reverse mode put an item popped by index back at the end of the list
    np.testing.assert_allclose(autotrace.grad(pop_first)(X), 4 * X + 1.5)
    np.testing.assert_allclose(autotrace.grad(pop_from_the_middle)(X), 6 * X ** 2)
    expected = 5 * X ** 4 + 6 * X ** 5 + 7 * X ** 6 + 4 * X ** 3
    np.testing.assert_allclose(autotrace.grad(pop_a_queue)(X), expected)
    assert autotrace.forward(pop_a_queue)(X, tangent=np.ones(3))[1] == pytest.approx(
        np.sum(expected))
    np.testing.assert_allclose(autotrace.function(autotrace.grad(pop_a_queue))(X), expected)
    for function in (pop_first, pop_from_the_middle, pop_a_queue):
        check_grads(function, (X,), order=2, modes=("reverse", "forward"))


def pop_past_the_end(x):
    items = [x, x]
    last = items.pop(2)
    return last


def pop_in_an_expression(x):
    items = [x, x]
    return 2.0 * items.pop(0)


def test_pop_at_an_index_out_of_range_or_in_an_expression():
    with pytest.raises(IndexError, match="pop index out of range"):
        autotrace.grad(pop_past_the_end)(1.0)
    with pytest.raises(autotrace.TransformError, match=(
            r"line \d+: autotrace follows \.pop\(i\) as a statement of its own, or assigned "
            r"to a name \(value = items\.pop\(i\)\); call it on its own line$")):
        autotrace.grad(pop_in_an_expression)(1.0)


def zip_kept_then_iterated(x):
    """x * 1 + x**2 * 2."""
    pairs = zip([x, x * x], [1.0, 2.0])
    total = 0.0
    for a, b in pairs:
        total = total + a * b
    return np.sum(total)


def lazy_iterators_made_lists(x):
    """zip: x * x**2; enumerate from 1: its x**2 times 2; reversed: x**2 * 3 + x:
    x**3 + 2 x**2 + 3 x**2 + x = x**3 + 5 x**2 + x."""
    pairs = list(zip([x], [x * x]))
    counted = tuple(enumerate([x, x * x], start=1))
    backwards = list(reversed([x, x * x]))
    return np.sum(pairs[0][0] * pairs[0][1] + counted[1][1] * counted[1][0]
                  + backwards[0] * 3.0 + backwards[1])


def test_zip_enumerate_and_reversed_used_as_values_carry_gradient():
    # they were constants to the gradient: a zip object's items got none
    np.testing.assert_allclose(autotrace.grad(zip_kept_then_iterated)(X), 1 + 4 * X)
    expected = 3 * X ** 2 + 10 * X + 1
    np.testing.assert_allclose(autotrace.grad(lazy_iterators_made_lists)(X), expected)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(lazy_iterators_made_lists))(
        X), expected)
    for function in (zip_kept_then_iterated, lazy_iterators_made_lists):
        check_grads(function, (X,), order=2, modes=("reverse", "forward"))


def weigh_sorted(x):
    """With x = 1.5 the items 3x, x**2, 2x sort as x**2, 2x, 3x (in reverse, 3x, 2x, x**2),
    weighted 1, 10, 100."""
    items = [x * 3.0, x * x, 2.0 * x]
    ascending, descending = sorted(items), sorted(items, reverse=True)
    return (ascending[0] + ascending[1] * 10.0 + ascending[2] * 100.0
            + descending[0] + descending[1] * 10.0 + descending[2] * 100.0)


def second_item(pair):
    return pair[1]


def sorted_by_key_and_a_dict_sorted(x):
    """Pairs sorted by their second items: x**2 first, then x (weighted 10 and 1); the dict's
    keys sorted: a (x**3) then b (x), weighted 1 and 2."""
    pairs = sorted([(x, 3.0), (x * x, 1.0)], key=second_item)
    table = {"b": x, "a": x ** 3}
    total = pairs[0][0] * 10.0 + pairs[1][0]
    for i, key in enumerate(sorted(table)):
        total = total + table[key] * (i + 1.0)
    return total


def test_sorted_items_carry_their_gradients():
    # sorted was a constant to the gradient: the items it returned got none
    x = 1.5
    assert autotrace.grad(weigh_sorted)(x) == pytest.approx(
        (2 * x + 2.0 * 10.0 + 3.0 * 100.0) + (3.0 + 2.0 * 10.0 + 2 * x * 100.0))
    assert autotrace.forward(weigh_sorted)(x)[1] == pytest.approx(autotrace.grad(weigh_sorted)(
        x))
    assert autotrace.grad(sorted_by_key_and_a_dict_sorted)(x) == pytest.approx(
        20 * x + 1 + 3 * x ** 2 + 2)
    for function in (weigh_sorted, sorted_by_key_and_a_dict_sorted):
        check_grads(function, (x,), order=2, modes=("reverse", "forward"))


def append_to_a_row(x):
    rows = [[x], [2.0 * x]]
    rows[0].append(x * x)
    return rows[0][1]


def copy_the_row_and_store_it_back(x):
    rows = [[x], [2.0 * x]]
    row = list(rows[0])
    row.append(x * x)
    rows[0] = row
    return rows[0][1] * rows[1][0]


def test_a_list_changed_inside_another_is_refused_with_what_to_do():
    # the change went unseen: the gradient of x * x through rows[0] was zero
    with pytest.raises(autotrace.TransformError) as caught:
        autotrace.grad(append_to_a_row)(3.0)
    assert caught.value.message == (
        "autotrace cannot differentiate rows[0].append(...): it changes in place a value held "
        "in a container, where the gradient cannot follow it; change a copy in a name of its "
        "own and store it back, e.g. inner = list(rows[0]); inner.append(...); rows[0] = inner")
    assert caught.value.lineno == append_to_a_row.__code__.co_firstlineno + 2
    assert autotrace.grad(copy_the_row_and_store_it_back)(3.0) == pytest.approx(6.0 * 3.0 ** 2)
    check_grads(copy_the_row_and_store_it_back, (3.0,), modes=("reverse", "forward"))


def one_loop_then_another(x, n):
    items = [x]
    for i in range(n):
        items.append(x * 2.0)
    for i in range(len(items)):
        x = x * items[i]
    return np.sum(x)


def test_a_loop_that_never_ran_leaves_its_variable_unbound():
    # with n = 0 the first loop never binds i: the gradient must not read it
    np.testing.assert_allclose(autotrace.grad(one_loop_then_another)(X, 0), 2 * X)
    check_grads(one_loop_then_another, (X, 0), order=2)
    check_grads(one_loop_then_another, (X, 2), order=2)



def constant_first(x):
    items = [x * 2.0, x * 3.0]
    items = [1.0] + items
    return items[0] + items[-1] + items[1]


def appended_constant(x):
    items = [x]
    items = items + [1.0]
    items = [2.0] + items
    return items[0] * items[1] + items[-1] * x


def test_forward_mode_keeps_the_places_of_joined_items():
    # The tangent of [1.0] + items is [0.0] + d_items: dropping the zero would shift them.
    assert autotrace.jvp(constant_first, (3.0,), (1.0,)) == (16.0, 5.0)
    assert autotrace.jvp(appended_constant, (3.0,), (1.0,)) == (9.0, 3.0)
    assert autotrace.grad(appended_constant)(3.0) == 3.0


class _Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def pop(self):  # methods of the user's named like a list's
        return self.a * 2.0

    def append(self, v):
        return _Pair(self.a + v, self.b)


def _pair_methods(x):
    p = _Pair(x, x * 3.0)
    q = p.append(x)
    return np.sum(p.pop() * q.b)


def test_methods_named_append_and_pop_of_a_class_of_the_users_are_its_own():
    x = np.array([1.0, 2.0])
    assert _pair_methods(x) == 6.0 * np.sum(x ** 2)
    for gradient in (autotrace.grad(_pair_methods),
                     autotrace.function(autotrace.grad(_pair_methods))):
        np.testing.assert_allclose(gradient(x), 12.0 * x, rtol=1e-15)


def _deque_pop(x):
    q = collections.deque()
    q.append(x * 2.0)
    return np.sum(q.pop())


def _deque_appendleft(x):
    q = collections.deque()
    q.appendleft(x * 2.0)
    return np.sum(q[0])


def _deque_of_indices(x):
    q = collections.deque([0])
    total = 0.0
    while q:
        i = q.popleft()
        total = total + x[i] ** 2
        if i + 1 < x.shape[0]:
            q.append(i + 1)
    return total


def _pushes_onto_a_heap(x):
    heap = []
    heapq.heappush(heap, np.sum(x) * 3.0)
    return heap[0]


def _sets_an_item_by_operator(x):
    items = [x]
    operator.setitem(items, 0, x * 3.0)
    return np.sum(items[0])


def _appends_unbound(x):
    items = []
    list.append(items, x * 2.0)
    return np.sum(items[0])


def _pushes_through_an_alias(x):
    heap = []
    push = heapq.heappush
    push(heap, np.sum(x) * 3.0)
    return heap[0]


def _appends_through_a_partial(x):
    items = []
    functools.partial(list.append, items)(x * 2.0)
    return np.sum(items[0])


def _appends_through_a_methodcaller(x):
    items = []
    operator.methodcaller("append", x * 2.0)(items)
    return np.sum(items[0])


def _appends_through_a_lambda(x):
    items = []
    add = lambda v: items.append(v)  # noqa: E731
    add(x * 2.0)
    return np.sum(items[0])


def _appends_through_a_partial_of_the_method(x):
    items = []
    functools.partial(items.append)(x * 2.0)
    return np.sum(items[0])


def _appends_through_map(x):
    items = []
    list(map(items.append, [x * 2.0]))
    return np.sum(items[0])


def _appends_in_a_lambda_called_at_once(x):
    items = []
    (lambda v: items.append(v))(x * 2.0)  # noqa: PLC3002
    return np.sum(items[0])


def _appends_constants_through_an_unread_map(x):
    items = []
    unread = list(map(items.append, [1, 2]))  # noqa: F841
    return np.sum(x) * len(items)


def _clears_through_an_alias(x):
    items = [x[0], x[1]]
    clear = items.clear
    clear()
    return np.sum(x ** 2) + len(items)


def test_appends_through_a_map_read_whole():
    # list(map(items.append, xs)) is [items.append(v) for v in xs]: appends followed
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(autotrace.grad(_appends_through_map)(x), [2.0, 2.0])
    assert autotrace.jvp(_appends_through_map, (x,), (np.array([1.0, 3.0]),))[1] == 8.0


def test_functions_and_methods_that_may_keep_a_value_carrying_gradient_are_refused():
    # A deque's append and pop were taken for a list's and crashed; appendleft, heappush,
    # operator.setitem and list.append called unbound lost the gradient of what they kept.
    x = np.array([1.0, 2.0])
    for function, what, why in (
            (_deque_pop, "deque.append", "the methods of deque objects may keep what they are "
             "given"),
            (_deque_appendleft, "deque.appendleft", "the methods of deque objects may keep"),
            (_pushes_onto_a_heap, "heapq.heappush", "its result is not read, so it is called "
             "for what it does with that value"),
            (_sets_an_item_by_operator, "operator.setitem", "its result is not read"),
            (_appends_unbound, "list.append", "its result is not read"),
            # (called through a name, a partial or a methodcaller: resolved when it runs)
            (_pushes_through_an_alias, "heapq.heappush", "its result is not read"),
            (_appends_through_a_partial, "functools.partial(list.append, ...)",
             "its result is not read"),
            (_appends_through_a_methodcaller, "operator.methodcaller", "its result is not read"),
            (_appends_through_a_partial_of_the_method, "list.append",
             "the methods of list objects may keep what they are given")):
        line = function.__code__.co_firstlineno + (3 if function is _pushes_through_an_alias
                                                   else 2)
        for derivative in (lambda x: autotrace.grad(function)(x),
                           lambda x: autotrace.jvp(function, (x,), (np.ones(2),))):
            with pytest.raises(autotrace.TransformError, match=re.escape(
                    f"line {line}: autotrace cannot differentiate this call of {what}: it is "
                    f"given a value that carries gradient, and {why}")):
                derivative(x)
    line = _appends_through_a_lambda.__code__.co_firstlineno + 3
    with pytest.raises(autotrace.TransformError, match=re.escape(
            f"line {line}: add(x * 2.0) changes 'items' in place (items.append(...), line "
            f"{line - 1}), which autotrace does not follow into this function")):
        autotrace.grad(_appends_through_a_lambda)(x)
    line = _appends_in_a_lambda_called_at_once.__code__.co_firstlineno + 2
    with pytest.raises(autotrace.TransformError, match=re.escape(
            f"line {line}: (lambda v: items.append(v))(x * 2.0) changes 'items' in place")):
        autotrace.grad(_appends_in_a_lambda_called_at_once)(x)
    # an unread list(...) of a lazy map that appends still runs: the value was 0.0
    value, gradient = autotrace.value_and_grad(_appends_constants_through_an_unread_map)(x)
    assert value == _appends_constants_through_an_unread_map(x) == 2.0 * np.sum(x)
    np.testing.assert_array_equal(gradient, [2.0, 2.0])
    # a method that changes a list in place, taken as a value, is refused where it is taken:
    # called later, its change went unseen (sorting gave a wrong gradient, clearing a crash)
    line = _clears_through_an_alias.__code__.co_firstlineno + 2
    with pytest.raises(autotrace.TransformError, match=re.escape(
            f"line {line}: autotrace cannot differentiate items.clear taken as a value")):
        autotrace.grad(_clears_through_an_alias)(x)
    # a deque holding no value that carries gradient is followed as Python runs it
    for gradient in (autotrace.grad(_deque_of_indices),
                     autotrace.function(autotrace.grad(_deque_of_indices))):
        np.testing.assert_array_equal(gradient(x), 2.0 * x)


class _ScalingList(list):
    def append(self, value):  # keeps its items where list does, out of sight of autotrace
        super().append(value * 3.0)


def _appends_to_a_list_subclass(x):
    items = _ScalingList()
    items.append(x)
    return np.sum(items.pop() * x)


class _TuplePair(tuple):
    pass


def _builds_a_tuple_subclass(x):
    a, b = _TuplePair((x, x * 3.0))
    return np.sum(a * b)


def test_subclasses_of_list_and_tuple_that_hold_values_carrying_gradient_are_refused():
    # Their gradients were lost: [4, 8] where 6 x is right, and zeros.
    x = np.array([1.0, 2.0])
    line = _appends_to_a_list_subclass.__code__.co_firstlineno + 2
    with pytest.raises(autotrace.TransformError, match=re.escape(
            f"line {line}: autotrace cannot differentiate this call of _ScalingList.append: "
            "it is given a value that carries gradient, and the methods of _ScalingList "
            "objects may keep what they are given")):
        autotrace.grad(_appends_to_a_list_subclass)(x)
    line = _builds_a_tuple_subclass.__code__.co_firstlineno + 1
    with pytest.raises(autotrace.TransformError, match=re.escape(
            f"line {line}: autotrace cannot differentiate building a _TuplePair from values that "
            "carry gradient: it derives from tuple")):
        autotrace.grad(_builds_a_tuple_subclass)(x)


def _unpacks_dicts(x):
    first, second = {"p": x, "q": x * 2.0}  # a dict's keys
    a, b = {"p": x * 3.0, "q": x * 2.0}.values()
    return np.sum(a * b) + len(first + second)


def test_unpacking_a_dict_takes_its_keys():
    # (it was read as d[0], d[1]: a KeyError)
    x = np.array([1.0, 2.0])
    assert _unpacks_dicts(x) == 6.0 * np.sum(x * x) + 2.0
    check_grads(_unpacks_dicts, (x,), order=2, modes=("reverse", "forward"))


class _Bag:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def pop(self, key):  # a method of the user's named like a list's pop(i)
        return getattr(self, key) * 2.0


def _pops_a_key_of_a_bag(x):
    bag = _Bag(x, x * 3.0)
    value = bag.pop("b")
    return np.sum(value * x)


def test_pop_with_an_argument_of_a_class_of_the_users_is_its_own():
    # (it was rewritten as a list's pop(i): "object of type '_Bag' has no len()")
    x = np.array([1.0, 2.0])
    assert _pops_a_key_of_a_bag(x) == 6.0 * np.sum(x * x)
    check_grads(_pops_a_key_of_a_bag, (x,), order=2, modes=("reverse", "forward"))


def _shuffles_values(x):
    y = x * 2.0
    np.random.default_rng(0).shuffle(y)
    return np.sum(y * np.arange(3.0))


def _shuffles_a_list(x):
    items = [x[0], x[1], x[2]]
    random.Random(0).shuffle(items)
    return items[0] * 10.0 + items[1]


def _shuffles_indices(x):
    order = np.arange(3)
    np.random.default_rng(0).shuffle(order)
    return np.sum(x[order] * np.arange(3.0))


def test_shuffling_values_that_carry_gradient_is_refused_and_indices_are_not():
    # (the gradient ignored the new order: [2, 40, 600]-like values where it is reordered)
    x = np.array([1.0, 2.0, 3.0])
    for function, first in ((_shuffles_values, "y"), (_shuffles_a_list, "items")):
        line = function.__code__.co_firstlineno + 2
        with pytest.raises(autotrace.TransformError, match=re.escape(
                f"line {line}: autotrace cannot differentiate this shuffle: it reorders "
                f"{first!r}, which carries gradient, in place, which autotrace does not follow; "
                f"index with a permutation instead: "
                f"{first} = {first}[rng.permutation(len({first}))]")):
            autotrace.grad(function)(x)
    order = np.arange(3)
    np.random.default_rng(0).shuffle(order)
    expected = np.zeros(3)
    expected[order] = np.arange(3.0)
    np.testing.assert_array_equal(autotrace.grad(_shuffles_indices)(x), expected)


class _Checked(collections.abc.MutableMapping):
    def __init__(self):
        self.items = {}

    def __getitem__(self, key):
        return self.items[key]

    def __setitem__(self, key, value):
        self.items[key] = value

    def __delitem__(self, key):
        del self.items[key]

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    def check(self, value):  # a method of the user's, read from its source
        assert value.shape == (3,)


def _checks_with_a_mapping(x):
    _Checked().check(x * 2.0)
    return np.sum(x * x)


def test_a_method_of_the_users_on_a_container_class_is_read():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(autotrace.grad(_checks_with_a_mapping)(x), 2.0 * x)


def _appends_and_keeps_none(x):
    out = []
    _ = out.append(x * 2.0)  # (the append's None, kept in a name)
    return np.sum(out[0] * x)


def _appends_in_a_comprehension(x):
    out = []
    [out.append(v) for v in [x * 2.0]]
    return np.sum(out[0] * x)


def _unpacks_a_dict_it_built(x):
    d = {"p": x[0], "q": x[1]}
    first, second = d  # its keys
    return d[first] * d[second]


def _zips_unpacked(x):
    pairs = [(x[0], x[1]), (x[1] * 2.0, x[2])]
    a, b = zip(*pairs)
    return a[0] * b[1] + a[1]


def test_an_append_whose_none_is_kept_and_a_dict_unpacked_by_name():
    # The append's gradient was lost ([2, 4, 6] for 4 x); the dict was indexed: KeyError 0.
    x = np.array([1.0, 2.0, 3.0])
    for function in (_appends_and_keeps_none, _appends_in_a_comprehension):
        np.testing.assert_array_equal(autotrace.grad(function)(x), 4.0 * x)
    np.testing.assert_array_equal(autotrace.grad(_unpacks_a_dict_it_built)(x), [2.0, 1.0, 0.0])
    line = _zips_unpacked.__code__.co_firstlineno + 2
    with pytest.raises(autotrace.TransformError, match=re.escape(
            f"line {line}: autotrace follows zip(...) of the arguments written out, which it "
            "counts; zip(*pairs) passes them unpacked")):
        autotrace.grad(_zips_unpacked)(x)


class _Scaled:
    def __init__(self, k):
        self.k = k

    def append(self, v):  # returns its value: no list's append
        return v * self.k


def _appends_to_a_parameter(x, obj):
    t = obj.append(x[0]) or 0.0
    return t * x[1] + x[2]


def test_an_append_used_as_a_value_of_an_object_passed_in_keeps_its_value():
    # Only a list the function builds has its append's value taken for None.
    x = np.array([1.0, 2.0, 3.0])
    value, gradient = autotrace.value_and_grad(_appends_to_a_parameter)(x, _Scaled(3.0))
    assert value == _appends_to_a_parameter(x, _Scaled(3.0)) == 9.0
    np.testing.assert_array_equal(gradient, [6.0, 3.0, 1.0])
