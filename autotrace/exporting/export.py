"""`autotrace.export`: a traced function written as a Python module that needs NumPy alone.

    step = autotrace.function(autotrace.grad(loss, wrt=0))
    autotrace.export(step, autotrace.Spec((3,)), X, y, "loss_grad.py")
    # elsewhere, without autotrace:  from loss_grad import loss_grad; loss_grad(w, X, y)

The module is the optimized graph of the NumPy backend (never the compiled kernels of another
backend), written as the executor writes it, with an entry point named after the function
(entry.py): it takes the arguments that hold arrays, by the names and kinds of the
function's parameters (so a call by keyword works as it does on the traced function), checks
their shapes and dtypes, and returns what the traced function returns: tuples, lists and dicts
rebuilt, namedtuples and dataclasses rebuilt as classes of the same names and fields that the
module defines. The graph's constants are saved beside it in an .npz of the same name, loaded
when the module is imported (no pickles).

autotrace's own ops (conv2d, pooling, erf, random draws: runtime/primitives/registry.py
source_globals, which the NumPy backend's graphs call by name), and the helpers its passes'
products call (`row_product`, `transposed_product`: runtime/backends/), are written into the
module as the source of the functions that compute them, with what those use (op_sources.py);
an op whose code needs more than NumPy and the standard library (allreduce) is refused with an
ExportError that says why.

Arguments that are Python values (a learning rate, a flag) are fixed at their exported values,
as a trace fixes them; the module's docstring lists them. Variables the function reads (a
model's weights, an optimizer's slots, a random Generator's key) are the module's state: their
values at export time are saved in the .npz, the module-level dict `variables` holds them by
name, and each call reads them and stores the values the function assigns, as the traced
function updates its Variables. So an exported training step trains the module's copy of the
model, and draws the numbers the traced function would draw from the same state.
"""
from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import keyword
import math
import os
import re
from pathlib import Path

import numpy as np

from .entry import EntryPoint, ResultClasses, aval_of, result_source
from .op_sources import ExportError, OpSources
from autotrace.traced_function import traced_and_instance
from autotrace.variables import unique_names
from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.passes import optimize
from autotrace.runtime.execution.executor import graph_source
from autotrace.runtime.ops import primitives, source_globals
from autotrace.runtime.tracing.spec import placeholders_of
from autotrace.runtime.tracing.trees import leaves_with_paths

# Names an exported module defines or imports itself; any other global of the graph's code is
# a constant (saved in the .npz), one of autotrace's own ops (written out, op_sources.py), or
# something export cannot write.
_MODULE_NAMES = {"np", "math", "os", "variables", "_constants", "_check", "_fixed", "_FOLDER",
                 "_saved", "annotations"}

_CHECK_SOURCE = '''
def _check(name, value, shape, dtype):
    """`value` as an array of `shape` (None: any size) and `dtype`, or a TypeError."""
    array = np.asarray(value)
    if array.dtype != np.dtype(dtype) or array.ndim != len(shape) or any(
            want is not None and want != have for want, have in zip(shape, array.shape)):
        raise TypeError(f"{name}: expected an array of shape {shape} and dtype "
                        f"{np.dtype(dtype)}, got one of shape {array.shape} and dtype "
                        f"{array.dtype}")
    return array


def _fixed(name, value, exported):
    """A ValueError unless `value` is what the argument `name` was when the module was made."""
    if type(value) is not type(exported) or value != exported:
        raise ValueError(f"{name}: this module was exported with {name}={exported!r}, which "
                         f"its code has built in; export it again for {name}={value!r}")
'''


def export(function, *arguments_and_path, name: str | None = None,
           **keyword_arguments) -> Path:
    """Write `function`, traced for the given argument types, as a module needing NumPy alone.

    Arguments:
        function: an `autotrace.function` (or a Python function, traced as one would be).
        arguments_and_path: the arguments to trace with, then the path of the module to write
            (a str or Path ending in .py). An argument is an `autotrace.Spec` (or a tuple,
            list or dict of them), an example array (its shape and dtype are taken), or a
            Python value, which is fixed in the exported code as in a trace.
        name: the entry point's name; by default the function's. A method's instance is
            fixed, as a Python value is (its Variables are the module's state).
        keyword_arguments: arguments given by keyword, as in a call (a parameter called
            `name` is given by position); the entry point takes them by the same keywords.

    Returns:
        the path written; the constants and Variables' values are in the same path with .npz.

    Raises:
        ExportError: it names what cannot be written: an op whose code needs more than
            NumPy and the standard library (allreduce), or a result that is not tuples,
            lists, dicts, namedtuples and dataclasses of arrays and Python literals.

    Examples:
        >>> def f(x):
        ...     return np.sum(x ** 3)
        >>> autotrace.export(autotrace.grad(f), autotrace.Spec((3,)), "f_grad.py", name="f_grad")
        PosixPath('f_grad.py')
        >>> import runpy                       # NumPy code: autotrace is not needed to run it
        >>> runpy.run_path("f_grad.py")["f_grad"](np.array([1.0, 2.0, 3.0]))
        array([ 3., 12., 27.])
    """
    if not arguments_and_path or not isinstance(arguments_and_path[-1], (str, os.PathLike)):
        raise TypeError("autotrace.export(function, *arguments, path): the last argument must "
                        "be the path of the module to write, like 'model_grad.py'")
    *arguments, path = arguments_and_path
    path = Path(path)
    if path.suffix != ".py":
        raise ValueError(f"autotrace.export: the path must end in .py (a Python module), "
                         f"not {str(path)!r}")
    traced, instance = traced_and_instance(function, "autotrace.export")
    entry_name = _identifier(name or traced.__name__)
    # Bound to the parameters as a call is (defaults filled in), so the graph's inputs come in
    # the order a call of the traced function gives them.
    traced_args, traced_kwargs = traced._binding.bind(
        (*instance, *(placeholders_of(argument) for argument in arguments)),
        {key: placeholders_of(value) for key, value in keyword_arguments.items()})
    # (each argument an input of its own: the module is called with other arrays than these)
    unoptimized, structure = traced.traced_graph(traced_args, traced_kwargs, identities=False)
    backend = backend_named("numpy")
    graph = optimize(unoptimized, backend=backend)  # written out below, never run here

    namespace = backend.namespace()
    graph_name = f"_{entry_name}_graph"
    body = graph_source(graph, graph_name, namespace, backend.lowers_scalars)
    constants, ops = _globals_of(body, namespace, entry_name)
    defined = {node.name for node in ast.walk(ast.parse(body))
               if isinstance(node, ast.FunctionDef)}
    module_names = {*_MODULE_NAMES, *defined, *constants, entry_name}
    classes = ResultClasses(reserved=module_names | set(source_globals))
    result = result_source(structure, entry_name, classes)
    entry = EntryPoint(traced, traced_args[len(instance):], traced_kwargs, len(instance),
                       reserved={graph_name, *classes.names()})

    # Variables compare elementwise, as arrays do: they are told apart by identity.
    cells = list({id(cell): cell for cell in [*structure.captured, *structure.written]}.values())
    cell_names = unique_names(cells)
    saved = {name: np.asarray(value) for name, value in constants.items()}
    saved.update({f"variable{index}": np.asarray(cell._value)
                  for index, cell in enumerate(cells)})
    for key, value in saved.items():
        if value.dtype.hasobject:
            raise ExportError(f"autotrace.export: {key} holds Python objects "
                              f"({value.dtype}), which an .npz cannot store without pickles")
    imported = {"np": np, "math": math, "os": os,
                **{module: importlib.import_module(module) for module in classes.modules()}}
    op_sources = OpSources(provided=imported, reserved=module_names | set(classes.names()))
    for op, function in ops.items():
        op_sources.add_op(op, function, entry_name)

    result_count = len(graph.outputs) - len(structure.written)
    call_arguments = [*entry.inputs, *(f"variables[{cell_names[id(cell)]!r}]"
                                       for cell in structure.captured)]
    call = ", ".join(call_arguments)
    lines = [f"def {entry_name}({entry.signature()}):",
             f'    """{traced.__name__}, traced and exported by autotrace; see the module '
             f'docstring."""', *entry.checks()]
    if len(call) > 60:  # one argument a line, as a person would write a long call
        call = "\n        " + ",\n        ".join(call_arguments) + ",\n    "
    lines.append(f"    _outputs = {graph_name}({call})")
    for index, cell in enumerate(structure.written):
        lines.append(f"    variables[{cell_names[id(cell)]!r}] = _outputs[{result_count + index}]")
    lines.append(f"    return {result}")

    npz_path = path.with_suffix(".npz")
    np.savez(npz_path, **saved)
    imports = sorted({*classes.imports(), *op_sources.imports, "import math", "import os"},
                     key=lambda line: line.split()[1])
    sections = [
        _docstring(traced.__name__, entry_name, entry, cells, cell_names, structure, classes,
                   ops, npz_path.name),
        _loading(npz_path.name, constants, cells, cell_names),
        _CHECK_SOURCE, "\n".join(classes.definitions()), op_sources.source(), body,
        "\n".join(lines)]
    sections[0] += "\n".join(["", "from __future__ import annotations", "", *imports, "",
                              "import numpy as np"])
    # Sections two blank lines apart, as PEP 8 separates top-level definitions.
    module = "\n\n\n".join(section.strip("\n") for section in sections if section.strip())
    path.write_text(module + "\n")
    return path


def _loading(npz_name: str, constants: dict, cells: list, cell_names: dict) -> str:
    """The module's lines that load the constants and the Variables' values from the .npz."""
    return "\n".join([
        "_FOLDER = os.path.dirname(os.path.abspath(__file__))",
        f"with np.load(os.path.join(_FOLDER, {npz_name!r}), allow_pickle=False) as _saved:",
        "    _constants = {key: _saved[key] for key in _saved.files}",
        *(f"{key} = _constants[{key!r}]{'' if isinstance(value, np.ndarray) else '[()]'}"
          for key, value in constants.items()),
        "# The Variables the function reads and assigns, by name: its state between calls.",
        "variables = {" + ", ".join(f"{cell_names[id(cell)]!r}: _constants['variable{index}']"
                                    for index, cell in enumerate(cells)) + "}"])


def _globals_of(body: str, namespace: dict, entry_name: str) -> tuple[dict, dict]:
    """The graph's constants by name, and the functions of autotrace's own ops it calls by
    name (source_globals, and those a backend pass's primitive puts in the namespace, such
    as `row_product`); an ExportError for any other global its code needs."""
    tree = ast.parse(body)
    defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    used = {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    assigned = {node.id for node in ast.walk(tree)
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)} | {
        argument.arg for node in ast.walk(tree) if isinstance(node, ast.arguments)
        for argument in node.args}
    constants, ops = {}, {}
    for global_name in sorted(used - defined - assigned - _MODULE_NAMES - set(dir(builtins))):
        if re.fullmatch(r"const[0-9]+", global_name):
            constants[global_name] = namespace[global_name]
        elif global_name in source_globals:
            # what computes the op (a graph may call it through a function that records it
            # where its arguments are traced: registry.define_runtime_function)
            primitive = primitives.get(global_name)
            ops[global_name] = (source_globals[global_name] if primitive is None
                                else primitive.impl)
        elif inspect.isfunction(namespace.get(global_name)):
            ops[global_name] = namespace[global_name]
        else:
            raise ExportError(f"autotrace.export: {entry_name}'s graph uses {global_name}, "
                              f"which is not NumPy's, so it cannot be exported")
    return constants, ops


def _identifier(text: str) -> str:
    """`text` as a Python name: `<lambda>` -> `lambda_`."""
    name = re.sub(r"\W", "_", text).strip("_") or "exported"
    name = name if not name[0].isdigit() else f"_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


def _docstring(function_name, entry_name, entry, cells, cell_names, structure, classes, ops,
               npz_name) -> str:
    """What the module computes, for whom reads it: the entry point, input types, fixed
    arguments, result classes, autotrace's ops written out, and Variables."""
    types = [f"    {parameter}{leaf_path}: {aval_of(leaf)}"
             for parameter, argument in entry.arguments()
             for leaf_path, leaf in leaves_with_paths(argument)]
    lines = [f'"""{function_name}, traced by autotrace and exported as NumPy code.', "",
             f"    {entry_name}({entry.signature()})", "",
             "Inputs (? is any size):", *types]
    if entry.renamed:
        lines += ["", "Parameters renamed not to hide the module's own names: " + ", ".join(
            f"{parameter} -> {name}" for parameter, name in entry.renamed)]
    if entry.fixed:
        lines += ["", "Fixed at export (Python values the trace took as they were; a literal "
                  "may be passed", "by keyword, and must then be this value):",
                  *(f"    {name} = {value!r}" for name, value, _ in entry.fixed)]
    if classes.names():
        lines += ["", "Results that were namedtuples or dataclasses are made by classes of the "
                  "same names", "and fields defined here (collections.namedtuple, "
                  "dataclasses.make_dataclass):", *(f"    {name}" for name in classes.names())]
    if ops:
        lines += ["", "autotrace's own ops, written out below as the NumPy code that computes "
                  "them:", f"    {', '.join(ops)}"]
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
