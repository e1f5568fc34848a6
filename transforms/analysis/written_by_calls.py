"""The names a call statement gives a Python function that writes into them: `set_first(a)`
where set_first runs `a[0] = 0.0` (itself, through a view, or one call deeper).

A call whose write a name reads afterwards is refused (aliases.py); one whose write nothing
reads afterwards still changes what the arguments held before it, which the adjoint of an
earlier statement may read (`np.sin(a)`'s rule reads a). Reverse mode saves what such a name
holds before the call and writes it back in the adjoint sweep, as it does for `a[0] = 0.0`
written in the function itself (transforms/reverse/reverse.py).
"""
from __future__ import annotations

import gast

from .aliases import Sharing
from .argument_writes import base_name, parameter_names
from .call_results import own_function, python_callee
from ..codegen.naming import walk_scope


def call_of(statement) -> gast.Call | None:
    """The call that `statement` makes (`f(a)` or `y = f(a)`, in A-normal form), or None."""
    call = statement.value if isinstance(statement, (gast.Expr, gast.Assign)) else None
    return call if isinstance(call, gast.Call) else None


def names_a_call_writes(statement, local_names: set, namespace: dict) -> list:
    """`names_written_by` the call that `statement` makes (call_of); none for any other
    statement."""
    call = call_of(statement)
    return names_written_by(call, local_names, namespace) if call is not None else []


def names_written_by(call: gast.Call, local_names: set, namespace: dict) -> list:
    """The names among `arguments_written_by(call)`, each once; not one the function writes
    into only by `s op= v` into an item of it (`s = v[-1, 0]`): a NumPy number where v has no
    more dimensions than that item's indices, which the write binds anew, so writing v's old
    value back would write where the call did not (into an argument's memory, which a traced
    function refuses). Where v has more, reverse mode refuses the call when it runs
    (`item_writes_by`)."""
    written = []
    for given, (_, _, _, _, _, surely, items) in _written(call, local_names, namespace):
        if isinstance(given, gast.Name) and given.id not in written and (surely or not items):
            written.append(given.id)
    return written


def item_writes_by(call: gast.Call, local_names: set, namespace: dict) -> list:
    """(name, parameter, what, file, line, items) for each name `call` passes to a parameter
    its function writes into by `s op= v` alone, `s` bound to an item of it by `items`
    integer indices: in place where the argument has more dimensions than that."""
    return [(given.id, *record[1:5], record[6])
            for given, record in _written(call, local_names, namespace)
            if isinstance(given, gast.Name) and not record[5] and record[6]]


def arguments_written_by(call: gast.Call, local_names: set, namespace: dict) -> list:
    """The arguments (expressions) that `call` passes to parameters its Python function may
    write into while they hold the argument, in the order of the parameters."""
    return [given for given, _ in _written(call, local_names, namespace)]


def _written(call: gast.Call, local_names: set, namespace: dict) -> list:
    """(the argument given, the parameter's record of alias_calls.CallSharing.
    parameters_written) for each parameter `call`'s Python function may write into while it
    holds the argument; none for one of autotrace's own functions (a helper generated code
    calls, whose writes have rules of their own) or a function the source does not name."""
    if any(isinstance(a, gast.Starred) for a in call.args):
        return []
    callee, before = python_callee(call.func, local_names, namespace)
    if callee is None or own_function(callee):
        return []
    written = []
    for record in Sharing.parameters_written(callee):
        position, parameter = record[0] - before, record[1]
        if position < 0:
            continue  # (a method's object: its state's writes are followed, object_state.py)
        given = call.args[position] if position < len(call.args) else next(
            (k.value for k in call.keywords if k.arg == parameter), None)
        if given is not None:
            written.append((given, record))
    return written


def arguments_calls_write(function: gast.FunctionDef, namespace: dict) -> dict:
    """parameter -> the first call in `function` that passes it (or an item of it), while it
    still holds the argument, to a function that may write into it (`set_first(x)`,
    `set_first(xs[0])`), also as an item of a list, tuple or dict made there or held by a
    name (`g([x])`, `items = [x]` then `g(items)`): the derivative writes into a copy of the
    argument there too, as where the function writes `x[0] = v` itself (transforms/front/
    inplace.py)."""
    parameters = parameter_names(function)
    nodes = [n for statement in function.body for n in walk_scope(statement)]
    bound = {}  # parameter -> the first line binding it anew
    holders = {}  # a name bound to a list, tuple or dict made of parameters -> those
    for node in nodes:
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and \
                node.id in parameters:
            bound[node.id] = min(bound.get(node.id, node.lineno), node.lineno)
        elif isinstance(node, gast.Assign) and isinstance(node.value, _DISPLAYS):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    holders.setdefault(target.id, set()).update(_items_named(node.value))
    found = {}
    for call in (n for n in nodes if isinstance(n, gast.Call)):
        for given in arguments_written_by(call, set(), namespace):
            base = getattr(base_name(given), "id", None)  # (x, or x[0] of a list x)
            names = _items_named(given) if isinstance(given, _DISPLAYS) else {base} | (
                holders.get(base, set()))
            for name in sorted(n for n in names if n in parameters):
                if call.lineno < bound.get(name, call.lineno + 1) and (
                        name not in found or call.lineno < found[name].lineno):
                    found[name] = call
    return found


# What makes a new list, tuple or dict of the values it names.
_DISPLAYS = (gast.List, gast.Tuple, gast.Dict)


def _items_named(display) -> set:
    """The names `display` (`[x, y[0]]`, `{"k": x}`, nested too) holds or holds items of."""
    items = display.values if isinstance(display, gast.Dict) else display.elts
    found = set()
    for item in items:
        if isinstance(item, gast.Starred):
            item = item.value
        if isinstance(item, _DISPLAYS):
            found |= _items_named(item)
        elif base_name(item) is not None:
            found.add(base_name(item).id)
    return found
