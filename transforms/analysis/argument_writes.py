"""Writes a function makes into its own arguments (`x[0] = v`, `x /= n`, `xs.append(v)`,
`np.copyto(x, v)`), which its caller sees: a derivative takes the argument's value on entry,
and a caller's derivative must know that the call changes what it passed.

What one statement writes into is said here (`names_written_in_place`, `call_writes`); what a
called function writes into through the names that share an argument's memory (`r = x[1:]; r
*= 2`) and through the functions it calls in turn is read with the model of memory of
transforms/analysis/aliases.py (alias_calls.CallSharing.parameters_written).
"""
from __future__ import annotations

import collections
import inspect
import types

import gast
import numpy as np

from .call_results import NUMBERS_OF_AN_ARRAY, VIEW_FUNCTIONS, numpy_name
from .liveness import live_after
from ..codegen.naming import walk_scope
from ..front.out_arguments import WRITTEN_AS
from ..front.parsing import MISSING, resolve
from ..codegen.codegen import to_source
from ..errors import TransformError

# The attribute of a Python function that keeps which of its parameters it writes into
# (alias_calls.CallSharing.parameters_written); one of autotrace's helpers whose writes are
# followed keeps "written": () there.
PARAMETERS_WRITTEN = "__autotrace_parameters_written__"
# List methods that change the list in place and that the transforms follow (others are
# refused wherever they are called: transforms/front/inplace.py).
CONTAINER_WRITES = {"append", "extend", "insert", "pop"}
# What a global bound to one of these holds is never changed in place.
_UNCHANGING = (int, float, complex, str, bytes, np.generic, type(None))
# Methods that change their object in place, which the transforms refuse where the function
# differentiated calls them on a variable (transforms/front/inplace.py).
IN_PLACE_METHODS = {"sort", "fill", "put", "resize", "partition", "itemset", "byteswap",
                    "reverse", "remove", "clear", "update", "setdefault", "popitem"}
# The name of the in-place operator method (`__iadd__`) Python runs for `a op= v`, by op.
IN_PLACE_OPERATORS = {
    gast.Add: "__iadd__", gast.Sub: "__isub__", gast.Mult: "__imul__", gast.Div: "__itruediv__",
    gast.FloorDiv: "__ifloordiv__", gast.Mod: "__imod__", gast.Pow: "__ipow__",
    gast.MatMult: "__imatmul__", gast.BitAnd: "__iand__", gast.BitOr: "__ior__",
    gast.BitXor: "__ixor__", gast.LShift: "__ilshift__", gast.RShift: "__irshift__"}
# The special methods that change their object, called by name (`a.__setitem__(0, v)`).
SPECIAL_WRITES = {"__setitem__", "__delitem__", *IN_PLACE_OPERATORS.values()}
# NumPy's functions that write into their first argument, and what to write instead.
WRITING_FUNCTIONS = {
    "copyto": "{0}[...] = {1}", "put": "{0}[np.unravel_index({1}, {0}.shape)] = {2}",
    "place": "{0}[{1}] = {2}", "putmask": "{0} = np.where({1}, {2}, {0})",
    "fill_diagonal": "{0}[np.diag_indices(min({0}.shape), {0}.ndim)] = {1}",
    "put_along_axis": "{0}[np.arange({0}.shape[0])[:, None], {1}] = {2} (a matrix, "
                      "axis=1)",
}


def numpy_function_writes(value) -> tuple:
    """parameters_written's tuples for `value` where it is one of NumPy's functions that write
    into their first argument (`np.copyto`, handed to a function that calls it), else ()."""
    name = getattr(value, "__name__", None)
    if name not in WRITING_FUNCTIONS or getattr(np, name, None) is not value:
        return ()
    try:
        first = next(iter(inspect.signature(value).parameters))
    except (TypeError, ValueError, StopIteration):
        first = "a"
    return ((0, first, f"np.{name}(...)", "numpy", None, True, 0),)


def call_writes(call: gast.Call) -> list:
    """The expressions whose value `call` changes in place, with the write as a user reads it:
    a method's object (`xs.append(v)`, `A.sort()`, `d.update(...)`, `A.__setitem__(i, v)`), the
    first argument of a ufunc's `.at` or of a NumPy function that writes into it
    (`np.add.at(A, i, v)`, `np.copyto(A, v)`), an `out=`. Read from the source alone, so a
    function of another name that has one of these names counts too: the safe side."""
    func, written = call.func, []
    if isinstance(func, gast.Attribute):
        if func.attr in CONTAINER_WRITES | IN_PLACE_METHODS | SPECIAL_WRITES:
            written.append(func.value)
        if (func.attr in WRITING_FUNCTIONS or func.attr == "at") and call.args and not isinstance(
                call.args[0], gast.Starred):
            written.append(call.args[0])
    for keyword in call.keywords:
        if keyword.arg == "out":
            out = keyword.value
            written.extend(out.elts if isinstance(out, gast.Tuple) else [out])
    return [(expression, f"{_text(func)}(...)") for expression in written
            if not (isinstance(expression, gast.Constant) and expression.value is None)]


def rebinds(write) -> bool:
    """Whether `write` is `x op= v` with x a name: in place where x is an array or a list, a
    new value bound to x where it is a number (or a tuple, a string)."""
    return isinstance(write, gast.AugAssign) and isinstance(write.target, gast.Name)


def names_written_in_place(function: gast.FunctionDef, statements=None) -> dict:
    """The names that `function` writes into (`x[0] = v`, `x.a[i] = v`, `x op= v`,
    `call_writes`): name -> the first such write, one that changes x in place wherever x is
    written so (`rebinds` not) where there is one. `statements`: those of its body to read
    (all of them where None)."""
    written = {}

    def note(name, write):
        if name not in written or rebinds(written[name]) and not rebinds(write):
            written[name] = write
    body = function.body if statements is None else statements
    for node in (n for statement in body for n in walk_scope(statement)):
        targets = (node.targets if isinstance(node, gast.Assign) else [node.target]
                   if isinstance(node, gast.AugAssign) else [])
        for target in targets:
            if isinstance(target, gast.Subscript) and base_name(target) is not None:
                note(base_name(target).id, node)
        if rebinds(node):
            note(node.target.id, node)
        if isinstance(node, gast.Call):
            for expression, _ in call_writes(node):
                if base_name(expression) is not None:
                    note(base_name(expression).id, node)
    return written


def changed_by_list_methods_alone(function: gast.FunctionDef, name: str,
                                  copies: frozenset = frozenset()) -> bool:
    """Whether `function` changes the list `name` by list methods alone (`xs.append(v)`),
    never the arrays it holds: each use of the name is such a call's receiver, the list given
    whole to a function that reads it (`np.stack(xs)`, `len(xs)`), an item read as an
    operand (`xs[-1] * 2`, `np.sin(xs[i])`), the list returned (`return xs, h`), or a copy
    of it bound to its name (`xs = f(xs)`, f one of the functions named in `copies`, which
    copy a list and leave its arrays as they are). Any other use (an item bound to a name,
    which a write could change in place) makes it False."""
    uses = [n for statement in function.body for n in walk_scope(statement)
            if isinstance(n, gast.Name) and n.id == name]
    read = set()
    for node in (n for statement in function.body for n in walk_scope(statement)):
        if isinstance(node, gast.Return) and node.value is not None:
            returned = node.value.elts if isinstance(node.value, (gast.Tuple, gast.List)) \
                else [node.value]
            read.update(id(value) for value in returned if isinstance(value, gast.Name))
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], gast.Name) and node.targets[0].id == name and isinstance(
                node.value, gast.Call) and isinstance(node.value.func, gast.Name) and \
                node.value.func.id in copies and len(node.value.args) == 1 and \
                isinstance(node.value.args[0], gast.Name) and not node.value.keywords:
            read.update((id(node.targets[0]), id(node.value.args[0])))
        if isinstance(node, gast.Call):
            receiver = node.func.value if isinstance(node.func, gast.Attribute) else None
            if isinstance(receiver, gast.Name) and node.func.attr in CONTAINER_WRITES:
                read.add(id(receiver))
            if _reads_a_whole_list(node.func):
                read.update(id(arg) for arg in node.args if isinstance(arg, gast.Name))
            read.update(_items_read(node.args))
        elif isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            read.update(_items_read([getattr(node, "left", None), getattr(node, "right", None),
                                     getattr(node, "operand", None),
                                     *getattr(node, "comparators", [])]))
    return bool(uses) and all(id(use) in read for use in uses)


# Functions that read a list given whole and change neither it nor its arrays.
_LIST_READERS = frozenset({"len", "sum", "stack", "concatenate", "vstack", "hstack",
                           "array", "asarray", "mean"})


def _reads_a_whole_list(func) -> bool:
    return (isinstance(func, gast.Name) and func.id in _LIST_READERS) or (
        isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
        and func.attr in _LIST_READERS)


def _items_read(operands) -> set:
    """The ids of the names `name[...]` reads of among `operands` (a read of an item)."""
    return {id(operand.value) for operand in operands
            if isinstance(operand, gast.Subscript) and isinstance(operand.value, gast.Name)
            and isinstance(operand.ctx, gast.Load)}


# Values that are new, never the memory of an argument (a number, a new array of arithmetic).
NEW_VALUES = (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare, gast.List, gast.Dict,
              gast.Set, gast.ListComp, gast.DictComp, gast.SetComp, gast.GeneratorExp,
              gast.JoinedStr, gast.Lambda)


def arguments_written_in_place(function: gast.FunctionDef) -> dict:
    """Those of `names_written_in_place` that are parameters, in the order of the parameters.
    Where a statement of the function's body, of its own (not in an `if` or a loop), binds a
    parameter to a new value (`a = a * 1.0`), only the writes up to it count: after it the
    name holds no memory of the argument's (`a += b` then writes into the new array)."""
    written = names_written_in_place(function)
    found = {}
    for parameter in (p for p in parameter_names(function) if p in written):
        rebound = next((index for index, statement in enumerate(function.body)
                        if _binds_new_value(statement, parameter)), None)
        if rebound is not None:
            written_before = names_written_in_place(function, function.body[:rebound + 1])
            if parameter not in written_before:
                continue
            found[parameter] = written_before[parameter]
        else:
            found[parameter] = written[parameter]
    return found


def _binds_new_value(statement, name: str) -> bool:
    """Whether `statement` is `name = <a new value>` (NEW_VALUES)."""
    return isinstance(statement, gast.Assign) and len(statement.targets) == 1 and isinstance(
        statement.targets[0], gast.Name) and statement.targets[0].id == name and isinstance(
        statement.value, NEW_VALUES)


def enclosing_names_written(function: gast.FunctionDef, namespace: dict | None = None,
                            written_by_call=None) -> dict:
    """Those of `names_written_in_place` that are the enclosing function's (closure
    variables): neither parameters nor bound in `function`; and those that a name of its own
    may view, written through it (`r = A[0]; r *= 2.0`, `for row in A: row[0] = v`). A name
    `namespace` binds to a module is left out: `np.append(...)` and `np.insert(...)` are its
    functions, not list methods; so is one it binds to a number or a string, which nothing
    changes in place. `written_by_call`, where given, gives for a call in `function` the
    names (of it or of the enclosing function) that the function called writes into: a
    helper that changes its argument, or another function defined beside this one."""
    own = set(parameter_names(function)) | {
        n.id for statement in function.body for n in walk_scope(statement)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    namespace = namespace or {}
    viewed = _enclosing_names_viewed(function, own, namespace)
    written = names_written_in_place(function)
    for node in (n for statement in function.body for n in walk_scope(statement)):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            written.setdefault(node.target.id, node)  # an array's `r *= 2` changes it in place
        if isinstance(node, gast.Call) and written_by_call is not None:
            for name in written_by_call(node, own):
                written.setdefault(name, node)
    found = {}
    for name, write in written.items():
        for enclosing in sorted(viewed.get(name, ()) if name in own else {name}):
            if enclosing not in namespace or not isinstance(
                    namespace[enclosing], (types.ModuleType, *_UNCHANGING)):
                found.setdefault(enclosing, write)
    return found


def _enclosing_names_viewed(function, own: set, namespace: dict) -> dict:
    """A name of `function`'s own -> the enclosing function's names whose memory it may be or
    view: bound (anywhere in it) to such a name, an item, slice or attribute of one (an item
    of a list is what it holds), a view NumPy gives of one (`A.reshape(...)`), or a loop's item
    over one."""
    direct = {}
    for node in (n for statement in function.body for n in walk_scope(statement)):
        if isinstance(node, (gast.Assign, gast.AnnAssign, gast.NamedExpr)) and \
                node.value is not None:
            targets, value = getattr(node, "targets", None) or [node.target], node.value
        elif isinstance(node, gast.For):
            targets, value = [node.target], node.iter
        else:
            continue
        read = _names_viewed(value, namespace)
        for target in targets:
            # (the names it binds: not those of `m[i] = v`, which binds no name)
            for name in (n.id for n in walk_scope(target)
                         if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)):
                direct.setdefault(name, set()).update(read)
    viewed = {}
    for name in direct:  # `r = A[0]; s = r[1:]`: s views A
        found, todo = set(), [name]
        while todo:
            for other in direct.get(todo.pop(), ()):
                if other not in found:
                    found.add(other)
                    todo.append(other)
        viewed[name] = found - own
    return viewed


def _names_viewed(value, namespace: dict) -> set:
    """The names whose memory expression `value` may be or view (its items, for a loop)."""
    if isinstance(value, gast.Name):
        return {value.id}
    if isinstance(value, gast.Subscript):
        base = value.value
        index = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        array = namespace.get(base.id) if isinstance(base, gast.Name) else None
        if isinstance(value.slice, gast.List) or isinstance(array, np.ndarray) and len(
                index) >= array.ndim and not any(isinstance(i, gast.Slice) for i in index):
            return set()  # `A[[0, 2]]` copies; a number of a global array is no view
        return _names_viewed(base, namespace)
    if isinstance(value, gast.Attribute):
        return set() if value.attr in NUMBERS_OF_AN_ARRAY else _names_viewed(
            value.value, namespace)
    if isinstance(value, gast.Call):
        func = value.func
        if isinstance(func, gast.Attribute) and func.attr in VIEW_FUNCTIONS and \
                resolve(func, namespace) is MISSING:  # a value's view method, not np.ravel
            return _names_viewed(func.value, namespace)
        if numpy_name(func, namespace) in VIEW_FUNCTIONS and value.args:
            return _names_viewed(value.args[0], namespace)
        return set()
    if isinstance(value, (gast.IfExp, gast.BoolOp, gast.Tuple, gast.List)):
        parts = ([value.body, value.orelse] if isinstance(value, gast.IfExp) else
                 value.values if isinstance(value, gast.BoolOp) else value.elts)
        return set().union(*(_names_viewed(part, namespace) for part in parts))
    return set()


def outside_write_message(variable: str, write: str) -> str:
    """The refusal of a write into `variable`, a global or closure variable, in every mode."""
    return (f"the function changes {variable!r} in place ({write}), a global or closure "
            f"variable that it does not make: autotrace follows writes only into values the "
            f"function makes or is passed. Pass {variable} as an argument and return its new "
            f"value, or write into a copy made in the function "
            f"(new_{variable} = {variable}.copy())")


def parameter_names(function: gast.FunctionDef) -> list:
    return [a.id for a in function.args.posonlyargs + function.args.args
            + function.args.kwonlyargs]


def writes_into_arguments(function: gast.FunctionDef) -> dict:
    """Those of `arguments_written_in_place` made while the parameter's name still holds the
    argument (not after `x = np.copy(x)`, say)."""
    found = {}
    for parameter, write in arguments_written_in_place(function).items():
        bindings = [n.lineno for statement in function.body for n in walk_scope(statement)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
                    and n.id == parameter]
        if not bindings or min(bindings) >= write.lineno:
            found[parameter] = write
    return found


def base_name(target):
    """The Name node that `x[i].a[j]` writes into (x), or None."""
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target if isinstance(target, gast.Name) else None


AUGMENTED_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
              gast.MatMult: "@", gast.Mod: "%", gast.FloorDiv: "//", gast.BitAnd: "&",
              gast.BitOr: "|", gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>"}


def operator_text(node) -> str:
    """`+=` for `a += b`."""
    return AUGMENTED_SYMBOLS[type(node.op)] + "="


def write_text(write) -> str:
    """`x[0] = ...`, `x += ...` or `xs.append(...)`, for a write into `x`; the user's call for
    one written for it (`np.fill_diagonal(x, v)`: front/out_arguments.py)."""
    written_as = getattr(write, WRITTEN_AS, None)
    if written_as is not None:
        return written_as
    if isinstance(write, gast.Call):
        return f"{_text(write.func)}(...)"
    target = write.targets[0] if isinstance(write, gast.Assign) else write.target
    operator = "=" if isinstance(write, gast.Assign) else operator_text(write)
    return f"{_text(target)} {operator} ..."


def statement_text(statement) -> str:
    """`statement` as the user wrote it: its source, or the call it was written for."""
    return getattr(statement, WRITTEN_AS, None) or _text(statement)


def _text(node) -> str:
    return to_source(node).strip()


def arguments_read_after(call, later: set, sources: dict, loads) -> tuple:
    """The positions and keywords of `call`'s arguments (A-normal form) whose memory the
    caller may read after the call: every one but a name of a list, dict or array the
    function made (`sources`: name -> the value assigned to it) that nothing after the call
    reads (`later`, the names live after it) and that the function reads nowhere else
    (`loads`: name -> how many times it is read), where no other name or container could have
    taken it."""
    def read(argument) -> bool:
        return not isinstance(argument, gast.Name) or argument.id in later or \
            loads[argument.id] != 1 or not isinstance(sources.get(argument.id), (
                gast.Call, gast.List, gast.Dict))
    return tuple([index for index, argument in enumerate(call.args) if read(argument)]
                 + [keyword.arg for keyword in call.keywords if read(keyword.value)])


class ReadAfter:
    """arguments_read_after for the calls of one function's `statements` (A-normal form, its
    return statements included), called as read_after(call, statement), `statement` the one
    holding `call`. What it needs (the names live after each statement, the values assigned
    to names, how often each name is read) is found at the first call asked about, as the
    statements are then, and kept: most functions ask about none, so ask before putting in
    a statement that reads names again."""

    def __init__(self, statements: list):
        self.statements = statements
        self.found = None

    def __call__(self, call, statement) -> tuple:
        if self.found is None:
            nodes = [n for s in self.statements for n in walk_scope(s)]
            sources = {n.targets[0].id: n.value for n in nodes if isinstance(n, gast.Assign)
                       and isinstance(n.targets[0], gast.Name)}
            loads = collections.Counter(n.id for n in nodes if isinstance(n, gast.Name)
                                        and isinstance(n.ctx, gast.Load))
            self.found = live_after(self.statements), sources, loads
        later, sources, loads = self.found
        return arguments_read_after(call, later.get(id(statement), set()), sources, loads)


def refuse_arguments_written(function, written, bound, read_after, filename: str,
                              line: int) -> None:
    """Raise TransformError at `filename`, `line` where a call, resolved only when it runs, of
    the Python function `function` (a method of `bound`, or None) writes into one of its
    parameters (not `self`; `written`: alias_calls.CallSharing.parameters_written's) whose
    argument the caller reads afterwards (`read_after`, as arguments_read_after gives them;
    None where not known): autotrace follows what the call returns, so the gradient of what
    it writes would be lost. (`x op= v` into the parameter counts too: it is in place where
    the argument is an array or a list.)"""
    first = 0 if bound is None else 1
    for position, parameter, what, where, at, *_ in written:
        if position < first or read_after is not None and \
                position - first not in read_after and parameter not in read_after:
            continue
        raise TransformError(
            f"this call of {function.__qualname__} (found only when it runs) changes its "
            f"argument {parameter!r} in place ({what}, {where}, line {at}), which autotrace "
            f"does not follow back into the function that calls it: the gradient of what it "
            f"writes would be lost; return the new value from {function.__name__} instead",
            filename, line, "write into an argument")
