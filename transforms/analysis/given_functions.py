"""Functions handed to a call as arguments, which the function called may call on its other
arguments: `apply(set_first, buf)`, where `apply(fn, b)` runs `fn(b, v)` and `set_first(b, v)`
does `b[0] = v`, writes into `buf` as surely as `set_first(buf, v)` does. What the function
called writes is read again with its parameter standing for the function given (its own
writes into its arguments: alias_calls.CallSharing.parameters_written), so that the caller
refuses the call where it reads `buf` afterwards, as it refuses the direct call. A function
handed on again (`apply1(fn, b)` calling `apply2(fn, b)`) is followed the same way.

These are methods of aliases.Sharing, mixed in from here; `given_functions` (parameter ->
the writes of the function its argument is) is set where a function called is read. What a
function called writes, given such functions, is read once per set of them (`written_given`);
past _DEEPEST_HANDED_ON calls, it is taken to write into every other argument.
"""
from __future__ import annotations

import collections
import functools
import inspect

import gast

from .argument_writes import numpy_function_writes, parameter_names
from .call_results import own_function, python_callee
from ..codegen.codegen import to_source
from ..codegen.naming import walk_scope
from ..front.function_caches import made_from
from ..front.parsing import parse_function, resolve

# Functions handed on are followed this many calls deep (a function handing itself its own
# argument again, recursively, stops there): past it, the function called may write into any
# argument it is given beside them.
_DEEPEST_HANDED_ON = 6
# What a function called writes into its arguments, given functions that write into theirs:
# kept on it (its source is what it runs), keyed by the functions given and the depth.
_WRITTEN_GIVEN = "__autotrace_written_given__"


class GivenFunctions:
    """Mixed into aliases.Sharing: the writes of functions given as arguments."""

    def function_writes(self, argument, seen=frozenset()) -> tuple:
        """parameters_written's tuples for the function `argument` may be, where the source
        says which: a function defined here (a def or a lambda), one of the module's, a
        parameter standing for a function given to the function read, a name bound once to
        one of those, or any of the items of a list, tuple, set or dict display (or of a name
        bound once to one, or of a global) of those; () where none is known or none writes
        into its arguments."""
        if isinstance(argument, gast.Lambda):
            return tuple(self.local_parameters_written(argument))
        if isinstance(argument, (gast.List, gast.Tuple, gast.Set, gast.Dict)):
            items = argument.values if isinstance(argument, gast.Dict) else argument.elts
            return tuple(w for item in items for w in self.function_writes(item, seen))
        if isinstance(argument, (gast.Subscript, gast.Starred)):
            return self.function_writes(argument.value, seen)
        if isinstance(argument, gast.Name):
            if argument.id in self.given_functions:
                return self.given_functions[argument.id]
            if argument.id in self.local_functions:
                return tuple(self.local_parameters_written(self.local_functions[argument.id]))
            bound = self.bound_once.get(argument.id)
            if bound is not None and argument.id not in seen:
                return self.function_writes(bound, seen | {argument.id})
        if isinstance(argument, gast.Call) and self.is_partial(argument) and argument.args:
            skipped = len(argument.args) - 1  # (the arguments the partial gives first)
            return tuple((position - skipped, *rest) for position, *rest in
                         self.function_writes(argument.args[0], seen) if position >= skipped)
        callee, before = python_callee(argument, self.locals, self.namespace)
        if callee is None and isinstance(argument, gast.Attribute):
            callee, before = self.method_of_an_object_made_here(argument), 1
        if callee is None:
            return self.global_items_writes(argument)
        return tuple((position - before, *rest) for position, *rest in
                     self.parameters_written(callee) if position >= before)

    def is_partial(self, call) -> bool:
        return not (isinstance(call.func, gast.Name) and call.func.id in self.locals) and \
            resolve(call.func, self.namespace) is functools.partial

    def method_of_an_object_made_here(self, attribute):
        """The Python function `obj.method` runs, where every object `obj` may be was built
        here from one class of the user's (aliases.Sharing.objects), else None."""
        if not isinstance(attribute.value, gast.Name):
            return None
        memories = self.name_value(attribute.value.id)
        classes = {self.objects.get(m) for m in memories}
        if len(classes) != 1 or None in classes:
            return None
        method = inspect.getattr_static(classes.pop(), attribute.attr, None)
        return method if inspect.isfunction(method) else None

    def partials_given(self, node) -> None:
        """Refuse (or note) the call `node` of, or given, a functools.partial of a function
        that writes into one of the arguments the partial holds (`p(v)` or `apply(p, v)`,
        `p = partial(set_first, buf)`): the call (or the function called) calls it, writing
        into `buf`, which the caller may read afterwards."""
        for argument in [node.func] + node.args + [k.value for k in node.keywords]:
            made = self.bound_once.get(argument.id) if isinstance(argument, gast.Name) \
                and argument.id not in self.given_functions else argument
            if not (isinstance(made, gast.Call) and self.is_partial(made) and made.args):
                continue
            held = made.args[1:]
            for position, parameter, what, filename, line, surely, _ in self.function_writes(
                    made.args[0]):
                if position < len(held) and not isinstance(held[position], gast.Starred):
                    self.refuse_call_writing(
                        node, self.reach(self.value(held[position])),
                        getattr(held[position], "id", None),
                        f"the argument {parameter!r} of {_text(made.args[0])} that "
                        f"{_text(made)} holds in place ({what}, {filename}, line {line})",
                        _text(made.args[0]))

    def global_items_writes(self, argument) -> tuple:
        """parameters_written's tuples for the Python functions a list, tuple or dict of the
        module's (`argument` names it) holds: any of them may be the one given."""
        if isinstance(argument, gast.Name) and argument.id in self.locals:
            return ()
        held = resolve(argument, self.namespace)
        if numpy_function_writes(held):  # (np.copyto)
            return numpy_function_writes(held)
        if isinstance(held, dict):
            held = list(held.values())
        if not isinstance(held, (list, tuple)):
            return ()
        return tuple(w for item in held if inspect.isfunction(item)
                     for w in self.parameters_written(item))

    @property
    def bound_once(self) -> dict:
        """name -> the value of the one assignment that binds it, for the names the function
        read binds once, by `name = value` (not in a nested function)."""
        if getattr(self, "_bound_once", None) is None:
            bindings = collections.defaultdict(list)
            for node in walk_scope_statements(self.body):
                if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
                    bindings[node.id].append(node)
                elif isinstance(node, gast.FunctionDef):
                    bindings[node.name].append(node)
            self._bound_once = {}
            for node in walk_scope_statements(self.body):
                if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                        node.targets[0], gast.Name) and len(bindings[node.targets[0].id]) == 1:
                    self._bound_once[node.targets[0].id] = node.value
        return self._bound_once

    def functions_given(self, node, parameters: list, before: int) -> dict:
        """parameter of the function `node` calls (`parameters`, `before` of them given by
        no argument: a method's object) -> the writes of the function given for it, for each
        argument that is a function writing into one of its arguments."""
        if any(isinstance(a, gast.Starred) for a in node.args):
            return {}
        given = {}
        for position, argument in enumerate(node.args):
            written = self.function_writes(argument)
            if written and position + before < len(parameters):
                given[parameters[position + before]] = written
        for keyword in node.keywords:
            written = self.function_writes(keyword.value)
            if written and keyword.arg in parameters:
                given[keyword.arg] = written
        return given

    def callee_writes(self, node, callee, before: int) -> tuple:
        """parameters_written's tuples for the call `node` of the Python function `callee`,
        with the functions it is given followed where it calls them."""
        if own_function(callee) or not any(
                self.function_writes(a) for a in node.args + [k.value for k in node.keywords]):
            return self.parameters_written(callee)  # (autotrace's own: as parameters_written)
        try:
            parsed = parse_function(callee)
        except Exception:  # noqa: BLE001 - no source: nothing known, as parameters_written
            return self.parameters_written(callee)
        given = self.functions_given(node, parameter_names(parsed.node), before)
        if not given:
            return self.parameters_written(callee)
        return written_given(type(self), callee, given, self.depth)

    def local_writes(self, node, local) -> list:
        """local_parameters_written for the call `node` of the function `local` defined here,
        with the functions it is given followed where it calls them."""
        function = as_function(local)
        given = self.functions_given(node, parameter_names(function), 0)
        if not given:
            return self.local_parameters_written(local)
        return list(_written(type(self), function, self.location, self.namespace, given, self,
                             self.depth))

    def call_of_given_function(self, node) -> None:
        """Refuse (or, where a function called is read, note) the call `node` of a parameter
        standing for a function given that writes into its arguments: by its name, by
        another name bound to it (`g = fn`, `for fn in fns`), or as an item of it
        (`fns[0]`)."""
        func = node.func
        while isinstance(func, gast.Subscript):
            func = func.value
        if not isinstance(func, gast.Name) or not self.given_functions:
            return
        reached = self.reach(self.name_value(func.id))
        for parameter, written in self.given_functions.items():
            if func.id == parameter or ("argument", parameter) in reached:
                self.refuse_parameters_written(node, written, 0, _text(node.func))


def written_given(sharing, callee, given: dict, depth: int) -> tuple:
    """parameters_written's tuples for the Python function `callee`, read by the analysis
    `sharing` (aliases.Sharing) `depth` calls deep, with its parameters `given` (parameter ->
    parameters_written's tuples) standing for functions that write so. Read once per set of
    functions given and depth, and kept on the function (its source is what it runs): a
    chain of helpers handing the same functions on is read once, not once per call."""
    key = (sharing, tuple(sorted(given.items())), depth)
    known = made_from(callee, _WRITTEN_GIVEN)
    if key not in known:
        parsed = parse_function(callee)
        known[key] = _written(sharing, parsed.node, parsed.location, parsed.namespace, given,
                              None, depth)
    return known[key]


def _written(sharing, function, location, namespace, given: dict, enclosing,
             depth: int) -> tuple:
    parameters = parameter_names(function)
    if depth >= _DEEPEST_HANDED_ON:
        # Not read further: a function given may write into any other argument.
        line = location.line_of(function)
        return tuple((position, parameter, f"a function handed on more than "
                      f"{_DEEPEST_HANDED_ON} calls deep", location.filename, line, True, 0)
                     for position, parameter in enumerate(parameters)
                     if parameter not in given)
    found = sharing.writes_into_parameters(function, location, namespace, enclosing=enclosing,
                                           given=given, depth=depth + 1)
    return tuple((parameters.index(parameter), parameter, what, location.filename, line,
                  surely, items)
                 for parameter, (what, line, surely, items) in found.items())


def as_function(definition) -> gast.FunctionDef:
    """A def, or a lambda as the def it stands for (its body returned)."""
    if isinstance(definition, gast.FunctionDef):
        return definition
    return gast.FunctionDef(name="<lambda>", args=definition.args,
                            body=[gast.Return(value=definition.body)], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])


def walk_scope_statements(statements):
    """The nodes of `statements`, not entering nested functions, classes or comprehensions."""
    for statement in statements:
        yield from walk_scope(statement)


def _text(node) -> str:
    return to_source(node).strip()
