"""A statement autotrace refuses inside a branch of an `if` is refused when the branch runs,
naming its line, not when the function is transformed: library code holds branches a call may
never take (lazy initialisation, caches filled on request, fallbacks). Each function is
checked against central differences in every mode with the branch not taken, and raises the
refusal, at the user's line, in every mode where the branch is taken."""
import os

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.numeric import check_every_mode

THIS_FILE = os.path.abspath(__file__)
X = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]])


def line_of(marker: str) -> int:
    """The line of this file where `marker` is."""
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


def check_refused_in_every_mode(f, line: int, message: str, x: np.ndarray = X) -> None:
    """Every mode raises TransformError `message` at this file's `line`."""
    expected = f'File "{THIS_FILE}", line {line}: {message}'
    direction = np.ones_like(x)
    runs = [lambda: autotrace.grad(f)(x),
            lambda: autotrace.function(autotrace.grad(f))(x),
            lambda: autotrace.jvp(f, (x,), (direction,))]
    for run in runs:
        with pytest.raises(TransformError) as raised:
            run()
        assert str(raised.value) == expected


class Counter:
    def __init__(self):
        self.calls = 0
        self.seen = []
        self.last = None


COUNTER = Counter()


@pytest.fixture(autouse=True)
def fresh_counter():
    COUNTER.__init__()
ATTRIBUTE_MESSAGE = (
    "autotrace cannot differentiate COUNTER.seen.insert(...): it changes a container held by "
    "an object with a value that carries gradient, and autotrace does not follow gradient "
    "through such a change, so the gradient through what reads it back would be lost; assign "
    "a new container instead (self.items = self.items + [value]), write "
    "autotrace.stop_gradient(value) if the gradient through it is not wanted, or return the "
    "value")


def attribute_in_branch(x, flag):
    if flag:
        COUNTER.seen.insert(0, x * 2.0)  # refused when run: attribute
    return np.sum(np.sin(x) * x)


def test_an_attribute_write_in_a_branch_not_taken_is_differentiated():
    check_every_mode(lambda x: attribute_in_branch(x, False), X)
    assert COUNTER.seen == []


def test_an_attribute_write_in_a_branch_taken_is_refused_at_its_line():
    line = line_of("refused when run: attribute")
    with pytest.raises(TransformError) as raised:
        autotrace.grad(attribute_in_branch)(X, True)
    assert str(raised.value) == f'File "{THIS_FILE}", line {line}: {ATTRIBUTE_MESSAGE}'
    assert COUNTER.seen == []  # refused before the branch ran
    check_refused_in_every_mode(lambda x: attribute_in_branch(x, True), line,
                                ATTRIBUTE_MESSAGE)


def test_the_generated_code_raises_the_refusal_in_the_branch():
    source = autotrace.source(autotrace.grad(attribute_in_branch))
    line = line_of("refused when run: attribute")
    assert (f"    if flag:\n        raise_refusal({ATTRIBUTE_MESSAGE!r}, "
            f"{THIS_FILE!r}, {line})\n") in source


def elif_and_else(x, mode):
    if mode == "sum":
        y = np.sum(x ** 2)
    elif mode == "cache":
        COUNTER.seen.append(x)  # refused when run: elif
        y = np.sum(x)
    else:
        y = np.sum(np.cos(x))
    return y


def test_each_branch_of_an_elif_chain_runs_or_refuses_on_its_own():
    check_every_mode(lambda x: elif_and_else(x, "sum"), X)
    check_every_mode(lambda x: elif_and_else(x, "other"), X)
    with pytest.raises(TransformError) as raised:
        autotrace.grad(lambda x: elif_and_else(x, "cache"))(X)
    assert raised.value.lineno == line_of("refused when run: elif")
    assert raised.value.filename == THIS_FILE
    assert "COUNTER.seen.append(...)" in raised.value.message


def nested_branches(x, a, b):
    y = np.sum(x * 3.0)
    if a:
        y = y + np.sum(x)
        if b:
            COUNTER.seen.insert(0, x)  # refused when run: nested
    return y


def test_only_the_innermost_branch_is_replaced():
    # The outer branch still runs: its statements before the inner `if` are differentiated.
    check_every_mode(lambda x: nested_branches(x, True, False), X)
    np.testing.assert_allclose(autotrace.grad(lambda x: nested_branches(x, True, False))(X),
                               np.full_like(X, 4.0))
    with pytest.raises(TransformError) as raised:
        autotrace.grad(lambda x: nested_branches(x, True, True))(X)
    assert raised.value.lineno == line_of("refused when run: nested")


def refused_outside_branches(x):
    COUNTER.seen.insert(0, x)  # refused at once
    return np.sum(x)


def test_a_refusal_outside_any_branch_is_raised_when_transformed():
    with pytest.raises(TransformError) as raised:
        autotrace.source(autotrace.grad(refused_outside_branches))  # nothing runs
    assert str(raised.value) == (f'File "{THIS_FILE}", line {line_of("refused at once")}: '
                                 + ATTRIBUTE_MESSAGE)
    assert COUNTER.seen == []


class LazyDense:
    """A layer as libraries write it: parameters made on the first call, a cache of inputs
    kept on request."""

    def __init__(self, n_out: int):
        self.n_out = n_out
        self.is_initialized = False
        self.parameters = {}
        self.inputs = []

    def _init_params(self):
        rng = np.random.default_rng(3)
        self.parameters = {"W": rng.standard_normal((self.n_in, self.n_out)),
                           "b": rng.standard_normal(self.n_out)}
        self.is_initialized = True

    def forward(self, X, retain_derived=False):
        if not self.is_initialized:
            self.n_in = X.shape[1]
            self._init_params()
        Y = np.tanh(X @ self.parameters["W"] + self.parameters["b"])
        if retain_derived:
            self.inputs.append(X)  # refused when run: cache
        return Y


def test_a_layer_with_lazy_initialisation_and_a_cache_not_asked_for():
    layer = LazyDense(2)
    layer.forward(X)  # initialised as the library does, on the first call
    weights = {key: value.copy() for key, value in layer.parameters.items()}
    R = np.array([[1.0, -2.0], [0.5, 3.0]])
    check_every_mode(lambda x: np.sum(layer.forward(x) * R), X)
    expected = (1.0 - np.tanh(X @ weights["W"] + weights["b"]) ** 2) * R @ weights["W"].T
    np.testing.assert_allclose(autotrace.grad(lambda x: np.sum(layer.forward(x) * R))(X),
                               expected, rtol=1e-12)
    assert layer.inputs == []
    for key in weights:  # the parameters were read, never changed
        np.testing.assert_array_equal(layer.parameters[key], weights[key])
