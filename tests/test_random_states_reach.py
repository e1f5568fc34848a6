"""Which calls note random states: a call that can draw nothing notes none (its second
derivative, run once a layer, reads and sets no state), and each way a call reaches a draw
notes NumPy's and Python's global states, so its derivatives draw what it drew.
"""
from __future__ import annotations

import functools
import importlib
import itertools
import random
import statistics
import sys

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


def stream():
    while True:
        yield np.random.randn(4)


NORMAL = statistics.NormalDist(0.0, 1.0)
NOISE = stream()
MAPPED = map(lambda _: np.random.randn(4), itertools.count())
TIMES_DRAW = np.frompyfunc(lambda v: v * np.random.rand(), 1, 1)
VECTORIZED = np.vectorize(lambda v: v * np.random.rand())


def seed():
    np.random.seed(3)
    random.seed(3)


def seeded_jacobian(function, x, step):
    """Central differences of `function`, the global states seeded before each evaluation."""
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = step
        seed()
        after = np.asarray(function(x + e))
        seed()
        columns.append((after - np.asarray(function(x - e))) / (2 * step))
    return np.stack(columns, axis=-1)


def assert_derivatives_of_one_draw(noisy):
    def cubed(x):
        return np.sum(noisy(x) ** 3)

    def gradient(x):
        seed()
        return autotrace.grad(cubed)(x)

    seed()
    np.testing.assert_allclose(autotrace.jacrev(noisy)(X), seeded_jacobian(noisy, X, 1e-6),
                               rtol=1e-5, atol=1e-7)
    seed()
    hessian = autotrace.hessian(cubed)(X)
    np.testing.assert_allclose(hessian, seeded_jacobian(gradient, X, 1e-5),
                               rtol=1e-4, atol=1e-6)


def test_draws_behind_objects_the_walk_cannot_read_are_those_of_one_call():
    # (the standard library's NormalDist, a generator, a map, np.frompyfunc, np.vectorize)
    for noisy in (lambda x: np.tanh(x * np.array(NORMAL.samples(4))) * x,
                  lambda x: np.tanh(x * next(NOISE)) * x,
                  lambda x: np.tanh(x * next(MAPPED)) * x,
                  lambda x: np.tanh(x * TIMES_DRAW(np.ones(4)).astype(float)) * x,
                  lambda x: np.tanh(x * VECTORIZED(np.ones(4))) * x):
        assert_derivatives_of_one_draw(noisy)


def test_a_module_of_the_users_named_as_one_of_the_standard_librarys(tmp_path, monkeypatch):
    (tmp_path / "nntplib.py").write_text(
        "import numpy as np\n\n\ndef noisy(x):\n    return x * np.random.randn(4)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "nntplib", raising=False)
    users = importlib.import_module("nntplib")
    assert random_states(users.noisy, (X,)).sources[:2] == [np.random.mtrand._rand, random]
    noisy = lambda x: np.tanh(users.noisy(x)) * x  # noqa: E731
    seed()
    np.testing.assert_allclose(autotrace.jacrev(noisy)(X), seeded_jacobian(noisy, X, 1e-6),
                               rtol=1e-5, atol=1e-7)


def default_dropout(x):
    return np.sum(x * (autotrace.random.uniform(x.shape) > 0.5)) ** 3


def test_hessian_of_a_draw_of_the_default_generator_is_that_of_one_draw():
    generator = autotrace.random.default_generator()
    key = generator.key.read()
    hessian = autotrace.hessian(default_dropout)(X)
    mask = generator_at(key).uniform(X.shape) > 0.5
    np.testing.assert_allclose(hessian, 6 * np.sum(X * mask) * np.outer(mask, mask),
                               rtol=1e-12)
    assert generator.key.read() == key + 1
