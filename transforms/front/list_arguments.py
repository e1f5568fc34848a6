"""A list given to a NumPy function that reads it as one array, made that array first:

    losses = []                             losses = []
    ...                                     ...
    _t8 = np.mean(losses)                   losses_array = np.asarray(losses)
                                            _t8 = np.mean(losses_array)

which is what NumPy does inside np.mean. The rules of NumPy's functions are written for arrays:
given the list itself, their operators would treat it as a list (`d[x] * 2` repeats a list of
tangents, `d[x1] + d[x2]` joins two), a traced value inside it cannot become an array where a
helper asks for the list's shape, and the gradient they give it is an array where the list's
own is a list. np.asarray's rules are the bridge: its adjoint gives the list's gradient item by
item (`unarray`), its tangent stacks the items' tangents.

A name is converted where the source says it holds a list (a list display, a comprehension,
`list(...)`: transforms/analysis/list_operators.py SEQUENCE), as an argument NumPy reads as an
array (`a`, `x`, `x1`, ... below); not one it reads as a sequence of arrays (np.concatenate's
`arrays`, np.stack's), which may differ in shape. Runs after A-normal form, whose arguments
are names.
"""
from __future__ import annotations

import gast

from ...runtime.generated_source import TEMPORARY_NAME
from ..analysis.calls import classify
from ..analysis.list_operators import SequenceKinds
from ..codegen.naming import Namer
from ..codegen.templates import replace
from ..codegen.nodes import walk
from ..rules.core import (adjoint_rules, reads_list_as_array, reads_lists,
                          tangent_rules)

def convert_list_arguments(function: gast.FunctionDef, parameters: list, namespace: dict,
                           namer: Namer, numpy_name: str) -> None:
    """Give each NumPy function that reads a list argument as one array that array instead
    (the module docstring), in `function`'s body, in place."""
    kinds = SequenceKinds(function.body, parameters, namespace)
    function.body = _block(function.body, kinds, namespace, namer, numpy_name)


def _block(statements: list, kinds, namespace, namer, numpy_name) -> list:
    out = []
    for statement in statements:
        for field in ("body", "orelse"):
            block = getattr(statement, field, None)
            if isinstance(block, list) and not isinstance(statement, gast.FunctionDef):
                setattr(statement, field, _block(block, kinds, namespace, namer, numpy_name))
        arguments = []
        if isinstance(statement, gast.Assign) and isinstance(statement.value, gast.Call):
            arguments = _lists_read_as_arrays(statement.value, kinds, namespace)
        elif isinstance(statement, gast.Assign) and isinstance(statement.value, gast.BinOp) \
                and isinstance(statement.value.op, gast.Pow):
            arguments = _list_powered(statement.value, kinds)
        for argument in arguments:
            array = namer.temporary("t") if TEMPORARY_NAME.fullmatch(argument.id) \
                else namer.fresh(f"{argument.id}_array")
            conversion = replace("array = np.asarray(items)", array=array,
                                 np=numpy_name, items=argument.id)[0]
            for node in walk(conversion):
                if isinstance(node, (gast.stmt, gast.expr)):
                    gast.copy_location(node, statement)
            out.append(conversion)
            argument.id = array
        out.append(statement)
    return out


def _list_powered(power: gast.BinOp, kinds) -> list:
    """The operand of `a ** b` (names) that holds a list where the other is no list: Python
    has no power of lists, so the array's `**` reads it as NumPy reads `np.power`'s."""
    lists = [operand for operand in (power.left, power.right)
             if isinstance(operand, gast.Name) and kinds.holds_list(operand.id)]
    return lists if len(lists) == 1 else []


def _lists_read_as_arrays(call: gast.Call, kinds, namespace) -> list:
    """The arguments of `call` (names) that hold lists where its NumPy function reads an
    array."""
    resolved = classify(call.func, namespace)
    function = resolved.value
    if resolved.kind != "rule" or not reads_lists(function):
        return []
    rule = adjoint_rules.get(function) or tangent_rules.get(function)
    try:
        bound = rule.bind(call.args, {k.arg: k.value for k in call.keywords if k.arg})
    except TypeError:
        return []  # a call that cannot bind: the transform says why
    return [argument for parameter, argument in bound.arguments.items()
            if reads_list_as_array(function, parameter) and isinstance(argument, gast.Name)
            and kinds.holds_list(argument.id)]
