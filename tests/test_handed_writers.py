"""A function or method that writes state, handed to another function as a value: a bound
method that changes its object (`run_callback(acc.add, v)`), a list's `append`, NumPy's
`np.copyto`, a functools.partial holding the array its function writes, a writer handed on
through `*[...]` or more calls deep than the analysis reads. autotrace does not follow such a
write back into the caller, so each is refused at the user's line in every mode, with the
message a direct writer gets; the same shapes of code with functions that only read (or write
what carries no gradient) are differentiated and match finite differences, and
autotrace.function runs them as NumPy does."""
import functools
import inspect
import os

import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError

from tests.test_nested_writer_aliases import MODES, X, check_reader

class Accumulator:
    def __init__(self):
        self.total = np.zeros(3)
        self.calls = 0

    def add(self, v):
        self.total += v  # marker: add

    def count(self, v):
        self.calls += 1

    def score(self, v):
        return np.sum(np.ones(3) * v * v)


def run_callback(cb, v):
    cb(v)


def call_and_return(cb, v):
    return cb(v)


def apply_to(fn, a, b):
    fn(a, b)


def set_first(b, v):
    b[0] = v  # marker: set_first


def hand_to(fn, b, v):
    fn(b, v)


def hand_on_1(fn, b, v):
    hand_on_2(fn, b, v)


def hand_on_2(fn, b, v):
    hand_on_3(fn, b, v)


def hand_on_3(fn, b, v):
    hand_on_4(fn, b, v)


def hand_on_4(fn, b, v):
    hand_on_5(fn, b, v)


def hand_on_5(fn, b, v):
    hand_on_6(fn, b, v)


def hand_on_6(fn, b, v):
    hand_on_7(fn, b, v)


def hand_on_7(fn, b, v):
    hand_on_8(fn, b, v)


def hand_on_8(fn, b, v):
    fn(b, v)


def read_on_1(fn, b):
    return read_on_2(fn, b)


def read_on_2(fn, b):
    return read_on_3(fn, b)


def read_on_3(fn, b):
    return read_on_4(fn, b)


def read_on_4(fn, b):
    return read_on_5(fn, b)


def read_on_5(fn, b):
    return read_on_6(fn, b)


def read_on_6(fn, b):
    return read_on_7(fn, b)


def read_on_7(fn, b):
    return read_on_8(fn, b)


def read_on_8(fn, b):
    return fn(b)


def holding(b):
    return functools.partial(set_first, b)


def total_of(w, v):
    return np.sum(w * v)


def holding_reader(w):
    return functools.partial(total_of, w)


def _line(function, marker: str) -> int:
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, text in enumerate(lines) if marker in text)


ADD_LINE = _line(Accumulator, "marker: add")
SET_FIRST_LINE = _line(set_first, "marker: set_first")
HERE = __file__


# --- writers, refused -------------------------------------------------------------------------

def bound_method_handed_on(x):
    acc = Accumulator()
    run_callback(acc.add, x * 2.0)
    return np.sum(acc.total * x)


def partial_of_a_bound_method_called(x):
    acc = Accumulator()
    functools.partial(acc.add)(x)
    return np.sum(acc.total * x)


def partial_of_a_bound_method_handed_on(x):
    acc = Accumulator()
    run_callback(functools.partial(acc.add), x * 2.0)
    return np.sum(acc.total * x)


def list_append_handed_on(x):
    out = []
    run_callback(out.append, x ** 2)
    return np.sum(out[0])


def copyto_handed_on(x):
    buf = np.zeros(3)
    apply_to(np.copyto, buf, x ** 2)
    return np.sum(buf * x)


def writer_handed_through_a_starred_list(x):
    buf = np.zeros(3)
    hand_to(*[set_first, buf], x[0] * 2.0)
    return np.sum(buf * x)


def writer_handed_on_eight_calls_deep(x):
    buf = np.zeros(3)
    hand_on_1(set_first, buf, x[0] * 2.0)
    return np.sum(buf * x)


def partial_holding_the_array_written_handed_on(x):
    buf = np.zeros(3)
    fill = holding(buf)
    run_callback(fill, x[0] * 2.0)
    return np.sum(buf * x)


def writer_handed_through_a_starred_name(x):
    buf = np.zeros(3)
    handed = [set_first, buf]
    hand_to(*handed, x[0] * 2.0)
    return np.sum(buf * x)


def writer_and_array(b):
    return set_first, b


def writer_handed_through_a_starred_call(x):
    buf = np.zeros(3)
    hand_to(*writer_and_array(buf), x[0] * 2.0)
    return np.sum(buf * x)


def writer_handed_through_a_keyword_dict(x):
    buf = np.zeros(3)
    hand_to(**{"fn": set_first, "b": buf, "v": x[0] * 2.0})
    return np.sum(buf * x)


def run_callback_on(cb, v):
    run_callback(cb, v)


def bound_method_handed_on_twice(x):
    acc = Accumulator()
    run_callback_on(acc.add, x * 2.0)
    return np.sum(acc.total * x)


def bound_method_handed_by_keyword(x):
    acc = Accumulator()
    run_callback(v=x * 2.0, cb=acc.add)
    return np.sum(acc.total * x)


def bound_method_handed_to_a_nested_function(x):
    acc = Accumulator()

    def apply(fn):
        fn(x * 2.0)
    apply(acc.add)
    return np.sum(acc.total * x)


class Running:
    """A callable object that keeps a running total of what it is called with."""

    def __init__(self):
        self.total = np.zeros(3)

    def __call__(self, v):
        self.total = self.total + v  # marker: running


def callable_object_handed_on(x):
    running = Running()
    run_callback(running, x * 2.0)
    return np.sum(running.total * x)


def _at(f, offset: int) -> int:
    return f.__code__.co_firstlineno + offset


def _state(f, offset: int, callee: str, parameter: str = "cb"):
    message = (f"autotrace cannot differentiate this call of {callee}: it may call "
               f"Accumulator.add, given for {parameter!r}, which changes an attribute of 'self' "
               f"(self.total += ..., {HERE}, line {ADD_LINE}), and autotrace follows what a call "
               f"returns, not what it changes in the objects it is given, so the gradient of "
               f"that value would be lost; return the new value (or a new object) from the "
               f"method instead, and assign it")
    return f, _at(f, offset), message, "change of an attribute"


def _shared(f, offset: int, call: str, written: str, change: str, callee: str):
    message = (f"{call} changes its argument {written!r} in place ({change}), which autotrace "
               f"does not follow into this function, and 'buf' is read after it on line "
               f"{_at(f, offset + 1)}; return the new value from {callee} instead")
    return f, _at(f, offset), message, "write into shared memory"


REFUSED = [
    _state(bound_method_handed_on, 2, "run_callback"),
    (partial_of_a_bound_method_called, _at(partial_of_a_bound_method_called, 2),
     f"autotrace cannot differentiate this call of Accumulator.add: it changes an attribute of "
     f"'self' (self.total += ..., {HERE}, line {ADD_LINE}) to a value that carries gradient, "
     f"and autotrace follows what a call returns, not what it changes in the objects it is "
     f"given, so that gradient would be lost; return the new value (or a new object) from the "
     f"function instead, and assign it", "change of an attribute"),
    _state(partial_of_a_bound_method_handed_on, 2, "run_callback"),
    (list_append_handed_on, _at(list_append_handed_on, 2),
     "autotrace cannot differentiate this call of run_callback: it may call list.append, given "
     "for 'cb', which keeps what it is given in its list, where autotrace, which does not "
     "follow it there, would lose its gradient; write the change with operations autotrace "
     "follows: items.append(v) called on a list, d[k] = v, x[i] = v, or a method of a class of "
     "your own", "call of a method that may keep its arguments"),
    _shared(copyto_handed_on, 2, "apply_to(np.copyto, buf, x ** 2)", "a",
            f"fn(a, b), {HERE}, line {_at(apply_to, 1)}", "apply_to"),
    _shared(writer_handed_through_a_starred_list, 2, "hand_to(set_first, buf, x[0] * 2.0)",
            "b", f"fn(b, v), {HERE}, line {_at(hand_to, 1)}", "hand_to"),
    _shared(writer_handed_on_eight_calls_deep, 2, "hand_on_1(set_first, buf, x[0] * 2.0)",
            "b", f"hand_on_2(fn, b, v), {HERE}, line {_at(hand_on_1, 1)}", "hand_on_1"),
    (partial_holding_the_array_written_handed_on,
     _at(partial_holding_the_array_written_handed_on, 3),
     f"this call of run_callback (found only when it runs) changes its argument 'cb' in place "
     f"(b[0] = ... into the argument 'b' of set_first that a functools.partial holds, {HERE}, "
     f"line {SET_FIRST_LINE}), which autotrace does not follow back into the function that "
     f"calls it: the gradient of what it writes would be lost; return the new value from "
     f"run_callback instead", "write into an argument"),
]


def _found_when_it_runs(f, offset: int):
    message = (f"this call of hand_to (found only when it runs) changes its argument 'b' in "
               f"place (fn(b, v), {HERE}, line {_at(hand_to, 1)}), which autotrace does not "
               f"follow back into the function that calls it: the gradient of what it writes "
               f"would be lost; return the new value from hand_to instead")
    return f, _at(f, offset), message, "write into an argument"


REFUSED += [
    _found_when_it_runs(writer_handed_through_a_starred_name, 3),
    _found_when_it_runs(writer_handed_through_a_starred_call, 2),
    _shared(writer_handed_through_a_keyword_dict, 2,
            "hand_to(fn=set_first, b=buf, v=x[0] * 2.0)", "b",
            f"fn(b, v), {HERE}, line {_at(hand_to, 1)}", "hand_to"),
    _state(bound_method_handed_on_twice, 2, "run_callback_on"),
    _state(bound_method_handed_by_keyword, 2, "run_callback"),
    _state(bound_method_handed_to_a_nested_function, 5,
           "bound_method_handed_to_a_nested_function__apply", "fn"),
    (callable_object_handed_on, _at(callable_object_handed_on, 2),
     f"autotrace cannot differentiate this call of run_callback: it may call Running.__call__, "
     f"given for 'cb', which changes an attribute of 'self' (self.total = ..., {HERE}, line "
     f"{_line(Running, 'marker: running')}), and autotrace follows what a call returns, not "
     f"what it changes in the objects it is given, so the gradient of that value would be "
     f"lost; return the new value (or a new object) from the method instead, and assign it",
     "change of an attribute"),
]


class LeafAccumulator:
    def __init__(self):
        self.total = np.zeros(3)

    def is_leaf(self, v):
        if getattr(v, "ndim", 0) == 1:
            self.total += v  # marker: leaf total
        return False


def bound_method_handed_to_tree_map(x):
    acc = LeafAccumulator()  # (tree_map hands is_leaf on to tree_flatten, which calls it)
    autotrace.tree_util.tree_map(lambda v: v, [x * 2.0], is_leaf=acc.is_leaf)
    return np.sum(acc.total * x)


def bound_method_handed_to_tree_leaves(x):
    acc = LeafAccumulator()
    autotrace.tree_util.tree_leaves([x * 2.0], is_leaf=acc.is_leaf)
    return np.sum(acc.total * x)


def bound_method_handed_to_tree_flatten(x):
    acc = LeafAccumulator()
    autotrace.tree_util.tree_flatten({"k": x * 2.0}, acc.is_leaf)
    return np.sum(acc.total * x)


def bound_method_handed_to_tree_structure(x):
    acc = LeafAccumulator()
    autotrace.tree_util.tree_structure((x * 2.0,), is_leaf=acc.is_leaf)
    return np.sum(acc.total * x)


def _leaf_state(f, callee: str):
    return (f, _at(f, 2),
            f"autotrace cannot differentiate this call of {callee}: it may call "
            f"LeafAccumulator.is_leaf, given for 'is_leaf', which changes an attribute of "
            f"'self' (self.total += ..., {HERE}, line "
            f"{_line(LeafAccumulator, 'marker: leaf total')}), and autotrace follows what a call "
            f"returns, not what it changes in the objects it is given, so the gradient of that "
            f"value would be lost; return the new value (or a new object) from the method "
            f"instead, and assign it", "change of an attribute")


REFUSED += [  # (their gradients were a half: [1, -2, 4] for [2, -4, 8])
    _leaf_state(bound_method_handed_to_tree_map, "tree_map"),
    _leaf_state(bound_method_handed_to_tree_leaves, "tree_leaves"),
    _leaf_state(bound_method_handed_to_tree_flatten, "tree_flatten"),
    _leaf_state(bound_method_handed_to_tree_structure, "tree_structure"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, line, message, construct", REFUSED,
                         ids=[case[0].__name__ for case in REFUSED])
def test_a_writer_handed_on_as_a_value_is_refused_at_the_call(f, line, message, construct,
                                                             mode):
    with pytest.raises(TransformError) as caught:
        MODES[mode](f)
    error = caught.value
    assert error.message == message
    assert error.lineno == line
    assert os.path.abspath(error.filename) == os.path.abspath(HERE)
    assert error.construct == construct


@pytest.mark.parametrize("f", [case[0] for case in REFUSED], ids=lambda f: f.__name__)
def test_a_writer_handed_on_is_traced_as_numpy_runs_it_or_refused(f):
    """autotrace.function runs the write while tracing: the value NumPy gives, or an error
    (a traced value written into a NumPy array the function made), never another value."""
    try:
        traced = autotrace.function(f)(X)
    except Exception as error:  # noqa: BLE001 - any error names the write; a value must match
        assert "trac" in str(error) or "array element" in str(error), error
    else:
        np.testing.assert_allclose(traced, f(X.copy()), rtol=1e-12)


# --- readers, and writes of what carries no gradient: differentiated --------------------------

def bound_method_that_reads_handed_on(x):
    acc = Accumulator()
    return call_and_return(acc.score, x) + np.sum(x)


def bound_method_counting_calls_handed_on(x):
    acc = Accumulator()
    run_callback(acc.count, x * 2.0)
    return np.sum(x * x) * acc.calls


def list_append_of_a_constant_handed_on(x):
    out = []
    run_callback(out.append, 3.0)
    return np.sum(x * x) * out[0]


def reader_handed_through_a_starred_list(x):
    return call_and_return(*[np.sin, x]) @ x


def reader_handed_on_eight_calls_deep(x):
    return read_on_1(np.tanh, x * x) @ x


def partial_holding_a_reader_handed_on(x):
    weights = np.arange(3.0)
    return call_and_return(holding_reader(weights), x * x) + x[0]


def reader_handed_through_a_starred_name(x):
    handed = [np.cos, x * x]
    return call_and_return(*handed) @ x


def reader_handed_through_a_keyword_dict(x):
    return call_and_return(**{"cb": np.sin, "v": x}) @ x


READERS = [reader_handed_through_a_starred_name, reader_handed_through_a_keyword_dict,
           bound_method_that_reads_handed_on, bound_method_counting_calls_handed_on,
           list_append_of_a_constant_handed_on, reader_handed_through_a_starred_list,
           reader_handed_on_eight_calls_deep, partial_holding_a_reader_handed_on]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", READERS, ids=lambda f: f.__name__)
def test_a_reader_handed_on_as_a_value_is_differentiated(f, mode):
    check_reader(f, mode)


@pytest.mark.parametrize("f", READERS, ids=lambda f: f.__name__)
def test_a_reader_handed_on_as_a_value_runs_as_numpy_does_when_traced(f):
    traced = autotrace.function(f)
    np.testing.assert_allclose(traced(X), f(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(traced(-2.0 * X), f(-2.0 * X), rtol=1e-12)
