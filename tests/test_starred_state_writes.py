"""Calls with unpacked arguments, `f(W, *objects)`, whose callee writes an object's state.

The derivative of such a call runs the callee again after the call itself ran (which
arguments carry gradient is known only then), so a batch norm updating its running mean
updated it twice and the gradient was taken from the state the first run left (1.44 where
1.5138 is right, every mode). Such a write is refused at run time, naming the write and the
starred call, and the state is left as the one run of the call left it. A callee that writes
no state is differentiated as before, objects holding floats among the arguments included.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import autotrace
from autotrace.runtime.derivatives.objects import StateWriteError

THIS_FILE = os.path.abspath(__file__)
XN = np.arange(12.0).reshape(4, 3) / 10
WN = np.array([[1.0, 0.5], [0.2, -0.3], [0.4, 0.1]])
DIRECTION = np.array([[0.3, -0.2], [0.7, 0.1], [-0.5, 0.4]])
EPS = 1e-6


def line_of(marker: str) -> int:
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


def central_difference(f, W):
    gradient = np.zeros_like(W)
    for index in np.ndindex(W.shape):
        step = np.zeros_like(W)
        step[index] = EPS
        gradient[index] = (f(W + step) - f(W - step)) / (2 * EPS)
    return gradient


class Norm:
    def __init__(self):
        self.mean = np.zeros(2)

    def __call__(self, h):  # the norm called
        mu = h.mean(0)
        self.mean = 0.9 * self.mean + 0.1 * mu
        return h - mu


def given_twice(W, norm, other):  # other is norm
    y = norm(XN @ W)  # the call run again
    return np.sum(y ** 2) + 10 * np.sum(other.mean ** 2)


def starred(W, objects):
    return given_twice(W, *objects)


# The gradient in W, a fresh Norm for each evaluation (central differences).
NORM_GRADIENT = np.array([[1.5138, 0.28125], [1.5302, 0.28375], [1.5466, 0.28625]])
MESSAGE = (
    "autotrace cannot differentiate tests.test_starred_state_writes.{name}, which writes into "
    "an object's state, here: the derivative of a call with unpacked arguments (f(*args) or "
    "f(**kwargs)) runs the function again after the call ran it, so the write would be made "
    "twice and the derivative taken from the state the first run left; write the arguments "
    "out in the call (f(a, b)), or keep this state out of the differentiated call")


def fresh():
    norm = Norm()
    return [norm, norm]


MODES = {
    "grad": lambda o: autotrace.grad(starred)(WN, o),
    "value_and_grad": lambda o: autotrace.value_and_grad(starred)(WN, o)[1],
    "vjp": lambda o: autotrace.vjp(lambda W: starred(W, o), WN)[1](1.0)[0],
    "forward": lambda o: autotrace.forward(starred)(WN, o, tangent=DIRECTION)[1],
    "jvp": lambda o: autotrace.jvp(lambda W: starred(W, o), (WN,), (DIRECTION,))[1],
    "function(grad)": lambda o: autotrace.function(autotrace.grad(starred))(WN, o),
    "hessian": lambda o: autotrace.hessian(starred)(WN, o),
}


def test_the_gradient_the_write_would_need():
    np.testing.assert_allclose(central_difference(lambda W: starred(W, fresh()), WN),
                               NORM_GRADIENT, rtol=1e-4)


@pytest.mark.parametrize("mode", list(MODES))
def test_a_starred_call_whose_callee_writes_state_is_refused(mode):
    objects = fresh()
    with pytest.raises(StateWriteError) as raised:
        MODES[mode](objects)
    text = str(raised.value)
    where = f"{os.path.basename(THIS_FILE)}:{line_of('# the norm called')}: "
    assert text.startswith(where + MESSAGE.format(name="Norm.__call__")), mode
    if mode != "hessian":  # (a derivative of a derivative's code maps to no line of its own)
        assert f'File "{THIS_FILE}", line {line_of("# the call run again")}' in text, mode
    # the state as the call's one run left it (traced, as before the trace)
    once = 0.1 * (XN @ WN).mean(0)
    np.testing.assert_allclose(objects[0].mean, 0 * once if mode == "function(grad)" else once,
                               rtol=1e-12)


class Centered:
    """Its mean made on its first call: a run again writes nothing, and reads the first's."""

    def __init__(self):
        self.scale = 1.0
        self.ready = False

    def __call__(self, h):  # the centering called
        if not self.ready:
            self.ready = True
            self.m = h.mean(0)
        return np.tanh(h - 0.5 * self.m) * self.scale


def centered(W, layer):
    return np.sum(layer(XN @ W) ** 2)


def starred_centered(W, layers):
    return centered(W, *layers)


@pytest.mark.parametrize("mode", ["grad", "forward"])
def test_a_callee_that_writes_state_on_a_path_not_run_again_is_refused(mode):
    # the write of the first call is not made again, but read: the mean would be a constant
    run = {"grad": lambda: autotrace.grad(starred_centered)(WN, [Centered()]),
           "forward": lambda: autotrace.forward(starred_centered)(WN, [Centered()],
                                                                  tangent=DIRECTION)}[mode]
    with pytest.raises(StateWriteError) as raised:
        run()
    where = f"{os.path.basename(THIS_FILE)}:{line_of('# the centering called')}: "
    assert str(raised.value).startswith(where + MESSAGE.format(name="Centered.__call__"))


class Linear:
    def __init__(self, A):
        self.A = A

    def __call__(self, h):
        return np.tanh(h @ self.A)


class Scale:
    def __init__(self, s):
        self.s = s

    def __call__(self, h):
        return h * self.s


def chain(W, *layers):
    h = np.tanh(XN @ W)
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


A1 = np.array([[1.0, 0.3], [0.2, 0.5]])
LAYERS = (Linear(A1), Scale(1.5))


def through_layers(W):
    return chain(W, *LAYERS)


def with_layers(W, layers):
    return chain(W, *layers)


def test_a_starred_call_of_objects_holding_floats_that_write_nothing():
    expected = central_difference(through_layers, WN)
    np.testing.assert_allclose(autotrace.grad(through_layers)(WN), expected, rtol=1e-7)
    np.testing.assert_allclose(autotrace.value_and_grad(through_layers)(WN)[1], expected,
                               rtol=1e-7)
    np.testing.assert_allclose(autotrace.vjp(through_layers, WN)[1](1.0)[0], expected,
                               rtol=1e-7)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(through_layers))(WN),
                               expected, rtol=1e-7)
    batched = autotrace.vmap(autotrace.grad(through_layers))(np.stack([WN, 2 * WN]))
    np.testing.assert_allclose(batched[0], expected, rtol=1e-7)
    along = np.sum(expected * DIRECTION)
    assert autotrace.forward(through_layers)(WN, tangent=DIRECTION)[1] == pytest.approx(
        along, rel=1e-7)
    hessian = autotrace.hessian(through_layers)(WN).reshape(6, 6)
    written_out = autotrace.hessian(lambda W: chain(W, LAYERS[0], LAYERS[1]))(WN)
    np.testing.assert_allclose(hessian, written_out.reshape(6, 6), rtol=1e-12)
    # the objects' own gradients, when they are differentiated
    gradients = autotrace.grad(with_layers, wrt=(0, 1))(WN, list(LAYERS))
    np.testing.assert_allclose(gradients[0], expected, rtol=1e-7)
    by_A = central_difference(lambda A: chain(WN, Linear(A), LAYERS[1]), A1)
    np.testing.assert_allclose(gradients[1][0]["A"], by_A, rtol=1e-7)
    by_s = (chain(WN, LAYERS[0], Scale(1.5 + EPS)) - chain(WN, LAYERS[0], Scale(1.5 - EPS))
            ) / (2 * EPS)
    assert gradients[1][1]["s"] == pytest.approx(by_s, rel=1e-7)
