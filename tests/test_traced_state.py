"""Arrays a traced function writes into objects that outlive the call are state of its graph,
as Variables are: after every call (the one that traces, and every later one that runs the
cached graph) the objects hold NumPy arrays, never traced values; each call advances the
state from what the object holds at its start (also when the user set it in between), as
calling the Python function does; where the state's shape or dtype changes, the function
traces again. Python values in the state (a counter) change only while tracing, as in
tf.function: a warning names the line. What a graph cannot keep is refused at the line."""
import os

import numpy as np
import pytest

import autotrace
from autotrace import PythonStateWarning
from autotrace.runtime.object_slots import ObjectStateError

THIS_FILE = os.path.abspath(__file__)


def line_of(marker: str) -> int:
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


class BatchNorm:
    def __init__(self, n: int):
        self.parameters = {"running_mean": np.zeros(n), "gamma": np.linspace(0.5, 1.5, n)}
        self.running_var = np.ones(n)
        self.n_calls = 0

    def forward(self, X):
        p = self.parameters
        mean = X.mean(axis=0)
        self.parameters["running_mean"] = 0.9 * p["running_mean"] + 0.1 * mean
        self.running_var = 0.9 * self.running_var + 0.1 * X.var(axis=0)
        self.n_calls += 1  # plain Python state: a counter
        return (X - mean) * p["gamma"] / np.sqrt(self.running_var + 1e-5)


class BatchNormKeepingStatistics(BatchNorm):
    """Its running statistics are kept without their gradient, so grad differentiates it."""

    def forward(self, X):
        p = self.parameters
        mean = X.mean(axis=0)
        kept = autotrace.stop_gradient(mean)
        self.parameters["running_mean"] = 0.9 * p["running_mean"] + 0.1 * kept
        self.running_var = 0.9 * self.running_var + 0.1 * autotrace.stop_gradient(
            X.var(axis=0))
        return (X - mean) * p["gamma"] / np.sqrt(self.running_var + 1e-5)


def batches(count: int, shape=(5, 3)) -> list:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape) * (index + 1) for index in range(count)]


def assert_no_traced_values(value, seen=None) -> None:
    """That `value` holds NumPy arrays and Python values only, at any depth."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    assert not getattr(type(value), "_is_traced_array", False), value
    items = (value.values() if isinstance(value, dict) else value
             if isinstance(value, (list, tuple)) else
             vars(value).values() if hasattr(value, "__dict__") else ())
    for item in items:
        assert_no_traced_values(item, seen)


def assert_same_state(traced: BatchNorm, eager: BatchNorm) -> None:
    assert_no_traced_values(traced)
    for key, value in eager.parameters.items():
        assert type(traced.parameters[key]) is np.ndarray
        np.testing.assert_allclose(traced.parameters[key], value, rtol=1e-13, atol=1e-15)
    assert type(traced.running_var) is np.ndarray
    np.testing.assert_allclose(traced.running_var, eager.running_var, rtol=1e-13)


@pytest.mark.filterwarnings("ignore::autotrace.PythonStateWarning")
def test_each_call_advances_the_state_from_what_the_object_holds():
    eager, layer = BatchNorm(3), BatchNorm(3)
    step = autotrace.function(lambda X: np.sum(layer.forward(X) ** 2))
    for X in batches(5):
        np.testing.assert_allclose(step(X), np.sum(eager.forward(X) ** 2), rtol=1e-13)
        assert_same_state(layer, eager)
    # The first call traces and reads the state as it is; the second traces again, now
    # reading the state as graph inputs; later calls run that graph.
    assert step.trace_count == 2
    assert len(step.graph(batches(1)[0]).inputs) == 3  # X, running_mean, running_var
    # The user sets the state between calls: the next call starts from it.
    for model in (layer, eager):
        model.parameters["running_mean"] = np.full(3, 4.0)
        model.running_var = np.full(3, 2.0)
    X = batches(1)[0]
    np.testing.assert_allclose(step(X), np.sum(eager.forward(X) ** 2), rtol=1e-13)
    assert_same_state(layer, eager)
    assert step.trace_count == 2


@pytest.mark.filterwarnings("ignore::autotrace.PythonStateWarning")
@pytest.mark.parametrize("kind", [BatchNorm, BatchNormKeepingStatistics])
def test_the_traced_gradient_agrees_with_the_eager_one_and_keeps_the_same_state(kind):
    # BatchNorm's running statistics carry gradient: nothing reads them back in the call.
    eager, layer = kind(3), kind(3)
    R = np.random.default_rng(1).standard_normal((5, 3))
    eager_gradient = autotrace.grad(lambda X: np.sum(np.tanh(eager.forward(X)) * R))
    traced_gradient = autotrace.function(
        autotrace.grad(lambda X: np.sum(np.tanh(layer.forward(X)) * R)))
    for X in batches(4):
        np.testing.assert_allclose(traced_gradient(X), eager_gradient(X), rtol=1e-11,
                                   atol=1e-13)
        assert_same_state(layer, eager)
    assert traced_gradient.trace_count == 2


def test_a_method_traced_keeps_the_state_of_each_instance():
    class Model:
        def __init__(self, scale):
            self.scale = scale
            self.total = np.zeros(2)

        @autotrace.function
        def step(self, x):
            self.total = self.total + self.scale * x
            return np.sum(self.total)

    first, second = Model(1.0), Model(10.0)
    x = np.array([1.0, 2.0])
    for expected in (3.0, 6.0, 9.0):
        assert first.step(x) == pytest.approx(expected)
        assert second.step(x) == pytest.approx(10.0 * expected)
    np.testing.assert_allclose(first.total, 3.0 * x)
    np.testing.assert_allclose(second.total, 30.0 * x)
    assert_no_traced_values(first)
    assert_no_traced_values(second)


def test_a_callable_object_traced_keeps_its_state():
    class Smoother:
        def __init__(self):
            self.level = np.zeros(2)

        def __call__(self, x):
            self.level = 0.5 * self.level + x
            return self.level * 1.0

    smoother = Smoother()
    step = autotrace.function(smoother)
    level = np.zeros(2)
    for x in (np.array([1.0, 2.0]), np.array([-1.0, 0.5]), np.array([4.0, 0.0])):
        level = 0.5 * level + x
        np.testing.assert_allclose(step(x), level)
        np.testing.assert_allclose(smoother.level, level)
    assert_no_traced_values(smoother)


def test_items_of_lists_and_dicts_held_by_globals_and_attributes():
    holder = type("Holder", (), {})()
    holder.buffers = [np.zeros(2), np.ones(2)]
    totals = {"sum": np.zeros(2)}

    def accumulate(x):
        holder.buffers[1] = holder.buffers[1] * 2.0 + x
        totals["sum"] = totals["sum"] + x
        holder.last = x * 3.0  # written, never read
        return holder.buffers[0] + totals["sum"]

    step = autotrace.function(accumulate)
    x = np.array([1.0, -1.0])
    buffer, total = np.ones(2), np.zeros(2)
    for _ in range(4):
        buffer, total = buffer * 2.0 + x, total + x
        np.testing.assert_allclose(step(x), total)
        np.testing.assert_allclose(holder.buffers[1], buffer)
        np.testing.assert_allclose(totals["sum"], total)
        np.testing.assert_allclose(holder.last, x * 3.0)
    assert_no_traced_values(holder)
    assert_no_traced_values(totals)


def test_a_layer_built_on_its_first_traced_call():
    class Lazy:
        def __init__(self):
            self.parameters = None

        def forward(self, X):
            if self.parameters is None:  # built by the first call, as libraries do
                self.parameters = {"running_mean": np.zeros(X.shape[1]),
                                   "scale": np.arange(1.0, X.shape[1] + 1.0)}
            p = self.parameters
            p["running_mean"] = 0.5 * p["running_mean"] + 0.5 * X.mean(axis=0)
            return X * p["scale"] - p["running_mean"]

    eager, layer = Lazy(), Lazy()
    step = autotrace.function(lambda X: layer.forward(X))
    for X in batches(4):
        np.testing.assert_allclose(step(X), eager.forward(X), rtol=1e-13)
        np.testing.assert_allclose(layer.parameters["running_mean"],
                                   eager.parameters["running_mean"], rtol=1e-13)
        assert_no_traced_values(layer)


@pytest.mark.filterwarnings("ignore::autotrace.PythonStateWarning")
def test_a_change_of_shape_or_dtype_of_the_state_traces_again():
    eager, layer = BatchNorm(3), BatchNorm(3)
    step = autotrace.function(lambda X: np.sum(layer.forward(X) ** 2))
    for X in batches(3):
        np.testing.assert_allclose(step(X), np.sum(eager.forward(X) ** 2), rtol=1e-13)
    assert step.trace_count == 2
    for model in (layer, eager):  # a wider layer, for wider batches
        model.parameters = {"running_mean": np.ones(4), "gamma": np.ones(4)}
        model.running_var = np.ones(4)
    for X in batches(3, shape=(5, 4)):
        np.testing.assert_allclose(step(X), np.sum(eager.forward(X) ** 2), rtol=1e-13)
        assert_same_state(layer, eager)
    assert step.trace_count == 3  # the new shape of X, which reads the state as inputs
    for model in (layer, eager):  # the same shape, another dtype
        model.running_var = np.ones(4, dtype=np.float32)
    X = batches(1, shape=(5, 4))[0].astype(np.float32)
    np.testing.assert_allclose(step(X), np.sum(eager.forward(X) ** 2), rtol=1e-6)
    assert layer.running_var.dtype == eager.running_var.dtype == np.float32
    assert_same_state(layer, eager)
    assert step.trace_count == 4
    # The graph for float64 batches no longer fits the state (now float32): traced again,
    # and, traced often, the retracing warning says why.
    X = batches(1, shape=(5, 4))[0]
    with pytest.warns(RuntimeWarning, match="the latest because layer.running_var is "
                                            "f32\\[4\\], where the trace took it as f64\\[4\\]"):
        np.testing.assert_allclose(step(X), np.sum(eager.forward(X) ** 2), rtol=1e-6)
    assert_same_state(layer, eager)
    assert step.trace_count == 5


def test_a_python_counter_changes_while_tracing_only_and_is_warned_of():
    layer = BatchNorm(3)
    step = autotrace.function(lambda X: np.sum(layer.forward(X)))
    with pytest.warns(PythonStateWarning) as warned:
        for X in batches(4):
            step(X)
    assert len(warned) == 1  # once per function and line
    counter_line = line_of("plain Python state: a counter")
    assert (warned[0].filename, warned[0].lineno) == (THIS_FILE, counter_line)
    assert str(warned[0].message).startswith(
        "layer.n_calls changed from 0 to 1 while <lambda> was traced: a Python value in an "
        "object's state changes only while autotrace.function traces")
    assert "autotrace.Variable" in str(warned[0].message)
    assert layer.n_calls == step.trace_count == 2  # one for each trace, as in tf.function


def test_a_counter_kept_in_a_variable_counts_every_call():
    class Counting(BatchNorm):
        def __init__(self, n):
            super().__init__(n)
            self.n_calls = autotrace.Variable(0)

        def forward(self, X):
            self.n_calls.assign_add(1)
            self.parameters["running_mean"] = 0.5 * self.parameters["running_mean"] + X[0]
            return X * 2.0

    layer = Counting(3)
    step = autotrace.function(lambda X: layer.forward(X))
    for X in batches(4):
        step(X)
    assert int(layer.n_calls.numpy()) == 4


class Keeping:
    def __init__(self):
        self.seen = []
        self.pair = (np.zeros(2), np.zeros(2))
        self.total = np.zeros(2)

    def append(self, x):
        self.seen.append(x * 2.0)  # appended: refused
        return x

    def keep_pair(self, x):
        self.pair = (x, x * 2.0)  # a tuple: refused
        return x

    def in_branch(self, x):
        if np.sum(x) > 0.0:
            self.total = self.total + x  # in a traced if: refused
        return x


@pytest.mark.parametrize("method, marker, message", [
    ("append", "appended: refused", "a traced value is appended to self.seen, a list that "
                                    "outlives the call"),
    ("keep_pair", "a tuple: refused", "a traced value is kept in a tuple in self.pair"),
    ("in_branch", "in a traced if: refused", "self.total is written into an object's state "
                                             "inside a traced `if` or loop"),
])
def test_what_a_graph_cannot_keep_is_refused_at_its_line(method, marker, message):
    model = Keeping()
    step = autotrace.function(getattr(model, method))
    with pytest.raises(ObjectStateError) as raised:
        step(np.ones(2))
    assert str(raised.value).startswith(f"test_traced_state.py:{line_of(marker)}: {message}")
    assert model.seen == [] and len(model.pair) == 2
    assert_no_traced_values(model)


class BranchLoss:
    def __init__(self):
        self.total = np.zeros(2)

    def __call__(self, x):
        if np.sum(x) > 0.0:
            self.total = self.total + autotrace.stop_gradient(x)  # differentiated: refused
        return np.sum(x ** 2)


def test_a_value_written_inside_a_traced_if_of_a_gradient_is_refused_at_its_line():
    model = BranchLoss()
    with pytest.raises(ObjectStateError) as raised:
        autotrace.function(autotrace.grad(model))(np.ones(2))
    assert str(raised.value).startswith(
        f"test_traced_state.py:{line_of('differentiated: refused')}: a traced value is written "
        "into an object's state inside a traced `if` or loop")
    assert_no_traced_values(model)
    np.testing.assert_allclose(autotrace.grad(model)(np.ones(2)), 2.0 * np.ones(2))  # eagerly
    np.testing.assert_allclose(model.total, np.ones(2))


RUNNING = {"mean": np.zeros(2)}


def running_mean(x):
    RUNNING["mean"] = 0.5 * RUNNING["mean"] + 0.5 * x
    return RUNNING["mean"] * 2.0


def test_an_item_of_a_global_dict():
    step = autotrace.function(running_mean)
    expected = np.zeros(2)
    for x in (np.array([1.0, 2.0]), np.array([3.0, -1.0]), np.array([0.0, 4.0])):
        expected = 0.5 * expected + 0.5 * x
        np.testing.assert_allclose(step(x), 2.0 * expected)
        np.testing.assert_allclose(RUNNING["mean"], expected)
        assert type(RUNNING["mean"]) is np.ndarray
    RUNNING["mean"] = np.zeros(2)


def test_a_failed_trace_leaves_the_state_as_it_was():
    layer = BatchNorm(3)
    before = layer.parameters["running_mean"]

    def fails(X):
        layer.forward(X)
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        autotrace.function(fails)(batches(1)[0])
    assert layer.parameters["running_mean"] is before
    assert_no_traced_values(layer)


@pytest.mark.filterwarnings("ignore::autotrace.PythonStateWarning")
def test_a_concrete_function_and_a_graph_read_the_state_on_every_call():
    eager, layer = BatchNorm(3), BatchNorm(3)
    step = autotrace.function(lambda X: np.sum(layer.forward(X)))
    X = batches(1)[0]
    graph = step.graph(X)  # traced, not run: the state is as it was
    assert_same_state(layer, eager)
    assert len(graph.inputs) == 1
    concrete = step.get_concrete_function(autotrace.Spec((None, 3)))
    assert_same_state(layer, eager)
    for X in batches(3, shape=(7, 3)):
        assert concrete(X) == pytest.approx(np.sum(eager.forward(X)))
        assert_same_state(layer, eager)
    layer.running_var = np.ones(5)
    with pytest.raises(TypeError, match="layer.running_var is f64\\[5\\], where the trace "
                                        "took it as f64\\[3\\]"):
        concrete(X)


def test_a_trace_not_run_that_made_the_state_it_writes_is_refused():
    class Lazy:
        def __init__(self):
            self.parameters = None

        def forward(self, X):
            if self.parameters is None:
                self.parameters = {"running_mean": np.zeros(X.shape[1])}
            p = self.parameters
            p["running_mean"] = 0.5 * p["running_mean"] + 0.5 * X.mean(axis=0)
            return X - p["running_mean"]

    layer = Lazy()
    step = autotrace.function(lambda X: layer.forward(X))
    # Traced without running, the first trace made the dict and wrote a traced value into
    # it: the value it held before is not known, and no run computes the new one.
    with pytest.raises(ObjectStateError, match="layer.parameters\\['running_mean'\\] holds a "
                                               "value of an earlier trace of <lambda> that was "
                                               "not run"):
        step.get_concrete_function(autotrace.Spec((None, 3)))
    layer = Lazy()
    step(np.ones((2, 3)))  # called once, it is built
    concrete = step.get_concrete_function(autotrace.Spec((None, 3)))
    np.testing.assert_allclose(concrete(np.ones((4, 3))), np.full((4, 3), 0.25))
    np.testing.assert_allclose(layer.parameters["running_mean"], np.full(3, 0.75))
