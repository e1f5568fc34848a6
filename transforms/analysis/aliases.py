"""Writes into memory that another name reads afterwards are errors, not wrong gradients.

autotrace follows values: `A[i] = v` gives A a new value, and `A += v` is read as `A = A + v`.
NumPy writes into memory, which other names may share: `B = A`, a view (`A[1:]`, `A.T`,
`A.reshape(...)`, `np.asarray(A)`, `for row in A`), a container or object holding A
(`L = [A]`, `{"a": A}`, `L.append(A)`, `P(A)`), what a function returns. Where such a name
is read after the write, NumPy's value and the one autotrace differentiates part ways and the
gradient would be wrong, so the write is refused, naming both lines. A write that no other
name reads afterwards is followed as it is, into an argument too.

`A += v` changes A in place only where A is an array or a list (a number gets a new value), and
the source does not say which. Unless A is surely an array (made by `np.zeros`, ...), such a
write is checked when it runs: `check_writes` returns it with its message, and the function
gets a call of `refuse_shared_write` before it (transforms/front/inplace.py). So is a name
read afterwards that was bound to an item of the array (`s = A[2]`): a NumPy number, which
the write leaves as it was, where A has one dimension, and a view of A where it has more
(`refuse_shared_item`); where the write is into a part of A (`A[i] = v`), the check refuses
such a view, or one by slices (`row = A[k, :]`), only where it meets the part written
(Gaussian elimination's `pivot = A[k]`, then `A[i] = A[i] - f * pivot` for i > k).

The analysis reads the function's own source, statement by statement. Each place where a value
is made (an expression, a parameter) is one memory; a name holds the memories it may be or view
(several after branches), and a memory may hold others (a list, a dict, an object). A Python
function called is read too, to see which of its arguments it may return (itself, or held in a
new value); what any other call returns may be or hold any of its arguments, unless it is
NumPy's and makes a new array, or a class of the user's, which makes a new object holding its
arguments (an attribute of it is one of those, not the object). Arithmetic makes a new value,
never an operand: only a list's or tuple's `+` and `*` and a set's or dict's `|`, `-`, `&`, `^`
make a container, which holds its operands' items, and where an operand is surely an array or
a number (a float, for `*`) the result is an array or a number. A loop's target and the names a
value is unpacked into are items of it: of a container, what it holds; of an array, views.
`o.a = v` makes o hold v, a global object stored into being a memory too (alias_stores.py);
`A[i] = v` makes A hold v, unless A is surely an array or a number (made by a ufunc, or by
arithmetic on those): an array copies v. Nor does A come to hold itself, written with its own
slice (`A[2:4] = A[1:3]`), unless A is surely a container (`L[0] = L`).

A loop that surely runs (`for i in range(2):`) leaves its names as its body does. This is the
transforms' one model of memory. Run over reverse mode's primal sweep without refusing anything
(memory_sharing), it says which names may share an array that a write changes item by item:
the items the write overwrites are saved and restored for the adjoint sweep where a rule reads
any of them (transforms/codegen/cleanup.py).
"""
from __future__ import annotations

import collections
import functools
import inspect

import gast

from .alias_calls import CallSharing, _text, _walk, functions_defined_once, lambda_writes
from .alias_items import ArrayItems
from .alias_keys import NO_KEY, KeyedItems, has_key, key_of
from .alias_stores import StoredValues
from .alias_messages import RefusalMessages, written_as
from .distinct_names import DistinctNames, Env, HoldsNoArrays, copy_env as _copy, env_names as _names, \
    join_envs as _join
from .argument_writes import (base_name, enclosing_names_written, operator_text, parameter_names,
                              rebinds)
from .call_results import NUMBERS_OF_AN_ARRAY, python_callee
from .index_kinds import advanced, selects_nothing, slices
from ..errors import Location
from .liveness import closure_reads, live_after, surely_runs
from ..front.parsing import MISSING, resolve
from ..codegen.nodes import walk

# The operators by which a list, tuple, set or dict makes a new container of its operands'
# items (`L + M`, `L * 3`, `S | T`, `D | E`); every other operator of Python's values and NumPy's
# arrays makes an array or a number.
_CONTAINER_OPERATORS = (gast.Add, gast.Mult, gast.BitOr, gast.Sub, gast.BitAnd, gast.BitXor)

# A loop's body is followed until what its names share stops growing (within a few runs).
_MOST_LOOP_RUNS = 64


def check_writes(function: gast.FunctionDef, location: Location, namespace: dict,
                 checked_callees: set) -> list:
    """Raise TransformError at the first write into memory that another name reads afterwards.

    Returns the checks to run before writes that may be such a write: (statement, message,
    None) for `A op= v` where A may be an array or a list (not a number), which
    `refuse_shared_write` checks; (statement, message, name) where the name read afterwards
    was bound to an item of A (`s = A[2]`), which `refuse_shared_item` checks. Adds to
    `checked_callees` the code of the functions called here whose writes were checked."""
    sharing = Sharing(function, location, namespace)
    if location.filename.startswith("<autotrace "):
        # A derivative autotrace generated: its function's writes, and the calls it makes
        # again, were checked.
        calls = [n for n in _walk(function.body) if isinstance(n, gast.Call)]
        callees = [python_callee(call.func, sharing.locals, namespace)[0] for call in calls]
        checked_callees |= {callee.__code__ for callee in callees if callee is not None}
        return []
    sharing.block(function.body)
    checked_callees |= sharing.callees
    return [guard for guards in sharing.guards.values() for guard in guards]


class Sharing(CallSharing, RefusalMessages, KeyedItems, ArrayItems, DistinctNames,
              StoredValues):
    """Which memories each name may share, statement by statement; refuses shared writes."""

    def __init__(self, function, location, namespace, depth=0, returns=None):
        self.location = location
        self.depth = depth  # how many calls deep, where a called function is read
        self.returns = {} if returns is None else returns  # see returned_parameters
        self.returned = set()  # the memories the function's return values may be or hold
        self.returned_whole = set()  # the memories they may be (not only hold)
        self.namespace = namespace
        parameters = parameter_names(function)
        body_nodes = list(_walk(function.body))  # (read twice below: walked once)
        self.locals = set(parameters) | {n.id for n in body_nodes if isinstance(n, gast.Name)
                                         and isinstance(n.ctx, gast.Store)}
        # name -> {memory: the statement that bound the name to it}; None where unreachable
        self.env = Env({p: {("argument", p): function} for p in parameters})
        self.pairs_kept = self.keeps_pairs(function)  # (transforms/analysis/distinct_names.py)
        self.holds = collections.defaultdict(set)  # memory -> memories it may hold
        self.arrays = set()  # memories that are surely arrays
        # Memories that are surely lists, tuples or dicts: an item of one is not the container
        # (changing the list leaves the item as it is), where an item of an array is a view.
        self.containers = set()
        # Memories that are surely an array or a number, made by a NumPy ufunc or by arithmetic
        # on those and numbers: a value written into one is copied, never held.
        self.plain = set()
        self.inexact = set()  # plain memories surely floats or complex: `L * v` is no repeat
        # Memories that are surely objects of a class of the user's (memory -> the class): an
        # attribute the object holds is not the object, where an attribute of an array (A.T)
        # is a view of it.
        self.objects = {}
        self.outside_names = set()  # the globals a value was stored into (alias_stores.py)
        self.body = function.body  # (live_after and reads are found when a write asks)
        self.loops = []  # per enclosing loop: [the envs at its continues, at its breaks]
        self.statement = None
        self.guards = {}
        self.callees = set()  # the code of the Python functions whose calls were checked
        self.local_functions = functions_defined_once(body_nodes)
        self.given_functions = {}  # a parameter standing for a function given that writes
        # a function defined here -> the names of this one it writes into (a def's: once read)
        self.nested = lambda_writes(self.local_functions, self.namespace)
        self.taken_at = {}  # (container's site, held memory's site) -> the statement
        # a list, tuple, set or dict display -> [(its item, the memories the item may be)]
        self.parts = {}
        self.displayed = {}  # a tuple or list display -> the memories each item may be
        self.keyed = {}  # a container's items by key (transforms/analysis/alias_keys.py)
        # id(an item's subscript) -> the sites of what its base held (in any run of a loop)
        self.base_held = {}
        # parameter -> its first write, where the writes are noted, not refused (a function
        # called: CallSharing.parameters_written); None where they are refused
        self.recorded = self.checked_at = None

    @functools.cached_property
    def live_after(self) -> dict:
        """id(statement) -> the names read after it (transforms/analysis/liveness.py), a
        nested function's name reading what the function reads."""
        return live_after(self.body, self.closures)

    @functools.cached_property
    def closures(self) -> dict:
        """A nested function's name -> the names of this function it reads when called; a
        global function's -> the global objects it reads (alias_stores.py)."""
        return {**self.globals_read_by_functions(), **closure_reads(self.body)}

    @functools.cached_property
    def reads(self) -> list:
        """(line, name) of each read of a name, in order: where errors say it is read."""
        return sorted((n.lineno, n.id) for n in _walk(self.body)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                      and getattr(n, "lineno", None) is not None)

    # --- values ---------------------------------------------------------------------------

    def reach(self, memories) -> set:
        """`memories` and every memory they hold, directly or through others."""
        found, todo = set(memories), list(memories)
        while todo:
            for held in self.holds.get(todo.pop(), ()):
                if held not in found:
                    found.add(held)
                    todo.append(held)
        return found

    def held(self, memories) -> set:
        return self.reach(set().union(*(self.holds.get(m, ()) for m in memories)))

    def item(self, memories) -> set:
        """The memories an item of a value in `memories` may be or view: of a container, what
        it holds; of an array (or what the source does not say), the array too."""
        return set().union(*(self.held({m}) if m in self.containers else self.reach({m})
                             for m in memories))

    def sliced(self, node, memories) -> set:
        """The memories `value[a:b]` may be or view: of an array, a view of it; of a list or
        tuple, a new one holding its items, never an item itself, so that `part[0] = v`
        changes neither the items nor what they hold. An object of the user's class may
        return anything its `__getitem__` reads: what it holds."""
        whole = {m for m in memories if m not in self.containers}
        objects = {m for m in whole if m in self.objects}
        items = self.held(memories - objects)
        made = self.new(node, items, container=True) if memories - self.arrays else set()
        return whole | self.reach(objects) | made

    def new(self, node, holding=(), array=False, container=False, plain=False,
            inexact=False, part=None) -> set:
        """The memory made at `node` (with `part`, that part of what it makes: a grid of
        np.meshgrid's). In a loop, what the last run made there (held by a list the loop
        appends to, say) becomes an older memory of its own: a write into the newest does not
        reach the old ones."""
        memory = ("new", id(node) if part is None else (id(node), part))
        if memory in self.holds or any(memory in held for held in self.holds.values()) or any(
                memory in memories for memories in self.env.values()):
            self.age(memory)
        self.hold(memory, holding)
        if array:
            self.arrays.add(memory)
        if container:
            self.containers.add(memory)
        if plain:
            self.plain.add(memory)
        if plain and inexact:
            self.inexact.add(memory)
        return {memory}

    def age(self, memory) -> None:
        self.forget_keys(memory)
        old = ("old", memory[1])
        rename = (lambda m: old if m == memory else m)
        for memories in self.env.values():
            if memory in memories:
                memories.setdefault(old, memories.pop(memory))
        for held, memories in self.holds.items():  # (only those holding it change)
            if memory in memories:
                self.holds[held] = {rename(m) for m in memories}
        if memory in self.holds:
            self.holds[old] |= self.holds.pop(memory)
        if memory in self.arrays:
            self.arrays.add(old)
        if memory in self.containers:
            self.containers.add(old)
        if memory in self.plain:
            self.plain.add(old)
        if memory in self.inexact:
            self.inexact.add(old)
        if memory in self.objects:
            self.objects[old] = self.objects[memory]

    def hold(self, memory, holding, keep_keys=False) -> None:
        """`memory` comes to hold `holding`; unless `keep_keys` (a store by a constant key,
        noted already), its items by key are forgotten."""
        if not keep_keys:
            self.keyed.pop(memory, None)
        for held in holding:  # where, for errors: `rows.append(A)`, more telling than `rows = []`
            self.taken_at.setdefault((memory[1], held[1]), self.statement)
        self.holds[memory].update(holding)

    def taking(self, memory, shared):
        """The statement where `memory`, or a memory it holds, took hold of one of `shared`;
        None where `memory` is one of them."""
        todo, seen = [memory], set()
        while todo:
            container = todo.pop(0)
            for held in self.holds.get(container, ()):
                if held in shared:
                    return self.taken_at.get((container[1], held[1]))
                if held not in seen:
                    seen.add(held)
                    todo.append(held)
        return None

    def held_now(self) -> dict:
        return {memory: set(held) for memory, held in self.holds.items() if held}

    def name_value(self, identifier) -> set:
        return set((self.env or {}).get(identifier, {}))

    def value(self, node) -> set:
        """The memories the value of expression `node` may be or view."""
        if isinstance(node, gast.Name):
            return self.name_value(node.id)
        if isinstance(node, (gast.Constant, gast.JoinedStr, gast.Lambda)) or node is None:
            return set()
        indexed = self.value(node.value) if isinstance(node, gast.Subscript) and isinstance(
            node.value, gast.Name) else None  # (a name's value: reading it changes nothing)
        if indexed and indexed <= self.arrays | self.plain and advanced(
                node.slice, self.name_value, self.arrays, self.namespace):
            self.value(node.slice)  # an array's advanced indexing: a new array
            return self.new(node, array=True, plain=True)
        if isinstance(node, gast.Subscript) and slices(node.slice):
            self.value(node.slice)
            base = self.value(node.value)
            self.base_held.setdefault(id(node), set()).update(m[1] for m in self.held(base))
            return self.sliced(node, base)
        if isinstance(node, (gast.Subscript, gast.Starred)):
            key = key_of(node.slice) if isinstance(node, gast.Subscript) else NO_KEY
            base = self.value(node.value)
            self.base_held.setdefault(id(node), set()).update(m[1] for m in self.held(base))
            if has_key(key):
                return self.item_at(base, key)
            self.value(getattr(node, "slice", None))
            return self.item(base)
        if isinstance(node, gast.Attribute):
            if node.value is not None and self.is_global(node) and not self.outside_read(node):
                return set()  # np.pi, a module's attribute
            if node.attr in NUMBERS_OF_AN_ARRAY:
                self.value(node.value)
                return set()  # integers and tuples of them: no memory
            owners = self.value(node.value)
            return set().union(*(
                self.held({m}) if _instance_attribute(self.objects.get(m), node.attr)
                else self.reach({m}) for m in owners))
        if isinstance(node, (gast.List, gast.Tuple, gast.Set, gast.Dict)):
            for key in getattr(node, "keys", ()):
                self.value(key)  # a key is hashable: it holds no array a write could change
            elements = node.values if isinstance(node, gast.Dict) else node.elts
            values = self.displayed[id(node)] = [self.value(e) for e in elements]
            self.parts[id(node)] = [(e, self.reach(v)) for e, v in zip(elements, values)]
            made = self.new(node, set().union(*(m for _, m in self.parts[id(node)])),
                            container=True)
            if not isinstance(node, gast.Set):
                self.note_display(node, next(iter(made)), values)
            return made
        if isinstance(node, (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)):
            for call in [n for n in _walk([node.elt if hasattr(node, "elt") else node.value])
                         if isinstance(n, gast.Call)]:
                self.call(call)  # `[rows.append(A) for ...]` writes into rows
            read = {n.id for n in walk(node) if isinstance(n, gast.Name)}
            return self.new(node, self.reach(set().union(*(self.name_value(r) for r in read))),
                            container=True)
        if isinstance(node, gast.BinOp):
            return self.arithmetic(node)
        if isinstance(node, (gast.BoolOp, gast.IfExp)):  # one of its operands
            parts = node.values if isinstance(node, gast.BoolOp) else [node.body, node.orelse]
            if isinstance(node, gast.IfExp):
                self.value(node.test)
            return set().union(*(self.value(p) for p in parts))
        if isinstance(node, gast.Call):
            return self.call(node)
        # unary operations, comparisons: new values
        parts = [self.value(c) for c in gast.iter_child_nodes(node) if isinstance(c, gast.expr)]
        return self.new(node, plain=isinstance(node, gast.UnaryOp) and self.is_plain(
            node.operand, parts[0]))

    def arithmetic(self, node) -> set:
        """The memory `a op b` makes: always a new value, never an operand. Only a list or tuple
        (`+`, `*` by an int) or a set or dict (`|`, `-`, `&`, `^`) makes a container, which
        holds its operands' items; where an operand is surely an array or a number (a float
        for `*`, which also repeats a list by an int), the result is an array or a number: a
        float or complex one where an operand is (a float ufunc's result, `2.0`)."""
        left, right = self.value(node.left), self.value(node.right)
        inexact = [_is_float(operand) or bool(memories) and memories <= self.inexact
                   for operand, memories in ((node.left, left), (node.right, right))]
        if not isinstance(node.op, _CONTAINER_OPERATORS) or any(
                self.is_plain(operand, memories) and (
                    not isinstance(node.op, gast.Mult) or floating
                    or (memories and memories <= self.arrays))
                for operand, memories, floating in ((node.left, left, inexact[0]),
                                                    (node.right, right, inexact[1]))):
            return self.new(node, plain=True, inexact=any(inexact) and all(
                self.is_plain(operand, memories) for operand, memories in (
                    (node.left, left), (node.right, right))))
        return self.new(node, self.held(left | right), plain=self.is_plain(
            node.left, left) and self.is_plain(node.right, right))

    def is_plain(self, node, memories) -> bool:
        """Whether expression `node`, whose value is `memories`, is surely an array or a
        number: a number written in the source, or made of plain memories alone."""
        return _is_number(node) or (bool(memories) and memories <= self.plain)

    def is_global(self, node) -> bool:
        base = node
        while isinstance(base, gast.Attribute):
            base = base.value
        return not (isinstance(base, gast.Name) and base.id in self.locals) and \
            resolve(node, self.namespace) is not MISSING

    # --- statements ---------------------------------------------------------------------

    def block(self, statements) -> None:
        for statement in statements:
            if self.env is None:
                return  # after a return, break or continue
            self.statement = statement
            self.run(statement)

    def run(self, node) -> None:
        if isinstance(node, gast.Assign):
            memories = self.value(node.value)
            bindings = self.same_objects(node)  # (`u, un = un, u`: which names stay apart)
            before = self.pairs_before(bindings)
            for target in node.targets:
                if _unpacks_display(target, node.value):  # `A[0], A[1] = A[1], A[0]`
                    self.bind_display(target, node.value, node, self.displayed[id(node.value)])
                else:
                    self.bind(target, memories, node)
            self.note_pairs(bindings, before)
        elif isinstance(node, gast.AnnAssign) and node.value is not None:
            self.bind(node.target, self.value(node.value), node)
        elif isinstance(node, gast.AugAssign):
            self.augmented(node)
        elif isinstance(node, gast.If):
            self.value(node.test)
            entry = _copy(self.env)
            self.block(node.body)
            after_body, self.env = self.env, entry
            self.block(node.orelse)
            self.env = _join(after_body, self.env)
        elif isinstance(node, (gast.For, gast.While)):
            self.loop(node)
        elif isinstance(node, gast.With):  # a name scope: its block, which always runs
            for bound in (n for item in node.items if item.optional_vars is not None
                          for n in walk(item.optional_vars) if isinstance(n, gast.Name)):
                self.forget_pairs(bound.id)  # (`with ... as a`: bound anew)
            self.block(node.body)
        elif isinstance(node, (gast.Break, gast.Continue)):
            exits = self.loops[-1][isinstance(node, gast.Break)]
            exits.append(self.env)
            self.env = None
        elif isinstance(node, gast.Return):
            whole = self.value(node.value)
            self.returned_whole |= whole
            self.returned |= self.reach(whole)
            self.env = None
        elif isinstance(node, gast.Expr):
            self.value(node.value)
        elif isinstance(node, gast.Delete):  # `del L[0]` moves the items after it
            self.forget_keys()
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            self.env[node.name] = {}
            self.forget_pairs(node.name)
            if isinstance(node, gast.FunctionDef):
                self.nested[node.name] = enclosing_names_written(node, self.namespace)

    def loop(self, node) -> None:
        if isinstance(node, gast.For):  # an item of what it runs over
            items = self.item(self.value(node.iter))
        first = surely_runs(node, self.namespace)  # (then not also what it held before)
        for _ in range(_MOST_LOOP_RUNS):
            entry, held, keys = _copy(self.env), self.held_now(), self.keys_now()
            self.loops.append(([], []))
            self.statement = node
            if isinstance(node, gast.While):
                self.value(node.test)
            else:
                self.bind(node.target, items, node)
            self.block(node.body)
            continues, breaks = self.loops.pop()
            self.env, first = _join(None if first else entry, *continues, self.env), False
            if self.env is None or _names(self.env) == _names(entry) and held == \
                    self.held_now() and keys == self.keys_now():  # (None: every path left)
                break
        self.env = _join(self.env, *breaks)

    def bind(self, target, memories, statement) -> None:
        if isinstance(target, gast.Name):
            self.env[target.id] = {memory: statement for memory in memories}
            self.forget_pairs(target.id)
        elif isinstance(target, (gast.Tuple, gast.List)):  # `a, b = pair`: items of the pair
            items = self.item(memories)  # (or those noted at each position: alias_keys.py)
            placed = self.items_by_position(memories, target.elts) or [items] * len(target.elts)
            for element, memories_there in zip(target.elts, placed):
                self.bind(element, memories_there, statement)
        elif isinstance(target, gast.Subscript):
            written = self.subscript_written(target)
            self.value(target.slice)
            if written and written <= self.arrays | self.plain and selects_nothing(
                    target.slice):
                return  # `A[1:1] = v` of an array: an empty part, nothing written
            self.write(target, written, statement, written_as(statement, f"{_text(target)} = ..."),
                       in_place=True)
            key = key_of(target.slice)
            for memory in written:
                # A container now holds the value; an array, a copy. Where the source does not
                # say which, a value that is the memory itself or a view of it (`x[2:4] =
                # x[1:3]`) is taken for an array's copy: only a surely container (`L[0] = L`)
                # comes to hold itself.
                if memory in self.plain:
                    continue
                holding = self.reach(memories)
                kept = self.store_key(memory, key, memories)
                self.hold(memory, holding if memory in self.containers else holding - {memory},
                          keep_keys=kept)
        elif isinstance(target, gast.Attribute):  # `o.a = v`, o an object
            self.store_attribute(target, memories)

    def subscript_written(self, target) -> set:
        """The memories `x[i] = v` writes into (`x[i][j] = v`: into x[i])."""
        base = base_name(target)
        written = self.owners_of(base) if base is not None else set()
        if isinstance(target.value, gast.Subscript):
            inner = target.value
            inner_key = key_of(inner.slice)
            written = (self.item_at(written, inner_key) if has_key(inner_key) and isinstance(
                inner.value, gast.Name) else self.reach(written))
        return written

    def augmented(self, node) -> None:
        memories = self.value(node.value)
        what = f"{_text(node.target)} {operator_text(node)} ..."
        if isinstance(node.target, gast.Subscript):
            self.bind(node.target, self.item_in_place(node, what, memories), node)
        if not isinstance(node.target, gast.Name):
            return
        own = self.name_value(node.target.id)
        self.refuse_object_in_place(node, own, what)
        surely_in_place = bool(own) and own <= self.arrays
        self.write(node.target, own, node, what, in_place=surely_in_place)
        for memory in own:  # `items += [A]`: the list now holds A
            self.hold(memory, self.held(memories))

    def item_in_place(self, node, what, memories) -> set:
        """`L[i] += v` where L is a list or dict runs the item's own `+=`: an array item is
        changed in place (then stored back), and so is every name sharing its memory (where L
        is an array, `bind` follows `L[i] = L[i] + v`). Returns what L then holds of v's
        `memories`: what v holds, where the items are arrays, numbers or containers."""
        owners = {m for m in self.value(node.target.value)
                  if m not in self.arrays and m not in self.plain}
        # The item's own `op=` changes the item, not what it holds (a list's changes the list,
        # not its items), unless it is an object of the user's class
        key = key_of(node.target.slice)
        items = self.item_at(owners, key, self.held) if has_key(key) else self.held(owners)
        self.refuse_object_in_place(node, items, what)
        items |= self.reach({m for m in items if m in self.objects})
        # Unless the items are surely arrays of a surely container, the check runs with the
        # values (refuse_shared_write): it evaluates the target once more, so an index that
        # calls something is refused here.
        calls = any(isinstance(n, gast.Call) for n in walk(node.target.slice))
        sure = (owners <= self.containers and items <= self.arrays) or calls
        if items:  # (a container a call returned may hold anything: checked when it runs)
            self.write(node.target, items, node, what, in_place=sure, item=True)
        self.check_other_items(node, owners, key, items, owners <= self.containers and items <= (
            self.arrays | self.plain), what)
        return self.held(memories) if items and items <= (
            self.arrays | self.plain | self.containers) else memories

    def write(self, target, written, node, what, in_place: bool, item=False) -> None:
        """Refuse (or, where `in_place` is not sure, check when it runs) a write into the
        memories `written`, at `node`, where another name read afterwards shares one."""
        if self.recorded is not None:
            return self.record(written, node, what, surely=in_place or not rebinds(node),
                               name=getattr(target, "id", None))
        name = base_name(target).id if base_name(target) is not None else None
        for other in sorted(self.live_after.get(id(self.statement), ())):
            if other == name or other not in self.env:
                continue
            for memory, bound in self.env[other].items():
                shared = self.reach({memory}) & written
                if not shared or self.unshared(name, other, memory, shared, written):
                    continue
                if memory not in shared:  # it holds what is written
                    bound = self.taking(memory, shared) or bound
                message = (self.item_message(other, shared, node, what) if item else
                           self.message(name, other, bound, shared, node, what, target))
                if not item and self.written_apart(name, other, written):
                    # (`u, un = un, u` in a loop: what u holds is asked when it runs)
                    self.guards.setdefault(id(node), []).append(
                        (node, message, HoldsNoArrays(other)))
                    continue
                checked = self.checked_when_run(other, memory, bound, target, node) \
                    if memory in shared else None
                if checked is not None:
                    self.guards.setdefault(id(node), []).append((node, message, checked))
                    continue
                if in_place:
                    raise self.location.error(node, message, "write into shared memory")
                self.guards.setdefault(id(node), []).append((node, message, None))
                return


# --- small pieces ---------------------------------------------------------------------------

def _unpacks_display(target, value) -> bool:
    """Whether `target = value` unpacks a tuple or list display item by item into as many
    targets, none starred (`a, b = x, y`)."""
    return isinstance(target, (gast.Tuple, gast.List)) and isinstance(
        value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts) and not any(
        isinstance(e, gast.Starred) for e in target.elts + value.elts)


def _is_number(node) -> bool:
    """Whether `node` is a number written in the source (`2.0`, not `True`)."""
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float, complex)) \
        and not isinstance(node.value, bool)


def _instance_attribute(cls, attribute) -> bool:
    """Whether `attribute` of an object of the user's class `cls` (None: not known to be one)
    is what its `__init__` set, or a constant of the class: not a method, which holds the
    object, nor a property or `__getattr__`, which may give anything."""
    if cls is None or any(inspect.getattr_static(cls, special, None) is not getattr(
            object, special, None) for special in ("__getattr__", "__getattribute__")):
        return False
    found = inspect.getattr_static(cls, attribute, MISSING)
    return found is MISSING or not (callable(found) or hasattr(found, "__get__"))


def _is_float(node) -> bool:
    """Whether `node` is a float or complex number written in the source (`2.0`, `-1.5`)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and isinstance(node.value, (float, complex))
