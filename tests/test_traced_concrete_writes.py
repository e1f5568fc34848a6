"""NumPy arrays made in a traced function meet traced values: written with one, indexed by one.

A NumPy array made inside the function (`np.zeros(3)`) and written with a traced value becomes
a new traced value bound to the name written through. Where no other name holds the array (a
buffer filled in a loop) that is NumPy's value. Where another name read afterwards shares its
memory (an alias, a view, a container), that name would keep the old contents: autotrace
refuses, naming the line and saying to make the array traced (np.zeros_like(x, shape=...)).
A NumPy array indexed by a traced index or mask (one-hot labels, `W[np.argmax(x)]`) is read as
a graph constant.
"""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control_scope import ControlFlowError
from tests.numeric import assert_gradients_in_both_orders, central_difference, check_every_mode

W = np.arange(12.0).reshape(3, 4)
V = np.array([0.5, -1.0, 2.0])


# --- writes through another name: refused -------------------------------------------------------

def through_an_alias(x):
    y = np.zeros(3)
    z = y
    z[0] = x[0]
    return y


def through_a_row(x):
    rows = np.zeros((2, 3))
    r = rows[0]
    r[:] = x
    return rows


def through_a_slice(x):
    y = np.zeros(3)
    w = y[1:]
    w[0] = x[0]
    return y


def held_by_a_dict(x):
    y = np.zeros(3)
    d = {"k": y}
    y[1] = x[1]
    return d["k"]


def read_through_a_column(x):
    out = np.zeros((2, 3))
    col = out[:, 1]
    out[0] = x
    return col


def in_a_traced_if(x):
    y = np.zeros(3)
    z = y
    if x.sum() > 0:
        z[0] = 2.0
    return y


def fill(buffer, x):
    buffer[0] = np.tanh(x[0])


def fills_in_a_helper(x):
    y = np.zeros(3)
    fill(y, x)
    return y


GLOBAL_BUFFER = np.zeros(3)


def through_a_global_view(x):
    r = GLOBAL_BUFFER.reshape(3)
    r[0] = x[0]
    return GLOBAL_BUFFER.sum() + r


REFUSED = [  # (function, what the refusal says)
    (through_an_alias, r"'y' shares \(y = np.zeros\(3\), line \d+\).*np.zeros_like\(x, shape=3\)"),
    (through_a_row, r"'rows' shares .*np.zeros_like\(x, shape=\(2, 3\)\)"),
    (through_a_slice, r"'w' \(w = y\[1:\], line \d+\), whose memory 'y' shares"),
    (held_by_a_dict, r"'d' shares \(d = \{'k': y\}, line \d+\)"),
    (read_through_a_column, r"'col' shares \(col = out\[:, 1\], line \d+\)"),
    (in_a_traced_if, r"`if x.sum\(\) > 0:` runs on a traced value"),
    (fills_in_a_helper, r"the argument 'buffer' of fill"),
    (through_a_global_view, r"an array the function does not make"),
]


@pytest.mark.parametrize("function, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_a_traced_write_other_names_would_miss_is_refused(function, message):
    x = np.array([1.0, 2.0, 3.0])
    function(x.copy())  # NumPy's runs
    with pytest.raises(ControlFlowError, match=message) as refused:
        autotrace.function(function)(x)
    # the user's file and line, and the line written
    assert str(refused.value).startswith(f"{__file__}:")
    assert "] = " in str(refused.value).splitlines()[0]


def added_through_an_alias(x):
    y = np.zeros(3)
    z = y
    z += x
    return y


def test_an_in_place_operator_other_names_would_miss_is_refused():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ControlFlowError, match=(
            r":\d+: z \+= x\n  this writes traced values into the NumPy array 'z' \(z = y, "
            r"line \d+\), whose memory 'y' shares .*np.zeros_like\(x, shape=3\)")):
        autotrace.function(added_through_an_alias)(x)


def test_the_operand_of_an_in_place_operator_is_computed_once():
    calls = []

    def operand(x):
        calls.append(1)
        return x * 2.0

    def accumulates(x):
        acc = np.zeros(3)
        acc += operand(x)
        return acc

    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(autotrace.function(accumulates)(x), 2.0 * x)
    assert len(calls) == 1


def made_traced(x):
    y = np.zeros_like(x, shape=(3,))
    z = y
    w = y[1:]
    d = {"k": y}
    z[0] = x[0]
    w[1] = x[1]
    return y + d["k"]


def test_the_advice_traces_every_name():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(autotrace.function(made_traced)(x), made_traced(x))


def alias_written_with_a_constant(x):
    y = np.zeros(3)
    z = y
    z[0] = 5.0  # a NumPy value: written in place, as NumPy does
    return y * x


def row_written_after_its_base(x):
    rows = np.zeros((2, 3))
    r = rows[0]  # (rows is not read again)
    r[:] = x
    return r * 2.0


def reshaped_buffer(x):
    y = np.zeros(6).reshape(2, 3)
    y[0] = x
    return y


def tuple_of_buffers(x):
    low, high = np.zeros(3), np.zeros(3)
    for i in range(3):
        low[i] = x[i] - 1.0
        high[i] = x[i] + 1.0
    return high - low


@pytest.mark.parametrize("function", [alias_written_with_a_constant, row_written_after_its_base,
                                      reshaped_buffer, tuple_of_buffers])
def test_writes_no_other_name_reads_are_followed(function):
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(autotrace.function(function)(x), function(x))


# --- one name written: a buffer, in loops -----------------------------------------------------

def buffer_in_a_for_loop(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = np.sin(x[i]) * x[(i + 1) % 3]
    return np.sum(y * y)


def buffer_in_a_traced_while_loop(x):
    y = np.zeros(3)
    i = 0
    while i < 3 and np.sum(x) > -100.0:  # traced: a graph loop
        y[i] = x[i] * x[i] + y[i - 1]
        i = i + 1
    return np.sum(y * x)


def buffer_added_into(x):
    y = np.ones(3)
    for i in range(3):
        y[i] += np.tanh(x[i])
        y[i] *= x[2 - i]
    return np.sum(y)


def buffer_written_under_traced_ifs(x):
    y = np.zeros(3)
    for i in range(3):  # a Python loop: each `if` is traced, the first one takes the array over
        if x[i] > 0.0:
            y[i] = 5.0
        else:
            y[i] = x[i] * x[i]
        if x[i] < 1.0:
            y[(i + 1) % 3] += x[i]
    return np.sum(y * x)


def clamped_in_place(x):
    y = x * 1.0
    ones = np.ones(3)
    for i in range(3):
        if y[i] > 1.0:
            y[i] = 1.0
            ones[i] = 0.5
    return np.sum(y ** 3 * ones)


def accumulated_in_place(x):
    acc = np.zeros(3)  # a NumPy array: `+=` with a traced value makes it traced
    for i in range(3):
        acc += x * x[i]
    acc *= 0.5
    total = np.zeros(())
    total += x[0] * x[1]
    return np.sum(acc * x) + total


def accumulated_in_a_traced_loop(x):
    acc = np.zeros(3)
    i = 0
    while i < 3 and np.sum(x) > -100.0:  # traced: a graph loop
        acc -= np.sin(x) * x[i]
        i = i + 1
    return np.sum(acc * acc)


BUFFERS = [buffer_in_a_for_loop, buffer_in_a_traced_while_loop, buffer_added_into,
           buffer_written_under_traced_ifs, clamped_in_place, accumulated_in_place,
           accumulated_in_a_traced_loop]


@pytest.mark.parametrize("function", BUFFERS)
def test_a_buffer_written_through_one_name(function):
    x = np.array([0.3, -0.7, 1.1])
    assert autotrace.function(function)(x) == pytest.approx(function(x))
    assert_gradients_in_both_orders(function, x)


def test_second_derivatives_of_writes_under_traced_ifs():
    """The Hessian's forward sweep over the gradient carries a tangent made from a NumPy unit
    vector: written under the gradient's traced `if`s, it is taken over as the user's array
    is."""
    x = np.array([0.3, -0.7, 1.1])
    for function in (clamped_in_place, buffer_written_under_traced_ifs):
        expected = np.stack([central_difference(
            lambda x, i=i: autotrace.grad(function)(x)[i], x) for i in range(3)])
        np.testing.assert_allclose(autotrace.function(autotrace.hessian(function))(x),
                                   expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(autotrace.hessian(function)(x), expected, rtol=1e-6,
                                   atol=1e-8)


# --- reading a NumPy array at a traced index ----------------------------------------------------

def one_hot_loss(x, labels):
    shifted = x - np.max(x, axis=1, keepdims=True)
    log_probabilities = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(np.eye(3)[labels] * log_probabilities)


def test_one_hot_labels():
    x = np.array([[0.2, -1.0, 0.5], [1.5, 0.3, -0.2]])
    labels = np.array([2, 0])
    assert autotrace.function(one_hot_loss)(x, labels) == pytest.approx(one_hot_loss(x, labels))
    expected = central_difference(lambda v: one_hot_loss(v, labels), x)
    gradient = autotrace.function(autotrace.grad(one_hot_loss))(x, labels)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)


def masked_global(x):
    return np.sum(V[x > 0])


def masked_local(x):
    weights = np.array([1.0, 10.0, 100.0])
    return np.sum(weights[x > 0] * x[x > 0])


def row_at_the_argmax(x):
    return W[np.argmax(x)] * np.sum(x)


def taken_in_sorted_order(x):
    return np.take(V, np.argsort(x)) * x


def rows_taken_in_sorted_order(x):
    return np.take(W, np.argsort(x), axis=0)[:, 1:] @ x


def column_at_a_traced_index(x):
    return W[:, np.argmin(x)] + W[1:, [np.argmax(x), 0]].sum()


def counts_at_traced_indices(x):
    counts = np.zeros(3)
    counts[np.argmax(x)] += 1.0
    counts[np.argmin(x)] += x[0]
    return counts


READS = [masked_global, masked_local, row_at_the_argmax, taken_in_sorted_order,
         rows_taken_in_sorted_order, column_at_a_traced_index, counts_at_traced_indices]


@pytest.mark.parametrize("function", READS)
def test_a_numpy_array_at_a_traced_index(function):
    for x in (np.array([0.5, -2.0, 1.5]), np.array([-1.0, 3.0, 0.25])):
        np.testing.assert_allclose(autotrace.function(function)(x), function(x))


def test_gradient_through_a_traced_index_of_a_constant():
    def loss(x):
        return np.sum(row_at_the_argmax(x)) + np.sum(taken_in_sorted_order(x))
    x = np.array([0.5, -2.0, 1.5])
    expected = central_difference(loss, x)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(x), expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(loss))(x), expected,
                               rtol=1e-6, atol=1e-8)


def taken_from_a_list_of_items(x):
    return np.sum(np.take([x[0], x[1], 2.0], [0, 2, 1, 1]) ** 2)


def test_np_take_of_a_list_of_traced_items_in_every_mode():
    # NumPy reads the list as an array, which its items cannot be made into while tracing:
    # they are stacked first, in the traced function and in the traced gradient (np.take's
    # adjoint reads the list's shape).
    check_every_mode(taken_from_a_list_of_items, np.array([0.4, 0.9]))
    assert autotrace.function(taken_from_a_list_of_items)(np.array([0.4, 0.9])) == \
        pytest.approx(0.16 + 4.0 + 2 * 0.81)


def reads_a_constant_in_a_traced_loop(x, n):
    total = np.zeros(())
    for t in range(n):  # n traced: t is a traced int
        total = total + V[t] * x[t]
    return total


def test_a_traced_loop_counter_indexes_a_constant():
    x = np.array([1.0, 2.0, 3.0])
    traced = autotrace.function(reads_a_constant_in_a_traced_loop)
    for n in (1, 3):
        assert traced(x, np.array(n)) == pytest.approx(reads_a_constant_in_a_traced_loop(x, n))


def writes_into_a_row_at_a_traced_index(x):
    rows = np.ones((3, 3))
    row = rows[np.argmax(x)]  # in NumPy, a view of rows
    row[0] = x[0]
    return rows


def fills_a_row_at_a_traced_index(x):
    rows = np.ones((3, 3))
    rows[np.argmax(x)].fill(0.0)
    return rows


@pytest.mark.parametrize("function", [writes_into_a_row_at_a_traced_index,
                                      fills_a_row_at_a_traced_index])
def test_a_write_into_a_view_at_a_traced_index_is_refused(function):
    x = np.array([1.0, 2.0, 3.0])
    function(x)
    with pytest.raises(ControlFlowError, match=r"with a traced integer, which in NumPy gives "
                                               r"a view of it"):
        autotrace.function(function)(x)


def copies_a_row_at_a_traced_index(x):
    rows = np.ones((3, 3))
    row = rows[np.argmax(x)].copy()
    row[0] = x[0]
    return row + rows[0]


def test_a_copy_of_a_row_at_a_traced_index_is_written():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(autotrace.function(copies_a_row_at_a_traced_index)(x),
                                  copies_a_row_at_a_traced_index(x))


def read_then_written_under_traced_ifs(x):
    acc = np.zeros(3)
    before = 0.0  # (a Python number before the `if`, an array after it)
    if x[0] > 0:
        before = acc[1] * 2.0
        acc[0] += x[0] ** 2
    if x[1] > 0:
        acc[1] = acc[0] * x[1]
    return np.sum(acc * V) + before


@pytest.mark.parametrize("x", [np.array([0.9, 0.4, 0.1]), np.array([-0.9, 0.4, 0.1]),
                               np.array([0.9, -0.4, 0.1])])
def test_an_array_read_then_written_under_a_traced_if_then_written_again(x):
    # (a variable that held a Python number before the `if` shifted the positions of its
    # results: the NumPy array was taken for one that may share memory, and the second write
    # refused; the traced gradient of `acc[0] += v` under an `if` met the same)
    assert autotrace.function(read_then_written_under_traced_ifs)(x) == \
        read_then_written_under_traced_ifs(x)
    assert_gradients_in_both_orders(read_then_written_under_traced_ifs, x)
