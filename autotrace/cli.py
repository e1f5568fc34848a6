"""The command line: a derivative's source, or a traced graph, for a function in a file.

    python -m autotrace grad model.py::loss                   # d loss / d (first parameter)
    python -m autotrace grad model.py::Model.loss             # a method: d / d (first after self)
    python -m autotrace grad model.py::loss --wrt w,b         # a tuple of gradients
    python -m autotrace grad model.py::loss --mode forward    # forward mode's source
    python -m autotrace grad model.py::loss --raw             # before the cleanup passes
    python -m autotrace graph model.py::loss --spec "f64[3,4]" --spec "f64[4]"
    python -m autotrace graph model.py::loss --spec "f64[3,4]" --spec "f64[4]" --dot loss.dot
    python -m autotrace graph model.py::loss --spec "f64[3,4]" --spec "f64[4]" --svg loss.svg
    python -m autotrace graph model.py::loss --spec "f64[3,4]" --spec "f64[4]" --tensorboard logs

The file is imported as a module of its own name, with its folder first on sys.path while it
loads (so it imports its neighbours as it does when run), and its `if __name__ == "__main__":`
block does not run. The function is a module-level name of it, or a method of a class it
defines (Class.method). Installed, the same command line is the `autotrace` console script.

A mistake in what was typed (a missing file, a name the file does not define, a --spec that is
not an array type, --spec types the function's operations refuse), and a file that does not
parse or import, are one line on standard error and exit status 2, like argparse's own. What
--dot FILE, --svg and --tensorboard write is named on standard error ("wrote FILE"), so that
standard output holds only the graph or source asked for.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from autotrace import __version__
from autotrace.api import grad, source
from autotrace.traced_function import function
from autotrace.operators import forward
from autotrace.runtime.execution.graph_dot import graph_dot
from autotrace.runtime.tracing.spec import Spec
from autotrace.summary import create_file_writer
from autotrace.trace_errors import raised_by_an_op, user_line
from autotrace.transforms.errors import TransformError
from autotrace.transforms.wrt import WithRespectTo

# How the user ran it: the console script `autotrace` installs, or `python -m autotrace`.
PROGRAM = "autotrace" if Path(sys.argv[0]).stem == "autotrace" else "python -m autotrace"


class UsageError(Exception):
    """A mistake in the command line, told to the user in one line with exit status 2."""


def main(argv: list[str] | None = None) -> int:
    """Run the command line `argv` (default: sys.argv[1:]); returns the exit status."""
    parser = _parser()
    arguments = parser.parse_args(argv)
    try:
        return arguments.command(arguments)
    except UsageError as error:
        print(f"{PROGRAM} {arguments.command_name}: error: {error}", file=sys.stderr)
        return 2
    except TransformError as error:  # the function's source cannot be differentiated
        print(f"{PROGRAM} {arguments.command_name}: {error}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROGRAM, description="Show what autotrace makes of a function in a Python file.")
    parser.add_argument("--version", action="version", version=f"autotrace {__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    grad_command = commands.add_parser(
        "grad", help="print the generated derivative's Python source",
        description="Print the Python source autotrace generates for the derivative of a "
                    "function: what autotrace.source(autotrace.grad(fn, wrt=...)) shows.")
    _add_target(grad_command)
    grad_command.add_argument(
        "--wrt", metavar="NAMES",
        help="the parameters to differentiate with respect to, by name or position, "
             "separated by commas (x,y gives a tuple of gradients); default: the first")
    grad_command.add_argument(
        "--mode", choices=("reverse", "forward"), default="reverse",
        help="reverse (autotrace.grad, the default) or forward (autotrace.forward: the "
             "function rewritten to carry tangents beside its values)")
    grad_command.add_argument(
        "--raw", action="store_true",
        help="the source as generated, before the cleanup passes remove dead code, unneeded "
             "saves and single-use temporaries (the optimized=False of grad and forward)")
    grad_command.set_defaults(command=_grad_command, command_name="grad")

    graph_command = commands.add_parser(
        "graph", help="print the traced, optimized graph for inputs of given types",
        description="Trace autotrace.function(fn) for array arguments of the given types and "
                    "print its optimized graph, one operation a line (or as Graphviz DOT).")
    _add_target(graph_command)
    graph_command.add_argument(
        "--spec", action="append", default=[], metavar="TYPE",
        help="the type of the next positional argument, as graphs print types: f64[3,4], "
             "i32[], bool[5], f64[?,3] (? for any size); give one --spec per argument")
    graph_command.add_argument(
        "--dot", nargs="?", const="-", metavar="FILE",
        help="write Graphviz DOT instead, to FILE or, without one, to standard output "
             "(render it with: dot -Tsvg FILE -o graph.svg)")
    graph_command.add_argument(
        "--svg", metavar="FILE",
        help="write the graph as an SVG picture to FILE, drawn by Graphviz's dot program "
             "(which must be installed); name scopes are drawn as boxes")
    graph_command.add_argument(
        "--tensorboard", metavar="LOGDIR",
        help="write the graph into a new event file in LOGDIR for TensorBoard's Graphs tab "
             "(autotrace.summary.graph; then: tensorboard --logdir LOGDIR)")
    graph_command.add_argument(
        "--raw", action="store_true",
        help="the graph as traced, before the passes (constant folding, algebraic "
             "simplification, common subexpressions, dead code, buffer reuse)")
    graph_command.set_defaults(command=_graph_command, command_name="graph")
    return parser


def _add_target(command: argparse.ArgumentParser) -> None:
    command.add_argument("target", metavar="FILE.py::FUNCTION",
                         help="a Python file and the name of a function it defines, or of a "
                              "method of a class it defines (FILE.py::Class.method)")


# --- the commands ---------------------------------------------------------------------------------

def _grad_command(arguments) -> int:
    python_function, takes_instance = load_function(arguments.target)
    # A method looked up on its class takes `self` first: the default is the parameter after.
    wrt = WithRespectTo.of(_parse_wrt(arguments.wrt, default=1 if takes_instance else 0))
    parameters = [parameter.name
                  for parameter in inspect.signature(python_function).parameters.values()
                  if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]
    try:
        wrt.resolve(parameters, python_function.__name__)
    except ValueError as error:  # a --wrt that names no parameter; the message says which
        raise UsageError(f"--wrt: {error}") from None
    make = forward if arguments.mode == "forward" else grad
    _write(source(make(python_function, wrt, optimized=not arguments.raw)), "-")
    return 0


def _graph_command(arguments) -> int:
    python_function, takes_instance = load_function(arguments.target)
    python_function = getattr(python_function, "__autotrace_python_function__", python_function)
    if takes_instance:
        name = arguments.target.rpartition("::")[2]
        raise UsageError(f"{name} takes an instance first (self), which --spec cannot give; "
                         f"graph traces functions, static methods and class methods: trace a "
                         f"function that makes the instance and calls the method")
    specs = [_parse_spec(text) for text in arguments.spec]
    if arguments.tensorboard is not None and arguments.raw:
        raise UsageError("--tensorboard writes the optimized graph; leave out --raw")
    _check_argument_count(python_function, len(specs))
    traced = function(python_function, input_signature=specs)
    # Arrays of the Specs' types stand for the arguments; a size left open (?) takes 1 here,
    # and the graph is traced for any size all the same.
    examples = [np.zeros(tuple(1 if size is None else size for size in spec.shape), spec.dtype)
                for spec in specs]
    try:
        graph = traced.graph(*examples, optimized=not arguments.raw)
    except (ValueError, IndexError) as error:
        if not raised_by_an_op(error):
            raise
        raise UsageError(_refused_specs(error, arguments)) from None
    if arguments.tensorboard is not None:
        with create_file_writer(arguments.tensorboard) as writer:
            writer.graph(traced)  # traced for its input_signature, the Specs given
        _wrote(writer.path)
    if arguments.svg is not None:
        _write_svg(graph_dot(graph, name=python_function.__name__), arguments.svg)
        _wrote(arguments.svg)
    if arguments.dot is not None:
        _write(graph_dot(graph, name=python_function.__name__), arguments.dot)
        if arguments.dot != "-":
            _wrote(arguments.dot)
    elif arguments.svg is None and arguments.tensorboard is None:
        _write(f"{graph}\n", "-")
    return 0


def _refused_specs(error: Exception, arguments) -> str:
    """One line for an op that refused the --spec types (shapes that do not match): the op's
    complaint, the user's line that called it, and the --spec given."""
    complaint = str(error).split("\n")[0]
    place = user_line(error)
    where = ""
    if place is not None:
        filename, line, text = place
        where = _place(filename, line) + (f" ({text})" if text else "") + ": "
    given = " ".join(f"--spec {text}" for text in arguments.spec)
    return f"{where}{complaint}; the types given were {given or 'none'}"


def _wrote(path: str) -> None:
    print(f"wrote {path}", file=sys.stderr)


def _write_svg(dot_text: str, destination: str) -> None:
    """Render DOT text to an SVG file with Graphviz's `dot -Tsvg`."""
    dot_program = shutil.which("dot")
    if dot_program is None:
        raise UsageError("--svg needs Graphviz's dot program, which is not on PATH; install "
                         "Graphviz (https://graphviz.org/download/) or write DOT with --dot")
    rendered = subprocess.run([dot_program, "-Tsvg", "-o", destination], input=dot_text,
                              capture_output=True, text=True)
    if rendered.returncode != 0:
        message = rendered.stderr.strip().replace("\n", "; ")
        raise UsageError(f"--svg: Graphviz's dot could not write {destination}: {message}")


def _write(text: str, destination: str) -> None:
    text = text if text.endswith("\n") else text + "\n"
    if destination == "-":
        sys.stdout.write(text)
    else:
        Path(destination).write_text(text)


# --- reading the command line -----------------------------------------------------------------

class Target(NamedTuple):
    """What FILE.py::NAME names: the function, and whether it is a method looked up on its
    class (Class.method) that takes an instance first."""
    function: Callable
    takes_instance: bool


def load_function(target: str) -> Target:
    """The function `FILE.py::NAME` names (or `FILE.py::Class.method`), importing the file as
    a module."""
    path_text, separator, name = target.rpartition("::")
    if not separator or not path_text or not name:
        raise UsageError(f"{target!r} names no function: expected FILE.py::FUNCTION, "
                         f"like model.py::loss")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path_text}")
    module = _import_file(path)
    first, *attributes = name.split(".")
    functions = [key for key, value in vars(module).items() if _defined_in(value, module)]
    if first not in vars(module):
        defined = (f"its functions are {', '.join(functions)}" if functions
                   else "it defines no functions")
        raise UsageError(f"{path_text} has no function {first!r}; {defined}")
    value, reached, takes_instance = getattr(module, first), first, False
    for attribute in attributes:
        if not inspect.isclass(value):
            raise UsageError(f"{reached!r} in {path_text} is a {type(value).__name__}, not a "
                             f"class: it has no methods")
        if not hasattr(value, attribute):
            raise UsageError(f"{reached!r} in {path_text} has no method {attribute!r}")
        # A plain function in the class is a method for instances; staticmethod and
        # classmethod objects are not, and getattr unwraps them.
        takes_instance = inspect.isfunction(inspect.getattr_static(value, attribute))
        value, reached = getattr(value, attribute), f"{reached}.{attribute}"
    if not callable(value) or inspect.isclass(value):
        kind = "class" if inspect.isclass(value) else type(value).__name__
        raise UsageError(f"{name!r} in {path_text} is a {kind}, not a function")
    return Target(value, takes_instance)


def _import_file(path: Path):
    """Import the file at `path` as a module named after it (unless that name is taken)."""
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules \
        else "_autotrace_command_line_file"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:  # in the file, or in a file it imports
        sys.modules.pop(name, None)
        where = _place(error.filename, error.lineno)
        raise UsageError(f"{where}: {type(error).__name__}: {error.msg}") from None
    except ImportError as error:
        sys.modules.pop(name, None)
        # the import statement that failed: the innermost frame not importlib's own
        frame = [frame for frame in traceback.extract_tb(error.__traceback__)
                 if not frame.filename.startswith("<")][-1]
        where = _place(frame.filename, frame.lineno)
        raise UsageError(f"{where}: {type(error).__name__}: {error}") from None
    finally:
        sys.path.remove(folder)
    return module


def _place(filename: str | None, line: int | None) -> str:
    """`model.py, line 3`: a file relative to the working directory where it lies below it."""
    if filename is None:
        return "?"
    relative = os.path.relpath(filename)
    shown = filename if relative.startswith("..") else relative
    return shown if line is None else f"{shown}, line {line}"


def _defined_in(value, module) -> bool:
    """Whether `value` is a function the module defines (imported ones are not listed)."""
    python_function = getattr(value, "__autotrace_python_function__", value)
    return inspect.isfunction(python_function) and \
        python_function.__module__ == module.__name__


def _parse_wrt(text: str | None, default: int):
    """`x` -> "x", `0` -> 0, `x,y` -> ("x", "y"): as grad's wrt takes them."""
    if text is None:
        return default
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise UsageError(f"--wrt {text!r}: expected parameter names or positions separated "
                         f"by commas, like x,y or 0,1")
    wrt = tuple(int(item) if item.isdigit() else item for item in items)
    return wrt if len(wrt) > 1 else wrt[0]


def _parse_spec(text: str) -> Spec:
    try:
        return Spec.parse(text)
    except ValueError as error:
        raise UsageError(f"--spec {error}") from None


def _check_argument_count(python_function: Callable, given: int) -> None:
    """One --spec per positional parameter without a default, and none past the last."""
    parameters = list(inspect.signature(python_function).parameters.values())
    positional = [parameter for parameter in parameters if parameter.kind in (
        parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)]
    required = [parameter for parameter in positional if parameter.default is parameter.empty]
    takes_more = any(parameter.kind == parameter.VAR_POSITIONAL for parameter in parameters)
    names = ", ".join(parameter.name for parameter in positional)
    call = f"{python_function.__name__}({names})"
    if given < len(required):
        raise UsageError(f"{call} takes {len(required)} array argument"
                         f"{'s' if len(required) != 1 else ''} without a default: give one "
                         f"--spec for each, in order ({given} given)")
    if given > len(positional) and not takes_more:
        raise UsageError(f"{call} takes at most {len(positional)} positional argument"
                         f"{'s' if len(positional) != 1 else ''}, but {given} --spec were "
                         f"given")
