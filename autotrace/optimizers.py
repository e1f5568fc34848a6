"""Optimizers: SGD (with momentum and Nesterov), Adam, AdamW, Nadam, RMSprop and Adagrad, with
Keras's update formulas and argument names, gradient clipping (`clipnorm`, `global_clipnorm`,
`clipvalue`), decoupled weight decay (`weight_decay`) and learning-rate schedules
(`autotrace.optimizers.schedules`).

    optimizer = autotrace.optimizers.Adam(learning_rate=0.01)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    optimizer.minimize(lambda: loss(model(x), y))        # gradients of the Variables it reads

An optimizer's state is Variables: `iterations` (the number of steps applied), the learning
rate (when it is a number), and per variable its slots (Adam's `m` and `v`, momentum's
`momentum`, ...), made the first time the variable gets a gradient. Slots are kept in the
`slots` dict under the variable's name (made unique, in the order variables were first
seen). `autotrace.Checkpoint` saves them under the path of their variable in the same
checkpoint (`optimizer/slots/model/layers/0/kernel/m`), which does not depend on the order in
which a process made its layers; a slot of a variable the checkpoint does not hold is saved
under its name (`optimizer/slots/dense_1/kernel/m`).

Updates are Variable assigns of NumPy expressions and nothing else, so an optimizer step runs
the same eagerly and inside `autotrace.function`: there the slots and counters are graph
inputs and outputs, and a cached step updates them on every call. Slots may be made during a
traced function's first trace only (as any Variable), so the variables a traced step updates
must all get a gradient in that first trace.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

import numpy as np

from autotrace import schedules, tracking
from autotrace.clipping import clip_by_global_norm, clip_by_norm
from autotrace.placement import device
from autotrace.implicit import implicit_value_and_grad
from autotrace.variables import Variable

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Nadam", "RMSprop", "RMSProp", "Adagrad",
           "schedules"]

CLIPPING_OPTIONS = ("clipnorm", "global_clipnorm", "clipvalue")


class Optimizer:
    """The base of the optimizers: the step counter, the learning rate, slots per variable,
    and `apply_gradients`/`minimize`. A subclass names its slots in `_slot_names(self)` and
    updates one variable in `_update(variable, gradient, slots, learning_rate, step)`.

    Arguments:
        learning_rate: a number (kept in a Variable, so that `optimizer.learning_rate.assign`
            changes it, also for traced steps), or a schedule: a function of the step (the
            number of steps applied before this one, an int64 array) returning the rate, such
            as those of `autotrace.optimizers.schedules`.
        name: the optimizer's name, which starts its Variables' names.
        clipnorm: if set, each gradient is clipped to this L2 norm (`clip_by_norm`).
        global_clipnorm: if set, the gradients of a step are clipped together to this global
            norm (`clip_by_global_norm`).
        clipvalue: if set, each gradient element is clipped to [-clipvalue, clipvalue].
        weight_decay: if set, each variable first decays by itself times weight_decay times
            the learning rate (decoupled weight decay, as in AdamW); see
            `exclude_from_weight_decay`.

    At most one of clipnorm, global_clipnorm and clipvalue may be set (as in Keras). Every
    optimizer takes these four as keyword arguments.
    """

    _untracked_attributes = ("_slot_keys", "_decay_excluded")

    def __init__(self, learning_rate, name: str, *, clipnorm=None, global_clipnorm=None,
                 clipvalue=None, weight_decay=None):
        clipping = {"clipnorm": clipnorm, "global_clipnorm": global_clipnorm,
                    "clipvalue": clipvalue}
        given = {option: value for option, value in clipping.items() if value is not None}
        if len(given) > 1:
            raise ValueError(f"{name}: only one of clipnorm, global_clipnorm and clipvalue can "
                             f"be set; got {given}")
        for option, value in {**given, "weight_decay": weight_decay}.items():
            if value is not None and not (isinstance(value, (int, float)) and value >= 0):
                raise ValueError(f"{name}: {option} must be a number >= 0 or None, not "
                                 f"{value!r}")
        self.clipnorm, self.global_clipnorm, self.clipvalue = (
            None if value is None else float(value) for value in clipping.values())
        self.weight_decay = None if weight_decay is None else float(weight_decay)
        self._decay_excluded = ([], [])  # (variable refs, name patterns)
        self.name = name
        self.iterations = Variable(np.int64(0), name=f"{name}/iterations", trainable=False)
        if callable(learning_rate):
            self.learning_rate = learning_rate
        else:
            self.learning_rate = Variable(float(learning_rate), name=f"{name}/learning_rate",
                                          trainable=False)
        self.slots: dict = {}  # unique variable name -> {slot name: Variable}
        self._slot_keys: dict = {}  # variable.ref() -> its key in self.slots

    # --- what subclasses define --------------------------------------------------------------
    def _slot_names(self) -> tuple:
        """(slot name, initial value) for each slot a variable gets."""
        return ()

    def _update(self, variable: Variable, gradient, slots: dict, learning_rate, step) -> None:
        raise NotImplementedError

    def _hyperparameters(self) -> dict:
        return {}

    def _prepare_step(self, step) -> None:
        """Update optimizer-wide state once per step, before the variables' updates."""

    # --- applying gradients ------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars: Iterable) -> Variable:
        """Update each variable from its gradient, and count one step.

        Arguments:
            grads_and_vars: (gradient, Variable) pairs; pairs whose gradient is None are
                skipped. A gradient must have its Variable's shape.
        Returns:
            `iterations`, the step counter, after this step.
        Raises:
            ValueError: a gradient's shape differs from its Variable's, or every gradient is
                None (the loss does not depend on the variables).

        Example:
            >>> w = autotrace.Variable([1.0, 2.0])
            >>> steps = SGD(learning_rate=0.5).apply_gradients([(np.array([1.0, 1.0]), w)])
            >>> w.numpy(), int(steps)
            (array([0.5, 1.5]), 1)
        """
        pairs = self._checked_pairs(grads_and_vars)
        self._follow_device(pairs)
        step = self.iterations.value()
        learning_rate = self.learning_rate
        learning_rate = (learning_rate.value() if isinstance(learning_rate, Variable) else
                         learning_rate(step) if callable(learning_rate) else learning_rate)
        pairs = self._clipped(pairs)
        if self.weight_decay:
            # Keras's order: clip the gradients, decay the variables, then update them.
            for _, variable in pairs:
                if self._decays(variable):
                    decay = _cast(self.weight_decay * learning_rate, variable.dtype)
                    variable.assign(variable - variable * decay)
        self._prepare_step(step)
        for gradient, variable in pairs:
            self._update(variable, gradient, self._slots_for(variable), learning_rate, step)
        return self.iterations.assign_add(1)

    def _clipped(self, pairs) -> list:
        """The pairs with their gradients clipped as clipnorm, global_clipnorm or clipvalue
        say."""
        gradients = [gradient for gradient, _ in pairs]
        if self.clipnorm:
            gradients = [clip_by_norm(gradient, self.clipnorm) for gradient in gradients]
        elif self.global_clipnorm:
            gradients, _ = clip_by_global_norm(gradients, self.global_clipnorm)
        elif self.clipvalue:
            gradients = [np.clip(gradient, -self.clipvalue, self.clipvalue)
                         for gradient in gradients]
        return [(gradient, variable) for gradient, (_, variable) in zip(gradients, pairs)]

    def exclude_from_weight_decay(self, var_list=None, var_names=None) -> None:
        """Keep some variables from weight decay (biases and normalization scales, typically).

        Arguments:
            var_list: Variables not to decay.
            var_names: regular expressions; a variable whose name contains a match (as
                `re.search` finds) is not decayed.

        Example:
            >>> optimizer = AdamW(weight_decay=0.01)
            >>> optimizer.exclude_from_weight_decay(var_names=["bias", "gamma"])
        """
        excluded_refs, excluded_names = self._decay_excluded
        excluded_refs.extend(variable.ref() for variable in var_list or ())
        excluded_names.extend(var_names or ())

    def _decays(self, variable: Variable) -> bool:
        excluded_refs, excluded_names = self._decay_excluded
        if variable.ref() in excluded_refs:
            return False
        return not any(re.search(pattern, variable.name) for pattern in excluded_names)

    def minimize(self, loss_fn: Callable, var_list=None):
        """One step down the gradient of `loss_fn()`.

        Arguments:
            loss_fn: a function of no arguments returning the scalar loss.
            var_list: the Variables to update (default: every trainable Variable the loss
                reads, found by `autotrace.implicit_value_and_grad`).
        Returns:
            the loss, computed before the update.

        Example:
            >>> w = autotrace.Variable(3.0)
            >>> SGD(0.25).minimize(lambda: w * w)      # gradient 6: w becomes 1.5
            9.0
        """
        loss, grads_and_vars = implicit_value_and_grad(loss_fn)()
        if var_list is not None:
            wanted = {variable.ref() for variable in var_list}
            grads_and_vars = [(gradient, variable) for gradient, variable in grads_and_vars
                              if variable.ref() in wanted]
        self.apply_gradients(grads_and_vars)
        return loss

    def _checked_pairs(self, grads_and_vars) -> list:
        pairs, skipped = [], []
        for position, pair in enumerate(grads_and_vars):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and
                    isinstance(pair[1], Variable)):
                raise TypeError(f"{self.name}.apply_gradients: item {position} is not a "
                                f"(gradient, Variable) pair: {pair!r}")
            gradient, variable = pair
            if gradient is None:
                skipped.append(variable.name)
                continue
            if isinstance(gradient, Variable):
                gradient = gradient.value()
            if tuple(np.shape(gradient)) != tuple(variable.shape):
                raise ValueError(
                    f"{self.name}.apply_gradients: the gradient of Variable {variable.name!r} "
                    f"has shape {tuple(np.shape(gradient))}, but the Variable has shape "
                    f"{tuple(variable.shape)}")
            pairs.append((gradient, variable))
        if not pairs:
            raise ValueError(f"{self.name}.apply_gradients: no gradients to apply (None for "
                             f"every variable: {skipped}); does the loss depend on them?")
        return pairs

    def _follow_device(self, pairs) -> None:
        """Keep the step counter and the learning rate on the device of the Variables updated
        (an optimizer made outside `autotrace.device("gpu:0")` may update a model made inside
        it): moved once, the first time they are elsewhere. Variables on two devices stay as
        they are, and their update is the error that names both."""
        devices = {variable.device for _, variable in pairs}
        if len(devices) != 1:
            return
        target = devices.pop()
        for state in self._step_state():
            if isinstance(state, Variable) and state.device != target:
                state._move_to(target)

    def _step_state(self) -> tuple:
        """The optimizer-wide state (not per variable): the step counter, the learning rate."""
        return (self.iterations, self.learning_rate)

    # --- slots -------------------------------------------------------------------------------
    def _slots_for(self, variable: Variable) -> dict:
        """The slots of `variable`, made (from its shape and dtype) the first time it is seen."""
        key = self._slot_keys.get(variable.ref())
        if key is not None:
            return self.slots[key]
        key = _unique_key(variable.name, self.slots)
        with device(variable.device):  # a slot is where its Variable is
            slots = {slot: Variable(np.full(variable.shape, initial, variable.dtype),
                                    name=f"{self.name}/{key}/{slot}", trainable=False)
                     for slot, initial in self._slot_names()}
        for slot, slot_variable in slots.items():
            # What Checkpoint names the slot by: f"slots/{key}/{slot}" becomes the path of
            # `variable`, where the checkpoint holds it.
            slot_variable._slot_of = (variable, f"slots/{key}/{slot}", slot)
        self._slot_keys[variable.ref()] = key
        self.slots[key] = slots
        # A checkpoint waiting to restore these slots hears of them here.
        tracking.attribute_set(self, "slots", self.slots)
        return slots

    def get_slot(self, variable: Variable, slot_name: str) -> Variable:
        """The slot `slot_name` (e.g. "m") of `variable`; KeyError if it has none yet."""
        key = self._slot_keys.get(variable.ref())
        if key is None or slot_name not in self.slots[key]:
            raise KeyError(f"{self.name} has no slot {slot_name!r} for Variable "
                           f"{variable.name!r} (slots are made on its first update)")
        return self.slots[key][slot_name]

    @property
    def variables(self) -> list:
        """The optimizer's Variables: iterations, learning rate, slots (checkpoint order)."""
        return list(tracking.iter_variables(self))

    # --- configuration -----------------------------------------------------------------------
    def get_config(self) -> dict:
        """The arguments that make an optimizer like this one (Keras's `get_config`)."""
        learning_rate = self.learning_rate
        if isinstance(learning_rate, Variable):
            learning_rate = float(learning_rate.numpy())
        options = {option: getattr(self, option)
                   for option in CLIPPING_OPTIONS + ("weight_decay",)
                   if getattr(self, option) is not None}
        return {"name": self.name, "learning_rate": learning_rate, **self._hyperparameters(),
                **options}

    @classmethod
    def from_config(cls, config: dict) -> "Optimizer":
        """A new optimizer (with fresh state) from `get_config()`'s result."""
        return cls(**config)

    def __repr__(self) -> str:
        return f"<autotrace.optimizers.{type(self).__name__} {self.name!r}>"


def _unique_key(name: str, taken) -> str:
    key, count = name, 0
    while key in taken:
        count += 1
        key = f"{name}_{count}"
    return key


def _cast(value, dtype):
    """`value` in `dtype` when it is an array (a NumPy scalar, a traced value); Python numbers
    are left alone, since NumPy already computes them in the other operand's dtype."""
    if isinstance(value, (int, float)) or getattr(value, "dtype", dtype) == dtype:
        return value
    return value.astype(dtype)


def _step_number(step):
    """1, 2, ... for the first, second, ... step, as float64 (a traced value while tracing)."""
    return (step + 1).astype(np.float64)


class SGD(Optimizer):
    """Gradient descent, with optional momentum (Keras's formulation).

        velocity = momentum * velocity - learning_rate * gradient
        variable += velocity                                           # momentum
        variable += momentum * velocity - learning_rate * gradient     # nesterov=True
        variable -= learning_rate * gradient                           # momentum == 0

    Arguments:
        learning_rate: a number or a schedule (see `Optimizer`).
        clipnorm, global_clipnorm, clipvalue, weight_decay: keyword arguments, see `Optimizer`.
        momentum: 0 for plain gradient descent; a slot `momentum` per variable otherwise.
        nesterov: use Nesterov momentum.

    Example:
        >>> optimizer = SGD(learning_rate=0.1, momentum=0.9)
        >>> optimizer.apply_gradients([(gradient, w)])
    """

    def __init__(self, learning_rate=0.01, momentum: float = 0.0, nesterov: bool = False,
                 name: str = "SGD", **options):
        if not 0 <= momentum <= 1:
            raise ValueError(f"SGD: momentum must be between 0 and 1, not {momentum!r}")
        super().__init__(learning_rate, name, **options)
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _slot_names(self):
        return (("momentum", 0.0),) if self.momentum else ()

    def _update(self, variable, gradient, slots, learning_rate, step):
        step_size = _cast(learning_rate, variable.dtype) * gradient
        if not self.momentum:
            variable.assign_sub(step_size)
            return
        velocity = slots["momentum"].assign(self.momentum * slots["momentum"] - step_size)
        if self.nesterov:
            variable.assign_add(self.momentum * velocity - step_size)
        else:
            variable.assign_add(velocity)

    def _hyperparameters(self):
        return {"momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    """Adam (Keras's formulation: bias correction folded into the learning rate, and epsilon
    added to sqrt(v), the "epsilon hat" of the paper's section 2).

        m = beta_1 * m + (1 - beta_1) * gradient
        v = beta_2 * v + (1 - beta_2) * gradient ** 2
        lr_t = learning_rate * sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)    # t = 1, 2, ...
        variable -= lr_t * m / (sqrt(v) + epsilon)

    Arguments:
        learning_rate: a number or a schedule (see `Optimizer`).
        clipnorm, global_clipnorm, clipvalue, weight_decay: keyword arguments, see `Optimizer`.
        beta_1, beta_2: decay rates of the first and second moment estimates (slots m, v).
        epsilon: added to sqrt(v) for numerical stability.

    Example:
        >>> optimizer = Adam(learning_rate=1e-3)
        >>> optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    """

    def __init__(self, learning_rate=0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, name: str = "Adam", **options):
        super().__init__(learning_rate, name, **options)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)

    def _slot_names(self):
        return (("m", 0.0), ("v", 0.0))

    def _update(self, variable, gradient, slots, learning_rate, step):
        t = _step_number(step)
        corrected = learning_rate * np.sqrt(1 - self.beta_2 ** t) / (1 - self.beta_1 ** t)
        m = slots["m"].assign(self.beta_1 * slots["m"] + (1 - self.beta_1) * gradient)
        v = slots["v"].assign(self.beta_2 * slots["v"] + (1 - self.beta_2) * gradient ** 2)
        variable.assign_sub(_cast(corrected, variable.dtype) * m / (np.sqrt(v) + self.epsilon))

    def _hyperparameters(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter; Keras's AdamW): each step first
    shrinks every variable by its learning-rate-scaled decay, then takes Adam's step.

        variable -= learning_rate * weight_decay * variable     # not in the gradient, so
        (Adam's update, see `Adam`)                              # not in m and v

    Arguments:
        learning_rate: a number or a schedule (see `Optimizer`); the decay uses the rate of
            the step (the schedule's value), without Adam's bias correction.
        weight_decay: the decay rate (`exclude_from_weight_decay` keeps some variables from
            it).
        beta_1, beta_2, epsilon: as for `Adam`.
        clipnorm, global_clipnorm, clipvalue: keyword arguments, see `Optimizer`.

    Example:
        >>> optimizer = AdamW(learning_rate=1e-3, weight_decay=0.004)
        >>> optimizer.exclude_from_weight_decay(var_names=["bias"])
    """

    def __init__(self, learning_rate=0.001, weight_decay: float = 0.004, beta_1: float = 0.9,
                 beta_2: float = 0.999, epsilon: float = 1e-7, name: str = "AdamW", **options):
        if weight_decay is None:
            raise ValueError("AdamW: weight_decay must be a number >= 0, not None (use Adam "
                             "for no weight decay)")
        super().__init__(learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                         name=name, weight_decay=weight_decay, **options)


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat; Keras's Nadam, with its momentum schedule).

        u_t = beta_1 * (1 - 0.5 * 0.96 ** t)                        # t = 1, 2, ...
        u_product = u_1 * u_2 * ... * u_t                           # kept across steps
        m = beta_1 * m + (1 - beta_1) * gradient
        v = beta_2 * v + (1 - beta_2) * gradient ** 2
        m_hat = u_{t+1} * m / (1 - u_product * u_{t+1}) + (1 - u_t) * gradient / (1 - u_product)
        v_hat = v / (1 - beta_2 ** t)
        variable -= learning_rate * m_hat / (sqrt(v_hat) + epsilon)

    Arguments:
        learning_rate: a number or a schedule (see `Optimizer`).
        beta_1, beta_2: decay rates of the first and second moment estimates (slots m, v).
        epsilon: added to sqrt(v_hat) for numerical stability.
        clipnorm, global_clipnorm, clipvalue, weight_decay: keyword arguments, see `Optimizer`.

    The product of the u_t is the Variable `u_product` (saved by a Checkpoint with the step
    counter).

    Example:
        >>> optimizer = Nadam(learning_rate=1e-3)
    """

    def __init__(self, learning_rate=0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, name: str = "Nadam", **options):
        super().__init__(learning_rate, name, **options)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.u_product = Variable(1.0, name=f"{name}/u_product", trainable=False)

    def _slot_names(self):
        return (("m", 0.0), ("v", 0.0))

    def _step_state(self):
        return super()._step_state() + (self.u_product,)

    def _momentum_schedule(self, t):
        return self.beta_1 * (1.0 - 0.5 * 0.96 ** t)

    def _prepare_step(self, step):
        self.u_product.assign(self.u_product * self._momentum_schedule(_step_number(step)))

    def _update(self, variable, gradient, slots, learning_rate, step):
        t = _step_number(step)
        u_t, u_next = self._momentum_schedule(t), self._momentum_schedule(t + 1)
        u_product = self.u_product.value()
        dtype = variable.dtype
        momentum_weight = _cast(u_next / (1 - u_product * u_next), dtype)
        gradient_weight = _cast((1 - u_t) / (1 - u_product), dtype)
        correction = _cast(1 - self.beta_2 ** t, dtype)
        m = slots["m"].assign(self.beta_1 * slots["m"] + (1 - self.beta_1) * gradient)
        v = slots["v"].assign(self.beta_2 * slots["v"] + (1 - self.beta_2) * gradient ** 2)
        m_hat = momentum_weight * m + gradient_weight * gradient
        variable.assign_sub(_cast(learning_rate, dtype) * m_hat
                            / (np.sqrt(v / correction) + self.epsilon))

    def _hyperparameters(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class RMSprop(Optimizer):
    """RMSprop (Keras's formulation), optionally centered and with momentum.

        rms = rho * rms + (1 - rho) * gradient ** 2
        mg = rho * mg + (1 - rho) * gradient            # centered only
        denominator = rms - mg ** 2 if centered else rms
        variable -= learning_rate * gradient / (sqrt(denominator) + epsilon)   # momentum == 0
        mom = momentum * mom + learning_rate * gradient / sqrt(denominator + epsilon)
        variable -= mom                                                     # momentum > 0

    (As in Keras, epsilon is added outside the square root without momentum, inside it with.)

    Arguments:
        learning_rate: a number or a schedule (see `Optimizer`).
        clipnorm, global_clipnorm, clipvalue, weight_decay: keyword arguments, see `Optimizer`.
        rho: decay rate of the mean square (slot `rms`).
        momentum: 0, or the momentum (slot `momentum`).
        epsilon: for numerical stability.
        centered: divide by an estimate of the variance instead of the mean square (slot
            `mg`, the mean gradient).

    Example:
        >>> optimizer = RMSprop(learning_rate=0.01, centered=True)
    """

    def __init__(self, learning_rate=0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, name: str = "RMSprop",
                 **options):
        super().__init__(learning_rate, name, **options)
        self.rho = float(rho)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)

    def _slot_names(self):
        return (("rms", 0.0),) + ((("momentum", 0.0),) if self.momentum else ()) + (
            (("mg", 0.0),) if self.centered else ())

    def _update(self, variable, gradient, slots, learning_rate, step):
        learning_rate = _cast(learning_rate, variable.dtype)
        rms = slots["rms"].assign(self.rho * slots["rms"] + (1 - self.rho) * gradient ** 2)
        denominator = rms
        if self.centered:
            mg = slots["mg"].assign(self.rho * slots["mg"] + (1 - self.rho) * gradient)
            denominator = rms - mg * mg
        if self.momentum:
            mom = slots["momentum"].assign(
                self.momentum * slots["momentum"]
                + learning_rate * gradient / np.sqrt(denominator + self.epsilon))
            variable.assign_sub(mom)
        else:
            variable.assign_sub(learning_rate * gradient / (np.sqrt(denominator) + self.epsilon))

    def _hyperparameters(self):
        return {"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                "centered": self.centered}


RMSProp = RMSprop


class Adagrad(Optimizer):
    """Adagrad (Keras's formulation).

        accumulator += gradient ** 2              # starts at initial_accumulator_value
        variable -= learning_rate * gradient / (sqrt(accumulator) + epsilon)

    Arguments:
        learning_rate: a number or a schedule (see `Optimizer`).
        clipnorm, global_clipnorm, clipvalue, weight_decay: keyword arguments, see `Optimizer`.
        initial_accumulator_value: the starting value of the slot `accumulator`.
        epsilon: for numerical stability.

    Example:
        >>> optimizer = Adagrad(learning_rate=0.1)
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, name: str = "Adagrad", **options):
        if initial_accumulator_value < 0:
            raise ValueError("Adagrad: initial_accumulator_value must be >= 0, not "
                             f"{initial_accumulator_value!r}")
        super().__init__(learning_rate, name, **options)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)

    def _slot_names(self):
        return (("accumulator", self.initial_accumulator_value),)

    def _update(self, variable, gradient, slots, learning_rate, step):
        accumulator = slots["accumulator"].assign_add(gradient * gradient)
        variable.assign_sub(_cast(learning_rate, variable.dtype) * gradient
                            / (np.sqrt(accumulator) + self.epsilon))

    def _hyperparameters(self):
        return {"initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}
