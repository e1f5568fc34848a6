"""Nested functions become module-level functions that take their free variables as arguments.

    def f(x):                                  def f__scale(t, *, x):
        def scale(t):                              return t * x
            return t * x
        return scale(x) + 1                    def f(x):
                                                   return f__scale(x, x=x) + 1

Once lifted, a nested function is an ordinary user function: the gradient flows into `x`
through the call's arguments, which it could not through a closure cell.
"""
from __future__ import annotations

import io
import re
import tokenize

import gast

from ..codegen.visitors import NodeTransformer
from ..codegen.nodes import copy_tree
from ..analysis.calls import Checkpointed
from ..codegen.codegen import to_source
from ..errors import Location
from ..codegen.naming import Namer, made_functions
from ..codegen.templates import name
from ..codegen.nodes import children, walk


def _scope(nodes) -> list:
    """The nodes of `nodes` in their own scope: a nested def or lambda is listed, with its
    decorators and defaults (evaluated where it is defined), but not its body."""
    todo = list(nodes)
    for node in todo:  # the list grows as it is read: a queue
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            arguments = node.args
            todo += [d for d in arguments.defaults + arguments.kw_defaults if d is not None]
            todo += getattr(node, "decorator_list", [])
        else:
            todo += children(node)
    return todo


def _stored(nodes) -> set:
    return {n.id for n in _scope(nodes)
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param))} | {
        n.name for n in _scope(nodes) if isinstance(n, gast.FunctionDef)}


def _loaded(nodes) -> set:
    return {n.id for n in _scope(nodes)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _parameters(arguments) -> list:
    return [a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]


def _free_variables(definition) -> set:
    """The names `definition` (a def or lambda) reads from the scopes around it, its own
    nested functions' included: `a` and `x` for `outer` in
    `def outer(a): def inner(): return a * x`, and for `inner` too."""
    body = definition.body if isinstance(definition.body, list) else [definition.body]
    arguments = definition.args
    own = set(_parameters(arguments)) | _stored(body)
    own |= {a.id for a in (arguments.vararg, arguments.kwarg) if a is not None}
    read = _loaded(body)
    for node in _scope(body):
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            read |= _free_variables(node)
    return read - own


def _nested_definitions(body):
    """(statement, name, FunctionDef) for each def or `name = lambda ...` in `body`."""
    found = []
    for statement in body:
        for node in _scope([statement]):
            if isinstance(node, gast.FunctionDef):
                found.append((node, node.name, node))
            elif (isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda)
                  and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)):
                lam = node.value
                definition = gast.FunctionDef(
                    name=node.targets[0].id, args=lam.args,
                    body=[gast.copy_location(gast.Return(value=lam.body), node)],
                    decorator_list=[], returns=None, type_comment=None, type_params=[])
                found.append((node, node.targets[0].id, gast.copy_location(definition, node)))
    return found


def _without_blank_lines(source: str) -> str:
    """`source` less the blank lines the printer puts before a nested def: errors name a
    lifted function's lines by their distance from its first, as in the user's file."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    blank = {token.start[0] for token in tokens
             if token.type == tokenize.NL and not token.line.strip()}
    return "".join(line for number, line in enumerate(source.splitlines(True), 1)
                   if number not in blank)


class _RewriteCalls(NodeTransformer):
    def __init__(self, lifted: dict, location: Location):
        self.lifted = lifted  # nested name -> (new name, free variables)
        self.location = location

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if not isinstance(node.func, gast.Name):
            node.func = self.visit(node.func)
        if isinstance(node.func, gast.Name) and node.func.id in self.lifted:
            new_name, free = self.lifted[node.func.id]
            node.func = name(new_name)
            node.keywords = node.keywords + [gast.keyword(arg=v, value=name(v)) for v in free]
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.lifted:
            new_name, free = self.lifted[node.id]
            if not free:  # reads nothing of the enclosing function: a plain function value
                return name(new_name)
            what = ("a lambda" if re.fullmatch(r"_lambda\d+", node.id)
                    else f"the nested function {node.id!r}")
            raise self.location.error(
                node, f"{what} reads the enclosing function's "
                f"variables {', '.join(free)} and is used as a value; autotrace "
                "differentiates such functions only where they are called directly. Pass "
                "those variables as arguments instead", "nested function as a value")
        return node


class _NameLambdas(NodeTransformer):
    """`f(lambda z: z * 2)` becomes `_lambda1 = lambda z: z * 2` then `f(_lambda1)`, so that
    every lambda is a named nested function."""

    def __init__(self, namer: Namer):
        self.namer = namer
        self.hoisted = []

    def visit_Assign(self, node):
        if isinstance(node.value, gast.Lambda) and len(node.targets) == 1 and isinstance(
                node.targets[0], gast.Name):
            node.value.body = self.visit(node.value.body)
            return node
        return self.generic_visit(node)

    def visit_FunctionDef(self, node):
        return node  # its lambdas are named when it is lifted and transformed in turn

    def visit_Lambda(self, node):
        node.body = self.visit(node.body)
        identifier = self.namer.temporary("lambda")
        self.hoisted.append(gast.copy_location(gast.Assign(
            targets=[name(identifier, store=True)], value=node, type_comment=None), node))
        return gast.copy_location(name(identifier), node)  # an error about it names the line


def _name_lambdas(body, namer):
    out = []
    for statement in body:
        for field in ("body", "orelse"):
            if isinstance(getattr(statement, field, None), list) and not isinstance(
                    statement, gast.FunctionDef):
                setattr(statement, field, _name_lambdas(getattr(statement, field), namer))
        namer_pass = _NameLambdas(namer)
        statement = namer_pass.visit(statement)
        out += namer_pass.hoisted + [statement]
    return out


def _check_defaults(definition, label: str, outer_locals: set, location: Location):
    """A lifted function's defaults are evaluated once, where it is loaded: one that reads a
    variable of the enclosing function (`lambda y, k=k: y * k` in a loop) cannot be."""
    arguments = definition.args
    defaults = [d for d in arguments.defaults + arguments.kw_defaults if d is not None]
    read = sorted(_loaded(defaults) & outer_locals)
    if read:
        raise location.error(
            defaults[0], f"a default of {label} reads the "
            f"enclosing function's variable{'s' if len(read) > 1 else ''} {', '.join(read)}; "
            "autotrace evaluates the defaults of nested functions once. Pass "
            f"{', '.join(read)} as an argument instead", "nested function default")


def _reassigned(function, variable: str) -> bool:
    """Whether `function` may give `variable` another value after its first: it assigns it
    twice, in a loop, or as a parameter it assigns."""
    arguments = function.args
    parameters = set(_parameters(arguments)) | {
        a.id for a in (arguments.vararg, arguments.kwarg) if a is not None}
    stores = sum(1 for n in _scope(function.body) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Store) and n.id == variable)
    in_loop = any(isinstance(n, (gast.For, gast.While)) and variable in _stored([n])
                  for n in _scope(function.body))
    return in_loop or stores + (variable in parameters) > 1


def _check_made_closures(function, definition, label: str, outer_locals: set,
                         location: Location):
    """A lifted function is given the enclosing function's variables when it is called: a
    function, lambda, class or generator it makes keeps those values, where Python's reads
    the variable's value when it runs. One that reads a variable the enclosing function
    assigns again (`def make(): return lambda v: v * k`, then `k = k + 1`) is refused."""
    for node in made_functions(definition.body):
        read = (_free_variables(node) if isinstance(node, (gast.FunctionDef, gast.Lambda))
                else {n.id for n in walk(node) if isinstance(n, gast.Name)
                      and isinstance(n.ctx, gast.Load)})
        changed = sorted(v for v in read & outer_locals if _reassigned(function, v))
        if changed:
            raise location.error(
                node, f"a function, lambda or generator made by the nested function "
                f"{label!r} reads the enclosing function's variable {changed[0]!r}, which "
                "that function assigns again; autotrace gives a nested function the values "
                "of such variables when it is called, so what it makes would keep the old "
                f"value. Pass {changed[0]} as an argument to the function it makes instead",
                "nested function as a value")


def lift_nested_functions(function: gast.FunctionDef, location: Location, namer: Namer,
                          namespace: dict) -> None:
    """Replace each nested def/lambda in `function` by a lifted function bound in `namespace`
    (a transforms.analysis.live_names.LiveNamespace, which loads it)."""
    names_in_source = {n.id for n in walk(function) if isinstance(n, gast.Name)}
    if any(isinstance(n, gast.Lambda) for n in walk(function)):
        function.body = _name_lambdas(function.body, namer)
    definitions = _nested_definitions(function.body)
    if not definitions:
        return
    statements = {id(statement) for statement, _, _ in definitions}
    nested_names = {nested_name for _, nested_name, _ in definitions}
    outer_locals = (set(_parameters(function.args)) | _stored(function.body)) - nested_names

    free, calls = {}, {}
    for _, nested_name, definition in definitions:
        read = _free_variables(definition)
        free[nested_name] = read & outer_locals
        calls[nested_name] = read & nested_names
    changed = True
    while changed:  # a nested function that calls another needs that one's free variables
        changed = False
        for nested_name, callees in calls.items():
            for callee in callees:
                if not free[callee] <= free[nested_name]:
                    free[nested_name] |= free[callee]
                    changed = True

    for statement, nested_name, definition in definitions:
        hoisted = isinstance(statement, gast.Assign) and nested_name not in names_in_source
        _check_made_closures(function, definition, nested_name, outer_locals, location)
        _check_defaults(definition, "a lambda" if hoisted else
                        f"the nested function {nested_name!r}", outer_locals, location)
    lifted = {n: (namer.fresh(f"{function.name}__{n}"), sorted(free[n])) for n in free}
    rewrite = _RewriteCalls(lifted, location)
    for _, nested_name, definition in definitions:
        new_name, free_variables = lifted[nested_name]
        definition = copy_tree(definition)
        definition.name = new_name
        definition.decorator_list = []
        definition.args.kwonlyargs = definition.args.kwonlyargs + [
            gast.Name(id=v, ctx=gast.Param(), annotation=None, type_comment=None)
            for v in free_variables]
        definition.args.kw_defaults = definition.args.kw_defaults + [None] * len(free_variables)
        definition.body = [rewrite.visit(s) for s in definition.body]
        source = _without_blank_lines(to_source(definition))
        lifted_function = namespace.load(source, new_name, new_name)
        lifted_function.__autotrace_origin__ = Location(
            location.filename, location.line_of(definition) or 1, nested_name)
        if getattr(definition, "checkpointed", False):  # a loop segment (transforms/segments)
            lifted_function = Checkpointed(lifted_function)
        namespace[new_name] = lifted_function

    def strip(body):
        out = []
        for statement in body:
            if id(statement) in statements:
                continue
            for field in ("body", "orelse"):
                if hasattr(statement, field) and isinstance(getattr(statement, field), list):
                    setattr(statement, field, strip(getattr(statement, field)))
            out.append(statement)
        return out

    function.body = [rewrite.visit(s) for s in strip(function.body)] or [gast.Pass()]
