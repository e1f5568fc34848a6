"""Changes a called function makes to the attributes of the objects it is given.

An object's attributes are memory, as an array's elements are: `acc.add(x)`, where `add` does
`self.total = self.total + v`, changes what `acc.total` reads afterwards. autotrace follows
values, and a call's derivative is that of its result: a change made through an object the
function called on or passed (its `self`, or another argument) reaches neither. Where such a
change stores a value that carries gradient, the gradient through it would be silently lost,
so the call is refused at the user's line, naming the write in the function called.

`refuse_state_writes` does this for a call autotrace can name before running (a function of
the module); generated code calls `check_state_writes` before a call it resolves only when it
runs (a method of an object the function holds), with the callee then known. Both read the
callee's source with `state_write`, following calls it makes with values that carry gradient a
few calls deep. A call whose result carries gradient has the callee itself differentiated: its
transform refuses an attribute assignment (transforms/front/checks.py), and `check_calls` there
refuses a write into a list or array an attribute holds (`self.items.append(v)`, or `buf[i] =
v` after `buf = self.buf`) and `setattr`.
"""
from __future__ import annotations

import functools
import inspect
import weakref

import gast

from ..codegen.nodes import copy_tree
from ...runtime.derivatives.state_writes import write_state
from ...runtime.python_modules import is_standard_library
from .activity import DESCRIPTIVE_ATTRIBUTES
from .aliases import Sharing
from .outside_writes import (declared_names, global_write, outside_item_write, outside_roots,
                             state_write_message)
from .unseen_effects import (CONTAINERS, FOLLOWED, READING_METHODS, STORING_METHODS, UNREAD,
                             UNKNOWN_EFFECT, callable_name, has_unseen_effect, keeps_nothing,
                             partial_target, refuse_numpy_out, through_partials)
from .argument_writes import (CONTAINER_WRITES, ReadAfter, parameter_names,
                              refuse_arguments_written, write_text)
from ..errors import TransformError
from ..codegen.naming import walk_scope
from ..front.parsing import MISSING, parse_function, resolve
from ..front.python_versions import in_place_refusal
from ..rules.core import constant
from ..codegen.nodes import nodes_of, walk
from ..codegen.codegen import to_source

# Functions called are read for what they change this many calls deep.
_DEEPEST_CALLS = 3
# Packages whose functions are not read: NumPy's and autotrace's (whose objects, Modules and
# Variables, hand their gradients on as they are), and the standard library's.
_NOT_READ = {"numpy", "cupy", "autotrace"}


def check_state_writes(callee, varied: tuple, filename: str, line: int,
                       unread: bool = False, read_after: tuple | None = None) -> None:
    """Raise TransformError at `filename`, `line` where calling `callee` changes an attribute
    of an object it is given to a value that carries gradient. Generated code calls it before
    a call resolved only when it runs. varied: which of the call's arguments carry gradient
    (positions, keywords, and "<object>" for the object whose method `callee` is); unread:
    the call is a statement, called for what it does, which a function with no rule (an
    alias of heapq.heappush, functools.partial(list.append, out)) does out of sight;
    read_after: the arguments whose memory the caller reads after the call (positions and
    keywords: argument_writes.arguments_read_after), which the callee may not write into."""
    if in_place_refusal(callee) is not None:  # (operator.imul given as an argument)
        raise TransformError(in_place_refusal(callee), filename, line, "in-place operator")
    refuse_numpy_out(callee, varied, read_after, filename, line)
    if unread and has_unseen_effect(callee, varied):
        raise TransformError(UNKNOWN_EFFECT.format(what=callable_name(callee), why=UNREAD,
                                                    followed=FOLLOWED),
                             filename, line, "call of a function with no rule")
    method = partial_target(callee)  # (partial(out.append): out's append)
    if may_keep_what_it_is_given(method, varied):
        owner = method.__self__
        raise TransformError(
            f"autotrace cannot differentiate this call of {type(owner).__qualname__}."
            f"{method.__name__}: it is given a value that carries gradient, and the methods of "
            f"{type(owner).__qualname__} objects may keep what they are given, where "
            f"autotrace, which does not read that method, would lose its gradient; {FOLLOWED}",
            filename, line, "call of a method that may keep its arguments")
    callee, varied, read_after = through_partials(callee, varied, read_after)
    function, bound = function_called(callee)
    if function is None:
        return
    refuse_arguments_written(function, Sharing.parameters_written(function), bound,
                             read_after, filename, line)
    found = state_write(function, _varied_parameters(function, bound, varied), bound)
    if found is not None:
        raise TransformError(_message(function, *found), filename, line,
                             "change of an attribute")


def refuse_state_writes(location, node, function, bound, varied: tuple) -> None:
    """check_state_writes for the call `node` of the Python function `function`, known before
    running (bound: the object it is a method of, or None); raise at the call's line."""
    found = state_write(function, _varied_parameters(function, bound, varied), bound)
    if found is not None:
        raise location.error(node, _message(function, *found), "change of an attribute")


def may_keep_what_it_is_given(callee, varied: tuple) -> bool:
    """Whether `callee` is a method of a container of Python or its standard library (a deque,
    a set, a queue: its methods are not read), or of a subclass of one, that may keep an
    argument carrying gradient (a list's append and pop, and a dict's writes, the transforms
    follow themselves). A subclass of the user's keeps its items where the container does,
    out of sight too."""
    owner = getattr(callee, "__self__", None)
    if owner is None or inspect.ismodule(owner) or isinstance(owner, type) \
            or getattr(callee, "__name__", None) in READING_METHODS \
            or not isinstance(owner, CONTAINERS) \
            or all(v in ("<object>", "<callee>") for v in varied):  # (the object's own)
        return False
    function, _ = function_called(callee)
    # A method of the user's (read from its source) keeps where the container does only where
    # it stands for one of the container's own that store (an `append` calling super's).
    return function is None or callee.__name__ in STORING_METHODS


_message = state_write_message


def function_called(callee):
    """(the Python function a call of `callee` runs, the object it is a method of, or None),
    or (None, None) where autotrace does not read it."""
    bound = None
    if inspect.ismethod(callee):
        callee, bound = callee.__func__, callee.__self__
    elif not inspect.isfunction(callee) and not isinstance(callee, type):
        method = getattr(type(callee), "__call__", None)
        if inspect.isfunction(method):  # an object with __call__: that method
            callee, bound = method, callee
    if not inspect.isfunction(callee):
        return None, None
    package = (getattr(callee, "__module__", None) or "").split(".")[0]
    if package in _NOT_READ or is_standard_library(callee.__module__):
        return None, None
    return callee, bound


def method_of_known_object(func, namespace: dict) -> tuple:
    """(the Python function, the object) of a callee `obj.method` whose object autotrace
    finds before running (a global or closure variable: `layer.forward`), or of a callee
    `obj` found so whose class has `__call__` (`layer(x)`: that method), or (None, None)."""
    if isinstance(func, gast.Name):
        owner, attribute = func, "__call__"
    elif isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
        owner, attribute = func.value, func.attr
    else:
        return None, None
    bound = resolve(owner, namespace)
    if bound is MISSING or isinstance(bound, type) or inspect.ismodule(bound) or \
            inspect.isroutine(bound):
        return None, None
    method = inspect.getattr_static(type(bound), attribute, None)
    if not inspect.isfunction(method) or function_called(method)[0] is None:
        return None, None
    return method, bound


def may_change_its_object(call, namespace: dict) -> bool:
    """Whether the method `call` runs (of an object found only when it runs, or of one found
    before, `layer.forward`) may write into its object a value made from its parameters."""
    method, bound = method_of_known_object(call.func, namespace)
    if method is None:
        return True
    return state_write(method, set(parameter_names(parse_function(method).node)),
                       bound) is not None


def _varied_parameters(function, bound, varied: tuple) -> set:
    """The parameters of `function` given the call's arguments named in `varied`."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return set()
    positional = [p.name for p in parameters if p.kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    names = {p.name for p in parameters}
    out = set()
    if bound is not None and positional and "<object>" in varied:
        out.add(positional[0])
    offset = 1 if bound is not None else 0
    for which in varied:
        if isinstance(which, int):
            if which + offset < len(positional):
                out.add(positional[which + offset])
        elif which in names:
            out.add(which)
    return out


# What state_write found, per function read: (parameters varied, class of its object) ->
# the write or None. (Generated code asks on every call.)
_found: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def state_write(function, varied: set, bound=None, depth: int = 0):
    """(parameter, the write, file, line) for the first attribute of a parameter of the
    Python `function` that it sets to a value depending on the parameters `varied` (or that a
    function it calls sets so), or None. bound: the object `function` is a method of (its
    first parameter), where known, to find the methods it calls on it."""
    if not varied or depth > _DEEPEST_CALLS:
        return None
    known = _found.setdefault(function, {})
    key = (frozenset(varied), type(bound), depth)
    if key not in known:
        known[key] = _state_write(function, varied, bound, depth)
    return known[key]


def _state_write(function, varied: set, bound, depth: int):
    try:
        parsed = parse_function(function)
    except Exception:  # noqa: BLE001 - no source: nothing known, as for any other call
        return None
    node, location = parsed.node, parsed.location
    parameters = parameter_names(node)
    nodes = [n for statement in node.body for n in walk_scope(statement)]
    varied, declared = _depending(nodes, set(varied)), declared_names(nodes)
    roots = outside_roots(nodes, set(parameters) | {
        n.id for n in nodes if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
    } | declared, parsed.namespace)
    held = held_attributes(nodes, parameters + roots)
    for write in nodes:
        found = _attribute_write(write, held, varied) or global_write(
            write, declared, varied) or outside_item_write(write, set(roots), varied)
        if found is not None:
            parameter, text = found
            return parameter, text, location.filename, location.line_of(write)
    for call in nodes:
        if not isinstance(call, gast.Call):
            continue
        given = [a for a in call.args if _reads(a) & varied]
        keywords = tuple(k.arg for k in call.keywords if _reads(k.value) & varied)
        positions = tuple(i for i, a in enumerate(call.args) if _reads(a) & varied)
        on_object = isinstance(call.func, gast.Attribute) and bool(_reads(call.func.value)
                                                                   & varied)
        if not (given or keywords or on_object):
            continue
        callee, owner = _callee(call.func, parsed.namespace, parameters, bound)
        if callee is None:
            continue
        inner = _varied_parameters(callee, owner, positions + keywords + (
            ("<object>",) if on_object else ()))
        found = state_write(callee, inner, owner, depth + 1)
        if found is not None:
            return found
    return None


def _depending(nodes, varied: set) -> set:
    """`varied` and the names of `nodes` whose values depend on them (to a fixed point)."""
    assignments = [n for n in nodes if isinstance(n, (gast.Assign, gast.AugAssign,
                                                      gast.AnnAssign, gast.For))]
    changed = True
    while changed:
        changed = False
        for assignment in assignments:
            value = assignment.iter if isinstance(assignment, gast.For) else assignment.value
            if value is None or not _reads(value) & varied:
                continue
            targets = assignment.targets if isinstance(assignment, gast.Assign) else [
                assignment.target]
            for target in targets:
                for name in walk(target):
                    if isinstance(name, gast.Name) and name.id not in varied:
                        varied.add(name.id)
                        changed = True
    return varied


def _attribute_write(node, held: dict, varied: set):
    """(parameter, text) where `node` sets an attribute of a parameter (or an item or list
    method of one, or of a name `held` holds it by) to a value depending on `varied`; None."""
    if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        value = node.value
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        if value is None or not _reads(value) & varied:
            return None
        for target in targets:
            for part in walk(target):
                owner = attribute_owner(part, held)
                if owner is not None:
                    return owner, _write_text(node)
        return None
    if isinstance(node, gast.Call):
        arguments = node.args + [k.value for k in node.keywords]
        if not any(_reads(a) & varied for a in arguments):
            return None
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr in CONTAINER_WRITES:
            owner = attribute_owner(func.value, held, whole=True)
            if owner is not None:
                return owner, f"{_text(func)}(...)"
        if isinstance(func, gast.Name) and func.id == "setattr" and node.args and isinstance(
                node.args[0], gast.Name) and node.args[0].id in held:
            return held[node.args[0].id], f"{_text(node)}"
    return None


def held_attributes(nodes, owners) -> dict:
    """Name -> the name in `owners` whose attribute (or what one holds) the name is bound to
    in `nodes` (`items = self.items`, `row = self.rows[0]`); each of `owners` -> itself."""
    held = {owner: owner for owner in owners}
    assignments = [n for n in nodes if isinstance(n, gast.Assign) and len(n.targets) == 1
                   and isinstance(n.targets[0], gast.Name)]
    changed = True
    while changed:
        changed = False
        for assignment in assignments:
            target = assignment.targets[0].id
            owner = attribute_owner(assignment.value, held)
            if owner is not None and held.get(target, target) == target != owner and not (
                    isinstance(assignment.value, gast.Attribute)
                    and assignment.value.attr in DESCRIPTIVE_ATTRIBUTES):
                held[target] = owner
                changed = True
    return held


def attribute_owner(node, held: dict, whole: bool = False):
    """The owner (see held_attributes) whose attribute `node` is or is inside of (`p.a`,
    `p.a[i].b`, `items[i]` for items held), else None. whole: `items` itself counts too."""
    chain, through_attribute = node, False
    while isinstance(chain, (gast.Attribute, gast.Subscript)):
        through_attribute = through_attribute or isinstance(chain, gast.Attribute)
        chain = chain.value
    if not isinstance(chain, gast.Name) or chain.id not in held:
        return None
    if held[chain.id] != chain.id and (chain is not node or whole):
        return held[chain.id]  # a name holding an attribute: an item of it, or it
    return held[chain.id] if through_attribute else None


def _write_text(node) -> str:
    if isinstance(node, gast.AnnAssign):
        return f"{_text(node.target)} = ..."
    return write_text(node)


def _callee(func, namespace: dict, parameters: list, bound):
    """(the Python function a call of `func` in a function read by `state_write` runs, the
    object it is a method of or None), or (None, None) where that is not known: a method of
    the known object `bound` (the function's first parameter), or a function of the module."""
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and parameters \
            and func.value.id == parameters[0] and bound is not None:
        method = inspect.getattr_static(type(bound), func.attr, MISSING)
        if inspect.isfunction(method):
            return function_called(getattr(bound, func.attr))
        return None, None
    if isinstance(func, gast.Name) and func.id in parameters:
        return None, None
    value = resolve(func, namespace)
    if value is MISSING:
        return None, None
    return function_called(value)


def _reads(node) -> set:
    """The names `node` reads the values of (not those it reads the shape of: `X.shape`)."""
    described = {id(n.value) for n in walk(node) if isinstance(n, gast.Attribute)
                 and n.attr in DESCRIPTIVE_ATTRIBUTES}
    return {n.id for n in walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load) and id(n) not in described}


def _text(node) -> str:
    return to_source(node).strip()


# It checks, and gives nothing: no gradient passes through it.
constant(check_state_writes)


def check_calls(body: list, location, varied: set, active: set, classify, helper,
                namespace: dict, returned: list = ()) -> None:
    """Refuse each call in `body` (A-normal form) of a function known before running that
    changes an attribute of an object it is given to a value that carries gradient, and put
    a `check_state_writes` before each call resolved only when it runs; calls whose result
    carries gradient are left to the callee's own transform, which runs this in its turn.
    Refuse `self.items.append(v)`, `buf[i] = v` with `buf = self.buf` and `setattr(p, name,
    v)`, v carrying gradient. varied: the names that depend on the differentiated arguments;
    classify(func): what the callee `func` is (transforms/analysis/calls.py); helper(name): the name
    generated code calls a helper by; namespace: the function's, where a method of an object
    found before running (`layer.forward`, `layer` a global) is checked at once; returned: the
    return statements split off the body, which read what its calls wrote too."""
    nodes = [n for statement in body for n in walk_scope(statement)]
    sources = {n.targets[0].id: n.value for n in nodes if isinstance(n, gast.Assign)
               and isinstance(n.targets[0], gast.Name)}
    read_after = ReadAfter(body + list(returned))

    @functools.cache  # (what few statements need: found at the first that does)
    def held() -> dict:  # (a name a guard adds, never an attribute's owner, changes nothing)
        return held_attributes(nodes, {n.id for s in body for n in nodes_of(s)
                                       if isinstance(n, gast.Name)})

    @functools.cache
    def objects() -> tuple:
        assigned = assignments(nodes)
        return assigned, global_aliases(nodes, namespace, assigned)
    for block in statement_blocks(body):
        for index in reversed(range(len(block))):
            statement = block[index]
            _refuse_write_into_attribute(statement, held, sources, varied, location)
            call = statement.value if isinstance(statement, (gast.Expr, gast.Assign)) else None
            if not isinstance(call, gast.Call) or isinstance(statement, gast.Assign) and (
                    not isinstance(statement.targets[0], gast.Name)
                    or statement.targets[0].id in active):
                continue
            which = varied_arguments(call, varied)
            if not which or _of_an_object_followed(call, active, objects, namespace):
                continue
            resolved = classify(call.func)
            kept = next((a for a in call.args if _storing_method(a, sources)), None)
            if kept is not None and resolved.kind != "user" and \
                    not keeps_nothing(resolved.value):  # map(out.append, items)
                method = _text(sources.get(getattr(kept, "id", None), kept))
                raise location.error(call, UNKNOWN_EFFECT.format(
                    what=_text(call.func), why=f"it calls {method}, which keeps what it is given",
                    followed=FOLLOWED), "call of a function with no rule")
            if resolved.value is setattr and 2 in which:
                raise location.error(call, _WRITE_INTO_ATTRIBUTE.format(
                    what=_text(call), owner=_text(call.args[0])), "change of an attribute")
            method = sources.get(call.func.id) if isinstance(call.func, gast.Name) else call.func
            if isinstance(method, gast.Attribute) and method.attr == "shuffle" \
                    and 0 in which:  # np.random's, a Generator's, the random module's
                raise location.error(call, _SHUFFLED.format(first=_text(call.args[0])),
                                     "shuffle")
            if resolved.kind == "unknown" and isinstance(statement, gast.Expr) \
                    and not keeps_nothing(resolved.value):
                raise location.error(call, UNKNOWN_EFFECT.format(what=_text(call.func),
                                                                why=UNREAD, followed=FOLLOWED),
                                     "call of a function with no rule")
            if resolved.kind == "user":
                function, bound = function_called(resolved.value)
                if function is not None:
                    refuse_state_writes(location, call, function, bound, which)
            elif resolved.kind == "dynamic" and method_of_known_object(
                    call.func, namespace)[0] is not None:
                refuse_state_writes(location, call, *method_of_known_object(call.func,
                                                                            namespace), which)
            elif resolved.kind == "dynamic":
                guard = gast.Expr(value=gast.Call(
                    func=gast.Name(id=helper("check_state_writes"), ctx=gast.Load(),
                                   annotation=None, type_comment=None),
                    args=[copy_tree(call.func),
                          gast.Constant(value=which, kind=None),
                          gast.Constant(value=location.filename, kind=None),
                          gast.Constant(value=location.line_of(statement), kind=None),
                          gast.Constant(value=isinstance(statement, gast.Expr), kind=None),
                          gast.Constant(value=read_after(call, statement), kind=None)],
                    keywords=[]))
                for node in walk(guard):
                    if "lineno" in node._attributes:
                        gast.copy_location(node, statement)
                block.insert(index, guard)


_SHUFFLED = ("autotrace cannot differentiate this shuffle: it reorders {first!r}, which carries "
             "gradient, in place, which autotrace does not follow; index with a permutation "
             "instead: {first} = {first}[rng.permutation(len({first}))]")


def _of_an_object_followed(call, active: set, objects, namespace: dict) -> bool:
    """Whether `call` is of a method of an object the function reads from a global (`layer`,
    read into `layer_1`; not one it builds or is given), which carries gradient: the method is
    differentiated with respect to it, and what it writes into it followed (transforms/
    analysis/given_state_writes.py; its caller sends it the object's gradient after the
    call, runtime/derivatives/sweeps.py). objects(): (`assignments`, `global_aliases`)."""
    owner = call.func.value if isinstance(call.func, gast.Attribute) else None
    if not isinstance(owner, gast.Name) or owner.id not in active:
        return False
    assigned, aliases = objects()
    return owner.id in aliases or owner.id not in assigned and owner.id in namespace


def assignments(nodes) -> dict:
    """Name -> the values `nodes` assign to it (None where it is bound otherwise: a tuple
    unpacked, a loop variable, `+=`)."""
    assigned = {}
    for node in nodes:
        if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.For)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for target in targets:
                for bound in walk(target):
                    if isinstance(bound, gast.Name) and isinstance(bound.ctx, gast.Store):
                        assigned.setdefault(bound.id, []).append(
                            node.value if isinstance(node, gast.Assign) and target is bound
                            else None)
    return assigned


def global_aliases(nodes, namespace: dict, assigned: dict | None = None) -> dict:
    """Local name -> the global object it holds throughout (`layer_1 = layer`), for the names
    `nodes` bind to one global and else only to the same object again: what `write_state`
    into the name hands back (the object it wrote into), directly or through a temporary, or
    what a derivative pops from a stack that only that name is pushed onto. assigned:
    `assignments(nodes)`, where the caller has it."""
    if assigned is None:
        assigned = assignments(nodes)
    pushed = {}  # stack -> the names pushed onto it (None: something else)
    for node in nodes:
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr == "append" and isinstance(node.func.value, gast.Name):
            argument = node.args[0] if len(node.args) == 1 else None
            pushed.setdefault(node.func.value.id, set()).add(
                argument.id if isinstance(argument, gast.Name) else None)

    def same_object(local: str, value, depth: int = 0) -> bool:
        if is_state_write(value, namespace):
            return isinstance(value.args[0], gast.Name) and value.args[0].id == local
        if isinstance(value, gast.Name):  # a temporary holding one
            held = assigned.get(value.id, ())
            return depth < 2 and len(held) == 1 and same_object(local, held[0], depth + 1)
        return (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
                and value.func.attr == "pop" and not value.args and not value.keywords
                and isinstance(value.func.value, gast.Name)
                and value.func.value.id not in namespace
                and pushed.get(value.func.value.id) == {local})
    aliases = {}
    for local, values in assigned.items():
        read = [v for v in values if isinstance(v, gast.Name) and v.id in namespace
                and v.id not in assigned]
        if local in namespace or len({v.id for v in read}) != 1:
            continue
        if all(value in read or value is not None and same_object(local, value)
               for value in values):
            aliases[local] = read[0].id
    return aliases


def is_state_write(node, namespace: dict) -> bool:
    """Whether `node` is a call of `write_state` (transforms/analysis/given_state_writes.py), by any name
    `namespace` binds it to."""
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and namespace.get(node.func.id) is write_state)


_WRITE_INTO_ATTRIBUTE = (
    "autotrace cannot differentiate {what}: it changes an attribute of {owner!r} (or what one "
    "holds) to a value that carries gradient, and autotrace does not follow changes to an "
    "object's attributes, so that gradient would be lost; keep the value in a local variable "
    "(a list or array the function builds) and return it")


def _refuse_write_into_attribute(statement, held, sources: dict, varied: set,
                                 location) -> None:
    """Refuse `items.append(v)` or `buf[i] = v` (A-normal form) where `items` or `buf` holds an
    attribute of an object (`items = self.items`) and v carries gradient. held():
    held_attributes's; sources: name -> the expression it was bound to."""
    if isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Subscript) \
            and _reads(statement.value) & varied:
        target = statement.targets[0]
        owner = attribute_owner(target, held())
        if owner is not None:
            raise location.error(statement, _WRITE_INTO_ATTRIBUTE.format(
                what=f"{_text(target)} = ...", owner=owner), "change of an attribute")
    call = statement.value if isinstance(statement, gast.Expr) else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
            and call.func.attr in CONTAINER_WRITES \
            and any(_reads(a) & varied for a in call.args + [k.value for k in call.keywords]):
        owner = attribute_owner(call.func.value, held(), whole=True)
        if owner is not None:
            receiver = call.func.value
            # (normalizing named the attribute: `_t1 = self.items; _t1.append(v)`)
            text = _text(sources.get(receiver.id, receiver)) if isinstance(
                receiver, gast.Name) else _text(receiver)
            raise location.error(statement, _WRITE_INTO_ATTRIBUTE.format(
                what=f"{text}.{call.func.attr}(...)", owner=owner), "change of an attribute")


def _storing_method(node, sources: dict) -> bool:
    """Whether `node` (a call's argument) is a method of a value that stores what it is given
    (`out.append`, or a name bound to one), passed to be called out of sight."""
    node = sources.get(node.id, node) if isinstance(node, gast.Name) else node
    return isinstance(node, gast.Attribute) and node.attr in STORING_METHODS


def varied_arguments(call, varied: set) -> tuple:
    """Which arguments of `call` depend on the names `varied` (see check_state_writes), and
    "<callee>" where the callable called does."""
    which = tuple(i for i, a in enumerate(call.args) if _reads(a) & varied)
    which += tuple(k.arg for k in call.keywords if _reads(k.value) & varied)
    if isinstance(call.func, gast.Attribute) and _reads(call.func.value) & varied:
        which += ("<object>",)
    elif isinstance(call.func, gast.Name) and call.func.id in varied:  # (a callable made of
        which += ("<callee>",)  # such values: operator.methodcaller("append", v))
    return which


def statement_blocks(body: list):
    """`body` and every list of statements in it (not those of functions defined in it)."""
    yield body
    for statement in body:
        if isinstance(statement, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                yield from statement_blocks(inner)

