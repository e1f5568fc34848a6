"""In-place operator methods called by name (`a.__iadd__(x)`) are the augmented assignments
they are.

`a.__iadd__(x)` runs what `a += x` runs: the array a changes in place, and aliases and views
of a see the change. The transforms follow `a += x` with their one model of memory
(transforms/analysis/aliases.py: a write another name reads afterwards is refused), so a call
standing as a statement of its own becomes that augmented assignment, here, before any other
pass reads the function:

    a.__iadd__(x)              a += x
    r = a.__imul__(x)          a *= x; r = a
    return a.__isub__(x)       a -= x; return a

(`a op= x` binds a to what the method returns, which is a itself for an array or a list.)
Anywhere else the method is refused at the user's line, saying what to write: inside an
expression or a lambda (where the write would happen amid other reads of a), on something
other than a local variable (`A[i].__iadd__(x)`; a global's or a closure variable's, which
`a op= x` would make local), or as a value handed on (`functools.reduce(
np.ndarray.__iadd__, ...)`), whose write autotrace would not follow.
"""
from __future__ import annotations

import gast

from ..analysis.argument_writes import IN_PLACE_OPERATORS
from ..codegen.codegen import to_source
from ..codegen.naming import walk_scope
from ..codegen.nodes import walk

# The in-place operator methods, by name, with the operator of their augmented assignment.
IN_PLACE_DUNDERS = {method: operator for operator, method in IN_PLACE_OPERATORS.items()}
# The symbol of each augmented assignment, by its operator.
_SYMBOLS = {gast.Add: "+=", gast.Sub: "-=", gast.Mult: "*=", gast.Div: "/=",
            gast.FloorDiv: "//=", gast.Mod: "%=", gast.Pow: "**=", gast.MatMult: "@=",
            gast.BitAnd: "&=", gast.BitOr: "|=", gast.BitXor: "^=", gast.LShift: "<<=",
            gast.RShift: ">>="}
# The fields of a statement that hold statements.
_BODIES = ("body", "orelse", "finalbody")


def rewrite_in_place_dunders(function: gast.FunctionDef, location) -> None:
    """Rewrite each in-place operator method called by name in `function` (nested functions
    too) as its augmented assignment where it is a statement of its own on a local variable,
    and raise TransformError at any other (see the module docstring)."""
    function.body = _block(function.body, _locals(function))
    for node in walk(function):
        if _is_dunder(node):
            raise location.error(node, _refusal(node), "in-place operator method")


def _block(statements: list, local_names: set) -> list:
    """`statements` rewritten, in a scope whose local variables are `local_names`."""
    out = []
    for statement in statements:
        inner = _locals(statement) if isinstance(statement, gast.FunctionDef) else set() \
            if isinstance(statement, gast.ClassDef) else local_names
        for field in _BODIES:
            if isinstance(getattr(statement, field, None), list):
                setattr(statement, field, _block(getattr(statement, field), inner))
        for handler in getattr(statement, "handlers", ()):
            handler.body = _block(handler.body, inner)
        for case in getattr(statement, "cases", ()):
            case.body = _block(case.body, inner)
        out.extend(_rewritten(statement, local_names))
    return out


def _locals(function: gast.FunctionDef) -> set:
    """The local variables of `function`: `a op= x` binds a there, which a global or a
    closure variable may not be (Python would read it as an unbound local)."""
    arguments = function.args
    names = {a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs
             + [arguments.vararg, arguments.kwarg] if a is not None}
    declared = set()
    for node in (n for statement in function.body for n in walk_scope(statement)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            declared.update(node.names)
    return names - declared


def _rewritten(statement, local_names: set) -> list:
    """`statement` as augmented assignment and what reads its result, or [statement]."""
    call = statement.value if isinstance(statement, (gast.Expr, gast.Assign, gast.Return)) \
        else None
    if not _rewritable(call) or call.func.value.id not in local_names:
        return [statement]
    receiver = call.func.value
    write = gast.AugAssign(target=gast.Name(id=receiver.id, ctx=gast.Store(), annotation=None,
                                            type_comment=None),
                           op=IN_PLACE_DUNDERS[call.func.attr](), value=call.args[0])
    gast.copy_location(write, statement)
    gast.copy_location(write.target, receiver)
    if isinstance(statement, gast.Expr):
        return [write]
    statement.value = gast.copy_location(gast.Name(id=receiver.id, ctx=gast.Load(),
                                                   annotation=None, type_comment=None), call)
    return [write, statement]


def _rewritable(call) -> bool:
    """Whether `call` is `a.__iop__(x)`: a name's in-place operator method, one argument."""
    return (isinstance(call, gast.Call) and _is_dunder(call.func)
            and isinstance(call.func.value, gast.Name) and len(call.args) == 1
            and not isinstance(call.args[0], gast.Starred) and not call.keywords)


def _is_dunder(node) -> bool:
    return isinstance(node, gast.Attribute) and node.attr in IN_PLACE_DUNDERS \
        and isinstance(node.ctx, gast.Load)


def _refusal(node) -> str:
    symbol = _SYMBOLS[IN_PLACE_DUNDERS[node.attr]]
    method = node.attr
    return (f"{to_source(node).strip()} changes its object in place (it runs `a {symbol} x`), "
            f"and autotrace follows that write only in a statement of its own on a local "
            f"variable (`a.{method}(x)`, `r = a.{method}(x)`, `return a.{method}(x)`), not "
            f"inside an expression or a lambda, on a part of a value or a global, nor handed "
            f"to another function (functools.reduce); write the augmented assignment "
            f"`a {symbol} x` as a statement of its own instead, in a def where a lambda "
            f"calls it")
