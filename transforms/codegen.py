"""Turning gast trees into Python source and loaded functions.

All printing goes through `to_source`, so every generated line is printed one way. It uses the
standard library's unparser (Python >= 3.9), which prints multi-axis subscripts such as
`x[1:2, ::2]`, `x[..., None]` correctly (astunparse 1.6.3 prints them as invalid Python).
"""
from __future__ import annotations

import ast
import itertools
import linecache
import os
import weakref

import gast

_counter = itertools.count()


def to_source(node) -> str:
    """Python source for a gast (or ast) node or list of nodes, ending in a newline."""
    if isinstance(node, list):
        return "".join(to_source(n) for n in node)
    if isinstance(node, gast.AST):
        node = gast.gast_to_ast(node)
    node = ast.fix_missing_locations(node)
    return ast.unparse(node).rstrip("\n") + "\n"


def debug_source(pass_name: str, node) -> None:
    """Print `node`'s source when AUTOTRACE_DEBUG names `pass_name` (or is "all")."""
    wanted = os.environ.get("AUTOTRACE_DEBUG", "")
    if wanted and (wanted == "all" or pass_name in wanted.split(",")):
        print(f"# ---- after {pass_name} ----")
        print(to_source(node))


def register_source(source: str, hint: str) -> str:
    """Give generated `source` a file name that linecache, tracebacks, inspect and pdb read."""
    filename = f"<autotrace {hint} #{next(_counter)}>"
    lines = source.splitlines(keepends=True)
    # A size of None keeps linecache.checkcache from discarding the entry.
    linecache.cache[filename] = (len(source), None, lines, filename)
    return filename


def load_function(source: str, name: str, namespace: dict, hint: str | None = None):
    """Execute `source` (which defines `name`) in `namespace` and return the function."""
    filename = register_source(source, hint or name)
    code = compile(source, filename, "exec")
    exec(code, namespace)
    function = namespace[name]
    # Its lines are kept while it lives: a program that makes derivatives in a loop does not
    # fill linecache.
    weakref.finalize(function, linecache.cache.pop, filename, None)
    return function


def parse_expression(text: str) -> gast.expr:
    """A gast expression node from source text."""
    return gast.parse(text, mode="eval").body


def parse_statements(text: str) -> list:
    """gast statement nodes from source text."""
    return gast.parse(text).body
