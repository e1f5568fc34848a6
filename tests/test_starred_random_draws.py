"""Calls with unpacked arguments, `f(*args)`, whose callee draws random numbers.

The derivative of such a call runs the callee again after the call ran it, so a dropout mask
drawn with np.random.rand was drawn anew and the gradient was that of another mask than the
value's (seed 1: [0, 0] where [0, -2.4] is right). The run again now starts from the random
states the call started from: NumPy's and Python's global ones and each generator reachable
from the arguments and the callee's globals and closure; afterwards the states are where one
run of the call leaves them. A source that cannot be set back (a generator made in the call,
or held in a module of the user's) is caught by checking the run again's value, and refused.
"""
from __future__ import annotations

import itertools
import os
import random
import types
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import FrozenRandomWarning
from autotrace.transforms.errors import TransformError

THIS_FILE = os.path.abspath(__file__)
X = np.array([1.0, 2.0, -0.5, 1.5])
W = np.array([0.5, -0.3, 0.8, 0.2])
DIRECTION = np.array([0.3, -0.7, 0.2, 0.5])
EPS = 1e-6
GLOBAL_RNG = np.random.default_rng(5)


def line_of(marker: str) -> int:
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


def dropout(w, x):
    keep = np.random.rand(4) > 0.5
    return np.sum(np.where(keep, w * x, 0.0) ** 2)


def noisy_normal(w, x):
    return np.sum((w * x + np.random.normal(size=4)) ** 2)


def noisy_rng(w, x, rng):
    return np.sum((w * x + rng.normal(size=4)) ** 2)


def noisy_global_rng(w, x):
    return np.sum((w * x + GLOBAL_RNG.normal(size=4)) ** 2)


def noisy_python_random(w, x):
    return np.sum((w * x + np.array([random.gauss(0.0, 1.0) for _ in range(4)])) ** 2)


def inner_draw(w):
    return w + np.random.normal(size=4)


def noisy_nested(w, x):
    return np.sum((inner_draw(w) * x) ** 2)


def with_closure_rng(seed):
    rng = np.random.default_rng(seed)

    def noisy_closure(w, x):
        return np.sum(np.sin(w * x + rng.uniform(size=4)) ** 2)
    return noisy_closure


noisy_closure = with_closure_rng(11)


class Sampler:
    def __init__(self):
        self.rng = np.random.RandomState(3)

    def noisy(self, w, x):
        return np.sum(np.tanh(w * x * self.rng.rand(4)) ** 2)


SAMPLER = Sampler()


def noisy_through_object(w, x):
    return SAMPLER.noisy(w, x)


def starred(callee):
    def function(w):
        args = [w, X]
        return 3.0 * callee(*args)
    return function


def starred_rng(w, rng):
    args = [w, X, rng]
    return 3.0 * noisy_rng(*args)


# (the function of w, how its random sources are put at a fixed point before each run)
def reseed_numpy():
    np.random.seed(7)


def reseed_python():
    random.seed(7)


def reseed_global_rng():
    GLOBAL_RNG.bit_generator.state = np.random.default_rng(5).bit_generator.state


def reseed_closure():
    noisy_closure.__closure__[0].cell_contents.bit_generator.state = \
        np.random.default_rng(11).bit_generator.state


def reseed_sampler():
    SAMPLER.rng.seed(3)


CASES = {
    "np.random.rand": (starred(dropout), reseed_numpy),
    "np.random.normal": (starred(noisy_normal), reseed_numpy),
    "a global Generator": (starred(noisy_global_rng), reseed_global_rng),
    "random.gauss": (starred(noisy_python_random), reseed_python),
    "a nested callee's draw": (starred(noisy_nested), reseed_numpy),
    "a Generator in the closure": (starred(noisy_closure), reseed_closure),
    "a RandomState in a global object": (starred(noisy_through_object), reseed_sampler),
}


def fixed_draws_gradient(function, reseed):
    """Central differences, the random sources set to the same point before each run."""
    gradient = np.zeros_like(W)
    for index in range(W.size):
        step = np.zeros_like(W)
        step[index] = EPS
        reseed()
        up = function(W + step)
        reseed()
        down = function(W - step)
        gradient[index] = (up - down) / (2 * EPS)
    return gradient


def state_after_one_run(function, reseed):
    reseed()
    function(W)
    return (np.random.get_state()[1].copy(), random.getstate(),
            GLOBAL_RNG.bit_generator.state, SAMPLER.rng.get_state()[1].copy())


def state_now():
    return (np.random.get_state()[1].copy(), random.getstate(),
            GLOBAL_RNG.bit_generator.state, SAMPLER.rng.get_state()[1].copy())


def same_state(a, b):
    return all(np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
               for x, y in zip(a, b))


MODES = {
    "grad": lambda f: autotrace.grad(f)(W),
    "value_and_grad": lambda f: autotrace.value_and_grad(f)(W)[1],
    "vjp": lambda f: autotrace.vjp(f, W)[1](1.0)[0],
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("case", list(CASES))
def test_the_gradient_is_that_of_the_values_draws(case, mode):
    function, reseed = CASES[case]
    expected = fixed_draws_gradient(function, reseed)
    after = state_after_one_run(function, reseed)
    reseed()
    gradient = MODES[mode](function)
    np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-6)
    assert same_state(state_now(), after)  # the draws go on as after one run of the call


@pytest.mark.parametrize("case", list(CASES))
def test_forward_and_jvp_take_the_values_draws(case):
    function, reseed = CASES[case]
    expected = fixed_draws_gradient(function, reseed) @ DIRECTION
    reseed()
    value = function(W)
    after = state_now()
    reseed()
    got_value, tangent = autotrace.forward(function)(W, tangent=DIRECTION)
    assert got_value == pytest.approx(value, rel=1e-12)
    assert tangent == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert same_state(state_now(), after)
    reseed()
    assert autotrace.jvp(function, (W,), (DIRECTION,))[1] == pytest.approx(
        expected, rel=1e-5, abs=1e-6)


def test_value_and_grad_value_and_gradient_share_the_draws():
    function, reseed = CASES["np.random.normal"]
    reseed()
    value = function(W)
    reseed()
    got, gradient = autotrace.value_and_grad(function)(W)
    assert got == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(gradient, fixed_draws_gradient(function, reseed), rtol=1e-5,
                               atol=1e-6)


def test_a_generator_passed_in_the_starred_arguments():
    def run(w):
        return starred_rng(w, np.random.default_rng(4))
    expected = fixed_draws_gradient(run, lambda: None)
    for mode in MODES.values():
        np.testing.assert_allclose(mode(run), expected, rtol=1e-5, atol=1e-6)
    rng = np.random.default_rng(4)
    tangent = autotrace.forward(starred_rng)(W, rng, tangent=DIRECTION)[1]
    assert tangent == pytest.approx(expected @ DIRECTION, rel=1e-5, abs=1e-6)
    rng_after = np.random.default_rng(4)
    rng_after.normal(size=4)
    assert rng.bit_generator.state == rng_after.bit_generator.state


def test_traced_and_batched_gradients_take_the_traced_draws():
    # (traced, the draw is made once, while tracing, and frozen into the graph)
    function, reseed = CASES["np.random.rand"]
    reseed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        traced = autotrace.function(autotrace.grad(function))
        gradient = traced(W)
    np.testing.assert_allclose(gradient, fixed_draws_gradient(function, reseed), rtol=1e-5,
                               atol=1e-6)
    function, reseed = CASES["np.random.normal"]
    reseed()
    batch = np.stack([W, 2 * W])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        batched = autotrace.vmap(autotrace.grad(function))(batch)
    reseed()
    noise = np.random.normal(size=4)
    # (each row's gradient, the one draw frozen for the batch: 3 * 2 (w x + n) x)
    expected = 6 * (batch * X + noise) * X
    np.testing.assert_allclose(batched, expected, rtol=1e-10)


def smooth(w, x):
    return np.sum(np.sin(w * x + np.random.normal(size=4)))


def through_star(w):
    args = [w, X]
    return smooth(*args)


def gradient_along(w):
    return np.sum(autotrace.grad(through_star)(w) * DIRECTION)


@pytest.mark.parametrize("second_order", [
    lambda: autotrace.forward(autotrace.grad(through_star))(W, tangent=DIRECTION)[1],
    lambda: autotrace.grad(gradient_along)(W),
], ids=["forward over reverse", "reverse over reverse"])
def test_a_hessian_vector_product_takes_the_values_draws(second_order):
    # (one run of the function: autotrace.hessian runs it once a column, each drawing anew)
    np.random.seed(2)
    noise = np.random.normal(size=4)
    np.random.seed(2)
    np.testing.assert_allclose(second_order(), -np.sin(W * X + noise) * X ** 2 * DIRECTION,
                               rtol=1e-10, atol=1e-12)
    after = np.random.normal(size=4)
    np.random.seed(2)
    np.random.normal(size=4)
    np.testing.assert_array_equal(after, np.random.normal(size=4))


def in_a_loop(w):
    total = 0.0
    for i in range(3):
        args = [w * (i + 1), X]
        y = smooth(*args)  # each iteration draws its own noise
        total = total + y * y
    return total


def test_a_starred_call_in_a_loop_takes_each_iterations_draws():
    expected = fixed_draws_gradient(in_a_loop, reseed_numpy)
    reseed_numpy()
    np.testing.assert_allclose(autotrace.grad(in_a_loop)(W), expected, rtol=1e-5, atol=1e-6)
    reseed_numpy()
    assert autotrace.forward(in_a_loop)(W, tangent=DIRECTION)[1] == pytest.approx(
        expected @ DIRECTION, rel=1e-5, abs=1e-6)


def fresh_generator(w, x):
    return np.sum((w * x + np.random.default_rng().normal(size=4)) ** 2)


def starred_fresh(w):
    args = [w, X]
    return fresh_generator(*args)  # the call that draws afresh


HIDDEN = itertools.repeat(np.random.default_rng(0))  # (an object with no attributes to read)
USERS_MODULE = types.ModuleType("users_module")
USERS_MODULE.rng = np.random.default_rng(6)
USERS_MODULE.scale = 2.0


def hidden_generator(w, x):
    return np.sum((w * x + next(HIDDEN).normal(size=4)) ** 2)


def starred_hidden(w):
    args = [w, X]
    return hidden_generator(*args)  # the call whose source is hidden


def module_generator(w, x):
    return np.sum((USERS_MODULE.scale * w * x + USERS_MODULE.rng.normal(size=4)) ** 2)


def starred_module(w):
    args = [w, X]
    return module_generator(*args)


@pytest.mark.parametrize("function, marker, callee", [
    (starred_fresh, "# the call that draws afresh", "fresh_generator"),
    (starred_hidden, "# the call whose source is hidden", "hidden_generator"),
])
@pytest.mark.parametrize("mode", ["grad", "forward", "function(grad)"])
def test_a_source_that_cannot_be_set_back_is_refused_at_the_call(function, marker, callee,
                                                                  mode):
    with pytest.raises(TransformError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        if mode == "grad":
            autotrace.grad(function)(W)
        elif mode == "forward":
            autotrace.forward(function)(W, tangent=DIRECTION)
        else:
            autotrace.function(autotrace.grad(function))(W)
    message = str(caught.value)
    # (traced, function(grad): two runs on arrays of its own gave other values)
    reason = ("it gave another value there: it draws random numbers from a source autotrace "
              "cannot set back")
    assert message.startswith(
        f"autotrace cannot differentiate this call of {__name__}.{callee} with unpacked "
        "arguments (f(*args) or f(**kwargs)): its derivative runs the function again after "
        f"the call ran it, and {reason}")
    assert f'File "{THIS_FILE}", line {line_of(marker)}' in message


def test_a_generator_in_a_users_module_draws_what_it_drew():
    def reseed():
        USERS_MODULE.rng.bit_generator.state = np.random.default_rng(6).bit_generator.state
    expected = fixed_draws_gradient(starred_module, reseed)
    reseed()
    np.testing.assert_allclose(autotrace.grad(starred_module)(W), expected, rtol=1e-5,
                               atol=1e-6)
    reseed()
    assert autotrace.forward(starred_module)(W, tangent=DIRECTION)[1] == pytest.approx(
        expected @ DIRECTION, rel=1e-5, abs=1e-6)
