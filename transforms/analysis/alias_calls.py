"""The calls of transforms/analysis/aliases.py's analysis: what a call may return of its arguments
(the memories it may be or hold), and calls that write into their arguments where another
name reads that memory afterwards. These are methods of aliases.Sharing, mixed in from here
to keep each module to one idea; a Python function called is read with the same analysis, a
few calls deep.
"""
from __future__ import annotations

import collections
import functools

import gast
import numpy as np

from .argument_writes import (CONTAINER_WRITES, PARAMETERS_WRITTEN, base_name, call_writes,
                              enclosing_names_written, parameter_names, rebinds, write_text,
                              writes_into_arguments)
from .call_results import (ARRAY_MAKERS, CONTAINER_BUILTINS, NEW_PER_ARGUMENT, NEW_VALUE_BUILTINS,
                           NEW_VALUE_METHODS, NUMBER_OR_ARRAY_FUNCTIONS, NUMBER_OR_ARRAY_METHODS,
                           VIEW_FUNCTIONS, VIEWS_IN_A_LIST, copied, inexact_ufunc, is_one_of,
                           numpy_name, own_function, python_callee, shallow_copy,
                           viewed_arguments)
from .alias_stores import stored_parameters
from .given_functions import GivenFunctions, as_function
from ..codegen.naming import SCOPES
from ..front.parsing import MISSING, read_function, resolve
from ..front.function_caches import made_from
from ..codegen.codegen import to_source
from ..codegen.nodes import add_children

# Functions called are read to see which arguments they may return, this many calls deep.
_DEEPEST_CALLS = 3
# The attribute of one of autotrace's own functions that keeps what it may return.
_RETURNED = "__autotrace_returned_parameters__"
# Methods of a list or dict that give one of its items (or the default passed).
_ITEM_METHODS = {"pop", "get", "setdefault", "popitem"}
# Builtins whose result is surely a new list, tuple, dict or set, or an iterator whose items
# are its arguments' items (or tuples of them): never one of its arguments or their items.
_CONTAINER_MAKERS = {list, tuple, dict, set, frozenset, sorted, reversed, zip, enumerate,
                     shallow_copy, copied}


class CallSharing(GivenFunctions):
    """Mixed into aliases.Sharing: what calls share (see the module docstring)."""

    # An own function of autotrace's, read for what it returns, not for what its calls write
    returns_only = False  # (they reach `re`'s compiler: tracing `autotrace.forward(f)(x)` 13 s)

    def call(self, node) -> set:
        func = node.func
        arguments = [self.value(a) for a in node.args + [k.value for k in node.keywords]]
        reached = set().union(*(self.reach(a) for a in arguments))
        if isinstance(func, gast.Attribute) and func.attr == "at" and node.args and isinstance(
                resolve(func.value, self.namespace), np.ufunc):  # np.add.at(A, index, v)
            self.write(node.args[0], arguments[0], node, f"{_text(func)}(...)", in_place=True)
            return set()
        given = dict(zip(map(id, node.args + [k.value for k in node.keywords]), arguments))
        for written, what in call_writes(node):  # (a list's append: below, with what it holds)
            if not (isinstance(func, gast.Attribute) and written is func.value
                    and func.attr in CONTAINER_WRITES):
                self.write(written, given.get(id(written)) or self.value(written), node, what,
                           in_place=True)
        self.writes_by_callee(node)
        self.call_of_given_function(node)
        self.partials_given(node)
        self.writes_by_reduced(node, arguments)
        self.note_stores(node, given)  # (alias_stores.py)
        local = self.local_functions.get(func.id) if isinstance(func, gast.Name) else \
            func if isinstance(func, gast.Lambda) else None  # (a function defined here)
        nested = self.nested_writes(func.id) if isinstance(func, gast.Name) else \
            enclosing_names_written(as_function(func), self.namespace) \
            if isinstance(func, gast.Lambda) else None
        if nested is not None:
            for written, write in nested.items():
                self.refuse_call_writing(
                    node, self.reach(self.name_value(written)), written,
                    f"{written!r} in place ({write_text(write)}, line "
                    f"{self.location.line_of(write)})", getattr(func, "id", "the lambda"))
        if local is not None:
            self.refuse_parameters_written(node, self.local_writes(node, local), 0,
                                           getattr(func, "id", "the lambda"))
        numpy = numpy_name(func, self.namespace) if self.is_global(func) else None
        method = isinstance(func, gast.Attribute) and not self.is_global(func)
        owner = self.value(func.value) if method else set()
        if numpy is None and not (method and func.attr in NEW_VALUE_METHODS and self.is_plain(
                func.value, owner)):
            self.forget_keys()  # (a method or function may change a container it reaches;
            # NumPy's `x.sum()` of what is surely an array or a number changes none)
        uncopied = _may_not_copy(node)
        if numpy is not None:
            if uncopied:
                return arguments[0] if arguments else set()
            viewed = viewed_arguments(numpy, node)
            if viewed:
                return set().union(*(arguments[at] for at in viewed if at < len(arguments)))
            if numpy in NEW_PER_ARGUMENT and not any(
                    isinstance(a, gast.Starred) for a in node.args):
                return self.new_per_argument(node)
            if numpy in VIEWS_IN_A_LIST:  # a list of views: its items are the argument
                return self.new(node, self.reach(arguments[0]) if arguments else (),
                                container=True)
            ufunc = resolve(func, self.namespace)
            plain = isinstance(ufunc, np.ufunc) and ufunc.nout == 1
            return self.new(node, array=numpy in ARRAY_MAKERS, plain=plain or (is_one_of(
                ufunc, NUMBER_OR_ARRAY_FUNCTIONS) and bool(node.args) and self.is_plain(
                    node.args[0], arguments[0])), inexact=plain and inexact_ufunc(ufunc))
        if method:  # a value's method
            if func.attr in VIEW_FUNCTIONS or uncopied:
                return owner
            if func.attr in CONTAINER_WRITES:
                self.write(func.value, owner, node, f"{_text(func)}(...)", in_place=True)
                for memory in owner:
                    self.hold(memory, reached)
            if func.attr == "copy":
                return self.new(node, self.held(owner), container=owner <= self.containers,
                                plain=self.is_plain(func.value, owner))
            if func.attr in _ITEM_METHODS and owner and owner <= self.containers:
                return self.item(owner) | reached  # the item taken, or the default given
            if func.attr in NEW_VALUE_METHODS:  # `x.sum()` of an array: an array or a number
                return self.new(node, plain=func.attr in NUMBER_OR_ARRAY_METHODS
                                and self.is_plain(func.value, owner))
            return self.new(node, self.reach(owner) | reached) | self.reach(owner) | reached
        target = resolve(func, self.namespace) if self.is_global(func) else MISSING
        if is_one_of(target, NEW_VALUE_BUILTINS):
            return self.new(node)
        if is_one_of(target, CONTAINER_BUILTINS):
            return self.new(node, reached, container=is_one_of(target, _CONTAINER_MAKERS))
        if _builds_object(target):  # a new object, holding what it was given
            memories = self.new(node, reached)
            self.objects.update(dict.fromkeys(memories, target))
            return memories
        returned = self.local_function_result(node)
        if returned is None:
            returned = self.returned_by(node)
        if returned is not None:  # (what it may return whole, what a new value may hold)
            whole, held = returned
            return whole | (self.new(node, held) if held is not None else set())
        # An object, a closure, a function autotrace cannot read: its result may be or hold
        # any of its arguments, or what the called value holds.
        reached |= self.reach(self.value(func))
        return self.new(node, reached) | reached

    def new_per_argument(self, node) -> set:
        """The tuple of new arrays that `node` makes, one for each positional argument
        (`X, Y = np.meshgrid(x, y)`): each a memory of its own, noted by its position, so that
        a write into one grid is no write into another."""
        arrays = [self.new(node, array=True, plain=True, part=k) for k in range(len(node.args))]
        made = self.new(node, set().union(*arrays), container=True)
        self.keyed[next(iter(made))] = (len(arrays), dict(enumerate(arrays)))
        return made

    def returned_by(self, node):
        """What a call of a Python function whose source autotrace reads may return of its
        arguments: (the memories it may return whole, those a new value it returns may hold,
        or None where it returns no new value), or None where that is not known."""
        callee, before = python_callee(node.func, self.locals, self.namespace)
        if callee is None or self.depth >= _DEEPEST_CALLS or any(
                isinstance(a, gast.Starred) for a in node.args):
            return None
        summary = self.returned_parameters(callee)
        if summary is None:
            return None
        parameters, makes_new, _ = summary
        whole, held = set(), set()
        for position, parameter, returned_whole in parameters:
            position -= before
            if position < 0 and not isinstance(node.func, gast.Attribute):
                return None  # a bound method called by another name: its object unknown
            given = (node.func.value if position < 0 else node.args[position]
                     if position < len(node.args) else next(
                         (k.value for k in node.keywords if k.arg == parameter), None))
            memories = self.reach(self.value(given))  # none for a default value
            (whole if returned_whole else held).update(memories)
        return _result(whole, held, makes_new)

    def local_function_result(self, node):
        """What a call of a function defined here (a def or a lambda, bound once) may return
        of its arguments and of the names of this function it reads (their memories), or None
        where that is not known."""
        definition = self.local_functions.get(getattr(node.func, "id", None))
        if definition is None or self.depth >= _DEEPEST_CALLS or any(
                isinstance(a, gast.Starred) for a in node.args) or node.keywords:
            return None
        function = as_function(definition)
        body = function.body
        parameters = parameter_names(function)
        try:
            sharing = type(self)(function, self.location, self.namespace, self.depth + 1,
                               self.returns)
            read_here = {n.id for n in _walk(body) if isinstance(n, gast.Name)
                         and n.id in (self.env or {}) and n.id not in sharing.locals}
            for name in read_here:  # a name of this function: a memory standing for it
                sharing.env[name] = {("enclosing", name): function}
            sharing.block(body)
        except Exception:  # noqa: BLE001 - its own writes refused: nothing known here
            return None
        whole, held = set(), set()
        for memory in sharing.returned:
            if memory[0] == "enclosing":
                memories = self.reach(self.name_value(memory[1]))
            elif memory[0] == "argument":
                position = parameters.index(memory[1])
                if position >= len(node.args):
                    return None  # a default value: not followed here
                memories = self.reach(self.value(node.args[position]))
            else:
                continue
            (whole if memory in sharing.returned_whole else held).update(memories)
        return _result(whole, held, _makes_new(sharing))

    def returned_parameters(self, callee):
        """([(position, name, whole)] of the parameters whose argument the Python function
        `callee` may return (whole: itself, else held in what it returns), whether it may
        return a new value, what it stores (alias_stores.stored_parameters)); None where
        that is not known."""
        if callee.__code__ not in self.returns:
            # autotrace's own functions (the runtime helpers generated code calls: match,
            # accumulate_item, ...) are read once per kind of reading and depth, and kept on
            # the function: their source and their module's names do not change. A user's
            # function is read again by each analysis, as what its names hold may change.
            kept = made_from(callee, _RETURNED) if own_function(callee) else {}
            key = (type(self), self.depth)
            if key not in kept:
                kept[key] = self._read_returned_parameters(callee)
            self.returns[callee.__code__] = kept[key]
        return self.returns[callee.__code__]

    def _read_returned_parameters(self, callee):
        self.returns[callee.__code__] = None  # while it is read: a recursive call
        try:
            parsed = read_function(callee)
            sharing = type(self)(parsed.node, parsed.location, parsed.namespace,
                               self.depth + 1, self.returns)
            sharing.returns_only = own_function(callee)
            sharing.block(parsed.node.body)
        except Exception:  # noqa: BLE001 - no source, or its own writes refused
            return None
        return ([(position, parameter, ("argument", parameter) in sharing.returned_whole)
                 for position, parameter in enumerate(parameter_names(parsed.node))
                 if ("argument", parameter) in sharing.returned], _makes_new(sharing),
                stored_parameters(sharing, parsed.node))

    def writes_by_callee(self, node) -> None:
        """Refuse a call of a function that writes into its argument, which autotrace does
        not follow into the caller, where the argument's memory is read afterwards."""
        if self.returns_only:
            return
        callee, before = python_callee(node.func, self.locals, self.namespace)
        if callee is None:
            return
        self.callees.add(callee.__code__)
        self.refuse_parameters_written(node, self.callee_writes(node, callee, before), before,
                                       callee.__name__)

    def writes_by_reduced(self, node, arguments: list) -> None:
        """Refuse `functools.reduce(f, items[, initial])` where f writes into an argument
        (`def imul(a, b): a *= b; return a`), where a name that shares the items or the initial
        value (their memories: `arguments`) is read afterwards, as a call of f would be."""
        if not (node.args and self.is_global(node.func) and resolve(
                node.func, self.namespace) is functools.reduce) or any(
                isinstance(a, gast.Starred) for a in node.args):
            return
        function = node.args[0]
        local = self.local_functions.get(function.id) if isinstance(function, gast.Name) else \
            function if isinstance(function, gast.Lambda) else None
        returned = None  # what f may return of its arguments (None: any)
        if local is not None:
            name, before, written = _text(function), 0, self.local_parameters_written(local)
        else:
            callee, before = python_callee(function, self.locals, self.namespace)
            if callee is None:
                return
            name, written = callee.__name__, self.parameters_written(callee)
            summary = self.returned_parameters(callee) if written else None
            returned = None if summary is None else {p[0] - before for p in summary[0]}
        # Its first argument is the initial value (or the first item), then what it returned:
        # an item too where it may return its second argument; its second, the other items.
        items = node.args[1]
        shown = self.displayed.get(id(items)) if isinstance(items, (gast.List, gast.Tuple)) \
            and not any(isinstance(e, gast.Starred) for e in items.elts) else None
        values = [self.reach(m) for m in arguments[2:3] + (shown or [arguments[1]])]
        first = values[0] if shown is not None and values else set().union(*values)
        rest = set().union(*values[1:]) if shown is not None else first
        given = (first | rest if returned is None or 1 in returned else first, rest)
        for position, parameter, what, filename, line, *_ in written:
            if 0 <= position - before < 2:  # (reduce calls it with two arguments)
                self.refuse_call_writing(
                    node, given[position - before], None, f"the argument {parameter!r} of "
                    f"{name} in place ({what}, {filename}, line {line})", name)

    def local_parameters_written(self, local) -> list:
        """parameters_written's tuples for a function defined here (a def or a lambda): read
        once per analysis, not once per loop run, with the functions defined beside it, which
        it may call."""
        key = ("writes", id(local))
        if key not in self.returns:
            self.returns[key] = {}  # while it is read: a call of its own writes what it does
            self.returns[key] = self.writes_into_parameters(
                as_function(local), self.location, self.namespace, enclosing=self)
        parameters = parameter_names(as_function(local))
        return [(parameters.index(parameter), parameter, what, self.location.filename, line,
                 surely, items)
                for parameter, (what, line, surely, items) in self.returns[key].items()]

    def nested_writes(self, name: str, calling=frozenset()) -> dict | None:
        """The names of this function that the function defined here as `name` may change in
        place when it is called (self.nested), or None where no function defined here has that
        name: written by itself (argument_writes.enclosing_names_written) or by a function it
        calls that changes its argument or a name of this function, also one defined here
        (followed where it is not one of the functions `calling` it)."""
        if name not in self.nested:
            return None
        definition = self.local_functions.get(name)
        if definition is None or name in calling or isinstance(definition, gast.Lambda):
            return self.nested[name]
        calling = calling | {name}

        def written_by_call(call, own: set) -> list:
            func, found = call.func, []
            if isinstance(func, gast.Name) and func.id not in own:
                found += self.nested_writes(func.id, calling) or ()
            local = self.local_functions.get(func.id) if isinstance(func, gast.Name) and \
                func.id not in own else None
            callee, before = python_callee(func, own | self.locals, self.namespace)
            written = self.local_parameters_written(local) if local is not None else \
                self.parameters_written(callee) if callee is not None else ()
            for position, parameter, *_ in written:
                position -= before
                given = call.args[position] if 0 <= position < len(call.args) else next(
                    (k.value for k in call.keywords if k.arg == parameter), None)
                if given is not None and base_name(given) is not None:
                    found.append(base_name(given).id)
            return found
        return enclosing_names_written(as_function(definition), self.namespace, written_by_call)

    def refuse_parameters_written(self, node, written, before: int, callee: str) -> None:
        """Refuse the call `node` of a function that writes into the arguments `written`
        (parameters_written's), `before` arguments coming before those `node` gives, where
        the argument's memory is read afterwards."""
        for position, parameter, what, filename, line, surely, items in written:
            position -= before
            if position < 0:
                continue  # the method's object
            given = node.args[position] if position < len(node.args) else next(
                (k.value for k in node.keywords if k.arg == parameter), None)
            if given is None or any(isinstance(a, gast.Starred) for a in node.args):
                continue  # f(*args): which argument is which, the source does not say
            self.refuse_call_writing(
                node, self.reach(self.value(given)), getattr(given, "id", None),
                f"its argument {parameter!r} in place ({what}, {filename}, line {line})",
                callee, surely=surely, argument=given, items=items)

    def refuse_call_writing(self, node, written, given, change, callee, surely=True,
                            argument=None, items=0) -> None:
        """Refuse the call `node`, which makes `change` to the memories `written` (of the name
        `given`) that autotrace does not follow into this function, where a name that shares
        them is read afterwards. Where the change is `x op= v` into a name (not `surely`),
        which is in place only where x is an array or a list, that is checked when it runs,
        of the `argument` given (refuse_shared_write), where it is an expression that calls
        nothing: in place where it is an array of more than `items` dimensions (the change is
        into a name bound to an item of the parameter by that many integer indices, a NumPy
        number where the array has no more). A name the statement binds anew is read
        afterwards as what it binds (`a = normalize(a)`)."""
        if self.recorded is not None:
            return self.record(written, node, _text(node), surely)
        statement = self.statement
        rebound = {n.id for target in getattr(statement, "targets", [getattr(
            statement, "target", None)]) if isinstance(statement, (gast.Assign, gast.AnnAssign))
            for n in gast.walk(target) if isinstance(n, gast.Name)}
        later = set(self.live_after.get(id(statement), ())) - rebound
        beside = _read_beside(statement, node)
        for other in sorted(later | set(beside)):
            if other in self.env and self.reach(set(self.env[other])) & written:
                reader = f"{other!r}" if other == given else (
                    f"{other!r}, which shares its memory,")
                line = self.read_line(other, node) if other in later else \
                    self.location.line_of(beside[other])
                message = (f"{_text(node)} changes {change}, which autotrace does not follow "
                           f"into this function, and {reader} is read after it on line "
                           f"{line}; return the new value from {callee} instead")
                if surely or argument is None or any(
                        isinstance(n, gast.Call) for n in gast.walk(argument)):
                    raise self.location.error(node, message, "write into shared memory")
                self.guards.setdefault(id(statement), []).append(
                    (statement, message, CalledWith(_text(argument), items)))
                return

    def record(self, written, node, what: str, surely: bool, name=None) -> None:
        """Note a write into the memories `written` at `node` (where writes are noted, not
        refused): the first into each argument's, or one in place for more of its values
        where there is one (`_wider`). Where the write is `name op= v` (not `surely`), it is in
        place where the argument is an array of more dimensions than the integer indices that
        bound `name` to an item of it (ArrayItems.item_depth)."""
        for memory in written:
            if memory[0] == "argument":
                items = 0 if surely or name is None else self.item_depth(name, memory[1])
                known = self.recorded.get(memory[1])
                if known is None or _wider((surely, items), known[2:]):
                    self.recorded[memory[1]] = (what, self.location.line_of(node), surely,
                                                items)
                if not surely and self.checked_at is not None:
                    self.checked_at.setdefault(id(node), (memory[1], what))

    @classmethod
    def writes_into_parameters(cls, function, location, namespace, checked_at=None,
                               read=True, enclosing=None, given=None, depth=1) -> dict:
        """parameter -> (what, line, surely, items) for each parameter of `function` (a def) whose
        argument it may change in place while the parameter holds it: itself (`x[0] = v`,
        `x /= n`, `x.sort()`: argument_writes.names_written_in_place), through a name sharing
        its memory (`r = x[1:]` then `r *= 2.0`) or by a function it calls. Not `surely` where
        the write is `x op= v` into a name, in place only where x is an array or a list (one of
        more than `items` dimensions, where x is bound to an item of the argument: record);
        `checked_at`, where given, gets id(write) -> (parameter, what) for those. Code of
        autotrace's own (a derivative it generated; with `read` False, a helper generated code
        calls), whose writes into its arguments are its sweeps', is read for what its source
        writes itself (`x[0] = v`) alone. A function defined in the function `enclosing` reads
        (an analysis of it) calls the functions defined beside it as they write; a parameter
        of `given` (parameter -> parameters_written's tuples) stands for a function that
        writes so (given_functions.py), read `depth` calls deep."""
        found = {parameter: (write_text(write), location.line_of(write), not rebinds(write), 0)
                 for parameter, write in writes_into_arguments(function).items()}
        reader = cls(function, location, namespace, depth,
                     None if enclosing is None else enclosing.returns)
        reader.given_functions = given or {}
        if enclosing is not None:
            reader.local_functions = {
                **{name: definition for name, definition in enclosing.local_functions.items()
                   if name not in reader.locals}, **reader.local_functions}
        reader.recorded, reader.checked_at = {}, checked_at
        try:
            if read and not location.filename.startswith("<autotrace "):
                reader.block(function.body)
        except Exception:  # noqa: BLE001 - a construct the model does not read: what it
            pass  # noted before, with what the source says
        for parameter, (what, line, surely, items) in reader.recorded.items():
            if parameter == "self":
                continue  # (what a method writes through its object: object_state.py)
            if parameter not in found or _wider((surely, items), found[parameter][2:]):
                found[parameter] = (what, line, surely, items)
        return {parameter: found[parameter] for parameter in parameter_names(function)
                if parameter in found}

    @classmethod
    def parameters_written(cls, callee) -> tuple:
        """(position, parameter, what, file, line, surely, items) for each parameter of the Python
        function `callee` that it may write into while it holds the argument
        (writes_into_parameters); none where its source cannot be read. Read once per
        function (kept on it: its source is what it runs)."""
        made = made_from(callee, PARAMETERS_WRITTEN)
        if "written" in made:  # one of autotrace's helpers, whose writes are followed
            return made["written"]
        if cls not in made:
            made[cls] = ()  # while it is read: a call of its own writes what it does
            try:
                parsed = read_function(callee)
            except Exception:  # noqa: BLE001 - no source: nothing known, as for any other call
                return ()
            parameters = parameter_names(parsed.node)
            made[cls] = tuple(
                (parameters.index(parameter), parameter, what, parsed.location.filename, line,
                 surely, items) for parameter, (what, line, surely, items) in
                cls.writes_into_parameters(
                    parsed.node, parsed.location, parsed.namespace, read=not own_function(callee)).items())
        return made[cls]


class CalledWith(collections.namedtuple("CalledWith", "argument items")):
    """The subject of a check before a call of a function that may write into its argument
    (`x op= v` into its parameter): the argument's source, which refuse_shared_write is given,
    and how many integer indices bound the name written to an item of it (0: itself)."""


def _wider(write, known) -> bool:
    """Whether a write (surely, items), as CallSharing.record notes them, is in place for more
    of the argument's values than the `known` one: surely in place, or where it has fewer
    dimensions."""
    return (write[0], -write[1]) > (known[0], -known[1])


def functions_defined_once(nodes) -> dict:
    """name -> its def or lambda, for the names the function binds once, to one of those.
    `nodes`: those of the function's body, as `_walk` hands them out."""
    bindings = collections.defaultdict(list)
    for node in nodes:
        if isinstance(node, gast.FunctionDef):
            bindings[node.name].append(node)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            bindings[node.id].append(node)
        elif isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], gast.Name) and isinstance(node.value, gast.Lambda):
            bindings[node.targets[0].id].append(node.value)
    found = {}
    for name, bound in bindings.items():
        # `g = lambda ...` binds g twice here: its Name and its lambda
        definitions = [b for b in bound if isinstance(b, (gast.FunctionDef, gast.Lambda))]
        names = [b for b in bound if isinstance(b, gast.Name)]
        if len(definitions) == 1 and len(names) == (
                1 if isinstance(definitions[0], gast.Lambda) else 0):
            found[name] = definitions[0]
    return found


def lambda_writes(local_functions: dict, namespace: dict) -> dict:
    """name -> the names of the enclosing function its lambda writes into
    (argument_writes.enclosing_names_written), for each lambda of `local_functions`."""
    return {name: enclosing_names_written(as_function(definition), namespace)
            for name, definition in local_functions.items()
            if isinstance(definition, gast.Lambda)}


def _may_not_copy(node) -> bool:
    """Whether the call `node` may give back its input (or the method's object) for want of a
    copy: `copy=` other than True (NumPy's False and None copy only where they must), or
    astype's fifth positional argument so."""
    given = [k.value for k in node.keywords if k.arg == "copy"]
    if isinstance(node.func, gast.Attribute) and node.func.attr == "astype" and len(
            node.args) >= 5:
        given.append(node.args[4])
    return any(not (isinstance(value, gast.Constant) and value.value is True) for value in given)


def _builds_object(target) -> bool:
    """Whether calling `target` surely makes a new object of a class of the user's (one
    autotrace builds through its `__init__`): a class defined in Python, not NumPy's nor a
    builtin's subclass, with neither its own `__new__` nor a metaclass's `__call__`."""
    return isinstance(target, type) and type(target).__call__ is type.__call__ and (
        target.__new__ is object.__new__) and not (target.__module__ or "").startswith(
        ("numpy", "builtins")) and all(base.__module__ != "builtins" or base is object
                                       for base in target.__mro__)


def _makes_new(sharing) -> bool:
    """Whether the function `sharing` read may return a value it made (or a name of the
    function that encloses it), not only one of its arguments."""
    return any(memory[0] != "argument" for memory in sharing.returned_whole)


def _result(whole, held, makes_new):
    """A call's result (see CallSharing.returned_by): an argument held, not returned whole,
    is held by a new value."""
    return whole, (held if makes_new or held - whole else None)


def _read_beside(statement, call) -> dict:
    """The names `statement` reads outside `call`, a call in it, that see what the call
    changes: where the read runs after it (later in the expression, or in the block of an `if`
    or loop whose head makes the call), or keeps the memory until after it (`return out,
    fill(out)` returns the list fill appended to; `out[0]` an item of it). A read that is
    done with before the call (`np.sum(out) + fill(out)`) is not one. Name -> its first such
    read."""
    inside = {id(node) for node in gast.walk(call)}
    parents = {id(child): node for node in gast.walk(statement)
               for child in gast.iter_child_nodes(node)}
    holding = set()  # the call's enclosing nodes, up to the expression's root (no statement)
    node = call
    while id(node) in parents and not isinstance(parents[id(node)], gast.stmt):
        node = parents[id(node)]
        holding.add(id(node))
    end = (call.end_lineno, call.end_col_offset)
    found = {}
    for node in gast.walk(statement):
        if not isinstance(node, gast.Name) or not isinstance(node.ctx, gast.Load) or \
                id(node) in inside:
            continue
        held = node  # what the enclosing expression keeps of it: itself, an item, a view
        while id(held) in parents and isinstance(parents[id(held)], (
                gast.Subscript, gast.Attribute)) and parents[id(held)].value is held:
            held = parents[id(held)]
        in_expression = _up_to_statement(node, parents) == _up_to_statement(call, parents)
        if (node.lineno, node.col_offset) >= end or not isinstance(statement, gast.Expr) \
                and not in_expression:
            found.setdefault(node.id, node)  # after the call, or in a block run after the head
        elif id(parents.get(id(held))) in holding:
            found.setdefault(node.id, node)  # kept by the expression that makes the call too
    return found


def _up_to_statement(node, parents):
    """The statement-level expression holding `node`: its outermost ancestor below a
    statement."""
    while id(node) in parents and not isinstance(parents[id(node)], gast.stmt):
        node = parents[id(node)]
    return node


def _walk(statements):
    """The nodes of `statements`, not entering nested functions, classes or comprehensions."""
    todo = list(statements)
    pop, push = todo.pop, todo.append
    while todo:
        yield (node := pop())
        if not isinstance(node, SCOPES):
            add_children(node, push)


def _text(node) -> str:
    return to_source(node).strip()

