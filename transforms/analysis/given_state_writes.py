"""Writes into the state of objects the function is given, or reads from outside.

A layer written as libraries write it changes its own state as it runs: it counts its calls,
makes its parameters on the first one, keeps the shapes it saw. Such a write, whose root is
a parameter the function never rebinds (`self`) or a global, runs once per call of the
user's function, as Python runs it, through a helper of runtime/derivatives/state_writes.py:

    self.n += 1                ->  write_state(self, '.', ('n',), 1, '+', 'layer.py:12')
    self.stats['calls'] = 0    ->  write_state(self, '.[', ('stats', 'calls'), 0, None,
                                               'layer.py:13')

Later passes see a call whose arguments carry no gradient, and neither save nor undo it. The
value written must carry none: `refuse_written_gradients` refuses one that does, at the user's
line, for the gradient through what reads it back would be lost. Where the function's
derivative runs its primal sweep again where it is called (a derivative of a derivative, a
checkpointed call, one under implicit_grad, and, traced, a call inside an `if` or loop on a
traced value), the helper call says so (`again=True`): it writes only inside a `state_as_at`
block, which runs it from the state its first run saw and then takes the writes back
(runtime/derivatives/state_log.py), and is refused elsewhere, for it would happen twice.
"""
from __future__ import annotations

import os

import gast

from ..codegen.nodes import copy_tree
from ...runtime.derivatives.state_writes import (call_method, reads_object, unread_message,
                                               write_state)
from .argument_writes import AUGMENTED_SYMBOLS, PARAMETERS_WRITTEN
from ..errors import Location
from ..front.function_caches import made_from
from ..front.out_arguments import WRITTEN_AS
from .argument_writes import parameter_names
from ..codegen.nodes import walk
from ..codegen.naming import walk_scope
from .object_state import (global_aliases, is_state_write, method_of_known_object,
                           state_write, statement_blocks)
from ..front.parsing import MISSING, parse_function, resolve
from ..codegen.codegen import to_source

# The names the rewritten statements call, bound in the function's namespace.
_HELPERS = {"write_state": write_state, "call_method": call_method}
# The methods of containers called for what they change: `self.cache.append(x)`.
_CHANGING_METHODS = {"append", "extend", "insert", "update", "setdefault", "clear", "remove",
                     "pop", "popitem", "add", "discard", "sort", "reverse", "fill"}
for _helper in _HELPERS.values():
    # What they write is the state this module hands them, which autotrace does not follow
    # (nothing read from it carries gradient): the analysis of writes into arguments that
    # reads a callee's source (transforms/analysis/alias_calls.py) takes them as writing none.
    made_from(_helper, PARAMETERS_WRITTEN)["written"] = ()
# Those that add one item, or the items of a sequence, at the end: written as a write at
# the index where the first goes, which the gradient of what reads it back is taken from.
_GROWING_METHODS = {"append", "extend"}
def bind_global(namespace: dict, name: str, value) -> str:
    """The name under which generated code reads `value` from `namespace`: `name`, unless
    the user's code has it for something else."""
    while namespace.get(name, value) is not value:
        name = "autotrace_" + name
    namespace[name] = value
    return name


def rewrite_state_writes(function: gast.FunctionDef, location: Location, namespace: dict,
                         runs_once: bool) -> dict:
    """Rewrite each write into an object's state in `function` (see the module docstring);
    return {where: the statement's text} for `refuse_written_gradients`."""
    arguments = function.args
    parameters = {a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    assigned = {node.id for node in walk(function)
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store)}
    written = {}

    def outside(root: str) -> bool:
        return root not in assigned and (root in parameters or root in namespace)

    def rewrite(block: list) -> list:
        out = []
        for statement in block:
            if isinstance(statement, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                out.append(statement)
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(statement, field, rewrite(inner))
            target = _single_target(statement) or _method_called(statement)
            root = None
            if target is not None and _through_attribute(
                    target.value if isinstance(statement, gast.Expr) else target):
                root = _root(target)
            if root is None or not outside(root):
                out.append(statement)
                continue
            text = _text(target, statement)
            where = (f"{os.path.basename(location.filename)}:"
                     f"{location.line_of(statement)}")
            written[where] = text
            call = _helper_call(target, statement, where, namespace)
            if not runs_once:  # made again where the derivative runs: see write_state
                call.keywords.append(gast.keyword(arg="again", value=_constant(True)))
            replacement = gast.Expr(value=call)
            setattr(replacement, WRITTEN_AS, to_source(statement).strip().splitlines()[0])
            for node in walk(replacement):
                if not hasattr(node, "lineno") and isinstance(node, (gast.expr, gast.stmt)):
                    gast.copy_location(node, statement)
            out.append(replacement)
        return out
    function.body = rewrite(function.body)
    return written


def _single_target(statement):
    """The attribute or subscript a statement assigns (`x.a = v`, `x[k] op= v`), or None."""
    if isinstance(statement, gast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, gast.AugAssign):
        target = statement.target
    else:
        return None
    return target if isinstance(target, (gast.Attribute, gast.Subscript)) else None


def _method_called(statement):
    """`x.a.method` of a statement `x.a.method(...)` that changes a container an object holds
    in place (a method of an object itself, `x.add(v)`, is differentiated as a call)."""
    if (isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Call)
            and isinstance(statement.value.func, gast.Attribute)
            and isinstance(statement.value.func.value, (gast.Attribute, gast.Subscript))
            and statement.value.func.attr in _CHANGING_METHODS
            and not statement.value.keywords
            and not any(isinstance(a, gast.Starred) for a in statement.value.args)):
        return statement.value.func
    return None


def _through_attribute(target) -> bool:
    """Whether a write reaches its root through an attribute (`self.a`, `layer.p['W']`): an
    object's state. Items of a name itself (`x[0] = v`, `BUFFER[i] = v`) are writes into an
    argument or a global, which transforms/front/inplace.py follows or refuses."""
    node = target
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        if isinstance(node, gast.Attribute):
            return True
        node = node.value
    return False


def _root(target) -> str | None:
    """The name an attribute or subscript chain starts from (`self` of `self.a['k']`)."""
    node = target
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _helper_call(target, statement, where: str, namespace: dict) -> gast.Call:
    call = statement.value
    if isinstance(statement, gast.Expr) and not (
            target.attr in _GROWING_METHODS and len(call.args) == 1):
        helper = "call_method"  # x.pop(): call_method(x, 'pop', (), ...)
        arguments = [_as_load(target.value), _constant(target.attr),
                     gast.Tuple(elts=call.args, ctx=gast.Load()), _constant(where)]
    else:  # self.p['W'] = v: write_state(self, '.[', ('p', 'W'), v, None, ...)
        helper = "write_state"
        if isinstance(statement, gast.Expr):
            # self.xs.append(v): write_state(self, '.[', ('xs', len(self.xs)), v, 'append')
            grown = _as_load(copy_tree(target.value))
            root, kinds, keys = _path(target.value)
            kinds += "["
            keys.append(gast.Call(func=gast.Name(id="len", ctx=gast.Load(), annotation=None,
                                                 type_comment=None),
                                  args=[grown], keywords=[]))
            value, symbol = call.args[0], target.attr
        else:
            root, kinds, keys = _path(target)
            value = statement.value
            symbol = (AUGMENTED_SYMBOLS[type(statement.op)]
                      if isinstance(statement, gast.AugAssign) else None)
        arguments = [_as_load(root), _constant(kinds),
                     gast.Tuple(elts=[_as_load(key) for key in keys], ctx=gast.Load()),
                     value, _constant(symbol), _constant(where)]
    function = bind_global(namespace, helper, _HELPERS[helper])
    return gast.Call(func=gast.Name(id=function, ctx=gast.Load(), annotation=None,
                                    type_comment=None), args=arguments, keywords=[])


def _path(target) -> tuple:
    """(the root, the kinds, the keys) of the path from a write's root to `target` (see
    runtime/derivatives/state_writes.py `write_state`)."""
    kinds, keys, node = "", [], target
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        if isinstance(node, gast.Attribute):
            kinds, keys = "." + kinds, [_constant(node.attr)] + keys
        else:
            kinds, keys = "[" + kinds, [_as_key(node.slice)] + keys
        node = node.value
    return node, kinds, keys


def _as_load(node):
    for inner in walk(node):
        if hasattr(inner, "ctx"):
            inner.ctx = gast.Load()
    return node


def _as_key(index):
    """A subscript's index as a value: `a:b` becomes `slice(a, b, None)`."""
    if isinstance(index, gast.Slice):
        return gast.Call(func=gast.Name(id="slice", ctx=gast.Load(), annotation=None,
                                        type_comment=None),
                         args=[part if part is not None else _constant(None)
                               for part in (index.lower, index.upper, index.step)],
                         keywords=[])
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_as_key(element) for element in index.elts], ctx=gast.Load())
    return index


def _constant(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def _text(target, statement) -> str:
    """`self.n += ...`: the statement, its value left out."""
    if isinstance(statement, gast.Expr):
        return f"{to_source(target).strip()}(...)"
    symbol = (AUGMENTED_SYMBOLS[type(statement.op)]
              if isinstance(statement, gast.AugAssign) else "")
    return f"{to_source(target).strip()} {symbol}= ..."


def refuse_written_gradients(body: list, location: Location, written: dict, varied: set,
                             namespace: dict) -> None:
    """Refuse a change of a container an object holds (`self.cache.append(v)`) with a value
    that carries gradient (`varied`): what reads it back later in the call would lose that
    gradient."""
    helpers = {name for name, value in namespace.items() if value is call_method}
    if not helpers:  # (no such change is written: nothing to look for)
        return
    for statement in body:
        for node in walk(statement):
            if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                    and node.func.id in helpers):
                continue
            value = node.args[2]  # the arguments of the method
            carried = [n.id for n in walk(value)
                       if isinstance(n, gast.Name) and n.id in varied]
            if carried:
                text = written.get(node.args[-1].value, "this write")
                raise location.error(
                    node, f"autotrace cannot differentiate {text}: it changes a container "
                    "held by an object with a value that carries gradient, and autotrace does "
                    "not follow gradient through such a change, so the gradient through what "
                    "reads it back would be lost; assign a new container instead (self.items "
                    "= self.items + [value]), write autotrace.stop_gradient(value) if the "
                    "gradient through it is not wanted, or return the value",
                    "write into an object's state")


def settle_state_writes(body: list, active: set, varied: set, wrt_names: list,
                        local_names: set, namespace: dict, namer, location: Location,
                        helper, outermost: bool, written: dict) -> set:
    """Make each write into the state of an object that carries gradient (its root in
    `active`, or differentiated: in `wrt_names`), or of a value that does (one of `varied`),
    rebind its root: `self = write_state(self, ...)` (see runtime/derivatives/state_writes.py),
    so that the passes after see the root change; one whose value carries no gradient says
    so, one in a function the differentiated one calls (not `outermost`) says that.

    A global root becomes a local of the function first (`layer_1 = layer` at its start, read
    there on), and a call that may read such a global without being given it is refused (see
    `_refuse_global_reads`). A value that carries gradient written into the state of an
    object that the caller of this function does not differentiate it with respect to (a
    global, or a parameter left out of `wrt_names`) is refused: that caller would not see the
    gradient through what it reads back. Return the roots rebound (activity then changes, and
    they are active). written: {where: the statement's text} (`rewrite_state_writes`)."""
    roots = active | set(wrt_names)

    def carries(value) -> bool:
        return any(isinstance(n, gast.Name) and n.id in varied for n in walk(value))
    writes = [statement for block in statement_blocks(body) for statement in block
              if isinstance(statement, gast.Expr) and is_state_write(statement.value, namespace)
              and isinstance(statement.value.args[0], gast.Name)
              and (statement.value.args[0].id in roots or carries(statement.value.args[3]))]
    if not writes:
        return set()
    for write in writes:
        root = write.value.args[0].id
        if root not in local_names and isinstance(namespace.get(root), type) and carries(
                write.value.args[3]):  # (autotrace reads a class's attributes as constants)
            text = written.get(write.value.args[5].value, "this write")
            raise location.error(write, _CLASS_ATTRIBUTE.format(
                text=text, target=text.split(" ")[0], root=root), "write into a class")
        if not outermost and root not in wrt_names and carries(write.value.args[3]):
            what = "the global" if root not in local_names else "the argument"
            raise location.error(write, _UNSEEN_BY_CALLER[what].format(
                text=written.get(write.value.args[5].value, "this write"), root=root),
                "write into an object's state")
    globals_written = {w.value.args[0].id for w in writes} - local_names
    renames = {root: namer.fresh(root) for root in sorted(globals_written)}
    for statement in body:
        for node in walk(statement):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]
    for block in statement_blocks(body):
        for index, statement in enumerate(block):
            if not any(statement is write for write in writes):
                continue
            call = statement.value
            if not carries(call.args[3]):
                call.keywords.append(gast.keyword(arg="carries_gradient",
                                                  value=_constant(False)))
            if not outermost:
                call.keywords.append(gast.keyword(arg="in_callee", value=_constant(True)))
            block[index] = gast.copy_location(gast.Assign(
                targets=[gast.Name(id=call.args[0].id, ctx=gast.Store(), annotation=None,
                                   type_comment=None)],
                value=call, type_comment=None), statement)
    _refuse_global_reads(body, renames, namespace, location, helper)
    for root, local in reversed(sorted(renames.items())):
        body.insert(0, gast.copy_location(gast.Assign(
            targets=[gast.Name(id=local, ctx=gast.Store(), annotation=None,
                               type_comment=None)],
            value=gast.Name(id=root, ctx=gast.Load(), annotation=None, type_comment=None),
            type_comment=None), writes[0]))
    return {write.value.args[0].id for write in writes}


_CLASS_ATTRIBUTE = (
    "autotrace cannot differentiate {text}, a write into the class attribute {target}: it "
    "writes a value that carries gradient, and autotrace reads the attributes of a class as "
    "constants, so the gradient through what reads it back would be lost; pass the value as "
    "an argument to what reads {target}, or keep it on an instance of {root} instead")


_UNSEEN_BY_CALLER = {
    "the global": (
        "autotrace cannot differentiate {text}, a write into the state of the global {root!r}: "
        "it writes a value that carries gradient, in a function called by the differentiated "
        "one, and what reads it back after the call would not carry that gradient; write it in "
        "the function you differentiate, or in a method of that object called through it "
        "({root}.method(...)), which is differentiated with respect to the object, return the "
        "value instead, or write autotrace.stop_gradient(value) if its gradient is not wanted"),
    "the argument": (
        "autotrace cannot differentiate {text}, a write into the state of the argument "
        "{root!r}: it writes a value that carries gradient, in a function called by the "
        "differentiated one, which does not differentiate it with respect to {root!r}, so the "
        "gradient through what reads it back after the call would be lost; write it in the "
        "function you differentiate, pass the object to the function that writes it, return "
        "the value instead, or write autotrace.stop_gradient(value) if its gradient is not "
        "wanted"),
}


def _refuse_global_reads(body: list, renames: dict, namespace: dict, location: Location,
                         helper) -> None:
    """Refuse each call in `body` of a function that may read a global in `renames` (into
    whose state the function writes a value that carries gradient) without being given it:
    its derivative would take what it reads there as a constant. A call found only when it
    runs gets `refuse_reads_of(...)` before it, which checks then."""
    for block in statement_blocks(body):
        for index in reversed(range(len(block))):
            statement = block[index]
            call = statement.value if isinstance(statement, (gast.Assign, gast.Expr)) else None
            if not isinstance(call, gast.Call) or is_state_write(call, namespace):
                continue
            given = {n.id for n in walk(call) if isinstance(n, gast.Name)}
            callee = resolve(call.func, namespace)
            for root, local in sorted(renames.items()):
                if local in given:
                    continue
                where = f"{os.path.basename(location.filename)}:{location.line_of(statement)}"
                if callee is MISSING:
                    guard = gast.Expr(value=gast.Call(
                        func=gast.Name(id=helper("refuse_reads_of"), ctx=gast.Load(),
                                       annotation=None, type_comment=None),
                        args=[_as_load(copy_tree(call.func)),
                              gast.Name(id=local, ctx=gast.Load(), annotation=None,
                                        type_comment=None),
                              _constant(root), _constant(where)], keywords=[]))
                    for node in walk(guard):
                        if "lineno" in node._attributes:
                            gast.copy_location(node, statement)
                    block.insert(index, guard)
                elif reads_object(callee, namespace[root]):
                    name = getattr(callee, "__qualname__", None) or repr(callee)
                    raise location.error(statement, unread_message(root, name),
                                         "write into an object's state")


def calls_changing_state(namespace: dict, body: list = ()):
    """changes(call) for transforms/analysis/activity.py `flows`: for a call of a method of an object
    autotrace can find before running (`layer.forward(x)`, `layer` a global, or a name of
    `body` bound to one: `layer_1 = layer` in a derivative differentiated again), the name of
    the object where the method writes a value made from its arguments into its state (a
    running mean from the batch it is given): that object then carries gradient, and its
    method is differentiated with respect to it, as a caller's object must be for the
    method's writes into it to be followed (see `settle_state_writes`)."""
    found = {}
    aliases = global_aliases([n for statement in body for n in walk_scope(statement)],
                             namespace)

    def changes(call) -> tuple:
        if id(call) not in found:
            found[id(call)] = None
            # (`layer(x)`, the object called: its class's __call__)
            owner = call.func.value if isinstance(call.func, gast.Attribute) else call.func
            if isinstance(owner, gast.Name) and (call.args or call.keywords):
                func = call.func
                if owner.id in aliases:
                    func = gast.Name(id=aliases[owner.id], ctx=gast.Load(), annotation=None,
                                     type_comment=None)
                    if isinstance(call.func, gast.Attribute):
                        func = gast.Attribute(value=func, attr=call.func.attr, ctx=gast.Load())
                function, bound = method_of_known_object(func, namespace)
                if function is not None:
                    parameters = parameter_names(parse_function(function).node)
                    written = state_write(function, set(parameters[1:]), bound)
                    if written is not None and written[0] == parameters[0]:
                        found[id(call)] = owner  # (a node: what a later pass renames)
        owner = found[id(call)]
        return (owner.id,) if owner is not None else ()
    return changes


def call_changing_objects_by_method(body: list, changes) -> None:
    """Write each call `layer(x)` of an object found before running whose `__call__` writes
    into its state (`changes`, of `calls_changing_state`) as the call of that method,
    `layer.__call__(x)`, as `layer.forward(x)` is written: the method is then differentiated
    with respect to its object, whose state it changes (a class body's `__call__ = forward`
    makes the two calls one)."""
    for statement in body:
        for node in walk_scope(statement):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                    changes(node):
                node.func = gast.copy_location(gast.Attribute(
                    value=node.func, attr="__call__", ctx=gast.Load()), node.func)

