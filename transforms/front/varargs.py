"""Functions with *args and **kwargs, specialized to the arguments of a call.

For a call with two positional arguments past the named ones and a keyword `scale` that no
named parameter takes, `def f(x, *args, **kwargs)` becomes

    def f(x, args_0, args_1, *, scale):
        args = (args_0, args_1)
        kwargs = {'scale': scale}
        ...                          # f's body; g(*args, **kwargs) spelled out as
                                     # g(args[0], args[1], scale=kwargs['scale'])

an ordinary function of named parameters, whose positions are those of the call (so `wrt`
indexes into *args as the call's arguments). `g(*xs)` with an `xs` assigned once, from a tuple
written out, becomes `g(xs[0], xs[1])` the same way.
"""
from __future__ import annotations

import copy
import inspect
import weakref

import gast

from ..analysis.calls import Checkpointed, classify_value
from ..codegen.codegen import to_source
from ..errors import Location
from .function_caches import made_from
from ..analysis.live_names import LiveNamespace
from .parsing import parse_function
from .python_versions import python_version
from ..codegen.templates import name
from ..codegen.naming import seed_keyword
from ..codegen.nodes import nodes_of, walk
from ..derivative_record import Derivative, derivative_record
from ..wrt import WithRespectTo

_specialized: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def takes_varargs(func) -> bool:
    """Whether the Python function `func` has a *args or **kwargs parameter."""
    func = getattr(func, "__autotrace_python_function__", func)  # a traced function's own
    code = getattr(getattr(func, "__func__", func), "__code__", None)
    return code is not None and bool(
        code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def specialize(func, positional: int, keywords: tuple):
    """`func` with its *args as `positional` arguments in all (named ones included) and its
    **kwargs as the keyword arguments `keywords` (those its named parameters do not take)."""
    record = derivative_record(func)
    if record is not None and record.specialized is not None:
        # a derivative of a function with *args (by_arguments): its derivative for the call
        return record.specialized(positional, keywords)
    cache = made_from(func, "__autotrace_specialized__", _specialized)
    key = (positional, tuple(keywords))
    if key in cache:
        return cache[key]
    parsed = parse_function(func)
    node = copy.deepcopy(parsed.node)
    arguments = node.args
    named = arguments.posonlyargs + arguments.args
    taken = {n.id for n in walk(node) if isinstance(n, gast.Name)}
    prologue = []
    sizes = {}
    if arguments.vararg is not None:
        vararg = arguments.vararg.id
        extra = []
        for index in range(max(positional - len(named), 0)):
            identifier = f"{vararg}_{index}"
            while identifier in taken:
                identifier += "_"
            taken.add(identifier)
            extra.append(identifier)
        if extra:  # every named parameter is given: a default may not come before them
            arguments.defaults = []
        arguments.args = arguments.args + [gast.Name(id=e, ctx=gast.Param(), annotation=None,
                                                     type_comment=None) for e in extra]
        prologue.append(gast.Assign(targets=[name(vararg, store=True)], value=gast.Tuple(
            elts=[name(e) for e in extra], ctx=gast.Load()), type_comment=None))
        sizes[vararg] = len(extra)
        arguments.vararg = None
    given = {}
    if arguments.kwarg is not None:
        kwarg = arguments.kwarg.id
        own = {a.id for a in named + arguments.kwonlyargs}
        for keyword in keywords:
            if keyword in own or keyword in taken or not keyword.isidentifier():
                raise parsed.location.error(
                    node, f"cannot pass {keyword!r} through **{kwarg}: autotrace gives each "
                    "keyword a parameter of that name, and the function already uses it",
                    "**kwargs")
            given[keyword] = name(keyword)
        arguments.kwonlyargs = arguments.kwonlyargs + [
            gast.Name(id=k, ctx=gast.Param(), annotation=None, type_comment=None)
            for k in given]
        arguments.kw_defaults = arguments.kw_defaults + [None] * len(given)
        prologue.append(gast.Assign(targets=[name(kwarg, store=True)], value=gast.Dict(
            keys=[gast.Constant(value=k, kind=None) for k in given],
            values=list(given.values())), type_comment=None))
        sizes[kwarg] = tuple(given)
        arguments.kwarg = None
    # Errors name the user's lines: the first statement of the body, line 2 of the generated
    # source after the prologue, maps to its own line.
    location = parsed.location
    first = location.line_of(node.body[0]) or location.first_line
    for statement in prologue:
        gast.copy_location(statement, node.body[0])
    node.body = prologue + node.body
    spell_out_starred(node, sizes)
    source = to_source(node)
    # A function of the user's module, as `func`: its globals and closure variables are read
    # when it runs.
    specialized = LiveNamespace(parsed).load(source, node.name,
                                             f"{node.name}__{positional}_args")
    specialized.__autotrace_origin__ = Location(location.filename,
                                                first - len(prologue) - 1, location.name)
    cache[key] = specialized
    return specialized


def spell_out_starred(function: gast.FunctionDef, sizes: dict | None = None) -> None:
    """`g(*xs)` becomes `g(xs[0], xs[1])` and `g(**options)` `g(a=options['a'])`, where `xs`
    (`options`) is assigned once in `function`, from a tuple (a dict with identifier keys)
    written out, or is in `sizes` (name -> the tuple's length, or the dict's keys); `g(*[a,
    b])` and `g(**{'k': v})`, a list, tuple or dict written out in the call, become `g(a, b)`
    and `g(k=v)`."""
    sizes = dict(sizes or {})
    stores = {}
    for node in walk(function):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        if isinstance(node, (gast.FunctionDef, gast.Lambda)) and node is not function:
            for argument in walk(node.args):
                if isinstance(argument, gast.Name):
                    stores[argument.id] = stores.get(argument.id, 0) + 1
    for node in walk(function):
        if not (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)):
            continue
        value = node.value
        if isinstance(value, gast.Tuple) and not any(
                isinstance(e, gast.Starred) for e in value.elts):
            sizes.setdefault(node.targets[0].id, len(value.elts))
        elif isinstance(value, gast.Dict) and all(
                isinstance(k, gast.Constant) and isinstance(k.value, str)
                and k.value.isidentifier() for k in value.keys):
            sizes.setdefault(node.targets[0].id, tuple(k.value for k in value.keys))
    sizes = {n: size for n, size in sizes.items() if stores.get(n, 0) <= 1}

    def item(variable: str, key):
        return gast.Subscript(value=name(variable), slice=gast.Constant(value=key, kind=None),
                              ctx=gast.Load())
    for node in walk(function):
        if not isinstance(node, gast.Call):
            continue
        arguments = []
        for argument in node.args:
            if isinstance(argument, gast.Starred) and isinstance(argument.value, (
                    gast.Tuple, gast.List)):  # g(*[fn, buf]): g(fn, buf), as Python calls it
                arguments += argument.value.elts
            elif (isinstance(argument, gast.Starred) and isinstance(argument.value, gast.Name)
                    and isinstance(sizes.get(argument.value.id), int)):
                variable = argument.value.id
                arguments += [gast.copy_location(item(variable, i), argument)
                              for i in range(sizes[variable])]
            else:
                arguments.append(argument)
        node.args = arguments
        keywords = []
        given = [k.arg for k in node.keywords if k.arg is not None]
        for keyword in node.keywords:
            shown = _keys_shown(keyword.value) if keyword.arg is None else None
            if shown is not None and not set(shown) & set(given):
                given += shown  # g(**{'fn': f}): g(fn=f), as Python calls it
                keywords += [gast.keyword(arg=k, value=v)
                             for k, v in zip(shown, keyword.value.values)]
            elif (keyword.arg is None and isinstance(keyword.value, gast.Name)
                    and isinstance(sizes.get(keyword.value.id), tuple)
                    and not set(sizes[keyword.value.id]) & set(given)):
                given += sizes[keyword.value.id]  # (one given twice: Python's error, run)
                variable = keyword.value.id
                keywords += [gast.keyword(arg=k, value=gast.copy_location(
                    item(variable, k), keyword.value)) for k in sizes[variable]]
            else:
                keywords.append(keyword)
        node.keywords = keywords


def _keys_shown(value) -> tuple | None:
    """The keys of `value` where it is a dict written out with distinct identifier keys."""
    if not isinstance(value, gast.Dict) or not all(
            isinstance(k, gast.Constant) and isinstance(k.value, str) and k.value.isidentifier()
            for k in value.keys):
        return None
    keys = tuple(k.value for k in value.keys)
    return keys if len(set(keys)) == len(keys) else None


def for_call(func, positional: int, names, seed: str | None = None):
    """`func` specialized to a call with `positional` positional arguments and keyword
    arguments `names` (but `seed`, the derivative's own), or `func` itself where it takes no
    *args or **kwargs."""
    if not takes_varargs(func) or classify_value(func).kind != "user":  # np.einsum: a rule
        return func
    parameters = inspect.signature(func, follow_wrapped=False).parameters
    keywords = tuple(k for k in names if k != seed and (
        k not in parameters or parameters[k].kind is inspect.Parameter.VAR_KEYWORD))
    return specialize(func, positional, keywords)


def calls_written_out(tree):
    """The calls in `tree` that pass no `*items` or `**options`."""
    return [node for node in nodes_of(tree) if isinstance(node, gast.Call)
            and not any(isinstance(a, gast.Starred) for a in node.args)
            and not any(k.arg is None for k in node.keywords)]


def specialize_calls(function: gast.FunctionDef, namespace: dict, resolve, namer) -> None:
    """Each call in `function` of a user function with *args or **kwargs, with the arguments
    written out, calls that function specialized to them (bound in `namespace`)."""
    # A with's context manager (a name scope, transforms/reverse/name_scopes.py) is called as written.
    headers = {id(item.context_expr) for node in walk(function)
               if isinstance(node, gast.With) for item in node.items}
    for node in calls_written_out(function):
        callee = python_version(resolve(node.func, namespace))  # (np.gradient: its version)
        checkpointed = isinstance(callee, Checkpointed)
        if checkpointed:  # autotrace.checkpoint(f): f specialized, still checkpointed
            callee = callee.function
        if not inspect.isfunction(callee) or id(node) in headers:
            continue
        specialized = for_call(callee, len(node.args), [k.arg for k in node.keywords])
        if specialized is callee:
            continue
        identifier = namer.fresh(callee.__name__)
        namespace[identifier] = Checkpointed(specialized) if checkpointed else specialized
        node.func = name(identifier)


def by_arguments(derive, func, mode: str, wrt: WithRespectTo):
    """A derivative of `func` (which takes *args or **kwargs) that specializes func to the
    arguments of each call, and runs `derive(specialized)` on them (made once for each number
    of positional arguments and set of keywords). mode and wrt: those `derive` makes it of and
    for; its seed's keyword (`dy`, `tangent`) is taken out of the call's keywords and handed to
    the derivative."""
    derivatives = {}
    keyword = "tangent" if mode == "forward" else "dy"
    func = getattr(func, "__autotrace_python_function__", func)  # grad(function(f)): f's
    inner = derivative_record(func)
    if inner is None or inner.specialized is None:
        keyword = seed_keyword(func, keyword)
    else:  # a derivative of this kind itself: its own seed keyword is taken
        while keyword == inner.seed:
            keyword += "_"

    def specialized(positional: int, names: tuple):
        function = for_call(func, positional, names, keyword)
        if function not in derivatives:
            derivatives[function] = derive(function)
        return derivatives[function]

    def derivative(*args, **kwargs):
        seed = kwargs.pop(keyword, _ABSENT)
        generated = specialized(len(args), tuple(kwargs))
        if seed is not _ABSENT:
            kwargs[derivative_record(generated).seed] = seed
        return generated(*args, **kwargs)
    derivative.__name__ = f"d{func.__name__}"
    derivative.__autotrace_derivative__ = Derivative(mode=mode, wrt=wrt, seed=keyword,
                                                     specialized=specialized)
    return derivative


_ABSENT = object()
