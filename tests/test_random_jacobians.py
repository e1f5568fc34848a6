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
