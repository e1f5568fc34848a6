"""`LossScaleOptimizer`: loss scaling for mixed precision, as Keras's.

    optimizer = LossScaleOptimizer(autotrace.optimizers.SGD(0.1))
    def scaled_loss():
        return optimizer.get_scaled_loss(loss(model(x), y))
    _, grads_and_vars = autotrace.implicit_value_and_grad(scaled_loss)()
    gradients = optimizer.get_unscaled_gradients([g for g, _ in grads_and_vars])
    optimizer.apply_gradients(zip(gradients, [v for _, v in grads_and_vars]))

In float16 small gradients round to zero. Multiplying the loss by a large scale multiplies
every gradient by it, so that they stay representable; dividing the gradients by the scale
before the update gives the true gradients back (in the variables' dtype, float32). With
`dynamic=True` the scale adapts: a step whose gradients hold an inf or a NaN (the scale was
too large) is skipped and halves the scale; `dynamic_growth_steps` finite steps in a row
double it.

The state is Variables (`dynamic_scale`, float32, and `step_counter`, int64), saved by
`autotrace.Checkpoint` with the optimizer, and a step is Variable assigns of NumPy
expressions (a skipped step assigns each variable its old value), so it runs the same
eagerly and inside `autotrace.function`.
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from autotrace import tracking
from autotrace.implicit import implicit_value_and_grad
from autotrace.optimizer_base import Optimizer, cast
from autotrace.runtime.devices import device_of, is_gpu_array
from autotrace.variables import Variable

__all__ = ["LossScaleOptimizer"]


class LossScaleOptimizer:
    """An optimizer that scales the loss and unscales the gradients of another, skipping the
    steps whose gradients are not finite.

    Arguments:
        inner_optimizer: the optimizer that updates the variables (an
            `autotrace.optimizers.Optimizer`).
        dynamic: whether the scale adapts (see below); False keeps `initial_scale`, and every
            step is applied.
        initial_scale: the first scale (default 2**15, Keras's).
        dynamic_growth_steps: the number of finite steps in a row after which the scale
            doubles (default 2000, Keras's).
        name: starts its Variables' names (default "loss_scale_optimizer").

    With dynamic=True, `apply_gradients` checks the gradients it is given (unscaled): if any
    holds an inf or a NaN it changes no variable (nor the inner optimizer's state), halves
    the scale and restarts the count of finite steps; else it applies them, counts one finite
    step, and after `dynamic_growth_steps` of them doubles the scale and restarts the count.

    Examples:
        >>> optimizer = LossScaleOptimizer(autotrace.optimizers.SGD(0.5), initial_scale=4.0)
        >>> w = autotrace.Variable([1.0])
        >>> _ = optimizer.apply_gradients([(np.array([np.inf]), w)])  # skipped: not finite
        >>> w.numpy(), float(optimizer.loss_scale)
        (array([1.]), 2.0)
    """

    def __init__(self, inner_optimizer: Optimizer, dynamic: bool = True,
                 initial_scale: float = 2.0 ** 15, dynamic_growth_steps: int = 2000,
                 name: str = "loss_scale_optimizer"):
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"LossScaleOptimizer: argument `inner_optimizer` must be an "
                            f"autotrace.optimizers.Optimizer, got "
                            f"{type(inner_optimizer).__name__}")
        if (isinstance(initial_scale, bool) or not isinstance(initial_scale, (int, float))
                or not np.isfinite(initial_scale) or initial_scale <= 0):
            raise ValueError(f"LossScaleOptimizer: argument `initial_scale` must be a finite "
                             f"number > 0, got {initial_scale!r}")
        if (isinstance(dynamic_growth_steps, bool) or
                not isinstance(dynamic_growth_steps, (int, np.integer)) or
                dynamic_growth_steps <= 0):
            raise ValueError(f"LossScaleOptimizer: argument `dynamic_growth_steps` must be a "
                             f"positive integer, got {dynamic_growth_steps!r}")
        self.inner_optimizer = inner_optimizer
        self.dynamic = bool(dynamic)
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.name = name
        self.dynamic_scale = Variable(np.float32(initial_scale), name=f"{name}/dynamic_scale",
                                      trainable=False)
        self.step_counter = Variable(np.int64(0), name=f"{name}/step_counter",
                                     trainable=False)

    @property
    def loss_scale(self) -> Variable:
        """The current scale (a float32 Variable)."""
        return self.dynamic_scale

    @property
    def iterations(self) -> Variable:
        """The inner optimizer's step counter (skipped steps are not counted)."""
        return self.inner_optimizer.iterations

    @property
    def learning_rate(self):
        """The inner optimizer's rate; setting it assigns the inner optimizer's."""
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        self.inner_optimizer.learning_rate = value

    @property
    def variables(self) -> list:
        """The scale, the count of finite steps, and the inner optimizer's Variables."""
        return list(tracking.iter_variables(self))

    # --- scaling -------------------------------------------------------------------------------
    def get_scaled_loss(self, loss):
        """`loss` times the scale (in the loss's dtype); for a function of no arguments, a
        function returning its scaled loss."""
        if callable(loss):
            return lambda: self.get_scaled_loss(loss())
        self._follow(loss)
        return loss * cast(self.dynamic_scale, _dtype_of(loss))

    def get_unscaled_gradients(self, gradients: Iterable) -> list:
        """Each gradient divided by the scale (in the gradient's dtype); None stays None."""
        gradients = list(gradients)
        for gradient in gradients:
            self._follow(gradient)
        return [None if gradient is None else
                gradient * cast(1.0 / self.dynamic_scale.value(), _dtype_of(gradient))
                for gradient in gradients]

    # --- steps ---------------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars: Iterable) -> Variable:
        """Apply unscaled gradients with the inner optimizer, or skip the step and halve the
        scale where they are not finite (dynamic=True; see the class). Returns `iterations`.
        """
        pairs = [tuple(pair) if isinstance(pair, (tuple, list)) else pair
                 for pair in grads_and_vars]
        if not self.dynamic:
            return self.inner_optimizer.apply_gradients(pairs)
        # Checked first, as the inner optimizer checks them: a refused step assigns nothing.
        given = self.inner_optimizer._checked_pairs(pairs)
        for _, variable in given[:1]:
            self._follow(variable)
        finite = _all_finite([gradient for gradient, _ in given])
        for _, variable in given:
            if isinstance(variable, Variable):
                self.inner_optimizer._slots_for(variable)  # made now, so they are restored too
        touched = _unique([variable for _, variable in given if isinstance(variable, Variable)]
                          + self.inner_optimizer.variables)
        before = [variable.value() for variable in touched]
        # A non-finite gradient would make NaN updates; zeros in its place keep every
        # value computed finite, and the old values are put back below.
        self.inner_optimizer.apply_gradients(
            [(np.where(finite, gradient, np.zeros_like(gradient)), variable)
             for gradient, variable in pairs if gradient is not None])
        for variable, old in zip(touched, before):
            variable.assign(np.where(finite, variable.value(), old))
        self._adapt_scale(finite)
        return self.iterations

    def _follow(self, value) -> None:
        """Keep the scale and the counter on the GPU of the values scaled (an optimizer made
        outside `autotrace.device("gpu:0")` may scale a model's loss made inside it): moved
        the first time an eager GPU value comes, before any traced function reads them."""
        if isinstance(value, Variable):
            target = value.device
        elif is_gpu_array(value):
            target = device_of(value)
        else:
            return
        for state in (self.dynamic_scale, self.step_counter):
            if state.device != target:
                state._move_to(target)

    def _adapt_scale(self, finite) -> None:
        counter = np.where(finite, self.step_counter.value() + 1, 0)
        grow = counter >= self.dynamic_growth_steps
        scale = self.dynamic_scale.value()
        self.dynamic_scale.assign(np.where(finite, np.where(grow, scale * 2, scale),
                                           scale / 2).astype(np.float32))
        self.step_counter.assign(np.where(grow, 0, counter).astype(np.int64))

    def minimize(self, loss_fn: Callable, var_list=None):
        """One step down the gradient of `loss_fn()`, through the scaled loss. Returns the
        loss (unscaled), computed before the update."""
        scaled, grads_and_vars = implicit_value_and_grad(self.get_scaled_loss(loss_fn))()
        if var_list is not None:
            wanted = {variable.ref() for variable in var_list}
            grads_and_vars = [(gradient, variable) for gradient, variable in grads_and_vars
                              if variable.ref() in wanted]
        gradients = self.get_unscaled_gradients([gradient for gradient, _ in grads_and_vars])
        self.apply_gradients(zip(gradients, [variable for _, variable in grads_and_vars]))
        return self.get_unscaled_gradients([scaled])[0]

    def __repr__(self) -> str:
        return (f"<autotrace.optimizers.LossScaleOptimizer {self.name!r} over "
                f"{self.inner_optimizer!r}>")


def _dtype_of(value):
    return value.dtype if hasattr(value, "dtype") else np.result_type(value)


def _all_finite(gradients: list):
    """Whether every element of every gradient is finite (a traced bool while tracing)."""
    finite = None
    for gradient in gradients:
        here = np.all(np.isfinite(gradient))
        finite = here if finite is None else np.logical_and(finite, here)
    return finite


def _unique(variables: list) -> list:
    seen, unique = set(), []
    for variable in variables:
        if id(variable) not in seen:
            seen.add(id(variable))
            unique.append(variable)
    return unique
