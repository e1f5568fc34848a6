"""Jacobians and derivatives of derivatives of functions with traced control flow, built
arrays, keyword arguments and structured results: jacrev and jacfwd batch a derivative with
vmap, whose batching of a traced `cond` or `while` must give each column the values of its
own run. Each is checked against central differences."""
import collections
import dataclasses

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

X = np.array([0.3, -0.7, 1.2])


def central_jacobian(f, x, eps=1e-6):
    """The Jacobian of `f` at `x` (one row per element of f(x)), by central differences."""
    columns = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        columns.append((np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps))
    return np.stack(columns, axis=-1)


def built_array(p):
    k = np.array([p[1], -p[0] * p[1]])  # an array built from traced scalars
    return np.sum(k ** 2)


@pytest.mark.parametrize("second", {
    "jacrev(grad)": lambda f: autotrace.jacrev(autotrace.grad(f)),
    "jacfwd(grad)": lambda f: autotrace.jacfwd(autotrace.grad(f)),
    "hessian": autotrace.hessian,
    "function(jacrev(grad))": lambda f: autotrace.function(autotrace.jacrev(autotrace.grad(f))),
}.items(), ids=lambda item: item[0])
def test_second_derivatives_of_an_array_built_from_scalars(second):
    p = np.array([1.3, 0.8])
    expected = central_jacobian(autotrace.grad(built_array), p)
    np.testing.assert_allclose(second[1](built_array)(p), expected, rtol=1e-6, atol=1e-6)


def test_traced_and_batched_grad_of_grad_of_an_array_built_from_scalars():
    def f(t):
        return built_array(np.array([t, 2 * t]))
    ts = np.array([0.7, 0.3])
    expected = [central_difference(autotrace.grad(f), t) for t in ts]
    second = autotrace.grad(autotrace.grad(f))
    np.testing.assert_allclose([autotrace.function(second)(t) for t in ts], expected, rtol=1e-6)
    np.testing.assert_allclose(autotrace.vmap(second)(ts), expected, rtol=1e-6)


def squares_where_positive(x):
    out = np.zeros(3)
    for i in range(3):
        if x[i] > 0:
            out[i] = x[i] ** 2
    return out


def scaled_or_shifted(x):
    y = x.copy()
    i = 0
    while i < 3:
        if y[i] > 0.5:
            y[i] = y[i] * 3
            i += 1
            continue
        y[i] = y[i] - x[0]
        i += 1
    return y


@pytest.mark.parametrize("function", [squares_where_positive, scaled_or_shifted])
@pytest.mark.parametrize("jacobian", [autotrace.jacrev, autotrace.jacfwd, autotrace.jacobian])
def test_jacobians_of_a_branch_in_a_loop(jacobian, function):
    np.testing.assert_allclose(jacobian(function)(X), central_jacobian(function, X),
                               rtol=1e-6, atol=1e-8)


def test_grad_batched_over_cotangents_of_a_branch_in_a_loop():
    def weighted(x, s):
        return np.sum(squares_where_positive(x) * s)
    rows = autotrace.vmap(autotrace.grad(weighted), in_axes=(None, 0))(X, np.eye(3))
    np.testing.assert_allclose(rows, central_jacobian(squares_where_positive, X), atol=1e-8)


def test_vmap_of_a_loop_and_branch_the_same_for_every_example():
    """The loop and the branch run once for the batch; what they compute from the batched
    argument is batched, the rest is one example's (a constant in one branch, a value the
    other makes batched)."""
    def f(x, s):
        total, i = 0.0, 0
        while i < 3:
            if x[i] > 0:
                total = total + s * x[i]
            else:
                total = 1.0
            i += 1
        return total
    s = np.array([0.5, -2.0, 3.0])
    np.testing.assert_allclose(autotrace.vmap(f, in_axes=(None, 0))(X, s),
                               [f(X, value) for value in s])
    np.testing.assert_allclose(autotrace.vmap(f, in_axes=(None, 0))(-X, s),
                               [f(-X, value) for value in s])


def scaled(x, y=1.0, *, z=2.0):
    return np.sin(x) * y * z ** 2


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("wrt, args, kwargs, name", [
    ("y", (X,), {"y": 3.0}, "y"),
    (1, (X,), {"y": 3.0}, "y"),
    ("z", (X, 3.0), {"z": 0.5}, "z"),
    ("z", (X, 3.0), {}, "z"),  # z's default
], ids=["name-by-keyword", "position-by-keyword", "keyword-only", "default"])
def test_jacobian_with_respect_to_an_argument_passed_by_keyword(mode, wrt, args, kwargs, name):
    point = kwargs.get(name, 2.0)
    expected = central_jacobian(
        lambda v: scaled(*args, **{**kwargs, name: float(v[0])}), np.array([point]))[:, 0]
    jacobian = autotrace.jacobian(scaled, wrt=wrt, mode=mode)(*args, **kwargs)
    np.testing.assert_allclose(jacobian, expected, rtol=1e-6)


@pytest.mark.parametrize("wrt", ["y", 1])
def test_hessian_with_respect_to_an_argument_passed_by_keyword(wrt):
    def f(x, y):
        return np.sum(np.sin(x) * y ** 3)
    y = np.array([1.0, 2.0])
    expected = central_jacobian(autotrace.grad(lambda v: f(X[:2], v)), y)
    np.testing.assert_allclose(autotrace.hessian(f, wrt=wrt)(X[:2], y=y), expected, rtol=1e-6)


def test_hessian_with_respect_to_a_keyword_only_argument():
    hessian = autotrace.hessian(scaled, wrt="z")(0.3, 2.0, z=3.0)
    assert hessian == pytest.approx(2 * np.sin(0.3) * 2.0)


@dataclasses.dataclass
class State:
    pos: np.ndarray
    energy: float


@autotrace.tree_util.register_dataclass
@dataclasses.dataclass
class Registered:
    pos: np.ndarray


Pair = collections.namedtuple("Pair", "square triple")


def structured(x):
    return {"state": State(np.sin(x) * 2.0, x[0] * x[1] ** 2),
            "rest": (Pair(x ** 2, 3.0 * x), Registered(np.cos(x)))}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_function_returning_dataclasses_and_other_trees(mode):
    x = X[:2]
    result = autotrace.jacobian(structured, mode=mode)(x)
    state, (pair, registered) = result["state"], result["rest"]
    assert type(state) is State and type(pair) is Pair and type(registered) is Registered
    for got, leaf in ((state.pos, lambda v: structured(v)["state"].pos),
                      (state.energy, lambda v: structured(v)["state"].energy),
                      (pair.square, lambda v: structured(v)["rest"][0].square),
                      (pair.triple, lambda v: structured(v)["rest"][0].triple),
                      (registered.pos, lambda v: structured(v)["rest"][1].pos)):
        np.testing.assert_allclose(got, central_jacobian(leaf, x), rtol=1e-6, atol=1e-9)
    value, aux = autotrace.jacobian(lambda v: (State(v * 2.0, np.sum(v)), "aux"), mode=mode,
                                    has_aux=True)(x)
    assert aux == "aux"
    np.testing.assert_allclose(value.pos, 2.0 * np.eye(2))
    np.testing.assert_allclose(value.energy, np.ones(2))
