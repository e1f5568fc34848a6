"""autotrace's own ops (conv2d, erf, pooling, random draws) written into an exported module.

A graph of the NumPy backend calls these ops by name (`conv2d(a, b, padding='same', ...)`), with
the backend's namespace binding each name to the function that computes it
(runtime/primitives/registry.py source_globals). An exported module binds the same names the same way: it
holds the source of each such function, and of everything that function uses in turn (helpers,
the WindowGeometry dataclass, tables of coefficients), read with `inspect` from autotrace's own
files, so it computes exactly what the traced function computes.

What the gathered code may use: NumPy, the standard library, Python literals, and more such
code. Three runtime helpers ask which array library or device an array belongs to (NumPy, CuPy,
another array-API library); on the NumPy arrays of an exported module their answer is known,
and `_ON_NUMPY` writes it. Anything else (a module other than NumPy or the standard library,
an object that is not a literal, a function whose source cannot be read) makes the op one that
cannot be exported, and `ExportError` names the op, the function and what it needs.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import symtable
import sys
import textwrap
import types

import numpy as np

from autotrace.runtime import devices


class ExportError(ValueError):
    """A traced function that cannot be written as a module of NumPy code; says why.

    Examples:
        >>> def with_slice(x):
        ...     return x, slice(1, 2)
        >>> try:
        ...     autotrace.export(autotrace.function(with_slice), autotrace.Spec((2,)), "f.py")
        ... except ExportError as error:
        ...     print(error)
        autotrace.export: with_slice returns slice(1, 2, None) (a slice), which an exported
        module cannot write; return arrays, numbers, strings and None
    """


# What the device helpers return for NumPy arrays on the CPU, the only arrays an exported module
# has (the originals also recognize CuPy and array-API arrays, and import CuPy for them).
_ON_NUMPY = {
    devices.array_module: "def array_module(value):\n    return np\n",
    devices.device_of: 'def device_of(value):\n    return "cpu"\n',
    devices.to_device: "def to_device(value, device):\n    return value\n",
}


class _Unexportable(Exception):
    """Why one object a gathered function uses cannot be written into the module."""


class OpSources:
    """The source of autotrace's own ops that a module calls, and all they use, gathered in an
    order in which each definition comes after those it needs at import time."""

    def __init__(self, provided: dict, reserved: set):
        # The module's own names: those it imports (`np`, `math`) gathered code may use as they
        # are; the others (its entry point, `variables`, ...) no gathered name may take.
        self.reserved = set(reserved) - set(provided)
        self.imports: set[str] = set()
        self.blocks: list[str] = []
        self.defined: dict[str, object] = dict(provided)  # name -> the object it is bound to

    def add_op(self, op_name: str, function, entry_name: str) -> None:
        """Bind `op_name` in the module to the source of `function`, which computes the op."""
        where = f"{function.__module__}.{function.__qualname__}"
        try:
            self._add(function.__name__, function, where)
            if op_name != function.__name__:
                self._bind(op_name, function)
                self.blocks.append(f"{op_name} = {function.__name__}\n")
        except _Unexportable as reason:
            raise ExportError(
                f"autotrace.export: {entry_name}'s graph uses the op {op_name} (computed by "
                f"{where}), which cannot be written as NumPy code: {reason}; an exported "
                f"module runs with NumPy and the standard library alone, so graphs with "
                f"{op_name} cannot be exported") from None

    def source(self) -> str:
        """The definitions, to come before the graph's functions (and after `imports`, the
        lines that import what they use from NumPy and the standard library)."""
        return "\n\n".join(block.strip("\n") + "\n" for block in self.blocks)

    # --- gathering -------------------------------------------------------------------------

    def _add(self, name: str, value, user: str) -> None:
        """Define `name` (as `value`, which `user` refers to) in the module, once."""
        if name in self.defined:
            if self.defined[name] is value or (is_literal(value) and
                                               repr(value) == repr(self.defined[name])):
                return
            raise _Unexportable(f"{user} uses {name}, and another function gathered with it "
                                f"uses another {name}")
        if isinstance(value, types.ModuleType):
            self._bind(name, value)
            self.imports.add(_module_import(name, value, user))
        elif any(value is helper for helper in _ON_NUMPY):
            self._bind(name, value)
            self.blocks.append(_ON_NUMPY[value].replace(value.__name__, name, 1))
        elif getattr(np, getattr(value, "__name__", ""), None) is value:  # np.sum, np.add
            self._bind(name, value)
            alias = "" if value.__name__ == name else f" as {name}"
            self.imports.add(f"from numpy import {value.__name__}{alias}")
        elif inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value):
            if _library_of(value) in ("numpy", "standard"):
                self._bind(name, value)
                self.imports.add(_object_import(name, value, user))
            elif inspect.isbuiltin(value):
                raise _Unexportable(f"{user} uses {name}, compiled code of the library "
                                    f"{_library_of(value)}")
            else:
                self._add_source(name, value, user)
        elif is_literal(value):
            self._bind(name, value)
            self.blocks.append(_assignment(name, value))
        else:
            raise _Unexportable(f"{user} uses {name}, a {type(value).__name__} that is neither "
                                f"a literal nor NumPy's")

    def _add_source(self, name: str, value, user: str) -> None:
        """Write the source of a function or class of Python code, after what it uses."""
        where = f"{value.__module__}.{value.__qualname__}"
        uses = "" if user == where else f"{user} uses {where}, and "
        if inspect.isfunction(value) and value.__closure__:
            raise _Unexportable(f"{uses}{where} is a closure: it reads variables of the "
                                f"function that made it, which its source does not hold")
        if value.__qualname__ != value.__name__:
            raise _Unexportable(f"{uses}{where} is not defined at the top of its module")
        if value.__name__ != name:  # imported under another name: defined under its own
            self._add(value.__name__, value, user)
            self._bind(name, value)
            self.blocks.append(f"{name} = {value.__name__}\n")
            return
        try:
            source = textwrap.dedent(inspect.getsource(value))
        except (OSError, TypeError):
            raise _Unexportable(f"{uses}the source of {where} cannot be read") from None
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) \
                    else [node.module or "."]
                for module in modules:
                    if _library_of_module(module) not in ("numpy", "standard"):
                        raise _Unexportable(f"{where} imports {module}")
            if isinstance(node, ast.Global):
                raise _Unexportable(f"{where} assigns global variables (state of autotrace's "
                                    f"that an exported module does not have)")
        self._bind(name, value)  # before what it uses: it may call itself
        namespace = value.__globals__ if inspect.isfunction(value) else \
            vars(sys.modules[value.__module__])
        for global_name in _global_names(tree, defined={name}):
            if global_name in namespace:
                self._add(global_name, namespace[global_name], where)
            elif not hasattr(builtins, global_name):
                raise _Unexportable(f"{where} uses {global_name}, which its module does not "
                                    f"define")
        self.blocks.append(f"# {where}\n{source}")

    def _bind(self, name: str, value) -> None:
        if name in self.reserved:
            raise _Unexportable(f"its code uses the name {name}, which the exported module "
                                f"gives to its own {name}")
        self.defined[name] = value


def _global_names(tree: ast.Module, defined: set) -> list:
    """The global names the code of `tree` reads, in order of first appearance; annotations
    are left out (the module does not evaluate them: `from __future__ import annotations`)."""
    stripped = _WithoutAnnotations().visit(ast.parse(ast.unparse(tree)))
    tables, found = [symtable.symtable(ast.unparse(stripped), "<export>", "exec")], set()
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        found.update(symbol.get_name() for symbol in table.get_symbols()
                     if symbol.is_global() and symbol.is_referenced())
    order = [node.id for node in ast.walk(stripped) if isinstance(node, ast.Name)]
    return sorted(found - defined, key=order.index)


class _WithoutAnnotations(ast.NodeTransformer):
    """Annotations removed; a class field's annotation `x: int` becomes `x = None`, so the
    name stays the class's own."""

    def visit_arg(self, node):
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.returns = None
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node):
        value = node.value if node.value is not None else ast.Constant(None)
        return ast.copy_location(ast.Assign([node.target], self.visit(value)), node)


def _library_of_module(module: str) -> str:
    top = module.split(".")[0]
    if top == "numpy":
        return "numpy"
    return "standard" if top in sys.stdlib_module_names else top


def _library_of(value) -> str:
    return _library_of_module(getattr(value, "__module__", None) or "?")


def _module_import(name: str, module, user: str) -> str:
    library = _library_of_module(module.__name__)
    if library not in ("numpy", "standard"):
        raise _Unexportable(f"{user} uses the module {module.__name__}")
    if module.__name__ == name:
        return f"import {name}"
    return f"import {module.__name__} as {name}"


def _object_import(name: str, value, user: str) -> str:
    module = value.__module__
    if getattr(sys.modules.get(module), value.__name__, None) is not value:
        raise _Unexportable(f"{user} uses {name} ({module}.{value.__qualname__}), which its "
                            f"module does not offer by that name")
    alias = "" if value.__name__ == name else f" as {name}"
    return f"from {module} import {value.__name__}{alias}"


def is_literal(value) -> bool:
    """Whether `value` is a Python literal that reads back as itself."""
    try:
        text = repr(value)
        return type(ast.literal_eval(text)) is type(value) and ast.literal_eval(text) == value
    except (ValueError, SyntaxError, TypeError):
        return False


def _assignment(name: str, value) -> str:
    """`name = value`, a long tuple or list one line of items after another, as a person
    would write a table of coefficients."""
    text = f"{name} = {value!r}\n"
    if len(text) <= 100 or not isinstance(value, (tuple, list)) or not value:
        return text
    lines, line = [], "   "
    for item in value:
        if len(line) + len(repr(item)) + 2 > 100:
            lines.append(line)
            line = "   "
        line += f" {item!r},"
    opening, closing = ("(", ")") if isinstance(value, tuple) else ("[", "]")
    return "\n".join([f"{name} = {opening}", *lines, line, closing]) + "\n"
