"""Reject, with the user's file and line, the constructs the transforms do not handle."""
from __future__ import annotations

import builtins

import gast
import numpy as np

from ...runtime.primitives.out_writes import masked_outer_message, unmasked_out_message
from ..errors import Location
from .parsing import resolve
from ..reverse.name_scopes import check_with
from ..codegen.nodes import walk
from ..codegen.codegen import to_source

_UNSUPPORTED = {
    gast.Try: ("try", "a try statement; move the error handling outside the differentiated "
                      "function"),
    gast.AsyncFor: ("async for", "an async for loop"),
    gast.AsyncFunctionDef: ("async def", "an async function; make it a plain def"),
    gast.Await: ("await", "await"),
    gast.Yield: ("yield", "yield (generators cannot be differentiated; return a list)"),
    gast.YieldFrom: ("yield from", "yield from (generators cannot be differentiated)"),
    gast.Global: ("global", "a global statement (assigning globals is a side effect the "
                            "gradient cannot see; pass the value as an argument)"),
    gast.Nonlocal: ("nonlocal", "a nonlocal statement (assigning an enclosing function's "
                                "variable) in a function that returns a value or is used "
                                "otherwise than called as a statement; return the new value "
                                "and assign it at the call (total = add(total, v))"),
    gast.ClassDef: ("class", "a class definition inside the function; define it at module "
                             "level"),
    gast.Delete: ("del", "a del statement; assign the name a new value instead, or let it "
                         "go out of scope"),
    gast.Import: ("import", "an import inside the function; import at module level"),
    gast.ImportFrom: ("import", "an import inside the function; import at module level"),
    gast.NamedExpr: (":=", "an assignment expression (:=); assign on its own line"),
    gast.SetComp: ("set comprehension", "a set comprehension"),
    gast.GeneratorExp: None,  # handled as a list comprehension where it is an argument
    gast.Match: ("match", "a match statement; use if/elif"),
}

# Builtins that read (or assign) the function's variables by name, out of the gradient's sight:
# `eval("x * x")` and `locals()["x"]` would give zero gradients. vars() with no argument is
# locals(). (globals() reads module variables, which carry no gradient but under implicit_grad,
# which refuses it; assigning through it is refused as a subscript assignment.)
_BY_NAME = {
    builtins.eval: "eval: the names its text reads are hidden from the gradient; write the "
                   "expression directly",
    builtins.exec: "exec: the names its text reads and assigns are hidden from the gradient; "
                   "write the statements directly",
    builtins.locals: "locals(): the variables read through the dict it returns are hidden "
                     "from the gradient; read each variable by its name",
    builtins.vars: "vars() without an argument, which is locals(): the variables read "
                   "through the dict it returns are hidden from the gradient; read each "
                   "variable by its name",
}


def check_supported(function: gast.FunctionDef, location: Location, namespace: dict,
                    implicit: bool = False) -> None:
    """Raise TransformError at the first construct that cannot be differentiated (names in
    `namespace`: a `with` is accepted when it opens an autotrace.name_scope; `implicit`: under
    implicit_grad, where globals() would hide the Variables read through it)."""
    arguments = function.args
    if arguments.vararg is not None or arguments.kwarg is not None:
        raise location.error(function, f"function {function.name!r} takes *args or **kwargs; "
                             "autotrace differentiates functions with named parameters only",
                             "*args" if arguments.vararg is not None else "**kwargs")
    parameters = {a.id for a in arguments.args + arguments.kwonlyargs + arguments.posonlyargs}
    rebound = set()
    for node in walk(function):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            rebound.add(node.id)
    for node in walk(function):
        kind = type(node)
        if kind in _UNSUPPORTED and _UNSUPPORTED[kind] is not None:
            construct, what = _UNSUPPORTED[kind]
            raise location.error(node, f"autotrace cannot differentiate {what}", construct)
        if isinstance(node, (gast.With, gast.AsyncWith)):
            check_with(node, namespace, location)
        if isinstance(node, gast.Call):
            _check_by_name(node, namespace, rebound, location, implicit)
        if isinstance(node, (gast.For, gast.While)) and node.orelse:
            raise location.error(node, "autotrace cannot differentiate a loop with an else "
                                       "clause; use a flag variable", "loop else")
        # (`f(*items)`, `[*items]` and `f(**options)` are written out in A-normal form.)
        if isinstance(node, gast.Starred) and isinstance(node.ctx, gast.Store):
            # (an assignment's is written out: transforms/front/starred_targets.py)
            raise location.error(node, "autotrace cannot differentiate a starred target "
                                       "(a, *rest) of a loop or comprehension; unpack the item "
                                       "in a statement of its own (a, *rest = item)",
                                 "starred assignment")
        if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for target in targets:
                _check_target(target, location, node.value)
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and node.func.attr in ("sort", "fill", "update", "clear", "remove",
                                       "setdefault")
                and isinstance(node.func.value, gast.Name)
                and node.func.value.id in parameters and node.func.value.id not in rebound):
            argument = node.func.value.id
            raise location.error(
                node, f"the function changes its argument {argument!r} in place "
                f"(.{node.func.attr}); work on a copy, e.g. "
                f"{_copy_advice(argument, _METHOD_CONTAINERS[node.func.attr])}",
                "mutation of an argument")


def _check_by_name(call, namespace: dict, rebound: set, location: Location,
                   implicit: bool = False) -> None:
    """Refuse a call of eval, exec, locals or vars() (see _BY_NAME), named as the builtin;
    under implicit_grad, of globals() too."""
    callee = call.func
    if isinstance(callee, gast.Name) and callee.id in rebound:
        return  # a variable of the function's own of that name
    function = resolve(callee, namespace)
    if isinstance(function, np.ufunc):
        _check_masked_ufunc(call, function, location)
    elif isinstance(callee, gast.Attribute) and callee.attr == "outer":
        _check_masked_outer(call, resolve(callee.value, namespace), location)
    if function is builtins.vars and (call.args or call.keywords):
        return  # vars(obj): its attributes, which the gradient follows or refuses
    try:
        reason = _BY_NAME.get(function)
    except TypeError:  # an unhashable callee
        return
    if implicit and function is builtins.globals:
        reason = ("globals() under implicit_grad: the Variables read through the dict it "
                  "returns get no gradient; read each global by its name")
    if reason is None:
        return
    raise location.error(call, f"autotrace cannot differentiate a call of {reason}",
                         _text(callee))


def _check_masked_outer(call, ufunc, location: Location) -> None:
    """Refuse `np.add.outer(a, b, out=o, where=m)`, with out= or not, saying what to write."""
    mask = next((k.value for k in call.keywords if k.arg == "where"), None)
    if isinstance(ufunc, np.ufunc) and mask is not None and not (
            isinstance(mask, gast.Constant) and mask.value is True):
        raise location.error(call, masked_outer_message(ufunc.__name__, "differentiate"),
                             "where=")


def _check_masked_ufunc(call, ufunc, location: Location) -> None:
    """Refuse `np.log(x, where=m)` without out=, whose elements left out NumPy leaves
    uninitialised, saying what to write instead; and where= of a ufunc of several outputs.
    With out=, transforms/front/out_arguments.py rewrites the call (where=True is no mask)."""
    mask = next((k.value for k in call.keywords if k.arg == "where"), None)
    if mask is None or isinstance(mask, gast.Constant) and mask.value is True:
        return
    if ufunc.nout != 1 or ufunc.signature is not None:
        raise location.error(call, f"autotrace cannot differentiate numpy.{ufunc.__name__} "
                             f"with where=: compute it without where= and select with "
                             f"np.where(m, value, out)", "where=")
    out = next((k.value for k in call.keywords if k.arg == "out"), None)
    if out is None and len(call.args) > ufunc.nin:
        out = call.args[ufunc.nin]
    if out is not None and not (isinstance(out, gast.Constant) and out.value is None):
        return
    operands = [_text(argument) for argument in call.args[:ufunc.nin]]
    written = None if len(operands) != ufunc.nin else (
        f"{_text(call.func)}({', '.join(operands)}, out=np.zeros_like({operands[0]}), "
        f"where={_text(mask)})")
    raise location.error(call, unmasked_out_message(ufunc.__name__, written, "differentiate"),
                         "where=")


def _check_target(target, location, value=None):
    if isinstance(target, (gast.Tuple, gast.List)):
        for element in target.elts:
            _check_target(element, location)
        return
    if isinstance(target, gast.Attribute) and target.attr == "shape" and value is not None:
        shape = _text(value)
        shape = shape[1:-1] if shape.startswith("(") and shape.endswith(")") else shape
        array = _text(target.value)
        raise location.error(target, f"autotrace cannot differentiate {array}.shape = ...: it "
                             f"reshapes {array} in place; write the reshape as a new value "
                             f"instead: {array} = {array}.reshape({shape})",
                             "assignment to .shape")
    if isinstance(target, gast.Attribute):
        raise location.error(target, "autotrace cannot differentiate assignment to an "
                             f"attribute ({_text(target)} = ...): it changes an object the "
                             "gradient cannot see; return the value instead",
                             "attribute assignment")
    if isinstance(target, gast.Subscript):
        base = target.value
        while isinstance(base, gast.Subscript):
            base = base.value
        if isinstance(base, gast.Attribute) and base.attr == "flat":
            raise location.error(target, f"autotrace cannot differentiate a write through "
                                 f"{_text(base)}[...]; write into the array at the place the "
                                 f"flat index stands for instead: "
                                 f"{_text(base.value)}[np.unravel_index(i, "
                                 f"{_text(base.value)}.shape)] = v", "write through .flat")
        if not isinstance(base, gast.Name):
            raise location.error(target, f"autotrace can assign into `name[index]` only, not "
                                 f"through {_text(base)} ({_text(target)} = ...): write into "
                                 f"the array itself{_transposed_index(target)}",
                                 "subscript assignment")


def _transposed_index(target) -> str:
    """How `A.T[i] = v` reads as a write into A itself, for a matrix: `A[:, i] = v`."""
    base = target.value
    if not (isinstance(base, gast.Attribute) and base.attr == "T"):
        return ""
    parts = target.slice.elts if isinstance(target.slice, gast.Tuple) else [target.slice]
    if len(parts) > 2:
        return ""
    index = ", ".join([":"] * (2 - len(parts)) + [_text(p) for p in reversed(parts)])
    return f", e.g. for a matrix {_text(base.value)}[{index}] = ..."


# What each method that changes its object in place may be called on.
_METHOD_CONTAINERS = {
    "remove": ("list",), "update": ("dict",), "setdefault": ("dict",), "fill": ("array",),
    "sort": ("array", "list"), "clear": ("list", "dict"),
}
_COPIES = {"array": "np.copy", "list": "list", "dict": "dict"}


def _copy_advice(name: str, kinds: tuple) -> str:
    """`x = np.copy(x)`, and for a value that may be of several kinds, the copies of the
    others: a dict copied with np.copy would become a 0-d object array."""
    first, *others = kinds
    advice = f"{name} = {_COPIES[first]}({name})"
    if others:
        advice += " (" + ", ".join(f"{_COPIES[kind]}({name}) for a {kind}"
                                   for kind in others) + ")"
    return advice


def _text(node) -> str:
    return to_source(node).strip()
