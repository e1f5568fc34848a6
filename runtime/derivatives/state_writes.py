"""Writes into the state of objects a differentiated function is given or reads from outside.

`self.n += 1`, `self.n_in = X.shape[1]`, `self.stats["calls"] += 1`: a layer counts its calls,
makes its parameters on the first one, keeps what it saw. Generated code writes them with
these helpers (transforms/analysis/given_state_writes.py rewrites the statements), once per call of the
user's function, as Python would; `where` is the user's file and line ("layer.py:12"), which
an error names. An array held in the state is not changed in place: its aliases, read earlier
in the call, are what the derivative's adjoint sweep reads.

Each write names the object it starts from (its root: `self`, or a global layer) and the path
from there: `write_state(self, ".[", ("parameters", "W"), W)` is `self.parameters["W"] = W`
(kinds: "." an attribute, "[" an item, one per key). It returns the root, so that where the
value written carries gradient, generated code rebinds the root to it (`self =
write_state(...)`) and the root carries gradient from there on, as an object built in the
function does: what reads the value back through the root (`self.parameters["W"]`, or a method
of `self` called later) passes its gradient to the root's, an ObjectGradient (see
runtime/derivatives/objects.py), and the adjoint of the write takes the value's gradient out of
it at the path (`state_gradient`), the slot's gradient before the write being none
(`without_state`).
"""
from __future__ import annotations

import types

import numpy as np

from ..object_slots import kept_as_graph_state
from ..object_walk import cell_filled
from ..primitives.index import holds_traced
from ..python_modules import is_standard_library
from ..python_operators import AUGMENTED_OPERATORS
from ..state import StateCell
from .adjoint_ops import unbroadcast
from .objects import (ObjectGradient, StateWriteError, entry_at, is_dataclass_instance,
                      is_plain_object, nonzero_gradient, recomputing, replaced_at)
from .snapshots import is_mutable_array
from .state_log import note_write
from .structure import rebuild, zeros_like

# The methods written as writes at the end of a list (transforms/analysis/given_state_writes.py).
GROWING = ("append", "extend")
# Why a derivative may not make a write when it runs its function again.
RUNS_TWICE = ("its derivative runs the function again where it is called (a checkpointed call, "
              "a call under implicit_grad, or, traced, one inside an if or loop on a traced "
              "value), and the write would happen twice; call the function outside such an if "
              "or loop, or keep this state out of the differentiated call")




def assign_attribute(owner, attribute: str, value, symbol: str | None = None,
                     where: str = "") -> None:
    """`owner.attribute = value`, or `owner.attribute op= value` for the operator `symbol`."""
    if symbol is not None:
        value = _updated(getattr(owner, attribute), value, symbol,
                         f"{type(owner).__name__}.{attribute}", where)
    _check_untraced(value, f"{type(owner).__name__}.{attribute}", where)
    setattr(owner, attribute, value)


def assign_item(container, key, value, symbol: str | None = None, where: str = "") -> None:
    """`container[key] = value` (or `op=`) where container is state held by an object: a
    dict, a list, or another object with items, but not an array, whose memory names read
    earlier in the call may share."""
    if is_mutable_array(container) or hasattr(container, "__array_namespace__"):
        kind = type(container).__name__ if isinstance(container, np.ndarray) or hasattr(
            container, "__array_namespace__") else "ndarray"  # (a traced one: NumPy's)
        raise StateWriteError(
            f"{where}: autotrace cannot write into an array held by an object "
            f"(an item of a {kind}) in a differentiated function: values "
            "read from it earlier would change under the derivative; assign a new array to "
            "the attribute instead (self.x = np.where(...), or a copy with the item set)")
    if symbol is not None:
        value = _updated(container[key], value, symbol, f"an item {key!r}", where)
    _check_untraced(value, f"an item {key!r}", where)
    container[key] = value


def write_state(root, kinds: str, keys: tuple, value, symbol: str | None = None,
                where: str = "", carries_gradient: bool = True, in_callee: bool = False,
                again: bool = False):
    """The write along `kinds` and `keys` from `root` (see the module docstring); `root`.
    carries_gradient: False where the value written carries none (for `without_state`);
    in_callee: made in a function the differentiated one calls (for `state_tangent`);
    again: made by a derivative that runs its function again (see `call_method`)."""
    owner = _owners(root, kinds, keys)[-1]
    if symbol in GROWING:  # self.xs.append(v): the last key is where v goes, len(self.xs)
        call_method(owner, symbol, (value,), where, again)
        return root
    _refuse_run_again(again, where)
    kind = kinds[-1]
    note_write(owner, kind, keys[-1], where)
    if symbol is not None:  # a list or dict held there changes in place (`+=`)
        held = getattr(owner, keys[-1]) if kind == "." else owner[keys[-1]]
        if isinstance(held, (list, dict)):
            note_write(held, "*", None, where)
    if kind == ".":
        assign_attribute(owner, keys[-1], value, symbol, where)
    else:
        assign_item(owner, keys[-1], value, symbol, where)
    return root


def _refuse_run_again(again: bool, where: str) -> None:
    """A write made by a derivative that runs its function again where it is called: refused
    but where state_as_at runs it from the state the first run saw (runtime/derivatives/
    state_log.py)."""
    if again and not recomputing():
        raise StateWriteError(
            f"{where}: autotrace cannot differentiate this write into an object's state "
            f"here: {RUNS_TWICE}")


def state_gradient(gradient, root, kinds: str, keys: tuple, value,
                   symbol: str | None = None, where: str = ""):
    """The gradient of `value` that `write_state(root, kinds, keys, value, symbol)` wrote,
    given the gradient of `root` after it (None or an entry missing: nothing read it back)."""
    if symbol == "extend":
        held = entry_at(gradient, keys[:-1])
        start = keys[-1]
        if held is None or len(held) < start + len(value):
            return zeros_like(value)
        return type(value)(held[start:start + len(value)]) if isinstance(
            value, (list, tuple)) else held[start:start + len(value)]
    gradient = entry_at(gradient, keys)
    if gradient is None:
        return zeros_like(value)
    if symbol not in (None, "+", "-", "append"):
        raise StateWriteError(
            f"{where}: autotrace cannot differentiate a write into an object's state with "
            f"{symbol}= whose result is read back; write it out (x = x {symbol} value)")
    gradient = _shaped(gradient, value)
    return -gradient if symbol == "-" else gradient


def _shaped(gradient, value):
    """`gradient`, read from a slot's, as the gradient of `value`: summed to its shape, a
    container's entries that nothing reached made zeros."""
    if isinstance(value, dict):
        return rebuild(value, ((key, _shaped(entry_at(gradient, (key,)), item))
                               for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        items = [_shaped(entry_at(gradient, (index,)), item) for index, item in enumerate(value)]
        return type(value)(items) if type(value) in (list, tuple) else type(value)(*items)
    if gradient is None:
        return zeros_like(value)
    if hasattr(value, "shape") or isinstance(value, (int, float, complex)):
        return unbroadcast(gradient, value)
    return gradient


def without_state(gradient, root, keys: tuple, symbol: str | None = None, value=None,
                  where: str = "", carries_gradient: bool = True):
    """The gradient of the root before `write_state(root, kinds, keys, value, symbol)`, given
    its gradient after: the same, but that what the slot held before gets none, being
    overwritten (with `+=` or `-=`, it is what the new value was made from: it gets the same).
    An ObjectGradient notes the slot as written (its `written`), for the caller's check."""
    out = unwritten_state(gradient, keys, symbol, value)
    if is_plain_object(root):
        out = ObjectGradient(out if out is not None else {})
        out.written = out.written | {(tuple(keys), where, carries_gradient,
                                      symbol in ("+", "-"))}
    return out


def unwritten_state(gradient, keys: tuple, symbol=None, value=None):
    """`without_state` but for the note of the slot written: zeros for the gradient at `keys`
    (for a list grown, the items added dropped), as a derivative of a derivative sees it."""
    if gradient is None or symbol in ("+", "-"):
        return gradient
    if symbol in GROWING:  # the list before: without the items added
        held = entry_at(gradient, keys[:-1])
        start = keys[-1]
        if not isinstance(held, list) or len(held) <= start:
            return gradient  # read back before they were added: the list's gradient then
        end = start + (1 if symbol == "append" else len(value))
        return _replaced(gradient, keys[:-1], held[:start] + held[end:])
    held = entry_at(gradient, keys)
    if held is None:
        return gradient
    return _replaced(gradient, keys, zeros_like(held))  # (zeros: the structure kept)


def object_tangent(tangent, value):
    """`tangent`, or, where it is None and `value` an object that gets an ObjectGradient, an
    empty one: the tangent a forward derivative passes with a call of a method of `value`,
    which the method's writes into the object's state change in place (`state_tangent`)."""
    if tangent is None and is_plain_object(value):
        return ObjectGradient()
    return tangent


def placed_state(gradient, root, kinds: str, keys: tuple, value, symbol: str | None = None):
    """The gradient of the root's gradient, given that of `state_gradient`'s result: it at
    `keys`, none elsewhere (the adjoint of `state_gradient`, for a derivative of a
    derivative)."""
    if gradient is None:
        return None
    if symbol == "-":
        gradient = -gradient
    owners = _owners(root, kinds, keys)
    if symbol == "extend":
        held = [zeros_like(item) for item in owners[-1]]
        held[keys[-1]:keys[-1] + len(gradient)] = list(gradient)
        return _replaced(None, keys[:-1], held, owners[:-1])
    return _replaced(None, keys, gradient, owners)


def restored_state(gradient, root, kinds: str, keys: tuple, symbol: str | None = None,
                   value=None):
    """The adjoint of `without_state` (and of `state_tangent` for the root's tangent): the
    gradient at `keys` dropped, or, for a list grown, zeros where the items added were."""
    if gradient is None or symbol in ("+", "-"):
        return gradient
    if symbol in GROWING:
        held = entry_at(gradient, keys[:-1])
        if not isinstance(held, list):
            return gradient
        added = [zeros_like(value)] if symbol == "append" else [zeros_like(v) for v in value]
        start = keys[-1]
        return _replaced(gradient, keys[:-1], held[:start] + added + held[start:])
    return unwritten_state(gradient, keys, symbol, value)


def _owners(root, kinds: str, keys: tuple) -> list:
    """The objects along the path from `root`: root, then what each key but the last reads."""
    owners = [root]
    for kind, key in zip(kinds[:-1], keys[:-1]):
        owners.append(getattr(owners[-1], key) if kind == "." else owners[-1][key])
    return owners


def state_tangent(tangent, root, kinds: str, keys: tuple, value_tangent,
                  symbol: str | None = None, where: str = "", in_callee: bool = False):
    """The tangent of `root` after `write_state(root, kinds, keys, value, symbol)`, given its
    tangent before and that of the value written.

    in_callee: the write is made by a function the differentiated one calls, whose forward
    derivative hands its caller the tangent of its result alone. The caller's tangent of the
    object, an ObjectGradient it passed (transforms/forward/forward.py `object_tangent`), is then
    changed in place, so that the caller reads the tangent of what was written. Where there
    is no such tangent (an object passed as another argument), and the value written has a
    tangent, or what it overwrites had one, the caller's tangent of the object would be stale
    after the call, and StateWriteError is raised (reverse mode follows it)."""
    if in_callee and type(tangent) is ObjectGradient:
        changed = state_tangent(tangent, root, kinds, keys, value_tangent, symbol, where)
        note_write(tangent, "*", None, where)  # (state too: a recomputation takes it back)
        tangent.clear()
        tangent.update(changed)
        return tangent
    if in_callee and (nonzero_gradient(value_tangent)
                      or nonzero_gradient(entry_at(tangent, keys))):
        raise StateWriteError(
            f"{where}: forward mode cannot follow this write into an object's state, made in a "
            "function called by the differentiated one: the tangent of what it writes would "
            "not reach its caller (a forward derivative hands its caller the tangent of its "
            "result alone); take this derivative in reverse mode (autotrace.grad, vjp), or "
            "write the state in the function you differentiate")
    if symbol in GROWING:
        owners = _owners(root, kinds, keys)
        grown = owners[-1]  # the list, the items added included
        held = entry_at(tangent, keys[:-1])
        start = keys[-1]
        if held is None:
            held = [zeros_like(item) for item in grown[:start]]
        added = [value_tangent] if symbol == "append" else list(value_tangent)
        return _replaced(tangent, keys[:-1], list(held[:start]) + added, owners[:-1])
    if symbol in ("+", "-"):
        held = entry_at(tangent, keys)
        if held is not None:
            value_tangent = held + value_tangent if symbol == "+" else held - value_tangent
        elif symbol == "-":
            value_tangent = -value_tangent
    elif symbol is not None:
        raise StateWriteError(f"autotrace cannot take the tangent of a write into an object's "
                              f"state with {symbol}=; write it out (x = x {symbol} value)")
    return _replaced(tangent, keys, value_tangent, _owners(root, kinds, keys))


def _replaced(gradient, keys: tuple, entry, owners: list | None = None):
    """`replaced_at`, the containers missing made like `owners` (the objects on the path):
    zeros of a list, dict or dataclass, an ObjectGradient for another object."""
    def missing(depth: int):
        owner = owners[depth]
        return (zeros_like(owner) if isinstance(owner, (list, tuple, dict))
                or is_dataclass_instance(owner) else ObjectGradient())
    return replaced_at(gradient, keys, entry, missing if owners else None)


def call_method(owner, method: str, arguments: tuple, where: str = "",
                again: bool = False) -> None:
    """`owner.method(*arguments)` for its effect on state an object holds (`append`,
    `extend`, `insert`, `update`, ...), its result unused; not on an array. again: made by a
    derivative that runs its function again where it is called (a derivative of a
    derivative, a checkpointed call, one under implicit_grad, or, traced, one inside an if or
    loop on a traced value), which state_as_at lets write."""
    if is_mutable_array(owner) or hasattr(owner, "__array_namespace__"):  # (traced too)
        raise StateWriteError(
            f"{where}: autotrace cannot change an array held by an object in place "
            f"(.{method}) in a differentiated function: values read from it earlier would "
            "change under the derivative; assign a new array to the attribute instead")
    _check_untraced(arguments, f"the argument of .{method}", where)
    _refuse_run_again(again, where)
    note_write(owner, "*", None, where)
    getattr(owner, method)(*arguments)


def _updated(current, value, symbol: str, what: str, where: str):
    in_place, plain = AUGMENTED_OPERATORS[symbol]
    if isinstance(current, StateCell):  # an autotrace.Variable's own `op=`, which refuses it
        return in_place(current, value)
    if is_mutable_array(current) and np.ndim(current) > 0:  # (a traced array too)
        raise StateWriteError(
            f"{where}: autotrace cannot change the array {what} in place ({symbol}=) in a "
            "differentiated function: values read from it earlier would change under the "
            f"derivative; assign it a new array instead (x = x {symbol} value)")
    return in_place(current, value) if isinstance(current, (list, dict)) else plain(
        current, value)


def _check_untraced(value, what: str, where: str) -> None:
    # Inside autotrace.function, the traced value becomes state of the graph
    # (runtime/object_slots.py), written back into the object after every call.
    if holds_traced(value) and not kept_as_graph_state(value, where):
        raise StateWriteError(
            f"{where}: a traced value written into the state of an object ({what}) would "
            "outlive the trace made of it (autotrace.function alone keeps such values, as "
            "state of its graph); keep state that a traced "
            "function changes in an autotrace.Variable, or compute it outside")


# Packages whose functions read no user's object from a global: NumPy's, autotrace's.
_NOT_READ = {"numpy", "cupy", "autotrace", "runtime", "transforms"}


def reads_object(callee, target, depth: int = 3) -> bool:
    """Whether calling `callee` may read `target` without being given it: through a global
    or closure variable of its code (or of the functions that code names, `depth` calls
    deep), an attribute of one, or an attribute of the object `callee` is a method of."""
    seen = set()

    def holds(value) -> bool:
        return _reaches(value, target)

    def reads(function, depth: int) -> bool:
        if isinstance(function, types.MethodType):
            if holds(function.__self__):
                return True
            function = function.__func__
        if not isinstance(function, types.FunctionType):
            method = getattr(type(function), "__call__", None)
            if isinstance(method, types.FunctionType) and not isinstance(function, type):
                return holds(function) or reads(method, depth)
            return False
        module = (getattr(function, "__module__", None) or "").split(".")[0]
        if function.__code__ in seen or module in _NOT_READ or \
                is_standard_library(function.__module__):
            return False
        seen.add(function.__code__)
        names = set()
        codes = [function.__code__]
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        values = [function.__globals__[n] for n in names if n in function.__globals__]
        values += [cell.cell_contents for cell in function.__closure__ or ()
                   if cell_filled(cell)]
        for value in values:
            if holds(value):
                return True
            if isinstance(value, types.ModuleType) and any(
                    getattr(value, n, None) is target for n in names):
                return True
            if depth > 0 and callable(value) and not isinstance(value, types.ModuleType) \
                    and reads(value, depth - 1):
                return True
        return False
    return reads(callee, depth)


# Values whose insides hold no user's object: not searched by `_reaches`.
_NOT_SEARCHED = (np.ndarray, np.generic, type, types.ModuleType, types.FunctionType,
                 types.BuiltinFunctionType, str, bytes, int, float, complex, type(None))


def _reaches(start, target, depth: int = 4, budget: int = 20000) -> bool:
    """Whether `target` is `start`, or is held by it through attributes of objects and items
    of lists, tuples, sets and dicts, `depth` steps deep (arrays, modules, classes and
    functions are not looked into)."""
    frontier, seen = [start], set()
    for _ in range(depth + 1):
        following = []
        for value in frontier:
            if value is target:
                return True
            if id(value) in seen or isinstance(value, _NOT_SEARCHED):
                continue
            seen.add(id(value))
            if len(seen) > budget:
                return True  # too large to search: it may
            if isinstance(value, dict):
                following.extend(value.values())
            elif isinstance(value, (list, tuple, set, frozenset)):
                following.extend(value)
            else:
                attributes = getattr(value, "__dict__", None)
                if isinstance(attributes, dict):
                    following.extend(attributes.values())
        frontier = following
    return False


def refuse_reads_of(callee, target, root: str, where: str) -> None:
    """Raise StateWriteError where calling `callee` may read `target`, whose state the
    differentiated function wrote a value into (its global `root`), without being given it
    (see `reads_object`): the gradient through what it reads would be lost. Generated code
    calls it before a call found only when it runs."""
    if reads_object(callee, target):
        raise StateWriteError(f"{where}: " + unread_message(
            root, getattr(callee, "__qualname__", callee)))


def unread_message(root: str, callee) -> str:
    return (f"autotrace cannot differentiate this call of {callee}: it reads {root!r} "
            "(through a global or closure variable, or an object it holds), into whose state "
            "the differentiated function writes a value that carries gradient, without being "
            "given it, and the gradient through what it reads there would be lost; pass "
            f"{root} to it, or write into the state through an object the call is given")
