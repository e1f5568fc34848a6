"""A Python number of an object's state that the two branches of a traced `if` leave different,
or that a traced loop's body changes, is refused at the statement; one both branches leave the
same keeps that value, as NumPy computes it; nothing but the user's values is put into their
state, and a loop's body runs its side effects as many times as before
(runtime/branch_writes.py)."""
import re

import numpy as np
import pytest

import autotrace
from autotrace import PythonStateWarning
from autotrace.runtime.object_slots import ObjectStateError


class Counter:
    def __init__(self):
        self.n = 0.5

    def up(self, v):
        self.n += 1.0
        return v * 3

    def down(self, v):
        self.n -= 0.42
        return v


counter = Counter()
counts = {"calls": 0}
history = [0.0, 1.0]


def read_after_if(x):
    if np.sum(x) > 0:
        y = counter.up(x[0])
    else:
        y = counter.down(x[1])
    return y * 2 + counter.n


def read_in_other_branch(x):
    if np.sum(x) > 0:
        counter.n += 1.0
        y = x * 2
    else:
        y = x * counter.n
    return y


def read_in_next_iteration(x):
    y = x
    while np.sum(y) < 20.0:
        y = y * 2.0 + counter.n
        counter.n += 1.0
    return y


def read_after_loop(x):
    y = x
    for _ in range(np.sum(x).astype(int)):
        y = y * 2.0
        counts["calls"] += 1
    return y + counts["calls"]


def read_list_item(x):
    if np.sum(x) > 0:
        history[0] += 1.0
    return x * history[0]


def returned(x):
    if np.sum(x) > 0:
        counter.n = 2.0
    return x, counter.n


class Layer:
    def __init__(self):
        self.calls, self.w, self.log = 0, 2.0, []

    def __call__(self, v):
        self.calls += 1
        return v * self.w


layer = Layer()


def called_in_both(x):
    if np.sum(x) > 0:
        y = layer(x)
    else:
        y = layer(-x)
    layer.log.append(layer.calls)
    layer.prev = layer.calls
    scale = 3.0 if isinstance(layer.calls, int) and np.isscalar(layer.calls) else 100.0
    return y * layer.calls * scale


def float64_attribute(x):
    if np.sum(x) > 0:
        state.n = state.n + 5.0
    return x * state.n


class State:
    n = np.float64(1.0)


state = State()


def same_in_both(x):
    if np.sum(x) > 0:
        counter.n = 3.0
        y = x * 2
    else:
        counter.n = 3.0
        y = x
    return y * counter.n


def _line(function, text: str) -> int:
    lines, first = __import__("inspect").getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_a_number_the_branches_of_a_traced_if_leave_different_is_refused_at_the_if():
    counter.n = 0.5
    x = np.array([1.0, 2.0])
    assert read_after_if(x) == 7.5  # eager
    counter.n = 0.5
    with pytest.raises(ObjectStateError) as caught:
        autotrace.function(read_after_if)(x)
    assert str(caught.value).partition("\n")[0] == (
        f"test_branch_state_reads.py:{_line(read_after_if, 'if np.sum')}: the two branches of "
        "this `if` on a traced value (if np.sum(x) > 0:) leave different Python numbers in "
        "counter.n (1.5 and 0.08000000000000002): autotrace traces both branches, running "
        "their writes into Python values while tracing, and a Python number cannot hold what "
        "the branch the graph takes on each call leaves. Keep counter.n in an "
        "autotrace.Variable (counter.n = autotrace.Variable(0.5) where it is made, "
        "counter.n.assign_add(...) where it changes), or compute the new value with "
        "np.where(condition, new, old) and write it after the `if`")
    assert counter.n == 0.5 and type(counter.n) is float  # the user's number, as it was


def test_a_number_a_traced_loop_changes_is_refused_at_the_loop():
    counter.n = 0.5
    with pytest.raises(ObjectStateError) as caught:
        autotrace.function(read_in_next_iteration)(np.array([1.0, 2.0]))
    assert str(caught.value).partition("\n")[0] == (
        f"test_branch_state_reads.py:{_line(read_in_next_iteration, 'while np.sum')}: the body "
        "of this while loop on a traced value (while np.sum(y) < 20.0:) changes the Python "
        "number counter.n (from 0.5 to 1.5): autotrace traces the body once, and the number "
        "of iterations is known only when the graph runs, so a Python number cannot follow "
        "it. Keep counter.n in an autotrace.Variable (counter.n = autotrace.Variable(0.5) "
        "where it is made, counter.n.assign_add(...) where it changes), or carry it through "
        "the loop as a variable of the function and write it after the loop")
    assert counter.n == 0.5 and type(counter.n) is float


@pytest.mark.parametrize("function, statement, label", [
    (read_in_other_branch, "if np.sum", "counter.n"),
    (read_after_loop, "for _ in", "counts['calls']"),
    (read_list_item, "if np.sum", "history[0]"),
    (returned, "if np.sum", "counter.n"),
    (float64_attribute, "if np.sum", "state.n"),
])
def test_numbers_of_lists_dicts_and_numpy_scalars_are_refused_at_the_statement(
        function, statement, label):
    counter.n, counts["calls"], state.n = 0.5, 0, np.float64(1.0)
    with pytest.raises(ObjectStateError, match=re.escape(
            f"test_branch_state_reads.py:{_line(function, statement)}: the ") + r".* Python "
            r"numbers? (in )?" + re.escape(label) + " "):
        autotrace.function(function)(np.array([-1.0, -2.0]))
    assert type(counter.n) is float and type(counts["calls"]) is int
    assert type(history[0]) is float and type(state.n) is np.float64


@pytest.mark.parametrize("transform", [autotrace.grad, autotrace.hessian])
def test_a_traced_derivative_is_refused_at_the_if(transform):
    def loss(x):
        if np.sum(x) > 0:
            counter.n += 1.0
            y = x[0] * 3
        else:
            counter.n -= 0.42
            y = x[1]
        return y * y * counter.n

    counter.n = 0.5
    with pytest.raises(ObjectStateError, match=re.escape(
            f"test_branch_state_reads.py:{_line(loss, 'if np.sum')}: the two branches")):
        autotrace.function(transform(loss))(np.array([1.0, 2.0]))


def test_a_number_both_branches_change_alike_is_what_numpy_computes_and_stays_a_number():
    x = np.array([1.0, 2.0])
    layer.calls, layer.log = 0, []
    expected = called_in_both(x)  # eager: x * 2 * 1 * 3
    np.testing.assert_allclose(expected, [6.0, 12.0])
    layer.calls, layer.log = 0, []
    traced = autotrace.function(called_in_both)
    with pytest.warns(PythonStateWarning, match="layer.calls changed from 0 to 1"):
        np.testing.assert_allclose(traced(x), expected)
    np.testing.assert_allclose(traced(-x), [6.0, 12.0])  # the same graph: -(-x) * 2 * 1 * 3
    assert layer.log == [1] and type(layer.log[0]) is int  # appended once, a plain int
    assert type(layer.prev) is int and layer.prev + 1 == 2 and float(layer.calls) == 1.0
    same_in_both_value = autotrace.function(same_in_both)
    counter.n = 0.5
    with pytest.warns(PythonStateWarning):
        np.testing.assert_allclose(same_in_both_value(x), x * 6.0)
    np.testing.assert_allclose(same_in_both_value(-x), -x * 3.0)


@pytest.mark.filterwarnings("ignore::autotrace.FrozenRandomWarning")
def test_a_loop_body_runs_its_side_effects_once_while_traced():
    log, rng = [], np.random.default_rng(0)

    def f(x):
        y = x
        while np.sum(y) < 20.0:
            log.append("iteration")
            y = y * 2.0 + rng.normal()
        return y

    autotrace.function(f)(np.array([1.0, 2.0]))
    assert log == ["iteration"]
    assert rng.normal() == np.random.default_rng(0).normal(size=2)[1]


class Scaled:
    """A layer that makes its weight and counts its calls on its first call."""

    def __init__(self):
        self.built, self.calls = False, 0

    def __call__(self, x):
        if not self.built:
            self.w = np.full(x.shape, 2.0)
            self.built = True
        self.calls += 1
        return x * self.w


def test_a_layer_built_on_its_first_call_inside_both_branches():
    scaled = Scaled()

    def f(x):
        if np.sum(x) > 0:
            y = scaled(x)
        else:
            y = -scaled(x)
        return y + 1.0

    x = np.array([1.0, 2.0])
    traced = autotrace.function(f)
    with pytest.warns(PythonStateWarning, match="scaled.calls changed from 0 to 1"):
        np.testing.assert_allclose(traced(x), [3.0, 5.0])
    np.testing.assert_allclose(traced(-x), [3.0, 5.0])
    assert scaled.built is True and scaled.calls == 1
