"""Reading a Python function back as a gast tree, with what its names mean."""
from __future__ import annotations

import builtins
import inspect
import linecache
import textwrap
from dataclasses import dataclass

import gast

from ..derivative_record import derivative_record
from ..errors import Location, SourceUnavailableError, TransformError
from .source_check import check_source_matches, source_changed
from .function_caches import made_from_code
from ..codegen.nodes import copy_tree, nodes_of, walk
from ...runtime.held_state import holds_state
from ...runtime.python_modules import source_lines


@dataclass
class ParsedFunction:
    """A function's tree (always a FunctionDef; a lambda becomes `def <name>(...): return ...`),
    where it came from, and the namespace its free names resolve in."""

    node: gast.FunctionDef
    location: Location
    namespace: dict
    function: object


def _unwrap(func):
    wrapped = getattr(func, "__autotrace_python_function__", None)
    if wrapped is not None:  # a traced function (autotrace.function): its Python function
        func = wrapped
    if inspect.ismethod(func):
        func = func.__func__
    record = derivative_record(func)
    if record is not None and record.whole_calls is not None:
        func = record.whole_calls()  # one that runs calls in halves: the one running them whole
    return func


def namespace_of(func) -> dict:
    """What the free names of `func` mean now: its globals, then its closure cells' values."""
    namespace = dict(func.__globals__)
    code = func.__code__
    if func.__closure__:
        for name, cell in zip(code.co_freevars, func.__closure__):
            try:
                namespace[name] = cell.cell_contents
            except ValueError:  # an empty cell: the enclosing variable is not assigned yet
                pass
    return namespace


def _find_lambda(tree, func, first_line: int):
    """The lambda node in `tree` (whose line 1 is the file's `first_line`) that compiled to
    `func`'s code object."""
    code = func.__code__
    parameters = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    candidates = []
    for node in walk(tree):
        if isinstance(node, gast.Lambda):
            names = [a.id for a in node.args.args] + [a.id for a in node.args.kwonlyargs]
            if names == parameters:
                candidates.append(node)
    on_its_line = [node for node in candidates
                   if node.lineno == code.co_firstlineno - first_line + 1]
    candidates = on_its_line or candidates
    if len(candidates) == 1:
        return candidates[0]
    # Several lambdas with the same parameters on one line: match the column where possible.
    positions = list(code.co_positions()) if hasattr(code, "co_positions") else []
    columns = {p[2] for p in positions if p[2] is not None}
    for node in candidates:
        if getattr(node.body, "col_offset", None) in columns:
            return node
    return None


def _parse_around_lambda(source: str, filename: str, first_line: int):
    """(tree, the file's line that is its line 1, whether the tree is the whole file's) for a
    lambda inside a larger expression, whose own lines may not parse alone: in parentheses,
    else the whole file; (None, ...) when neither parses."""
    try:
        return gast.parse("(\n" + source + "\n)"), first_line - 1, False
    except SyntaxError:
        pass
    try:
        return gast.parse("".join(linecache.getlines(filename))), 1, True
    except SyntaxError:
        return None, first_line, False


def parse_function(func) -> ParsedFunction:
    """The gast tree of `func`'s source. Raises TransformError when the source is unavailable."""
    return _parsed(func, to_change=True)


def read_function(func) -> ParsedFunction:
    """`parse_function(func)` for a caller that only reads the tree (an analysis of a function
    called): the tree kept for `func`'s code itself, not a copy, where `func` has no default
    values to write into it. The caller must not change the tree or its nodes."""
    return _parsed(func, to_change=False)


def _parsed(func, to_change: bool) -> ParsedFunction:
    func = _unwrap(func)
    name = getattr(func, "__name__", repr(func))
    if not inspect.isfunction(func):
        raise SourceUnavailableError(
            f"cannot read the source of {name!r} ({type(func).__name__}): autotrace "
            "differentiates Python functions written in source files. Wrap it in one, e.g. "
            f"grad(lambda x: {name}(x)): inside a function, calls to it use its derivative "
            "rule (register one with @autotrace.register_adjoint if it has none).")
    try:
        lines, first_line, filename = _source_lines(func)
    except (OSError, TypeError):
        raise SourceUnavailableError(
            f"the source of function {name!r} is not available (it was defined in an "
            "interactive session or with exec). Define it in a .py file, or register a rule "
            "for it with @autotrace.register_adjoint.") from None
    source = textwrap.dedent("".join(lines))
    first_line = max(first_line, 1)
    # The tree depends on the source read now and on the code that runs (which lambda,
    # whether the file still holds it): kept with the code object, for the next call of any
    # function running it (each closure a factory returns) with the same source, and copied
    # for a caller that changes it.
    known = made_from_code(func.__code__, _PARSED)
    key = (name, filename, first_line, source)
    node, tree_line = known.get(key, (None, None))
    kept = node is not None
    if node is None:
        node, tree_line, whole_file = _read_tree(func, name, filename, first_line, source)
        kept = not whole_file
        if kept:
            known[key] = (node, tree_line)
    location = _location(func, filename, tree_line, name)
    namespace = namespace_of(func)
    if to_change or not kept or _has_defaults(node, func):
        node = copy_tree(node)
        _defaults_as_evaluated(node, func, namespace)
    return ParsedFunction(node, location, namespace, func)


def parameter_names_of(func) -> list:
    """The names of `func`'s parameters, positional then keyword-only, as `parse_function`'s
    tree lists them (its *args and **options left out), read from the code it runs rather
    than from a copy of its tree. Raises TransformError as parse_function does for what is not
    a Python function."""
    unwrapped = _unwrap(func)
    if not inspect.isfunction(unwrapped):
        arguments = parse_function(func).node.args  # (its error)
        return [a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    code = unwrapped.__code__
    return list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


_PARSED = "parsed"  # what is kept with a code object: its tree
_LINES = "source lines"  # ... and the lines of its source


def _source_lines(func) -> tuple:
    """(the lines of `func`'s source, the file's line of the first, the file), as inspect
    reads them now: from the code object, which is what calling `func` runs (inspect would
    follow `__wrapped__`, functools.wraps, to the function a decorator wrapped, and so skip
    the decorator's own code). Kept with the code object while linecache holds the same copy
    of the file (inspect looks the file's module up among every module loaded, which costs
    more than the rest of a small derivative's parsing); an edited file is read again, as
    inspect checks it."""
    code = func.__code__
    known = made_from_code(code, _LINES)
    kept = known.get("lines")
    if kept is not None:
        filename, entry, found = kept
        linecache.checkcache(filename)
        if linecache.cache.get(filename) is entry:
            return found
    lines, first_line, filename = source_lines(code, func.__globals__)
    entry = linecache.cache.get(filename)
    known.clear()
    if entry is not None:
        known["lines"] = (filename, entry, (lines, first_line, filename))
    return lines, first_line, filename


def _location(func, filename: str, first_line: int, name: str) -> Location:
    origin = getattr(func, "__autotrace_origin__", None)
    if origin is not None:  # generated from the user's code: point errors at the user's file
        return origin
    return Location(filename, first_line, name)


def _read_tree(func, name: str, filename: str, first_line: int, source: str):
    """(func's FunctionDef parsed from `source` and checked against the code that runs, the
    file's line that is the tree's line 1, whether the tree was read from the whole file: a
    lambda whose own lines do not parse, where `source` alone does not say what it is)."""
    whole_file = False
    try:
        tree = gast.parse(source)
    except SyntaxError:
        tree, first_line, whole_file = (
            _parse_around_lambda(source, filename, first_line) if name == "<lambda>"
            else (None, first_line, False))
        if tree is None:
            raise TransformError(f"cannot parse the source of {name!r}", filename,
                                 first_line) from None
    location = _location(func, filename, first_line, name)
    if name == "<lambda>":
        lam = _find_lambda(tree, func, first_line)
        if lam is None:
            raise TransformError(
                "cannot tell which lambda on this line to differentiate; assign it to a "
                "name with def", filename, first_line, "lambda")
        node = gast.FunctionDef(
            name="lambda_", args=lam.args, body=[gast.Return(value=lam.body)],
            decorator_list=[], returns=None, type_comment=None, type_params=[])
        gast.copy_location(node, lam)
        node.body[0].lineno = lam.lineno
    else:
        node = tree.body[0]
        if isinstance(node, gast.AsyncFunctionDef):
            raise location.error(node, "autotrace cannot differentiate an async function; "
                                 "make it a plain def", "async def")
        if not isinstance(node, gast.FunctionDef) and not filename.startswith("<"):
            raise source_changed(func, filename, first_line)  # a def was compiled from there
        if not isinstance(node, gast.FunctionDef):
            raise TransformError(f"expected a function definition for {name!r}",
                                 filename, first_line)
        node.decorator_list = []
    if not filename.startswith("<"):  # a file, which may have been edited since the import
        check_source_matches(node, func, filename, first_line)
    return node, first_line, whole_file


LITERALS = (bool, int, float, complex, str, type(None))


def _has_defaults(node: gast.FunctionDef, func) -> bool:
    """Whether `func` or its tree `node` has default values, which _defaults_as_evaluated
    writes into (a copy of) the tree."""
    return bool(func.__defaults__ or func.__kwdefaults__ or node.args.defaults
                or any(node.args.kw_defaults))


def _defaults_as_evaluated(node: gast.FunctionDef, func, namespace: dict) -> None:
    """Replace the default expressions in `node` by the values Python evaluated when it
    defined `func` (`lambda x, k=k: ...` in a loop names a variable of the enclosing scope,
    which need not exist, or hold that value, any more): a literal as itself, anything else
    through a name bound to it in `namespace`."""
    arguments = node.args
    positional = arguments.posonlyargs + arguments.args
    if not _has_defaults(node, func):
        return  # nothing to replace (the common case: no walk of the tree for its names)
    given = list(func.__defaults__ or ())
    keyword_values = func.__kwdefaults__ or {}
    taken = {n.id for n in nodes_of(node) if isinstance(n, gast.Name)} | set(namespace)

    def value_node(parameter: str, value):
        if type(value) in LITERALS:
            return gast.Constant(value=value, kind=None)
        identifier = f"_default_{parameter}"
        while identifier in taken:
            identifier += "_"
        taken.add(identifier)
        namespace[identifier] = value
        return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)

    defaulted = positional[len(positional) - len(given):] if given else []
    arguments.defaults = [gast.copy_location(value_node(p.id, v), p)
                          for p, v in zip(defaulted, given)]
    arguments.kw_defaults = [
        gast.copy_location(value_node(p.id, keyword_values[p.id]), p)
        if p.id in keyword_values else None for p in arguments.kwonlyargs]


_MISSING = object()


def resolve(node, namespace: dict):
    """The value a Name or attribute chain (`np.linalg.norm`) has in `namespace`, or _MISSING
    (also for a builtin's name that the function's own variable has: `namespace.shadowed`,
    analysis/live_names.py)."""
    if isinstance(node, gast.Name):
        if node.id in namespace:
            return namespace[node.id]
        if node.id in getattr(namespace, "shadowed", ()):
            return _MISSING
        return getattr(builtins, node.id, _MISSING)
    if isinstance(node, gast.Attribute):
        base = resolve(node.value, namespace)
        if base is _MISSING or not inspect.ismodule(base) and not isinstance(base, type):
            return _MISSING
        return getattr(base, node.attr, _MISSING)
    return _MISSING


MISSING = _MISSING


def static_chain(node: gast.Attribute, namespace: dict) -> bool:
    """Whether the attribute chain `node` is rooted at a module or class (`np.pi`), a constant
    to the transforms, but for one whose value holds Variables (`Model.w`, `settings.W`):
    that stays an attribute read of its root, which carries their gradient (implicit_grad)."""
    value = resolve(node, namespace)
    return value is not _MISSING and not holds_state(value)
