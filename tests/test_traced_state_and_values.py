"""Values that autotrace.function must give as plain NumPy does: object state computed from
state alone, the type of a variable a traced `if` leaves of two kinds, sizes, string
formatting of traced values, arguments passed twice, arrays written in place in objects.
Each test runs the Python function itself beside the traced one and compares exactly; what
a graph cannot give is refused at the user's line."""
import os
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import PythonStateWarning
from autotrace.runtime.primitives.registry import UntraceableError

THIS_FILE = os.path.abspath(__file__)


def line_of(marker: str) -> int:
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


# --- state computed from state alone advances on every call ----------------------------------

class Counter:
    def __init__(self):
        self.count = np.zeros(())

    def update(self, x):
        self.count = self.count + 1
        return x * self.count


class Adam:
    def __init__(self):
        self.t, self.m = np.zeros(()), np.zeros(())

    def step(self, g):
        self.t = self.t + 1.0
        self.m = 0.9 * self.m + 0.1 * g
        return self.m / (1 - 0.9 ** self.t)


class DecayingRate:
    def __init__(self):
        self.lr = np.float64(1.0)

    def step(self, w, g):
        self.lr = self.lr * 0.5
        return w - self.lr * g


def test_a_step_counter_advances_on_every_call():
    eager, traced = Counter(), Counter()
    step = autotrace.function(Counter.update)
    for _ in range(5):
        expected, got = eager.update(1.0), step(traced, 1.0)
        assert got == expected and type(got) is type(expected)
        assert traced.count == eager.count and type(traced.count) is type(eager.count)
    assert [float(traced.count)] == [5.0]
    assert step.trace_count == 2  # the first trace learns the slot; the second reads it


def test_adam_bias_correction_step_advances():
    eager, traced = Adam(), Adam()
    step = autotrace.function(Adam.step)
    for g in [1.0, 2.0, 3.0, 4.0, 5.0]:
        assert step(traced, np.float64(g)) == eager.step(np.float64(g))
        assert (traced.t, traced.m) == (eager.t, eager.m)
    assert traced.t == 5.0


def test_a_decaying_learning_rate_in_a_numpy_scalar_decays():
    eager, traced = DecayingRate(), DecayingRate()
    step = autotrace.function(DecayingRate.step)
    w_eager = w_traced = np.ones(2)
    for _ in range(4):
        w_eager, w_traced = eager.step(w_eager, np.ones(2)), step(traced, w_traced, np.ones(2))
        np.testing.assert_array_equal(w_traced, w_eager)
    assert traced.lr == eager.lr == 0.0625


STATE = {"n": np.zeros(())}
PYTHON_STATE = {"n": 0}


def count_in_a_global_dict(x):
    STATE["n"] = STATE["n"] + 1
    return x * STATE["n"]


def count_in_python_numbers(x):
    PYTHON_STATE["n"] = PYTHON_STATE["n"] + 1  # python counter
    return x * PYTHON_STATE["n"]


def test_an_array_in_a_global_dict_advances_and_a_python_number_warns():
    STATE["n"], PYTHON_STATE["n"] = np.zeros(()), 0
    step = autotrace.function(count_in_a_global_dict)
    assert [float(step(np.float64(1.0))) for _ in range(4)] == [1.0, 2.0, 3.0, 4.0]
    assert STATE["n"] == 4.0
    # A Python number is Python state: changed while tracing only, as tf.function's guide
    # says, and warned of at the line
    python_step = autotrace.function(count_in_python_numbers)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [float(python_step(np.float64(1.0))) for _ in range(3)]
    assert results == [1.0, 1.0, 1.0] and PYTHON_STATE["n"] == 1
    assert [(w.category, w.lineno) for w in caught] == [
        (PythonStateWarning, line_of("# python counter"))]


def test_state_set_between_calls_is_read_by_the_next_call():
    traced = Counter()
    step = autotrace.function(Counter.update)
    step(traced, 1.0), step(traced, 1.0)
    traced.count = np.float64(10.0)
    assert step(traced, 2.0) == 22.0 and traced.count == 11.0


# --- isinstance and type of a variable of two kinds by a traced `if` --------------------------

def largest_positive(x):
    m = 0.0
    for i in range(x.shape[0]):
        if x[i] > m:
            m = x[i]
    if isinstance(m, float):  # kinds differ
        return np.zeros_like(x)
    return x / m


def python_or_numpy_type(x):
    m = 0.0
    if x[0] > 0:
        m = x[0]
    return type(m).__name__  # type of two kinds


def isinstance_alike(x):
    m = 0.0
    if x[0] > 0:
        m = x[0]
    return x * 2.0 if isinstance(m, float) else x  # float64: a float on both paths


def test_isinstance_of_a_python_float_or_a_float32_scalar_is_refused():
    x = np.array([-1.0, -3.0], np.float32)
    np.testing.assert_array_equal(largest_positive(x), [0.0, 0.0])
    with pytest.raises(UntraceableError) as caught:
        autotrace.function(largest_positive)(x)
    message = str(caught.value)
    assert "isinstance(x, float) answers differently for the two" in message
    assert "a NumPy float32 scalar on one path and a Python float on the other" in message
    assert f'File "{THIS_FILE}", line {line_of("# kinds differ")}, in largest_positive' \
        in message


def test_type_of_a_python_float_or_a_numpy_scalar_is_refused():
    assert [python_or_numpy_type(np.array([v])) for v in (1.0, -1.0)] == ["float64", "float"]
    with pytest.raises(UntraceableError, match=r"type\(x\) answers differently for the two"):
        autotrace.function(python_or_numpy_type)(np.array([1.0]))


def test_isinstance_where_both_kinds_answer_alike_is_answered():
    traced = autotrace.function(isinstance_alike)
    for v in (1.0, -1.0):
        x = np.array([v, 2.0])
        np.testing.assert_array_equal(traced(x), isinstance_alike(x))


# --- sizes known only when the graph runs -----------------------------------------------------

def sizes_and_label(x):
    n = x.shape[0]
    return {"n": n, "shape": x.shape, "label": f"{n} items"}


def sizes_returned(x):
    return {"n": x.shape[0], "shape": np.shape(x), "y": x * 2.0}


def test_a_returned_size_is_each_calls_size_under_reduce_retracing():
    traced = autotrace.function(sizes_returned, reduce_retracing=True)
    for k in (2, 3, 4, 5):
        expected, got = sizes_returned(np.ones(k)), traced(np.ones(k))
        assert (got["n"], got["shape"]) == (k, (k,)) and type(got["n"]) is int
        assert type(got["shape"][0]) is int
        np.testing.assert_array_equal(got["y"], expected["y"])
    assert traced.trace_count == 2  # the second serves every size


def test_a_size_formatted_into_a_string_is_refused_or_traced_per_size():
    traced = autotrace.function(sizes_and_label, reduce_retracing=True)
    assert [traced(np.ones(k)) for k in (2, 3, 4)] == \
        [sizes_and_label(np.ones(k)) for k in (2, 3, 4)]
    by_spec = autotrace.function(sizes_and_label,
                                 input_signature=[autotrace.Spec((None,), np.float64)])
    with pytest.raises(TypeError, match=r"formatting a size into a string \(f-string, str, %\) "
                       r"needs the size of axis 0"):
        by_spec(np.ones(3))


def test_a_returned_size_under_an_input_signature():
    traced = autotrace.function(lambda x: (x.shape[0], x.sum()),
                                input_signature=[autotrace.Spec((None,), np.float64)])
    assert [traced(np.ones(k)) for k in (2, 7)] == [(2, 2.0), (7, 7.0)]
    assert traced.trace_count == 1


# --- arrays an object holds, changed in place with values known while tracing -----------------

class InPlaceCounter:
    def __init__(self):
        self.n = np.zeros(2)

    def step(self, x):
        self.n += 1.0  # (in place, from the state alone)
        return x * self.n


class RebindingCounter(InPlaceCounter):
    def step(self, x):
        self.n = self.n + 1.0
        return x * self.n


def test_an_object_array_changed_in_place_by_known_values_is_refused_and_kept():
    counter = InPlaceCounter()
    with pytest.raises(autotrace.StateError) as raised:
        autotrace.function(counter.step)(np.ones(2))
    line = next(number for number, text in enumerate(open(__file__), 1)
                if "self.n += 1.0  # (in place" in text)
    assert str(raised.value) == (
        f"test_traced_state_and_values.py:{line}: self.n is changed in place while step is "
        "traced, with values known while tracing: the traced graph would not change it on its "
        "later calls, where NumPy changes it on each. Assign it a new array instead (self.n = "
        "self.n + 1.0 for self.n += 1.0), which the graph writes on every call, or keep it in "
        "an autotrace.Variable")
    np.testing.assert_array_equal(counter.n, [0.0, 0.0])  # as it was: nothing is lost
    eager, traced = RebindingCounter(), RebindingCounter()  # what the message advises
    step = autotrace.function(traced.step)
    for _ in range(3):
        np.testing.assert_array_equal(step(np.ones(2)), eager.step(np.ones(2)))
    np.testing.assert_array_equal(traced.n, eager.n)
