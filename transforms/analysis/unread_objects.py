"""The objects a call is given that nothing after the call reads anything of.

A layer that is no differentiated argument writes into its own state as it runs: a batch
norm's running mean, made from the batch, a layer caching its input. The derivative of the
method follows such a write inside the method, as the outermost function's does
(transforms/analysis/given_state_writes.py), where its caller reads nothing of the object back
after the call: nothing differentiated then depends on what was written but through what the
call returns. `calls_leaving_objects_unread` finds, for each call in a function in A-normal
form, the objects it leaves unread: the object whose method it runs (`bn.forward(h)`,
`bn(h)`, `self.bn(h)`) and its arguments that are objects (`step(W, bn, X)`); generated code
hands them to the call's derivative (transforms/wrt.py `UNREAD`), which follows its writes
into them; into any other, a write that carries gradient stays refused.

An object reached from a name (`bn`, or, in A-normal form, from a root: `_t1 = self.enc`,
then `_t1.layer(x)`) is left unread where:

- its root is an object built in the function from a class (`bn = BatchNorm(2)`, which the
  front end writes `bn = build_object(BatchNorm, fields)`), a parameter
  whose caller reads nothing back (each of the outermost function's, and those of a function
  itself called so: `unread`), or, in the outermost function, a global or closure variable
  that no call of a function of the user's made after this one could read;
- no name that may hold the object, or an object in it, is read after the call (in the next
  iteration of a loop too): the names of the way from the root, and each name bound to what
  may hold it (an attribute, an item, a container, what a call of a function of the user's
  returns); arithmetic and NumPy's functions make new arrays, which hold no object; nor a
  global or closure variable that holds an object of the user's or a container;
- none of those names is handed to another call of a function of the user's, or stored into
  an object or container, which could keep it where a later read finds it.

A derivative that runs a call again from the state its first run saw (`with
state_as_at(_written1): ...`, runtime/derivatives/state_log.py) takes back what it writes
there, and sees nothing written after its log was taken: such a block counts as after the
calls made after its log alone.
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ...runtime.derivatives.built_objects import build_object
from ...runtime.derivatives.state_log import state_as_at, state_writes_log
from ..codegen.naming import walk_scope
from ..front.parsing import MISSING, resolve
from ..wrt import OBJECT
from .calls import classify

# Values that make a new array or number of their operands: no object they hold.
_NEW_VALUES = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)
# Kinds of callee (transforms/analysis/calls.py) whose results hold none of their arguments,
# and that keep none of them.
_NEW_RESULTS = ("rule", "constant")
_BLOCKS = ("body", "orelse", "finalbody")


def calls_leaving_objects_unread(body: list, namespace: dict, parameters: list,
                                 unread: set, outermost: bool) -> dict:
    """id(call) -> the objects a call in `body` (A-normal form) leaves unread (see the module
    docstring): OBJECT for the one whose method it runs, the positions and keywords of its
    arguments. unread: the parameters whose caller reads nothing back."""
    places = _Places(body, namespace)
    assigned: dict = {}
    for statement in places.statements:
        for node in walk_scope(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                assigned.setdefault(node.id, []).append(
                    statement.value if isinstance(statement, gast.Assign)
                    and len(statement.targets) == 1 and statement.targets[0] is node
                    else None)
    roots = set(parameters) & unread
    found = {}
    for statement in places.statements:
        call = statement.value if isinstance(statement, (gast.Assign, gast.Expr)) else None
        if not isinstance(call, gast.Call) or classify(call.func, namespace).kind in \
                _NEW_RESULTS:
            continue
        given = list(enumerate(call.args)) + [(k.arg, k.value) for k in call.keywords
                                               if k.arg is not None]
        receiver = call.func.value if isinstance(call.func, gast.Attribute) else call.func
        if not isinstance(call.func, gast.Name) or _may_be_object(call.func, namespace):
            given.insert(0, (OBJECT, receiver))
        after = None
        unread_here = []
        for which, value in given:
            if not isinstance(value, gast.Name):
                continue
            root, way = _way_from_root(value.id, assigned, namespace)
            if root is None:
                continue
            if after is None:
                after = places.after(statement)
            read_after, calls_after = after
            if set(way) & read_after or root not in assigned and root not in roots and not (
                    outermost and root not in parameters and not calls_after):
                continue
            if any(name not in assigned and name not in parameters
                   and _may_hold_objects(resolve(gast.Name(id=name, ctx=gast.Load(),
                                                           annotation=None,
                                                           type_comment=None), namespace))
                   for name in read_after):
                continue  # a global read after the call may hold the object too
            holders = _holders(way, places.region(statement), call, namespace)
            if holders is not None and not holders & read_after:
                unread_here.append(which)
        if unread_here:
            found[id(call)] = tuple(unread_here)
    return found


def _may_hold_objects(value) -> bool:
    """Whether `value`, found before running, may hold an object: not a module, function,
    class, number, string or array (nor a name found nowhere)."""
    return value is not MISSING and value is not None and not (
        inspect.ismodule(value) or inspect.isroutine(value) or isinstance(value, type)
        or isinstance(value, (bool, int, float, complex, str, bytes, np.ndarray, np.generic))
        or callable(value) and not hasattr(value, "__dict__"))


def _may_be_object(func, namespace: dict) -> bool:
    """Whether the callee `func`, a name, may be an object (whose class has __call__): not a
    function or class found before running."""
    value = resolve(func, namespace)
    return value is MISSING or not (inspect.isroutine(value) or isinstance(value, type))


def _way_from_root(name: str, assigned: dict, namespace: dict) -> tuple:
    """(the root, the names from `name` back to it: `_t1` of `_t1 = self.enc`, then `self`);
    the root None where it is none the call may leave unread: a name bound otherwise than
    once, to an attribute or item of another, or to an object built from a class."""
    way, current = [name], name
    while True:
        values = assigned.get(current)
        if values is None:  # a parameter, or a global
            return current, way
        if len(values) != 1 or values[0] is None:
            return None, way
        value = values[0]
        if isinstance(value, gast.Call):  # built here from a class of the user's
            return (current if _builds_object(value, namespace) else None), way
        while isinstance(value, (gast.Attribute, gast.Subscript)):
            value = value.value
        if not isinstance(value, gast.Name) or value.id in way:
            return None, way
        current = value.id
        way.append(current)


def _builds_object(call, namespace: dict) -> bool:
    """Whether `call` builds a new object of a class: `Layer(2)`, or, as the front end
    writes a class of the user's built in the function, `build_object(Layer, fields)`."""
    callee = resolve(call.func, namespace)
    if callee is build_object and call.args:
        callee = resolve(call.args[0], namespace)
    return isinstance(callee, type)


class _Places:
    """Where each statement of a body stands: what may run after it, and which statements
    may share objects with it (see the module docstring on `state_as_at` blocks)."""

    def __init__(self, body: list, namespace: dict):
        self.namespace = namespace
        self.statements = []
        self.later = {}  # id(statement) -> the statements that may run after it
        self.logs = {}  # id(statement) -> the state logs taken before it
        self.block_of = {}  # id(statement) -> the `state_as_at` block it is in, or None
        self.seen = {}  # id(statement) -> (names read, whether a user's call is made)
        self._walk(body, [], set(), None)

    def _walk(self, statements: list, outer: list, logs: set, block) -> None:
        logs = set(logs)
        for index, statement in enumerate(statements):
            self.statements.append(statement)
            later = statements[index + 1:] + outer
            self.later[id(statement)] = later
            self.logs[id(statement)] = set(logs)
            self.block_of[id(statement)] = block
            if isinstance(statement, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                continue
            restoring = self._log_restored(statement)
            inner_outer = [] if restoring is not None else (
                [statement] + later if isinstance(statement, (gast.For, gast.While))
                else later)
            for field in _BLOCKS:
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    self._walk(inner, inner_outer, logs,
                               statement if restoring is not None else block)
            if isinstance(statement, gast.Assign) and isinstance(statement.value, gast.Call) \
                    and resolve(statement.value.func, self.namespace) is state_writes_log:
                logs.add(statement.targets[0].id)

    def _log_restored(self, statement):
        """The log a `with state_as_at(log):` block restores the state to, or None."""
        if not isinstance(statement, gast.With):
            return None
        for item in statement.items:
            value = item.context_expr
            if isinstance(value, gast.Call) and value.args and \
                    isinstance(value.args[0], gast.Name) and \
                    resolve(value.func, self.namespace) is state_as_at:
                return value.args[0].id
        return None

    def _seen(self, statement, logs: set) -> tuple:
        """(the names `statement` reads, whether it calls a function of the user's), leaving
        out the blocks restoring a state as of a log in `logs`."""
        left_out = set()
        nodes = list(walk_scope(statement))
        for node in nodes:
            if self._log_restored(node) in logs and logs:
                left_out |= {id(n) for n in walk_scope(node)}
        nodes = [n for n in nodes if id(n) not in left_out]
        return ({n.id for n in nodes if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Load)},
                any(isinstance(n, gast.Call)
                    and classify(n.func, self.namespace).kind not in _NEW_RESULTS
                    for n in nodes))

    def after(self, statement) -> tuple:
        """(the names read, whether a user's call may be made) after `statement`."""
        logs = self.logs[id(statement)]
        reads, calls = set(), False
        for later in self.later[id(statement)]:
            key = (id(later), frozenset(logs))
            if key not in self.seen:
                self.seen[key] = self._seen(later, logs)
            read, call = self.seen[key]
            reads |= read
            calls = calls or call
        return reads, calls

    def region(self, statement) -> list:
        """The statements that may share objects with `statement`'s run: those of its
        `state_as_at` block, or, outside one, all but those of blocks that see nothing it
        writes."""
        block = self.block_of[id(statement)]
        logs = self.logs[id(statement)]
        if block is not None:
            return [s for s in self.statements if self._inside(s, block)]
        return [s for s in self.statements
                if self.block_of[id(s)] is None
                or self._log_restored(self._outermost_block(s)) not in logs]

    def _inside(self, statement, block) -> bool:
        current = self.block_of[id(statement)]
        while current is not None:
            if current is block:
                return True
            current = self.block_of[id(current)]
        return False

    def _outermost_block(self, statement):
        block = self.block_of[id(statement)]
        while self.block_of[id(block)] is not None:
            block = self.block_of[id(block)]
        return block


def _holders(way: list, statements: list, call, namespace: dict):
    """The names that may hold the object or an object in it (see the module docstring), or
    None where one of them is handed to another call or stored away."""
    holders = set(way)
    growing = True
    while growing:
        growing = False
        for statement in statements:
            if isinstance(statement, gast.For) and _reads(statement.iter) & holders:
                stored = {n.id for n in walk_scope(statement.target)
                          if isinstance(n, gast.Name)}
                growing = growing or not stored <= holders
                holders |= stored
                continue
            if not isinstance(statement, gast.Assign) or statement.value is call:
                continue
            if not _reads(statement.value) & holders:
                continue
            target = statement.targets[0]
            if not isinstance(target, gast.Name):
                return None  # stored into an item or attribute of something else
            if target.id not in holders and _may_hold(statement.value, holders, namespace):
                holders.add(target.id)
                growing = True
    for statement in statements:
        if isinstance(statement, (gast.Assign, gast.Expr)) and \
                isinstance(statement.value, gast.Call):
            nodes = [statement.value]
        else:
            nodes = [n for n in walk_scope(statement) if isinstance(n, gast.Call)
                     and not isinstance(statement, (gast.For, gast.While, gast.If,
                                                    gast.With))]
        for node in nodes:
            if node is call:
                continue
            handed = [a for a in node.args if _reads(a) & holders] + [
                k for k in node.keywords if _reads(k.value) & holders]
            if handed and classify(node.func, namespace).kind not in _NEW_RESULTS:
                return None
    return holders


def _may_hold(value, holders: set, namespace: dict) -> bool:
    """Whether `value`, which reads a name of `holders`, may be an object one holds."""
    if isinstance(value, _NEW_VALUES):
        return False
    if isinstance(value, gast.Call):
        if isinstance(value.func, gast.Attribute) and _reads(value.func.value) & holders:
            return True  # a method of the object: it may hand back an object it holds
        return classify(value.func, namespace).kind not in _NEW_RESULTS
    return True


def _reads(node) -> set:
    return {n.id for n in walk_scope(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}
