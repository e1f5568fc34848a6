"""Writes into the state of objects the function is given, or reads from outside.

A layer written as libraries write it changes its own state as it runs: it counts its calls,
makes its parameters on the first one, keeps the shapes it saw. Such a write, whose root is
a parameter the function never rebinds (`self`) or a global, runs once per call of the
user's function, as Python runs it, through a helper of runtime/derivatives/state_writes.py:

    self.n += 1                ->  assign_attribute(self, 'n', 1, '+', 'layer.py:12')
    self.stats['calls'] = 0    ->  assign_item(self.stats, 'calls', 0, None, 'layer.py:13')

Later passes see a call whose arguments carry no gradient, and neither save nor undo it. The
value written must carry none: `refuse_written_gradients` refuses one that does, at the user's
line, for the gradient through what reads it back would be lost. Where the function's
derivative runs its primal sweep more than once per call (a derivative of a derivative, a
checkpointed call, one under implicit_grad, and, traced, a call inside an `if` or loop on a
traced value), the write is refused, for it would happen twice.
"""
from __future__ import annotations

import os

import gast

from ..runtime.derivatives.state_writes import assign_attribute, assign_item, call_method
from .argument_writes import AUGMENTED_SYMBOLS
from .errors import Location
from .function_caches import made_from
from .nodes import walk

# The names the rewritten statements call, bound in the function's namespace.
_HELPERS = {"assign_attribute": assign_attribute, "assign_item": assign_item,
            "call_method": call_method}
# The methods of containers called for what they change: `self.cache.append(x)`.
_CHANGING_METHODS = {"append", "extend", "insert", "update", "setdefault", "clear", "remove",
                     "pop", "popitem", "add", "discard", "sort", "reverse", "fill"}
for _helper in _HELPERS.values():
    # What they write is the state this module hands them, which autotrace does not follow
    # (nothing read from it carries gradient): the analysis of writes into arguments that
    # reads a callee's source (transforms/argument_writes.py) takes them as writing none.
    made_from(_helper, "__autotrace_parameters_written__")["written"] = ()
# Why a derivative may run its function's primal sweep twice per call.
RUNS_TWICE = ("its derivative runs the function again where it is called (in a derivative of "
              "a derivative, a checkpointed call, a call under implicit_grad, or, traced, a "
              "call inside an if or loop on a traced value), so the write would happen twice")


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
            if not runs_once:
                raise location.error(statement, f"autotrace cannot differentiate this write "
                                     f"into the state of {root!r} ({text}): {RUNS_TWICE}",
                                     "write into an object's state")
            where = (f"{os.path.basename(location.filename)}:"
                     f"{location.line_of(statement)}")
            written[where] = text
            replacement = gast.Expr(value=_helper_call(target, statement, where, namespace))
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
    argument or a global, which transforms/inplace.py follows or refuses."""
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
    base = _as_load(target.value)
    if isinstance(statement, gast.Expr):  # x.append(v): call_method(x, 'append', (v,), ...)
        helper = "call_method"
        arguments = [base, _constant(target.attr),
                     gast.Tuple(elts=statement.value.args, ctx=gast.Load()), _constant(where)]
    else:
        symbol = (AUGMENTED_SYMBOLS[type(statement.op)]
                  if isinstance(statement, gast.AugAssign) else None)
        if isinstance(target, gast.Attribute):
            helper, arguments = "assign_attribute", [base, _constant(target.attr)]
        else:
            helper, arguments = "assign_item", [base, _as_key(target.slice)]
        arguments += [statement.value, _constant(symbol), _constant(where)]
    function = bind_global(namespace, helper, _HELPERS[helper])
    return gast.Call(func=gast.Name(id=function, ctx=gast.Load(), annotation=None,
                                    type_comment=None), args=arguments, keywords=[])


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
    from .codegen import to_source
    if isinstance(statement, gast.Expr):
        return f"{to_source(target).strip()}(...)"
    symbol = (AUGMENTED_SYMBOLS[type(statement.op)]
              if isinstance(statement, gast.AugAssign) else "")
    return f"{to_source(target).strip()} {symbol}= ..."


def refuse_written_gradients(body: list, location: Location, written: dict, varied: set,
                             namespace: dict) -> None:
    """Refuse a write into an object's state of a value that carries gradient (`varied`):
    what reads it back later in the call would lose that gradient."""
    helpers = {name for name, value in namespace.items()
               if any(value is helper for helper in _HELPERS.values())}
    for statement in body:
        for node in walk(statement):
            if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                    and node.func.id in helpers):
                continue
            value = node.args[2]  # what assign_attribute, assign_item, call_method write
            carried = [n.id for n in walk(value)
                       if isinstance(n, gast.Name) and n.id in varied]
            if carried:
                text = written.get(node.args[-1].value, "this write")
                raise location.error(
                    node, f"autotrace cannot differentiate {text}: it writes a value that "
                    "carries gradient into the state of an object, and autotrace does not "
                    "follow gradient through an object's state yet, so the gradient through "
                    "what reads it back would be lost; write autotrace.stop_gradient(value) if "
                    "the gradient through it is not wanted, or return the value",
                    "write into an object's state")
