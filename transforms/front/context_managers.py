"""Which `with` statements around differentiated statements the transforms keep, and how.

Besides name scopes (transforms/reverse/name_scopes.py), two kinds of context manager are
differentiated through, their block's statements followed as if written without the `with`:

- a pure context, `np.errstate(...)` or `warnings.catch_warnings(...)`: it changes how NumPy
  reports floating point errors, or which warnings show, and no value. The primal statements
  run in it, and the adjoint (or tangent) statements too, under the same context evaluated
  anew (reverse mode writes the `with` again around them; `warnings.simplefilter` and
  `warnings.filterwarnings` calls of the block are repeated there);
- another context manager whose `__exit__` never swallows an exception (a timer, a logger:
  its `__exit__` returns nothing or a false constant): what it does on entry and exit is the
  primal pass's, its expression evaluated once; the adjoint statements run outside it.

A manager whose `__exit__` may swallow an exception (`contextlib.suppress`, one made by
`contextlib.contextmanager`, one whose `__exit__` is not Python code or returns anything but a
false constant) decides which statements of the block run, which the derivative does not
follow: it is refused.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import warnings

import gast
import numpy as np

from ..codegen.nodes import walk
from .parsing import MISSING, resolve

PURE = "pure"  # np.errstate, warnings.catch_warnings: again around the adjoint statements
PRIMAL = "primal"  # the user's: around the primal statements only
PURE_CONTEXTS = (np.errstate, warnings.catch_warnings)
# Calls in a pure context's block that set it up: repeated around the adjoint statements.
WARNING_FILTERS = (warnings.simplefilter, warnings.filterwarnings, warnings.resetwarnings)


def manager_kind(context, namespace: dict) -> str | None:
    """PURE or PRIMAL for the context expression `context` of a `with`, None for one whose
    `__exit__` may swallow an exception or that the source does not name."""
    if isinstance(context, gast.Call):
        made = resolve(context.func, namespace)
        if made in PURE_CONTEXTS:
            return PURE
        manager_class = made if isinstance(made, type) else None
    else:
        manager = resolve(context, namespace)
        manager_class = None if manager is MISSING else type(manager)
    if manager_class is None or issubclass(manager_class, PURE_CONTEXTS):
        return None if manager_class is None else PURE
    return PRIMAL if _never_swallows(getattr(manager_class, "__exit__", None)) else None


def _never_swallows(exit_method) -> bool:
    """Whether `exit_method`, an `__exit__`, is Python code whose every return gives None or
    a false constant."""
    if not inspect.isfunction(exit_method):
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(exit_method)))
    except (OSError, TypeError, SyntaxError):
        return False
    function = tree.body[0]
    nested = {id(n) for inner in ast.walk(function) if inner is not function and isinstance(
        inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for n in ast.walk(inner)}
    return all(node.value is None or isinstance(node.value, ast.Constant)
               and not node.value.value for node in ast.walk(function)
               if isinstance(node, ast.Return) and id(node) not in nested)


def is_warning_filter(statement, namespace: dict) -> bool:
    """Whether `statement` is a call of warnings.simplefilter (filterwarnings, reset)."""
    return isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Call) and \
        resolve(statement.value.func, namespace) in WARNING_FILTERS


def nest_with_items(function: gast.FunctionDef) -> None:
    """`with a, b:` as `with a:` holding `with b:`, which Python makes of it too."""
    for node in list(walk(function)):
        if isinstance(node, gast.With) and len(node.items) > 1:
            inner = gast.With(items=node.items[1:], body=node.body, type_comment=None)
            node.items, node.body = node.items[:1], [gast.copy_location(inner, node)]
            nest_with_items(inner)
