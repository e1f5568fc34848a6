"""A NumPy call's `out` argument, given by keyword or by position, as the write it is.

`np.multiply(a, b, y)` and `np.multiply(a, b, out=y)` store the product into y's memory and
return y. The transforms follow values, so such a call is rewritten into that write, which they
then follow as any other (transforms/front/inplace.py, aliases.py: views of y and other names for its
memory see it):

    np.multiply(y, 3.0, y)             ->  y[...] = np.multiply(y, 3.0)
    z = np.clip(y, 0.0, 0.5, out=y)    ->  y[...] = np.clip(y, 0.0, 0.5); z = y
    return np.sin(x, out=y)            ->  y[...] = np.sin(x); return y

(each value checked first by `checked_out(value, y, name)`, which raises NumPy's error where
out= would not cast it: a float result into an integer array).

That is done where the call is a statement of its own, the whole value of an assignment or of a
return, and `out` is a variable (or a one-element tuple of one), or an item of one whose index
reads names and constants alone, a view of its memory as NumPy's basic indexing gives:

    np.tanh(h, out=H[t + 1])           ->  H[t + 1] = np.tanh(h)

(checked by `checked_out_item(value, H, t + 1, name, file, line)`, which refuses, naming the
user's line, an index that makes a copy, into which NumPy's out= would write and drop). An out
made by a call is assigned to a temporary first, with the arguments evaluated before it:

    r = np.sqrt(v, out=np.zeros_like(v))   ->  _out1 = np.zeros_like(v)
                                               _out1[...] = np.sqrt(v); r = _out1

A ufunc's where= keeps out's old values where the mask is False; each operand takes a safe
value there (runtime/primitives/out_writes.py masked_operand), so that no inf or NaN enters the
value or the gradient, and a mask read more than once is assigned to a temporary first:

    np.divide(a, b, out=c, where=b != 0)  ->  _where1 = b != 0
        c[...] = where(_where1, np.divide(masked_operand(a, _where1, 1),
                                          masked_operand(b, _where1, 1)), c)
Elsewhere the call is refused (inplace.py), naming the user's line: a silently ignored `out`
would give a wrong derivative.

An `out` that is None (`np.add(a, b, None)`, `out=(None,)`) means no out, as in NumPy: it is
left out of the call.

np.fill_diagonal writes into its first argument as out= does, into the items of its diagonal: a
statement `np.fill_diagonal(a, val, wrap)` with a a variable becomes that write (runtime/
primitives/diagonal_fill.py), as `a[i, i] = v` is one:

    np.fill_diagonal(a, v)   ->  a[diagonal_index(a, False)] = diagonal_values(v, a, False)

Elsewhere it is refused (inplace.py).

np.add.at writes into its first argument too. Converted code (`autotrace.function`) takes a
statement `np.add.at(a, index, v)` with a a variable as that write, so that an array made in
the function (`K = np.zeros((n, n))`) given traced values becomes traced as with `K[i] += v`
(the derivatives' front end makes it a value instead, inplace.py):

    np.add.at(K, idx, ke)   ->  K[...] = added_at(K, idx, ke)
"""
from __future__ import annotations

import copy

import gast
import numpy as np

from ..codegen.nodes import copy_tree
from ...runtime.primitives.out_writes import out_position, safe_operand
from ..analysis.call_results import numpy_name
from .parsing import MISSING, resolve
from ..codegen.codegen import to_source
from ..codegen.nodes import rewrite_statements, walk

# The attribute of a statement this rewrite made that keeps the user's call, which errors
# about the statement quote (`np.multiply(a, x, a)`, not `a[...] = ...`).
WRITTEN_AS = "autotrace_written_as"


def out_argument(call: gast.Call, namespace: dict):
    """(the `out` argument of `call`, the call without it) where `call` names a NumPy function
    or ufunc (or a method of an array, for `out=` by keyword) and passes `out`, else None."""
    keyword = next((k for k in call.keywords if k.arg == "out"), None)
    if keyword is not None:
        if not _may_take_out(call.func, namespace):
            return None
        return keyword.value, gast.Call(func=call.func, args=list(call.args),
                                        keywords=[k for k in call.keywords if k is not keyword])
    position = _out_position(call.func, namespace)
    if position is None or len(call.args) <= position or any(
            isinstance(argument, gast.Starred) for argument in call.args[:position + 1]):
        return None
    return call.args[position], gast.Call(
        func=call.func, args=call.args[:position] + call.args[position + 1:],
        keywords=list(call.keywords))


def array_method_out(call: gast.Call, namespace: dict):
    """(the out argument, the call without it) for `A.method(..., out)` with `out` given by
    position to a method of a variable that NumPy's arrays have (`y.clip(0, 1, y)`,
    `y.sum(0, None, s)`), else None. Whether A is an array is known only when it runs."""
    func = call.func
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
            and resolve(func, namespace) is MISSING and hasattr(np.ndarray, func.attr)):
        return None
    position = out_position(getattr(np, func.attr, None))
    if not position or len(call.args) < position or any(
            isinstance(argument, gast.Starred) for argument in call.args[:position]):
        return None
    return call.args[position - 1], gast.Call(
        func=func, args=call.args[:position - 1] + call.args[position:],
        keywords=list(call.keywords))


def rewrite_out_arguments(function: gast.FunctionDef, namespace: dict, helper, place,
                          temporary) -> None:
    """Rewrite each call with an `out` that is a statement of its own, or the whole value of an
    assignment or return, into the write into `out` it is, and each statement
    `np.fill_diagonal(a, ...)` into the write into a's diagonal (see the module docstring).

    helper(name): the name generated code calls a runtime helper by: `checked_out` and
    `checked_out_item` (runtime/primitives/out_writes.py), which raise NumPy's error where the
    result's dtype does not cast to out's as out= allows (and where out=y[index] is no view of
    y), `diagonal_index`, `diagonal_values`, `masked_operand` and `where` (np.where).
    place(statement): the user's (file, line) of one of `function`'s statements, which
    `checked_out_item` names where it refuses. temporary(hint): a fresh name for an argument
    read more than once (a mask, an out made by a call)."""
    for node in walk(function):
        if isinstance(node, gast.Call):
            _leave_out_none(node, namespace)
    containers = _containers(function)
    rewrite_statements(function, lambda statement: _rewrite(
        statement, namespace, helper, place, containers, temporary))


def rewrite_add_at(function: gast.FunctionDef, namespace: dict, helper) -> None:
    """Rewrite each statement `np.add.at(a, index, v)`, a a variable, into the write into a it
    is, `a[...] = added_at(a, index, v)` (runtime/primitives/out_writes.py), for converted
    code (see the module docstring). helper(name): the name converted code calls a runtime
    helper by."""
    rewrite_statements(function, lambda statement: [
        _add_at_write(statement, namespace, helper)])


def _add_at_write(statement, namespace, helper):
    call = statement.value if isinstance(statement, gast.Expr) else None
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "at" and resolve(call.func.value, namespace) is np.add
            and len(call.args) == 3 and not call.keywords and isinstance(call.args[0], gast.Name)
            and not any(isinstance(argument, gast.Starred) for argument in call.args)):
        return statement
    target = call.args[0].id
    value = gast.Call(func=_load(helper("added_at")), args=list(call.args), keywords=[])
    written = gast.Subscript(value=_load(target), slice=gast.Constant(value=Ellipsis, kind=None),
                             ctx=gast.Store())
    return _written_as(gast.Assign(targets=[written], value=value, type_comment=None), statement)


def _containers(function) -> set:
    """The names `function` binds to a list, tuple or dict it writes out (`rows = [x]`): an
    item of one is an array of its own, no view, which out= writes into and a write by name
    would replace (refused, inplace.py)."""
    displays = (gast.List, gast.Tuple, gast.Dict, gast.ListComp, gast.DictComp)
    return {target.id for node in walk(function) if isinstance(node, gast.Assign)
            and isinstance(node.value, displays) for target in node.targets
            if isinstance(target, gast.Name)}


def _rewrite(statement, namespace, helper, place, containers: set, temporary) -> list:
    call = statement.value if isinstance(statement, (gast.Expr, gast.Assign, gast.Return)) \
        else None
    if not isinstance(call, gast.Call):
        return [statement]
    diagonal = fill_diagonal_arguments(call, namespace)
    if isinstance(statement, gast.Expr) and diagonal is not None:
        return [_written_as(_diagonal_write(*diagonal, helper), statement)]
    found = out_argument(call, namespace)
    if found is None:
        return [statement]
    out, without_out = found
    by_keyword = not any(argument is out for argument in call.args)
    mask = _ufunc_mask(without_out, namespace)
    made = isinstance(_unpacked(out, by_keyword), gast.Call)  # out=np.zeros_like(a)
    item = _item_of_variable(out, by_keyword)
    item = None if item is None or item.value.id in containers else item
    if not made and item is None and _variable(out, by_keyword) is None:
        return [statement]
    out, mask, hoisted = _hoist(call, out, mask, without_out, temporary)
    target = _variable(out, by_keyword)
    function = resolve(call.func, namespace)
    function_name = getattr(function, "__name__", None) or getattr(call.func, "attr", "?")
    # `casting` says how the result may cast into out: the check takes it (the call without
    # out has no result to cast, and the derivative rules take no such keyword; np.einsum's
    # keeps it, by which its operands cast to their common dtype)
    casting = [k for k in without_out.keywords if k.arg == "casting"]
    if function is not np.einsum:
        without_out.keywords = [k for k in without_out.keywords if k.arg != "casting"]
    if mask is not None:  # where=m: each operand x as masked_operand(x, m, safe)
        safe = gast.Constant(value=safe_operand(function), kind=None)
        without_out.args = [gast.Call(func=_load(helper("masked_operand")), args=[
            operand, copy_tree(mask), copy_tree(safe)], keywords=[])
            for operand in without_out.args]
    label = gast.Constant(value=function_name, kind=None)
    if item is not None:  # out=y[index]: y[index] = checked_out_item(value, y, index, ...)
        checked = gast.Call(func=_load(helper("checked_out_item")), args=[
            without_out, copy_tree(item.value), _index_value(item.slice), label] + [
            gast.Constant(value=part, kind=None) for part in place(statement)], keywords=casting)
        written = copy_tree(item)
        written.ctx = gast.Store()
        out = item
    else:
        checked = gast.Call(func=_load(helper("checked_out")),
                            args=[without_out, _load(target), label] + [
            gast.Constant(value=part, kind=None) for part in place(statement)], keywords=casting)
        written = gast.Subscript(value=_load(target), slice=gast.Constant(
            value=Ellipsis, kind=None), ctx=gast.Store())
        out = _load(target)
    if mask is not None:  # out[...] = np.where(m, checked_out(ufunc(...), out, ...), out)
        checked = gast.Call(func=_load(helper("where")), args=[
            copy_tree(mask), checked, copy_tree(out)], keywords=[])
    rewritten = hoisted + [gast.Assign(targets=[written], value=checked, type_comment=None)]
    if not isinstance(statement, gast.Expr):  # the call's value is `out` itself
        rest = copy.copy(statement)
        rest.value = copy_tree(out)
        rewritten.append(rest)
    return [_written_as(new, statement) for new in rewritten]


def _ufunc_mask(call: gast.Call, namespace: dict):
    """The where= of `call`, a ufunc's (taken out of it), else None; None too where it is
    True, every element, which is no mask (NumPy's default)."""
    if not isinstance(resolve(call.func, namespace), np.ufunc):
        return None
    mask = next((k.value for k in call.keywords if k.arg == "where"), None)
    call.keywords = [k for k in call.keywords if k.arg != "where"]
    return None if isinstance(mask, gast.Constant) and mask.value is True else mask


def _hoist(call, out, mask, without_out, temporary):
    """(out, mask, assignments): the arguments of `call` that the rewrite reads more than once
    (a mask, an out made by a call: `out=np.zeros_like(a)`) assigned to temporaries first,
    with the arguments evaluated before them, in the order Python evaluates them."""
    arguments = list(call.args) + [k.value for k in call.keywords]
    inner = _unpacked(out, True)
    needed = [node for node in (inner if isinstance(inner, gast.Call) else None, mask)
              if node is not None and not isinstance(node, (gast.Name, gast.Constant))]
    if not needed:
        return out, mask, []
    order = [inner if node is out else node for node in arguments]
    last = max(next(i for i, node in enumerate(order) if node is wanted) for wanted in needed)
    names, assignments = {}, []
    for node in order[:last + 1]:
        if isinstance(node, (gast.Name, gast.Constant, gast.Starred)):
            continue
        hint = "out" if node is inner else "where" if node is mask else "t"
        names[id(node)] = temporary(hint)
        assignments.append(gast.Assign(targets=[gast.Name(
            id=names[id(node)], ctx=gast.Store(), annotation=None, type_comment=None)],
            value=node, type_comment=None))

    def named(node):
        return _load(names[id(node)]) if id(node) in names else node
    without_out.args = [named(node) for node in without_out.args]
    without_out.keywords = [gast.keyword(arg=k.arg, value=named(k.value))
                            for k in without_out.keywords]
    return named(inner) if id(inner) in names else out, \
        None if mask is None else named(mask), assignments


def _unpacked(out, by_keyword: bool):
    """`out`, or the one array of `(y,)` given by keyword."""
    if by_keyword and isinstance(out, gast.Tuple) and len(out.elts) == 1:
        return out.elts[0]
    return out


def _written_as(new, statement):
    """`new`, a statement written for the user's `statement`, at its line and quoting it."""
    setattr(new, WRITTEN_AS, to_source(statement).strip().splitlines()[0])
    for node in walk(new):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            gast.copy_location(node, statement)
    return new


def fill_diagonal_arguments(call: gast.Call, namespace: dict):
    """(a, val, wrap) of `call` where it calls np.fill_diagonal with a a variable (wrap a
    constant False where it is not given), else None."""
    if resolve(call.func, namespace) is not np.fill_diagonal or any(
            isinstance(argument, gast.Starred) for argument in call.args) or any(
            keyword.arg is None for keyword in call.keywords):
        return None
    given = dict(zip(("a", "val", "wrap"), call.args))
    for keyword in call.keywords:
        if keyword.arg in given or keyword.arg not in ("a", "val", "wrap"):
            return None  # NumPy's TypeError, when it runs
        given[keyword.arg] = keyword.value
    if len(call.args) > 3 or not isinstance(given.get("a"), gast.Name) or "val" not in given:
        return None
    return given["a"], given["val"], given.get("wrap", gast.Constant(value=False, kind=None))


def _diagonal_write(a, val, wrap, helper) -> gast.Assign:
    """`a[diagonal_index(a, wrap)] = diagonal_values(val, a, wrap)`."""
    index = gast.Call(func=_load(helper("diagonal_index")),
                      args=[_load(a.id), copy_tree(wrap)], keywords=[])
    values = gast.Call(func=_load(helper("diagonal_values")),
                       args=[val, _load(a.id), wrap], keywords=[])
    return gast.Assign(targets=[gast.Subscript(value=_load(a.id), slice=index, ctx=gast.Store())],
                       value=values, type_comment=None)


def _leave_out_none(call: gast.Call, namespace: dict) -> None:
    """Take an `out` that is None (or, by keyword, a tuple of Nones) out of `call`: NumPy reads
    it as no out at all."""
    for find in (out_argument, array_method_out):
        found = find(call, namespace)
        if found is None:
            continue
        out = found[0]
        if _variable(out, by_keyword=False) is None and isinstance(  # (a tuple by keyword alone)
                out, gast.Tuple) and not any(argument is out for argument in call.args):
            out = out.elts[0] if len(out.elts) == 1 else out
        if isinstance(out, gast.Constant) and out.value is None:
            call.args, call.keywords = found[1].args, found[1].keywords
        return


def _load(identifier: str) -> gast.Name:
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


def _variable(out, by_keyword: bool) -> str | None:
    """The name `out` is (`y`, or by keyword `(y,)`), else None."""
    if by_keyword and isinstance(out, gast.Tuple) and len(out.elts) == 1:
        out = out.elts[0]
    return out.id if isinstance(out, gast.Name) else None


def _item_of_variable(out, by_keyword: bool):
    """`out` where it is `y[index]` (by keyword, or `(y[index],)`) of a variable y, with an
    index that reads names and constants alone (it is evaluated twice), else None."""
    if by_keyword and isinstance(out, gast.Tuple) and len(out.elts) == 1:
        out = out.elts[0]
    if not (isinstance(out, gast.Subscript) and isinstance(out.value, gast.Name)):
        return None
    allowed = (gast.Name, gast.Constant, gast.Tuple, gast.Slice, gast.BinOp, gast.UnaryOp,
               gast.expr_context, gast.operator, gast.unaryop)
    return out if all(isinstance(node, allowed) for node in walk(out.slice)) else None


def _index_value(index):
    """The index of a subscript as an expression of its value: `a:b` as `slice(a, b, None)`."""
    if isinstance(index, gast.Slice):
        parts = [copy_tree(part) if part is not None else gast.Constant(value=None, kind=None)
                 for part in (index.lower, index.upper, index.step)]
        return gast.Call(func=_load("slice"), args=parts, keywords=[])
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_index_value(part) for part in index.elts], ctx=gast.Load())
    return copy_tree(index)


def _may_take_out(func, namespace) -> bool:
    """Whether `out=` of a call of `func` is NumPy's: a NumPy function or ufunc (or a method of
    one, np.add.reduce), or a method of a value (an array's: x.clip(0, 1, out=y))."""
    method_of_value = isinstance(func, gast.Attribute) and resolve(func, namespace) is MISSING
    return method_of_value or numpy_name(func, namespace) is not None or (
        isinstance(func, gast.Attribute)
        and isinstance(resolve(func.value, namespace), np.ufunc))


def _out_position(func, namespace) -> int | None:
    """Where `out` goes among the positional arguments of the NumPy function `func` names."""
    if numpy_name(func, namespace) is not None:
        return out_position(resolve(func, namespace))
    if isinstance(func, gast.Attribute):  # a ufunc's method: np.add.reduce
        owner = resolve(func.value, namespace)
        if isinstance(owner, np.ufunc):
            return out_position(getattr(owner, func.attr, None))
    return None  # (a method of a value: array_method_out)
