"""`autotrace.export`: a traced function written as a Python module that needs NumPy alone.

    step = autotrace.function(autotrace.grad(loss, wrt=0))
    autotrace.export(step, autotrace.Spec((3,)), X, y, "loss_grad.py")
    # elsewhere, without autotrace:  from loss_grad import loss_grad; loss_grad(w, X, y)

The module is the optimized graph of the NumPy backend (never the compiled kernels of another
backend), written as the executor writes it, with an entry point named after the function that
takes the arguments that hold arrays, checks their shapes and dtypes, and returns what the
traced function returns (tuples, lists and dicts rebuilt). The graph's constants are saved
beside it in an .npz of the same name, loaded when the module is imported (no pickles).

Arguments that are Python values (a learning rate, a flag) are fixed at their exported values,
as a trace fixes them; the module's docstring lists them. Variables the function reads (a
model's weights, an optimizer's slots) are the module's state: their values at export time are
saved in the .npz, the module-level dict `variables` holds them by name, and each call reads
them and stores the values the function assigns, as the traced function updates its Variables.
So an exported training step trains the module's copy of the model.
"""
from __future__ import annotations

import ast
import builtins
import keyword
import os
import re
from pathlib import Path

import numpy as np

from autotrace.function import BoundFunction, Function
from autotrace.runtime.abstract import AbstractArray
from autotrace.runtime.backends import backend_named
from autotrace.runtime.executor import graph_source
from autotrace.runtime.ops import source_globals
from autotrace.runtime.passes import optimize
from autotrace.runtime.spec import Spec, placeholder
from autotrace.runtime.trees import _Slot, is_dataclass_instance, leaves_with_paths, map_arrays

# Names an exported module defines or imports itself; any other global of the graph's code is
# a constant (saved in the .npz) or something export cannot write.
_MODULE_NAMES = {"np", "math", "variables", "_constants", "_check", "_FOLDER"}

_CHECK_SOURCE = '''
def _check(name, value, shape, dtype):
    """`value` as an array of `shape` (None: any size) and `dtype`, or a TypeError."""
    array = np.asarray(value)
    if array.dtype != dtype or array.ndim != len(shape) or any(
            want is not None and want != have for want, have in zip(shape, array.shape)):
        raise TypeError(f"{name}: expected an array of shape {shape} and dtype {dtype}, "
                        f"got one of shape {array.shape} and dtype {array.dtype}")
    return array
'''


class ExportError(ValueError):
    """A traced function that cannot be written as a module of NumPy code; says why."""


def export(function, *arguments_and_path, name: str | None = None) -> Path:
    """Write `function`, traced for the given argument types, as a module needing NumPy alone.

    Arguments:
        function: an `autotrace.function` (or a Python function, traced as one would be).
        arguments_and_path: the arguments to trace with, then the path of the module to write
            (a str or Path ending in .py). An argument is an `autotrace.Spec` (or a tuple,
            list or dict of them), an example array (its shape and dtype are taken), or a
            Python value, which is fixed in the exported code as in a trace.
        name: the entry point's name; by default the function's. A method's instance is
            fixed, as a Python value is (its Variables are the module's state).
    Returns:
        the path written; the constants and Variables' values are in the same path with .npz.
    Raises:
        ExportError naming what cannot be written: an op that is autotrace's own function
        (conv2d, erf, random draws), or a result that is not tuples, lists and dicts of arrays
        and Python literals.

    Example:
        >>> autotrace.export(autotrace.grad(f), autotrace.Spec((3,)), "f_grad.py",
        ...                  name="f_grad")
        >>> # python -c "import f_grad; print(f_grad.f_grad(np.ones(3)))"
    """
    if not arguments_and_path or not isinstance(arguments_and_path[-1], (str, os.PathLike)):
        raise TypeError("autotrace.export(function, *arguments, path): the last argument must "
                        "be the path of the module to write, like 'model_grad.py'")
    *arguments, path = arguments_and_path
    path = Path(path)
    if path.suffix != ".py":
        raise ValueError(f"autotrace.export: the path must end in .py (a Python module), "
                         f"not {str(path)!r}")
    traced, instance = _traced_function(function)
    entry_name = _identifier(name or traced.__name__)
    traced_args = (*instance, *(_placeholders(argument) for argument in arguments))
    unoptimized, structure = traced.traced_graph(traced_args, {})
    backend = backend_named("numpy")
    graph = optimize(unoptimized, backend=backend)

    namespace = backend.namespace()
    graph_name = f"_{entry_name}_graph"
    body = graph_source(graph, graph_name, namespace, backend.lowers_scalars)
    constants = _constants(body, namespace, entry_name)

    parameters, inputs, fixed = _parameters(traced, traced_args[len(instance):])
    # Variables compare elementwise, as arrays do: they are told apart by identity.
    cells = list({id(cell): cell for cell in [*structure.captured, *structure.written]}.values())
    cell_names = _unique_names(cells)
    saved = {name: np.asarray(value) for name, value in constants.items()}
    saved.update({f"variable{index}": np.asarray(cell._value)
                  for index, cell in enumerate(cells)})
    for key, value in saved.items():
        if value.dtype.hasobject:
            raise ExportError(f"autotrace.export: {key} holds Python objects "
                              f"({value.dtype}), which an .npz cannot store without pickles")

    result_count = len(graph.outputs) - len(structure.written)
    result = _result_source(structure, entry_name)
    call_arguments = [*inputs, *(f"variables[{cell_names[id(cell)]!r}]"
                                 for cell in structure.captured)]
    call = ", ".join(call_arguments)
    lines = [f"def {entry_name}({', '.join(parameters)}):",
             f'    """{traced.__name__}, traced and exported by autotrace; see the module '
             f'docstring."""']
    lines += [f"    {parameter} = {check}" for parameter, check in
              _checks(traced_args[len(instance):], parameters)]
    if len(call) > 60:  # one argument a line, as a person would write a long call
        call = "\n        " + ",\n        ".join(call_arguments) + ",\n    "
    lines.append(f"    outputs = {graph_name}({call})")
    for index, cell in enumerate(structure.written):
        lines.append(f"    variables[{cell_names[id(cell)]!r}] = outputs[{result_count + index}]")
    lines.append(f"    return {result}")

    npz_path = path.with_suffix(".npz")
    np.savez(npz_path, **saved)
    module = "\n".join([
        _docstring(traced.__name__, entry_name, parameters, traced_args[len(instance):],
                   fixed, cells, cell_names, structure, npz_path.name),
        "import math", "import os", "", "import numpy as np", "",
        "_FOLDER = os.path.dirname(os.path.abspath(__file__))",
        f"with np.load(os.path.join(_FOLDER, {npz_path.name!r}), allow_pickle=False) as _saved:",
        "    _constants = {key: _saved[key] for key in _saved.files}",
        *(f"{key} = _constants[{key!r}]{'' if isinstance(value, np.ndarray) else '[()]'}"
          for key, value in constants.items()),
        "# The Variables the function reads and assigns, by name: its state between calls.",
        "variables = {" + ", ".join(f"{cell_names[id(cell)]!r}: _constants['variable{index}']"
                                    for index, cell in enumerate(cells)) + "}",
        _CHECK_SOURCE, "", body, "",
        "\n".join(lines), ""])
    path.write_text(module)
    return path


def _traced_function(function):
    """The autotrace.function to trace, and the instance a bound method passes first."""
    if isinstance(function, BoundFunction):
        return function.__func__, (function.__self__,)
    if isinstance(function, Function):
        return function, ()
    if callable(function):
        return Function(function), ()
    raise TypeError(f"autotrace.export expects a function, got {type(function).__name__}")


def _placeholders(argument):
    """An argument to trace with: Specs become placeholders, arrays stay (their types are
    taken), Python values stay (fixed in the trace)."""
    if isinstance(argument, Spec):
        return placeholder(AbstractArray(argument.shape, argument.dtype, "cpu"))
    if isinstance(argument, dict):
        return type(argument)((key, _placeholders(value)) for key, value in argument.items())
    if isinstance(argument, (tuple, list)):
        items = [_placeholders(item) for item in argument]
        return type(argument)(*items) if hasattr(type(argument), "_fields") else \
            type(argument)(items)
    return argument


def _parameters(traced: Function, arguments: tuple):
    """The entry point's parameters (arguments holding arrays), the graph's inputs as
    expressions of them (`params['w']`), and the fixed Python arguments as (name, value)."""
    names = [name.lstrip("*") for name in traced._positional]
    parameters, inputs, fixed = [], [], []
    for index, argument in enumerate(arguments):
        name = names[index] if index < len(names) and not traced._positional[index].startswith(
            "*") else f"argument{index}"
        leaves = leaves_with_paths(argument)
        if not leaves:
            fixed.append((name, argument))
            continue
        if name in _MODULE_NAMES | {"os", "outputs"} or re.fullmatch(r"const[0-9]+", name):
            name += "_"  # the module's own names keep their meaning in the entry point
        parameters.append(name)
        inputs.extend(f"{name}{leaf_path}" for leaf_path, _ in leaves)
    return parameters, inputs, fixed


def _checks(arguments: tuple, parameters: list):
    """`x = _check('x', x, (3,), np.float64)` for the arguments that are arrays themselves."""
    arrays = [argument for argument in arguments if leaves_with_paths(argument)]
    for parameter, argument in zip(parameters, arrays):
        leaves = leaves_with_paths(argument)
        if len(leaves) == 1 and leaves[0][0] == "":
            aval = _aval(leaves[0][1])
            yield parameter, (f"_check({parameter!r}, {parameter}, {aval.shape!r}, "
                              f"np.dtype({aval.dtype.str!r}))")


def _aval(leaf) -> AbstractArray:
    aval = getattr(leaf, "aval", None)
    if aval is not None:
        return aval
    array = np.asarray(leaf)
    return AbstractArray(array.shape, array.dtype, "cpu")


def _constants(body: str, namespace: dict, entry_name: str) -> dict:
    """The graph's constants by name; an ExportError for any other global its code needs."""
    defined = {node.name for node in ast.walk(ast.parse(body))
               if isinstance(node, ast.FunctionDef)}
    used = {node.id for node in ast.walk(ast.parse(body))
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    assigned = {node.id for node in ast.walk(ast.parse(body))
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)} | {
        argument.arg for node in ast.walk(ast.parse(body)) if isinstance(node, ast.arguments)
        for argument in node.args}
    constants = {}
    for global_name in sorted(used - defined - assigned - _MODULE_NAMES - set(dir(builtins))):
        if re.fullmatch(r"const[0-9]+", global_name):
            constants[global_name] = namespace[global_name]
        elif global_name in source_globals:
            raise ExportError(
                f"autotrace.export: {entry_name}'s graph uses the op {global_name}, which "
                f"runs autotrace's own function ({source_globals[global_name].__module__}."
                f"{global_name}), not NumPy's; an exported module needs NumPy alone, so "
                f"graphs with {global_name} cannot be exported")
        else:
            raise ExportError(f"autotrace.export: {entry_name}'s graph uses {global_name}, "
                              f"which is not NumPy's, so it cannot be exported")
    return constants


def _result_source(structure, entry_name: str) -> str:
    """The expression that rebuilds the function's result from the graph's `outputs`."""
    if structure.single:
        return "outputs[0]"

    def write(template) -> str:
        if isinstance(template, _Slot):
            return f"outputs[{template.index}]"
        if type(template) is dict:
            return "{" + ", ".join(f"{_literal(key, entry_name)}: {write(value)}"
                                   for key, value in template.items()) + "}"
        if type(template) in (tuple, list):
            items = [write(item) for item in template]
            text = ", ".join(items) + ("," if len(items) == 1 and type(template) is tuple
                                       else "")
            return f"({text})" if type(template) is tuple else f"[{text}]"
        if isinstance(template, (tuple, list, dict)) or is_dataclass_instance(template):
            raise ExportError(
                f"autotrace.export: {entry_name} returns a {type(template).__name__}; an "
                f"exported module rebuilds tuples, lists and dicts only: return one of those")
        return _literal(template, entry_name)
    return write(structure.template)


def _literal(value, entry_name: str) -> str:
    """`value` as Python source, if it is a literal that reads back as itself."""
    text = repr(value)
    try:
        if type(ast.literal_eval(text)) is type(value) and ast.literal_eval(text) == value:
            return text
    except (ValueError, SyntaxError):
        pass  # not a literal: refused below
    raise ExportError(f"autotrace.export: {entry_name} returns {text} (a "
                      f"{type(value).__name__}), which an exported module cannot write; "
                      f"return arrays, numbers, strings and None")


def _unique_names(cells: list) -> dict:
    """id(Variable) -> its name (its state label if it has none), made unique with _2, _3."""
    names, taken = {}, set()
    for cell in cells:
        base = getattr(cell, "name", None) or cell.state_label()
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}_{number}"
        names[id(cell)] = name
        taken.add(name)
    return names


def _identifier(text: str) -> str:
    """`text` as a Python name: `<lambda>` -> `lambda_`."""
    name = re.sub(r"\W", "_", text).strip("_") or "exported"
    name = name if not name[0].isdigit() else f"_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


def _docstring(function_name, entry_name, parameters, arguments, fixed, cells, cell_names,
               structure, npz_name) -> str:
    """What the module computes, for whom reads it: the entry point, input types, fixed
    arguments and Variables."""
    types = []
    for parameter, argument in zip(parameters, [a for a in arguments if leaves_with_paths(a)]):
        for leaf_path, leaf in leaves_with_paths(argument):
            types.append(f"    {parameter}{leaf_path}: {_aval(leaf)}")
    lines = [f'"""{function_name}, traced by autotrace and exported as NumPy code.', "",
             f"    {entry_name}({', '.join(parameters)})", "",
             "Inputs (? is any size):", *types]
    if fixed:
        lines += ["", "Fixed at export (Python values the trace took as they were):",
                  *(f"    {name} = {value!r}" for name, value in fixed)]
    if cells:
        written = {id(cell) for cell in structure.written}
        lines += ["", "Variables: their values at export are in the .npz; `variables[name]` "
                  "holds each, and a call", "reads them and stores what it assigns "
                  "(marked *):",
                  *(f"    {cell_names[id(cell)]!r}{' *' if id(cell) in written else ''}"
                    for cell in cells)]
    lines += ["", f"Needs NumPy alone. Constants are in {npz_name}, beside this file.",
              '"""']
    return "\n".join(lines)
