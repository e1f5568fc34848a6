"""Fresh names that never clash with the names a function already uses."""
from __future__ import annotations

import builtins
import collections
import dis
import inspect
import keyword
import re

import gast

from .nodes import NODE_FIELDS, children, nodes_of


def python_name(text: str) -> str:
    """`text` as a Python name to define a function by: `<lambda>` -> `lambda_`, `f` where
    nothing is left."""
    name = re.sub(r"\W", "_", text).strip("_") or "f"
    return name + "_" if keyword.iskeyword(name) else name


def names_in(tree) -> set:
    """Every identifier that appears in `tree` (names, arguments, function names)."""
    found = set()
    add = found.add
    for node in nodes_of(tree):
        if isinstance(node, gast.Name):
            add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            add(node.name)
    return found


# Nodes whose names are their own: a walk of one scope does not enter them.
SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
          gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def walk_scope(node):
    """`node` and what it contains, depth first, in source order, not descending into nested
    scopes (functions, lambdas, classes, comprehensions), whose names are their own."""
    # A stack, not recursion: a recursive generator passes every node up through each level
    # above it, and generated bodies nest deep. A node's children are pushed last to first,
    # so that the first is taken next.
    todo = [node]
    pop, push = todo.pop, todo.append
    while todo:
        node = pop()
        yield node
        if isinstance(node, SCOPES):
            continue  # its name (a def) belongs here; its body does not
        for field in reversed(NODE_FIELDS[type(node)]):
            value = getattr(node, field, None)
            if value is None:
                continue
            if isinstance(value, gast.AST):
                push(value)
            elif isinstance(value, list):
                for item in reversed(value):
                    if isinstance(item, gast.AST):
                        push(item)


def name_counts(nodes, context=gast.Load) -> collections.Counter:
    """How often each name is used in `context` (gast.Load or gast.Store, or a tuple of such
    classes) within `nodes`, nested scopes included."""
    found = []  # in the order walk meets them, which is the Counter's order
    for root in nodes:
        found += [node.id for node in nodes_of(root)
                  if isinstance(node, gast.Name) and isinstance(node.ctx, context)]
    return collections.Counter(found)


# The builtins a generated name must not hide: the generated code may call them (`len`,
# `dict`) though the user's never does, and a tangent `dict` for a variable `ict` would hide one.
BUILTIN_NAMES = frozenset(name for name in dir(builtins) if not name.startswith("_"))


def usable(candidate: str) -> bool:
    """Whether a generated local may be called `candidate`: not a keyword (`del`, the tangent
    of `el`; `break`, the gradient of `reak`) nor a builtin it would hide. Soft keywords
    (`match`, `type`) are names like any other."""
    return not keyword.iskeyword(candidate) and candidate not in BUILTIN_NAMES


class Namer:
    """Hands out names unused so far; gradient names follow the primal ones (`bx` for `x`).
    Every name a transform makes comes from here, so none is a keyword or hides a builtin."""

    def __init__(self, taken=()):
        self.taken = set(taken)
        self.counters = {}
        self.handed_out = set()  # the names fresh() and temporary() gave: generated locals

    def fresh(self, hint: str) -> str:
        """`hint` itself if free and usable, else `hint_1`, `hint_2`, ..."""
        base = hint
        candidate = base
        index = 0
        while candidate in self.taken or not usable(candidate):
            index += 1
            candidate = f"{base}_{index}"
        self.taken.add(candidate)
        self.handed_out.add(candidate)
        return candidate

    def temporary(self, hint: str = "t") -> str:
        """A name for a value the transform introduces: `_t1`, `_t2`, `_cond1`, ..."""
        base = "_" + hint.lstrip("_")
        index = self.counters.get(base, 0)
        while True:
            index += 1
            candidate = f"{base}{index}"
            if candidate not in self.taken:
                break
        self.counters[base] = index
        self.taken.add(candidate)
        self.handed_out.add(candidate)
        return candidate

    def gradient(self, primal: str) -> str:
        """The gradient variable of `primal`: `bx` for `x`, `b_t1` for `_t1`."""
        return self.fresh("b" + primal)


def seed_keyword(func, keyword: str = "dy") -> str:
    """The keyword a derivative of `func` takes its seed by: `dy` (or `tangent`), unless func
    takes a parameter of that name (a derivative of a derivative takes `dy_`) or reads a
    global or closure variable of it, which the parameter would hide. A local variable of
    that name does not change it: the transform renames the local (`rename_local`). A traced
    function (autotrace.function) is derived from its Python function: that one's names."""
    func = getattr(func, "__autotrace_python_function__", func)
    code = getattr(func, "__func__", func).__code__
    while seed_keyword_taken(code, keyword):
        keyword += "_"
    return keyword


def seed_keyword_taken(code, keyword: str) -> bool:
    """Whether the function of `code` takes a parameter `keyword`, or reads a global or
    closure variable of that name: what a derivative's seed keyword must not be called."""
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    if keyword in code.co_varnames[:count] or keyword in code.co_freevars:
        return True
    return keyword in code.co_names and any(  # (co_names holds attribute names too)
        instruction.argval == keyword for instruction in dis.get_instructions(code)
        if instruction.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL",
                                  "LOAD_NAME", "STORE_NAME", "DELETE_NAME"))


def rename_local(function: gast.FunctionDef, old: str, new: str) -> None:
    """Call the local variable `old` of `function` `new`, where `function` and the functions
    nested in it that do not bind a variable `old` of their own read or write it."""
    def rename(nodes):
        for root in nodes:
            for node in walk_scope(root):
                if isinstance(node, gast.Name) and node.id == old:
                    node.id = new
                elif isinstance(node, (gast.Nonlocal, gast.Global)):
                    node.names = [new if n == old else n for n in node.names]
                elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
                    arguments = node.args
                    rename([d for d in arguments.defaults + arguments.kw_defaults if d])
                    rename(getattr(node, "decorator_list", []))
                    body = node.body if isinstance(node.body, list) else [node.body]
                    if old not in local_names(arguments, body) or any(
                            isinstance(n, gast.Nonlocal) and old in n.names
                            for s in body for n in walk_scope(s)):
                        rename(body)
                elif isinstance(node, SCOPES) and not isinstance(node, gast.ClassDef):
                    rename(children(node))  # a comprehension: renaming its own variables
                    # alike changes nothing
    rename(function.body)


def local_names(arguments: gast.arguments, body: list) -> set:
    """A function's local variables, by Python's rule: its parameters and the names its body
    binds (assignment targets, loop and `with` targets, imports, nested defs), nested scopes
    apart, but for a comprehension's `(y := v)`, which binds y in the function. A name that is
    only subscripted or mutated is not one."""
    found = {a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    found.update(a.id for a in (arguments.vararg, arguments.kwarg) if a is not None)
    for statement in body:
        for node in walk_scope(statement):
            if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
                found.add(node.id)
            elif isinstance(node, (gast.Import, gast.ImportFrom)):
                found.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, (gast.ListComp, gast.SetComp, gast.DictComp,
                                   gast.GeneratorExp)):
                found.update(n.target.id for n in nodes_of(node) if isinstance(n, gast.NamedExpr))
    return found


# Builtins that run a function or generator they are given before they return.
_CONSUMING = frozenset({"sum", "min", "max", "sorted", "list", "tuple", "set", "dict", "any",
                        "all"})


def made_functions(nodes) -> list:
    """The functions, lambdas, classes and generator expressions made in `nodes` (nested
    scopes included) that may outlive the statement making them: not a lambda or generator
    expression given straight to a builtin that runs it at once (`sum(v * k for v in xs)`,
    `sorted(xs, key=lambda v: v * k)`)."""
    kinds = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
             gast.GeneratorExp)
    found = [node for root in nodes for node in nodes_of(root)]
    consumed = {id(value) for node in found if isinstance(node, gast.Call)
                and getattr(node.func, "id", None) in _CONSUMING
                for value in node.args + [k.value for k in node.keywords]}
    return [node for node in found if isinstance(node, kinds) and id(node) not in consumed]
