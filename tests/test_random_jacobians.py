"""Jacobians and Hessians of functions that draw random numbers.

A Jacobian runs the derivative code once a row or column (or the value once, then all rows in
one batch), and each run drew anew from NumPy's or Python's global state: every column of a
dropout Hessian saw another mask (diagonal [1.74, 0, 0, 0] for x = [1.74, -0.85, -1.34, 0.6]).
Each run now draws the numbers the first drew, so the Jacobian is that of the function with
one set of draws, and afterwards the states are where one call of the function leaves them.
Expected values are central differences, the random sources set to one point before each
evaluation.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import FrozenRandomWarning
from autotrace.transforms.errors import TransformError

X = np.array([1.74, -0.85, -1.34, 0.6])
DIRECTION = np.array([0.3, -0.7, 0.2, 0.5])
SCALE = 0.5
EPS = 1e-5
GLOBAL_RNG = np.random.default_rng(5)


def dropout(x):
    mask = np.random.rand(*x.shape) > 0.5
    return np.sum((x * mask / 0.5) ** 3)


def binomial_dropout(x):
    mask = np.random.binomial(1, 0.5, size=x.shape)
    return np.sum(np.sin(x * mask / 0.5) * x)


def python_random(x):
    return np.sum(x ** 3 * random.random() + np.cos(x) * random.random())


def global_generator(x):
    return np.sum(np.tanh(x * GLOBAL_RNG.normal(size=4)) ** 2)


def dropout_of(w, x, scale):
    mask = np.random.rand(*w.shape) > 0.5
    return np.sum((w * x * mask / scale) ** 3)


def reseed():
    np.random.seed(3)
    random.seed(3)
    GLOBAL_RNG.bit_generator.state = np.random.default_rng(5).bit_generator.state


def states_now():
    return (np.random.get_state()[1].copy(), random.getstate(), GLOBAL_RNG.bit_generator.state)


def assert_states(expected):
    now = states_now()
    np.testing.assert_array_equal(now[0], expected[0])
    assert now[1:] == expected[1:]


def after_one_run(function, *args):
    reseed()
    function(*args)
    return states_now()


def differences(function, x, *args):
    """The Jacobian of `function` at x by central differences, reseeded before each run."""
    reseed()
    output = np.asarray(function(x, *args))
    jacobian = np.zeros(output.shape + x.shape)
    for index in range(x.size):
        step = np.zeros_like(x)
        step.flat[index] = EPS
        reseed()
        up = np.asarray(function(x + step, *args))
        reseed()
        down = np.asarray(function(x - step, *args))
        jacobian[..., index] = (up - down) / (2 * EPS)
    return jacobian


def hessian_by_differences(function, *args):
    return differences(lambda x, *rest: autotrace.grad(function)(x, *rest), X, *args)


SECOND_ORDER = {
    "hessian": lambda f: autotrace.hessian(f)(X),
    "hessian batched": lambda f: autotrace.hessian(f, batched=True)(X),
    "jacfwd(grad)": lambda f: autotrace.jacfwd(autotrace.grad(f))(X),
    "jacrev(grad)": lambda f: autotrace.jacrev(autotrace.grad(f))(X),
    "jacfwd(jacrev)": lambda f: autotrace.jacfwd(autotrace.jacrev(f))(X),
    "jacobian(grad)": lambda f: autotrace.jacobian(autotrace.grad(f))(X),
    "jacobian(grad) batched": lambda f: autotrace.jacobian(autotrace.grad(f), batched=True)(X),
    "jacobian(grad) forward": lambda f: autotrace.jacobian(autotrace.grad(f), mode="forward")(X),
    "function(hessian)": lambda f: autotrace.function(autotrace.hessian(f))(X),
}
FUNCTIONS = {"np.random.rand": dropout, "np.random.binomial": binomial_dropout,
             "random.random": python_random, "a global Generator": global_generator}


@pytest.mark.parametrize("mode", list(SECOND_ORDER))
@pytest.mark.parametrize("draw", list(FUNCTIONS))
def test_a_hessian_is_that_of_one_set_of_draws(draw, mode):
    function = FUNCTIONS[draw]
    expected = hessian_by_differences(function)
    after = after_one_run(function, X)
    reseed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        hessian = SECOND_ORDER[mode](function)
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-5)
    assert_states(after)


def test_the_dropout_hessian_by_hand():
    np.random.seed(3)
    mask = np.random.rand(4) > 0.5
    np.random.seed(3)
    hessian = autotrace.hessian(dropout)(X)
    # d2/dx2 of (x m / 0.5) ** 3 = 6 x (m / 0.5) ** 3
    np.testing.assert_allclose(hessian, np.diag(6 * X * (mask / 0.5) ** 3), rtol=1e-12)
    assert 0 < np.count_nonzero(mask) < 4  # (seed 3: a mask that is not all ones or zeros)


def noisy_vector(x):
    mask = np.random.rand(*x.shape) > 0.5
    return np.sin(x) * mask + random.random() * x ** 2


FIRST_ORDER = {
    "jacobian": lambda f: autotrace.jacobian(f)(X),
    "jacobian batched": lambda f: autotrace.jacobian(f, batched=True)(X),
    "jacobian forward": lambda f: autotrace.jacobian(f, mode="forward")(X),
    "jacobian forward batched": lambda f: autotrace.jacobian(f, mode="forward",
                                                             batched=True)(X),
    "jacrev": lambda f: autotrace.jacrev(f)(X),
    "jacfwd": lambda f: autotrace.jacfwd(f)(X),
}


@pytest.mark.parametrize("mode", list(FIRST_ORDER))
def test_a_jacobian_is_that_of_one_set_of_draws(mode):
    expected = differences(noisy_vector, X)
    after = after_one_run(noisy_vector, X)
    reseed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        jacobian = FIRST_ORDER[mode](noisy_vector)
    np.testing.assert_allclose(jacobian, expected, rtol=1e-5, atol=1e-5)
    assert_states(after)


def test_a_hessian_called_with_unpacked_arguments():
    args = (np.array([1.0, 2.0, -0.5, 1.5]), SCALE)
    expected = hessian_by_differences(dropout_of, *args)
    after = after_one_run(dropout_of, X, *args)
    reseed()
    np.testing.assert_allclose(autotrace.hessian(dropout_of)(X, *args), expected, rtol=1e-5,
                               atol=1e-5)
    assert_states(after)
    reseed()
    np.testing.assert_allclose(autotrace.jacobian(autotrace.grad(dropout_of))(X, *args),
                               expected, rtol=1e-5, atol=1e-5)
    assert_states(after)


def fresh_generator(x):
    return np.sum(x ** 3 * np.random.default_rng().normal(size=4))  # line of the fresh one


def seeded_generator(x):
    return np.sum(x ** 3 * np.random.default_rng(0).normal(size=4))


@pytest.mark.parametrize("mode", ["hessian", "jacobian(grad)", "jacobian(grad) forward"])
def test_a_generator_made_in_the_call_is_refused(mode):
    with pytest.raises(TransformError) as caught:
        SECOND_ORDER[mode](fresh_generator)
    line = fresh_generator.__code__.co_firstlineno
    assert str(caught.value) == (
        f'File "{__file__}", line {line}: the Jacobian (or Hessian) of '
        f"{__name__}.fresh_generator runs it once a row or column, and it gave another value "
        "in a later run: it draws random numbers from a source autotrace cannot set back (a "
        "generator made in the call, or held where autotrace cannot see it), and the Jacobian "
        "would mix the derivatives of other draws; draw the numbers outside the function and "
        "pass them in")


def test_a_generator_seeded_in_the_call_draws_the_same_each_run():
    noise = np.random.default_rng(0).normal(size=4)
    np.testing.assert_allclose(autotrace.hessian(seeded_generator)(X), np.diag(6 * X * noise),
                               rtol=1e-12)


# A callee handed in as an argument: the derivative of a derivative runs it first (the value,
# its tangent) and again where it needs its gradient, which drew other numbers there.
W = np.array([0.5, -0.3, 0.8, 0.2])
POINTS = np.array([1.0, 2.0, -0.5, 1.5])


def smooth_numpy(w):
    return np.sum(np.sin(w * POINTS + np.random.normal(size=4)))


def smooth_python(w):
    return np.sum(np.sin(w * POINTS + random.random()))


def smooth_global_generator(w):
    return np.sum(np.sin(w * POINTS + GLOBAL_RNG.normal(size=4)))


def with_closure_generator(seed):
    rng = np.random.default_rng(seed)

    def smooth_closure(w):
        return np.sum(np.sin(w * POINTS * rng.uniform(size=4)))
    return smooth_closure


smooth_closure = with_closure_generator(11)


def reseed_closure():
    reseed()
    smooth_closure.__closure__[0].cell_contents.bit_generator.state = \
        np.random.default_rng(11).bit_generator.state


def calls_it(w, callee):
    return callee(w) * 2.0


def calls_it_with(w, callee, rng):
    return np.sum(np.sin(callee(w, rng))) * 2.0


def shifted(w, rng):
    return w * POINTS + rng.normal(size=4)


CALLEES = {"np.random.normal": (smooth_numpy, reseed),
           "random.random": (smooth_python, reseed),
           "a global Generator": (smooth_global_generator, reseed),
           "a Generator in the closure": (smooth_closure, reseed_closure)}


def gradient_along(w, callee):
    return np.sum(autotrace.grad(calls_it)(w, callee) * DIRECTION)


HESSIAN_VECTOR = {
    "forward(grad)": lambda callee: autotrace.forward(autotrace.grad(calls_it))(
        W, callee, tangent=DIRECTION)[1],
    "jvp(grad)": lambda callee: autotrace.jvp(
        lambda w: autotrace.grad(calls_it)(w, callee), (W,), (DIRECTION,))[1],
    "hvp": lambda callee: autotrace.hvp(calls_it)(W, callee, DIRECTION),
    "grad(grad . v)": lambda callee: autotrace.grad(gradient_along)(W, callee),
    "hessian": lambda callee: autotrace.hessian(calls_it)(W, callee) @ DIRECTION,
    "jacfwd(grad)": lambda callee: autotrace.jacfwd(autotrace.grad(calls_it))(
        W, callee) @ DIRECTION,
}


@pytest.mark.parametrize("mode", list(HESSIAN_VECTOR))
@pytest.mark.parametrize("draw", list(CALLEES))
def test_a_callee_handed_in_draws_once_for_a_second_derivative(draw, mode):
    callee, reseed_it = CALLEES[draw]

    def gradient(w):
        reseed_it()
        return autotrace.grad(calls_it)(w, callee)
    expected = np.zeros_like(W)
    for index in range(W.size):
        step = np.zeros_like(W)
        step[index] = EPS
        expected += (gradient(W + step) - gradient(W - step)) / (2 * EPS) * DIRECTION[index]
    reseed_it()
    calls_it(W, callee)
    after = states_now()
    reseed_it()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        product = HESSIAN_VECTOR[mode](callee)
    np.testing.assert_allclose(product, expected, rtol=1e-5, atol=1e-6)
    assert_states(after)


def test_a_generator_handed_to_the_callee_draws_once():
    # (by hand: 2 sum(sin(w x + n)), its Hessian -2 sin(w x + n) x ** 2 on the diagonal)
    noise = np.random.default_rng(4).normal(size=4)
    expected = -2 * np.sin(W * POINTS + noise) * POINTS ** 2 * DIRECTION
    rng = np.random.default_rng(4)
    product = autotrace.forward(autotrace.grad(calls_it_with))(W, shifted, rng,
                                                               tangent=DIRECTION)[1]
    np.testing.assert_allclose(product, expected, rtol=1e-10)
    after_one = np.random.default_rng(4)
    after_one.normal(size=4)
    assert rng.bit_generator.state == after_one.bit_generator.state


class Noisy:
    def __init__(self):
        self.rng = np.random.RandomState(3)

    def smooth(self, w):
        return np.sum(np.sin(w * POINTS * self.rng.rand(4)))


NOISY = Noisy()


def calls_a_known_function(w):
    return smooth_python(w) * 2.0  # (random.random: Python's global state)


def calls_a_method(w):
    return NOISY.smooth(w) * 2.0  # (a RandomState the object holds)


@pytest.mark.parametrize("function, reseed_it", [
    (calls_a_known_function, reseed),
    (calls_a_method, lambda: NOISY.rng.seed(3)),
], ids=["random.random in a callee", "a RandomState of a method's object"])
@pytest.mark.parametrize("mode", ["forward(grad)", "hessian"])
def test_a_known_callee_draws_once_for_a_second_derivative(function, reseed_it, mode):
    def gradient(w):
        reseed_it()
        return autotrace.grad(function)(w)
    expected = differences(gradient, W) @ DIRECTION
    reseed_it()
    function(W)
    after = (states_now(), NOISY.rng.get_state()[1].copy())
    reseed_it()
    if mode == "forward(grad)":
        product = autotrace.forward(autotrace.grad(function))(W, tangent=DIRECTION)[1]
    else:
        product = autotrace.hessian(function)(W) @ DIRECTION
    np.testing.assert_allclose(product, expected, rtol=1e-5, atol=1e-6)
    assert_states(after[0])
    np.testing.assert_array_equal(NOISY.rng.get_state()[1], after[1])
