"""Layers written as libraries write them change their own state as they run: they count
their calls, make their parameters on the first one, keep what they saw. A differentiated
function runs such a write once per call, as Python does (a called function's derivative runs
its primal sweep once: runtime/derivatives/sweeps.py), and gradients agree with central
differences in every mode. A value that carries gradient written into an object's state
carries it to what reads it back (tests/test_state_gradients.py has more); a write that would
run twice is refused at the user's line."""
import os

import numpy as np
import pytest

import autotrace
from autotrace.runtime.derivatives.state_writes import StateWriteError
from autotrace.runtime.object_slots import PythonStateWarning
from tests.numeric import central_difference

THIS_FILE = os.path.abspath(__file__)
X = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]])
R = np.array([[1.0, -2.0], [0.5, 3.0]])


def line_of(marker: str) -> int:
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


class Dense:
    """A dense layer in the style of NumPy deep-learning libraries."""

    def __init__(self, n_out: int):
        self.n_out = n_out
        self.n_in = None
        self.is_initialized = False
        self.parameters = {}
        self.derived_variables = {"n_timesteps": 0, "shapes": []}
        self.calls = 0

    def _init_params(self):
        rng = np.random.default_rng(5)
        self.parameters = {"W": rng.standard_normal((self.n_in, self.n_out)),
                           "b": rng.standard_normal(self.n_out)}
        self.is_initialized = True

    def forward(self, X):
        if not self.is_initialized:
            self.n_in = X.shape[1]
            self._init_params()
        self.calls += 1
        self.derived_variables["n_timesteps"] += 1
        self.derived_variables["shapes"].append(X.shape)
        Y, Z = self._fwd(X)
        return Y

    def _fwd(self, X):
        Z = X @ self.parameters["W"] + self.parameters["b"]
        return np.tanh(Z), Z


def expected_gradient(layer: Dense, x: np.ndarray) -> np.ndarray:
    W, b = layer.parameters["W"], layer.parameters["b"]
    return ((1.0 - np.tanh(x @ W + b) ** 2) * R) @ W.T


def test_each_mode_writes_the_state_once_per_call():
    layer = Dense(2)

    def loss(x):
        return np.sum(layer.forward(x) * R)

    gradient = autotrace.grad(loss)(X)  # the first call makes the parameters, as Python does
    assert layer.is_initialized and layer.n_in == 3
    np.testing.assert_allclose(gradient, expected_gradient(layer, X), rtol=1e-12)
    assert layer.calls == 1
    assert layer.derived_variables == {"n_timesteps": 1, "shapes": [(2, 3)]}

    value, gradient = autotrace.value_and_grad(loss)(X)
    W, b = layer.parameters["W"], layer.parameters["b"]
    assert value == pytest.approx(np.sum(np.tanh(X @ W + b) * R))
    assert layer.calls == 2
    direction = np.random.default_rng(1).standard_normal(X.shape)
    _, tangent = autotrace.jvp(loss, (X,), (direction,))
    assert tangent == pytest.approx(np.sum(expected_gradient(layer, X) * direction))
    assert layer.calls == 3
    _, tangent = autotrace.forward(loss)(X, tangent=direction)
    assert layer.calls == 4
    assert layer.derived_variables["n_timesteps"] == 4
    assert layer.derived_variables["shapes"] == [(2, 3)] * 4
    np.testing.assert_allclose(central_difference(loss, X), expected_gradient(layer, X),
                               rtol=1e-6, atol=1e-8)


def test_a_method_called_in_a_gradient_runs_once():
    # A called method's derivative runs its primal sweep where the call is, and keeps what
    # its adjoint sweep needs: the method runs once per gradient, not twice.
    layer = Dense(2)
    layer.forward(X)
    before = layer.calls
    autotrace.grad(lambda x: np.sum(layer.forward(x) * R))(X)
    assert layer.calls == before + 1
    autotrace.grad(lambda x: np.sum(layer.forward(x) * R) + np.sum(layer.forward(2.0 * x)))(X)
    assert layer.calls == before + 3


def test_the_traced_gradient_writes_while_it_traces():
    # Python side effects of a traced function run while it is traced, as in tf.function.
    layer = Dense(2)
    layer.forward(X)
    traced = autotrace.function(autotrace.grad(lambda x: np.sum(layer.forward(x) * R)))
    with pytest.warns(PythonStateWarning, match="changed from 1 to 2 while df was traced"):
        np.testing.assert_allclose(traced(X), expected_gradient(layer, X), rtol=1e-12)
    np.testing.assert_allclose(traced(X * 2.0), expected_gradient(layer, X * 2.0),
                               rtol=1e-12)
    assert layer.calls == 2  # the call before, and the trace


class Scaled:
    def __init__(self):
        self.scale = 1.0
        self.history = []

    def __call__(self, x, scale):
        self.scale = scale  # read back below, in this call
        self.history.append(scale)
        return np.sum(np.sin(x) * self.scale)


def test_a_value_written_and_read_back_in_the_same_call():
    model = Scaled()

    def loss(x):
        return model(x, 3.0) + model(x * 2.0, 0.5)

    expected = 3.0 * np.cos(X) + 0.5 * 2.0 * np.cos(2.0 * X)
    np.testing.assert_allclose(autotrace.grad(loss)(X), expected, rtol=1e-12)
    assert model.history == [3.0, 0.5] and model.scale == 0.5
    _, tangent = autotrace.jvp(loss, (X,), (np.ones_like(X),))
    assert tangent == pytest.approx(np.sum(expected))
    assert model.history == [3.0, 0.5] * 2


class Cache:
    def __init__(self):
        self.inputs = []
        self.weights = {"W": np.ones(3)}

    def keep(self, x):
        self.inputs.append(x * 2.0)
        return np.sum(x * self.inputs[-1])

    def set_weight(self, w):
        self.weights["W"] = w
        return np.sum(self.weights["W"] ** 2 * 2.0)

    def keep_without_gradient(self, x):
        self.inputs.append(autotrace.stop_gradient(x * 2.0))
        return np.sum(x)


def test_a_value_written_into_state_carries_its_gradient_to_what_reads_it_back():
    # The function differentiated writes into the state of its object, and reads the value
    # back: the gradient flows through the object (here: d/dx sum(2 x^2) = 4x, d/dw sum(2 w^2)
    # = 4w), in each mode, and the write happens once per call, as Python makes it.
    x = X[0]
    for method in ("keep", "set_weight"):
        cache = Cache()
        f = getattr(cache, method)
        np.testing.assert_allclose(autotrace.grad(f)(x), 4.0 * x, rtol=1e-12)
        np.testing.assert_allclose(central_difference(f, x), 4.0 * x, rtol=1e-7)
        _, tangent = autotrace.jvp(f, (x,), (np.ones(3),))
        assert tangent == pytest.approx(np.sum(4.0 * x), rel=1e-12)
        np.testing.assert_allclose(autotrace.grad(lambda v: np.sum(autotrace.grad(f)(v)))(x),
                                   np.full(3, 4.0), rtol=1e-12)
    assert [np.shape(kept) for kept in Cache().inputs] == []
    cache = Cache()
    autotrace.grad(cache.keep)(x)
    np.testing.assert_allclose(cache.inputs, [2.0 * x])  # the value, not a traced one


def test_stop_gradient_keeps_a_value_without_its_gradient():
    cache = Cache()
    np.testing.assert_allclose(autotrace.grad(cache.keep_without_gradient)(X[0]),
                               np.ones(3))
    np.testing.assert_allclose(cache.inputs[0], X[0] * 2.0)


class InPlace:
    def __init__(self):
        self.total = np.zeros(3)

    def add(self, x):
        self.total += np.ones(3)  # an array changed in place
        return np.sum(x * self.total)


def test_an_array_in_an_objects_state_is_not_changed_in_place():
    counter = InPlace()
    with pytest.raises(StateWriteError) as raised:
        autotrace.grad(counter.add)(X[0])
    assert str(raised.value) == (
        f"test_state_writes.py:{line_of('an array changed in place')}: autotrace cannot "
        "change the array InPlace.total in place (+=) in a differentiated function: values "
        "read from it earlier would change under the derivative; assign it a new array "
        "instead (x = x + value)")
    np.testing.assert_array_equal(counter.total, np.zeros(3))


class Running:
    def __init__(self):
        self.count = 0
        self.mean = np.zeros(3)

    def __call__(self, x):
        self.count += 1  # a Python counter: changes while tracing only
        self.mean = np.mean(autotrace.stop_gradient(x), axis=0)
        return np.sum(x ** 2)


def test_a_traced_array_written_into_state_is_kept_as_graph_state():
    # tests/test_traced_state.py tests this at length.
    model = Running()
    traced = autotrace.function(autotrace.grad(model))
    with pytest.warns(PythonStateWarning, match="self.count changed from 0 to 1") as warned:
        for scale in (1.0, 2.0, 3.0):
            np.testing.assert_allclose(traced(X * scale), 2.0 * X * scale)
            assert type(model.mean) is np.ndarray
            np.testing.assert_allclose(model.mean, np.mean(X * scale, axis=0))
    assert warned[0].lineno == line_of("a Python counter")
    assert model.count == traced.trace_count == 2  # traced again once the state is known
    np.testing.assert_allclose(autotrace.grad(model)(X), 2.0 * X)  # eagerly: written
    np.testing.assert_allclose(model.mean, np.mean(X, axis=0))
    assert model.count == 3


def second_order_loss(x, layer):
    return np.sum(layer.forward(x) * R)


def test_a_derivative_of_a_derivative_writes_the_state_once_per_call():
    # It runs the method's derivative again where its adjoint sweep needs it, from the state
    # the method's first run saw (runtime/derivatives/state_log.py): the state changes once
    # per call of the derivative, and the values are those of the call.
    layer = Dense(2)
    layer.forward(X)
    direction = np.array([[1.0, -0.5, 2.0], [0.3, 1.5, -1.0]])

    def directional(x):
        return np.sum(autotrace.grad(second_order_loss)(x, layer) * direction)
    expected = central_difference(directional, X)
    calls, steps = layer.calls, layer.derived_variables["n_timesteps"]
    shapes = len(layer.derived_variables["shapes"])
    np.testing.assert_allclose(autotrace.grad(directional)(X), expected, rtol=1e-6, atol=1e-8)
    assert (layer.calls, layer.derived_variables["n_timesteps"]) == (calls + 1, steps + 1)
    assert len(layer.derived_variables["shapes"]) == shapes + 1
    _, tangent = autotrace.forward(autotrace.grad(second_order_loss))(X, layer,
                                                                      tangent=direction)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)
    assert (layer.calls, layer.derived_variables["n_timesteps"]) == (calls + 2, steps + 2)
    eager = autotrace.hessian(second_order_loss)(X, layer)
    np.testing.assert_allclose(np.tensordot(eager, direction, 2), expected, rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(second_order_loss))(
        X, layer), eager, rtol=1e-12)


class Stepper:
    """A layer whose value depends on the state it changes: its step count, what it cached."""

    def __init__(self):
        self.t = 2
        self.seen = [0.5]
        self.stats = {"n": 1.0}

    def forward(self, x):
        self.t += 1
        self.seen.append(x)
        self.stats["n"] = self.stats["n"] * 2.0
        self.stats["last"] = x
        return np.tanh(x * self.t) * len(self.seen) + self.stats["n"] * x ** 2


STEPPER = Stepper()


def stepped(x):
    return np.sum(STEPPER.forward(x) ** 2)


def test_a_recomputed_call_sees_the_state_its_first_run_saw():
    # Run again from the state after the call, the method would count 4 steps, not 3, and
    # find two more items: the Hessian would be that of another function.
    x = np.array([0.9, 0.4, -0.3, 0.2])
    direction = np.array([1.0, -2.0, 0.5, 3.0])

    def fresh():
        STEPPER.t, STEPPER.seen, STEPPER.stats = 2, [0.5], {"n": 1.0}

    def gradient_from_fresh_state(point):
        fresh()
        return autotrace.grad(stepped)(point)
    step = 1e-6
    expected = (gradient_from_fresh_state(x + step * direction)
                - gradient_from_fresh_state(x - step * direction)) / (2 * step)
    after = (3, 2, 2.0)

    def state():
        return STEPPER.t, len(STEPPER.seen), STEPPER.stats["n"]
    fresh()
    _, tangent = autotrace.forward(autotrace.grad(stepped))(x, tangent=direction)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)
    assert state() == after
    assert STEPPER.stats["last"] is x
    # (a Hessian calls the gradient once per column, each call a step of the layer's)
    fresh()
    autotrace.hessian(stepped)(x)
    assert state() == (6, 5, 16.0)


def test_reverse_over_reverse_of_a_slot_read_then_overwritten_by_a_recomputed_call():
    # Its recomputation gives the gradient of what stats["n"] held before the call: held
    # apart from the gradient the statements after the call give the layer (of what it holds
    # after), and added past the call's own adjoint. The layer steps once.
    x = np.array([0.9, 0.4, -0.3, 0.2])

    def directional(p):
        return np.sum(autotrace.grad(stepped)(p) * p)

    def from_fresh_state(p):
        STEPPER.t, STEPPER.seen, STEPPER.stats = 2, [0.5], {"n": 1.0}
        return directional(p)
    expected = central_difference(from_fresh_state, x)
    STEPPER.t, STEPPER.seen, STEPPER.stats = 2, [0.5], {"n": 1.0}
    np.testing.assert_allclose(autotrace.grad(directional)(x), expected, rtol=1e-7)
    assert (STEPPER.t, len(STEPPER.seen), STEPPER.stats["n"]) == (3, 2, 2.0)


def looped(x, layer):
    total = 0.0
    for _ in range(2):
        total = total + np.sum(layer.forward(x) * R)
    return total


def test_a_write_in_a_call_inside_a_loop_of_a_derivative_of_a_derivative():
    # Each iteration notes the writes of its call (`_written1 = state_writes_log()`, kept on
    # the stack as any value a loop overwrites), and runs it again from there: the layer
    # counts each call once. Forward over reverse and reverse over reverse agree with finite
    # differences.
    layer = Dense(2)
    layer.forward(X)
    direction = np.ones_like(X)

    def directional(x):
        return np.sum(autotrace.grad(looped)(x, layer) * direction)
    expected = central_difference(directional, X)
    calls = layer.calls
    np.testing.assert_allclose(autotrace.grad(directional)(X), expected, rtol=1e-6, atol=1e-9)
    assert layer.calls == calls + 2
    _, tangent = autotrace.jvp(lambda x: autotrace.grad(looped)(x, layer), (X,), (direction,))
    np.testing.assert_allclose(np.sum(tangent), np.sum(expected), rtol=1e-6)
    assert layer.calls == calls + 4
