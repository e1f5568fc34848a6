"""A write into an array after another name for it was used.

`w = u; v = w * w; u[0] = 3.0`: the write changes what `w` sees, and the adjoint sweep, which
runs after the primal sweep, reads `w` for `v`'s rule. Reverse mode must bring back the items
the write changed before that rule runs, whichever name (an alias, a view, an item of a list or
dict, what a call returned) the rule reads them through. Each program below is checked
against finite differences in every mode, eager and traced.
"""
import gast
import numpy as np
import pytest

import autotrace
from autotrace.transforms.analysis.names_alike import names_bound_alike
from autotrace.transforms.codegen.codegen import to_source
from autotrace.runtime.tracing.stacks import StackMismatch
from autotrace.testing import check_grads
from tests.numeric import (assert_gradients_eager_and_traced, central_difference,
                           check_every_mode)

X = np.array([0.3, -0.7, 1.1, 0.4, -0.2, 0.9])


def returns_its_argument(a):
    return a


CALLEES = {"returns_its_argument": returns_its_argument}


def another_name(x):
    u = x * 1.0
    w = u
    v = w * w
    u[0] = 3.0
    return np.sum(v)


def a_whole_slice(x):
    u = x * 1.0
    w = u[:]
    v = w * w
    u[0] = 3.0
    return np.sum(v)


def a_part_slice(x):
    u = np.sin(x)
    w = u[2:]
    v = w * w
    u[3] = -1.0
    return np.sum(v) + np.sum(u)


def a_transpose(x):
    u = x.reshape(2, 3) * 1.0
    w = u.T
    v = np.sin(w) * w
    u[0, 1] = 2.0
    return np.sum(v)


def a_reshape(x):
    u = np.cos(x)
    w = u.reshape(3, 2)
    v = w * w * w
    u[1] = 0.5
    return np.sum(v)


def written_through_the_view(x):
    u = x * 2.0
    w = u[1:]
    v = u * u
    w[0] = 7.0
    return np.sum(v)


def an_item_of_a_list(x):
    u = x * 1.0
    held = [u, x]
    v = held[0] * held[0]
    u[0] = 0.0
    return np.sum(v)


def an_item_of_a_dict(x):
    u = x * 1.5
    held = {"a": u}
    v = np.sin(held["a"])
    u[2] = 1.0
    return np.sum(v)


def a_reduction_read_later(x):
    u = x * 1.0
    w = u
    s = np.sum(w * w)
    u[0] = 0.0
    return s + np.sum(u)


def a_result_of_a_call(x):
    u = x * 1.0
    w = returns_its_argument(u)
    s = np.sum(w * w)
    u[0] = 3.0
    return s


def a_result_of_a_call_not_read(x):
    # a function taken from a dict: which one runs, the source does not say, so its result may
    # be its argument (here it is)
    u = x * 1.0
    w = CALLEES["returns_its_argument"](u)
    s = np.sum(np.sin(w))
    u[1] = 3.0
    return s


def unpacked_from_a_tuple(x):
    u = x * 1.0
    pair = (u, x)
    a, b = pair
    s = np.sum(a * a * b)
    u[1] = 2.0
    return s


def an_op_result_written_with_plus_equals(x):
    u = np.tanh(x)
    u[0] += 0.5
    return np.sum(u * u)


def written_in_a_loop(x):
    u = x * 1.0
    total = 0.0
    for i in range(3):
        w = u[i:]
        total = total + np.sum(w * w)
        u[i] = 0.5
    return total + np.sum(u)


def made_again_in_each_run_of_a_loop(x):
    # each run's u must get its own items back: the restore needs that run's array
    total = 0.0
    for i in range(3):
        u = x * (i + 1.0)
        w = u
        total = total + np.sum(w * w)
        u[0] = 0.0
    return total


def written_in_a_branch(x):
    u = x * 1.0
    w = u[:]
    v = w * w
    if x[0] > 0:
        u[1] = 2.0
    else:
        u[2] = 2.0
    return np.sum(v)


def written_in_a_loop_with_a_branch(x):
    u = np.sin(x)
    w = u
    total = np.sum(w * w)
    for i in range(4):
        if x[i] > 0:
            u[i] = u[i] * 2.0
    return total + np.sum(np.cos(u))


ALIAS_WRITES = [another_name, a_whole_slice, a_part_slice, a_transpose, a_reshape,
                written_through_the_view, an_item_of_a_list, an_item_of_a_dict,
                a_reduction_read_later, a_result_of_a_call, a_result_of_a_call_not_read,
                unpacked_from_a_tuple,
                an_op_result_written_with_plus_equals, written_in_a_loop,
                made_again_in_each_run_of_a_loop, written_in_a_branch,
                written_in_a_loop_with_a_branch]


@pytest.mark.parametrize("function", ALIAS_WRITES, ids=lambda f: f.__name__)
def test_a_write_after_another_name_was_used(function):
    for x in (X, -X[::-1]):
        expected = assert_gradients_eager_and_traced(function, x)
        assert autotrace.function(function)(x) == pytest.approx(function(x), rel=1e-12)
    check_grads(function, (X,), order=2, modes=("reverse", "forward"))


def written_under_a_traced_condition(x):
    u = x * 1.0
    w = u[:]
    v = w * w
    if np.sum(x) > 0.0:
        u[0] = 3.0
    return np.sum(v)


def test_a_write_under_a_traced_condition():
    traced = autotrace.function(autotrace.grad(written_under_a_traced_condition))
    for x in (X, -X):
        expected = central_difference(written_under_a_traced_condition, x)
        np.testing.assert_allclose(traced(x), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(autotrace.grad(written_under_a_traced_condition)(x),
                                   expected, rtol=1e-6, atol=1e-8)


def copied_by_an_op_then_written(x):
    u = np.sin(x)
    s = np.sum(u * 2.0)
    u[0] = 3.0
    return s + np.sum(u)


def another_name_not_read_by_a_rule(x):
    u = np.sin(x)
    w = u
    s = np.sum(w * 2.0)
    u[0] = 3.0
    return s + np.sum(u)


@pytest.mark.parametrize("function", [copied_by_an_op_then_written,
                                      another_name_not_read_by_a_rule],
                         ids=lambda f: f.__name__)
def test_no_item_save_where_no_rule_reads_the_items_written(function):
    # sin's rule reads x, `w * 2.0`'s reads nothing of w: the items u[0] had are not needed
    source = autotrace.source(autotrace.grad(function))
    assert "read_item" not in source and "restore_item" not in source, source
    np.testing.assert_allclose(autotrace.grad(function)(X), central_difference(function, X),
                               rtol=1e-6, atol=1e-8)


def test_an_item_save_where_a_rule_reads_another_name():
    source = autotrace.source(autotrace.grad(another_name))
    assert "read_item(u, 0)" in source and "restore_item(u, 0, " in source, source


# An op's result, written in place under another name, where a traced if or loop then rebinds
# that name: `x = np.tanh(x)` is `_t2 = np.tanh(x); x = _t2`, one array, and tanh's rule reads
# _t2. The adjoint sweep's x (popped from a stack, given back by the if) is, in a traced graph,
# another value than _t2: the items must come back into _t2 as well.

def tanh_written_then_copied_under_a_traced_if(x):
    x = np.tanh(x)
    x[0] += 0.7
    if np.sum(x) > 0.0:
        x = np.copy(x)
    return np.sum(x * x)


def tanh_written_then_rebound_by_both_branches(x):
    x = np.tanh(x)
    x[1] += 0.7
    if np.sum(x) > 0.0:
        x = np.copy(x)
    else:
        x = x * 2.0
    return np.sum(x * x)


def tanh_written_then_rebound_by_a_traced_while(x):
    x = np.tanh(x)
    x[0] += 0.7
    while np.sum(x) < 4.0:
        x = x + 1.0
    return np.sum(x * x)


def exp_written_then_copied_under_a_traced_if(x):
    x = np.exp(x)
    x[2] *= 3.0
    if np.sum(x) > 0.0:
        x = np.copy(x)
    return np.sum(x * x)


def sqrt_written_then_copied_under_a_traced_if(x):
    x = np.sqrt(x + 2.0)
    x[0] += 0.7
    if np.sum(x) > 0.0:
        x = np.copy(x)
    return np.sum(x * x * x)


RESULT_WRITES = [tanh_written_then_copied_under_a_traced_if,
                 tanh_written_then_rebound_by_both_branches,
                 tanh_written_then_rebound_by_a_traced_while,
                 exp_written_then_copied_under_a_traced_if,
                 sqrt_written_then_copied_under_a_traced_if]


SECOND_TRACED_REFUSED = {tanh_written_then_rebound_by_a_traced_while}


@pytest.mark.parametrize("function", RESULT_WRITES, ids=lambda f: f.__name__)
def test_a_rule_reading_its_result_after_a_write_and_a_traced_rebinding(function):
    weights = np.linspace(0.5, 1.5, X.size)

    def weighted_gradient(x):  # a scalar of the gradient, for a second derivative
        return np.sum(autotrace.grad(function)(x) * weights)
    for x in (X, -X[::-1]):
        assert_gradients_eager_and_traced(function, x)
        second = central_difference(weighted_gradient, x)
        np.testing.assert_allclose(autotrace.grad(weighted_gradient)(x), second, rtol=1e-5,
                                   atol=1e-6)
        traced_second = autotrace.grad(autotrace.function(weighted_gradient))
        np.testing.assert_allclose(traced_second(x), second, rtol=1e-5, atol=1e-6)
        second_traced = autotrace.function(autotrace.grad(weighted_gradient))
        if function in SECOND_TRACED_REFUSED:
            # The gradient of the traced gradient flows through the items saved under the
            # traced loop: its stack is refused, as the error says, never a wrong value.
            with pytest.raises(StackMismatch, match="Take the gradient of the traced function"):
                second_traced(x)
        else:
            # The copy under the if is restored from its name, not from a stack
            # (transforms/codegen/restores.py; the square root's value given a name of its
            # own for it): the traced graph follows it.
            np.testing.assert_allclose(second_traced(x), second, rtol=1e-5, atol=1e-6)
    check_grads(function, (X,), order=2, modes=("reverse", "forward"))


def test_names_bound_to_the_very_object_a_write_changes():
    source = """
def f(x, a):
    t = np.tanh(x)
    x = t
    w = x[:]
    y = x
    x[0] = a
    y = y * 2.0
    if a > 0:
        y[1] = a
    for i in range(2):
        z = t
        t = z * 1.0
        t[i] = a
    x = np.copy(x)
    t[2] = a
"""
    body = gast.parse(source).body[0].body

    def item_write(statement):
        target = statement.targets[0] if isinstance(statement, gast.Assign) else None
        return [target.value.id] if isinstance(target, gast.Subscript) else []
    by_line = {statement.lineno: (names, [(view, to_source(indexing).strip())
                                          for view, indexing in views])
               for statement, names, views in names_bound_alike(body, item_write).values()}
    assert by_line == {
        7: (["t", "y"], [("w", "x[:]")]),  # y = x is the array, w a view of it
        10: ([], []),  # y was bound to a new array before the if
        14: ([], []),  # t is bound again in each run of the loop; z was bound to the old t
        16: ([], []),  # t is the loop's last array, x a copy
    }


def test_views_known_at_a_write_are_those_whose_names_and_index_stay_bound():
    source = """
def f(x, a, i):
    v = x[1:3]
    u = x[i]
    k = v
    x[0] = a
    i = i + 1
    x[1] = a
    while a > 0:
        x[2] = a
        r = x[0]
        x[0] = a
        v = x * 2.0
        x[1] = a
"""
    body = gast.parse(source).body[0].body

    def item_write(statement):
        target = statement.targets[0] if isinstance(statement, gast.Assign) else None
        return [target.value.id] if isinstance(target, gast.Subscript) else []
    by_line = {statement.lineno: [(view, to_source(indexing).strip())
                                  for view, indexing in views]
               for statement, _, views in names_bound_alike(body, item_write).values()}
    assert by_line == {
        6: [("k", "x[1:3]"), ("u", "x[i]"), ("v", "x[1:3]")],  # k = v is that view too
        8: [("k", "x[1:3]"), ("v", "x[1:3]")],  # i was bound again: x[i] is another item
        10: [("k", "x[1:3]")],  # the loop binds v again; k it never binds
        12: [("k", "x[1:3]"), ("r", "x[0]")],
        14: [("k", "x[1:3]"), ("r", "x[0]")],  # v is a new array
    }


def rebound_in_a_loop_that_runs(x):
    a = x * 2.0
    v = np.asarray(a)  # a itself
    for _ in range(2):  # runs: after it, a is what the body made
        a = np.sum(v * x) * 0.5
    v[0] = 1.0  # a does not see it
    return np.sum(v * x) + a


def rebound_in_a_loop_that_may_not_run(x, n=2):
    a = x * 2.0
    v = np.asarray(a)
    for _ in range(n):  # may run no time: a may still be v's memory
        a = np.sum(v * x) * 0.5
    v[0] = 1.0
    return np.sum(v * x) + a


def returns_in_a_loop_that_runs(x):
    y = x * 1.0
    for _ in range(3):
        return np.sum(y * x)
    y[0] = 3.0
    return np.sum(y)


def test_a_loop_over_a_range_of_constants_runs_before_what_follows_it():
    assert_gradients_eager_and_traced(rebound_in_a_loop_that_runs, X)
    assert_gradients_eager_and_traced(returns_in_a_loop_that_runs, X)
    with pytest.raises(autotrace.TransformError, match="writes into 'v', which may share its "
                                                       "memory with 'a'"):
        autotrace.grad(rebound_in_a_loop_that_may_not_run)(X)


def _indexes_a_number(x):
    return np.sum(x * x)[()] * 2.0  # np.sum's result is a NumPy number


def _fills_a_0d_array(x):
    z = np.zeros(())
    z[...] = x[0] * x[1]
    return z * x[2]


def _sets_a_0d_array_at_the_empty_index(x):
    z = np.zeros(())
    z[()] = x[0] * x[1]
    return z * x[2]


@pytest.mark.parametrize("function", [_indexes_a_number, _fills_a_0d_array,
                                      _sets_a_0d_array_at_the_empty_index])
def test_items_of_0d_arrays_and_numpy_numbers(function):
    # The gradient of a 0-d array is a NumPy number, which its item's adjoint wrote into:
    # "'numpy.float64' object does not support item assignment"
    x = np.array([1.0, 2.0, 3.0])
    check_every_mode(function, x)
    check_grads(function, (x,), order=2, modes=("reverse", "forward"))


def gram_schmidt_step(x):
    Q = x.reshape(2, 3).copy()
    for j in range(1, Q.shape[1]):
        Q[:, j] -= (Q[:, 0] @ Q[:, j]) * Q[:, 0]
    return np.sum(Q ** 2)


def row_slice_added(x):
    Z = x.reshape(2, 3).copy()
    Z[0, 1:] += Z[1, :2] * 2.0
    return np.sum(Z ** 3)


@pytest.mark.parametrize("function", [gram_schmidt_step, row_slice_added])
def test_augmented_writes_into_a_copy_with_slices_in_a_tuple_index(function):
    # (the check of other items' memory wrote `(0, 1:)` into generated code: a SyntaxError)
    check_every_mode(function, X)


def test_the_advice_of_an_augmented_item_write_names_its_operator():
    def shifted(x):
        y = x * 1.0
        pair, k = [y, y], 0
        pair[k + 1] -= 1.0  # (the operator was read from the text: "+ 1]" gave "Write ... +")
        return np.sum(pair[1] * pair[0])
    with pytest.raises(autotrace.TransformError, match=r"Write pair\[k \+ 1\] = pair\[k \+ 1\] - "
                                                       r"\.\.\. if"):
        autotrace.grad(shifted)(X)


def reversed_into_itself(x):
    y = x ** 2
    y[::-1] = y
    return np.sum(y * np.arange(6.0))


def permuted_into_itself(x):
    y = np.sin(x)
    y[[5, 3, 1, 0, 2, 4]] = y
    return np.sum(y * np.arange(6.0) ** 2)


def reversed_through_another_name(x):
    y = x ** 3
    z = y
    y[1::2] = z[::2]
    return np.sum(y * np.arange(6.0))


@pytest.mark.parametrize("function", [reversed_into_itself, permuted_into_itself,
                                      reversed_through_another_name])
def test_an_array_written_with_its_own_items(function):
    # (the item's gradient was taken into the value's, which the clear of the items written
    # then wiped: a zero gradient)
    check_every_mode(function, X)


def written_at_repeated_indices(x, index):
    z = np.zeros(6)
    z[index] = x * 2.0
    z[index[::-1]] += x ** 2
    return np.sum(z * z * np.arange(1.0, 7.0))


def test_writes_at_repeated_indices_keep_the_last_in_every_mode():
    # (NumPy keeps the last write to an element written twice: the traced gradient gave the
    # overwritten values gradient too, with the index a constant or an argument)
    index = np.array([0, 2, 2, 5, 1, 0])
    constant_index = index.copy()

    def with_constant_index(x):
        return written_at_repeated_indices(x, constant_index)
    check_every_mode(with_constant_index, X)
    expected = central_difference(lambda x: written_at_repeated_indices(x, index), X)
    for gradient in (autotrace.grad(written_at_repeated_indices),
                     autotrace.function(autotrace.grad(written_at_repeated_indices)),
                     autotrace.grad(autotrace.function(written_at_repeated_indices))):
        np.testing.assert_allclose(gradient(X, index), expected, rtol=1e-6, atol=1e-8)
