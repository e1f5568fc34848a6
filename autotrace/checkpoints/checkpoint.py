"""`autotrace.Checkpoint`: save the Variables of models, optimizers and other objects, and
restore them, also into variables that are made later.

    ckpt = autotrace.Checkpoint(model=model, optimizer=optimizer)
    path = ckpt.save("runs/ckpt")               # runs/ckpt-1 (.npz and .index.json)
    ...
    ckpt.restore(autotrace.latest_checkpoint("runs")).assert_consumed()

A Variable is saved under its path from `autotrace.tracking.tracked_variables`, starting with
the keyword it was given under: `model/dense1/kernel`, `step` for
`Checkpoint(step=step_variable)`. An optimizer's slot is saved under the path of its variable:
`optimizer/slots/model/dense1/kernel/m`, so that paths follow attribute names alone, never the
numbers a process gave layers in the order it made them. The files and how they are written
safely are described in autotrace/checkpoints/storage.py.

Restoring checks every value first (the files' checksums, and each variable's shape and dtype)
and assigns only when all are fine, so an error leaves every variable as it was. Values whose
variables do not exist yet (a layer that makes its weights on its first call, an optimizer that
makes its slots on its first step) wait: they are assigned when the variable is made, and
`assert_consumed()` on the status `restore` returns says which are still waiting.
"""
from __future__ import annotations

import os
import sys
import weakref
from typing import Callable

import numpy as np

from autotrace import tracking
from .storage import (INDEX_SUFFIX, CheckpointError, checkpoint_in,
                                        read_checkpoint, read_state, record_latest,
                                        remove_temporaries, write_checkpoint)
from autotrace.variables import Variable
from autotrace.runtime.held_state import holds_state
from autotrace.runtime.state import StateError, current_scope, current_sink, owned
from autotrace.runtime.derivatives.structure import array_module

__all__ = ["Checkpoint", "CheckpointError", "RestoreStatus", "latest_checkpoint"]


class Checkpoint:
    """The Variables of some objects, saved to and restored from files.

    Arguments:
        **objects: what to save, each under its keyword: Modules, optimizers, Variables, or
            any object holding Variables in its attributes, lists, tuples and dicts.

    Attributes:
        save_counter: how many times this checkpoint was saved (restored with the values, so
            numbering goes on after a restore); the N in `<prefix>-<N>`.

    Examples:
        >>> x, y = autotrace.Variable(10.), autotrace.Variable(5.)
        >>> ckpt = Checkpoint(x=x, y=y)
        >>> _ = x.assign(2.)
        >>> path = ckpt.save("demo/ckpt")
        >>> path
        'demo/ckpt-1'
        >>> _ = x.assign(11.); float(x + y)
        16.0
        >>> _ = ckpt.restore(path); float(x + y)
        7.0
    """

    def __init__(self, **objects):
        if not objects:
            raise ValueError("Checkpoint needs the objects to save, as keywords: "
                             "Checkpoint(model=model, optimizer=optimizer)")
        self._objects = dict(objects)
        self.save_counter = 0
        self._waiting: _WaitingValues | None = None

    def _variables(self) -> dict:
        """{path: Variable} for every Variable the objects hold now."""
        return _variables_of(self._objects)

    def save(self, file_prefix) -> str:
        """Save every Variable's value as checkpoint `<file_prefix>-<N>`, N the new save count.

        Writes `<file_prefix>-<N>.npz` and `<file_prefix>-<N>.index.json` (making the
        directory if needed) and names it the latest in the directory's `checkpoint` file.
        Each file is written under a temporary name and renamed when complete, the index
        last, so a crash leaves earlier checkpoints intact, also the one this save replaces
        where `<file_prefix>-<N>` exists (the temporary files of a save that was killed are
        removed by the next save of the same prefix). Values restored but still waiting for
        their variables are saved too, under their names, so a save right after a restore loses
        nothing.

        Returns:
            the checkpoint's path, `<file_prefix>-<N>` (what `restore` takes).

        Raises:
            CheckpointError: two Variables would be saved under one path (a dict key holding
                "/", say); the message names how each is reached.
        """
        return self._save(file_prefix, None)

    def _save(self, file_prefix, number: int | None) -> str:
        """`save`, as checkpoint `<file_prefix>-<number>` where a number is given."""
        _not_while_tracing("save")
        arrays = {}
        if self._waiting is not None:
            arrays.update(self._waiting.values)
        arrays.update((path, variable.numpy()) for path, variable in self._variables().items())
        counter = self.save_counter + 1
        path = f"{os.fspath(file_prefix)}-{counter if number is None else number}"
        ranks = training_ranks()
        if ranks is None or ranks.writes_files():  # several ranks: rank 0 writes for all
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            remove_temporaries(os.fspath(file_prefix))
            write_checkpoint(path, arrays, counter)
            record_latest(path)
        if ranks is not None:
            ranks.barrier()  # the files are there when save returns on any rank
        self.save_counter = counter
        return path

    def restore(self, save_path) -> "RestoreStatus":
        """Assign the values saved in checkpoint `save_path` to the Variables.

        Every value is checked before any is assigned: the files (checksums, JSON), and for
        each Variable that exists now, that the checkpoint has its name, shape and dtype. Values
        for names with no Variable yet wait, and are assigned (after the same checks) when a
        Module attribute or an optimizer slot makes the Variable at that path.

        Arguments:
            save_path: a path returned by `save` or `latest_checkpoint`. None restores nothing
                (so `ckpt.restore(latest_checkpoint(directory))` starts afresh where there is
                no checkpoint yet), and the status's `assert_consumed` says so.

        Returns:
            a RestoreStatus: `assert_consumed()` checks that every value found its Variable.

        Raises:
            CheckpointError: a file is missing or damaged, or a Variable has no value, or one
                of another shape or dtype, in the checkpoint; the message names both.
        """
        _not_while_tracing("restore")
        if save_path is None:
            return RestoreStatus(None, None)
        save_path = os.fspath(save_path)
        arrays, counter = read_checkpoint(save_path)
        variables = self._variables()
        for path, variable in variables.items():
            if path not in arrays:
                raise CheckpointError(
                    f"checkpoint {save_path} has no value for Variable {path!r} (it has "
                    f"{_names(arrays)}; see {save_path + INDEX_SUFFIX})")
            _check_fits(path, variable, arrays[path], save_path)
        for path, variable in variables.items():
            variable.assign(arrays[path])
        self.save_counter = counter
        if self._waiting is not None:
            self._waiting.stop()
        waiting = {path: array for path, array in arrays.items() if path not in variables}
        self._waiting = _WaitingValues(self._objects, waiting, save_path)
        return RestoreStatus(self._waiting, set(arrays))

    def __repr__(self) -> str:
        return f"<autotrace.Checkpoint of {', '.join(self._objects)}>"


class RestoreStatus:
    """What `Checkpoint.restore` restored, and what still waits for its Variable."""

    def __init__(self, waiting: "_WaitingValues | None", saved_names: set | None):
        self._waiting = waiting
        self._saved_names = saved_names
        self.partial_expected = False

    @property
    def waiting(self) -> list:
        """The names whose values have not been assigned yet (no Variable at that path)."""
        return [] if self._waiting is None else list(self._waiting.values)

    def assert_consumed(self) -> "RestoreStatus":
        """Raise AssertionError unless every value in the checkpoint has been assigned.

        A value waits while its Variable does not exist (call the model once, or apply the
        optimizer once, to make it); a value for a Variable that no object makes waits for
        ever. Returns this status.
        """
        if self._waiting is None:
            raise AssertionError("nothing was restored: Checkpoint.restore was given None "
                                 "(latest_checkpoint found no checkpoint?)")
        if self._waiting.rejected:
            errors = "; ".join(message for _, message in self._waiting.rejected.values())
            raise AssertionError(f"checkpoint {self._waiting.save_path}: values that did not "
                                 f"fit their Variables: {errors}")
        if self._waiting.values:
            raise AssertionError(
                f"checkpoint {self._waiting.save_path}: values not restored, since no "
                f"Variable exists at their paths: "
                f"{_names(self._waiting.values)}. Build the objects that make them (call the "
                "model, apply the optimizer) first, or call expect_partial() where they are "
                "not needed")
        return self

    def assert_existing_objects_matched(self) -> "RestoreStatus":
        """Raise AssertionError if a Variable made since the restore got no value from it
        (its path is not in the checkpoint). Returns this status."""
        if self._waiting is None:
            return self
        unmatched = [path for path in _variables_of(self._waiting.objects)
                     if path not in self._saved_names]
        if unmatched:
            raise AssertionError(f"checkpoint {self._waiting.save_path} has no values for "
                                 f"Variables made since it was restored: {_names(unmatched)}")
        return self

    def expect_partial(self) -> "RestoreStatus":
        """Say that some values are not expected to find a Variable (restoring a model
        without its optimizer, say). Waiting values are still assigned if their Variables
        appear. Returns this status."""
        self.partial_expected = True
        return self


class _WaitingValues:
    """Values restored before their Variables exist; assigned as tracking reports new ones.

    It holds the checkpointed objects weakly (where they can be): values waiting for the
    variables of a model that is gone wait no more, and do not keep it alive.
    """

    def __init__(self, objects: dict, values: dict, save_path: str):
        self._objects = {name: _weakly(value) for name, value in objects.items()}
        self.values = values
        self.save_path = save_path
        # path -> (the Variable a value did not fit, the error): refused once; the value
        # waits on for a Variable made again at its path (a layer built again).
        self.rejected: dict = {}
        if values:
            tracking.add_listener(self.attribute_set)

    @property
    def objects(self) -> dict:
        """The checkpointed objects still alive, by keyword."""
        alive = {name: held() for name, held in self._objects.items()}
        return {name: value for name, value in alive.items() if value is not None}

    def attribute_set(self, owner, attribute: str, value) -> None:
        if not self.values or not holds_state(value):
            return
        objects = self.objects
        if not objects:
            self.stop()
            return
        found = [(path, variable) for path, variable in _variables_of(objects).items()
                 if path in self.values and self.rejected.get(path, (None,))[0] is not variable]
        for path, variable in found:  # all checked before any is assigned
            try:
                _check_fits(path, variable, self.values[path], self.save_path)
            except CheckpointError as error:
                array = self.values[path]
                message = (f"{error}. The value still waits, and a layer that made the "
                           f"Variable while it built is left unbuilt: build it again so that "
                           f"it makes the Variable with shape {tuple(array.shape)} and dtype "
                           f"{array.dtype} (a layer makes its weights in the floating dtype of "
                           f"its first inputs)")
                self.rejected[path] = (variable, message)
                raise CheckpointError(message) from None
        for path, variable in found:
            self.rejected.pop(path, None)
            _store(variable, self.values.pop(path))
        if not self.values:
            self.stop()

    def stop(self) -> None:
        tracking.remove_listener(self.attribute_set)


def latest_checkpoint(directory) -> str | None:
    """The path of the checkpoint saved last in `directory`, or None if there is none.

    Raises CheckpointError if the directory's state file is damaged, or names a checkpoint
    outside the directory (a path, or a file that is a link leading out).

    Examples:
        >>> x = autotrace.Variable(1.0)
        >>> ckpt = autotrace.Checkpoint(x=x)
        >>> _ = ckpt.save("runs/ckpt"); _ = x.assign(5.0); _ = ckpt.save("runs/ckpt")
        >>> latest_checkpoint("runs")
        'runs/ckpt-2'
        >>> _ = ckpt.restore(latest_checkpoint("runs")); float(x)
        5.0
    """
    directory = os.fspath(directory)
    state = read_state(directory)
    if state is None:
        return None
    return checkpoint_in(directory, state["latest"])


# --- helpers ------------------------------------------------------------------------------------

def _variables_of(objects: dict) -> dict:
    """{path: Variable} for every Variable `objects` hold (see the module docstring).

    Raises CheckpointError where two Variables get one path (a dict key holding "/", a key 1
    beside a key "1", a Variable named like an optimizer's slot path): the checkpoint would
    hold one value for both, and restoring would leave the other as it was.
    """
    found = [found for name, value in objects.items()
             for found in tracking.tracked_variable_routes(value, name)]
    path_of = {id(variable): path for path, _, variable in found}
    named, route_of = {}, {}
    for path, route, variable in found:
        owner, suffix, slot = getattr(variable, "_slot_of", (None, "", ""))
        if owner is not None and id(owner) in path_of and path.endswith(suffix):
            path = f"{path[:-len(suffix)]}slots/{path_of[id(owner)]}/{slot}"
            route = f"{route} (the slot {slot!r} of {path_of[id(owner)]})"
        if path in named and named[path] is not variable:
            raise CheckpointError(
                f"two Variables would be saved under one path {path!r}: {route_of[path]} and "
                f"{route}; rename a dict key or attribute so that their paths differ ('/' "
                "separates the parts of a path, and keys are written with str())")
        named[path], route_of[path] = variable, route
    return named


def _weakly(value) -> Callable:
    """A function returning `value`, or None once it is gone, where it can be held weakly."""
    try:
        return weakref.ref(value)
    except TypeError:  # a list, dict or tuple of Variables
        return lambda: value


def _check_fits(path: str, variable: Variable, array: np.ndarray, save_path: str) -> None:
    if tuple(array.shape) != tuple(variable.shape):
        raise CheckpointError(
            f"Variable {path!r} has shape {tuple(variable.shape)}, but checkpoint {save_path} "
            f"holds shape {tuple(array.shape)}")
    if array.dtype != variable.dtype:
        raise CheckpointError(
            f"Variable {path!r} has dtype {variable.dtype}, but checkpoint {save_path} holds "
            f"dtype {array.dtype}")


def _store(variable: Variable, array: np.ndarray) -> None:
    if current_scope() is None and current_sink() is None:
        variable.assign(array)
    else:
        # The Variable was made just now, and not read yet, while a function is traced for
        # the first time or differentiated by implicit_grad (a layer built or a slot made on
        # its first call). Its value is where it starts: while tracing, what the trace feeds
        # in as a graph input on every call (an assign would be recorded into the graph and
        # write this value back on every call); under implicit_grad, what every recomputation
        # of the call must see too (an assign would be held back until the gradient is done).
        variable._value = owned(array_module(variable._value).array(array, copy=True))


def _names(names) -> str:
    names = list(names)
    shown = ", ".join(repr(name) for name in names[:10])
    return shown + (f" and {len(names) - 10} more" if len(names) > 10 else "")


def training_ranks():
    """autotrace.distributed when this process trains among several MPI ranks, else None
    (without importing it: a script that never used it runs as one process)."""
    distributed = sys.modules.get("autotrace.distributed")
    if distributed is None or not distributed.is_initialized() or distributed.size() == 1:
        return None
    return distributed


def _not_while_tracing(method: str) -> None:
    if current_scope() is not None:
        raise StateError(f"Checkpoint.{method} cannot run inside autotrace.function (it would "
                         "run while tracing only); call it outside the traced function")
