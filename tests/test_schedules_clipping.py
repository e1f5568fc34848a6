"""Learning-rate schedules against Keras's formulas written out with `math`, eagerly and read by
a traced step; gradient clipping against norms computed by hand, its None, infinite and float32
cases, and its derivatives against finite differences."""
import doctest
import importlib
import math

import numpy as np
import pytest

import autotrace
from autotrace import optimizers
from autotrace.optimizers import schedules
from autotrace.testing import check_grads

STEPS = [0, 1, 3, 5, 10, 12, 25]


def exponential(step, staircase):
    progress = step // 5 if staircase else step / 5
    return 0.1 * 0.5 ** progress


def inverse_time(step, staircase):
    progress = step // 5 if staircase else step / 5
    return 0.1 / (1 + 0.5 * progress)


def piecewise(step):
    return 1.0 if step <= 3 else 0.5 if step <= 10 else 0.1


def polynomial(step, cycle):
    decay_steps = 10
    if cycle:
        decay_steps = 10 * max(1, math.ceil(step / 10))
    else:
        step = min(step, 10)
    return (0.1 - 0.01) * (1 - step / decay_steps) ** 2 + 0.01


def cosine(step, warmup):
    if warmup:
        if step < 4:
            return 0.0 + (0.2 - 0.0) * step / 4
        step, start = min(step - 4, 10), 0.2
    else:
        step, start = min(step, 10), 0.1
    return start * ((1 - 0.1) * 0.5 * (1 + math.cos(math.pi * step / 10)) + 0.1)


CASES = {
    "exponential": (schedules.ExponentialDecay(0.1, 5, 0.5), lambda s: exponential(s, False)),
    "exponential_staircase": (schedules.ExponentialDecay(0.1, 5, 0.5, staircase=True),
                              lambda s: exponential(s, True)),
    "inverse_time": (schedules.InverseTimeDecay(0.1, 5, 0.5), lambda s: inverse_time(s, False)),
    "inverse_time_staircase": (schedules.InverseTimeDecay(0.1, 5, 0.5, staircase=True),
                               lambda s: inverse_time(s, True)),
    "piecewise": (schedules.PiecewiseConstantDecay([3, 10], [1.0, 0.5, 0.1]), piecewise),
    "polynomial": (schedules.PolynomialDecay(0.1, 10, 0.01, power=2.0),
                   lambda s: polynomial(s, False)),
    "polynomial_cycle": (schedules.PolynomialDecay(0.1, 10, 0.01, power=2.0, cycle=True),
                         lambda s: polynomial(s, True)),
    "cosine": (schedules.CosineDecay(0.1, 10, alpha=0.1), lambda s: cosine(s, False)),
    "cosine_warmup": (schedules.CosineDecay(0.0, 10, alpha=0.1, warmup_target=0.2,
                                            warmup_steps=4), lambda s: cosine(s, True)),
}


@pytest.mark.parametrize("schedule, formula", CASES.values(), ids=CASES.keys())
def test_schedule_matches_the_formula(schedule, formula):
    for step in STEPS:
        np.testing.assert_allclose(schedule(step), formula(step), rtol=1e-14, atol=1e-17,
                                   err_msg=f"step {step}")
        np.testing.assert_allclose(schedule(np.int64(step)), formula(step), rtol=1e-14,
                                   atol=1e-17)


def test_schedules_by_hand():
    assert float(CASES["piecewise"][0](3)) == 1.0 and float(CASES["piecewise"][0](4)) == 0.5
    assert float(schedules.ExponentialDecay(1.0, 2, 0.5, staircase=True)(3)) == 0.5
    assert float(schedules.CosineDecay(1.0, 10)(5)) == pytest.approx(0.5, rel=1e-15)
    warm = schedules.CosineDecay(0.0, 10, warmup_target=1.0, warmup_steps=4)
    assert [float(warm(step)) for step in (0, 2, 4)] == [0.0, 0.5, 1.0]
    assert float(warm(100)) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("name", ["piecewise", "polynomial_cycle", "cosine_warmup"])
def test_a_traced_step_reads_the_schedule_at_every_call(name):
    schedule, formula = CASES[name]
    optimizer, w = optimizers.SGD(schedule), autotrace.Variable(0.0, name="w")

    @autotrace.function
    def step(gradient):
        optimizer.apply_gradients([(gradient, w)])

    expected = 0.0
    for number in range(13):
        step(np.float64(1.0))
        expected -= formula(number)
        np.testing.assert_allclose(w.numpy(), expected, rtol=1e-13, err_msg=f"step {number}")
    assert step.trace_count == 1


def test_schedule_arguments_are_checked():
    with pytest.raises(ValueError, match=r"^ExponentialDecay: decay_steps must be a number > 0, "
                                         r"got 0$"):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match=r"^PiecewiseConstantDecay: values must have one more "
                                         r"element than boundaries; got 2 values for 2 "):
        schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5])
    with pytest.raises(ValueError, match=r"boundaries must increase, got \[2, 1\]"):
        schedules.PiecewiseConstantDecay([2, 1], [1.0, 0.5, 0.1])


def test_schedule_config_round_trip():
    schedule = schedules.CosineDecay(0.1, 10, warmup_target=0.2, warmup_steps=3)
    again = schedules.CosineDecay.from_config(schedule.get_config())
    assert [float(again(step)) for step in STEPS] == [float(schedule(step)) for step in STEPS]
    assert repr(schedules.ExponentialDecay(0.1, 5, 0.5)) == (
        "ExponentialDecay(initial_learning_rate=0.1, decay_steps=5, decay_rate=0.5, "
        "staircase=False, name='ExponentialDecay')")


# --- clipping -----------------------------------------------------------------------------------

def test_clip_by_global_norm_by_hand():
    clipped, norm = autotrace.clip_by_global_norm(
        [np.array([3.0, 0.0]), None, np.array([[4.0]])], 1.0)
    assert float(norm) == 5.0 and clipped[1] is None
    np.testing.assert_allclose(clipped[0], [0.6, 0.0], rtol=1e-15)
    np.testing.assert_allclose(clipped[2], [[0.8]], rtol=1e-15)
    kept, norm = autotrace.clip_by_global_norm([np.array([3.0]), np.array([4.0])], 10.0)
    assert float(norm) == 5.0 and [a.tolist() for a in kept] == [[3.0], [4.0]]
    infinite, norm = autotrace.clip_by_global_norm([np.array([np.inf]), np.array([1.0])], 1.0)
    assert np.isinf(norm) and all(np.isnan(a).all() for a in infinite)


def test_clip_by_norm_by_hand():
    np.testing.assert_allclose(autotrace.clip_by_norm(np.array([3.0, 4.0]), 2.5), [1.5, 2.0])
    rows = autotrace.clip_by_norm(np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]]), 1.0, axes=1)
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]], rtol=1e-15)
    assert float(autotrace.global_norm([np.ones((2, 2)), np.ones(5)])) == 3.0
    with pytest.raises(ValueError, match=r"^clip_by_norm: clip_norm must be a positive number, "
                                         r"got 0$"):
        autotrace.clip_by_norm(np.ones(2), 0)


def test_clipping_keeps_float32():
    clipped, norm = autotrace.clip_by_global_norm([np.ones(4, np.float32)], 1.0)
    assert clipped[0].dtype == np.float32 and norm.dtype == np.float32
    np.testing.assert_allclose(clipped[0], 0.5)
    assert autotrace.clip_by_norm(np.ones(4, np.float32), 1.0).dtype == np.float32


def test_clipping_takes_python_numbers_as_float64_and_refuses_lists():
    # As TensorFlow makes tensors of numbers: 2.0 clipped to norm 1 is 1.0.
    clipped, norm = autotrace.clip_by_global_norm([2.0, None, np.array([0.0], np.float32)], 1.0)
    assert (float(norm), clipped[0].dtype, float(clipped[0]), clipped[1]) == (
        2.0, np.float64, 1.0, None)
    assert float(autotrace.global_norm([3.0, 4])) == 5.0
    assert float(autotrace.clip_by_norm(2.0, 0.5)) == 0.5
    w = autotrace.Variable(1.0)
    for option in ("clipnorm", "global_clipnorm", "clipvalue"):
        autotrace.optimizers.SGD(0.1, **{option: 1.0}).apply_gradients([(2.0, w)])
    assert float(w) == pytest.approx(1.0 - 3 * 0.1, abs=1e-15)
    with pytest.raises(TypeError) as raised:
        autotrace.clip_by_global_norm([np.ones(2), [1.0, 2.0]], 1.0)
    assert str(raised.value) == ("clip_by_global_norm: t_list[1] is a list, not an array; pass "
                                 "np.asarray(...) of it")
    with pytest.raises(TypeError) as raised:
        autotrace.clip_by_norm((3.0, 4.0), 1.0)
    assert str(raised.value) == ("clip_by_norm: argument `t` is a tuple, not an array; pass "
                                 "np.asarray(...) of it")
    with pytest.raises(TypeError) as raised:
        autotrace.clip_by_global_norm(np.array([3.0, 4.0]), 1.0)
    assert str(raised.value) == ("clip_by_global_norm: t_list must be a list or tuple of "
                                 "arrays, got ndarray")
    with pytest.raises(TypeError) as raised:
        autotrace.optimizers.SGD(0.1, global_clipnorm=1.0).apply_gradients([([2.0], w)])
    assert str(raised.value) == ("SGD.apply_gradients: the gradient of Variable 'Variable' is "
                                 "a list, not an array; pass np.asarray(...) of it")
    clipped, _ = autotrace.clip_by_global_norm((g for g in [np.array([3.0]), 4.0]), 1.0)
    np.testing.assert_allclose(np.concatenate([np.ravel(v) for v in clipped]), [0.6, 0.8])


def test_clipping_gradients_match_finite_differences():
    def clipped_sum(a, b):
        clipped, _ = autotrace.clip_by_global_norm([a, b], 1.0)
        return np.sum(clipped[0] * np.array([1.0, -2.0])) + np.sum(clipped[1] ** 2)

    def clipped_rows(a):
        return np.sum(np.sin(autotrace.clip_by_norm(a, 1.0, axes=1)))
    check_grads(clipped_sum, (np.array([0.8, -1.1]), np.array([0.5])), wrt=(0, 1))
    check_grads(clipped_rows, (np.array([[0.8, -1.1], [0.1, 0.2]]),))


@pytest.mark.parametrize("module", ["autotrace.schedules", "autotrace.clipping"])
def test_docstring_examples(module):
    assert doctest.testmod(importlib.import_module(module)).failed == 0
