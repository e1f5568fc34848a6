"""Values stored where the function does not hold them by a name, for
transforms/analysis/aliases.py's analysis: an attribute of an object (`o.a = v`), a global
object or container (`K.a = v`, `G.append(v)`, `G[0] = v`), and what a called function stores
so (`K.keep(acc)`, whose `keep` does `self.a = a`).

An array stored so keeps its memory: a write into it through its own name (`acc += v`,
`acc[0] = v`) is seen through the object too (`K.a`), which autotrace, following values, would
give the old value. The object comes to hold the array, as a list does that the array is
appended to; a global object is a memory of its own, bound to its name from the store on, so
that a write that the global is read after is refused as one that another name reads
afterwards. A Python function called is read for the parameters it stores into another
parameter's object (`self`) or into a global, and the call makes the caller's argument there
(or the caller's global of that name, where it is the same object) hold what it was given.
A function of the user's called after the write reads the globals its code names
(`closures` in aliases.py): one call deep, not those that the functions it calls read.
These are methods of aliases.Sharing, mixed in from here to keep each module to one idea.
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ...runtime.derivatives.state_writes import write_state
from .argument_writes import CONTAINER_WRITES, IN_PLACE_METHODS, base_name, parameter_names
from .call_results import own_function, python_callee
from ..codegen.naming import walk_scope
from ..front.parsing import MISSING, resolve

# Methods of a list, dict or set that store what they are given into it.
_STORING = CONTAINER_WRITES | IN_PLACE_METHODS | {"add", "appendleft", "__setitem__"}
# Functions called are read for what they store this many calls deep (as for what they return).
_DEEPEST_CALLS = 3


class StoredValues:
    """Mixed into aliases.Sharing: values stored into objects and globals (see the module
    docstring)."""

    def global_memory(self, identifier: str) -> set:
        """The memory standing for the global object `identifier` names, bound to the name
        from here on (once something is stored into it)."""
        memory = ("global", identifier)
        self.outside_names.add(identifier)
        value = self.namespace.get(identifier)
        if isinstance(value, np.ndarray):  # (a value written into an array is copied)
            self.arrays.add(memory)
            self.plain.add(memory)
        elif isinstance(value, (list, tuple, dict)):
            self.containers.add(memory)
        if self.env is not None:
            self.env.setdefault(identifier, {}).setdefault(memory, self.statement)
        return {memory}

    def global_root(self, node) -> str | None:
        """The name of the global or closure object (an instance, a container, a class; not
        a module, a function or a number) that `node`, `K`, `K.a` or `G[0]`, is (inside of),
        else None."""
        root = base_name(node) if not isinstance(node, gast.Name) else node
        if root is None or root.id in self.locals:
            return None
        value = resolve(root, self.namespace)
        if value is MISSING or inspect.ismodule(value) or inspect.isroutine(value) or \
                isinstance(value, (int, float, complex, str, bytes, bool, type(None))):
            return None
        return root.id

    def globals_read_by_functions(self) -> dict:
        """The name of each Python function of the user's that the function reads (a global
        or closure variable) -> the global objects it reads by name, bound in this namespace
        to the same objects: a call of it reads them, and what a value made here was stored
        into there (not those that a function it calls reads)."""
        found = {}
        for node in (n for statement in self.body for n in walk_scope(statement)):
            if not isinstance(node, gast.Name) or node.id in found or node.id in self.locals:
                continue
            function = self.namespace.get(node.id)
            if not inspect.isfunction(function) or own_function(function):
                continue
            read = {name for name in _names_read(function.__code__)
                    if function.__globals__.get(name, MISSING) is self.namespace.get(name)
                    and self.global_root(gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                                   type_comment=None)) is not None}
            if read:
                found[node.id] = read
        return found

    def owners_of(self, node) -> set:
        """The memories that a value stored into an attribute or an item of `node` comes to be
        held by: `node`'s, or the global object's it is inside of."""
        root = self.global_root(node)
        return self.global_memory(root) if root is not None else self.value(node)

    def outside_read(self, node) -> bool:
        """Whether `node`, an attribute of a global (`K.a`), reads a global object that a value
        made here was stored into."""
        root = self.global_root(node)
        return root is not None and root in (self.env or {})

    def store_attribute(self, target, memories) -> None:
        """`o.a = v`: o (its memories) comes to hold v's `memories`."""
        self.store_into(self.owners_of(target.value), self.reach(memories))

    def store_into(self, owners, stored) -> None:
        for owner in owners:
            if owner not in self.plain:
                self.hold(owner, stored - {owner})

    def note_stores(self, node, given: dict) -> None:
        """What the call `node` stores of its arguments (`given`: id of an argument's node ->
        its memories) into a global container (`G.append(v)`), or, where it runs a Python
        function, into what that function stores its parameters into (see the module
        docstring)."""
        func = node.func
        arguments = node.args + [k.value for k in node.keywords]
        if not arguments or self.depth >= _DEEPEST_CALLS:
            return
        if resolve(func, self.namespace) is write_state and len(node.args) > 3:
            # (`K.a = v`, as the front end writes it: write_state(K, '.', ('a',), v, ...))
            self.store_into(self.owners_of(node.args[0]), self.reach(given[id(node.args[3])]))
            return
        if isinstance(func, gast.Attribute) and func.attr in _STORING and \
                self.global_root(func.value) is not None:
            self.store_into(self.owners_of(func.value),
                            self.reach(set().union(*(given.get(id(a), ()) for a in arguments))))
            return
        callee, before = python_callee(func, self.locals, self.namespace)
        receiver = None
        if callee is None and isinstance(func, gast.Attribute) and isinstance(
                func.value, gast.Name):  # a method of an object made here
            receiver = self.value(func.value)
            classes = {self.objects.get(memory) for memory in receiver}
            method = inspect.getattr_static(classes.pop(), func.attr, None) \
                if len(classes) == 1 and None not in classes else None
            callee, before = (method, 1) if inspect.isfunction(method) else (None, 0)
        if callee is None or own_function(callee) or any(
                isinstance(a, gast.Starred) for a in node.args):
            return
        summary = self.returned_parameters(callee)
        for position, parameter, holder in (summary[2] if summary is not None else ()):
            stored = self._given(node, position - before, parameter)
            if stored is None:
                continue
            stored = self.reach(given.get(id(stored), ()))
            if holder[0] == "global":
                if self.namespace.get(holder[1], MISSING) is holder[2]:
                    self.store_into(self.global_memory(holder[1]), stored)
                continue
            if holder[1] - before < 0:  # the object whose method it is
                owners = receiver if receiver is not None else self.owners_of(func.value) \
                    if isinstance(func, gast.Attribute) else set()
            else:
                owner = self._given(node, holder[1] - before, holder[2])
                owners = () if owner is None else self.owners_of(owner) if isinstance(
                    owner, (gast.Name, gast.Attribute)) else given.get(id(owner), ())
            self.store_into(owners, stored)

    @staticmethod
    def _given(node, position: int, parameter: str):
        """The argument of the call `node` that the parameter at `position` (of those after a
        method's object) gets, or None (the object, a default value)."""
        if position < 0:
            return None
        if position < len(node.args):
            return node.args[position]
        return next((k.value for k in node.keywords if k.arg == parameter), None)


def _names_read(code) -> set:
    """The global names `code` reads, with those of the functions and comprehensions it
    defines."""
    return set(code.co_names).union(*(_names_read(constant) for constant in code.co_consts
                                      if inspect.iscode(constant)))


def stored_parameters(sharing, function) -> tuple:
    """(position, parameter, holder) for each parameter of `function` (a def, which `sharing`
    read) whose argument it may store into another parameter's object, holder ("parameter",
    its position, its name), or into a global object, holder ("global", its name, the
    object)."""
    parameters = parameter_names(function)
    holders = [(("argument", name), ("parameter", position, name))
               for position, name in enumerate(parameters)]
    holders += [(("global", name), ("global", name, resolve(
        gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
        sharing.namespace))) for name in sorted(sharing.outside_names)]
    found = []
    for memory, holder in holders:
        held = sharing.held({memory})
        found += [(position, name, holder) for position, name in enumerate(parameters)
                  if ("argument", name) in held and holder[1:3] != (position, name)]
    return tuple(found)
