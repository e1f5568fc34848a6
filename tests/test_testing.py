"""The gradient checker itself, tested with hand-written gradients (no transform involved)."""
from collections import namedtuple

import numpy as np
import pytest

from autotrace.testing import axpy, check_grads, check_vjp, inner, random_like

Params = namedtuple("Params", ["W", "b"])


def test_random_like_follows_structure_and_skips_integers():
    rng = np.random.default_rng(0)
    value = {"a": np.zeros((2, 3)), "b": [1.5, 3, np.arange(4)], "c": Params(np.ones(2), 0.5),
             "name": "x", "flag": True}
    direction = random_like(value, rng)
    assert set(direction) == set(value)
    assert direction["a"].shape == (2, 3) and direction["a"].dtype == np.float64
    assert isinstance(direction["b"], list) and isinstance(direction["b"][0], float)
    assert direction["b"][1] is None and direction["b"][2] is None
    assert isinstance(direction["c"], Params) and isinstance(direction["c"].b, float)
    assert direction["name"] is None and direction["flag"] is None


def test_inner_and_axpy_over_containers():
    value = (np.array([1.0, 2.0]), {"k": 3.0, "n": 4})
    direction = (np.array([0.5, -1.0]), {"k": 2.0, "n": None})
    assert inner(value, direction) == pytest.approx(0.5 - 2.0 + 6.0)
    moved = axpy(value, direction, 0.1)
    np.testing.assert_allclose(moved[0], [1.05, 1.9])
    assert isinstance(moved[1]["k"], float) and moved[1]["k"] == pytest.approx(3.2)
    assert moved[1]["n"] == 4 and isinstance(moved[1]["n"], int)
    assert inner(None, direction) == 0.0


def f_array(x, W):
    return np.tanh(x @ W)


def grad_f_array(x, W, dy=None):
    dy = np.ones(W.shape[1]) if dy is None else dy
    da = dy * (1 - np.tanh(x @ W) ** 2)
    return W @ da, np.outer(x, da)


def grad_f_array_wrong(x, W, dy=None):
    dy = np.ones(W.shape[1]) if dy is None else dy
    da = dy * (1 - np.tanh(x @ W) ** 2)
    return W @ da, np.outer(x, da) * 1.001  # a small error in one argument's gradient


def test_check_vjp_accepts_a_correct_gradient():
    rng = np.random.default_rng(1)
    check_vjp(f_array, grad_f_array, (rng.standard_normal(3), rng.standard_normal((3, 2))),
              wrt=(0, 1))
    check_vjp(f_array, grad_f_array, (rng.standard_normal(3), rng.standard_normal((3, 2))),
              wrt=("x", "W"))


def test_check_vjp_rejects_a_wrong_gradient_and_names_the_argument():
    rng = np.random.default_rng(1)
    with pytest.raises(AssertionError, match=r"f_array with respect to 'W' \(argument 1\)"):
        check_vjp(f_array, grad_f_array_wrong,
                  (rng.standard_normal(3), rng.standard_normal((3, 2))), wrt=(0, 1))


def test_check_vjp_rejects_a_gradient_of_the_wrong_shape():
    def grad_summed(x, W, dy=None):
        gx, gW = grad_f_array(x, W, dy)
        return gx, gW.sum(axis=0)

    with pytest.raises(AssertionError, match=r"shape \(3, 2\)"):
        check_vjp(f_array, grad_summed, (np.ones(3), np.ones((3, 2))), wrt=(0, 1))


def scalar_product(a, b):
    return a * a * b


def test_float_arguments_need_float_gradients():
    check_vjp(scalar_product, lambda a, b, dy=1.0: 2 * a * b * dy, (1.5, -0.5), wrt=0)
    with pytest.raises(AssertionError, match="should be a float"):
        check_vjp(scalar_product, lambda a, b, dy=1.0: np.array(2 * a * b * dy), (1.5, -0.5))
    with pytest.raises(AssertionError, match="finite differences"):
        check_vjp(scalar_product, lambda a, b, dy=1.0: 2 * a * dy, (1.5, -0.5))


def dict_loss(params, x, n):
    out = {"y": params["w"] * x ** n, "z": [params["c"] * x]}
    return out


def grad_dict_loss(params, x, n, dy):
    return {"w": float(np.sum(dy["y"] * x ** n)), "c": float(np.sum(dy["z"][0] * x))}


def test_container_arguments_and_outputs():
    args = ({"w": 0.7, "c": -1.2}, np.linspace(0.5, 1.5, 4), 3)
    check_vjp(dict_loss, grad_dict_loss, args, wrt="params")

    def wrong_keys(params, x, n, dy):
        return {"w": grad_dict_loss(params, x, n, dy)["w"]}

    with pytest.raises(AssertionError, match="dict with keys"):
        check_vjp(dict_loss, wrong_keys, args, wrt="params")


def test_integer_arguments_are_not_perturbed():
    def f(x, n):
        assert isinstance(n, int)
        return np.sum(x ** n)

    check_vjp(f, lambda x, n, dy=1.0: dy * n * x ** (n - 1), (np.ones(3) * 1.1, 3))


def test_functions_writing_into_their_inputs_are_checked_on_copies():
    def f(x):
        x *= 2.0
        return np.sum(x ** 2)

    x = np.array([1.0, 2.0])
    check_vjp(f, lambda x, dy=1.0: dy * 8.0 * x, (x,))
    np.testing.assert_array_equal(x, [1.0, 2.0])


def test_float32_arguments_are_checked_in_float64():
    def f(x):
        return np.sum(np.exp(x))

    def gradient(x, dy=1.0):
        assert x.dtype == np.float64
        return dy * np.exp(x)

    check_vjp(f, gradient, (np.ones(3, dtype=np.float32),))


def test_wrt_errors():
    with pytest.raises(ValueError, match="not a parameter"):
        check_vjp(f_array, grad_f_array, (np.ones(3), np.ones((3, 2))), wrt="y")
    with pytest.raises(ValueError, match="argument 5"):
        check_vjp(f_array, grad_f_array, (np.ones(3), np.ones((3, 2))), wrt=5)


def test_check_grads_rejects_unknown_modes():
    with pytest.raises(ValueError, match="allowed modes are 'reverse'"):
        check_grads(f_array, (np.ones(3), np.ones((3, 2))), modes=("forward",))
