"""Turning gast trees into Python source and loaded functions.

All printing goes through `to_source`, so every generated line is printed one way. It uses the
standard library's unparser (Python >= 3.9), which prints multi-axis subscripts such as
`x[1:2, ::2]`, `x[..., None]` correctly (astunparse 1.6.3 prints them as invalid Python).
"""
from __future__ import annotations

import ast
import itertools
import os
import types

import gast

from ...runtime.generated_source import (PREFIX as GENERATED_PREFIX, forget_with,
                                         register_generated)
from .nodes import fill_statement_lines, nodes_of, to_ast

_counter = itertools.count()


def to_source(node) -> str:
    """Python source for a gast (or ast) node or list of nodes, ending in a newline."""
    if isinstance(node, list):
        return "".join(to_source(n) for n in node)
    # (a tree of its own, which the unparser alone reads: of locations, statements' lines)
    node = fill_statement_lines(to_ast(node))
    return ast.unparse(node).rstrip("\n") + "\n"


def debug_source(pass_name: str, node) -> None:
    """Print `node`'s source when AUTOTRACE_DEBUG names `pass_name` (or is "all")."""
    wanted = os.environ.get("AUTOTRACE_DEBUG", "")
    if wanted and (wanted == "all" or pass_name in wanted.split(",")):
        print(f"# ---- after {pass_name} ----")
        print(to_source(node))


def register_source(source: str, hint: str) -> str:
    """Give generated `source` a file name that linecache, tracebacks, inspect and pdb read."""
    filename = f"{GENERATED_PREFIX}{hint} #{next(_counter)}>"
    register_generated(filename, source)
    return filename


def load_function(source: str, name: str, namespace: dict, hint: str | None = None):
    """Execute `source` (which defines `name`) in `namespace` and return the function."""
    filename = register_source(source, hint or name)
    code = compile(source, filename, "exec")
    exec(code, namespace)
    function = namespace[name]
    forget_with(function, filename)
    return function


def compile_in_factory(definition: ast.FunctionDef, free_names, filename: str,
                       factory_name: str = "_autotrace_factory") -> types.CodeType:
    """The code object of `definition` compiled inside `def factory_name(*free_names)`: the
    names of `free_names` it reads are its closure variables (its `co_freevars`, to be given
    cells), every other name it reads is a global. Its lines are those of `definition`, whose
    every node has its location (ast.fix_missing_locations)."""
    # built, not parsed (which costs twice as much), on the line of `definition`, which it
    # encloses, at its start
    line = {"lineno": definition.lineno, "end_lineno": definition.lineno,
            "col_offset": 0, "end_col_offset": 0}
    factory = ast.FunctionDef(
        name=factory_name, decorator_list=[], returns=None, type_comment=None,
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=name, **line)
                                                 for name in free_names],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[definition, ast.Return(value=ast.Name(id=definition.name, ctx=ast.Load(), **line),
                                     **line)], **line)
    module = ast.Module(body=[factory], type_ignores=[])
    compiled = compile(module, filename, "exec")
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    return next(c for c in factory_code.co_consts
                if isinstance(c, types.CodeType) and c.co_name == definition.name)


def load_closure(source: str, name: str, globals_: dict, cells_of, hint: str,
                 first: list = (), parsed: ast.Module | None = None) -> types.FunctionType:
    """The function `name` that `source` defines, reading some names through cells and every
    other name from `globals_` (then the builtins), as a nested function reads its enclosing
    function's variables and its module's globals. `cells_of(names)`: of the names the code
    reads, those read through a cell, as a dict name -> cell. `first`: statements (ast) each
    call runs first, compiled in but not in the printed source. `parsed`: `source` as
    ast.parse read it, where the caller read it already (it is changed here)."""
    filename = register_source(source, hint)
    definition = (ast.parse(source, filename) if parsed is None else parsed).body[0]
    cells = cells_of({node.id for node in nodes_of(definition) if isinstance(node, ast.Name)})
    # (parsed, the definition has every location; the statements put first take its own)
    definition.body[:0] = [ast.fix_missing_locations(ast.copy_location(statement, definition))
                           for statement in first]
    code = compile_in_factory(definition, list(cells), filename)
    code = code.replace(co_qualname=name)  # not the factory's: the function stands alone
    values = {}
    for key, cell in cells.items():
        try:
            values[key] = cell.cell_contents
        except ValueError:  # filled later (a recursive derivative, a function lifted later)
            pass

    def evaluated(expression):  # a default, as the def evaluates it
        if isinstance(expression, ast.Constant):
            return expression.value
        compiled = compile(ast.Expression(body=expression), filename, "eval")
        return eval(compiled, globals_, values)  # noqa: S307 - our own generated code
    arguments = definition.args
    function = types.FunctionType(
        code, globals_, name, tuple(evaluated(d) for d in arguments.defaults) or None,
        tuple(cells[free] for free in code.co_freevars))
    function.__kwdefaults__ = {a.arg: evaluated(d) for a, d in
                               zip(arguments.kwonlyargs, arguments.kw_defaults)
                               if d is not None} or None
    forget_with(function, filename)  # as load_function
    return function


def parse_expression(text: str) -> gast.expr:
    """A gast expression node from source text."""
    return gast.parse(text, mode="eval").body


def parse_statements(text: str) -> list:
    """gast statement nodes from source text."""
    return gast.parse(text).body
