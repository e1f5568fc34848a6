"""`autotrace.Module`: a container of Variables and of other modules, built lazily.

    class TwoLayerNet(autotrace.Module):
        def __init__(self):
            super().__init__()
            self.dense1 = layers.Dense(2, activation="relu", use_bias=False)
            self.dense2 = layers.Dense(3, use_bias=False)

        def call(self, x):
            return self.dense2(self.dense1(x))

    net = TwoLayerNet()
    net.variables               # []: Dense makes its kernel on its first call
    net(np.array([[1.0]]))
    [v.shape for v in net.variables]   # [(1, 2), (2, 3)]

A module tracks what is assigned to its attributes: Variables, other modules, and lists, tuples
and dicts of them (see autotrace/tracking.py for the order and the path names checkpoints use).
Calling a module runs `build(input_shape)` once, on the first call, then `call`. The gradient
transforms differentiate `call`, with the module's Variables reached through `self`.
"""
from __future__ import annotations

import re

import numpy as np

from autotrace import tracking
from autotrace.variables import Variable
from autotrace.runtime.scopes import name_scope
from autotrace.runtime.state import current_scope

_name_counts: dict = {}


def _snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _unique_name(base: str) -> str:
    count = _name_counts.get(base, 0)
    _name_counts[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


class Module:
    """Tracks Variables and sub-modules set as attributes; built on the first call.

    Arguments:
        name: the module's name (default: its class name in snake_case, numbered when
            several exist: dense, dense_1, ...).

    Subclasses define `call(self, inputs, ...)`, and may define `build(self, input_shape)`,
    which runs once before the first call with the shape of the first argument (a tuple of
    shapes for a tuple or list of arrays) and makes the Variables with `add_weight`.

    Examples:
        >>> class Scale(autotrace.Module):
        ...     def build(self, input_shape):
        ...         self.add_weight("factor", (input_shape[-1],), initializer="ones")
        ...     def call(self, x):
        ...         return x * self.factor
        >>> scale = Scale()
        >>> scale.variables                      # made on the first call
        []
        >>> scale(np.array([[1.0, 2.0]]))
        array([[1., 2.]])
        >>> [variable.shape for variable in scale.trainable_variables]
        [(2,)]
    """

    _untracked_attributes = ("_name",)
    _trainable = True

    def __init__(self, name: str | None = None):
        object.__setattr__(self, "_name", name or _unique_name(_snake_case(type(self).__name__)))
        object.__setattr__(self, "built", not _defines_build(type(self)))

    @property
    def name(self) -> str:
        return self._name

    def __setattr__(self, attribute: str, value) -> None:
        object.__setattr__(self, attribute, value)
        if not self._trainable:  # what a frozen module is given is frozen too
            self._set_trainable_in(value, False)
        tracking.attribute_set(self, attribute, value)

    @property
    def trainable(self) -> bool:
        """Whether the module trains, as Keras's `layer.trainable`. Setting it False freezes
        the module: its Variables and those of its sub-modules, at any depth (also those made
        later, when it builds), are made non-trainable, so `trainable_variables`,
        `implicit_grad` and the optimizers leave them alone, and a BatchNormalization runs in
        inference mode. Setting it True again makes trainable what freezing made
        non-trainable (not a BatchNormalization's moving statistics), here and in every
        sub-module. A traced function that read the flags traces again.

        Examples:
            >>> model = autotrace.layers.Sequential([autotrace.layers.Dense(2)])
            >>> _ = model(np.ones((1, 3)))
            >>> model.layers[0].trainable = False
            >>> len(model.trainable_variables), len(model.non_trainable_variables)
            (0, 2)
        """
        scope = current_scope()
        if scope is not None:  # (a trace that reads it traces again when it changes)
            scope.flagged[id(self)] = self
        return self._trainable

    def state_label(self) -> str:
        """How a trace that read the module's flag names it (runtime/object_slots.py)."""
        return f"module {self.name!r}"

    @trainable.setter
    def trainable(self, value) -> None:
        object.__setattr__(self, "_trainable", bool(value))
        for held in vars(self).values():
            self._set_trainable_in(held, bool(value))

    def _set_trainable_in(self, value, trainable: bool) -> None:
        """Set the flag of the modules and Variables in `value` (one this module holds);
        unfreezing makes trainable only the Variables this module froze."""
        for item in _own_state(value, set()):
            if isinstance(item, Module):
                if item._trainable != trainable:  # (one set already, as one holding this)
                    item.trainable = trainable
            elif not trainable and item.trainable:
                item.trainable = False
                item._frozen_by = self
            elif trainable and getattr(item, "_frozen_by", None) is self:
                item.trainable = True
                del item._frozen_by

    # --- what it holds -----------------------------------------------------------------------
    @property
    def variables(self) -> list:
        """Every Variable of this module and its sub-modules, in a stable order."""
        return list(tracking.iter_variables(self))

    @property
    def trainable_variables(self) -> list:
        return [variable for variable in self.variables if variable.trainable]

    @property
    def non_trainable_variables(self) -> list:
        return [variable for variable in self.variables if not variable.trainable]

    @property
    def submodules(self) -> list:
        """The modules this one holds, at any depth, in the order of `variables`."""
        found: list = []
        _collect_modules(self, found, {id(self)})
        return found

    def add_weight(self, name: str, shape, initializer="glorot_uniform", dtype=np.float64,
                   trainable: bool = True, rng=None) -> Variable:
        """A new Variable named `<module name>/<name>`, set as attribute `name` as well.

        Arguments:
            initializer: "zeros", "ones", "glorot_uniform", "he_normal", "random_normal", a
                number, or a function `(shape, dtype, rng) -> array`.
            rng: a numpy Generator for random initializers (default: the one
                `autotrace.random.set_seed` restarts, seeded from the operating system
                before any set_seed).
        """
        from autotrace.initializers import initial_value
        value = initial_value(initializer, tuple(int(size) for size in shape), dtype, rng)
        variable = Variable(value, name=f"{self.name}/{name}", trainable=trainable,
                            dtype=dtype)
        setattr(self, name, variable)
        return variable

    # --- calling -----------------------------------------------------------------------------
    def __call__(self, inputs, *args, **kwargs):
        self.build_for(inputs)
        with name_scope(self.name):  # the module's ops are grouped under its name
            return self.call(inputs, *args, **kwargs)

    def build_for(self, inputs) -> None:
        """Run `build` with the shape of `inputs`, unless it ran already."""
        if not self.built:
            before = dict(vars(self))
            try:
                self.build(_shape_of(inputs))
            except BaseException:
                # A build that fails (a waiting checkpoint value that does not fit the weight
                # it made) leaves the module as it was: unbuilt, holding none of what it made.
                for attribute in [name for name in vars(self) if name not in before]:
                    object.__delattr__(self, attribute)
                vars(self).update(before)
                raise
            object.__setattr__(self, "built", True)

    @property
    def __autotrace_call__(self):
        """What the gradient transforms differentiate when a module is called: `call`, or
        the `__call__` a subclass defines in its place (as a tf.Module does)."""
        if self._user_defines_call():
            return self.__call__  # the user's own __call__, which may never run `call`
        return self.call

    @property
    def __autotrace_scope__(self):
        """The name scope a call of the module opens (its name), in which the gradient
        transforms compute the call's derivative too (`gradients/<name>`); None where a
        subclass's own `__call__` replaces Module's, which opens it."""
        return None if self._user_defines_call() else self.name

    def _user_defines_call(self) -> bool:
        """Whether a subclass outside autotrace defines `__call__` in place of Module's."""
        own_call = type(self).__call__
        return (own_call.__module__ or "").split(".")[0] != __name__.split(".")[0]

    def build(self, input_shape) -> None:
        """Make the module's Variables, given its first input's shape (default: nothing)."""

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define call(self, inputs)")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def _defines_build(cls) -> bool:
    return cls.build is not Module.build


def _shape_of(inputs):
    if isinstance(inputs, (tuple, list)):
        return type(inputs)(_shape_of(item) for item in inputs)
    return tuple(np.shape(inputs)) if not hasattr(inputs, "shape") else tuple(inputs.shape)


def _own_state(value, seen: set):
    """The Variables and Modules in `value`, followed through containers and plain objects'
    attributes (as tracking does), but not into the Modules."""
    if id(value) in seen or isinstance(value, tracking._LEAVES):
        return
    seen.add(id(value))
    if isinstance(value, (Variable, Module)):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _own_state(item, seen)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _own_state(item, seen)
    elif isinstance(getattr(value, "__dict__", None), dict):
        for item in vars(value).values():
            yield from _own_state(item, seen)


def _collect_modules(value, found: list, seen: set) -> None:
    children = (value.__dict__.values() if isinstance(value, Module) else
                value.values() if isinstance(value, dict) else
                value if isinstance(value, (list, tuple)) else ())
    for child in children:
        if id(child) in seen:
            continue
        seen.add(id(child))
        if isinstance(child, Module):
            found.append(child)
            _collect_modules(child, found, seen)
        elif isinstance(child, (list, tuple, dict)):
            _collect_modules(child, found, seen)
