"""functools.reduce given a function that writes into its arguments, known only when it runs.

`functools.reduce(f, [acc, x, x])` calls `f(acc, x)`, then f of that and x: where f writes
into its first argument (`def imul(a, b): a *= b; return a`), acc changes in place, which the
derivative does not follow. Where the source names f, the model of memory refuses the call
when a name sharing acc is read afterwards (alias_calls.CallSharing.writes_by_reduced); where
f is known only when it runs (a parameter, a function held in a variable), or the reduce is
(`fold = functools.reduce`), generated code checks before the call, with
`check_reduced_writes`, and refuses it at the user's line where f may write into either of
the two arguments it is given, or is an in-place operator (operator.imul, np.ndarray.__imul__).
A reduce whose result carries gradient has f differentiated where it runs, which refuses such
a write too (transforms/dynamic_calls.py).
"""
from __future__ import annotations

import gast

from ..codegen.nodes import copy_tree
from .aliases import Sharing
from .argument_writes import refuse_arguments_written
from .call_results import python_callee
from .object_state import function_called, statement_blocks
from ..codegen.nodes import nodes_of, walk
from ..errors import TransformError
from ..front.python_versions import in_place_refusal, python_version, reduce
from ..rules.core import constant


def check_reduced_writes(callee, function, filename: str, line: int) -> None:
    """Raise TransformError at `filename`, `line` where `callee` is functools.reduce and the
    `function` it is given may write into the arguments it is called with. Generated code
    calls it before a call whose callee or first argument is known only when it runs."""
    if python_version(callee) is not reduce:
        return
    refusal = in_place_refusal(function)
    if refusal is not None:
        raise TransformError(refusal, filename, line, "in-place operator")
    function, bound = function_called(function)
    if function is not None:  # (reduce calls it with two arguments: both may be read later)
        refuse_arguments_written(function, Sharing.parameters_written(function), bound, None,
                                 filename, line)


# It checks, and gives nothing: no gradient passes through it.
constant(check_reduced_writes)


def guard_reduced_calls(body: list, location, varied: set, active: set, classify, helper,
                        local_names: set, namespace: dict) -> None:
    """Put a `check_reduced_writes` before each call statement in `body` (A-normal form) that
    may be of functools.reduce with a function known only when it runs, given values that
    depend on the names `varied`, whose result carries no gradient (`active`: the names
    that do; a reduce that gives one has its function differentiated where it runs).
    classify(func): what the callee is (analysis/calls.py); helper(name): the name generated
    code calls a helper by."""
    for block in statement_blocks(body):
        for index in reversed(range(len(block))):
            statement = block[index]
            call = statement.value if isinstance(statement, (gast.Expr, gast.Assign)) else None
            if not isinstance(call, gast.Call) or isinstance(statement, gast.Assign) and (
                    not isinstance(statement.targets[0], gast.Name)
                    or statement.targets[0].id in active) or len(call.args) < 2 or any(
                    isinstance(a, gast.Starred) for a in call.args) or isinstance(
                    call.args[0], gast.Lambda) or any(  # (a lambda's writes: CallSharing's)
                    isinstance(n, gast.Call) for n in walk(call.args[0])) or not any(
                    isinstance(n, gast.Name) and n.id in varied
                    for a in call.args[1:] for n in nodes_of(a)):
                continue
            resolved = classify(call.func)
            known = resolved.kind == "user" and resolved.value is reduce
            if not (resolved.kind == "dynamic" or known and python_callee(
                    call.args[0], local_names, namespace)[0] is None):
                continue
            guard = gast.Expr(value=gast.Call(
                func=gast.Name(id=helper("check_reduced_writes"), ctx=gast.Load(),
                               annotation=None, type_comment=None),
                args=[copy_tree(call.func), copy_tree(call.args[0]),
                      gast.Constant(value=location.filename, kind=None),
                      gast.Constant(value=location.line_of(statement), kind=None)],
                keywords=[]))
            for node in walk(guard):
                if "lineno" in node._attributes:
                    gast.copy_location(node, statement)
            block.insert(index, guard)
