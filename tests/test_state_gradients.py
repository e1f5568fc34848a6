"""A value that carries gradient, written into the state of an object, carries it to what
reads it back: `layer.parameters["W"] = W` then `layer.forward(X)` differentiates with respect
to W, as a user of a NumPy layer library writes it. Checked against central differences in
each mode; what cannot be followed is refused at the user's line (a name holding the dict
before the write, a function that reads the layer from a global without being given it, a
caller reading back what a called method wrote)."""
import os
import re

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.derivatives.state_writes import StateWriteError
from tests.numeric import central_difference

THIS_FILE = os.path.abspath(__file__)
rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3))
R = rng.standard_normal((4, 2))
W0 = rng.standard_normal((3, 2))
B0 = rng.standard_normal(2)


def line_of(marker: str) -> int:
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


class Dense:
    def __init__(self):
        self.parameters = {"W": np.ones((3, 2)), "b": B0.copy()}
        self.inputs = []
        self.n_calls = 0

    def forward(self, X):
        self.inputs.append(X)
        self.n_calls += 1
        W = self.parameters["W"]
        return np.tanh(X @ W + self.parameters["b"])


LAYER = Dense()


def with_weights(W):
    LAYER.parameters["W"] = W  # the weights written
    return np.sum(LAYER.forward(X) * R)


def with_both(W, b):
    LAYER.parameters = {"W": W, "b": b}  # a new dict: read back through the layer
    return np.sum(LAYER.forward(X) * R) + np.sum(LAYER.parameters["b"] ** 3)


def by_hand(W, b=B0):
    return np.sum(np.tanh(X @ W + b) * R)


def check_every_mode(f, *args, expected):
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    got = autotrace.grad(f, wrt=wrt)(*args)
    for g, e in zip(got if len(args) > 1 else (got,), expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)
    value, got = autotrace.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    _, pullback = autotrace.vjp(f, *args)
    for g, e in zip(pullback(1.0), expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)
    directions = [np.random.default_rng(3).standard_normal(np.shape(a)) for a in args]
    _, tangent = autotrace.jvp(f, args, tuple(directions))
    assert tangent == pytest.approx(sum(np.sum(e * d) for e, d in zip(expected, directions)),
                                    rel=1e-6, abs=1e-9)


def test_weights_set_through_a_dict_the_layer_holds_get_their_gradient():
    expected = central_difference(by_hand, W0)
    np.testing.assert_allclose(central_difference(with_weights, W0), expected, rtol=1e-7)
    calls = LAYER.n_calls
    np.testing.assert_allclose(autotrace.grad(with_weights)(W0), expected, rtol=1e-6)
    assert LAYER.n_calls == calls + 1 and LAYER.parameters["W"] is not None
    assert type(LAYER.parameters["W"]) is np.ndarray and np.array_equal(
        LAYER.parameters["W"], W0)  # the value written, as Python leaves it
    check_every_mode(with_weights, W0, expected=[expected])


class Plain:
    def __init__(self):
        self.parameters = {"W": np.ones((3, 2)), "b": B0.copy()}

    def forward(self, X):
        return np.tanh(X @ self.parameters["W"] + self.parameters["b"])


PLAIN = Plain()


def with_plain_weights(W):
    PLAIN.parameters["W"] = W
    return np.sum(PLAIN.forward(X) * R)


def test_a_derivative_of_a_derivative_through_the_weights_written():
    # d/dW of the sum of the gradient (the layer's method writes no state of its own: one that
    # does is run again by a derivative of a derivative, and refused)
    np.testing.assert_allclose(
        autotrace.grad(lambda W: np.sum(autotrace.grad(with_plain_weights)(W)))(W0),
        central_difference(lambda W: np.sum(autotrace.grad(by_hand)(W)), W0),
        rtol=1e-5, atol=1e-8)


def test_a_new_dict_of_parameters_and_a_read_of_it_in_the_function():
    expected = [central_difference(lambda W: with_both(W, B0), W0),
                central_difference(lambda b: with_both(W0, b), B0)]
    check_every_mode(with_both, W0, B0, expected=expected)


def test_the_generated_code_rebinds_the_layer_and_takes_the_gradient_from_it():
    source = autotrace.source(autotrace.grad(with_weights))
    line = line_of("# the weights written")
    assert "    LAYER_1 = LAYER\n" in source
    assert (f"    LAYER_1 = write_state(LAYER_1, '.[', _t1, W, None, "
            f"'test_state_gradients.py:{line}')") in source
    assert "bW = state_gradient(bLAYER_1, LAYER_1, '.[', _t1, W, None, " in source


class Accumulating:
    def __init__(self):
        self.total = 0.0
        self.history = []
        self.stats = {"sum": 0.0}

    def step(self, x):
        self.total += np.sum(x ** 2)
        self.history.append(x * 3.0)
        for i in range(3):
            self.stats["sum"] = self.stats["sum"] + np.sum(x) * i
        return self.total * 2.0 + np.sum(self.history[-1] * x) + self.stats["sum"]


def test_values_accumulated_in_an_object_and_read_back_in_the_same_call():
    def fresh(x):
        return Accumulating().step(x)

    x = X[0]
    expected = 2.0 * 2.0 * x + 6.0 * x + 3.0  # total*2, 3x*x summed, sum(x)*(0+1+2)
    np.testing.assert_allclose(central_difference(fresh, x), expected, rtol=1e-7)
    model = Accumulating()
    np.testing.assert_allclose(autotrace.grad(model.step)(x), expected, rtol=1e-12)
    assert model.total == pytest.approx(np.sum(x ** 2)) and len(model.history) == 1
    np.testing.assert_allclose(autotrace.vjp(model.step, x)[1](1.0)[0], expected, rtol=1e-12)
    _, tangent = autotrace.jvp(model.step, (x,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-12)
    assert len(model.history) == 3 and model.stats["sum"] == pytest.approx(9.0 * np.sum(x))


def predict(x):
    return LAYER.forward(x)  # reads the global layer


def through_a_function_reading_the_global(W):
    LAYER.parameters["W"] = W
    return np.sum(predict(X) * R)  # refused: reads the global


def test_a_function_that_reads_the_object_from_a_global_is_refused():
    with pytest.raises(TransformError) as raised:
        autotrace.grad(through_a_function_reading_the_global)(W0)
    assert (raised.value.filename, raised.value.lineno) == (
        THIS_FILE, line_of("refused: reads the global"))
    assert raised.value.message.startswith(
        "autotrace cannot differentiate this call of predict: it reads 'LAYER' (through a "
        "global or closure variable, or an object it holds), into whose state the "
        "differentiated function writes a value that carries gradient, without being given "
        "it")


def stale_alias(W):
    parameters = LAYER.parameters
    LAYER.parameters["W"] = W
    return np.sum(parameters["W"] ** 2)  # refused: read through a name bound before


def other_slot_of_the_alias(W):
    parameters = LAYER.parameters
    LAYER.parameters["W"] = W
    return np.sum(parameters["b"] * LAYER.parameters["W"])


def test_a_name_bound_to_the_dict_before_the_write_is_refused_where_it_reads_the_slot():
    with pytest.raises(TransformError) as raised:
        autotrace.grad(stale_alias)(W0)
    assert raised.value.lineno == line_of("refused: read through a name bound before")
    assert raised.value.message.startswith(
        "autotrace cannot differentiate this read of 'parameters': it holds part of an "
        "object's state, bound before the write into that state at line "
        f"{line_of('refused: read through a name bound before') - 1}")
    # Another slot of the same dict is the value it was: followed.
    expected = central_difference(other_slot_of_the_alias, W0)
    np.testing.assert_allclose(autotrace.grad(other_slot_of_the_alias)(W0), expected,
                               rtol=1e-7)


class Caching:
    def __init__(self):
        self.W = np.ones(3)

    def forward(self, x):
        self.Z = x * self.W  # written by the method the caller calls
        return np.sum(self.Z)

    def reset(self):
        self.W = np.ones(3)
        return 0.0


CACHING = Caching()


def read_back_after_the_call(x):
    y = CACHING.forward(x)
    return y + np.sum(CACHING.Z ** 2)


def overwritten_by_a_call(w):
    CACHING.W = w
    zero = CACHING.reset()  # writes a constant over w
    return np.sum(CACHING.W * w) + zero


def test_what_a_called_method_writes_and_its_caller_reads_back():
    # Forward mode follows it: the method changes the tangent of its object in place. Reverse
    # mode too: the caller sends the method's derivative the gradient of the object after the
    # call, whose entry at self.Z is the gradient of what the method wrote there. So do
    # derivatives of derivatives, which run the method whole: its derivative takes that
    # gradient by a keyword, and what the recomputation gives the object is of its state
    # before the call, added past the call's adjoint.
    x = X[0]
    expected = central_difference(read_back_after_the_call, x)
    direction = np.random.default_rng(4).standard_normal(3)
    _, tangent = autotrace.jvp(read_back_after_the_call, (x,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6)
    np.testing.assert_allclose(autotrace.grad(read_back_after_the_call)(x), expected, rtol=1e-7)
    value, gradient = autotrace.value_and_grad(read_back_after_the_call)(x)
    assert value == pytest.approx(read_back_after_the_call(x), rel=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-7)
    np.testing.assert_allclose(autotrace.vjp(read_back_after_the_call, x)[1](2.0)[0],
                               2.0 * expected, rtol=1e-7)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(read_back_after_the_call))(x),
                               expected, rtol=1e-7)

    def directional(p):
        return np.sum(autotrace.grad(read_back_after_the_call)(p) * p)
    second = central_difference(directional, x)
    np.testing.assert_allclose(second, 1.0 + 4.0 * x, rtol=1e-7)  # W = 1: f = sum(x + x**2)
    np.testing.assert_allclose(autotrace.grad(directional)(x), second, rtol=1e-7)
    np.testing.assert_allclose(autotrace.hessian(read_back_after_the_call)(x),
                               np.diag(np.full(3, 2.0)), atol=1e-12)
    _, tangent = autotrace.jvp(autotrace.grad(read_back_after_the_call), (x,), (direction,))
    np.testing.assert_allclose(tangent, 2.0 * direction, rtol=1e-12)


def test_a_constant_a_called_method_writes_over_a_value_takes_its_gradient_away():
    w = X[0]
    expected = np.ones(3)  # d/dw sum(1 * w): the w written first is overwritten
    np.testing.assert_allclose(central_difference(overwritten_by_a_call, w), expected,
                               rtol=1e-7)
    np.testing.assert_allclose(autotrace.grad(overwritten_by_a_call)(w), expected,
                               rtol=1e-12)
    _, tangent = autotrace.jvp(overwritten_by_a_call, (w,), (np.ones(3),))
    assert tangent == pytest.approx(3.0, rel=1e-12)


class RecurrentCell:
    """An RNN cell in the style of NumPy libraries: each step reads the hidden state the
    last one wrote into the cell."""

    def __init__(self):
        rng = np.random.default_rng(7)
        self.W = rng.standard_normal((3, 2)) * 0.5
        self.U = rng.standard_normal((2, 2)) * 0.5
        self.h = np.zeros(2)

    def step(self, x):
        self.h = np.tanh(x @ self.W + self.h @ self.U)  # read back by the next step
        return self.h


CELL = RecurrentCell()


def two_steps(X):
    CELL.h = np.zeros(2)
    first = CELL.step(X[0])
    second = CELL.step(X[1])
    return np.sum(second ** 2) + np.sum(first) + np.sum(CELL.h * 0.5)


def test_a_cell_whose_steps_read_the_state_the_last_step_wrote():
    # The second step's derivative takes the gradient of the cell after it from the caller,
    # and hands back the cell's gradient before it, whose entry at h the first step takes.
    X = np.array([[0.9, 0.4, -0.3], [0.2, -0.5, 0.7]])
    expected = central_difference(two_steps, X)
    np.testing.assert_allclose(autotrace.grad(two_steps)(X), expected, rtol=1e-7)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(two_steps))(X), expected,
                               rtol=1e-7)
    np.testing.assert_allclose(autotrace.value_and_grad(two_steps)(X)[1], expected, rtol=1e-7)
    direction = np.random.default_rng(8).standard_normal(X.shape)
    assert autotrace.jvp(two_steps, (X,), (direction,))[1] == pytest.approx(
        np.sum(expected * direction), rel=1e-7)


def stepped_for_effect(X):
    CELL.h = np.zeros(2)
    CELL.step(X[0])
    CELL.step(X[1])
    return np.sum(CELL.h ** 2)


def test_a_cell_stepped_for_its_effect_alone():
    X = np.array([[0.9, 0.4, -0.3], [0.2, -0.5, 0.7]])
    expected = central_difference(stepped_for_effect, X)
    np.testing.assert_allclose(autotrace.grad(stepped_for_effect)(X), expected, rtol=1e-7)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(stepped_for_effect))(X),
                               expected, rtol=1e-7)
    direction = np.random.default_rng(9).standard_normal(X.shape)
    assert autotrace.jvp(stepped_for_effect, (X,), (direction,))[1] == pytest.approx(
        np.sum(expected * direction), rel=1e-7)


def second_derivatives(f, X, reset):
    """f's Hessian-vector product by reverse over reverse, forward over reverse and the
    Hessian, each with the state reset first, and by central differences of its gradient."""
    direction = np.random.default_rng(10).standard_normal(X.shape)

    def gradient_from(point):
        reset()
        return autotrace.grad(f)(point)

    def directional(point):
        return np.sum(autotrace.grad(f)(point) * direction)
    expected = (gradient_from(X + 1e-6 * direction)
                - gradient_from(X - 1e-6 * direction)) / 2e-6
    reset()
    by_reverse = autotrace.grad(directional)(X)  # (the Hessian is symmetric)
    reset()
    by_forward = autotrace.jvp(autotrace.grad(f), (X,), (direction,))[1]
    reset()
    hessian = autotrace.hessian(f)(X).reshape(X.size, X.size)
    return expected, (by_reverse, by_forward, (hessian @ direction.ravel()).reshape(X.shape))


@pytest.mark.parametrize("f", [two_steps, stepped_for_effect])
def test_second_derivatives_of_a_cell_whose_steps_read_the_state_the_last_step_wrote(f):
    # Each step's derivative, run whole, takes the cell's gradient after it (what the next
    # step read of h) by a keyword; what each recomputation gives the cell is of its state
    # before that step, added past the step's own adjoint. A step called for its effect alone
    # is differentiated for it in each mode.
    X = np.array([[0.9, 0.4, -0.3], [0.2, -0.5, 0.7]])

    def reset():
        CELL.h = np.zeros(2)
    expected, (by_reverse, by_forward, by_hessian) = second_derivatives(f, X, reset)
    assert np.max(np.abs(expected)) > 0.01  # (no zero that any code would give)
    np.testing.assert_allclose(by_reverse, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(by_forward, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(by_hessian, expected, rtol=1e-6, atol=1e-9)


def stepped_in_a_loop(X):
    CELL.h = np.zeros(2)
    total = 0.0
    for t in range(X.shape[0]):
        total = total + np.sum(CELL.step(X[t]) ** 2)
    return total + np.sum(CELL.h)


def test_second_derivatives_of_a_cell_stepped_in_a_loop():
    # Each iteration notes its call's writes and runs it again from there; reverse over
    # reverse pushes what each iteration's recomputation gives the cell (of its state before
    # that step) on a stack of its own, and pops it past that step's adjoint.
    X = np.array([[0.9, 0.4, -0.3], [0.2, -0.5, 0.7], [0.1, 0.3, -0.6]])

    def reset():
        CELL.h = np.zeros(2)
    expected, (by_reverse, by_forward, by_hessian) = second_derivatives(
        stepped_in_a_loop, X, reset)
    assert np.max(np.abs(expected)) > 0.01  # (no zero that any code would give)
    for value in (by_reverse, by_forward, by_hessian):
        np.testing.assert_allclose(value, expected, rtol=1e-6, atol=1e-9)


class Outer:
    def __init__(self):
        self.W = np.array([0.5, -1.0, 2.0])

    def inner(self, x):
        self.Z = np.sin(x * self.W)  # written by a method its object's method calls
        return np.sum(self.Z)

    def forward(self, x):
        return self.inner(x) * 2.0


OUTER = Outer()


def read_back_through_a_method_of_the_method(x):
    y = OUTER.forward(x)
    return y + np.sum(OUTER.Z ** 2)


def test_what_a_method_of_the_method_writes_and_the_caller_reads_back():
    # forward writes nothing itself, but calls a method of its object that does: its
    # derivative takes the object's gradient after the call too, and sends it on.
    x = np.array([0.3, -0.7, 1.1])
    f = read_back_through_a_method_of_the_method
    np.testing.assert_allclose(autotrace.grad(f)(x), central_difference(f, x), rtol=1e-7)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x),
                               central_difference(f, x), rtol=1e-7)
    expected, computed = second_derivatives(f, x, lambda: None)
    for value in computed:
        np.testing.assert_allclose(value, expected, rtol=1e-6, atol=1e-9)


class Counting:
    def __init__(self):
        self.t = 2.0

    def forward(self, x):
        self.t += 1.0  # what the slot held passes into what the call writes
        return x * self.t


COUNTING = Counting()


def read_back_after_an_increment(x, a):
    COUNTING.t = a * 1.0
    y = COUNTING.forward(x)
    return np.sum(y) * COUNTING.t


def test_a_slot_a_called_method_adds_to_passes_on_the_gradient_read_back_after_it():
    # d/da of sum(x) * (a + 1) ** 2: the caller's gradient of t after the call is that of t
    # before it (the call added a constant), not dropped as for a constant written over it
    x, a = X[0], 0.7
    expected = (read_back_after_an_increment(x, a + 1e-6)
                - read_back_after_an_increment(x, a - 1e-6)) / 2e-6
    assert expected == pytest.approx(2.0 * np.sum(x) * (a + 1.0), rel=1e-7)
    assert autotrace.grad(read_back_after_an_increment, wrt=1)(x, a) == pytest.approx(
        2.0 * np.sum(x) * (a + 1.0), rel=1e-12)
    _, tangent = autotrace.jvp(read_back_after_an_increment, (x, a), (np.zeros(3), 1.0))
    assert tangent == pytest.approx(2.0 * np.sum(x) * (a + 1.0), rel=1e-12)


class Model:
    def __init__(self):
        self.layers = [Plain()]

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


MODEL = Model()
FIRST = MODEL.layers[0]


def through_a_layer_the_model_holds(W):
    FIRST.parameters["W"] = W
    return np.sum(MODEL.forward(X) * R)  # refused when it runs: the model holds the layer


def through_the_model(W):
    MODEL.layers[0].parameters["W"] = W
    return np.sum(MODEL.forward(X) * R)


def test_a_method_of_an_object_that_holds_the_object_written_into():
    with pytest.raises(StateWriteError, match=re.escape(
            f"test_state_gradients.py:{line_of('refused when it runs: the model holds')}: "
            "autotrace cannot differentiate this call of Model.forward: it reads 'FIRST'")):
        autotrace.grad(through_a_layer_the_model_holds)(W0)
    # Written through the model, the model carries the gradient to its layers.
    expected = central_difference(by_hand, W0)
    np.testing.assert_allclose(autotrace.grad(through_the_model)(W0), expected, rtol=1e-6)
