"""Writes the transforms do not follow are refused; those they can follow become values.

autotrace follows values: `A[i] = v` gives A a new value, and `A += v` is read as `A = A + v`.
NumPy also writes through other names, and a gradient taken as if those writes changed
nothing would be wrong. So:

- `out` in a call of NumPy's (or `out=` of an array's method) is the write into it it is
  (transforms/front/out_arguments.py); where the call is inside an expression, it is refused;
- methods that change an array, list or dict in place (`A.sort()`, `a[2:4].fill(0)`, ...:
  transforms/front/method_writes.py) and the NumPy functions that write into an argument
  (`np.copyto`, `np.put`, `np.multiply.at`, ...) are refused, saying what to write instead
  (np.fill_diagonal but as a statement of its own, which out_arguments.py rewrites into the
  write it is);
- `np.add.at(A, index, v)` (repeated indices add up) becomes `A = accumulate_item(A, index, v)`;
- an argument written in place (`x[0] = v`, `xs.append(v)`) is copied first, so that the
  gradient is with respect to its value on entry;
- a write into memory that another name reads afterwards is refused (transforms/analysis/aliases.py).
"""
from __future__ import annotations

import collections
import types

import gast
import numpy as np

from ..analysis import aliases
from ..analysis.alias_calls import CalledWith
from ..analysis.alias_items import UnpackedItem, WrittenItem
from ..analysis.alias_keys import OtherItems
from ..analysis.distinct_names import HoldsNoArrays
from ..analysis.call_results import numpy_name
from ..analysis.written_by_calls import arguments_calls_write
from ..analysis.argument_writes import (IN_PLACE_OPERATORS, WRITING_FUNCTIONS,
                                        NEW_VALUES, arguments_written_in_place,
                                        changed_by_list_methods_alone, parameter_names,
                                        enclosing_names_written, outside_write_message,
                                        rebinds, write_text)
from ..errors import Location, TransformError
from ..codegen.naming import SCOPES, walk_scope
from .method_writes import check_method_writes
from .out_arguments import array_method_out, out_argument
from .parsing import MISSING, resolve
from ..codegen.nodes import walk
from ..codegen.codegen import to_source
from ..codegen.templates import index_value
from ..rules.core import constant
from .shared_items import shares_written_part
from ...runtime.derivatives.items import shallow_copy
from ...runtime.derivatives.moved_items import moved_traced_item
from ...runtime.derivatives.snapshots import is_mutable_array
from ...runtime.primitives.memory import holds_no_arrays

def check_writes(function: gast.FunctionDef, location: Location, namespace: dict,
                 checked_callees: set) -> list:
    """Raise TransformError at the first write that the transforms would not follow.

    Returns the `A op= v` statements to check when they run, and adds to `checked_callees`
    the code of the functions whose calls were checked (aliases.check_writes)."""
    # Nested functions and comprehensions included: what runs there writes too.
    nodes = [n for statement in function.body for n in walk(statement)]
    parameters = {a.id for a in function.args.args + function.args.posonlyargs
                  + function.args.kwonlyargs}
    variables = parameters | {n.id for n in nodes
                              if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    statements = {id(n.value) for n in nodes if isinstance(n, gast.Expr)}
    if _may_write_outside(nodes, parameters, namespace):
        _refuse_writes_outside(function, location, namespace)
    check_method_writes(nodes, location, namespace, variables, parameters)
    for node in nodes:
        if isinstance(node, gast.Call):
            _check_out_argument(node, location, namespace)
            _check_writing_function(node, location, namespace, id(node) in statements)
    return aliases.check_writes(function, location, namespace, checked_callees)


def follow_writes(function: gast.FunctionDef, namespace: dict, helper, guards: list,
                  location: Location, called: bool, numpy: str, fresh) -> None:
    """Turn the writes the transforms follow into values: `np.add.at` becomes an assignment,
    arguments written in place are copied on entry, and `guards` (from check_writes) are
    checked before they run.

    numpy: the name NumPy has in the function's namespace; fresh(hint): a new name.
    called: the function is differentiated for a caller that did not check what its call
    writes into (autotrace.grad checks the calls of the functions it can name). The caller
    would not see a change to an argument, so that is refused."""
    written = arguments_written_in_place(function)
    for argument, call in arguments_calls_write(function, namespace).items():
        written.setdefault(argument, call)  # (a copy, as for `x[0] = v` written here)
    checked = _refuse_writes_into_arguments(function, location, namespace) if called else {}
    guarded = collections.defaultdict(list)  # id(statement) -> [(message, name checked)]
    for node, message, subject in guards:
        guarded[id(node)].append((message, subject))
    # The nodes of the function's own scope, read once by the searches below. (What is
    # written below holds no block of statements: the blocks are those found here.)
    nodes = [node for statement in function.body for node in walk_scope(statement)]
    # Each statement is checked with the statements it holds, a nested one again in its own
    # block; most functions give no array method its out by position, which one walk finds
    # (what is written below holds no such call the function did not).
    out_by_position = any(
        isinstance(node, gast.Call) and array_method_out(node, namespace) is not None
        for node in nodes)
    outside = _may_hold_outside_memory(function, nodes)
    for body in _bodies(function, nodes):
        for index, statement in reversed(list(enumerate(body))):
            if isinstance(statement, gast.AugAssign):
                body[index:index] = _cast_check(statement, helper, location, fresh)
            if isinstance(statement, gast.AugAssign) and isinstance(statement.target, gast.Name) \
                    and statement.target.id in outside:
                # NumPy writes into an array x (an argument's, or a name for one: `z = y`)
                body.insert(index, _statement(
                    f"{helper('refuse_read_only')}({statement.target.id}, "
                    f"{location.filename!r}, {location.line_of(statement)})", statement))
            if id(statement) in checked:  # `x op= v` into an argument: in place where an array
                message = _argument_write_message(*checked[id(statement)])
                body.insert(index, _statement(
                    f"{helper('refuse_shared_write')}({statement.target.id}, {message!r}, "
                    f"{location.filename!r}, {location.line_of(statement)}, "
                    f"'mutation of an argument')", statement))
            if out_by_position:
                for check in _array_method_out_checks(statement, namespace, helper,
                                                      location):
                    body.insert(index, check)
            if _is_add_at(statement, namespace):
                body[index] = _add_at_as_assignment(statement, helper, numpy)
            checks = guarded.get(id(statement), [])
            # L[k] op= v or A[i] = v checked when it runs: an index (or value) that calls
            # something, evaluated once
            hoisted = _hoisted_calls(statement, fresh) if any(
                isinstance(subject, (OtherItems, WrittenItem)) for _, subject in checks) else []
            inserted = set()  # a loop's statement may be guarded once per pass over it
            for message, subject in reversed(checks):
                where = f"{message!r}, {location.filename!r}, {location.line_of(statement)}"
                if isinstance(subject, OtherItems):
                    check = (f"{helper('refuse_shared_items')}({subject.container}, "
                             f"{_text(index_value(statement.target.slice))}, {where}, "
                             f"read={subject.read!r})")
                elif isinstance(subject, UnpackedItem):
                    check = (f"{helper('refuse_shared_item')}({subject.item}, {where}, "
                             f"container={subject.container})")
                elif isinstance(subject, WrittenItem):  # `pivot = A[k]`, then `A[i] = v`
                    part = _text(index_value(_subscript_target(statement).slice))
                    check = (f"{helper('refuse_shared_item')}({subject.item}, {where}, "
                             f"written={subject.array}, index={part})")
                elif isinstance(subject, CalledWith):  # a call writing `x op= v` into it
                    items = f", items={subject.items}" if subject.items else ""
                    check = f"{helper('refuse_shared_write')}({subject.argument}, {where}{items})"
                elif isinstance(subject, HoldsNoArrays):
                    check = f"{helper('refuse_holding')}({subject.name}, {where})"
                elif subject is not None:
                    check = f"{helper('refuse_shared_item')}({subject}, {where})"
                else:
                    target = statement.target
                    # `L[i] += v` changes the item in place where L is a list or dict, not an
                    # array
                    within = (f", container={_text(target.value)}"
                              if isinstance(target, gast.Subscript) else "")
                    method = IN_PLACE_OPERATORS.get(type(getattr(statement, "op", None)))
                    within += f", method={method!r}" if method is not None else ""
                    check = f"{helper('refuse_shared_write')}({_text(target)}, {where}{within})"
                if check not in inserted:
                    inserted.add(check)
                    body.insert(index, _statement(check, statement))
            body[index:index] = hoisted
    function.body[:0] = [statement for argument, write in written.items()
                         for statement in _argument_copy(function, argument, write, helper,
                                                         location, not rebinds(write),
                                                         _list_copies(namespace))]


# The ufunc NumPy's `A op= v` calls, by operator (with `out=A`)
_UFUNCS = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply", gast.Div: "divide",
           gast.FloorDiv: "floor_divide", gast.Mod: "remainder", gast.Pow: "power"}


def _cast_check(statement, helper, location: Location, fresh) -> list:
    """The statements before `x op= v` (or `A[s] op= v`) that raise NumPy's error where x is an
    array whose dtype the result does not cast to (a float added into an integer array): the
    derivative reads it as `x = x op v`, which would give x a new dtype instead. A value that
    is no name or constant is computed once, into a name of its own."""
    ufunc, target = _UFUNCS.get(type(statement.op)), statement.target
    # (`self.v op= x` too: an autotrace.Variable there refuses it)
    if ufunc is None or not isinstance(target, (gast.Name, gast.Subscript, gast.Attribute)) \
            or any(isinstance(node, gast.Call) for node in walk(target)):
        return []
    hoisted = []
    if not isinstance(statement.value, (gast.Name, gast.Constant)):
        held = fresh("operand")
        hoisted.append(_statement(f"{held} = {_text(statement.value)}", statement))
        statement.value = gast.Name(id=held, ctx=gast.Load(), annotation=None,
                                    type_comment=None)
    check = (f"{helper('refuse_cast_in_place')}({_text(target)}, {_text(statement.value)}, "
             f"{ufunc!r}, {location.filename!r}, {location.line_of(statement)})")
    return hoisted + [_statement(check, statement)]


def _list_copies(namespace: dict) -> frozenset:
    """The names `namespace` gives the functions that copy a list and not its arrays: `list`,
    and the helper a loop's segments copy the lists they change with (front/segments.py)."""
    names = {name for name, value in namespace.items() if value is shallow_copy}
    return frozenset(names | ({"list"} if namespace.get("list", list) is list else set()))




def _may_hold_outside_memory(function, nodes: list) -> set:
    """The names that may hold an array the function did not make, which may be read-only:
    its parameters, and those it binds to another name, an item, an attribute, a call's
    result or a loop's item (all but `NEW_VALUES`), for the check before `name op= v`.
    nodes: those of the function's own scope."""
    names = set(parameter_names(function))
    for node in nodes:
        if isinstance(node, (gast.Assign, gast.AnnAssign, gast.NamedExpr)):
            if isinstance(node.value, NEW_VALUES) or node.value is None:
                continue
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        elif isinstance(node, (gast.For, gast.comprehension)):
            targets = [node.target]
        elif isinstance(node, gast.withitem) and node.optional_vars is not None:
            targets = [node.optional_vars]
        else:
            continue
        names.update(n.id for target in targets for n in walk(target)
                     if isinstance(n, gast.Name))
    return names


def _argument_copy(function, argument: str, write, helper, location, copy: bool,
                   copies: frozenset) -> list:
    """What the function does first about an argument it changes in place (`write`): where
    it has other arguments, check that none shares the argument's memory, which NumPy's write
    would change too (shared_items.refuse_shared_argument); with `copy`, `argument =
    snapshot(argument)`, the copy it writes into (an item assignment, a list method), where
    the derivative of `x += v` gives x a new value instead."""
    others = [name for name in parameter_names(function) + [
        a.id for a in (function.args.vararg, function.args.kwarg) if a is not None]
        if name != argument]
    held = "{" + ", ".join(f"{other!r}: {other}" for other in others) + "}"
    # (`xs.append(v)` alone changes the list, not its arrays, which other arguments may be)
    lists_alone = ", list_alone=True" if changed_by_list_methods_alone(
        function, argument, copies) else ""
    check = (f"{helper('refuse_shared_argument')}({argument}, {held}, {argument!r}, "
             f"{write_text(write)!r}, {location.filename!r}, {location.line_of(write)}"
             f"{lists_alone})")
    texts = ([check] if others else []) + (
        [f"{argument} = {helper('argument_snapshot')}({argument})"] if copy else [])
    return [_statement(text, function) for text in texts]


def _hoisted_calls(statement, fresh) -> list:
    """The statements to run before `L[k] op= v` or `A[i] = v` and its checks, where its index
    calls something, or the value of `A[i] = v` does (the check evaluates the index again, and
    a call must run once): each such part of the index (an item of a tuple, a bound of a
    slice), and that value, computed into a name of its own in Python's order (an
    assignment's value first), which the statement then reads: `A[int(k)] = f(x)` becomes
    `value = f(x)`, `index = int(k)`, `A[index] = value`."""
    hoisted = []

    def held(node, hint):
        name = fresh(hint)
        hoisted.append(_statement(f"{name} = {_text(node)}", statement))
        return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)

    def part(node, hint="index"):
        return held(node, hint) if node is not None and _calls(node) else node

    if isinstance(statement, gast.Assign):
        statement.value = part(statement.value, "value")
    def piece(node):
        if isinstance(node, gast.Slice):  # (its bounds in order: lower, upper, step)
            node.lower, node.upper, node.step = [part(bound) for bound in (
                node.lower, node.upper, node.step)]
            return node
        return part(node)

    target = _subscript_target(statement)
    if isinstance(target.slice, gast.Tuple):
        target.slice.elts = [piece(node) for node in target.slice.elts]
    else:
        target.slice = piece(target.slice)
    return hoisted


def _calls(node) -> bool:
    return any(isinstance(inner, gast.Call) for inner in walk(node))


def _subscript_target(statement):
    """The subscript `statement` writes into (`A[i] = v`, `L[k] op= v`)."""
    return statement.targets[0] if isinstance(statement, gast.Assign) else statement.target


def refuse_shared_write(value, message: str, filename: str, line: int,
                        construct: str = "write into shared memory", container=None,
                        method: str | None = None, items: int = 0) -> None:
    """Raise TransformError where `value`, about to be changed by `op=`, is changed in place: an
    array (not a NumPy number) or a list, or an object whose class has the operator's own
    in-place `method` (`__iadd__`, which may change what it holds). Generated code calls it
    before `A op= v` where another name that is read afterwards may share A's memory, and
    before `A.method(..., out)` with out given by position (`construct` "out="). Before
    `L[i] op= v` it is given the item L[i] and L as `container`: the item changes in place
    only where L is not an array itself. Before a call of a function that writes `s op= v`
    into a name bound to an item of its argument by `items` integer indices (`s = x[0]`), it
    is given that argument: the item is a NumPy number (refuse_shared_item), which `op=` binds
    anew, where the argument is an array (not of objects) of `items` dimensions or fewer; of
    a list, tuple or dict, it is one of its items, which `op=` binds anew where none of them
    is changed in place by an operator (numbers: `s = v[0]; s += v[i]`)."""
    if container is not None and is_mutable_array(container):
        return
    if items and is_mutable_array(value) and np.ndim(value) <= items and \
            value.dtype != object:
        return
    if items and isinstance(value, (list, tuple, dict)) and not any(
            _changed_in_place(item) for item in (
                value.values() if isinstance(value, dict) else value)):
        return
    if isinstance(value, (list, dict, set, bytearray)) or is_mutable_array(value) or (
            method is not None and _has_own_in_place(value, method)):
        raise TransformError(message, filename, line, construct)


def _changed_in_place(item) -> bool:
    """Whether an in-place operator (`item op= v`) may change `item` in place: a list, dict,
    set or bytearray, an array (or a traced value that may stand for one), or an object whose
    class has an in-place operator of its own."""
    return isinstance(item, (list, dict, set, bytearray)) or is_mutable_array(item) or getattr(
        item, "_may_be_array", lambda: False)() or any(
        _has_own_in_place(item, method) for method in IN_PLACE_OPERATORS.values())


def _has_own_in_place(value, method: str) -> bool:
    """Whether `value` is an object (not an array, traced value or number) whose class has
    the in-place operator `method`, which Python runs for `value op= v`."""
    return not (hasattr(value, "shape") and hasattr(value, "dtype")) and hasattr(
        type(value), method)


def refuse_shared_item(item, message: str, filename: str, line: int,
                       container=None, written=None, index=None) -> None:
    """Raise TransformError where `item`, bound to an item of an array (`s = A[2]`) and read
    after a write into that array, is an array: a view of it, where A has more than one
    dimension. Of a one-dimensional array it is a number, which the write leaves as it was.
    (A view with no dimension, `A[i]` with `i = Ellipsis`, is refused too: an array, or a
    traced value with a view link, runtime/tracing/views.py.) Given the `container` it was
    taken from (`A[0], A[1] = A[1], A[0]`), an item of a list, tuple or dict is no view.
    Given the array `written` into by `written[index] = v` (`A[i] = A[i] - f * pivot`, with
    `pivot = A[k]`), a view that shares no element with the part written is left as it
    was, and so is refused only where the parts meet (i == k)."""
    if isinstance(container, (list, tuple, dict)):
        return
    if not (np.ndim(item) > 0 or is_mutable_array(item)
            or getattr(item, "_link", None) is not None):
        return
    if written is not None and is_mutable_array(written) and not shares_written_part(
            item, written, index):
        return
    raise TransformError(message, filename, line, "write into shared memory")


def refuse_holding(value, message: str, filename: str, line: int) -> None:
    """Raise TransformError where `value`, bound to a name the model of memory takes to hold
    an array that a write changes, but surely not to be that array or a view of it (a buffer
    exchanged with another, `u, un = un, u`), may hold an array: a list, an object, an array
    of objects. An array of numbers, a traced value or a number holds none."""
    if not holds_no_arrays(value):
        raise TransformError(message, filename, line, "write into shared memory")


def refuse_moved_items(held, container, call: str, name: str, filename: str,
                       line: int) -> None:
    """Raise TransformError where the call just run (`call`, its text), in a traced `if` or
    loop body, replaced, moved or removed an item of `container` (named `name`) that held a
    traced array (`held`: what `read_item(container, ...)` saved before it;
    items.moved_traced_item), which the adjoint sweep could not write the saved values back
    into."""
    if moved_traced_item(held, container):
        raise TransformError(_MOVED_ITEM.format(call=call, name=name), filename, line,
                             "write into shared memory")


_MOVED_ITEM = (
    "{call} writes into an array that {name} holds and replaces, moves or removes it in {name}, "
    "inside a traced `if` or loop, which autotrace does not undo for the derivatives of the "
    "statements before it; leave the written item in its place, or return the new item and "
    "assign it after the `if` or loop")


# They check a value and give nothing: constants to the gradient.
constant(refuse_shared_write, refuse_shared_item, refuse_holding, refuse_moved_items)


def _array_method_out_checks(statement, namespace, helper, location) -> list:
    """Checks to run before `statement` for each `A.method(..., out)` in it with out given by
    position, which the transforms do not follow: they refuse it where A is an array."""
    checks = []
    for node in walk_scope(statement):
        found = array_method_out(node, namespace) if isinstance(node, gast.Call) else None
        if found is None:
            continue
        out, plain = found
        message = (f"{_text(node)} gives an array method its out argument by position, which "
                   f"autotrace does not follow; write it as a statement of its own: "
                   f"{_assigned_into(out)} = {_text(plain)}")
        checks.append(_statement(
            f"{helper('refuse_shared_write')}({node.func.value.id}, {message!r}, "
            f"{location.filename!r}, {location.line_of(node)}, 'out=')", statement))
    return checks


def _assigned_into(out) -> str:
    """The target that writes a value into the memory of `out`, as out= does: `y[...]` of a
    name, a subscript as it is (`a[3:]`, where `a[3:][...]` would write into a view)."""
    if isinstance(out, gast.Tuple) and len(out.elts) == 1:
        out = out.elts[0]  # out=(y,)
    return _text(out) if isinstance(out, gast.Subscript) else f"{_text(out)}[...]"


def _statement(text: str, at) -> gast.stmt:
    """The statement `text`, placed at the line of `at` (errors in it name the user's line)."""
    statement = gast.parse(text).body[0]
    for node in walk(statement):
        if "lineno" in node._attributes:
            gast.copy_location(node, at)
    return statement


def _bodies(function, nodes: list):
    """Every list of statements in `function`'s own scope (`nodes`: its nodes)."""
    yield function.body
    for node in nodes:
        if isinstance(node, gast.stmt) and not isinstance(node, SCOPES):
            for field in ("body", "orelse"):
                statements = getattr(node, field, None)
                if isinstance(statements, list) and statements:
                    yield statements


def _is_add_at(statement, namespace) -> bool:
    if not (isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Call)):
        return False
    func = statement.value.func
    return isinstance(func, gast.Attribute) and func.attr == "at" and resolve(
        func.value, namespace) is np.add


def _add_at_as_assignment(statement, helper, numpy: str) -> gast.stmt:
    """`np.add.at(A, index, v)` as `A = accumulate_item(A, index, v broadcast to A[index])`:
    a new value, whose gradient rules exist, with NumPy's sum over repeated indices."""
    target, index, values = (_text(a) for a in statement.value.args)
    return _statement(
        f"{target} = {helper('accumulate_item')}({target}, {index}, {numpy}.broadcast_to("
        f"{values}, {numpy}.shape({target}[{index}])))", statement)


def _refuse_writes_into_arguments(function, location, namespace) -> dict:
    """Refuse the first write into an argument made while its name still holds the argument,
    itself or through a name that shares its memory, or by a function it calls. Returns
    id(statement) -> (parameter, write) for each `x op= v` that writes into an argument only
    where x is an array or a list (not a number), to check when it runs."""
    checked = {}
    for argument, (what, line, surely, _) in aliases.Sharing.writes_into_parameters(
            function, location, namespace, checked).items():
        if surely:
            raise TransformError(_argument_write_message(argument, what), location.filename,
                                 line, "mutation of an argument")
    return checked


def _argument_write_message(argument: str, what: str) -> str:
    return (f"the function changes its argument {argument!r} in place ({what}), and it is "
            f"called by a function being differentiated, which would not see the change; "
            f"return the new value instead, or work on a copy")


def _refuse_writes_outside(function, location, namespace) -> None:
    """Refuse the first write into a global or closure variable (`G[0] = v`, `G.append(v)`):
    memory the function neither makes nor receives. Its derivative would have to undo the
    write to read what came before (reverse mode), give it a tangent it has none of (forward
    mode), and a traced graph cannot make it on every call: the same refusal in every mode
    (for autotrace.function, runtime/tracing/control_statements.py `set_item`)."""
    for variable, write in enclosing_names_written(function, namespace).items():
        if variable in namespace:
            raise location.error(write, outside_write_message(variable, write_text(write)),
                                 "write into a global")


def _may_write_outside(nodes: list, parameters: set, namespace: dict) -> bool:
    """Whether _refuse_writes_outside may refuse a write among `nodes` (all those of the
    function's body): each name it refuses is one the function names, no parameter, that
    `namespace` binds to something other than a module. Most functions name none but NumPy's
    module and their own, and need not be searched for the writes and views of them."""
    names = {node.id for node in nodes if isinstance(node, gast.Name)} - parameters
    return any(name in namespace and not isinstance(namespace[name], types.ModuleType)
               for name in names)


def _check_out_argument(call, location, namespace) -> None:
    found = out_argument(call, namespace)
    if found is not None:  # one that transforms/front/out_arguments.py could not rewrite
        out, plain = found
        inner = out.elts[0] if isinstance(out, gast.Tuple) and len(out.elts) == 1 else out
        masked = any(k.arg == "where" for k in plain.keywords)  # (it keeps out where m is False)
        advice = (f"result = {_text(call)}" if masked or isinstance(inner, gast.Call) else
                  f"{_assigned_into(out)} = {_text(plain)}")
        raise location.error(
            call, f"autotrace follows a call's out argument only where the call is a statement "
            f"of its own, or the whole value of an assignment or return, and out is a "
            f"variable, an item of an array variable or made by a call (out=y, out=H[t + 1], "
            f"out=np.zeros_like(x)); here {_text(call)}: write it as a statement of its own: "
            f"{advice}", "out=")


def _check_writing_function(call, location, namespace, is_statement: bool) -> None:
    """Refuse NumPy's functions that write into an argument, and the ufunc method `.at` but
    for np.add.at on a variable, in a statement of its own (which the transforms follow)."""
    func = call.func
    owner = resolve(func.value, namespace) if isinstance(func, gast.Attribute) else MISSING
    if isinstance(owner, np.ufunc) and func.attr == "at":
        if owner is np.add and len(call.args) == 3 and isinstance(call.args[0], gast.Name) \
                and not call.keywords and is_statement:
            return
        raise location.error(
            call, f"autotrace cannot differentiate {_text(call)}, which changes its first "
            f"argument in place; it follows np.add.at(A, index, values) alone, as a statement "
            f"of its own with A a variable (np.subtract.at(A, index, values) is "
            f"np.add.at(A, index, -values))", ".at")
    function_name = numpy_name(func, namespace)
    if function_name == "nditer" and resolve(func, namespace) is np.nditer and \
            _writes_through_iterator(call):
        raise location.error(
            call, f"autotrace cannot differentiate {_text(call)}: the loop over it writes into "
            f"the array through the iterator (v[...] = ...), which autotrace does not follow; "
            f"loop over the indices and write into the array (for i in np.ndindex(a.shape): "
            f"a[i] = ...), or compute a new array", "np.nditer")
    if function_name == "nan_to_num" and resolve(func, namespace) is np.nan_to_num and (
            len(call.args) > 1 or any(k.arg == "copy" and not (
                isinstance(k.value, gast.Constant) and k.value.value is True)
                for k in call.keywords)):
        first = _text(call.args[0]) if call.args else "x"
        raise location.error(
            call, f"autotrace cannot differentiate {_text(call)}, which may write into its "
            f"first argument in place; assign instead: {first} = np.nan_to_num({first})",
            "np.nan_to_num")
    if function_name == "fill_diagonal" and resolve(func, namespace) is np.fill_diagonal:
        raise location.error(  # (as a statement of its own: out_arguments.py's write)
            call, f"autotrace follows np.fill_diagonal(a, val) as a statement of its own, with a "
            f"a variable, not {_text(call)}; write it so, or assign instead: "
            f"{WRITING_FUNCTIONS[function_name].format(*_written_and_value(call))}",
            "np.fill_diagonal")
    if function_name in WRITING_FUNCTIONS and resolve(func, namespace) is getattr(
            np, function_name, None):
        arguments = [_text(a) for a in call.args] + ["..."] * 3
        raise location.error(
            call, f"autotrace cannot differentiate np.{function_name}(...), which writes into "
            f"its first argument in place; assign instead: "
            f"{WRITING_FUNCTIONS[function_name].format(*arguments)}", f"np.{function_name}")


def _writes_through_iterator(call) -> bool:
    """Whether np.nditer's `call` may make an operand writable: op_flags naming "readwrite" or
    "writeonly", or not written out in the call (a variable)."""
    flags = next((k.value for k in call.keywords if k.arg == "op_flags"),
                 call.args[2] if len(call.args) > 2 else None)
    if flags is None:
        return any(k.arg is None for k in call.keywords)  # (**options: may hold op_flags)
    constants = [node for node in walk(flags) if isinstance(node, gast.Constant)]
    return any(node.value in ("readwrite", "writeonly") for node in constants) or any(
        not isinstance(node, (gast.List, gast.Tuple, gast.Constant, gast.Load))
        for node in walk(flags))


def _written_and_value(call) -> list:
    """The texts of np.fill_diagonal's a and val in `call` ("..." where not given by position)."""
    return ([_text(a) for a in call.args] + ["..."] * 2)[:2]


def _text(node) -> str:
    return to_source(node).strip()
