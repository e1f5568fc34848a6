"""Which calls note random states: a call that can draw nothing notes none (its second
derivative, run once a layer, reads and sets no state), and each way a call reaches a draw
notes NumPy's and Python's global states, so its derivatives draw what it drew.
"""
from __future__ import annotations

import functools
import random

import numpy as np
from numpy import random as npr

import autotrace
from autotrace.runtime.derivatives.random_states import random_states

X = np.array([1.74, -0.85, -1.34, 0.6])


def layer(h, w):
    return np.tanh(h @ w)


def aliased_draw(x):
    return np.sum((x * npr.rand(*x.shape)) ** 3)


def imported_draw(x):
    import random as stdlib_random
    return x * stdlib_random.random()


def wrapped(function):
    @functools.wraps(function)
    def call(*args):
        return function(*args)
    return call


def test_a_deterministic_call_notes_no_state():
    assert random_states(layer, (X, np.eye(4))).sources == []
    assert random_states(wrapped(layer), (X,)).sources == []


def test_each_way_to_a_draw_notes_the_global_states():
    def attribute(x):
        return x * np.random.rand()

    for function in (attribute, aliased_draw, imported_draw, wrapped(attribute),
                     functools.partial(attribute), lambda x: x * random.random()):
        sources = random_states(function, (X,)).sources
        assert sources[:2] == [np.random.mtrand._rand, random], function


def test_hessian_of_an_aliased_draw_is_that_of_its_draws():
    np.random.seed(3)
    hessian = autotrace.hessian(aliased_draw)(X)
    np.random.seed(3)
    mask = np.random.rand(4)
    np.testing.assert_allclose(hessian, np.diag(6 * X * mask ** 3), rtol=1e-10)
    assert np.random.rand() == np.random.RandomState(3).rand(5)[4]  # one call's draws


GENERATOR = autotrace.random.Generator(7)


def generator_dropout(x):
    mask = GENERATOR.uniform(x.shape) > 0.5
    return np.sum(x * mask) ** 3


def generator_at(key):
    generator = autotrace.random.Generator(0)
    generator.key.assign(key)
    return generator


def test_hessian_of_an_autotrace_generator_draw_is_that_of_one_draw():
    # (each column drew with the key the column before left: an asymmetric Hessian)
    for hessian in (autotrace.hessian(generator_dropout),
                    autotrace.function(autotrace.hessian(generator_dropout))):
        key = GENERATOR.key.read()
        mask = generator_at(key).uniform(X.shape) > 0.5
        expected = 6 * np.sum(X * mask) * np.outer(mask, mask)
        np.testing.assert_allclose(hessian(X), expected, rtol=1e-12)
        assert GENERATOR.key.read() == key + 1  # as one call advances it


def helper(x):  # (named as the template's hole for the log was: its draws were not noted)
    return x * (GENERATOR.uniform(x.shape) > 0.5)


def through_helper(x):
    return np.sum(helper(x) ** 3)


def test_second_derivative_through_a_drawing_helper_named_helper():
    direction = np.array([0.3, -0.2, 0.5, 1.0])
    for second in (lambda: autotrace.hvp(through_helper)(X, direction),
                   lambda: autotrace.forward(autotrace.grad(through_helper))(
                       X, tangent=direction)[1]):
        key = GENERATOR.key.read()
        got = second()
        mask = generator_at(key).uniform(X.shape) > 0.5
        np.testing.assert_allclose(got, 6 * X * mask * direction, rtol=1e-12)
        assert GENERATOR.key.read() == key + 1
