"""Optimizers: each update against the formulas written out here step by step, slots, the step
counter, gradients that are None or misshapen, and optimizer steps inside autotrace.function."""
import json
import re

import numpy as np
import pytest

import autotrace
from autotrace import Checkpoint, Variable, optimizers
from autotrace.tracking import tracked_variables

GRADIENTS = [np.array([0.5, -1.0]), np.array([0.1, 0.2]), np.array([-2.0, 3.0])]
START = np.array([1.0, 2.0])


def run_steps(optimizer, gradients=GRADIENTS):
    """The variable's value after each of `optimizer`'s steps on `gradients`."""
    w = Variable(START, name="w")
    values = []
    for gradient in gradients:
        optimizer.apply_gradients([(gradient, w)])
        values.append(w.numpy())
    return values


def expected_steps(update, state):
    """The value after each step of `update(w, g, state, t) -> w`, t = 1, 2, ..."""
    w, values = START.copy(), []
    for t, g in enumerate(GRADIENTS, start=1):
        w = update(w, g, state, t)
        values.append(w)
    return values


def assert_steps(actual, expected):
    assert len(actual) == len(expected)
    for step, (a, e) in enumerate(zip(actual, expected), start=1):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=0, err_msg=f"step {step}")


# --- each optimizer's formulas -------------------------------------------------------------------

def test_sgd():
    assert_steps(run_steps(optimizers.SGD(learning_rate=0.1)),
                 [START - 0.1 * GRADIENTS[0],
                  START - 0.1 * GRADIENTS[0] - 0.1 * GRADIENTS[1],
                  START - 0.1 * (GRADIENTS[0] + GRADIENTS[1] + GRADIENTS[2])])


def test_sgd_momentum():
    def update(w, g, state, t):
        state["velocity"] = 0.9 * state["velocity"] - 0.1 * g
        return w + state["velocity"]
    expected = expected_steps(update, {"velocity": np.zeros(2)})
    assert_steps(run_steps(optimizers.SGD(0.1, momentum=0.9)), expected)
    # The second step by hand: velocity 0.9 * (-0.05, 0.1) - (0.01, 0.02) = (-0.055, 0.07).
    np.testing.assert_allclose(expected[1], [1.0 - 0.05 - 0.055, 2.0 + 0.1 + 0.07])


def test_sgd_nesterov():
    def update(w, g, state, t):
        state["velocity"] = 0.9 * state["velocity"] - 0.1 * g
        return w + 0.9 * state["velocity"] - 0.1 * g
    assert_steps(run_steps(optimizers.SGD(0.1, momentum=0.9, nesterov=True)),
                 expected_steps(update, {"velocity": np.zeros(2)}))


def test_adam():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-7

    def update(w, g, state, t):
        state["m"] = b1 * state["m"] + (1 - b1) * g
        state["v"] = b2 * state["v"] + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - lr_t * state["m"] / (np.sqrt(state["v"]) + eps)
    expected = expected_steps(update, {"m": np.zeros(2), "v": np.zeros(2)})
    assert_steps(run_steps(optimizers.Adam(learning_rate=lr)), expected)
    # The first Adam step moves each coordinate by about lr, against its gradient's sign.
    np.testing.assert_allclose(expected[0], START - lr * np.sign(GRADIENTS[0]), rtol=1e-5)


@pytest.mark.parametrize("momentum", [0.0, 0.5])
@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop(momentum, centered):
    lr, rho, eps = 0.01, 0.9, 1e-7

    def update(w, g, state, t):
        state["rms"] = rho * state["rms"] + (1 - rho) * g ** 2
        denominator = state["rms"]
        if centered:
            state["mg"] = rho * state["mg"] + (1 - rho) * g
            denominator = state["rms"] - state["mg"] ** 2
        if momentum:
            state["mom"] = momentum * state["mom"] + lr * g / np.sqrt(denominator + eps)
            return w - state["mom"]
        return w - lr * g / (np.sqrt(denominator) + eps)
    state = {"rms": np.zeros(2), "mg": np.zeros(2), "mom": np.zeros(2)}
    optimizer = optimizers.RMSprop(lr, rho=rho, momentum=momentum, centered=centered)
    assert_steps(run_steps(optimizer), expected_steps(update, state))
    expected_slots = ["rms"] + ["momentum"] * bool(momentum) + ["mg"] * centered
    assert list(optimizer.slots["w"]) == expected_slots


def test_rmsprop_alias():
    assert optimizers.RMSProp is optimizers.RMSprop


def test_adagrad():
    def update(w, g, state, t):
        state["accumulator"] = state["accumulator"] + g * g
        return w - 0.1 * g / (np.sqrt(state["accumulator"]) + 1e-7)
    assert_steps(run_steps(optimizers.Adagrad(0.1, initial_accumulator_value=0.1)),
                 expected_steps(update, {"accumulator": np.full(2, 0.1)}))


def test_defaults_are_keras_defaults():
    assert optimizers.SGD().get_config() == {"name": "SGD", "learning_rate": 0.01,
                                             "momentum": 0.0, "nesterov": False}
    assert optimizers.Adam().get_config() == {"name": "Adam", "learning_rate": 0.001,
                                              "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
    assert optimizers.RMSprop().get_config() == {
        "name": "RMSprop", "learning_rate": 0.001, "rho": 0.9, "momentum": 0.0,
        "epsilon": 1e-7, "centered": False}
    assert optimizers.Adagrad().get_config() == {
        "name": "Adagrad", "learning_rate": 0.001, "initial_accumulator_value": 0.1,
        "epsilon": 1e-7}
    again = optimizers.Adam.from_config(optimizers.Adam(0.5, beta_1=0.8).get_config())
    assert (again.get_config()["learning_rate"], again.beta_1) == (0.5, 0.8)


# --- counter, learning rate, slots ---------------------------------------------------------------

def test_step_counter_and_schedule():
    steps_seen = []

    def schedule(step):
        steps_seen.append(int(step))
        return 0.1 * 0.5 ** step
    optimizer = optimizers.SGD(learning_rate=schedule)
    assert optimizer.iterations.dtype == np.int64 and not optimizer.iterations.trainable
    values = run_steps(optimizer)
    assert steps_seen == [0, 1, 2] and int(optimizer.iterations) == 3
    np.testing.assert_allclose(values[2], START - 0.1 * GRADIENTS[0] - 0.05 * GRADIENTS[1]
                               - 0.025 * GRADIENTS[2])


def test_learning_rate_is_a_variable():
    optimizer = optimizers.SGD(learning_rate=0.5)
    w = Variable([1.0])
    optimizer.apply_gradients([(np.array([1.0]), w)])
    optimizer.learning_rate.assign(0.25)
    optimizer.apply_gradients([(np.array([1.0]), w)])
    assert w.numpy().tolist() == [0.25]


def test_slots_are_made_on_first_apply_from_shapes_under_stable_paths():
    optimizer = optimizers.Adam()
    first = Variable(np.ones((2, 3), np.float32), name="dense/kernel")
    second = Variable(np.ones(3), name="dense/kernel")  # the same name: made unique
    assert [path for path, _ in tracked_variables(optimizer, "optimizer")] == [
        "optimizer/iterations", "optimizer/learning_rate"]
    optimizer.apply_gradients([(np.ones(3), second), (np.ones((2, 3)), first)])
    optimizer.apply_gradients([(np.ones((2, 3)), first), (np.ones(3), second)])
    assert [path for path, _ in tracked_variables(optimizer, "optimizer")] == [
        "optimizer/iterations", "optimizer/learning_rate",
        "optimizer/slots/dense/kernel/m", "optimizer/slots/dense/kernel/v",
        "optimizer/slots/dense/kernel_1/m", "optimizer/slots/dense/kernel_1/v"]
    m = optimizer.get_slot(first, "m")
    assert m is optimizer.slots["dense/kernel_1"]["m"]
    assert (m.shape, m.dtype, m.trainable) == ((2, 3), np.float32, False)
    assert first.dtype == np.float32
    np.testing.assert_allclose(m.numpy(), 0.1 * 0.9 + 0.1, rtol=1e-6)
    with pytest.raises(KeyError, match="Adam has no slot 'momentum' for Variable"):
        optimizer.get_slot(first, "momentum")


def test_none_gradients_are_skipped():
    optimizer = optimizers.SGD(0.1, momentum=0.9)
    w, b = Variable([1.0], name="w"), Variable([2.0], name="b")
    optimizer.apply_gradients([(None, b), (np.array([1.0]), w)])
    assert (w.numpy().tolist(), b.numpy().tolist()) == ([0.9], [2.0])
    assert list(optimizer.slots) == ["w"]
    with pytest.raises(ValueError) as error:
        optimizer.apply_gradients([(None, w), (None, b)])
    assert str(error.value) == ("SGD.apply_gradients: no gradients to apply (None for every "
                                "variable: ['w', 'b']); does the loss depend on them?")


def test_gradient_of_another_shape_is_an_error():
    optimizer = optimizers.Adam()
    w = Variable(np.zeros((2, 3)), name="dense/kernel")
    with pytest.raises(ValueError) as error:
        optimizer.apply_gradients([(np.ones((3, 2)), w)])
    assert str(error.value) == (
        "Adam.apply_gradients: the gradient of Variable 'dense/kernel' has shape (3, 2), but "
        "the Variable has shape (2, 3)")
    assert int(optimizer.iterations) == 0 and not optimizer.slots


REFUSED_GRADIENTS = {
    "complex": (np.array([1j, 2j]), TypeError,
                "SGD.apply_gradients: the gradient of Variable 'b' is complex128, but the "
                "Variable is float64: a real Variable takes a real gradient (its real part, "
                "np.real(gradient), if the imaginary part is meant to go)"),
    "strings": (np.array(["a", "b"]), TypeError,
                "SGD.apply_gradients: the gradient of Variable 'b' has dtype <U1, not a "
                "number's; a gradient holds numbers of the Variable's dtype (float64)"),
}


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("kind", REFUSED_GRADIENTS)
def test_a_refused_gradient_leaves_the_whole_step_unapplied(kind, traced):
    gradient, error, message = REFUSED_GRADIENTS[kind]
    w, b = Variable(np.ones(3), name="w"), Variable(np.zeros(2), name="b")
    optimizer = optimizers.SGD(0.1, momentum=0.9)

    def step(gradient_w, gradient_b):
        optimizer.apply_gradients([(gradient_w, w), (gradient_b, b)])
    step = autotrace.function(step) if traced else step
    with pytest.raises(error) as raised:
        step(np.ones(3), gradient)
    assert str(raised.value).splitlines()[0] == message  # (traced: the user's line follows)
    assert w.numpy().tolist() == [1.0, 1.0, 1.0] and b.numpy().tolist() == [0.0, 0.0]
    assert int(optimizer.iterations) == 0 and not optimizer.slots
    step(np.ones(3), np.ones(2))  # the retry is the first step: velocity = -0.1 * gradient
    np.testing.assert_allclose(w.numpy(), 1.0 - 0.1 * 1.0, rtol=1e-15)
    np.testing.assert_allclose(b.numpy(), 0.0 - 0.1 * 1.0, rtol=1e-15)
    np.testing.assert_allclose(optimizer.get_slot(w, "momentum").numpy(), [-0.1] * 3)
    assert int(optimizer.iterations) == 1


@pytest.mark.parametrize("wrapped", [False, True], ids=["nadam", "loss_scaled"])
def test_nadam_keeps_its_momentum_product_when_a_step_is_refused(wrapped):
    nadam = optimizers.Nadam(0.1)
    optimizer = optimizers.LossScaleOptimizer(nadam) if wrapped else nadam
    v = Variable(np.ones(3), name="v")
    with pytest.raises(TypeError, match=r"^Nadam.apply_gradients: the gradient of Variable "
                                        r"'v' has dtype <U1, not a number's"):
        optimizer.apply_gradients([(np.array(["a", "b", "c"]), v)])
    assert float(nadam.u_product) == 1.0 and int(nadam.iterations) == 0 and not nadam.slots
    with pytest.raises(TypeError, match=re.escape(
            "Nadam.apply_gradients: the gradient of Variable 'n' is float64, which does not "
            "cast safely to the Variable's int64; cast it first")):
        nadam.apply_gradients([(np.ones(3), v), (np.ones(2), Variable([1, 2], name="n"))])
    assert v.numpy().tolist() == [1.0, 1.0, 1.0] and float(nadam.u_product) == 1.0
    optimizer.apply_gradients([(np.ones(3), v)])
    assert float(nadam.u_product) == pytest.approx(0.9 * (1 - 0.5 * 0.96))  # u_1, once


def test_apply_gradients_takes_pairs_only():
    with pytest.raises(TypeError, match=r"SGD.apply_gradients: item 0 is not a \(gradient, "
                                        r"Variable\) pair"):
        optimizers.SGD().apply_gradients([np.ones(2)])


# --- minimize ------------------------------------------------------------------------------------

def test_minimize_with_and_without_var_list(monkeypatch):
    w, b = Variable([3.0], name="w"), Variable([1.0], name="b")

    def implicit_value_and_grad(loss_fn):  # what autotrace's returns, for w * w + b
        return lambda: (loss_fn(), [(2 * w.numpy(), w), (np.ones(1), b)])
    monkeypatch.setattr(autotrace, "implicit_value_and_grad", implicit_value_and_grad,
                        raising=False)
    optimizer = optimizers.SGD(0.25)
    loss = optimizer.minimize(lambda: np.sum(w * w + b))
    assert loss == 10.0 and (w.numpy().tolist(), b.numpy().tolist()) == ([1.5], [0.75])
    optimizer.minimize(lambda: np.sum(w * w + b), var_list=[b])
    assert (w.numpy().tolist(), b.numpy().tolist()) == ([1.5], [0.5])
    assert int(optimizer.iterations) == 2


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_minimize_with_implicit_gradients(traced):
    w = Variable(np.array([3.0, -1.0]), name="w")
    optimizer = optimizers.SGD(0.25)

    def step(x):
        return optimizer.minimize(lambda: np.sum((w * x) ** 2))
    step = autotrace.function(step) if traced else step
    assert float(step(np.ones(2))) == 10.0 and w.numpy().tolist() == [1.5, -0.5]
    assert float(step(np.ones(2))) == 2.5 and w.numpy().tolist() == [0.75, -0.25]


# --- inside autotrace.function -------------------------------------------------------------------

OPTIMIZERS = {
    "sgd": lambda: optimizers.SGD(0.1),
    "nesterov": lambda: optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: optimizers.Adam(0.1),
    "rmsprop": lambda: optimizers.RMSprop(0.1, momentum=0.5, centered=True),
    "adagrad": lambda: optimizers.Adagrad(0.1),
    "schedule": lambda: optimizers.Adam(lambda step: 0.1 / (1.0 + step)),
    "adamw": lambda: optimizers.AdamW(0.1, weight_decay=0.5),
    "nadam": lambda: optimizers.Nadam(0.1),
    "clipped_scheduled": lambda: optimizers.SGD(
        optimizers.schedules.CosineDecay(0.0, 2, warmup_target=0.2, warmup_steps=1),
        momentum=0.9, global_clipnorm=1.0),
    "clipnorm_decay": lambda: optimizers.Nadam(0.1, clipnorm=0.5, weight_decay=0.1),
    "clipvalue": lambda: optimizers.RMSprop(0.1, clipvalue=0.5),
}


@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_traced_step_matches_eager(make):
    traced_optimizer, w = make(), Variable(START, name="w")

    @autotrace.function
    def step(gradient):
        traced_optimizer.apply_gradients([(gradient, w)])

    traced = []
    for gradient in GRADIENTS:
        step(gradient)
        traced.append(w.numpy())
    assert step.trace_count == 1
    assert int(traced_optimizer.iterations) == 3
    assert_steps(traced, run_steps(make()))


def test_traced_step_reads_the_learning_rate_on_every_call():
    optimizer, w = optimizers.SGD(0.5), Variable([1.0, 1.0])

    @autotrace.function
    def step(gradient):
        optimizer.apply_gradients([(gradient, w)])

    step(np.ones(2))
    optimizer.learning_rate.assign(0.0)
    step(np.ones(2))
    assert w.numpy().tolist() == [0.5, 0.5] and step.trace_count == 1


def test_setting_the_learning_rate_assigns_its_variable():
    # As Keras's `optimizer.learning_rate = 1.0`: the Variable is assigned, not replaced, so a
    # cached traced step reads the new rate and checkpoints still save it.
    optimizer, w = optimizers.SGD(0.1), Variable([0.0])
    rate = optimizer.learning_rate

    @autotrace.function
    def step(gradient):
        optimizer.apply_gradients([(gradient, w)])

    step(np.ones(1))                      # w = 0 - 0.1 * 1
    optimizer.learning_rate = 1.0
    step(np.ones(1))                      # w = -0.1 - 1.0 * 1
    np.testing.assert_allclose(w.numpy(), [-1.1], rtol=1e-15)
    assert step.trace_count == 1 and optimizer.learning_rate is rate
    assert float(rate) == 1.0 and rate.dtype == np.float64
    assert [v.name for v in optimizer.variables] == ["SGD/iterations", "SGD/learning_rate"]
    optimizer.learning_rate = 2                  # an int: cast to the rate's float64
    assert optimizer.get_config()["learning_rate"] == 2.0
    scaled = autotrace.mixed_precision.LossScaleOptimizer(optimizer)
    scaled.learning_rate = 0.5
    assert float(rate) == 0.5
    for bad in (None, "0.1", [0.1, 0.2]):  # (None was assigned: the rate became NaN)
        with pytest.raises(TypeError) as raised:
            optimizer.learning_rate = bad
        assert str(raised.value) == (f"SGD: the learning rate must be a number (or a 0-d array "
                                     f"or Variable), not {bad!r}")
    assert float(rate) == 0.5


def test_a_schedule_and_a_number_do_not_replace_each_other():
    schedule = optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    scheduled = optimizers.SGD(schedule)
    with pytest.raises(TypeError) as raised:
        scheduled.learning_rate = 0.01
    assert str(raised.value) == (
        "SGD: the learning rate is a schedule, so it cannot be set; make the optimizer with a "
        "number as learning_rate to change the rate as it trains")
    assert scheduled.learning_rate is schedule
    constant = optimizers.SGD(0.1)
    with pytest.raises(TypeError) as raised:
        constant.learning_rate = schedule
    assert str(raised.value) == (
        f"SGD: cannot set the learning rate to a schedule ({schedule!r}): it is a Variable, "
        f"which traced steps and checkpoints read; make a new optimizer with the schedule as "
        f"learning_rate, or assign a number")
    assert float(constant.learning_rate) == 0.1


# --- AdamW, Nadam --------------------------------------------------------------------------------

def adam_update(lr, b1=0.9, b2=0.999, eps=1e-7):
    def update(w, g, state, t):
        state["m"] = b1 * state["m"] + (1 - b1) * g
        state["v"] = b2 * state["v"] + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - lr_t * state["m"] / (np.sqrt(state["v"]) + eps)
    return update


def test_adamw_decays_the_variable_before_adams_step():
    lr, wd = 0.1, 0.05
    adam = adam_update(lr)

    def update(w, g, state, t):
        return adam(w - w * wd * lr, g, state, t)
    expected = expected_steps(update, {"m": np.zeros(2), "v": np.zeros(2)})
    assert_steps(run_steps(optimizers.AdamW(learning_rate=lr, weight_decay=wd)), expected)
    # The first step: (1, 2) shrunk by 0.5%, then Adam's step of about lr against the gradient.
    np.testing.assert_allclose(expected[0], START * 0.995 - lr * np.sign(GRADIENTS[0]),
                               rtol=1e-5)


def test_adamw_decays_with_the_scheduled_rate_and_skips_excluded_variables():
    def schedule(step):
        return 0.1 * 0.5 ** step
    optimizer = optimizers.AdamW(learning_rate=schedule, weight_decay=0.2)
    w, bias, scale = (Variable(START, name="dense/kernel"), Variable(START, name="dense/bias"),
                      Variable(START, name="norm/gamma"))
    optimizer.exclude_from_weight_decay(var_list=[scale], var_names=["bias$"])
    adam_w, adam_free = {"m": np.zeros(2), "v": np.zeros(2)}, {"m": np.zeros(2), "v": np.zeros(2)}
    expected_w, expected_free = START.copy(), START.copy()
    for t, g in enumerate(GRADIENTS, start=1):
        lr = 0.1 * 0.5 ** (t - 1)
        expected_w = adam_update(lr)(expected_w - expected_w * 0.2 * lr, g, adam_w, t)
        expected_free = adam_update(lr)(expected_free, g, adam_free, t)
        optimizer.apply_gradients([(g, w), (g, bias), (g, scale)])
        np.testing.assert_allclose(w.numpy(), expected_w, rtol=1e-12, err_msg=f"step {t}")
        np.testing.assert_allclose(bias.numpy(), expected_free, rtol=1e-12)
        np.testing.assert_allclose(scale.numpy(), expected_free, rtol=1e-12)


def test_nadam():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-7

    def update(w, g, state, t):
        u_t, u_next = b1 * (1 - 0.5 * 0.96 ** t), b1 * (1 - 0.5 * 0.96 ** (t + 1))
        state["u_product"] = state["u_product"] * u_t
        state["m"] = b1 * state["m"] + (1 - b1) * g
        state["v"] = b2 * state["v"] + (1 - b2) * g * g
        m_hat = (u_next * state["m"] / (1 - state["u_product"] * u_next)
                 + (1 - u_t) * g / (1 - state["u_product"]))
        v_hat = state["v"] / (1 - b2 ** t)
        return w - lr * m_hat / (np.sqrt(v_hat) + eps)
    state = {"m": np.zeros(2), "v": np.zeros(2), "u_product": 1.0}
    expected = expected_steps(update, state)
    optimizer = optimizers.Nadam(learning_rate=lr)
    assert_steps(run_steps(optimizer), expected)
    # By hand: u_1 = 0.9 * 0.52 = 0.468, u_2 = 0.9 * (1 - 0.5 * 0.9216) = 0.48528, and at
    # t = 1, m = 0.1 g, v_hat = g^2, so the step is lr * (0.048528 / (1 - 0.468 * 0.48528) + 1)
    # against the gradient's sign.
    np.testing.assert_allclose(
        expected[0], START - lr * (0.048528 / (1 - 0.468 * 0.48528) + 1) * np.sign(GRADIENTS[0]),
        rtol=1e-6)
    np.testing.assert_allclose(float(optimizer.u_product.numpy()), state["u_product"],
                               rtol=1e-15)


def test_new_defaults_are_keras_defaults():
    assert optimizers.AdamW().get_config() == {
        "name": "AdamW", "learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999,
        "epsilon": 1e-7, "weight_decay": 0.004}
    assert optimizers.Nadam().get_config() == {
        "name": "Nadam", "learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999,
        "epsilon": 1e-7}
    config = optimizers.SGD(0.1, clipnorm=2, weight_decay=0.01).get_config()
    assert config == {"name": "SGD", "learning_rate": 0.1, "momentum": 0.0, "nesterov": False,
                      "clipnorm": 2.0, "weight_decay": 0.01}
    again = optimizers.AdamW.from_config(optimizers.AdamW(global_clipnorm=1.5).get_config())
    assert (again.global_clipnorm, again.weight_decay, again.clipnorm) == (1.5, 0.004, None)


# --- clipping and schedules in a step ------------------------------------------------------------

def test_clipped_and_scheduled_sgd_matches_the_formula_by_hand():
    schedule = optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    optimizer = optimizers.SGD(schedule, momentum=0.9, global_clipnorm=1.0)
    w, b = Variable(START, name="w"), Variable([0.5], name="b")
    b_gradients = [np.array([1.0]), np.array([0.0]), np.array([-1.0])]
    velocity_w, velocity_b = np.zeros(2), np.zeros(1)
    expected_w, expected_b = START.copy(), np.array([0.5])
    for t, (g_w, g_b) in enumerate(zip(GRADIENTS, b_gradients), start=1):
        norm = np.sqrt(np.sum(g_w ** 2) + np.sum(g_b ** 2))
        scale = 1.0 / max(norm, 1.0)
        lr = 0.1 * 0.5 ** (t - 1)
        velocity_w = 0.9 * velocity_w - lr * g_w * scale
        velocity_b = 0.9 * velocity_b - lr * g_b * scale
        expected_w, expected_b = expected_w + velocity_w, expected_b + velocity_b
        optimizer.apply_gradients([(g_w, w), (g_b, b)])
        np.testing.assert_allclose(w.numpy(), expected_w, rtol=1e-14, err_msg=f"step {t}")
        np.testing.assert_allclose(b.numpy(), expected_b, rtol=1e-14, err_msg=f"step {t}")
        if t == 1:  # by hand: norm sqrt(0.25 + 1 + 1) = 1.5, so w moves by -0.1 (0.5, -1) / 1.5
            np.testing.assert_allclose(w.numpy(), [1.0 - 0.05 / 1.5, 2.0 + 0.1 / 1.5])


@pytest.mark.parametrize("option", ["clipnorm", "clipvalue"])
def test_clipnorm_and_clipvalue_clip_each_gradient(option):
    optimizer = optimizers.SGD(0.1, **{option: 0.5})
    w, b = Variable(START, name="w"), Variable([0.5], name="b")
    expected_w, expected_b = START.copy(), np.array([0.5])
    for g_w, g_b in zip(GRADIENTS, [np.array([0.25]), np.array([-3.0]), np.array([1.0])]):
        if option == "clipnorm":
            clipped = [g * 0.5 / max(np.sqrt(np.sum(g * g)), 0.5) for g in (g_w, g_b)]
        else:
            clipped = [np.minimum(np.maximum(g, -0.5), 0.5) for g in (g_w, g_b)]
        expected_w, expected_b = expected_w - 0.1 * clipped[0], expected_b - 0.1 * clipped[1]
        optimizer.apply_gradients([(g_w, w), (g_b, b)])
        np.testing.assert_allclose(w.numpy(), expected_w, rtol=1e-14)
        np.testing.assert_allclose(b.numpy(), expected_b, rtol=1e-14)
    # b's gradients 0.25, -3 and 1 clip to 0.25, -0.5 and 0.5 either way.
    np.testing.assert_allclose(b.numpy(), [0.5 - 0.1 * (0.25 - 0.5 + 0.5)], rtol=1e-15)


def test_clipping_options_are_checked():
    with pytest.raises(ValueError) as error:
        optimizers.Adam(clipnorm=1.0, clipvalue=0.5)
    assert str(error.value) == ("Adam: only one of clipnorm, global_clipnorm and clipvalue can "
                                "be set; got {'clipnorm': 1.0, 'clipvalue': 0.5}")
    with pytest.raises(ValueError, match=r"^SGD: global_clipnorm must be a number >= 0 or "
                                         r"None, not -1$"):
        optimizers.SGD(global_clipnorm=-1)
    with pytest.raises(ValueError, match="AdamW: weight_decay must be a number >= 0, not None"):
        optimizers.AdamW(weight_decay=None)


@pytest.mark.parametrize("make", [
    lambda: optimizers.AdamW(0.1, global_clipnorm=0.5),
    lambda: optimizers.Nadam(0.1, clipnorm=0.5),
    lambda: optimizers.RMSprop(0.1, momentum=0.5, clipvalue=0.5),
    lambda: optimizers.SGD(optimizers.schedules.ExponentialDecay(0.1, 1, 0.5), momentum=0.5,
                           weight_decay=0.1),
], ids=["adamw", "nadam", "rmsprop", "sgd_schedule_decay"])
def test_float32_stays_float32(make):
    optimizer, w = make(), Variable(START.astype(np.float32), name="w")
    for gradient in GRADIENTS:
        optimizer.apply_gradients([(gradient.astype(np.float32), w)])
    assert w.dtype == np.float32 and w.numpy().dtype == np.float32
    assert all(slot.dtype == np.float32 for slot in optimizer.slots["w"].values())
    reference = make()
    expected = run_steps(reference)[-1]
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)


# --- checkpoints ---------------------------------------------------------------------------------

@pytest.mark.parametrize("make, state", [
    (lambda: optimizers.AdamW(0.1, weight_decay=0.1), []),
    (lambda: optimizers.Nadam(0.1), ["optimizer/u_product"]),
], ids=["adamw", "nadam"])
def test_checkpoint_restores_the_state_and_training_continues_the_same(tmp_path, make, state):
    optimizer, w = make(), Variable(START, name="w")
    checkpoint = Checkpoint(w=w, optimizer=optimizer)
    for gradient in GRADIENTS[:2]:
        optimizer.apply_gradients([(gradient, w)])
    path = checkpoint.save(tmp_path / "ckpt")
    optimizer.apply_gradients([(GRADIENTS[2], w)])
    after_three = [variable.numpy() for variable in [w] + optimizer.variables]
    for gradient in GRADIENTS:
        optimizer.apply_gradients([(gradient, w)])
    checkpoint.restore(path).assert_consumed()
    assert int(optimizer.iterations) == 2
    optimizer.apply_gradients([(GRADIENTS[2], w)])
    for variable, expected in zip([w] + optimizer.variables, after_three):
        np.testing.assert_array_equal(variable.numpy(), expected, err_msg=variable.name)
    index = json.loads((tmp_path / "ckpt-1.index.json").read_text())
    assert list(index["variables"]) == ["w", "optimizer/iterations", "optimizer/learning_rate",
                                        "optimizer/slots/w/m", "optimizer/slots/w/v", *state]
