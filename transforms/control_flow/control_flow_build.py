"""Converting a function's control flow for tracing: read its source, let
transforms/control_flow/control_flow.py's ControlFlowConverter rewrite the tree, and compile the result back
into a function with the user's file, lines, globals and closure.

    converted = convert(function, helpers)   # helpers: HELPER_NAMES -> runtime functions
"""
from __future__ import annotations

import collections
import copy
import inspect
import types

import gast

from ..codegen.visitors import NodeVisitor
from ...runtime.derivatives.sequences import append_zeros_like
from ...runtime.derivatives.structure import zeros_like
from ..codegen.codegen import compile_in_factory, debug_source
from .control_flow import _USER, ControlFlowConverter
from .control_flow_calls import HELPER_NAMES, helper, may_be_traced_index
from ..derivative_record import derivative_record, source_of
from ..codegen.naming import Namer, names_in
from ..front.parsing import namespace_of, parse_function, resolve
from ..front.out_arguments import rewrite_add_at, rewrite_out_arguments
from ..front.class_method_calls import rewrite_class_method_calls
from ..front.loop_else import write_out_loop_else
from ..codegen.templates import name
from ..codegen.nodes import fill_missing_locations, to_ast, walk


def _has_control_flow(node) -> bool:
    """Whether `node` has control flow to convert (`and`, `or`, `not` and chained comparisons,
    which ask for truths, too), calls a function that may have some, reads an item at what
    may be a traced index (`W[labels]`: see control_flow_calls.py), writes an item, or has a
    try statement with handlers or a with statement (which must not catch tracing's errors:
    handled_errors.py).
    (Without a call, an array it writes into is one it is given, or a global: converted, the
    write of a traced value there is refused with its line and what to do, where NumPy would
    refuse `buf[0] = v` as "setting an array element with a sequence".)"""
    return any(isinstance(n, (gast.If, gast.While, gast.For, gast.IfExp, gast.BoolOp,
                              gast.Call)) or isinstance(n, gast.Subscript) and (
        isinstance(n.ctx, gast.Store) or may_be_traced_index(n.slice))
        or isinstance(n, gast.UnaryOp) and isinstance(n.op, gast.Not)  # (truths asked)
        or isinstance(n, gast.Compare) and len(n.ops) > 1
        or isinstance(n, gast.Try) and bool(n.handlers) or isinstance(n, gast.With)
        for n in walk(node))


def convert(function, helpers: dict):
    """`function` with its control flow converted to `helpers` calls; `function` itself when
    it has none, or when its source cannot be read (it is then traced as it is).

    Arguments:
        function: a Python function (or one that autotrace generated).
        helpers: HELPER_NAMES -> the runtime functions to call.
    """
    original = getattr(function, "__autotrace_python_function__", function)
    if inspect.ismethod(original):
        return types.MethodType(convert(original.__func__, helpers), original.__self__)
    if not inspect.isfunction(original) or _FACTORY in getattr(
            original.__code__, "co_qualname", original.__qualname__):
        return function  # not Python, or defined inside converted code (converted already)
    tree = _parse(original)
    if tree is None or not _has_control_flow(tree):
        return original
    code = original.__code__
    rewrite_class_method_calls(tree, namespace_of(original))  # np.ndarray.sort(a): a.sort()
    # np.sin(x, out=y) as y[...] = np.sin(x): a write that converted code makes traced where y
    # is an array made here (set_item), as it does y[i] = v.
    rewrite_out_arguments(tree, namespace_of(original), helper,
                          lambda statement: (code.co_filename, statement.lineno),
                          Namer(names_in(tree)).temporary)
    rewrite_add_at(tree, namespace_of(original), helper)  # np.add.at(K, i, v) likewise
    write_out_loop_else(tree)  # a loop's else: after it, under a flag where it breaks
    for node in walk(tree):
        setattr(node, _USER, True)
    namer = Namer(names_in(tree))
    converter = ControlFlowConverter(namer, code.co_filename, namespace_of(original))
    record = derivative_record(original)
    converter.generated_code = record is not None and record.source is not None
    if converter.generated_code:
        converter.origin = _user_origin(original)
        _mark_stacks(tree, namespace_of(original))
        converter.user_lines = record.lines or {}
        converter.user_nones = record.user_nones or frozenset()
    tree = converter.function(tree)
    debug_source("control_flow", tree)
    return _compile(tree, original, helpers, converter.generated)


def _user_origin(derivative) -> str | None:
    """`second derivative of f (file.py:12)` for code generated from the user's function f:
    errors in it name the user's function, where the generated lines mean nothing to them."""
    order, function, record = 0, derivative, derivative_record(derivative)
    while record is not None and record.source is not None and record.primal is not None:
        order, function = order + 1, record.primal
        record = derivative_record(function)
    code = getattr(function, "__code__", None)
    if order == 0 or code is None:
        return None
    kind = {1: "derivative", 2: "second derivative"}.get(order, f"derivative of order {order}")
    return (f"{kind} of {getattr(function, '__qualname__', function.__name__)} "
            f"({code.co_filename}:{code.co_firstlineno})")


def _mark_stacks(tree, namespace: dict) -> None:
    """`stack = []` becomes `stack = SavedValues()` for each list that generated code only
    pushes onto and pops from (see runtime.tracing.stacks.SavedValues); `tangents = zeros_like(stack)`
    (forward mode over reverse-mode code) and `b_stack = zeros_like(stack)` (reverse over
    reverse) are stacks of the same kind, made by `SavedValues.zeros_like`. The gradient of a
    stack is pushed and popped as a value (`_GradientStackEdits`); those become `append` and
    `pop` too. A list used otherwise is a list like any other."""
    uses, stack_uses = collections.Counter(), collections.Counter()
    creations, zeros_of = [], {}
    gradient_edits = _GradientStackEdits(namespace)
    gradient_edits.visit(tree)
    stack_uses.update(gradient_edits.uses)
    for node in walk(tree):
        if isinstance(node, gast.Name):
            uses[node.id] += 1
        if (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)):
            target, value = node.targets[0].id, node.value
            if isinstance(value, gast.List) and not value.elts:
                creations.append(node)
                stack_uses[target] += 1
            elif (isinstance(value, gast.Call) and len(value.args) == 1
                  and isinstance(value.args[0], gast.Name)
                  and resolve(value.func, namespace) is zeros_like):
                zeros_of[target] = value.args[0].id
                creations.append(node)
                stack_uses[target] += 1
                stack_uses[value.args[0].id] += 1
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and node.func.attr in ("append", "pop") and isinstance(node.func.value, gast.Name)):
            stack_uses[node.func.value.id] += 1
    stacks = {n for n, count in stack_uses.items() if count == uses[n]}
    while True:  # a list and the zeros made like it are stacks together, or neither is
        apart = {n for target, source in zeros_of.items() if (target in stacks) != (
            source in stacks) for n in (target, source)}
        if not apart & stacks:
            break
        stacks -= apart
    for node in creations:
        target = node.targets[0].id
        if target not in stacks:
            continue
        saved_values = name(helper("SavedValues"))
        if target in zeros_of:
            node.value.func = gast.Attribute(value=saved_values, attr="zeros_like",
                                             ctx=gast.Load())
            node.value.args.append(name(target))
        else:
            node.value = gast.Call(func=saved_values, args=[], keywords=[])
    # A gradient stack starts empty: made again in each branch of a traced if, it is then one
    # value the if passes on (see SavedValues.zeros_like).
    tree.body[:0] = [gast.copy_location(gast.Assign(
        targets=[name(target, store=True)], value=gast.Call(
            func=name(helper("SavedValues")), args=[], keywords=[]), type_comment=None),
        tree.body[0]) for target in sorted(set(zeros_of) & stacks)]
    gradient_edits.apply(stacks)


class _GradientStackEdits(NodeVisitor):
    """Where generated code pushes and pops the gradient of a stack as a value, and what makes
    those `append` and `pop` statements:

        b_stack = b_stack + [g]                    b_stack.append(g)
        b_stack = append_zeros_like(b_stack, v)    b_stack.append(zeros_like(v))
        g = ... b_stack[-1] ...                    g = ... b_stack.pop() ...
        b_stack = b_stack[:-1]                     (the pop above; alone, `b_stack.pop()`)

    `uses` counts the names read or assigned in those forms, for `_mark_stacks` to compare
    with all of their uses."""

    def __init__(self, namespace: dict):
        self.namespace = namespace
        self.uses = collections.Counter()
        self.edits = []  # (name, block, statement, what to do)

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                self._block(block)
        super().generic_visit(node)

    def _block(self, block: list) -> None:
        for index, statement in enumerate(block):
            kind, target = self._kind(statement)
            if kind is None:
                continue
            if kind == "drop_top":
                # The read of the top just before, in a simple statement, takes it off.
                before = block[index - 1] if index else None
                simple = isinstance(before, (gast.Assign, gast.Expr))
                tops = [node for node in walk(before) if _is_top_of(node, target)
                        ] if simple else []
                if len(tops) == 1:
                    self.uses[target] += 1
                    self.edits.append((target, block, statement, ("pop_into", tops[0])))
                else:
                    self.edits.append((target, block, statement, ("pop", None)))
            else:
                self.edits.append((target, block, statement, (kind, None)))
            self.uses[target] += 2

    def _kind(self, statement):
        """("push", name), ("push_zeros", name) or ("drop_top", name) for the forms above."""
        if not (isinstance(statement, gast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], gast.Name)):
            return None, None
        target, value = statement.targets[0].id, statement.value
        if (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)
                and _is_name(value.left, target) and isinstance(value.right, gast.List)
                and len(value.right.elts) == 1):
            return "push", target
        if (isinstance(value, gast.Call) and len(value.args) == 2 and not value.keywords
                and _is_name(value.args[0], target)
                and resolve(value.func, self.namespace) is append_zeros_like):
            return "push_zeros", target
        if (isinstance(value, gast.Subscript) and _is_name(value.value, target)
                and isinstance(value.slice, gast.Slice) and value.slice.lower is None
                and value.slice.step is None and _is_constant(value.slice.upper, -1)):
            return "drop_top", target
        return None, None

    def apply(self, stacks: set) -> None:
        """Rewrite the forms of the names in `stacks`."""
        for target, block, statement, (kind, top) in self.edits:
            if target not in stacks:
                continue
            value = statement.value
            if kind == "push":
                call = _method(target, "append", [value.right.elts[0]])
            elif kind == "push_zeros":
                call = _method(target, "append", [gast.Subscript(
                    value=gast.Call(func=gast.Attribute(
                        value=name(helper("SavedValues")), attr="zeros_like", ctx=gast.Load()),
                        args=[gast.List(elts=[value.args[1]], ctx=gast.Load())], keywords=[]),
                    slice=gast.Constant(value=0, kind=None), ctx=gast.Load())])
            elif kind == "pop_into":
                _replace_in(block[block.index(statement) - 1], top,
                            _method(target, "pop", []))
                block.remove(statement)
                continue
            else:
                call = _method(target, "pop", [])
            replacement = gast.Expr(value=call)
            gast.copy_location(replacement, statement)
            block[block.index(statement)] = replacement


def _is_name(node, identifier: str) -> bool:
    return isinstance(node, gast.Name) and node.id == identifier


def _is_constant(node, number: int) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return _is_constant(node.operand, -number)
    return isinstance(node, gast.Constant) and node.value == number


def _is_top_of(node, identifier: str) -> bool:
    """Whether `node` is `identifier[-1]`."""
    return (isinstance(node, gast.Subscript) and _is_name(node.value, identifier)
            and _is_constant(node.slice, -1))


def _method(identifier: str, method: str, args: list) -> gast.Call:
    return gast.Call(func=gast.Attribute(value=name(identifier), attr=method, ctx=gast.Load()),
                     args=args, keywords=[])


def _replace_in(tree, old, new) -> None:
    for node in walk(tree):
        for field, value in gast.iter_fields(node):
            if value is old:
                setattr(node, field, new)
            elif isinstance(value, list) and any(item is old for item in value):
                setattr(node, field, [new if item is old else item for item in value])


def _parse(function):
    source = source_of(function)
    try:
        if source is not None:
            tree = gast.parse(source).body[0]
            tree.decorator_list = []
            return tree
        parsed = parse_function(function)
        if getattr(function, "__autotrace_origin__", None) is None:
            first_line = parsed.location.first_line
        else:
            first_line = inspect.getsourcelines(function)[1]
    except Exception:  # noqa: BLE001 - no readable source: the function is traced as it is
        return None
    tree = parsed.node
    offset = first_line - 1
    for node in walk(tree):
        if getattr(node, "lineno", None) is not None:
            node.lineno += offset
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno += offset
    return tree


_FACTORY = "_autotrace_factory"


def _compile(tree: gast.FunctionDef, original, helpers: dict, generated=frozenset()):
    """Compile `tree` with the user's file name and lines; globals stay the function's own
    (live), closure cells are the original ones, helpers come in through cells of their own.
    The branch and loop functions of `generated` take the name of the function they are in,
    so that tracebacks name the user's function."""
    code = original.__code__
    # Named apart, so that the function's own name (recursion) still means the global.
    tree.name = "_autotrace_converted"
    free = list(code.co_freevars) + [helper(h) for h in HELPER_NAMES]
    function_code = compile_in_factory(fill_missing_locations(to_ast(tree)), free,
                                       code.co_filename, _FACTORY)
    cells = dict(zip(code.co_freevars, original.__closure__ or ()))
    for helper_name in HELPER_NAMES:
        cells[helper(helper_name)] = types.CellType(helpers[helper_name])
    closure = tuple(cells.get(v) or types.CellType() for v in function_code.co_freevars)
    function_code = _named_as_user_code(function_code.replace(co_name=code.co_name), generated)
    converted = types.FunctionType(function_code, original.__globals__, original.__name__,
                                   original.__defaults__, closure)
    converted.__kwdefaults__ = copy.copy(original.__kwdefaults__)
    converted.__qualname__ = original.__qualname__
    converted.__module__ = original.__module__
    converted.__doc__ = original.__doc__
    converted.__autotrace_converted_from__ = original
    return converted


def _named_as_user_code(code: types.CodeType, generated, name: str | None = None):
    """`code` with the functions of `generated` inside it named `name` (that of the user's
    function they are in) instead of `_if_true1` or `_loop_body2`."""
    own = code.co_name if code.co_name not in generated else name
    constants = tuple(_named_as_user_code(c, generated, own) if isinstance(c, types.CodeType)
                      else c for c in code.co_consts)
    return code.replace(co_consts=constants, co_name=own)
