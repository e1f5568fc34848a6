"""Random draws in a callee that a derivative of a derivative runs again.

A second derivative (hessian, forward(grad), jvp(grad), hvp, grad of grad) runs a called
function's derivative again in its adjoint sweep, from the random states noted before the call
(runtime/derivatives/state_log.py `state_as_at`). A callee that makes a generator afresh
without a seed (`np.random.default_rng().normal(...)`) draws from the system's entropy, which
no state holds: each run drew other numbers, and the second derivative mixed them. Such a
call is now run again twice from the noted states and refused, at the callee's file and line,
where the values differ; one seeded in the call computes. Traced (autotrace.function, vmap),
the runs are made on concrete arrays of the traced ones' shapes. A callee in a module of the
user's that draws from np.random or a generator the module holds was refused; each run now
draws what the call drew. Dropout written the ways people write it has, under each
transform, the derivatives of the mask one call draws. Expected values are by hand, from the
draws made again by reseeding.
"""
from __future__ import annotations

import importlib
import random
import sys
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import FrozenRandomWarning
from autotrace.runtime.derivatives.random_states import OtherDrawsError

W = np.array([0.5, -0.3, 0.8, 0.2])
X = np.array([1.74, -0.85, -1.34, 0.6])
DIRECTION = np.array([0.3, -0.7, 0.2, 0.5])


def unseeded_helper(w):
    return np.sum(np.sin(w + np.random.default_rng().normal(size=4)))


def calls_unseeded(w):
    return unseeded_helper(w) * 2.0


def seeded_helper(w):
    return np.sum(np.sin(w * np.random.default_rng(4).normal(size=4)))


def calls_seeded(w):
    return seeded_helper(w) * 2.0


SECOND_ORDER = {
    "hessian": lambda f: autotrace.hessian(f)(W) @ DIRECTION,
    "forward(grad)": lambda f: autotrace.forward(autotrace.grad(f))(W, tangent=DIRECTION)[1],
    "jvp(grad)": lambda f: autotrace.jvp(autotrace.grad(f), (W,), (DIRECTION,))[1],
    "hvp": lambda f: autotrace.hvp(f)(W, DIRECTION),
}


@pytest.mark.parametrize("mode", list(SECOND_ORDER))
def test_a_callee_drawing_from_a_fresh_generator_is_refused_at_its_line(mode):
    with pytest.raises(OtherDrawsError) as caught:
        SECOND_ORDER[mode](calls_unseeded)
    line = unseeded_helper.__code__.co_firstlineno
    assert str(caught.value) == (
        f'File "{__file__}", line {line}: autotrace cannot differentiate unseeded_helper twice '
        "(hessian, forward(grad), jvp(grad), hvp): the second derivative runs it again, from "
        "the random states it began with, and it gave another value there: it draws random "
        "numbers from a source autotrace cannot set back (a generator made in the call "
        "without a seed, or held where autotrace cannot see it), and the derivative would "
        "belong to other numbers than the value; draw the numbers outside the function and "
        "pass them in, or make the generator from a seed")


@pytest.mark.parametrize("mode", list(SECOND_ORDER))
def test_a_callee_drawing_from_a_seeded_generator_it_makes_computes(mode):
    # (by hand: 2 sum(sin(w n)), its Hessian -2 sin(w n) n ** 2 on the diagonal)
    noise = np.random.default_rng(4).normal(size=4)
    expected = -2 * np.sin(W * noise) * noise ** 2 * DIRECTION
    np.testing.assert_allclose(SECOND_ORDER[mode](calls_seeded), expected, rtol=1e-10)


class Counted:
    """A layer whose call counts itself and draws from a generator it makes without a seed."""

    def __init__(self):
        self.calls = 0

    def forward(self, w):
        self.calls += 1
        return np.sum(np.sin(w + np.random.default_rng().normal(size=4)))


def calls_counted(w, layer):
    return layer.forward(w) * 2.0


def test_the_runs_that_check_the_draws_leave_the_objects_state():
    layer = Counted()
    with pytest.raises(OtherDrawsError):
        autotrace.forward(autotrace.grad(calls_counted))(W, layer, tangent=DIRECTION)
    assert layer.calls == 1


MODULE_SOURCE = '''import numpy as np

RNG = np.random.default_rng(7)


def global_draw(x):
    mask = np.random.rand(*x.shape) > 0.5
    return np.sum((x * mask) ** 3)


def module_draw(x):
    mask = RNG.random(x.shape) < 0.5
    return np.sum((x * mask) ** 3)


class Dropout:
    def __init__(self):
        self.rng = np.random.default_rng(3)

    def __call__(self, x):
        return x * (self.rng.random(x.shape) < 0.5) / 0.5
'''


@pytest.fixture(name="users")
def users_module(tmp_path, monkeypatch):
    (tmp_path / "noisy_users_module.py").write_text(MODULE_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "noisy_users_module", raising=False)
    return importlib.import_module("noisy_users_module")


HESSIANS = {
    "hessian": lambda f: autotrace.hessian(f)(X),
    "jacfwd(jacrev)": lambda f: autotrace.jacfwd(autotrace.jacrev(f))(X),
    "jacrev(jacrev)": lambda f: autotrace.jacrev(autotrace.jacrev(f))(X),
    "function(hessian)": lambda f: autotrace.function(autotrace.hessian(f))(X),
}


@pytest.mark.parametrize("mode", list(HESSIANS))
@pytest.mark.parametrize("source", ["np.random.rand", "a generator of the module"])
def test_hessian_through_a_drawing_function_of_a_users_module(users, source, mode):
    # (by hand: sum((x m) ** 3), its Hessian 6 x m on the diagonal, m the mask one call drew)
    if source == "np.random.rand":
        def reseed():
            np.random.seed(3)

        def mask():
            return np.random.rand(4) > 0.5

        def f(x):
            return users.global_draw(x) * 1.0
    else:
        def reseed():
            users.RNG.bit_generator.state = np.random.default_rng(7).bit_generator.state

        def mask():
            return users.RNG.random(4) < 0.5

        def f(x):
            return users.module_draw(x) * 1.0
    reseed()
    expected = np.diag(6 * X * mask())
    reseed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        hessian = HESSIANS[mode](f)
    np.testing.assert_allclose(hessian, expected, rtol=1e-12)


@pytest.mark.parametrize("mode", ["hessian", "forward(grad)", "hvp", "function(hessian)"])
def test_hessian_through_a_dropout_layer_of_a_users_module(users, mode):
    layer = users.Dropout()

    def f(x):
        return np.sum(layer(x) ** 3)

    def reseed():
        layer.rng.bit_generator.state = np.random.default_rng(3).bit_generator.state
    keep = (np.random.default_rng(3).random(4) < 0.5) / 0.5
    hessian = np.diag(6 * X * keep ** 3)
    reseed()
    f(X)
    after = layer.rng.bit_generator.state
    reseed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        if mode == "hessian":
            got, expected = autotrace.hessian(f)(X), hessian
        elif mode == "function(hessian)":
            got, expected = autotrace.function(autotrace.hessian(f))(X), hessian
        elif mode == "hvp":
            got, expected = autotrace.hvp(f)(X, DIRECTION), hessian @ DIRECTION
        else:
            got = autotrace.forward(autotrace.grad(f))(X, tangent=DIRECTION)[1]
            expected = hessian @ DIRECTION
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    if mode != "function(hessian)":  # (traced: its draws are made while it is traced)
        assert layer.rng.bit_generator.state == after


TRACED = {
    "function(hessian)": lambda f: autotrace.function(autotrace.hessian(f))(W),
    "jacfwd(grad)": lambda f: autotrace.jacfwd(autotrace.grad(f))(W),
    "hessian(batched)": lambda f: autotrace.hessian(f, batched=True)(W),
}


@pytest.mark.parametrize("mode", list(TRACED))
def test_a_traced_callee_drawing_from_a_fresh_generator_is_refused(mode):
    # (traced, the call's values cannot be compared: it is run on arrays of its own instead)
    with pytest.raises(OtherDrawsError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        TRACED[mode](calls_unseeded)
    assert str(caught.value).startswith(
        f'File "{__file__}", line {unseeded_helper.__code__.co_firstlineno}: autotrace cannot '
        "differentiate unseeded_helper twice")


@pytest.mark.parametrize("mode", list(TRACED))
def test_a_traced_callee_drawing_from_a_seeded_generator_it_makes_computes(mode):
    noise = np.random.default_rng(4).normal(size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        hessian = TRACED[mode](calls_seeded)
    np.testing.assert_allclose(hessian, np.diag(-2 * np.sin(W * noise) * noise ** 2),
                               rtol=1e-10)


def fresh_in_f(x):
    # (numbers, not a mask: two masks of four are one in sixteen times the same)
    return np.sum(x * np.random.default_rng().random(x.shape)) ** 3


def test_a_traced_hessian_of_a_function_drawing_from_a_fresh_generator_is_refused():
    # (each column of the traced Jacobian drew another mask)
    with pytest.raises(autotrace.TransformError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        autotrace.function(autotrace.hessian(fresh_in_f))(X)
    assert str(caught.value).startswith(
        f'File "{__file__}", line {fresh_in_f.__code__.co_firstlineno}: the Jacobian (or '
        f"Hessian) of {__name__}.fresh_in_f runs it once a row or column, and it gave another "
        "value in a later run")


# Dropout written the ways people write it: each transform gives the derivatives of the mask
# one call draws, (sum(x m / p)) ** 3 by hand, m drawn again by reseeding.
class DropoutLayer:
    def __init__(self):
        self.rng = np.random.default_rng(3)

    def __call__(self, x):
        return x * (self.rng.random(x.shape) < 0.5) / 0.5


LAYER = DropoutLayer()


def reseed():
    np.random.seed(3)
    random.seed(3)
    LAYER.rng.bit_generator.state = np.random.default_rng(3).bit_generator.state


def keys_mask(shape):
    _, key = np.random.SeedSequence(42).spawn(2)
    return np.random.default_rng(key).random(shape) < 0.5


def seeded_mask(shape):
    np.random.seed(5)
    return np.random.rand(*shape) < 0.5


DROPOUTS = {  # name -> (the kept entries over 0.5, drawn as the function draws them)
    "np.random.binomial": lambda x: np.random.binomial(1, 0.5, size=x.shape) / 0.5,
    "rng.random(x.shape) < p": lambda x: (
        np.random.default_rng(11).random(x.shape) < 0.5) / 0.5,
    "random.random() an element": lambda x: np.array(
        [1.0 if random.random() < 0.5 else 0.0 for _ in range(x.size)]) / 0.5,
    "a layer's Generator": lambda x: LAYER(np.ones_like(x)),
    "np.random.seed in f": lambda x: seeded_mask(x.shape) / 0.5,
    "SeedSequence keys": lambda x: keys_mask(x.shape) / 0.5,
}
DROPOUT_MODES = {
    "grad": lambda f: autotrace.grad(f)(X),
    "hessian": lambda f: autotrace.hessian(f)(X),
    "jacobian(grad)": lambda f: autotrace.jacobian(autotrace.grad(f))(X),
    "jacfwd(grad)": lambda f: autotrace.jacfwd(autotrace.grad(f))(X),
    "vmap(grad)": lambda f: autotrace.vmap(autotrace.grad(f))(X[None])[0],
    "function(grad)": lambda f: autotrace.function(autotrace.grad(f))(X),
    "function(hessian)": lambda f: autotrace.function(autotrace.hessian(f))(X),
    # (jacrev runs the gradient with unpacked arguments under vmap, traced: it was refused
    # where the states were unsure, a generator made in the call, or a class that makes one)
    "jacfwd(jacrev)": lambda f: autotrace.jacfwd(autotrace.jacrev(f))(X),
    "jacrev(jacrev)": lambda f: autotrace.jacrev(autotrace.jacrev(f))(X),
}


@pytest.mark.parametrize("mode", list(DROPOUT_MODES))
@pytest.mark.parametrize("dropout", list(DROPOUTS))
def test_dropout_has_the_derivatives_of_the_mask_one_call_draws(dropout, mode):
    draw = DROPOUTS[dropout]

    def f(x):
        return np.sum(x * draw(x)) ** 3
    reseed()
    kept = draw(X)
    total = np.sum(X * kept)
    expected = (3 * total ** 2 * kept if mode in ("grad", "vmap(grad)", "function(grad)")
                else 6 * total * np.outer(kept, kept))
    reseed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrozenRandomWarning)
        got = DROPOUT_MODES[mode](f)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
