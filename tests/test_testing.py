"""The gradient checker itself: check_vjp and check_jvp with hand-written derivatives (no
transform involved), and check_grads in forward mode with rules registered to be wrong."""
import math
from collections import namedtuple

import numpy as np
import pytest

import autotrace
from autotrace import d
from autotrace.testing import axpy, check_grads, check_jvp, check_vjp, inner, random_like

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
    with pytest.raises(ValueError, match="allowed modes are 'reverse', 'forward'"):
        check_grads(f_array, (np.ones(3), np.ones((3, 2))), modes=("sideways",))
    with pytest.raises(ValueError, match="unknown mode 'Forward'"):
        check_grads(f_array, (np.ones(3), np.ones((3, 2))), modes="Forward")


# --- check_jvp: forward mode, with hand-written tangents ------------------------------------

def forward_f_array(x, W, tangent=None):
    dx, dW = tangent
    y = np.tanh(x @ W)
    return y, (1 - y ** 2) * (dx @ W + x @ dW)


def forward_f_array_wrong(x, W, tangent=None):
    dx, dW = tangent
    y = np.tanh(x @ W)
    return y, (1 - y ** 2) * (dx @ W + 1.001 * x @ dW)  # a small error in W's share


def test_check_jvp_accepts_a_correct_tangent():
    rng = np.random.default_rng(1)
    args = (rng.standard_normal(3), rng.standard_normal((3, 2)))
    check_jvp(f_array, forward_f_array, args, wrt=(0, 1))
    check_jvp(f_array, forward_f_array, args, wrt=("x", "W"))


def test_check_jvp_rejects_a_wrong_tangent_and_names_the_argument():
    rng = np.random.default_rng(1)
    args = (rng.standard_normal(3), rng.standard_normal((3, 2)))
    with pytest.raises(AssertionError, match=r"f_array along 'W' \(argument 1\) does not "
                                             r"match finite differences"):
        check_jvp(f_array, forward_f_array_wrong, args, wrt=(0, 1))


def test_check_jvp_checks_each_argument_with_the_others_tangents_zero():
    seen = []

    def forward_recording(x, W, tangent=None):
        seen.append(tangent)
        return forward_f_array(x, W, tangent)

    check_jvp(f_array, forward_recording, (np.ones(3), np.ones((3, 2))), wrt=(0, 1))
    assert len(seen) == 3  # x alone, W alone, both together
    assert not np.any(seen[0][1]) and np.any(seen[0][0])
    assert not np.any(seen[1][0]) and np.any(seen[1][1])
    assert np.any(seen[2][0]) and np.any(seen[2][1])


def test_check_jvp_rejects_a_tangent_of_the_wrong_structure_or_a_wrong_value():
    args = (np.ones(3), np.ones((3, 2)))

    def summed(x, W, tangent=None):
        y, dy = forward_f_array(x, W, tangent)
        return y, np.sum(dy)

    with pytest.raises(AssertionError, match=r"output tangent should be an array of shape \(2,\)"):
        check_jvp(f_array, summed, args, wrt=(0, 1))

    def wrong_value(x, W, tangent=None):
        y, dy = forward_f_array(x, W, tangent)
        return y + 1.0, dy

    with pytest.raises(AssertionError, match="the value is not f's"):
        check_jvp(f_array, wrong_value, args, wrt=(0, 1))
    with pytest.raises(AssertionError, match=r"should return a pair \(value, tangent\)"):
        check_jvp(f_array, lambda x, W, tangent=None: f_array(x, W), args, wrt=(0, 1))


def test_check_jvp_with_floats_containers_and_integers():
    check_jvp(scalar_product, lambda a, b, tangent=None: (a * a * b, 2 * a * b * tangent),
              (1.5, -0.5))
    with pytest.raises(AssertionError, match="should be a float"):
        check_jvp(scalar_product,
                  lambda a, b, tangent=None: (a * a * b, np.array(2 * a * b * tangent)),
                  (1.5, -0.5))

    def forward_dict_loss(params, x, n, tangent=None):
        assert tangent["k"] == 0.0  # an integer leaf gets a zero tangent, never None
        return dict_loss(params, x, n), {"y": tangent["w"] * x ** n,
                                         "z": [tangent["c"] * x]}

    args = ({"w": 0.7, "c": -1.2, "k": 3}, np.linspace(0.5, 1.5, 4), 3)
    check_jvp(dict_loss, forward_dict_loss, args, wrt="params")


# --- check_grads in forward mode --------------------------------------------------------------

def sine_layer(x, W):
    return np.sin(x) @ W


def test_check_grads_forward_mode_passes_for_correct_code():
    rng = np.random.default_rng(2)
    args = (rng.standard_normal(3), rng.standard_normal((3, 2)))
    check_grads(sine_layer, args, wrt=(0, 1), order=2, modes="forward")
    check_grads(sine_layer, args, wrt="W", order=2, modes=("reverse", "forward"))
    check_grads(dict_loss, ({"w": 0.7, "c": -1.2}, np.linspace(0.5, 1.5, 4), 3),
                wrt="params", order=2, modes=("forward",))


# Rules registered to be wrong, on function objects private to this module (registering
# mutates the global registries). Both compute sin and cos with no Python source to read.
badly_tangent_sine = np.vectorize(math.sin, otypes=[float])


@autotrace.register_adjoint(badly_tangent_sine)
def badly_tangent_sine_adjoint(y, x):
    d[x] = d[y] * np.cos(x)


@autotrace.register_tangent(badly_tangent_sine)
def badly_tangent_sine_tangent(y, x):
    d[y] = d[x] * np.cos(x) * 1.001  # wrong


def uses_badly_tangent_sine(x, W):
    return badly_tangent_sine(x) @ W


def test_check_grads_forward_mode_raises_for_a_wrong_tangent_rule():
    rng = np.random.default_rng(3)
    args = (rng.standard_normal(3), rng.standard_normal((3, 2)))
    check_grads(uses_badly_tangent_sine, args, wrt=(0, 1), order=2)  # reverse mode is right
    check_grads(uses_badly_tangent_sine, args, wrt="W", modes="forward")  # sine not moved
    with pytest.raises(AssertionError,
                       match=r"forward-mode derivative of uses_badly_tangent_sine along 'x' "
                             r"\(argument 0\) does not match finite differences"):
        check_grads(uses_badly_tangent_sine, args, wrt=(0, 1), modes="forward")
    with pytest.raises(AssertionError, match="forward-mode derivative"):
        check_grads(uses_badly_tangent_sine, args, wrt=(0, 1), modes=("reverse", "forward"))


# Right to first order in both modes, but the adjoint of `sine_via_helper` calls a cosine
# whose tangent rule has the wrong sign: only forward over reverse (order 2) goes through it.
badly_tangent_cosine = np.vectorize(math.cos, otypes=[float])
sine_via_helper = np.vectorize(math.sin, otypes=[float])


@autotrace.register_adjoint(badly_tangent_cosine)
def badly_tangent_cosine_adjoint(y, x):
    d[x] = -d[y] * np.sin(x)


@autotrace.register_tangent(badly_tangent_cosine)
def badly_tangent_cosine_tangent(y, x):
    d[y] = d[x] * np.sin(x)  # wrong: the sign


@autotrace.register_adjoint(sine_via_helper)
def sine_via_helper_adjoint(y, x):
    d[x] = d[y] * badly_tangent_cosine(x)


@autotrace.register_tangent(sine_via_helper)
def sine_via_helper_tangent(y, x):
    d[y] = d[x] * np.cos(x)


def uses_sine_via_helper(x):
    return np.sum(sine_via_helper(x) * x)


def test_check_grads_forward_over_reverse_raises_for_a_wrong_second_order_tangent():
    args = (np.array([0.3, -1.1, 2.0]),)
    check_grads(uses_sine_via_helper, args, order=2)  # reverse over reverse is right
    check_grads(uses_sine_via_helper, args, order=1, modes="forward")
    with pytest.raises(AssertionError,
                       match=r"order-2 derivative \(forward over reverse\) of "
                             r"uses_sine_via_helper along 'x' \(argument 0\)"):
        check_grads(uses_sine_via_helper, args, order=2, modes="forward")


# --- kinks ----------------------------------------------------------------------------------------

def relu_layer(x, w):
    return np.sum(np.maximum(x * w, 0.0))


def _one_sided_by_hand(f, x, w, v, u, eps):
    """(from below, from above) differences of t -> u * f(x, w + t v), written out here."""
    at = [u * f(x, w + t * v) for t in (-eps, 0.0, eps)]
    return (at[1] - at[0]) / eps, (at[2] - at[1]) / eps


@pytest.mark.parametrize("modes, method", [(("reverse",), "the gradient of"),
                                           (("forward",), "the forward-mode derivative of")])
def test_a_failure_at_a_kink_says_so_and_names_the_element(modes, method):
    x = np.array([1.0, 2.0, -1.0])
    w = np.array([0.5, 3e-7, 0.25])        # the second pre-activation, 6e-7, is within eps of 0
    with pytest.raises(AssertionError) as raised:
        check_grads(relu_layer, (x, w), wrt=1, modes=modes)
    message = str(raised.value)
    assert message.startswith(f"{method} relu_layer")
    last = message.splitlines()[-1]
    # The direction and cotangent check_grads draws (seed 0), to compute the differences here.
    rng = np.random.default_rng(0)
    u = random_like(relu_layer(x, w), rng)
    v = random_like(w, rng)
    below, above = _one_sided_by_hand(relu_layer, x, w, v, u, 1e-6)
    assert abs(above - below) > 0.1 * abs(u * 2.0 * v[1])    # the slope x[1] v[1] jumps
    numbers = last[len("  The one-sided differences disagree ("):].split(" from ")
    assert np.isclose(float(numbers[0]), below, rtol=1e-9)
    assert np.isclose(float(numbers[1].split("below, ")[1]), above, rtol=1e-9)
    assert last.endswith(
        " from above): f has a kink within eps of this point, along w[1] (= 3e-07), as a ReLU, "
        "abs or max has where its input is 0; finite differences cannot check a derivative "
        "there: check at a point farther from it.")


def test_a_wrong_derivative_of_a_smooth_function_mentions_no_kink():
    with pytest.raises(AssertionError) as raised:
        check_vjp(np.sin, lambda x, dy: 1.1 * np.cos(x) * dy, (np.array([0.3, -0.2]),))
    assert "does not match finite differences" in str(raised.value)
    assert "one-sided" not in str(raised.value)
    x = np.array([[1.0, -2.0], [0.5, 0.1]])     # away from the kinks: no failure at all
    check_grads(relu_layer, (x, np.array([0.3, 0.7])), wrt=(0, 1), modes=("reverse", "forward"))
