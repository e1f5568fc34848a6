"""Writes the transforms do not follow are errors, not silently wrong gradients.

autotrace follows values: `A[i] = v` changes A, and `A += x` gives A a new value, `A + x`.
NumPy also writes through other names, and a gradient taken as if those writes changed
nothing would be wrong. So these are refused, naming the line:

- `out=` in a call of NumPy's (or of an array's method): assign the result instead;
- methods that change an array, list or dict in place (`A.sort()`, `A.fill(0)`, ...);
- a write (`y[i] = v`, or `y += v` on a view) into a name bound to a view of another
  (`y = x[:2]`, `y = x.T`, `y = x.reshape(...)`, `for y in x`): the write changes x;
- `A += v` on an array (made by a NumPy function) that another name aliases or views
  (`B = A`, `B = A[1:]`): in place, the change reaches B, while autotrace would give A alone
  a new value.

The analysis reads the function's source, per name: a name counts as a view only where it is
bound once (a name bound again may no longer be one), so writes through views that it cannot
see (an item of a list, a view made in another function) are not caught.
"""
from __future__ import annotations

import collections

import gast
import numpy as np

from transforms.errors import Location
from transforms.naming import walk_scope
from transforms.parsing import MISSING, resolve

# Methods that change their object in place (those of lists that the transforms follow,
# append, extend, insert and pop, are not here).
IN_PLACE_METHODS = {"sort", "fill", "put", "resize", "partition", "itemset", "byteswap",
                    "reverse", "remove", "clear", "update", "setdefault", "popitem"}
# NumPy functions and array methods whose result may be a view of their first argument.
_VIEW_FUNCTIONS = {"transpose", "reshape", "ravel", "squeeze", "expand_dims", "swapaxes",
                   "moveaxis", "asarray", "asanyarray", "atleast_1d", "atleast_2d",
                   "atleast_3d", "diagonal", "flip", "fliplr", "flipud", "rot90", "real",
                   "imag", "view", "broadcast_to"}
_VIEW_ATTRIBUTES = {"T", "mT", "real", "imag", "flat"}
# NumPy functions whose result is a new array.
_ARRAY_MAKERS = {"zeros", "ones", "empty", "full", "array", "copy", "zeros_like", "ones_like",
                 "empty_like", "full_like", "arange", "linspace", "eye", "identity", "stack",
                 "concatenate", "vstack", "hstack", "tile"}


def check_writes(function: gast.FunctionDef, location: Location, namespace: dict) -> None:
    """Raise TransformError at the first write that the transforms would not follow."""
    nodes = [n for statement in function.body for n in walk_scope(statement)]
    parameters = {a.id for a in function.args.args + function.args.posonlyargs
                  + function.args.kwonlyargs}
    bindings = collections.Counter()
    for node in nodes:
        for target in _bound_names(node):
            bindings[target.id] += 1
    variables = set(bindings) | parameters
    views = {}  # name bound once -> (the name it views, how, the binding statement)
    arrays = collections.defaultdict(list)  # name -> is each of its bindings a new array?
    lists = collections.defaultdict(list)  # name -> is each of its bindings a new list?
    for node in nodes:
        if isinstance(node, gast.Call):
            _check_call(node, location, namespace, variables)
        for target, base, how in _derivations(node, namespace):
            if bindings[target] == 1 and base != target:
                views[target] = (base, how, node)
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            arrays[node.targets[0].id].append(_makes_array(node.value, namespace))
            lists[node.targets[0].id].append(isinstance(node.value, (gast.List, gast.ListComp)))
    for target, (base, how, bound) in list(views.items()):
        if how == "slice" and lists.get(base) and all(lists[base]):
            del views[target]  # a slice of a list is a new list
    for node in nodes:
        if isinstance(node, (gast.Assign, gast.AugAssign)):
            _check_write(node, location, views, arrays, nodes)


def _bound_names(node):
    """The names `node` binds (an augmented assignment writes, it does not bind)."""
    targets = []
    if isinstance(node, gast.Assign):
        targets = node.targets
    elif isinstance(node, (gast.For, gast.AnnAssign)):
        targets = [node.target]
    for target in targets:
        for name in gast.walk(target):
            if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store):
                yield name


def _derivations(node, namespace):
    """(target, base, how) for each name `node` binds to something that may share the memory
    of the name `base`: how is "alias" (`y = x`), "view" (a transpose, a loop's item: a view
    whenever `y += v` runs in place), "slice" (a view of an array, a copy of a list) or
    "item" (an integer subscript or an attribute: a view of a 2-d array, or a container's
    item, or a number)."""
    if isinstance(node, gast.For) and isinstance(node.target, gast.Name):
        base = _iterated_name(node.iter, namespace)
        if base is not None:
            yield node.target.id, base, "view"
    elif isinstance(node, gast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        if isinstance(target, gast.Name):
            found = _viewed(value, namespace)
            if found is not None:
                yield (target.id,) + found
        elif isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, gast.Name):
            for element in target.elts:  # `a, b = x`: the items of x
                if isinstance(element, gast.Name):
                    yield element.id, value.id, "item"


def _viewed(value, namespace):
    """(base, how) if `value` may be a view of the name `base`, else None."""
    if isinstance(value, gast.Name):
        return value.id, "alias"
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        basic = any(isinstance(p, gast.Slice) or _is_constant(p, (None, Ellipsis))
                    for p in parts)
        return value.value.id, "slice" if basic else "item"
    if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
        if resolve(value, namespace) is not MISSING:
            return None
        return value.value.id, "view" if value.attr in _VIEW_ATTRIBUTES else "item"
    if isinstance(value, gast.Call):
        func = value.func
        if (isinstance(func, gast.Attribute) and resolve(func, namespace) is MISSING
                and isinstance(func.value, gast.Name) and func.attr in _VIEW_FUNCTIONS):
            return func.value.id, "view"  # x.reshape(...)
        if (_numpy_name(func, namespace) in _VIEW_FUNCTIONS and value.args
                and isinstance(value.args[0], gast.Name)):
            return value.args[0].id, "view"  # np.reshape(x, ...)
    return None


def _iterated_name(node, namespace):
    if isinstance(node, gast.Name):
        return node.id
    if (isinstance(node, gast.Call) and resolve(node.func, namespace) is reversed
            and len(node.args) == 1 and isinstance(node.args[0], gast.Name)):
        return node.args[0].id
    return None


def _is_constant(node, values) -> bool:
    return isinstance(node, gast.Constant) and any(node.value is v for v in values)


def _numpy_name(func, namespace) -> str | None:
    value = resolve(func, namespace)
    if value is MISSING:
        return None
    module = getattr(value, "__module__", None) or ""
    if isinstance(value, np.ufunc) or module.startswith("numpy"):
        return getattr(value, "__name__", None)
    return None


def _makes_array(value, namespace) -> bool:
    return isinstance(value, gast.Call) and _numpy_name(value.func, namespace) in _ARRAY_MAKERS


def _check_call(call, location, namespace, variables) -> None:
    func = call.func
    method_of_value = isinstance(func, gast.Attribute) and resolve(func, namespace) is MISSING
    out = next((k for k in call.keywords if k.arg == "out"), None)
    if out is not None and (method_of_value or _numpy_name(func, namespace) is not None):
        plain = gast.Call(func=func, args=call.args,
                          keywords=[k for k in call.keywords if k.arg != "out"])
        raise location.error(
            call, f"autotrace cannot differentiate a call that writes its result into its out= "
            f"argument ({_text(call)}); assign the result instead: {_text(out.value)} = "
            f"{_text(plain)}", "out=")
    if (method_of_value and func.attr in IN_PLACE_METHODS and isinstance(func.value, gast.Name)
            and func.value.id in variables and func.value.id not in ("self", "cls")):
        owner = func.value.id
        raise location.error(
            call, f"autotrace cannot differentiate .{func.attr}(), which changes {owner!r} in "
            f"place; compute a new value instead (for an array, e.g. {owner} = "
            f"np.sort({owner}); for a list, build a new list)", f".{func.attr}")


def _check_write(node, location, views, arrays, nodes) -> None:
    target = node.targets[0] if isinstance(node, gast.Assign) else node.target
    written = target
    while isinstance(written, gast.Subscript):
        written = written.value
    if not isinstance(written, gast.Name) or (
            isinstance(node, gast.Assign) and written is target):
        return  # a plain assignment binds a name; it writes into nothing
    name = written.id
    base, how, bound = views.get(name, (None, None, None))
    through_subscript = written is not target
    if base is not None and (through_subscript or how in ("view", "slice") or how == "alias"
                             and arrays.get(base) and all(arrays[base])):
        what = f"{_text(target)} {'=' if isinstance(node, gast.Assign) else _op(node)} ..."
        raise location.error(
            node, f"{what} writes into {name!r}, which may share its memory with {base!r} "
            f"({_text(bound).splitlines()[0]}, line {location.line_of(bound)}): the write "
            f"changes {base!r} too, which autotrace does not follow; work on a copy, e.g. "
            f"{name} = {_copy_of(bound)}", "write through a view")
    if isinstance(node, gast.AugAssign) and not through_subscript and arrays.get(name) and \
            all(arrays[name]):
        sharing = [(other, bound) for other, (base, how, bound) in views.items()
                   if base == name and how != "item" and _is_read(other, nodes)]
        if sharing:
            other, bound = sharing[0]
            raise location.error(
                node, f"{_text(target)} {_op(node)} ... changes the array {name!r} in place, "
                f"and {other!r} shares its memory ({_text(bound).splitlines()[0]}, line "
                f"{location.line_of(bound)}); autotrace gives {name!r} alone a new value. Write "
                f"{name} = {name} {_op(node)[:-1]} ... if {other!r} should keep the old value, "
                f"or update {other!r} too", "augmented assignment to a shared array")


_OPERATORS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
              gast.MatMult: "@", gast.Mod: "%", gast.FloorDiv: "//", gast.BitAnd: "&",
              gast.BitOr: "|", gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>"}


def _op(node) -> str:
    """`+=` for `a += b`."""
    return _OPERATORS[type(node.op)] + "="


def _copy_of(bound) -> str:
    if isinstance(bound, gast.For):
        return f"{_text(bound.target)}.copy() (first thing in the loop)"
    return f"{_text(bound.value)}.copy()"


def _is_read(identifier, nodes) -> bool:
    return any(isinstance(n, gast.Name) and n.id == identifier and isinstance(n.ctx, gast.Load)
               for n in nodes)


def _text(node) -> str:
    from transforms.codegen import to_source
    return to_source(node).strip()
