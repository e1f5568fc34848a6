"""Calls of a function of the user's that calls one of its parameters, given for it a value
the source does not name: a function a factory returned (`apply(make_writer(), buf)`), a
parameter's default, an attribute of an object. Which function it is is known when the call
runs; generated code calls `check_functions_given` before the call, which reads the function
called again with that parameter standing for the function given (given_functions.py) and
refuses the call where it writes into an argument the caller reads afterwards, as the analysis
before running refuses a call given a function it can name.

A function given may also write into what it holds itself: a method into its object
(`run_callback(acc.add, v)`, `acc.add` doing `self.total += v`; `out.append`, which keeps
`v` in `out`), a functools.partial into an argument it holds. Where the function called is
not differentiated (its result carries no gradient: it is called for what it does), nothing
follows that write, so the call is refused as the direct call `acc.add(v)` is. A parameter
counts as called where the function calls it or hands it on to a function that may
(`parameters_called`); a call `f(*items)` whose items are known only when it runs is checked
with every argument taken to be read afterwards.
"""
from __future__ import annotations

import functools
import inspect

import gast
import numpy as np

from ..codegen.nodes import copy_tree
from .aliases import Sharing
from .call_results import own_function, runtime_helper
from .given_functions import written_given
from .argument_writes import (ReadAfter, numpy_function_writes, parameter_names,
                              refuse_arguments_written)
from .object_state import (function_called, may_keep_what_it_is_given, state_write,
                           statement_blocks, varied_arguments)
from .unseen_effects import FOLLOWED, callable_name, partial_parts, partial_target
from ..errors import TransformError
from ..codegen.nodes import walk
from ..front.function_caches import made_from
from ..front.parsing import MISSING, parameter_names_of, read_function, resolve
from ..rules.core import constant
from ...runtime.derivatives.unpacking import apply_unpacked


# What _parameters_called found, kept on the function read (its source is what it runs).
_PARAMETERS_CALLED = "__autotrace_parameters_called__"


def check_functions_given(callee, arguments: tuple, keywords: dict, filename: str, line: int,
                          read_after: tuple | None, varied: tuple | None = (),
                          differentiated: bool = False) -> None:
    """Raise TransformError at `filename`, `line` where the Python function `callee`, given
    `arguments` and `keywords` (None for one not read again), calls a function among them
    (or hands it on to a function that may) that writes into its own argument, and so writes
    into an argument of the call whose memory the caller reads afterwards (`read_after`:
    argument_writes.arguments_read_after; None: any), or that writes into what it holds
    itself: a method into its object (`acc.add`, `out.append`), a functools.partial into
    an argument it holds. varied: the positions and keywords of the arguments that carry
    gradient (object_state.check_calls; None: any may); differentiated: the call's result
    carries gradient, so `callee` is differentiated, and its own transform refuses a method
    it calls that changes its object (object_state.check_calls)."""
    function, bound = (callee.__func__, callee.__self__) if inspect.ismethod(callee) else (
        callee, None)
    if not inspect.isfunction(function):
        return
    first = 0 if bound is None else 1
    given, held = {}, []
    parameters, called = _parameters_called(function)
    if parameters is None:  # no source: nothing known, as for any other call
        return
    # A value carrying gradient may reach the function given: through an argument, or from
    # the variables of the function that defines `callee`, which it reads.
    carried = not differentiated and (varied is None or bool(varied) or bool(
        function.__closure__))
    if read_after is not None:  # (a partial holds what it was given, read by other names)
        read_after = tuple(read_after) + tuple(key for key, value in [
            *enumerate(arguments), *keywords.items()] if isinstance(value, functools.partial))
    for key, value in [*enumerate(arguments), *keywords.items()]:
        name = _parameter_of(key + first if isinstance(key, int) else key, parameters)
        if name not in parameters:  # (*args, **options: "*", "**")
            continue
        written = _value_writes(value)
        if written:
            given[name] = written
        if name in called and (read_after is None or key in read_after):
            if carried:
                _refuse_held_state(function, name, value, varied is None or key in varied,
                                   filename, line)
            held += [(parameters.index(name), name, *write) for write in _held_writes(value)]
    written = written_given(Sharing, function, given, 0) if given else ()
    refuse_arguments_written(function, written + tuple(held), bound, read_after, filename,
                             line)


def _refuse_held_state(function, parameter: str, value, value_varied: bool, filename: str,
                       line: int) -> None:
    """Raise TransformError where `value`, given to `function` for `parameter`, which it may
    call, is a method (or a functools.partial of one) that changes its object: an attribute
    set to a value made from its arguments (or from the object itself, where `value_varied`:
    the method carries gradient), or a container's method that keeps what it is given."""
    method = partial_target(value)
    if may_keep_what_it_is_given(method, (0,)):
        owner = type(method.__self__).__qualname__
        raise TransformError(
            f"autotrace cannot differentiate this call of {function.__qualname__}: it may call "
            f"{owner}.{method.__name__}, given for {parameter!r}, which keeps what it is "
            f"given in its {owner}, where autotrace, which does not follow it there, would "
            f"lose its gradient; {FOLLOWED}", filename, line,
            "call of a method that may keep its arguments")
    method_function, bound = function_called(method)
    own = None if bound is None else _parameters_called(method_function)[0]
    if not own:
        return
    # What the function called gives the method may carry gradient; its object may too.
    found = state_write(method_function, set(own[1:]) | ({own[0]} if value_varied else set()),
                        bound)
    if found is not None:
        changed, what, where, at = found
        raise TransformError(
            f"autotrace cannot differentiate this call of {function.__qualname__}: it may call "
            f"{method_function.__qualname__}, given for {parameter!r}, which changes an "
            f"attribute of {changed!r} ({what}, {where}, line {at}), and autotrace follows "
            f"what a call returns, not what it changes in the objects it is given, so the "
            f"gradient of that value would be lost; return the new value (or a new object) "
            f"from the method instead, and assign it", filename, line,
            "change of an attribute")


def _held_writes(value) -> list:
    """(what, file, line, surely, items) for each argument a functools.partial `value` holds
    that the function it calls writes into in place."""
    if not isinstance(value, functools.partial):
        return []
    value, held, _ = partial_parts(value)
    name = getattr(value, "__qualname__", None) or callable_name(value)
    return [(f"{what} into the argument {parameter!r} of {name} that a functools.partial "
             f"holds", where, at, True, 0)
            for position, parameter, what, where, at, *_ in _value_writes(value)
            if position < held]


# It checks, and gives nothing: no gradient passes through it.
constant(check_functions_given)


def _value_writes(value) -> tuple:
    """parameters_written's tuples of the function `value` is (a method's, its object's
    parameter left out; a partial's, those it gives left out), or of any function a list,
    tuple or dict `value` holds."""
    if isinstance(value, (list, tuple)) or isinstance(value, dict):
        return tuple(w for item in (value.values() if isinstance(value, dict) else value)
                     if callable(item) and not isinstance(item, (list, tuple, dict))
                     for w in _value_writes(item))
    value, skipped, _ = partial_parts(value)
    if inspect.ismethod(value):
        skipped, value = skipped + 1, value.__func__
    if numpy_function_writes(value):  # (np.copyto)
        return tuple((position - skipped, *rest) for position, *rest in
                     numpy_function_writes(value) if position >= skipped)
    if not inspect.isfunction(value):
        return ()
    return tuple((position - skipped, *rest) for position, *rest in
                 Sharing.parameters_written(value) if position >= skipped)


def guard_functions_given(body: list, returned: list, location, classify, helper,
                          namespace: dict, varied: set = frozenset(),
                          active: set = frozenset()) -> None:
    """Put a `check_functions_given` before each call in `body` (A-normal form; `returned`:
    the return statements split off it) of a function of the user's that calls one of its
    parameters, given for it a value the source does not name (not a function or a list,
    tuple or dict of the module's). classify(func): what the callee `func` is
    (transforms/analysis/calls.py); helper(name): the name generated code calls a helper by;
    varied: the names whose values carry gradient; active: those the derivative follows."""
    read_after = ReadAfter(body + list(returned))
    for block in statement_blocks(body):
        for index in reversed(range(len(block))):
            statement = block[index]
            call = statement.value if isinstance(statement, (gast.Expr, gast.Assign)) else None
            if not isinstance(call, gast.Call) or any(
                    isinstance(a, gast.Starred) for a in call.args):
                continue
            if isinstance(call.func, gast.Name) and namespace.get(
                    call.func.id) is apply_unpacked:  # f(*items), items known when it runs
                checked = _unpacked_check(call, classify)
            else:
                checked = _check(call, classify, namespace,
                                 lambda: read_after(call, statement), varied)
            if checked is None:
                continue
            if isinstance(statement, gast.Assign) and isinstance(
                    statement.targets[0], gast.Name) and statement.targets[0].id in active:
                checked.append(gast.Constant(value=True, kind=None))  # (differentiated)
            guard = gast.Expr(value=gast.Call(
                func=gast.Name(id=helper("check_functions_given"), ctx=gast.Load(),
                               annotation=None, type_comment=None),
                args=checked[:3] + [gast.Constant(value=location.filename, kind=None),
                                    gast.Constant(value=location.line_of(statement), kind=None),
                                    *checked[3:]],
                keywords=[]))
            for node in walk(guard):
                if "lineno" in node._attributes:
                    gast.copy_location(node, statement)
            read_after(call, statement)  # (found before the guard reads names again)
            block.insert(index, guard)


def _check(call, classify, namespace: dict, read_after, varied: set) -> list | None:
    """check_functions_given's arguments but the file and line for `call`, a call of a
    function of the user's (or of the runtime's, with a rule: tree_leaves) that calls a
    parameter given a function the source does not name (for the runtime's, not a class:
    build_namedtuple(Point, ...)), else None. read_after(): arguments_read_after's for the
    call."""
    resolved = classify(call.func)
    runtime = resolved.kind in ("rule", "constant") and runtime_helper(resolved.value)
    called = parameters_called(resolved.value) if resolved.kind == "user" or runtime else ()
    if called and _transforms_quiet_functions(call, resolved.value, namespace):
        return None
    if not any(_unnamed(argument, namespace) and not (runtime and isinstance(
            resolve(argument, namespace), type)) for argument in _arguments_for(
            call, resolved.value, called)):
        return None
    return [copy_tree(call.func),
            gast.Tuple(elts=[_read_again(a) for a in call.args], ctx=gast.Load()),
            gast.Dict(keys=[gast.Constant(value=k.arg, kind=None) for k in call.keywords],
                      values=[_read_again(k.value) for k in call.keywords]),
            gast.Constant(value=read_after(), kind=None),
            gast.Constant(value=varied_arguments(call, varied), kind=None)]


def _transforms_quiet_functions(call, callee, namespace: dict) -> bool:
    """Whether `call` is one of autotrace's transforms (`autotrace.jvp(lambda z: ..., (x,),
    (v,))`) given, for each parameter its signature marks Callable, a lambda or nested function
    of the user's (lifted: front/nested.py) that calls none of its parameters, hands none on
    and writes into none. The transform calls those functions only, handing them the other
    arguments, so no function given is called that could write: check_functions_given would
    find nothing."""
    if not (inspect.isfunction(callee) and own_function(callee)) or runtime_helper(callee):
        return False
    parameters = inspect.signature(callee).parameters
    functions = {name for name, parameter in parameters.items()
                 if "Callable" in str(parameter.annotation)}
    given = [argument for key, argument in [*enumerate(call.args), *(
        (k.arg, k.value) for k in call.keywords)]
        if _parameter_of(key, list(parameters)) in functions]
    return bool(given) and all(_quiet_lifted(resolve(a, namespace), a) for a in given)


def _quiet_lifted(function, argument) -> bool:
    """Whether `function`, named by `argument`, is a lambda or nested function of the user's
    that front/nested.py lifted (reading nothing of the enclosing function), whose source the
    analysis reads, and that calls none of its parameters, hands none on and writes into
    none."""
    if not (inspect.isfunction(function) and isinstance(argument, gast.Name)
            and function.__name__ == argument.id
            and getattr(function, "__autotrace_origin__", None) is not None):
        return False
    parameters, called = _parameters_called(function)
    return parameters is not None and not called and not _value_writes(function)


def _unpacked_check(call, classify) -> list | None:
    """_check's list for `apply_unpacked(f, arguments, keywords, ...)`, a call of a function
    of the user's that calls one of its parameters, whose arguments (`f(*items)`) are known
    only when it runs: any may be read after it, and carry gradient."""
    function, arguments, keywords = (call.args + [None] * 3)[:3]
    if not all(isinstance(a, gast.Name) for a in (function, arguments, keywords)):
        return None
    resolved = classify(function)
    if resolved.kind != "user" or not parameters_called(resolved.value):
        return None
    return [copy_tree(function), copy_tree(arguments), copy_tree(keywords),
            gast.Constant(value=None, kind=None), gast.Constant(value=None, kind=None)]


def parameters_called(function) -> frozenset:
    """The parameters of the Python function `function` that it may call: by name, as an item
    (`fns[0](...)`), or through a name bound to one (`g = fn`, `for fn in fns`); or that it
    hands on to a function it calls, which may call it."""
    return _parameters_called(function)[1] if inspect.isfunction(function) else frozenset()


def _parameters_called(function) -> tuple:
    """(the parameters of the Python function `function`, those of them it may call:
    parameters_called), or (None, frozenset()) where its source cannot be read. Read once
    per function (generated code asks on every call)."""
    known = made_from(function, _PARAMETERS_CALLED)
    if "called" not in known:
        known["called"] = (None, frozenset())  # (while it is read: a recursive call, unknown)
        known["called"] = _read_parameters_called(function)
    return known["called"]


def _read_parameters_called(function) -> tuple:
    try:
        parsed = read_function(function)
    except Exception:  # noqa: BLE001 - no source: not read
        return None, frozenset()
    node = parsed.node
    names = parameter_names(node)
    own = runtime_helper(function)  # (see _may_call)
    local = {n.id for n in walk(node) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Store)} | set(names)
    # (*args and **options, called where a function among them is: "*" and "**" in called)
    starred = {a.id: mark for a, mark in ((node.args.vararg, "*"), (node.args.kwarg, "**"))
               if a is not None}
    parameters = set(names) | set(starred)
    from_parameter = {}  # a name bound from a parameter -> that parameter
    for statement in walk(node):
        if isinstance(statement, gast.Assign) and isinstance(statement.value, gast.Name):
            targets = [statement.targets[0]]
        elif isinstance(statement, gast.For) and isinstance(statement.iter, gast.Name):
            targets, statement = [statement.target], gast.Assign(
                targets=[statement.target], value=statement.iter)
        else:
            continue
        source = statement.value.id
        for target in targets:
            if isinstance(target, gast.Name) and source in parameters | set(from_parameter):
                from_parameter[target.id] = from_parameter.get(source, source)
    called = set()
    for call in walk(node):
        if isinstance(call, gast.Call):
            func = call.func
            while isinstance(func, gast.Subscript):
                func = func.value
            # Called, or handed on to a function that may call it.
            handed = [(func, None)] + [(a, i) for i, a in enumerate(call.args)] + [
                (k.value, k.arg) for k in call.keywords]
            for name, key in handed:
                name = name.value if isinstance(name, gast.Starred) else name
                if isinstance(name, gast.Name) and name.id in parameters | set(
                        from_parameter) and (name is func or _may_call(
                            call, key, parsed.namespace, local, own)):
                    parameter = from_parameter.get(name.id, name.id)
                    called.add(starred.get(parameter, parameter))
    return names, frozenset(called)


# Functions of Python's and NumPy's that call a function they are given.
_CALLING = frozenset({"map", "filter", "sorted", "min", "max", "reduce", "partial",
                      "apply_along_axis", "apply_over_axes", "vectorize", "frompyfunc",
                      "piecewise"})


def _may_call(call, key, namespace: dict, local: set, own: bool = False) -> bool:
    """Whether the callee of `call` may call (or keep, and call later) its argument `key` (a
    position or a keyword): a function of the user's or of autotrace's runtime where it calls,
    or hands on, the parameter given it; Python's and NumPy's functions only where they call
    a function they are given (map, np.vectorize); any other callable (autotrace.grad), or
    one the source does not name. In the runtime's `own` helpers, which generated code calls,
    a function they were given (`leaf(value)`), a function being read (a recursive call) and
    one the source does not name (`xp.zeros_like(value)`) call nothing they are handed."""
    func = call.func
    if isinstance(func, gast.Name) and func.id in local:
        return not own
    callee = resolve(func, namespace)
    first = 0
    if inspect.ismethod(callee):
        callee, first = callee.__func__, 1
    if inspect.isfunction(callee) and (runtime_helper(callee) or not own_function(
            callee)):  # (autotrace's API: below)
        parameters, called = _parameters_called(callee)
        if parameters is None:
            return not own
        if any(isinstance(a, gast.Starred) for a in call.args):
            return bool(called)
        return _parameter_of(key + first if isinstance(key, int) else key,
                             parameters) in called
    module = (getattr(callee, "__module__", None) or "").split(".")[0].lstrip("_")
    if callee is not MISSING and module in ("builtins", "numpy", "functools") or isinstance(
            callee, np.ufunc):
        return getattr(callee, "__name__", None) in _CALLING
    return not own


def _parameter_of(key, parameters: list) -> str:
    """The parameter an argument `key` (a position or a keyword) is given for: one of
    `parameters`, else "*" (in *args) or "**" (in **options), as _read_parameters_called
    marks them."""
    if isinstance(key, int):
        return parameters[key] if key < len(parameters) else "*"
    return key if key in parameters else "**"


def _arguments_for(call, function, called) -> list:
    """The arguments of `call` given for the parameters `called` of `function`."""
    if not called:
        return []
    parameters = parameter_names_of(function)
    return [argument for key, argument in [*enumerate(call.args), *(
        (k.arg, k.value) for k in call.keywords)] if _parameter_of(key, parameters) in called]


def _unnamed(argument, namespace: dict) -> bool:
    """Whether the source does not say what function `argument` is: it is not a constant, a
    lambda, a display, nor a global function, list, tuple or dict the analysis before running
    reads (given_functions.py)."""
    if isinstance(argument, (gast.Constant, gast.Lambda, gast.List, gast.Tuple, gast.Dict,
                             gast.Set)):
        return False
    value = resolve(argument, namespace)
    return value is MISSING or not (inspect.isfunction(value) or isinstance(
        value, (list, tuple, dict)))


def _read_again(argument):
    """`argument` read once more for the check (a name, an attribute or an item of a name:
    A-normal form keeps calls out of them), else None."""
    base = argument
    while isinstance(base, (gast.Attribute, gast.Subscript)):
        base = base.value
    if isinstance(base, gast.Name) and not any(
            isinstance(n, gast.Call) for n in gast.walk(argument)):
        return copy_tree(argument)
    return gast.Constant(value=None, kind=None)

