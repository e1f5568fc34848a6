"""Optimizers: SGD (with momentum and Nesterov), Adam, RMSprop and Adagrad, with Keras's update
formulas and argument names.

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

from typing import Callable, Iterable

import numpy as np

from autotrace import tracking
from autotrace.placement import device
from autotrace.implicit import implicit_value_and_grad
from autotrace.variables import Variable

__all__ = ["Optimizer", "SGD", "Adam", "RMSprop", "RMSProp", "Adagrad"]


class Optimizer:
    """The base of the optimizers: the step counter, the learning rate, slots per variable,
    and `apply_gradients`/`minimize`. A subclass names its slots in `_slot_names(self)` and
    updates one variable in `_update(variable, gradient, slots, learning_rate, step)`.

    Arguments:
        learning_rate: a number (kept in a Variable, so that `optimizer.learning_rate.assign`
            changes it, also for traced steps), or a schedule: a function of the step (the
            number of steps applied before this one, an int64 array) returning the rate.
        name: the optimizer's name, which starts its Variables' names.
    """

    _untracked_attributes = ("_slot_keys",)

    def __init__(self, learning_rate, name: str):
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
        for gradient, variable in pairs:
            self._update(variable, gradient, self._slots_for(variable), learning_rate, step)
        return self.iterations.assign_add(1)

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
        for state in (self.iterations, self.learning_rate):
            if isinstance(state, Variable) and state.device != target:
                state._move_to(target)

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
        return {"name": self.name, "learning_rate": learning_rate, **self._hyperparameters()}

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
        momentum: 0 for plain gradient descent; a slot `momentum` per variable otherwise.
        nesterov: use Nesterov momentum.

    Example:
        >>> optimizer = SGD(learning_rate=0.1, momentum=0.9)
        >>> optimizer.apply_gradients([(gradient, w)])
    """

    def __init__(self, learning_rate=0.01, momentum: float = 0.0, nesterov: bool = False,
                 name: str = "SGD"):
        if not 0 <= momentum <= 1:
            raise ValueError(f"SGD: momentum must be between 0 and 1, not {momentum!r}")
        super().__init__(learning_rate, name)
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
        beta_1, beta_2: decay rates of the first and second moment estimates (slots m, v).
        epsilon: added to sqrt(v) for numerical stability.

    Example:
        >>> optimizer = Adam(learning_rate=1e-3)
        >>> optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    """

    def __init__(self, learning_rate=0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, name: str = "Adam"):
        super().__init__(learning_rate, name)
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
        rho: decay rate of the mean square (slot `rms`).
        momentum: 0, or the momentum (slot `momentum`).
        epsilon: for numerical stability.
        centered: divide by an estimate of the variance instead of the mean square (slot
            `mg`, the mean gradient).

    Example:
        >>> optimizer = RMSprop(learning_rate=0.01, centered=True)
    """

    def __init__(self, learning_rate=0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, name: str = "RMSprop"):
        super().__init__(learning_rate, name)
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
        initial_accumulator_value: the starting value of the slot `accumulator`.
        epsilon: for numerical stability.

    Example:
        >>> optimizer = Adagrad(learning_rate=0.1)
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, name: str = "Adagrad"):
        if initial_accumulator_value < 0:
            raise ValueError("Adagrad: initial_accumulator_value must be >= 0, not "
                             f"{initial_accumulator_value!r}")
        super().__init__(learning_rate, name)
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
