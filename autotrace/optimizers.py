"""Optimizers: SGD (with momentum and Nesterov), Adam, AdamW, Nadam, RMSprop and Adagrad, with
Keras's update formulas and argument names, gradient clipping (`clipnorm`, `global_clipnorm`,
`clipvalue`), decoupled weight decay (`weight_decay`) and learning-rate schedules
(`autotrace.optimizers.schedules`); and `LossScaleOptimizer`, which wraps one of them for
mixed precision (see `autotrace.mixed_precision`).

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

import numpy as np

from autotrace import schedules
from autotrace.loss_scaling import LossScaleOptimizer
from autotrace.optimizer_base import Optimizer, cast, step_number
from autotrace.variables import Variable

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Nadam", "RMSprop", "RMSProp", "Adagrad",
           "LossScaleOptimizer", "schedules"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports


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

    Examples:
        >>> w = autotrace.Variable(1.0)
        >>> optimizer = SGD(learning_rate=0.1, momentum=0.9)
        >>> _ = optimizer.apply_gradients([(np.array(2.0), w)])
        >>> float(w)                              # 1 - 0.1 * 2
        0.8
        >>> _ = optimizer.apply_gradients([(np.array(2.0), w)])
        >>> round(float(w), 6)                    # the velocity is 0.9 * 0.2 + 0.2 now
        0.42
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
        step_size = cast(learning_rate, variable.dtype) * gradient
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

    Examples:
        >>> w = autotrace.Variable(np.array([1.0, -1.0]))
        >>> optimizer = Adam(learning_rate=0.1)
        >>> _ = optimizer.minimize(lambda: np.sum(w * w), [w])
        >>> np.round(w.numpy(), 4)        # a first step of Adam: the rate times sign(gradient)
        array([ 0.9, -0.9])
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
        t = step_number(step)
        corrected = learning_rate * np.sqrt(1 - self.beta_2 ** t) / (1 - self.beta_1 ** t)
        m = slots["m"].assign(self.beta_1 * slots["m"] + (1 - self.beta_1) * gradient)
        v = slots["v"].assign(self.beta_2 * slots["v"] + (1 - self.beta_2) * gradient ** 2)
        variable.assign_sub(cast(corrected, variable.dtype) * m / (np.sqrt(v) + self.epsilon))

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

    Examples:
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

    Examples:
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
        self.u_product.assign(self.u_product * self._momentum_schedule(step_number(step)))

    def _update(self, variable, gradient, slots, learning_rate, step):
        t = step_number(step)
        u_t, u_next = self._momentum_schedule(t), self._momentum_schedule(t + 1)
        u_product = self.u_product.value()
        dtype = variable.dtype
        momentum_weight = cast(u_next / (1 - u_product * u_next), dtype)
        gradient_weight = cast((1 - u_t) / (1 - u_product), dtype)
        correction = cast(1 - self.beta_2 ** t, dtype)
        m = slots["m"].assign(self.beta_1 * slots["m"] + (1 - self.beta_1) * gradient)
        v = slots["v"].assign(self.beta_2 * slots["v"] + (1 - self.beta_2) * gradient ** 2)
        m_hat = momentum_weight * m + gradient_weight * gradient
        variable.assign_sub(cast(learning_rate, dtype) * m_hat
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

    Examples:
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
        learning_rate = cast(learning_rate, variable.dtype)
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

    Examples:
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
        variable.assign_sub(cast(learning_rate, variable.dtype) * gradient
                            / (np.sqrt(accumulator) + self.epsilon))

    def _hyperparameters(self):
        return {"initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}
