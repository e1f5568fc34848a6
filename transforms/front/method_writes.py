"""In-place methods of a variable's value, which the transforms refuse (they follow values).

`A.sort()`, `A.fill(0)`, `d.update(...)` change their object in place; so do they called on
a part of a variable (`a[2:4].fill(0)`, `A.T[0].sort()`, `L[0].fill(0)`), and so does the
method taken as a value and called later (`fill = a.fill; fill(0)`). A derivative that read
the variable as unchanged would be wrong, so each is refused, saying what to write instead.
"""
from __future__ import annotations

import gast
import numpy as np

from ..analysis.argument_writes import IN_PLACE_METHODS, SPECIAL_WRITES
from ..analysis.call_results import VIEW_FUNCTIONS
from ..analysis.unvaried_writes import constant_part_written, varied_names
from ..codegen.codegen import to_source
from ..errors import Location
from .parsing import MISSING, resolve

# What to write instead of each method that changes its object in place (IN_PLACE_METHODS)
# ({0}: the object; {1}, ...: its arguments, or the names of `_METHOD_ARGUMENTS` where the
# call gives fewer; {all}: all the call's arguments, keywords too, after a comma: `m.sort(axis=0)`
# is np.sort(m, axis=0)).
_NEW_VALUE_INSTEAD = {
    "sort": "{0} = np.sort({0}{all}) for an array, {0} = sorted({0}{all}) for a list",
    "fill": "{0} = np.full_like({0}, {1})",
    "put": "{0}[np.unravel_index({1}, {0}.shape)] = {2}",
    "resize": "{0} = np.resize({0}, {1})",
    "partition": "{0} = np.partition({0}{all})",
    "itemset": "{0}[{1}] = {2}",
    "byteswap": "{0} = {0}.byteswap()",
    "reverse": "{0} = {0}[::-1]",
    "remove": "i = {0}.index({1}); {0} = {0}[:i] + {0}[i + 1:]",
    "clear": "{0} = [] for a list, {0} = {{}} for a dict",
    "update": "{0} = {{**{0}, **{1}}}",
    "setdefault": "{0} = {{{1}: {2}, **{0}}}",
    "popitem": "key, value = list({0}.items())[-1]; "
               "{0} = {{k: v for k, v in {0}.items() if k != key}}",
}
_METHOD_ARGUMENTS = {"fill": ["value"], "put": ["indices", "values"], "resize": ["shape"],
                     "partition": ["k"], "itemset": ["index", "value"], "remove": ["value"],
                     "update": ["other"], "setdefault": ["key", "None"]}
_METHOD_ARGUMENTS = {method: _METHOD_ARGUMENTS.get(method, []) for method in _NEW_VALUE_INSTEAD}


def check_method_writes(nodes: list, location: Location, namespace: dict,
                        variables: set, parameters: set) -> None:
    """Raise TransformError at the first of `nodes` (those of a function, `variables` its
    `parameters` and the names it assigns) that calls an in-place method of a variable or of
    a part of one, or takes such a method as a value. A write into part of an array that
    holds no value made from the parameters (`mask = np.ones(4); mask[:2].fill(0.0)`),
    which no derivative reads otherwise than NumPy does, is let through."""
    called = {id(node.func) for node in nodes if isinstance(node, gast.Call)}
    varied = []  # (found once, where a write into part of a variable needs it)

    def constant_part(call) -> bool:
        if not varied:
            varied.append(varied_names(nodes, parameters, variables, namespace))
        return constant_part_written(call, _written_variable(call.func.value), nodes,
                                     varied[0], namespace)

    for node in nodes:
        if isinstance(node, gast.Call):
            _check_method_call(node, location, namespace, variables, constant_part)
        elif isinstance(node, gast.Attribute) and id(node) not in called and isinstance(
                node.ctx, gast.Load) and node.attr in IN_PLACE_METHODS:
            owner = _written_variable(node.value)
            if owner in variables and owner not in ("self", "cls") and \
                    resolve(node, namespace) is MISSING:
                held = _text(node.value)
                instead = _NEW_VALUE_INSTEAD[node.attr].format(
                    held, *_METHOD_ARGUMENTS[node.attr], all="")
                raise location.error(
                    node, f"autotrace cannot differentiate {_text(node)} taken as a value: "
                    f"calling it changes {owner!r} in place, which autotrace does not follow; "
                    f"compute a new value instead: {instead}", f".{node.attr}")


def _check_method_call(call, location: Location, namespace: dict, variables: set,
                       constant_part) -> None:
    func = call.func
    if not isinstance(func, gast.Attribute) or resolve(func, namespace) is not MISSING:
        return
    owner, held = _written_variable(func.value), _text(func.value)
    if owner not in variables or owner in ("self", "cls") or not (
            func.attr in IN_PLACE_METHODS or func.attr in SPECIAL_WRITES and held != owner):
        return  # (`a.__setitem__(i, v)`, `a.__iadd__(v)` on a variable: followed or refused
        #           where they run)
    if held != owner and constant_part(call):
        return
    template = _NEW_VALUE_INSTEAD.get(func.attr, "")
    if func.attr == "sort" and any(k.arg in ("key", "reverse") for k in call.keywords):
        template = "{0} = sorted({0}{all})"  # (a list's: np.sort takes neither)
    given = [_text(a) for a in call.args] + _METHOD_ARGUMENTS.get(func.attr, [])[len(call.args):]
    every = [_text(a) for a in call.args] + [
        f"{k.arg}={_text(k.value)}" if k.arg else f"**{_text(k.value)}" for k in call.keywords]
    instead = "compute a new value instead: " + template.format(
        held, *given, all="".join(f", {text}" for text in every))
    view = _view_of_variable(func.value, owner)
    if view:  # `a.reshape(2, 3).sort()`: the new value, reshaped back into a
        instead = f"write its new value into {owner!r} itself instead ({owner}[...] = ...)"
        # (in the order of a's items alone: not transposed, nor `order=` or a dtype given)
        in_order = func.value.func.attr in _IN_ORDER_VIEWS and not func.value.keywords and not (
            func.value.func.attr in ("ravel", "view") and func.value.args)
        if template.startswith("{0} = ") and func.attr != "resize" and in_order:
            value = template.format(held, *given, all="".join(f", {t}" for t in every))
            value = value.split(" = ", 1)[1].split(" for an array")[0]
            instead = (f"write its new value into {owner!r} itself instead: "
                       f"{owner}[...] = {value}.reshape({owner}.shape)")
    elif held != owner and not (template.startswith("{0} = ") and isinstance(
            func.value, gast.Subscript) and isinstance(func.value.value, gast.Name)):
        # (autotrace assigns into `name[index]` alone: not `A.T[0] = v`, nor `a[1:][i] = v`)
        instead = f"write its new value into {owner!r} itself instead ({owner}[...] = ...)"
    what = f".{func.attr}()" if held == owner else f"{held}.{func.attr}()"
    shared = f" (through {held}, a view of its memory)" if view else ""
    raise location.error(call, f"autotrace cannot differentiate {what}, which changes "
                         f"{owner!r} in place{shared}; {instead}", f".{func.attr}")


# View methods whose view has the array's items in their order (a new value of the view,
# reshaped, is one of the array): the advice writes it back so.
_IN_ORDER_VIEWS = frozenset({"reshape", "ravel", "view", "squeeze"})


def _is_view_call(node) -> bool:
    """Whether `node` calls an array method whose result may be a view (`a.reshape(2, 3)`)."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        node.func.attr in VIEW_FUNCTIONS and hasattr(np.ndarray, node.func.attr)


def _view_of_variable(node, owner: str) -> bool:
    """Whether `node` calls a view method on the variable `owner` itself (`a.reshape(2, 3)`)."""
    return _is_view_call(node) and isinstance(node.func.value, gast.Name) and \
        node.func.value.id == owner


def _written_variable(node) -> str | None:
    """The variable that `node` (`a`, `a[2:4]`, `A.T[0]`, `a.reshape(2, 3)`) names or a part
    of, else None."""
    while isinstance(node, (gast.Subscript, gast.Attribute)) or _is_view_call(node):
        node = node.func.value if isinstance(node, gast.Call) else node.value
    return node.id if isinstance(node, gast.Name) else None


def _text(node) -> str:
    return to_source(node).strip()
