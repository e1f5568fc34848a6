"""`break`, `continue` and early `return` become flags, so every block runs to its end.

The adjoint sweep replays blocks backwards; it can only do that when it knows which statements
of a block ran. After this pass a jump only sets flags, and the statements after it are guarded:

    for x in xs:                         for _i1 in range(_n):
        if x > 3:                            _skip1 = False
            break                            ...
        s = s + x                            if _t1:
                                                 _skip1 = True
                                                 _break1 = True
                                             if not _skip1:
                                                 s = s + x
                                             if _break1:
                                                 break

The trailing `if _break1: break` leaves the loop early; the statements it skips ran nowhere
and have no adjoint. A `return` inside a loop sets the flags of every enclosing loop, stores
its value in `_return` and the function ends with `return _return`.

For the control-flow conversion (transforms/control_flow/control_flow.py), `single_return` first folds early
returns instead: `if c: return a` followed by more statements becomes an if/else whose paths
all return, and those returns assign one variable, returned once at the end.
"""
from __future__ import annotations

import gast

from ..codegen.naming import Namer, walk_scope
from ..codegen.templates import name
from ..codegen.nodes import children, walk


# The attribute of an `if` this pass made to guard the statements after one that may jump out
# (break, continue or return): what to say of it, where errors about that `if` (a traced one
# that cannot choose between its variables) quote the user's statement at its line.
GUARDS_AFTER_JUMP = "autotrace_guards_after_jump"


def _jumps(statements, in_loop: bool = False) -> list:
    """The kinds of jump ('break', 'continue', 'return') among `statements` (and the blocks
    they hold) that leave them, not a loop's inside them, in the order met, once each."""
    kinds = []
    for node in statements:
        if isinstance(node, gast.Return) or isinstance(node, (gast.Break, gast.Continue)) and \
                not in_loop:
            kinds.append(type(node).__name__.lower())
            continue
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        inner = [child for child in children(node) if isinstance(child, gast.stmt)]
        kinds += _jumps(inner, in_loop or isinstance(node, (gast.For, gast.While)))
    return list(dict.fromkeys(kinds))


def _assign(target: str, value) -> gast.Assign:
    if not isinstance(value, gast.AST):
        value = gast.Constant(value=value, kind=None)
    return gast.Assign(targets=[name(target, store=True)], value=value, type_comment=None)


def _not(flag: str) -> gast.expr:
    return gast.UnaryOp(op=gast.Not(), operand=name(flag))


class _Loop:
    def __init__(self, namer: Namer):
        self.skip = namer.temporary("skip")
        self.stop = namer.temporary("break")
        self.skip_used = False
        self.stop_used = False


def _contains(nodes, kinds) -> bool:
    return any(isinstance(n, kinds) for s in nodes for n in walk(s))


class ExitsToFlags:
    def __init__(self, namer: Namer):
        self.namer = namer
        self.returned = None
        self.result = None

    def function(self, function: gast.FunctionDef) -> gast.FunctionDef:
        body = function.body = return_after_scopes(function.body)
        returns = [n for s in body for n in walk(s) if isinstance(n, gast.Return)]
        simple_return = (len(returns) <= 1 and (not returns or body[-1] is returns[0]))
        if simple_return:
            new_body, _ = self.block(body, [])
            function.body = new_body
            return function
        self.returned = self.namer.temporary("returned")
        self.result = self.namer.temporary("return")
        new_body, _ = self.block(body, [])
        function.body = ([_assign(self.result, None), _assign(self.returned, False)] + new_body
                         + [gast.Return(value=name(self.result))])
        return function

    def block(self, statements, loops) -> tuple[list, bool]:
        out = []
        for position, statement in enumerate(statements):
            # (the jumps it holds, read before flags replace them)
            jumps = " or ".join(_jumps([statement])) or "jump out"
            new, may_exit = self.statement(statement, loops)
            out.extend(new)
            if may_exit:
                rest, _ = self.block(statements[position + 1:], loops)
                if rest:
                    guard = loops[-1].skip if loops else self.returned
                    if guard is None:  # the tail return of a function with no other return
                        return out + rest, True
                    # (where errors about the rest point: the statement that may exit)
                    guarded = gast.copy_location(
                        gast.If(test=_not(guard), body=rest, orelse=[]), statement)
                    setattr(guarded, GUARDS_AFTER_JUMP,
                            f"the statements after it run only where it does not {jumps}")
                    out.append(guarded)
                return out, True
        return out, False

    def statement(self, node, loops) -> tuple[list, bool]:
        if isinstance(node, gast.Return):
            if self.result is None:  # the function's only return, at its end
                return [node], False
            out = [_assign(self.result, node.value), _assign(self.returned, True)]
            for loop in loops:
                out += [_assign(loop.skip, True), _assign(loop.stop, True)]
                loop.skip_used = loop.stop_used = True
            return out, True
        if isinstance(node, gast.Break):
            loop = loops[-1]
            loop.skip_used = loop.stop_used = True
            return [_assign(loop.skip, True), _assign(loop.stop, True)], True
        if isinstance(node, gast.Continue):
            loops[-1].skip_used = True
            return [_assign(loops[-1].skip, True)], True
        if isinstance(node, gast.If):
            body, exits_body = self.block(node.body, loops)
            orelse, exits_orelse = self.block(node.orelse, loops)
            node.body, node.orelse = body or [gast.Pass()], orelse
            return [node], exits_body or exits_orelse
        if isinstance(node, (gast.For, gast.While)):
            return self.loop(node, loops)
        if isinstance(node, gast.With):  # a name scope: the block always runs
            body, exits_body = self.block(node.body, loops)
            node.body = body or [gast.Pass()]
            return [node], exits_body
        return [node], False

    def loop(self, node, loops) -> tuple[list, bool]:
        loop = _Loop(self.namer)
        body, _ = self.block(node.body, loops + [loop])
        recompute = getattr(node, "recompute", [])
        new_body = []
        if loop.skip_used:
            new_body.append(_assign(loop.skip, False))
        new_body += body
        if loop.stop_used:
            new_body.append(gast.If(test=name(loop.stop), body=[gast.Break()], orelse=[]))
        node.body = new_body + recompute
        node.recompute = []
        before = [_assign(loop.stop, False)] if loop.stop_used else []
        returns = self.returned is not None and any(
            isinstance(n, gast.Name) and n.id == self.returned for s in body
            for n in walk(s))
        return before + [node], returns


def exits_to_flags(function: gast.FunctionDef, namer: Namer) -> gast.FunctionDef:
    """`function` with break, continue and early return turned into flags."""
    return ExitsToFlags(namer).function(function)


# --- early returns ------------------------------------------------------------------------------

def return_after_scopes(body: list) -> list:
    """`with name_scope(s): ...; return v` ending a function -> the same with, then `return v`,
    so the function keeps a single return at its end, which needs no flags. Only a return of a
    name or constant moves (as in A-normal form): one that computes its value stays in the
    scope, whose operations it would otherwise leave."""
    if not body or not isinstance(body[-1], gast.With):
        return body
    block = body[-1]
    block.body = return_after_scopes(block.body)
    last = block.body[-1] if block.body else None
    if not isinstance(last, gast.Return) or not isinstance(
            last.value, (gast.Name, gast.Constant, type(None))):
        return body
    block.body = block.body[:-1] or [gast.Pass()]
    return body + [last]


def _always_returns(statements) -> bool:
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return True
    if isinstance(last, gast.With):
        return _always_returns(last.body)
    return isinstance(last, gast.If) and _always_returns(last.body) and \
        _always_returns(last.orelse)


def fold_early_returns(statements: list) -> list:
    """`if c: ...return a` followed by more statements -> `if c: ...return a else: more`. Not
    where more statements hold a yield (a derivative run in halves): a branch cannot."""
    out = []
    for index, statement in enumerate(statements):
        if isinstance(statement, gast.If):
            statement.body = fold_early_returns(statement.body)
            statement.orelse = fold_early_returns(statement.orelse)
            rest = statements[index + 1:]
            if any(isinstance(node, (gast.Yield, gast.YieldFrom))
                   for later in rest for node in walk_scope(later)):
                rest = []
            if rest and _always_returns(statement.body) and not _always_returns(
                    statement.orelse):
                statement.orelse = fold_early_returns(statement.orelse + rest)
                out.append(statement)
                return out
            if rest and _always_returns(statement.orelse) and not _always_returns(
                    statement.body) and statement.orelse:
                statement.body = fold_early_returns(statement.body + rest)
                out.append(statement)
                return out
        elif isinstance(statement, (gast.For, gast.While, gast.With)):
            statement.body = fold_early_returns(statement.body)
        out.append(statement)
    return out


def _has_return(statements) -> bool:
    """Whether `statements` hold a return of this function (not of a nested one)."""
    return any(isinstance(node, gast.Return) for statement in statements
               for node in walk_scope(statement))


def _tail_returns_only(statements) -> bool:
    """Whether every return in `statements` ends a path (so it can become an assignment)."""
    for index, statement in enumerate(statements):
        last = index == len(statements) - 1
        if isinstance(statement, gast.Return):
            if not last:
                return False
        elif isinstance(statement, gast.If):
            if not (_tail_returns_only(statement.body) and _tail_returns_only(statement.orelse)):
                return False
            if not last and (_has_return(statement.body) or _has_return(statement.orelse)):
                return False
        elif _has_return([statement]):
            return False
    return True


def _returns_to_assignments(statements, target: str) -> list:
    out = []
    for statement in statements:
        if isinstance(statement, gast.Return):
            value = statement.value or gast.Constant(value=None, kind=None)
            assign = gast.Assign(targets=[name(target, store=True)], value=value,
                                 type_comment=None)
            out.append(gast.copy_location(assign, statement))
        elif isinstance(statement, gast.If):
            statement.body = _returns_to_assignments(statement.body, target)
            statement.orelse = _returns_to_assignments(statement.orelse, target)
            out.append(statement)
        else:
            out.append(statement)
    return out


def single_return(body: list, namer: Namer) -> list:
    """A function body ending in an if/else whose paths all return: the returns assign one
    variable, returned once at the end (so the if can become a `cond`)."""
    body = fold_early_returns(body)
    last = body[-1] if body else None
    if (isinstance(last, gast.If) and _always_returns(last.body)
            and _always_returns(last.orelse) and _tail_returns_only([last])
            and not any(isinstance(n, gast.Raise) for n in walk(last))):
        result = namer.temporary("retval")
        body[-1:] = _returns_to_assignments([last], result)
        body.append(gast.copy_location(gast.Return(value=name(result)), last))
    return body
