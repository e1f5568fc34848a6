"""Which item writes of a traced function autotrace could not follow, were a NumPy array
written with a traced value there.

Converted code turns `a[i] = v` into `a = set_item(a, i, v)` (transforms/control_flow/
control_flow.py). Where `a` is a NumPy array the function made (`a = np.zeros(3)`) and `v` is
traced, the result is a new traced value, bound to `a` alone: NumPy's write changes memory,
and every other name for that memory would keep the old contents. That is right where no
other name holds the memory, the common buffer (`h = np.zeros(n)`, `h[t] = ...` in a loop).
It is not where, on some path, one of these holds:
- another name read after the write shares the memory: `z = y`, a view (`y[1:]`, `rows[0]`,
  `out[:, 1]`) or a container or object holding it (`{"k": y}`, `[y]`);
- the memory may be an argument's: the caller holds it (a function called with a concrete
  array it writes into);
- the function does not make it: a global, what a call the model cannot read returns.

A traced `if`, loop or conditional expression may leave a name holding, on one path, a NumPy
array the function does not make (`B = G if c else C`, G a global; `B = G` then `if c: B =
x * 2.0`): its result takes the array over as a traced value, and a write into it afterwards
would leave the array as it was. `write_sharing` names the variables of such statements (and
the expressions) that may hold one, and their results refuse writes where a path did hold a
NumPy array (control_aliases.may_be_outside_array).

For those writes `write_sharing` gives the refusal that set_item raises when the write turns
out to be traced (runtime/tracing/control_concrete_arrays.py), naming the lines and saying how
to make the array traced where it is made (`np.zeros_like(x, shape=...)`), after which writes
through any name are followed. The model of memory is transforms/analysis/aliases.py's, run without
its refusals of derivatives.
"""
from __future__ import annotations

import types

import gast
import numpy as np

from .aliases import Sharing
from .argument_writes import parameter_names
from .distinct_names import copy_env as _copy, join_envs as _join
from .call_results import NEW_VALUE_METHODS
from ..codegen.codegen import to_source
from ..codegen.nodes import walk
from ..errors import Location
from ..front.parsing import MISSING, resolve

# NumPy's makers of arrays of a given shape -> the one that makes them like a traced value.
_TRACED_MAKERS = {np.zeros: "zeros_like", np.ones: "ones_like", np.empty: "empty_like",
                  np.full: "full_like"}

# Methods of an array that give a new one (a copy): what a name holds after `b = a.copy()`.
_NEW_ARRAY_METHODS = NEW_VALUE_METHODS | {"copy"}

_ADVICE = ("Make the array traced where it is made, so that a write through any name is "
           "followed: {made}")


def write_sharing(function: gast.FunctionDef, filename: str, namespace: dict) -> dict | None:
    """id(statement) -> {"unfollowed": the refusal} for each `name[index] = value` or
    `name[index] op= value` (name a local variable: the writes converted code sends through
    set_item) that autotrace could not follow were `name` a NumPy array and the write traced
    (see the module docstring); {"unfollowed": None} for one into memory the function may not
    have made (a view of it is checked when the write runs); nothing for a write into an array
    the function made, which no other name read afterwards shares. For each `if`, `while` and
    `for` statement, {"outside": the names it assigns that may hold memory the function does
    not make after it, "written": {each name whose memory a write in it may change through
    another name (a container's item, a view made in it): the names that may share or hold
    that memory before it}, "made": the names that hold, when it starts, a list or dict the
    function makes, "shared": those of them another name holds too}; {"outside": True} for
    each conditional expression that may give such memory; and, for a write in an `if` or
    loop that no name is seen sharing, {"watched": the names read after it}, which the
    statement's test asks when it runs; for a write whose sharers are all apart from the name
    written (transforms/analysis/distinct_names.py), {"holders": those names}, whose values,
    when it runs, it is refused for only where one may hold an array; for each `a op= v`
    where `a` may hold an array,
    {"array": True} (and its refusal, as a converted write's). None where the model cannot
    read the function."""
    analysis = _WriteSharing(function, Location(filename, 1, function.name), namespace)
    try:
        analysis.block(function.body)
    except Exception:  # noqa: BLE001 - a construct the model does not read: nothing known
        return None
    found = {key: {"unfollowed": message} for key, message in analysis.refusals.items()
             if message is not False}
    for key, names in analysis.sharers.items():
        if names and found.get(key, {}).get("unfollowed"):
            found[key]["sharers"] = names
            if key in analysis.holders:
                found[key]["holders"] = names
    for key, names in analysis.watched.items():
        if names and not found.get(key, {}).get("unfollowed"):
            found.setdefault(key, {})["watched"] = tuple(sorted(names))
    for key, names in analysis.outside.items():
        if names:
            found.setdefault(key, {})["outside"] = tuple(sorted(names))
    for key, names in analysis.written_through.items():
        if names:
            found.setdefault(key, {})["written"] = {
                name: tuple(sorted(holders)) for name, holders in sorted(names.items())}
    for key, names in analysis.made.items():
        if names:
            found.setdefault(key, {})["made"] = tuple(sorted(names))
            found[key]["shared"] = tuple(sorted(name for name in names if names[name]))
    found.update((key, {"outside": True}) for key in analysis.outside_expressions)
    for key in analysis.arrays_in_place:
        found.setdefault(key, {})["array"] = True
    return found


def converted_write(statement) -> bool:
    """Whether `statement` is a write converted code sends through set_item: `a[i] = v` or
    `a[i] op= v` into a name."""
    targets = statement.targets if isinstance(statement, gast.Assign) else \
        [statement.target] if isinstance(statement, gast.AugAssign) else []
    return len(targets) == 1 and isinstance(targets[0], gast.Subscript) and isinstance(
        targets[0].value, gast.Name)


def name_in_place(statement) -> bool:
    """Whether `statement` is `a op= v` into a name: in place where `a` is an array. Converted
    code leaves it as it is; in a traced `if` or loop, which takes a NumPy array as a graph
    value, the write is traced as one into a set_item would be."""
    return isinstance(statement, gast.AugAssign) and isinstance(statement.target, gast.Name)


def written_name(statement) -> str:
    """The name a converted write or an `a op= v` writes into."""
    target = statement.targets[0] if isinstance(statement, gast.Assign) else statement.target
    return target.id if isinstance(target, gast.Name) else target.value.id


def _text(node) -> str:
    return to_source(node).strip().splitlines()[0]


class _WriteSharing(Sharing):
    """aliases.Sharing noting, instead of refusing, the writes it could not follow."""

    def __init__(self, function, location, namespace, depth=0, returns=None):
        super().__init__(function, location, namespace, depth, returns)
        # id(statement) -> its refusal; None: into memory it may not make; False: followed
        self.refusals = {}
        parameters = [p for p in parameter_names(function) if p not in ("self", "cls")]
        self.traced_name = parameters[0] if parameters else "x"
        self.escaping = _escaping(function, namespace)
        self.made_at = {id(node): node for node in walk(function)}
        self.copies = set()  # id() of the calls `a.copy()` and the like
        # id(if, while or for statement) -> the names it assigns that may hold memory the
        # function does not make after it; the conditional expressions that may give some
        self.outside = {}
        self.outside_expressions = set()
        # the if, while and for statements being read, innermost last; id(one) -> the names
        # whose memory a write in it may change (`items[0] -= v` changes v's, `w = v[1:]` then
        # `w *= 2.0` too)
        self.enclosing = []
        self.changed_inside = {}
        self.written_through = {}  # id(statement) -> {name: the names sharing its memory}
        # id(statement) -> {each name holding a list or dict made here on entry: whether another
        # name holds it too}
        self.made = {}
        self.sharers = {}  # id(write) -> the names its refusal names as sharing the memory
        # the writes whose sharers are all apart from the name written (distinct_names.py):
        # refused when they run only where one of them may hold an array
        self.holders = set()
        self.watched = {}  # id(write in an if or loop) -> the names read after it
        self.arrays_in_place = set()  # id(`a op= v`) where `a` may be an array

    def name_value(self, identifier) -> set:
        if identifier in self.locals:
            return super().name_value(identifier)
        return _outside(identifier, resolve(gast.Name(id=identifier, ctx=gast.Load(),
                                                      annotation=None, type_comment=None),
                                            self.namespace))

    def value(self, node) -> set:
        if isinstance(node, gast.Attribute) and node.value is not None and self.is_global(node):
            return _outside(_text(node), resolve(node, self.namespace))  # a module's array
        memories = super().value(node)
        if isinstance(node, gast.IfExp) and self.not_made(memories):
            self.outside_expressions.add(id(node))
        return memories

    def not_made(self, memories) -> bool:
        """Whether `memories` may be or hold memory the function does not make: a global's,
        an object's from outside, an argument's."""
        return any(memory[0] in ("outside", "argument") for memory in self.reach(memories))

    def run(self, node) -> None:
        if isinstance(node, (gast.If, gast.While, gast.For)):
            entry = _copy(self.env)
            self.enclosing.append(node)
            try:
                super().run(node)
            finally:
                self.enclosing.pop()
            assigned = {n.id for n in walk(node)
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            if self.env is not None:  # (in a loop: the names found in any run of it)
                self.outside.setdefault(id(node), set()).update(
                    name for name in assigned if self.not_made(self.env.get(name, {})))
            if entry is not None:  # lists and dicts it makes (in a loop: on every run)
                made = {name: self.shared_container(entry, name) for name in entry
                        if self.made_container(entry[name])}
                known = self.made.get(id(node), made)
                self.made[id(node)] = {name: known[name] or shared  # (shared on any run)
                                       for name, shared in made.items() if name in known}
            if entry is not None:  # those changed through another name, and who share them
                found = self.written_through.setdefault(id(node), {})
                for name in self.changed_inside.get(id(node), ()):
                    if name in entry and name not in assigned and entry[name]:
                        found.setdefault(name, set()).update(
                            other for other, memories in entry.items() if other != name
                            and set(entry[name]) & self.reach(set(memories)))
            return
        # `a, b = np.zeros(3), np.zeros(3)` binds each name to its own array, where the model
        # takes each name for any item of the tuple (as after `a, b = pair`).
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], (gast.Tuple, gast.List)) and isinstance(
                node.value, (gast.Tuple, gast.List)) and len(node.targets[0].elts) == len(
                node.value.elts) and not any(isinstance(part, gast.Starred) for part in (
                *node.targets[0].elts, *node.value.elts)):
            values = [self.value(element) for element in node.value.elts]
            bindings = self.same_objects(node)  # (`u, un = un, u`: which names stay apart)
            before = self.pairs_before(bindings)
            for target, memories in zip(node.targets[0].elts, values):
                self.bind(target, memories, node)
            self.note_pairs(bindings, before)
            return
        if isinstance(node, gast.Try):  # the handlers from any point of the body
            entry = _copy(self.env)
            self.block(node.body)
            self.block(node.orelse)
            exits = [self.env]
            for handler in node.handlers:
                self.env = _join(entry, exits[0])
                self.block(handler.body)
                exits.append(self.env)
            self.env = _join(*exits)
            self.block(node.finalbody)
            return
        super().run(node)

    def made_container(self, memories) -> bool:
        """Whether `memories` (a name's) are surely a list or dict the function makes."""
        return bool(memories) and all(memory[0] in ("new", "old") and memory in self.containers
                                      for memory in memories)

    def shared_container(self, env, name) -> bool:
        """Whether `name` holds, in `env`, a list or dict the function makes which another name
        holds too, or which holds one another name holds (`d2 = d`, `outer = [d]`), or which
        may be held where the model does not follow (`box.d = d`)."""
        if name in self.escaping:
            return True
        memories = env[name]
        mine = {memory for memory in self.reach(set(memories)) if memory in self.containers}
        return any(mine & self.reach(set(others)) for other, others in env.items()
                   if other != name)

    def write(self, target, written, node, what, in_place: bool, item=False) -> None:
        if self.enclosing and self.env is not None:
            # names whose memory this may change in place, through another name
            changed = {other for other, memories in self.env.items() if any(
                memory in written and not self.unshared(
                    written_name(node) if converted_write(node) or name_in_place(node)
                    else None, other, memory, written & self.reach({memory}), written)
                for memory in memories)}
            for statement in self.enclosing:
                self.changed_inside.setdefault(id(statement), set()).update(changed)
        if self.enclosing and (converted_write(node) or name_in_place(node)) and not (
                written and written <= self.containers | self.plain):
            # the names read after it, which the statement's test asks, when it runs, whether
            # they hold the array written (the model does not follow every way: `o.a = a`);
            # not for an item of a list or dict, which changes no array in place
            self.watched.setdefault(id(node), set()).update(
                set(self.live_after.get(id(self.statement), ())) - {written_name(node)})
        if self.refusals.get(id(node)):
            return  # (in a loop: run again until a refusal is found, or the loop settles)
        if item:
            # `d[k] op= v` changes the array item in place; where the statement is traced, its
            # variable d (a list or dict) holds it as a traced value, and the others sharing
            # it keep the old contents
            if self.enclosing and converted_write(node):
                self.refusals[id(node)] = self.refusal(written_name(node), written, node,
                                                       item=True)
            return
        if name_in_place(node):
            # A number or a container is no array written in place. Where the statement is
            # traced, the others sharing the memory are not its variables, and keep the old
            # contents; where it runs in Python, a NumPy array given a traced value becomes a
            # traced one bound to its name alone (converted code's in_place_target), which
            # the converted write's rules decide, below.
            if written <= (self.containers | self.plain):
                self.refusals[id(node)] = False
                return
            self.arrays_in_place.add(id(node))
            if self.enclosing:
                self.refusals[id(node)] = self.refusal(written_name(node), written,
                                                       node) or False
                return
        elif not converted_write(node):
            return
        if written and written <= self.containers:
            # `d[k] = v` into a list or dict the function made: a traced statement changes it
            # in place after it (runtime/tracing/control_containers.py)
            self.refusals[id(node)] = False
            return
        refusal = self.refusal(written_name(node), written, node)
        if refusal is None and all(self.made_here(memory) for memory in written):
            refusal = self.refusals.get(id(node), False)  # followed
        self.refusals[id(node)] = refusal

    def call(self, node) -> set:
        memories = super().call(node)
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr in _NEW_ARRAY_METHODS and not \
                self.is_global(func):  # `a.copy()`, `a.astype(...)`: a new array
            self.copies.add(id(node))
        return memories

    def made_here(self, memory) -> bool:
        """Whether `memory` is surely a new array or number the function made: by NumPy, by
        arithmetic, or as a copy of a value."""
        return memory in self.arrays or memory in self.plain or (
            memory[0] in ("new", "old") and memory[1] in self.copies)

    def refuse_call_writing(self, node, written, given, change, callee, surely=True,
                            argument=None, items=0) -> None:
        """A call writing into its argument: the callee's own set_item refuses it (its
        argument is the caller's memory)."""

    def refusal(self, name, written, node, item=False) -> str | None:
        """Why a traced write into `written` (through the name `name`, or with `item` through
        an item of it) at `node` is not followed."""
        sharing = [(other, memory, bound)
                   for other in sorted(self.live_after.get(id(self.statement), ()))
                   if other != name and other in self.env
                   for memory, bound in self.env[other].items()
                   if self.reach({memory}) & written and not self.unshared(
                       name, other, memory, self.reach({memory}) & written, written)]
        # (a traced statement's test checks that they share it when it runs: a name the model
        # takes for a view, `b = a[0]`, may hold a copy)
        self.sharers[id(node)] = tuple(sorted({other for other, _, _ in sharing}))
        if sharing and not item and all(self.written_apart(name, other, written)
                                        for other, _, _ in sharing):
            self.holders.add(id(node))
        else:
            self.holders.discard(id(node))
        if sharing:
            other, memory, bound = sharing[0]
            bound = self.taking(memory, written) or bound
            own = next((f" ({self.shown(own)})" for m, own in self.env[name].items()
                        if self.reach({m}) & written), "")
            into = f"an item of {name!r}" if item else f"the NumPy array {name!r}"
            return (f"this writes traced values into {into}{own}, whose memory {other!r} "
                    f"shares ({self.shown(bound)}) and reads after it, on line "
                    f"{self.read_line(other, node)}: autotrace makes {name!r} alone a new "
                    f"traced value, and {other!r} would keep the old contents. "
                    + self.advice(written))
        parameters = sorted(m[1] for m in written if m[0] == "argument")
        if parameters:
            return (f"this writes traced values into the NumPy array {name!r}, which may be "
                    f"the argument {parameters[0]!r} of {self.location.name}: autotrace "
                    f"cannot make the caller's array traced in place, and the caller would "
                    f"see the old contents. Make the array traced where the caller makes it "
                    f"(np.zeros_like(x, shape=...), x a traced value), or write into a copy "
                    f"made here and return it ({name} = {name}.copy())")
        if not written or any(memory[0] == "outside" for memory in written):
            bound = next(iter(self.env.get(name, {}).values()), None)
            made = f" ({self.shown(bound)})" if isinstance(bound, gast.stmt) else ""
            return (f"this writes traced values into {name!r}, an array the function does "
                    f"not make{made}: autotrace cannot tell which other names or objects hold "
                    f"it, and cannot make it traced in place for them. Make it traced where "
                    f"it is made (np.zeros_like({self.traced_name}, shape=...)), or write "
                    f"into a copy made here ({name} = {name}.copy())")
        return None

    def shown(self, statement) -> str:
        if isinstance(statement, gast.FunctionDef):
            return "an argument"
        return f"{_text(statement)}, line {self.location.line_of(statement)}"

    def advice(self, written) -> str:
        """How to make the array traced where it is made: its maker's `_like` form, or the
        value it is made of plus traced zeros. Not a copy's (`u0.copy()`): a copy of a traced
        value is traced, and zeros in its place would lose the values."""
        made_by = [self.made_at.get(memory[1]) for memory in written
                   if memory[0] in ("new", "old") and memory[1] not in self.copies]
        made_by = sorted((made for made in made_by if isinstance(made, gast.Call)),
                         key=lambda made: (_TRACED_MAKERS.get(_resolved(
                             made.func, self.namespace)) is None, getattr(made, "lineno", 0)))
        for made in made_by:
            maker = _TRACED_MAKERS.get(_resolved(made.func, self.namespace))
            if maker is not None and made.args:
                # np.full(shape, fill, dtype) -> np.full_like(x, fill, dtype, shape=shape)
                shape, *rest = made.args
                arguments = [self.traced_name, *map(_text, rest), f"shape={_text(shape)}",
                             *(f"{k.arg}={_text(k.value)}" for k in made.keywords)]
                return _ADVICE.format(made=f"np.{maker}({', '.join(arguments)}) in place of "
                                           f"{_text(made)} (line {self.location.line_of(made)})")
            return _ADVICE.format(made=f"np.zeros_like({self.traced_name}, shape=...) + "
                                       f"{_text(made)} in place of {_text(made)} (line "
                                       f"{self.location.line_of(made)})")
        return _ADVICE.format(made=f"np.zeros_like({self.traced_name}, shape=...)")


def _escaping(function, namespace) -> set:
    """The names `function` stores where the model of memory does not follow them: as an
    object's attribute (`box.d = d`, `setattr(box, "d", d)`)."""
    found = set()
    for node in walk(function):
        if isinstance(node, gast.Assign) and any(
                isinstance(target, gast.Attribute) for target in node.targets):
            found |= {n.id for n in walk(node.value) if isinstance(n, gast.Name)}
        elif isinstance(node, gast.Call) and _resolved(node.func, namespace) is setattr:
            found |= {n.id for argument in node.args[2:] for n in walk(argument)
                      if isinstance(n, gast.Name)}
    return found


def _outside(label: str, value) -> set:
    """The memory of `value`, what a global name or a module's attribute `label` holds: one
    outside the function where it is an array, a container or an object (which may hold
    arrays), else none."""
    if value is MISSING or callable(value) or isinstance(value, (
            types.ModuleType, type, str, bytes, int, float, complex, bool, type(None),
            np.generic)):
        return set()
    return {("outside", label)}


def _resolved(func, namespace):
    """What `func` names, where that is hashable (else None)."""
    try:
        value = resolve(func, namespace)
        hash(value)
    except Exception:  # noqa: BLE001 - an attribute that raises, an unhashable value
        return None
    return value
