"""What a function's statements read and write, for the control-flow conversion
(transforms/control_flow/control_flow.py), which makes a converted statement's variables from it.

A statement's variables are those its body assigns or mutates (`a[i] = v`, `l.append(v)`, a
call of a function that writes into what it is given: `names_calls_write`), among the
function's local variables by Python's rule (`assigned_names`, codegen/naming.py
`local_names`); a variable read after the statement (`loaded_names`) is live, and a loop
carries it. A statement that jumps out (a return, or a break or continue of its own loop:
`_jumps`) stays Python code.
"""
from __future__ import annotations

import collections
import re

import gast

from ..analysis.written_by_calls import arguments_written_by
from ..codegen.naming import SCOPES, local_names, made_functions, name_counts, walk_scope
from ..codegen.codegen import to_source
from ..codegen.templates import name


# Methods that change the container they are called on (`l.append(v)` assigns `l`).
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
    "add", "discard", "sort", "reverse", "fill", "resize", "itemset", "put"})


_LOOPS = (gast.For, gast.While, gast.AsyncFor)


def _base_name(node):
    """The name `a[i].b` reads from (a); through converted code's `indexable(a)[i]` too."""
    while isinstance(node, (gast.Subscript, gast.Attribute)) or _indexes(node):
        node = node.args[0] if isinstance(node, gast.Call) else node.value
    return node.id if isinstance(node, gast.Name) else None


def _indexes(node) -> bool:
    """Whether `node` is converted code's `indexable(a)` (control_flow_calls.py)."""
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id.endswith("_indexable") and len(node.args) == 1)


def assigned_names(statements, written_by_calls=()) -> list:
    """The variables `statements` assign or mutate, in order of first appearance (then
    `written_by_calls`, the names calls there give a function that writes into them:
    `names_calls_write`). The name of an `except ... as e` handler is none where nothing
    else assigns it: Python deletes it as the handler ends, so no statement can carry it on."""
    found: dict[str, None] = {}
    mutated = set(written_by_calls)  # the names written into in place
    handler_names = {id(node.name) for statement in statements
                     for node in walk_scope(statement)
                     if isinstance(node, gast.ExceptHandler) and node.name is not None}
    for statement in statements:
        for node in walk_scope(statement):
            if isinstance(node, (gast.FunctionDef, gast.ClassDef)):
                found[node.name] = None
            elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) \
                    and id(node) not in handler_names:
                found[node.id] = None
            elif _sets_item(node):  # `a = set_item(a, i, v)`, made of `a[i] = v`
                mutated.add(node.targets[0].id)
            elif isinstance(node, gast.Subscript) and isinstance(node.ctx, (gast.Store, gast.Del)):
                base = _base_name(node)
                if base is not None:
                    found[base] = None
                    mutated.add(base)
            elif (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                  and node.func.attr in MUTATING_METHODS):
                base = _base_name(node.func.value)
                if base is not None:
                    found[base] = None
                    mutated.add(base)
            elif _restores_item(node):
                # Derivative code's `restore_item(v, i, saved)` writes `v[i] = saved`: in a
                # branch or loop on a traced value, `v` is one of its variables, as it is
                # where the forward sweep wrote `v[i] = ...`.
                found[node.args[0].id] = None
                mutated.add(node.args[0].id)
            elif isinstance(node, (gast.Import, gast.ImportFrom)):
                for alias in node.names:
                    found[(alias.asname or alias.name).split(".")[0]] = None
    found.update(dict.fromkeys(written_by_calls))
    # `x = a; x[0] = v` (derivative code's `x = _t4; restore_item(x, ...)` too) mutates a, and
    # so do `x = a[0]; set_first(x)` where a is a list and `x = [a]; g(x)` (A-normal form's
    # `set_first(a[0])` and `g([a])`): a is a variable as well, so that the write goes into
    # the statement's own a.
    sources = [(set(_held_names(node.value)),
                {t.id for t in node.targets if isinstance(t, gast.Name)})
               for statement in statements for node in walk_scope(statement)
               if isinstance(node, gast.Assign) and isinstance(node.value, (
                   gast.Name, gast.Subscript, gast.List, gast.Tuple, gast.Dict))]
    while True:
        more = {source for held, targets in sources if targets & mutated
                for source in held - mutated}
        if not more:
            return list(found)
        mutated |= more
        found.update(dict.fromkeys(sorted(more - set(found))))


def _sets_item(node) -> bool:
    """Whether `node` is `a = set_item(a, i, v)` (transforms/control_flow/control_flow.py's
    `a[i] = v`, which writes into a where a is an array)."""
    return (isinstance(node, gast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.Call)
            and isinstance(node.value.func, gast.Name)
            and node.value.func.id.endswith("_set_item") and bool(node.value.args)
            and isinstance(node.value.args[0], gast.Name)
            and node.value.args[0].id == node.targets[0].id)


def _restores_item(node) -> bool:
    if not isinstance(node, gast.Call):
        return False
    function = node.func
    if isinstance(function, gast.Call) and function.args:  # converted(restore_item)
        function = function.args[0]
    return (isinstance(function, gast.Name) and function.id.startswith("restore_item")
            and len(node.args) == 3 and isinstance(node.args[0], gast.Name))


def loaded_names(nodes) -> set:
    """Every variable read in `nodes`, nested scopes included (closures read them too)."""
    return set(name_counts(nodes))


def _jumps(statements, loop_level: bool = True) -> bool:
    """Whether `statements` hold a return, a yield (a generator's: a derivative run in
    halves), or a break/continue of the loop they are in."""
    for statement in statements:
        for node in walk_scope(statement):
            if isinstance(node, (gast.Return, gast.Yield, gast.YieldFrom)):
                return True
            if loop_level and isinstance(node, (gast.Break, gast.Continue)):
                if _jump_outside_inner_loops(statement, node):
                    return True
    return False


def _jump_outside_inner_loops(root, target) -> bool:
    """Whether `target` (a break/continue under `root`) is not inside a loop under `root`."""
    def search(node, in_loop):
        if node is target:
            return not in_loop
        for child in gast.iter_child_nodes(node):
            if isinstance(child, SCOPES):
                continue
            found = search(child, in_loop or isinstance(child, _LOOPS))
            if found is not None:
                return found
        return None
    return bool(search(root, isinstance(root, _LOOPS) and root is not target))


def _early_returns(body: list) -> bool:
    """Whether a return of the function's `body` is not its last statement."""
    tail = body[-1:] if body and isinstance(body[-1], gast.Return) else []
    return any(isinstance(node, gast.Return) for statement in body
               if statement not in tail for node in walk_scope(statement))


def _jumps_in_loops(statements) -> bool:
    """Whether a loop in `statements` (this scope) holds a break, continue or return."""
    return any(isinstance(n, _LOOPS) and any(isinstance(m, (gast.Break, gast.Continue,
                                                             gast.Return))
                                             for b in n.body for m in walk_scope(b))
               for statement in statements for n in walk_scope(statement))


def names_calls_write(statements, local_names: set, namespace: dict) -> list:
    """The variables whose values the calls in `statements` give a Python function that may
    write into them (`set_first(a)`, `set_first(items[0])`: a, items), in order: a traced `if`
    or loop carries them, as it carries `a` where its body writes `a[0] = v` itself."""
    found: dict[str, None] = {}
    for statement in statements:
        for node in walk_scope(statement):
            if not isinstance(node, gast.Call):
                continue
            for given in arguments_written_by(_unconverted(node), local_names, namespace):
                found.update(dict.fromkeys(_held_names(given)))
    return list(found)


def _held_names(given) -> list:
    """The variables whose values the argument `given` passes: `a` of `a`, `a[0]` or `a.b`;
    each item's of a list, tuple or dict made there (`[a, b]`)."""
    if isinstance(given, (gast.List, gast.Tuple, gast.Set)):
        return [n for item in given.elts for n in _held_names(item)]
    if isinstance(given, gast.Dict):
        return [n for item in given.values for n in _held_names(item)]
    if isinstance(given, gast.Starred):
        return _held_names(given.value)
    base = _base_name(given)
    return [base] if base is not None else []


def _unconverted(call: gast.Call) -> gast.Call:
    """`g(x)` for converted code's `converted(g)(x)` (control_flow_calls.py), else `call`."""
    function = call.func
    if isinstance(function, gast.Call) and isinstance(function.func, gast.Name) and \
            function.func.id.endswith("_converted") and len(function.args) == 1:
        return gast.Call(func=function.args[0], args=call.args, keywords=call.keywords)
    return call


def trailing_stop(loop):
    """The flag of the `if <flag>: break` that exits_to_flags ends a loop body with (removed
    from the body), or None."""
    last = loop.body[-1] if loop.body else None
    if (isinstance(last, gast.If) and isinstance(last.test, gast.Name) and not last.orelse
            and len(last.body) == 1 and isinstance(last.body[0], gast.Break)):
        loop.body.pop()
        return last.test.id
    return None


def stop_statement(stop: str) -> gast.If:
    return gast.If(test=name(stop), body=[gast.Break()], orelse=[])


def closures_of(statements) -> list:
    """(line, variables, name, node) for each function, lambda and class defined in
    `statements`: the variables it reads from the function it is defined in (what it loads,
    less its own parameters and locals), and the name it is bound to where that name is only
    ever called and the function makes nothing that outlives the call (`def g`, `g = lambda
    ...`, then `g(...)`: it runs only where its name is read), else None (passed on or kept, a
    class's method, a generator, or a function making a function, a lambda or a class that it
    may return or store: it may run anywhere later)."""
    calls, reads, named = collections.Counter(), name_counts(statements), {}
    for statement in statements:
        for node in walk_scope(statement):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
                calls[node.func.id] += 1
            elif isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda) and \
                    len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
                named[id(node.value)] = node.targets[0].id
    closures = []
    for statement in statements:
        for scope in walk_scope(statement):
            if isinstance(scope, gast.ClassDef):
                closures.append((scope.lineno, loaded_names([scope]), None, scope))
            elif isinstance(scope, (gast.FunctionDef, gast.Lambda)):
                body = scope.body if isinstance(scope, gast.FunctionDef) else [scope.body]
                bound = scope.name if isinstance(scope, gast.FunctionDef) else named.get(
                    id(scope))
                if calls[bound] != reads[bound] or _outlived(body):
                    bound = None
                closures.append((scope.lineno, loaded_names([scope]) - local_names(
                    scope.args, body), bound, scope))
    return closures


def _outlived(body) -> bool:
    """Whether a function of `body` may leave something that runs after the call: a nested
    function, lambda, class or generator expression it makes (codegen/naming.py
    `made_functions`), or a yield (a generator)."""
    return bool(made_functions(body)) or any(
        isinstance(node, (gast.Yield, gast.YieldFrom, gast.Await))
        for statement in body for node in gast.walk(statement))


def _made_and_called(node, scope, bound) -> bool:
    """Whether the closure `scope`, bound to `bound` in a statement list inside `node`, is
    called only by later statements of that list: in the iteration, or the branch, that made
    it, with the values that list's own function holds, as Python's."""
    for lists in (getattr(inner, field, None) for inner in walk_scope(node)
                  for field in ("body", "orelse", "finalbody")):
        if not isinstance(lists, list):
            continue
        for index, statement in enumerate(lists):
            if statement is scope or (isinstance(statement, gast.Assign)
                                      and statement.value is scope):
                later = name_counts(lists[index + 1:])[bound]
                stores = name_counts([node], (gast.Store, gast.Del))[bound] + sum(
                    1 for s in walk_scope(node) if isinstance(s, gast.FunctionDef)
                    and s.name == bound)
                return later == name_counts([node])[bound] and stores == 1
    return False


def _called_before_writes(node, variables, bound) -> bool:
    """Whether an if `node` calls `bound`, a closure made before it, only before it assigns
    any of `variables` (in source order, no loop in it; in the assignment's own value at the
    latest), so that the closure reads the values from before the statement, as Python's."""
    if not isinstance(node, gast.If) or name_counts([node.test])[bound] or any(
            isinstance(inner, _LOOPS) for inner in walk_scope(node)):
        return False
    simple = [inner for inner in walk_scope(node) if isinstance(inner, gast.stmt)
              and not isinstance(inner, (gast.If, gast.With, gast.Try))]
    writes = [(inner.lineno, inner.col_offset) for inner in simple
              if set(assigned_names([inner])) & variables
              or any(isinstance(n, gast.NamedExpr) for n in gast.walk(inner))]
    first = min(writes, default=None)
    for inner in simple:
        if name_counts([inner])[bound] and first is not None:
            at = (inner.lineno, inner.col_offset)
            if at > first or at == first and not (isinstance(inner, gast.Assign) and not any(
                    isinstance(n, gast.NamedExpr) for n in gast.walk(inner))):
                return False
    return True


def captured_at(closures, node, loops, after) -> set:
    """The variables read by the closures that may run in `node` or after it (`after`: the
    variables read after it): those made before it ends, in it, or in one of the `loops`
    around it (an iteration's closure meets the next one's statement), but for one whose
    name, only ever called, is read neither in it nor after it; nor one whose name is read
    only in it, called only by the statements after it in the iteration or branch that made
    it, or (made before an if) only before the if assigns what it reads."""
    if node is None:
        return set()
    spans = [(loop.lineno, loop.end_lineno or loop.lineno) for loop in loops]
    end = getattr(node, "end_lineno", None) or node.lineno
    live = set(after) | loaded_names([node])
    captured = set()
    for line, variables, bound, scope in closures:
        if not (line <= end or any(first <= line <= last for first, last in spans)):
            continue
        if bound is not None and (bound not in live or bound not in after and (
                node.lineno <= line and _made_and_called(node, scope, bound)
                or line < node.lineno and _called_before_writes(node, variables, bound))):
            continue
        captured |= variables
    return captured


def over_trip_count(iterable) -> bool:
    """Whether a loop of generated code runs over `range(_n1)`, a trip count the primal sweep
    counted: the adjoint sweep's loop over the iterations of a loop."""
    return (isinstance(iterable, gast.Call) and getattr(iterable.func, "id", None) == "range"
            and len(iterable.args) == 1 and bool(re.fullmatch(r"_n\d+", to_source(
                iterable.args[0]).strip())))
