"""The base of autotrace's optimizers (see `autotrace.optimizers` for the optimizers and how
their state is kept): the step counter, the learning rate or schedule, slots per variable,
gradient clipping, decoupled weight decay, and `apply_gradients` / `minimize`.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

import numpy as np

from autotrace import tracking
from autotrace.clipping import clip_by_global_norm, clip_by_norm
from autotrace.placement import device
from autotrace.implicit import implicit_value_and_grad
from autotrace.variables import Variable

__all__ = ["Optimizer", "cast", "step_number"]

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

    Examples:
        >>> w = autotrace.Variable(np.array([3.0, 4.0]))
        >>> optimizer = autotrace.optimizers.SGD(learning_rate=1.0, clipnorm=1.0)
        >>> _ = optimizer.apply_gradients([(np.array([3.0, 4.0]), w)])   # clipped to norm 1
        >>> w.numpy()
        array([2.4, 3.2])
        >>> int(optimizer.iterations.numpy())
        1
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
        if not callable(learning_rate):
            learning_rate = Variable(float(learning_rate), name=f"{name}/learning_rate",
                                     trainable=False)
        # Kept in the instance dict under its own name, so that checkpoints and
        # `optimizer.variables` find the rate at "learning_rate"; the property below reads it.
        self.__dict__["learning_rate"] = learning_rate
        self.slots: dict = {}  # unique variable name -> {slot name: Variable}
        self._slot_keys: dict = {}  # variable.ref() -> its key in self.slots

    @property
    def learning_rate(self):
        """The rate: a Variable (given a number) or the schedule given."""
        return self.__dict__["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        # Assigned, not replaced, as in Keras: a cached traced step reads the Variable, and
        # checkpoints save it.
        current = self.__dict__["learning_rate"]
        if not isinstance(current, Variable):
            raise TypeError(
                f"{self.name}: the learning rate is a schedule, so it cannot be set; make the "
                f"optimizer with a number as learning_rate to change the rate as it trains")
        if callable(value) and not isinstance(value, Variable):
            raise TypeError(
                f"{self.name}: cannot set the learning rate to a schedule ({value!r}): it is "
                f"a Variable, which traced steps and checkpoints read; make a new optimizer "
                f"with the schedule as learning_rate, or assign a number")
        if np.ndim(value) != 0 or not np.issubdtype(np.asarray(value).dtype, np.number):
            raise TypeError(f"{self.name}: the learning rate must be a number (or a 0-d array "
                            f"or Variable), not {value!r}")
        current.assign(value)

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
            ValueError: a gradient's shape differs from its Variable's, a Variable has two
                gradients, or every gradient is None (the loss does not depend on the
                variables).
            TypeError: a gradient is not numbers, or is complex for a real Variable, or does
                not cast safely to its Variable's dtype.

        Every pair is checked before any Variable is assigned: a step refused leaves the
        variables, their slots and the step counter as they were.

        Examples:
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
                    decay = cast(self.weight_decay * learning_rate, variable.dtype)
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

        Examples:
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

        Examples:
            >>> w = autotrace.Variable(3.0)
            >>> SGD(0.25).minimize(lambda: w * w)      # gradient 6: w becomes 1.5
            9.0
        """
        if var_list is not None:
            var_list = self._checked_var_list(var_list)
        loss, grads_and_vars = implicit_value_and_grad(loss_fn)()
        if var_list is not None:
            wanted = {variable.ref() for variable in var_list}
            grads_and_vars = [(gradient, variable) for gradient, variable in grads_and_vars
                              if variable.ref() in wanted]
            if not grads_and_vars:
                names = [variable.name for variable in var_list]
                raise ValueError(f"{self.name}.minimize: the loss reads none of the trainable "
                                 f"Variables of var_list ({names}), so there is no gradient to "
                                 f"apply; "
                                 f"pass the Variables the loss reads, or leave var_list out "
                                 f"for all of them")
        self.apply_gradients(grads_and_vars)
        return loss

    def _checked_var_list(self, var_list) -> list:
        """var_list as a list of Variables, else an error saying which item is not one. Its
        Variables that are not trainable get no gradient and are left as they are (Keras's
        `var_list=model.variables`, a BatchNormalization's moving averages among them); where
        none is trainable, an error saying so, as nothing would be trained."""
        var_list = list(var_list)
        for position, variable in enumerate(var_list):
            if not isinstance(variable, Variable):
                raise TypeError(f"{self.name}.minimize: item {position} of var_list is not a "
                                f"Variable: {variable!r}")
        if var_list and not any(variable.trainable for variable in var_list):
            names = [variable.name for variable in var_list]
            raise ValueError(
                f"{self.name}.minimize: no Variable of var_list ({names}) is trainable "
                f"(trainable=False), so no gradient is taken for any; make the ones to train "
                f"trainable (Variable(..., trainable=True)), or pass those that are")
        return var_list

    def _checked_pairs(self, grads_and_vars) -> list:
        pairs, skipped, positions = [], [], {}
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
            if isinstance(gradient, (list, tuple)):
                raise TypeError(
                    f"{self.name}.apply_gradients: the gradient of Variable {variable.name!r} "
                    f"is a {type(gradient).__name__}, not an array; pass np.asarray(...) of it")
            if tuple(np.shape(gradient)) != tuple(variable.shape):
                raise ValueError(
                    f"{self.name}.apply_gradients: the gradient of Variable {variable.name!r} "
                    f"has shape {tuple(np.shape(gradient))}, but the Variable has shape "
                    f"{tuple(variable.shape)}")
            self._check_dtype(gradient, variable)
            if id(variable) in positions:
                # Keras would update it once a pair, from the state the first update left:
                # not the step its summed gradient makes, which is what a loss meant
                raise ValueError(
                    f"{self.name}.apply_gradients: Variable {variable.name!r} has two "
                    f"gradients (items {positions[id(variable)]} and {position}); give it "
                    f"one, their sum, where both are parts of one loss's gradient")
            positions[id(variable)] = position
            pairs.append((gradient, variable))
        if not pairs:
            raise ValueError(f"{self.name}.apply_gradients: no gradients to apply (None for "
                             f"every variable: {skipped}); does the loss depend on them?")
        return pairs

    def _check_dtype(self, gradient, variable: Variable) -> None:
        """Refuse a gradient the update could not assign, before any Variable of the step is
        assigned (a step is applied whole or not at all): numbers, real unless the Variable is
        complex, of a dtype that casts safely (same kind) to the Variable's."""
        dtype = getattr(gradient, "dtype", None)  # (a traced value's too)
        dtype = np.dtype(dtype if dtype is not None else np.asarray(gradient).dtype)
        where = f"{self.name}.apply_gradients: the gradient of Variable {variable.name!r}"
        if dtype.kind not in "iufc":
            raise TypeError(f"{where} has dtype {dtype}, not a number's; a gradient holds "
                            f"numbers of the Variable's dtype ({variable.dtype})")
        if dtype.kind == "c" and variable.dtype.kind != "c":
            raise TypeError(f"{where} is {dtype}, but the Variable is {variable.dtype}: a "
                            f"real Variable takes a real gradient (its real part, "
                            f"np.real(gradient), if the imaginary part is meant to go)")
        if not np.can_cast(dtype, variable.dtype, casting="same_kind"):
            raise TypeError(f"{where} is {dtype}, which does not cast safely to the "
                            f"Variable's {variable.dtype}; cast it first")

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


def cast(value, dtype):
    """`value` in `dtype` when it is an array (a NumPy scalar, a traced value); Python numbers
    are left alone, since NumPy already computes them in the other operand's dtype."""
    if isinstance(value, (int, float)) or getattr(value, "dtype", dtype) == dtype:
        return value
    return value.astype(dtype)


def step_number(step):
    """1, 2, ... for the first, second, ... step, as float64 (a traced value while tracing)."""
    return (step + 1).astype(np.float64)
