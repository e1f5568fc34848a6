"""Learning-rate schedules, as Keras's `keras.optimizers.schedules`: callables of the step (the
number of optimizer steps applied before this one) returning the learning rate.

    schedule = autotrace.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1000,
                                                               decay_rate=0.96)
    optimizer = autotrace.optimizers.SGD(learning_rate=schedule)

Any function of the step works as a learning rate; these are NumPy code with no Python branch
on the step, so that a step traced by `autotrace.function` reads the schedule at every call
(the step there is a traced int64 value).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay",
           "PolynomialDecay", "InverseTimeDecay", "CosineDecay"]


def _check_positive(owner: str, **values) -> None:
    for argument, value in values.items():
        if not (isinstance(value, (int, float)) and value > 0):
            raise ValueError(f"{owner}: {argument} must be a number > 0, got {value!r}")


def _as_float(step):
    """The step as float64 (an int, an int64 array or a traced value)."""
    return np.asarray(step, dtype=np.float64) if isinstance(step, (int, float)) else (
        step.astype(np.float64))


class LearningRateSchedule:
    """The base of the schedules: `schedule(step)` is the learning rate at `step`, and
    `get_config()` / `from_config()` give the arguments that make it again."""

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")

    def get_config(self) -> dict:
        return dict(vars(self))

    @classmethod
    def from_config(cls, config: dict) -> "LearningRateSchedule":
        return cls(**config)

    def __repr__(self) -> str:
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({arguments})"


class _StepDecay(LearningRateSchedule):
    """A rate that decays with step / decay_steps (rounded down where `staircase`)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool, name: str):
        _check_positive(name, decay_steps=decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def _progress(self, step):
        progress = _as_float(step) / self.decay_steps
        return np.floor(progress) if self.staircase else progress


class ExponentialDecay(_StepDecay):
    """initial_learning_rate * decay_rate ** (step / decay_steps).

    Arguments:
        initial_learning_rate: the rate at step 0.
        decay_steps: the steps over which the rate is multiplied by decay_rate (> 0).
        decay_rate: the factor per decay_steps steps.
        staircase: if True, step / decay_steps is rounded down (the rate changes every
            decay_steps steps).

    Examples:
        >>> float(ExponentialDecay(1.0, decay_steps=10, decay_rate=0.5)(20))
        0.25
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False, name: str = "ExponentialDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        return self.initial_learning_rate * self.decay_rate ** self._progress(step)


class InverseTimeDecay(_StepDecay):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps).

    Arguments:
        initial_learning_rate: the rate at step 0.
        decay_steps: how often the decay is applied (> 0).
        decay_rate: how fast the rate falls.
        staircase: if True, step / decay_steps is rounded down.

    Examples:
        >>> float(InverseTimeDecay(1.0, decay_steps=1, decay_rate=0.5)(2))
        0.5
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False, name: str = "InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        return self.initial_learning_rate / (1.0 + self.decay_rate * self._progress(step))


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] up to and including step boundaries[0], values[1] after it up to and
    including boundaries[1], ..., values[-1] after the last boundary.

    Arguments:
        boundaries: increasing steps.
        values: the rates, one more than the boundaries.

    Examples:
        >>> schedule = PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
        >>> [float(schedule(step)) for step in (10, 11, 21)]
        [1.0, 0.5, 0.1]
    """

    def __init__(self, boundaries, values, name: str = "PiecewiseConstantDecay"):
        boundaries, values = list(boundaries), list(values)
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"{name}: values must have one more element than boundaries; "
                             f"got {len(values)} values for {len(boundaries)} boundaries")
        if any(later <= earlier for earlier, later in zip(boundaries, boundaries[1:])):
            raise ValueError(f"{name}: boundaries must increase, got {boundaries}")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        step = _as_float(step)
        rate = np.asarray(self.values[-1], dtype=np.float64)
        for boundary, value in reversed(list(zip(self.boundaries, self.values))):
            rate = np.where(step <= boundary, value, rate)
        return rate


class PolynomialDecay(LearningRateSchedule):
    """From initial_learning_rate to end_learning_rate over decay_steps steps along
    (1 - step / decay_steps) ** power, then end_learning_rate:

        (initial_learning_rate - end_learning_rate) * (1 - min(step, decay_steps) / decay_steps)
            ** power + end_learning_rate

    Arguments:
        initial_learning_rate: the rate at step 0.
        decay_steps: the steps to reach end_learning_rate (> 0).
        end_learning_rate: the last rate.
        power: the polynomial's power (1 is linear).
        cycle: if True, start again after decay_steps: decay_steps becomes the first multiple
            of itself at or after the step, so the rate rises at each multiple and decays
            more slowly.

    Examples:
        >>> float(PolynomialDecay(1.0, decay_steps=10, end_learning_rate=0.0)(5))
        0.5
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int,
                 end_learning_rate: float = 0.0001, power: float = 1.0, cycle: bool = False,
                 name: str = "PolynomialDecay"):
        _check_positive(name, decay_steps=decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        step = _as_float(step)
        if self.cycle:
            cycles = np.ceil(step / self.decay_steps)
            decay_steps = self.decay_steps * np.where(step == 0, 1.0, cycles)
        else:
            decay_steps = self.decay_steps
            step = np.minimum(step, decay_steps)
        remaining = 1.0 - step / decay_steps
        return ((self.initial_learning_rate - self.end_learning_rate) * remaining ** self.power
                + self.end_learning_rate)


class CosineDecay(LearningRateSchedule):
    """A cosine decay over decay_steps steps, after an optional linear warmup (Keras 3's
    CosineDecay):

        warmup (step < warmup_steps, when warmup_target is given):
            initial_learning_rate + (warmup_target - initial_learning_rate) * step / warmup_steps
        decay (s = min(step - warmup_steps, decay_steps), from the rate r reached: the
        warmup_target, or initial_learning_rate without warmup):
            r * ((1 - alpha) * 0.5 * (1 + cos(pi * s / decay_steps)) + alpha)

    Arguments:
        initial_learning_rate: the rate at step 0.
        decay_steps: the steps of the decay (> 0).
        alpha: the last rate, as a fraction of the rate decayed from.
        warmup_target: the rate reached at the end of the warmup; None for no warmup.
        warmup_steps: the steps of the warmup (used only with warmup_target).

    Examples:
        >>> float(CosineDecay(1.0, decay_steps=10)(5))
        0.5
        >>> float(CosineDecay(0.0, decay_steps=10, warmup_target=1.0, warmup_steps=4)(2))
        0.5
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0,
                 name: str = "CosineDecay", warmup_target: float | None = None,
                 warmup_steps: int = 0):
        _check_positive(name, decay_steps=decay_steps)
        if warmup_target is not None and warmup_steps:
            _check_positive(name, warmup_steps=warmup_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decayed(self, step, decay_from):
        cosine = 0.5 * (1.0 + np.cos(math.pi * step / self.decay_steps))
        return decay_from * ((1.0 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        step = _as_float(step)
        if self.warmup_target is None:
            return self._decayed(np.minimum(step, self.decay_steps), self.initial_learning_rate)
        warmup_steps = self.warmup_steps
        step = np.minimum(step, self.decay_steps + warmup_steps)
        decayed = self._decayed(step - warmup_steps, self.warmup_target)
        if not warmup_steps:
            return decayed
        warmup = (self.initial_learning_rate + (self.warmup_target - self.initial_learning_rate)
                  * step / warmup_steps)
        return np.where(step < warmup_steps, warmup, decayed)
