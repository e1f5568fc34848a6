"""Objects called through an attribute, and objects whose methods write their own state.

1. `self.layer(x)`, where `layer` is an object whose class has `__call__` held in a field of
   the object differentiated (a dataclass, a namedtuple, a plain object built in the
   function; two levels deep, `self.enc.layer(x)`; a method of a held object stored in an
   attribute): the call's derivative gets the tangent, and gives back the gradient, of the
   object held there, not of the object holding it (its tangent was 0, and reverse mode
   crashed). Checked against central differences in every mode.
2. A method that writes its object's state while a gradient runs (a batch norm's running
   mean, a layer caching its input): through a global (`BN.forward(x)`, `BN(x)` with
   `__call__ = forward`), the gradient is right and the state is written once, as the primal
   writes it; through an argument not differentiated, or an object built in the function,
   refused with a message that says what to do (what reads the object after the call, by
   another argument, a list, a global or a closure, is not told before running).
"""
import collections
import dataclasses
import os
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.object_slots import PythonStateWarning
from tests.numeric import central_difference, check_every_mode

THIS_FILE = os.path.abspath(__file__)
X = np.array([1.0, -2.0])


def line_of(marker: str) -> int:
    """The line of this file where `marker` is."""
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


# ---- 1. objects with __call__ held in fields ----------------------------------------------

@dataclasses.dataclass
class Linear:
    W: np.ndarray

    def __call__(self, x):
        return np.tanh(x * self.W)


@dataclasses.dataclass
class Model:
    layer: Linear

    def __call__(self, x):
        return self.layer(x)


@dataclasses.dataclass
class Encoder:
    layer: Linear
    scale: np.ndarray

    def __call__(self, x):
        return self.layer(x) * self.scale


@dataclasses.dataclass
class Deep:
    enc: Encoder
    b: np.ndarray

    def __call__(self, x):
        return self.enc.layer(x) * self.b + self.enc(x)  # two levels deep, and one


Pair = collections.namedtuple("Pair", "layer b")


def pair_apply(pair, x):
    return pair.layer(x) * pair.b


def loss(model, x):
    return np.sum(model(x) ** 2)


def pair_loss(pair, x):
    return np.sum(pair_apply(pair, x) ** 2)


def leaves(gradient) -> list:
    """The arrays of a gradient of a dataclass or namedtuple, in field order."""
    if dataclasses.is_dataclass(gradient):
        return [leaf for field in dataclasses.fields(gradient)
                for leaf in leaves(getattr(gradient, field.name))]
    if isinstance(gradient, tuple):
        return [leaf for item in gradient for leaf in leaves(item)]
    return [np.asarray(gradient, dtype=float)]


def flat(gradient) -> np.ndarray:
    return np.concatenate([np.ravel(leaf) for leaf in leaves(gradient)])


# (a loss of the model and x, the model made from a vector of its parameters, their count)
HELD = {
    "dataclass field": (loss, lambda t: Model(Linear(t)), 2),
    "two levels deep": (loss, lambda t: Deep(Encoder(Linear(t[:2]), t[2:4]), t[4:]), 6),
    "namedtuple field": (pair_loss, lambda t: Pair(Linear(t[:2]), t[2:]), 4),
}
THETA = np.array([0.5, -0.3, 1.5, 0.7, -0.4, 0.9])


@pytest.mark.parametrize("case", list(HELD))
def test_a_called_field_gets_its_gradient_in_every_mode(case):
    function, make, size = HELD[case]
    theta = THETA[:size]
    expected = central_difference(lambda t: function(make(t), X), theta)
    options = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(flat(autotrace.grad(function)(make(theta), X)), expected,
                               **options)
    value, gradient = autotrace.value_and_grad(function)(make(theta), X)
    assert value == pytest.approx(function(make(theta), X))
    np.testing.assert_allclose(flat(gradient), expected, **options)
    _, pullback = autotrace.vjp(function, make(theta), X)
    np.testing.assert_allclose(flat(pullback(2.0)[0]), 2.0 * expected, **options)
    np.testing.assert_allclose(flat(autotrace.function(autotrace.grad(function))(
        make(theta), X)), expected, **options)
    direction = np.random.default_rng(0).standard_normal(size)
    _, tangent = autotrace.forward(function)(make(theta), X, tangent=make(direction))
    assert tangent == pytest.approx(expected @ direction, rel=1e-6, abs=1e-8)
    _, tangent = autotrace.jvp(function, (make(theta), X), (make(direction), np.zeros(2)))
    assert tangent == pytest.approx(expected @ direction, rel=1e-6, abs=1e-8)
    # The Hessian, and the gradient of the gradient, of the loss in the parameters (the model
    # built from them in the differentiated function).
    of_parameters = (lambda t: function(make(t), X))
    gradient_of = (lambda t: autotrace.grad(of_parameters)(t))
    np.testing.assert_allclose(autotrace.hessian(of_parameters)(theta) @ direction,
                               central_difference(lambda t: gradient_of(t) @ direction, theta),
                               rtol=1e-5, atol=1e-6)
    check_every_mode(of_parameters, theta)


def test_the_brief_example():
    # The tangent was 0.0 and the gradient an AttributeError ('Linear' has no 'layer').
    @dataclasses.dataclass
    class Scale:
        W: np.ndarray

        def __call__(self, x):
            return x * self.W

    @dataclasses.dataclass
    class Outer:
        layer: Scale

        def __call__(self, x):
            return self.layer(x)

    def total(m, x):
        return np.sum(m(x))
    model, x = Outer(Scale(np.array([2.0, 3.0]))), np.array([1.0, 5.0])
    direction = Outer(Scale(np.array([1.0, 1.0])))
    assert autotrace.forward(total)(model, x, tangent=direction) == (17.0, 6.0)
    assert autotrace.jvp(total, (model, x), (direction, np.zeros(2))) == (17.0, 6.0)
    gradient = autotrace.grad(total)(model, x)
    assert isinstance(gradient, Outer) and isinstance(gradient.layer, Scale)
    np.testing.assert_array_equal(gradient.layer.W, [1.0, 5.0])


def test_per_example_gradients_of_a_called_field():
    model = Model(Linear(np.array([0.5, -0.3])))
    xs = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.1]])
    batched = autotrace.vmap(autotrace.grad(loss), in_axes=(None, 0))(model, xs)
    for row, x in zip(batched.layer.W, xs):
        np.testing.assert_allclose(row, central_difference(
            lambda w: loss(Model(Linear(w)), x), model.layer.W), rtol=1e-6, atol=1e-8)


class PlainLinear:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.sin(x * self.W)

    def forward(self, x):
        return x * self.W


class PlainModel:
    """Layers held in attributes: called as objects, and through a method held apart."""

    def __init__(self, first, second, b):
        self.first, self.second, self.b = first, second, b
        self.act = second.forward  # a method of another object held here

    def __call__(self, x):
        return self.act(self.first(x)) * self.b


def plain_model_loss(theta):
    model = PlainModel(PlainLinear(theta[:2]), PlainLinear(theta[2:4]), theta[4:])
    return np.sum(model(X) ** 2)


def test_plain_objects_called_through_attributes_in_every_mode():
    check_every_mode(plain_model_loss, THETA)
    np.testing.assert_allclose(
        autotrace.hessian(plain_model_loss)(THETA) @ THETA,
        central_difference(lambda t: autotrace.grad(plain_model_loss)(t) @ THETA, THETA),
        rtol=1e-5, atol=1e-6)


class Stray:
    """Holds a method of an object that none of its attributes holds."""

    def __init__(self, layer):
        self.act = layer.forward

    def __call__(self, x):
        return self.act(x)


def test_a_method_of_an_object_held_nowhere_is_refused():
    def stray_loss(w):
        return np.sum(Stray(PlainLinear(w))(X))
    message = ("autotrace cannot differentiate a call of Stray.act, a method of an object (a "
               "PlainLinear) that no attribute of the Stray holds: the gradient of that object "
               "does not pass through it; hold the object in an attribute and call its method "
               "through it")
    with pytest.raises(TypeError) as raised:
        autotrace.grad(stray_loss)(np.array([1.0, 2.0]))
    assert str(raised.value) == message
    with pytest.raises(TypeError) as raised:
        autotrace.forward(stray_loss)(np.array([1.0, 2.0]), tangent=np.ones(2))
    assert str(raised.value) == message


def test_layers_in_containers_and_methods_of_fields_are_as_they_were():
    @dataclasses.dataclass
    class Stack:
        layers: list

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    def stack_loss(theta):
        return np.sum(Stack([Linear(theta[:2]), Linear(theta[2:4])])(X) ** 2)
    check_every_mode(stack_loss, THETA[:4])


@dataclasses.dataclass
class Tanh:
    W: np.ndarray

    def forward(self, x):
        return np.tanh(x * self.W)


@dataclasses.dataclass
class HeldMethod:
    """A method of the layer in one field, kept in another (`self.act`)."""
    layer: Tanh
    b: np.ndarray

    def __post_init__(self):
        self.act = self.layer.forward

    def __call__(self, x):
        return self.act(x) * self.b


@dataclasses.dataclass
class OwnMethod:
    """A method of its own, kept in another field."""
    W: np.ndarray
    b: np.ndarray

    def __post_init__(self):
        self.act = self.forward

    def forward(self, x):
        return np.tanh(x * self.W)

    def __call__(self, x):
        return self.act(x) * self.b


def held_method_model(theta):
    return HeldMethod(Tanh(theta[:2]), theta[2:4])


def own_method_model(theta):
    return OwnMethod(theta[:2], theta[2:4])


def model_loss(model, x):
    return np.sum(model(x) ** 2)


def model_parameters(gradient) -> np.ndarray:
    first = gradient.layer.W if isinstance(gradient, HeldMethod) else gradient.W
    return np.concatenate([first, gradient.b], axis=-1)


@pytest.mark.parametrize("make", [held_method_model, own_method_model],
                         ids=lambda make: make.__name__)
def test_a_method_kept_in_a_field_of_a_traced_argument_in_every_mode(make):
    theta, x = THETA[:4], np.array([0.8, -1.1])
    model = make(theta)
    expected = central_difference(lambda t: model_loss(make(t), x), theta)
    by_x = central_difference(lambda p: model_loss(model, p), x)
    for derivative in (autotrace.grad(model_loss), autotrace.function(autotrace.grad(model_loss))):
        np.testing.assert_allclose(model_parameters(derivative(model, x)), expected, rtol=1e-6)
    batched = autotrace.vmap(autotrace.grad(model_loss), in_axes=(None, 0))(
        model, np.stack([x, 2.0 * x]))
    np.testing.assert_allclose(model_parameters(batched)[0], expected, rtol=1e-6)
    np.testing.assert_allclose(model_parameters(batched)[1], central_difference(
        lambda t: model_loss(make(t), 2.0 * x), theta), rtol=1e-6)
    batched = autotrace.function(autotrace.vmap(autotrace.grad(model_loss, wrt=1),
                                                in_axes=(None, 0)))(model, np.stack([x, x]))
    np.testing.assert_allclose(batched, np.stack([by_x, by_x]), rtol=1e-6)
    tangent = make(np.array([1.0, -0.5, 0.3, 2.0]))
    direction = np.array([1.0, -0.5, 0.3, 2.0]) @ expected
    traced_jvp = autotrace.function(
        lambda m, p: autotrace.jvp(model_loss, (m, p), (tangent, np.zeros(2)))[1])
    assert traced_jvp(model, x) == pytest.approx(direction, rel=1e-6)
    hessian = np.stack([central_difference(
        lambda p, i=i: autotrace.grad(model_loss, wrt=1)(model, p)[i], x) for i in range(2)])
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(model_loss, wrt=1))(
        model, x), hessian, rtol=1e-5, atol=1e-7)


def test_a_traced_function_returns_the_method_kept_bound_to_the_object_it_returns():
    def returned(model, x):
        return model, np.sum(model(x))
    model = held_method_model(THETA[:4])
    for _ in range(2):  # traced, then from the cache
        made, value = autotrace.function(returned)(model, X)
        assert made.act.__self__ is made.layer
        np.testing.assert_allclose(made.act(X), model.act(X))
        assert value == pytest.approx(returned(model, X)[1])


# ---- 2. methods that write their object's state ---------------------------------------------

class BatchNorm1D:
    def __init__(self, n):
        self.running_mean = np.zeros(n)
        self.calls = 0

    def forward(self, x):
        mu = x.mean(0)
        self.running_mean = 0.9 * self.running_mean + 0.1 * mu  # running mean written
        self.calls += 1
        return x - mu

    __call__ = forward


class CachingLayer:
    def __call__(self, x):
        self.cache = x  # the layer keeps its input
        return np.sin(x)


class Net:
    """Weights of its own, and a batch norm it calls."""

    def __init__(self):
        self.W = np.array([[1.0, 0.5], [0.2, -0.3]])
        self.norm = BatchNorm1D(2)

    def __call__(self, x):
        return self.norm(x @ self.W)


RNG = np.random.default_rng(0)
W0 = RNG.standard_normal((3, 2))
XS = RNG.standard_normal((4, 3))
DIRECTION = RNG.standard_normal(W0.shape)
BN = BatchNorm1D(2)


def through_method(W, X):
    return np.sum(np.tanh(BN.forward(X @ W)) ** 2)


def through_call(W, X):
    return np.sum(np.tanh(BN(X @ W)) ** 2)


def reference(W):
    """The loss the batch norm gives, as a function of W alone."""
    return np.sum(np.tanh(BatchNorm1D(2).forward(XS @ W)) ** 2)


def first_running_mean():
    return 0.1 * (XS @ W0).mean(0)


@pytest.mark.parametrize("function", [through_method, through_call])
def test_a_global_layer_writes_its_state_once_and_gets_it_right(function):
    expected = central_difference(reference, W0)
    BN.running_mean, BN.calls = np.zeros(2), 0
    np.testing.assert_allclose(autotrace.grad(function)(W0, XS), expected, rtol=1e-6, atol=1e-8)
    assert BN.calls == 1
    np.testing.assert_allclose(BN.running_mean, first_running_mean(), rtol=1e-12)
    BN.running_mean, BN.calls = np.zeros(2), 0
    _, tangent = autotrace.forward(function)(W0, XS, tangent=DIRECTION)
    assert tangent == pytest.approx(np.sum(expected * DIRECTION), rel=1e-6)
    assert BN.calls == 1
    np.testing.assert_allclose(BN.running_mean, first_running_mean(), rtol=1e-12)


def with_norm(W, norm, X):
    return np.sum(np.tanh(norm.forward(X @ W)) ** 2)


def with_norm_called(W, norm, X):
    return np.sum(np.tanh(norm(X @ W)) ** 2)


def with_built_norm(W, unused, X):
    norm = BatchNorm1D(2)
    return np.sum(np.tanh(norm(X @ W)) ** 2)


def with_net(W, net, X):
    return np.sum(np.tanh(net(X @ W)) ** 2)


def cached(W, layer, X):
    return np.sum(layer(X @ W) ** 2)


ARGUMENT_NOT_DIFFERENTIATED = (
    "autotrace cannot differentiate {text}, a write into the state of the argument "
    "'self': it writes a value that carries gradient, in a function called by the "
    "differentiated one, which does not differentiate it with respect to 'self', so the "
    "gradient through what reads it back after the call would be lost; write it in the "
    "function you differentiate, pass the object to the function that writes it, return "
    "the value instead, or write autotrace.stop_gradient(value) if its gradient is not "
    "wanted")
RUNNING_MEAN = ARGUMENT_NOT_DIFFERENTIATED.format(text="self.running_mean = ...")

# (the function of W, the object given, the layer whose state it writes, what is written)
GIVEN = {
    "method of an argument": (with_norm, lambda: BatchNorm1D(2), lambda o: o,
                              "self.running_mean = ..."),
    "call of an argument": (with_norm_called, lambda: BatchNorm1D(2), lambda o: o,
                            "self.running_mean = ..."),
    "built in the function": (with_built_norm, lambda: None, None, "self.running_mean = ..."),
    "layer of an argument": (with_net, Net, lambda o: o.norm, "self.running_mean = ..."),
    "layer caching its input": (cached, CachingLayer, None, "self.cache = ..."),
}


def modes(function, given):
    """Each mode's derivative of `function` in W, the object given as an argument (or in a
    closure), as a function of nothing: (its name, the run)."""
    closed = (lambda W: function(W, given, XS))
    yield "grad", lambda: autotrace.grad(function)(W0, given, XS)
    yield "value_and_grad", lambda: autotrace.value_and_grad(function)(W0, given, XS)[1]
    yield "vjp", lambda: autotrace.vjp(closed, W0)[1](1.0)[0]
    yield "function", lambda: autotrace.function(autotrace.grad(function))(W0, given, XS)
    yield "forward", lambda: autotrace.forward(function)(W0, given, XS, tangent=DIRECTION)[1]
    yield "jvp", lambda: autotrace.jvp(closed, (W0,), (DIRECTION,))[1]
    yield "hessian", lambda: autotrace.hessian(function)(W0, given, XS)


@pytest.mark.parametrize("case", list(GIVEN))
def test_an_object_not_differentiated_whose_method_writes_its_state_is_refused(case):
    # Whether what the caller reads after the call may reach the object (a name read after,
    # another argument, a list, a global or a closure holding it, in this function or one it
    # calls) is not something autotrace tells before running: the write is refused, in a
    # called method as in any function called, where the object is not differentiated.
    function, make, layer_of, text = GIVEN[case]
    for mode in [name for name, _ in modes(function, None)]:
        given = make()
        run = dict(modes(function, given))[mode]
        with pytest.raises(TransformError) as raised, warnings.catch_warnings():
            warnings.simplefilter("ignore", PythonStateWarning)
            run()
        assert raised.value.message == ARGUMENT_NOT_DIFFERENTIATED.format(text=text), mode
        assert raised.value.filename == THIS_FILE, mode


def refusal(function, *arguments) -> TransformError:
    with pytest.raises(TransformError) as raised:
        autotrace.grad(function)(*arguments)
    return raised.value


def test_a_state_read_back_after_the_call_is_refused():
    def read_back(W, norm, X):
        return np.sum(norm(X @ W) ** 2) + np.sum(norm.running_mean)
    error = refusal(read_back, W0, BatchNorm1D(2), XS)
    assert error.message == RUNNING_MEAN
    assert (error.filename, error.lineno) == (THIS_FILE, line_of("# running mean written"))

    def twice(W, norm, X):
        return np.sum(norm(norm(X @ W)) ** 2)  # the second call reads the first's write
    assert refusal(twice, W0, BatchNorm1D(2), XS).message == RUNNING_MEAN


HOLDER = Net()


def through_a_global_holder(W, norm, X):
    y = norm(X @ W)  # norm is HOLDER.norm
    return np.sum(y ** 2) + np.sum(HOLDER.norm.running_mean)


def test_a_state_read_back_through_a_global_holding_the_object_is_refused():
    error = refusal(through_a_global_holder, W0, HOLDER.norm, XS)
    assert error.message == RUNNING_MEAN
    assert error.lineno == line_of("# running mean written")


# ---- where the object is reached after the call by another way (none of these may give a
# gradient that leaves out the write: each is refused)

class Norm:
    def __init__(self):
        self.mean = np.zeros(2)

    def __call__(self, h):
        mu = h.mean(0)
        self.mean = 0.9 * self.mean + 0.1 * mu  # the norm's mean written
        return h - mu


XN = np.arange(12.0).reshape(4, 3) / 10
WN = np.array([[1.0, 0.5], [0.2, -0.3], [0.4, 0.1]])
# The gradient of each loss below in W, the object fresh for each evaluation (central
# differences): the mean read after the call carries gradient.
NORM_GRADIENT = np.array([[1.5138, 0.28125], [1.5302, 0.28375], [1.5466, 0.28625]])
SHARED = Norm()
SHARED_MEAN = (lambda: SHARED.mean)


def in_a_list(W, norm, layers):  # layers[0] is norm
    y = norm(XN @ W)
    return np.sum(y ** 2) + 10 * np.sum(layers[0].mean ** 2)


def given_twice(W, norm, other):  # other is norm
    y = norm(XN @ W)
    return np.sum(y ** 2) + 10 * np.sum(other.mean ** 2)


def kept_in_a_list(W):
    norm = Norm()
    keep = []
    keep += [norm]
    y = norm(XN @ W)
    return np.sum(y ** 2) + 10 * np.sum(keep[0].mean ** 2)


def current_mean():
    return SHARED.mean


def through_a_global_function(W, norm):  # norm is SHARED
    y = norm(XN @ W)
    return np.sum(y ** 2) + 10 * np.sum(current_mean() ** 2)


def through_a_global_lambda(W, norm):  # norm is SHARED
    y = norm(XN @ W)
    return np.sum(y ** 2) + 10 * np.sum(SHARED_MEAN() ** 2)


class NormNet:
    def __init__(self, norm):
        self.norm = norm


def step(W, norm, net):  # net.norm is norm
    y = norm(XN @ W)
    return np.sum(y ** 2) + 10 * np.sum(net.norm.mean ** 2)


def stepping(W, norm, net):
    return step(W, norm, net)


def fresh_shared() -> Norm:
    global SHARED
    SHARED = Norm()
    return SHARED


ALIASED = {
    "in a list": (in_a_list, lambda: (lambda n: (n, [n]))(Norm())),
    "given twice": (given_twice, lambda: (lambda n: (n, n))(Norm())),
    "kept in a list": (kept_in_a_list, lambda: ()),
    "a global function": (through_a_global_function, lambda: (fresh_shared(),)),
    "a global lambda": (through_a_global_lambda, lambda: (fresh_shared(),)),
    "a callee's argument holding it": (stepping, lambda: (lambda n: (n, NormNet(n)))(Norm())),
}


def closed(function, arguments: tuple):
    """`function` of W alone, the other arguments written out in the call (not `*arguments`,
    a call whose derivative runs the function again)."""
    def of_none(W):
        return function(W)

    def of_one(W):
        return function(W, arguments[0])

    def of_two(W):
        return function(W, arguments[0], arguments[1])
    return (of_none, of_one, of_two)[len(arguments)]


@pytest.mark.parametrize("case", list(ALIASED))
def test_an_object_reached_after_the_call_by_another_way_is_refused(case):
    function, arguments = ALIASED[case]
    # (the gradient these would have: the mean read after the call carries it)
    np.testing.assert_allclose(
        central_difference(lambda W: function(W, *arguments()), WN), NORM_GRADIENT,
        rtol=1e-6)
    runs = {
        "grad": lambda a: autotrace.grad(function)(WN, *a),
        "vjp": lambda a: autotrace.vjp(closed(function, a), WN)[1](1.0)[0],
        "forward": lambda a: autotrace.forward(function)(WN, *a, tangent=DIRECTION)[1],
    }
    for mode, run in runs.items():
        with pytest.raises(TransformError) as raised:
            run(arguments())
        assert raised.value.message == ARGUMENT_NOT_DIFFERENTIATED.format(
            text="self.mean = ..."), mode
        assert raised.value.lineno == line_of("# the norm's mean written"), mode


class Cell:
    def __init__(self):
        self.h = np.zeros(2)

    def __call__(self, x):
        self.h = np.tanh(x + self.h)  # hidden state written
        return self.h


@dataclasses.dataclass
class DataCell:
    U: np.ndarray
    h: np.ndarray

    def __call__(self, x):
        self.h = np.tanh(x + self.h * self.U)
        return self.h


def unrolled(W, cell, X):
    total = 0.0
    for i in range(X.shape[0]):
        total = total + np.sum(cell(X[i] @ W))
    return total


def test_a_recurrent_cell_not_differentiated_is_refused_saying_what_to_do():
    error = refusal(unrolled, W0, Cell(), XS)
    assert error.message == ARGUMENT_NOT_DIFFERENTIATED.format(text="self.h = ...")
    assert error.lineno == line_of("# hidden state written")
    # Differentiated with respect to the cell too, a dataclass, it is followed.
    make = (lambda: DataCell(np.array([0.5, -0.2]), np.zeros(2)))
    expected = central_difference(lambda W: unrolled(W, make(), XS), W0)
    cell = make()
    gradient, _ = autotrace.grad(unrolled, wrt=(0, 1))(W0, cell, XS)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    hidden = np.zeros(2)
    for row in XS:
        hidden = np.tanh(row @ W0 + hidden * np.array([0.5, -0.2]))
    np.testing.assert_allclose(cell.h, hidden, rtol=1e-12)


class Seen:
    last = None


SEEN = Seen()


def remember(x):
    SEEN.last = x * 2.0  # a global's state written
    return x


class Remembering:
    def remember(self, x):
        self.last = x * 2.0
        return x


REMEMBERING = Remembering()


def test_what_the_refusal_of_a_global_written_in_a_called_function_says_works():
    # tests/test_errors.py has the refusal of `remember(x)`; what it says to do instead, a
    # method of the global called through it, read back after the call, is followed.
    error = refusal(lambda x: remember(x) * 3.0, 1.5)
    assert "or in a method of that object called through it (SEEN.method(...))" in error.message
    assert error.lineno == line_of("# a global's state written")
    assert autotrace.grad(lambda x: REMEMBERING.remember(x) * REMEMBERING.last)(1.5) == \
        pytest.approx(2.0 * 2.0 * 1.5)
    assert REMEMBERING.last == 3.0
