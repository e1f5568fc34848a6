"""Compiled scalar graphs: a graph of float64, float32 (and bool) scalars as one native function.

A traced loop on scalars is a long chain of 0-d ops: NumPy spends about a microsecond of
dispatch on each, Python floats a few tens of nanoseconds (runtime/passes/floats.py), machine
code a few nanoseconds. `compile_scalar_graph(graph)` writes the graph as LLVM IR, compiles it
with llvmlite (compiler.py, which caches the object code on disk) and returns a
Python function that calls it:

    run = compile_scalar_graph(graph, fallback=numpy_version)
    run(np.asarray(0.5))          # (np.float64(4.44e-05),), as the NumPy version returns

- Arithmetic is IEEE, as NumPy's loops: no fast-math flags. sin, cos, exp, ... are the C
  library's (NumPy's own SIMD versions may differ in the last bit). sin and cos of one value
  become one `sincos` call.
- float32 values are computed in float, each op in the type NumPy computes it in (its output's
  dtype; an f32 and an f64 operand give f64), so that arithmetic and sqrt are NumPy's bit for
  bit; the float32 functions (sinf, expf, ...) are within scalar_float32.MAX_ULPS (2) of
  NumPy's, or the graph is not compiled (runtime/backends/llvm/scalar_float32.py).
- A block of equations repeated many times (a loop unrolled by tracing, and its adjoint) is
  compiled as a loop again, with the values it leaves for later code in a buffer of doubles
  (runtime/backends/llvm/scalar_loops.py): a large graph compiles in a fraction of the time.
- With `fallback` (the graph's NumPy version), a call where a value that could hide it is inf
  or nan, or where NumPy does not ignore underflow, runs the fallback instead, so NumPy gives
  its warnings (or raises under np.errstate) and its exact results; the native code only
  reports which happened.

Where llvmlite does not load (or for a graph with other ops) compile_scalar_graph returns None
and the caller keeps its Python version.
"""
from __future__ import annotations

import ctypes
import hashlib
import warnings
from typing import Callable

import numpy as np

from . import compiler as llvm
from .cpu_scalar_ir import (FILLS, FLOATS, TapeTooLarge, compute_type, kernel_ir, libm_call,
                            literal_fits, lowers, operand_type, promoted_type, scalar_type,
                            select_of, squares)
from .scalar_loops import find_loops
from ...graph import Graph, Literal, Var
from ...primitives.elementwise import ZERO_D_ARRAYS

# Graphs longer than this are compiled with their repeated blocks rolled into loops; shorter
# ones straight-line, which runs faster (sin and cos of one value share a call) and compiles in
# about 20 ms per 1,200 equations.
ROLL_ABOVE = 2000
# Straight-line code compiles in time that grows faster than its length (12,000 equations: up
# to 0.6 s); past this many equations outside loops a graph keeps its Python version.
MAX_STRAIGHT_LINE = 12000

def accepts(graph: Graph) -> bool:
    """Whether every equation of `graph` is an op the kernel computes (cpu_scalar_ir.lowers) on
    f64, f32 or bool scalars, with float results of NumPy's dtype for float ops and bool results
    for comparisons."""
    if not graph.equations:
        return False
    for equation in graph.equations:
        name = equation.primitive.name
        if name in FILLS:
            if not _is_scalar_fill(equation):
                return False
            continue
        if not lowers(equation.primitive) or equation.attrs or len(equation.outputs) != 1:
            return False
        types = [operand_type(value) for value in equation.inputs]
        result = scalar_type(equation.outputs[0].aval)
        if None in types or not _types_fit(equation.primitive, types, result):
            return False
        if not _computed_as_numpy_does(equation):
            return False
    return True


def _is_scalar_fill(equation) -> bool:
    """`np.zeros(())` and friends: one f64, f32 or bool scalar of a fixed value."""
    value = equation.attrs.get("fill_value")
    return (len(equation.outputs) == 1 and scalar_type(equation.outputs[0].aval) is not None
            and type(value) in (bool, int, float) and not equation.inputs)


def _types_fit(primitive, types: list, result: str | None) -> bool:
    if primitive.llvm_compare:
        return result == "i1" and len(types) == 2
    if primitive.llvm_bools:
        return result == "i1" and all(kind == "i1" for kind in types)
    if primitive.name == "where":
        return result in FLOATS and len(types) == 3 and types[0] == "i1"
    if primitive.llvm_instruction and len(types) == 2:
        return result in FLOATS  # a bool counts as 0.0 or 1.0 (the gradient of maximum has them)
    return result in FLOATS and "i1" not in types


def _computed_as_numpy_does(equation) -> bool:
    """Whether the kernel computes `equation` in the type NumPy does (cpu_scalar_ir.compute_type)
    from operands it converts exactly, with a float32 function close enough to NumPy's."""
    kind = compute_type(equation)
    if kind is None or not all(literal_fits(value, kind) for value in equation.inputs
                               if isinstance(value, Literal)):
        return False
    if kind == "i1":
        return True
    primitive = equation.primitive
    inputs = equation.inputs[1:] if primitive.name == "where" else equation.inputs
    if inputs and promoted_type(inputs) != kind:
        return False  # not NumPy's promotion: an f64 value in an f32 op
    if primitive.llvm_select and select_of(primitive, kind) is None:
        return False
    needs_libm = primitive.libm and not primitive.llvm_intrinsic and not (
        primitive.name == "power" and squares(equation))
    return not needs_libm or libm_call(primitive, kind) is not None


def compile_scalar_graph(graph: Graph, fallback: Callable | None = None,
                         roll: bool | None = None) -> Callable | None:
    """A native version of `graph`, or None where there is none (no llvmlite, other ops).

    Arguments:
        graph: an optimized graph; all its equations f64[] or bool[] ops the kernel computes.
        fallback: the graph's NumPy version, run instead when a value is inf or nan (so that
            NumPy warns as it would) or NumPy does not ignore underflow.
        roll: compile repeated blocks as loops (True), straight-line (False), or by size
            (None: above ROLL_ABOVE equations).
    Returns:
        a function taking the graph's inputs and returning the tuple of its outputs
        (np.float64, np.float32 and np.bool_ values for computed ones), as
        runtime.execution.executor's do.
    """
    graph, as_arrays = _copies_taken_out(graph)
    if not accepts(graph) or not llvm.available():
        return None
    if roll is None:
        roll = len(graph.equations) > ROLL_ABOVE
    computed = [value for value in graph.outputs
                if isinstance(value, Var) and value not in graph.inputs]
    if not computed:
        return None
    # Named by its content, so that the same graph is the same IR text in every process, and the
    # disk cache of object code finds it.
    written = _kernel_ir(graph, "autotrace_scalar", roll, signal=fallback is not None)
    if written is None:
        return None
    ir, parameters = written
    name = f"autotrace_scalar_{hashlib.sha256(ir.encode()).hexdigest()[:20]}"
    ir = ir.replace("@autotrace_scalar(", f"@{name}(", 1)
    try:
        address = llvm.compile_module(ir, [name])[name]
    except RuntimeError as error:  # a bug here: the graph still runs, in Python
        warnings.warn(f"autotrace could not compile a scalar graph ({error}); it runs as "
                      f"Python instead", RuntimeWarning, stacklevel=2)
        return None
    argument_types = [ctypes.c_bool if kind == "i1" else ctypes.c_double
                      for _, kind in parameters]
    kernel = ctypes.CFUNCTYPE(ctypes.c_double, *argument_types, ctypes.c_void_p)(address)
    return _wrapper(graph, kernel, parameters, computed, fallback, as_arrays)


def _copies_taken_out(graph: Graph) -> tuple:
    """(`graph` without its `copy` equations of scalars, each read as the value it copies (in
    the kernel a scalar is a value, not memory), the positions of the outputs such a copy
    gave, which the wrapper hands back as 0-d arrays of their own: a traced gradient of a 0-d
    argument is one, runtime/derivatives/structure.py `match`)."""
    copied = {}
    for equation in graph.equations:
        if (equation.primitive.name == "copy" and len(equation.inputs) == 1
                and len(equation.outputs) == 1 and isinstance(equation.inputs[0], Var)
                and scalar_type(equation.outputs[0].aval) is not None):
            copied[equation.outputs[0]] = copied.get(equation.inputs[0], equation.inputs[0])
    if not copied:
        return graph, frozenset()
    equations = [equation.replace(inputs=tuple(copied.get(value, value) if isinstance(value, Var)
                                               else value for value in equation.inputs))
                 for equation in graph.equations
                 if not (equation.outputs and equation.outputs[0] in copied
                         and equation.primitive.name == "copy")]
    outputs = [copied.get(value, value) if isinstance(value, Var) else value
               for value in graph.outputs]
    as_arrays = frozenset(index for index, value in enumerate(graph.outputs)
                          if isinstance(value, Var) and value in copied)
    return Graph(graph.inputs, equations, outputs), as_arrays


def scalar_kernel_ir(graph: Graph, name: str, roll: bool,
                     signal: bool) -> tuple[str, list] | None:
    """The kernel's IR (see runtime/backends/llvm/cpu_scalar_ir.py) and its parameters: (position
    among the graph's inputs, LLVM type) of each scalar input. Rolled where `roll` and the
    tapes fit on the stack. None where more than MAX_STRAIGHT_LINE equations would be
    straight-line code, which LLVM compiles in more time than Python floats take to run."""
    return _kernel_ir(_copies_taken_out(graph)[0], name, roll, signal)


def _kernel_ir(graph: Graph, name: str, roll: bool, signal: bool) -> tuple[str, list] | None:
    """scalar_kernel_ir of a graph whose copies of scalars are taken out already."""
    loops = []
    if roll:
        loops = find_loops(graph, taped_ok=lambda var: scalar_type(var.aval) in FLOATS)
    if len(graph.equations) - sum(loop.count * loop.period for loop in loops) \
            > MAX_STRAIGHT_LINE:
        return None
    if loops:
        try:
            return kernel_ir(graph, name, loops, _checked(graph), signal)
        except TapeTooLarge:
            if len(graph.equations) > MAX_STRAIGHT_LINE:
                return None
    return kernel_ir(graph, name, [], _checked(graph), signal)


# NumPy keeps its error state (np.errstate, np.seterr) in a context variable; while it holds the
# object it held at import, underflow is ignored as then, and np.geterr (0.5 us) need not run.
try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _numpy_error_state
except ImportError:  # another NumPy: ask np.geterr on every call
    _numpy_error_state = None
_default_error_state = None if _numpy_error_state is None else _numpy_error_state.get()
_underflow_ignored_by_default = np.geterr()["under"] == "ignore"


# NumPy's own error state (np.geterr() in a new process): warn, but ignore underflow.
_NUMPY_DEFAULT_ERRORS = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
_default_is_numpys = np.geterr() == _NUMPY_DEFAULT_ERRORS


def numpy_errors_default() -> bool:
    """Whether NumPy's error state is its default one (no np.errstate or np.seterr in force),
    cheaply in the usual case."""
    if _numpy_error_state is not None and _numpy_error_state.get() is _default_error_state:
        return _default_is_numpys
    return np.geterr() == _NUMPY_DEFAULT_ERRORS


def underflow_ignored() -> bool:
    """Whether NumPy ignores underflow now (its default), cheaply in the usual case."""
    if _numpy_error_state is not None and _numpy_error_state.get() is _default_error_state:
        return _underflow_ignored_by_default
    return np.geterr()["under"] == "ignore"


def _wrapper(graph, kernel, parameters, computed, fallback, as_arrays=frozenset()):
    """A Python function around the kernel: its source is written for the graph, so that a
    call converts each argument and result once and does nothing else."""
    names = [f"a{number}" for number in range(len(graph.inputs))]
    arguments = [f"{'bool' if kind == 'i1' else 'float'}({names[position]})"
                 for position, kind in parameters]
    namespace = {"kernel": kernel, "fallback": fallback, "float64": np.float64,
                 "float32": np.float32, "bool_": np.bool_, "asarray": np.asarray,
                 "array": np.array,
                 "underflow_ignored": underflow_ignored, "c_double": ctypes.c_double,
                 "error_state": _numpy_error_state, "default_error_state": _default_error_state}
    lines = [f"def run({', '.join(names)}):"]
    call = ", ".join(names)
    if fallback is not None:
        usual = "error_state.get() is not default_error_state and " \
            if _numpy_error_state is not None and _underflow_ignored_by_default else ""
        lines += [f"    if {usual}not underflow_ignored():", f"        return fallback({call})"]
    rest = "None"
    if len(computed) > 1:
        lines.append(f"    rest = (c_double * {len(computed) - 1})()")
        rest = "rest"
    lines.append(f"    first = kernel({', '.join([*arguments, rest])})")
    if fallback is not None:
        lines += ["    if first != first:", f"        return fallback({call})"]
    wanted = set(computed)
    producers = {equation.outputs[0]: equation.primitive.name
                 for equation in graph.equations if equation.outputs[0] in wanted}
    results = []
    for index, value in enumerate(graph.outputs):
        if isinstance(value, Var) and value in graph.inputs:
            name = names[graph.inputs.index(value)]
            results.append(f"array({name}, copy=True)" if index in as_arrays else name)
        elif isinstance(value, Var):
            slot = computed.index(value)
            text = "first" if slot == 0 else f"rest[{slot - 1}]"
            convert = {"i1": "bool_", "float": "float32"}.get(scalar_type(value.aval), "float64")
            text = f"{convert}({text})"
            # Ufuncs give NumPy scalars for 0-d arrays; np.where and np.zeros give 0-d arrays.
            array = index in as_arrays or producers[value] in ZERO_D_ARRAYS
            results.append(f"asarray({text})" if array else text)
        else:
            constant = f"constant{len(namespace)}"
            namespace[constant] = value.value
            copy = ".copy()" if isinstance(value.value, np.ndarray) else ""
            results.append(f"{constant}{copy}")
    lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    exec("\n".join(lines) + "\n", namespace)
    return namespace["run"]


def _checked(graph: Graph) -> set:
    """The float Vars whose finiteness shows that every value of the graph was finite."""
    checked = {value for value in graph.outputs if isinstance(value, Var)}
    for equation in graph.equations:
        # an inf or nan read where it always gives one (Primitive.propagates_nan) shows in
        # the result, which is checked or read in turn: the value itself need not be
        propagating = equation.primitive.propagates_nan
        for position, value in enumerate(equation.inputs):
            if isinstance(value, Var) and position not in propagating and not (
                    position == 0 and equation.primitive.name == "power"
                    and squares(equation)):
                checked.add(value)
    return {var for var in checked if scalar_type(var.aval) in FLOATS}
