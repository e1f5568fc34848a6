"""Float lowering: a graph of float64 scalars runs as Python float arithmetic.

A NumPy call on a 0-d array costs about a microsecond, most of it dispatch; the same arithmetic
on Python floats costs a few tens of nanoseconds. So when every equation of a graph (two or
more) is an op on f64[] values that Python computes to the same bits, the executor writes the
graph twice: as NumPy calls (`<name>_numpy`, the exact version) and as float arithmetic that
hands over to it wherever the two could differ:

    def dscalar_loop_1(a):
        if np.geterr()["under"] != "ignore":
            return dscalar_loop_1_numpy(a)
        try:
            a_float = float(a)
            b = math.sin(a_float)  # f64[]
            c = b * 0.9  # f64[]
            ...
        except (ArithmeticError, ValueError):
            return dscalar_loop_1_numpy(a)
        if not math.isfinite(z):
            return dscalar_loop_1_numpy(a)
        return (np.float64(z),)

Why the results are NumPy's, bit for bit:
- `+ - * /`, sqrt, abs and x*x are correctly rounded IEEE operations in both. The other
  functions (`math.sin`, ...) are used only where they give NumPy's own results on this
  machine: NumPy calls the C library's functions on some CPUs and SIMD kernels of its own,
  rounded differently, on others; `math_matches_numpy` compares the two on probe values once per
  process. Where they differ, the functions that never warn (`Primitive.silent`) are NumPy
  calls on the float (`float(np.<name>(x))`) and the others leave the graph to NumPy.
  `power(x, 2)` is `x * x` where NumPy's fast path makes it so, which is checked the same way.
- Where NumPy would warn or raise (overflow, division by zero, invalid values), a value becomes
  inf or nan, or Python raises. Either way the exact version runs instead, with NumPy's warnings.
  Infinities and nans propagate through most ops (inf * 0 is nan), so only the values read by an
  op that may hide them (exp(-inf) is 0, x / inf is 0) and the results are checked: one sum.
- Python never reports underflow; NumPy ignores it unless told otherwise, so under another
  `np.seterr(under=...)` the exact version runs.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..graph import Constant, Graph, Literal, Var
from ..ops import primitives

_LARGEST_EXACT_INTEGER = 2 ** 53


@functools.cache
def math_matches_numpy(name: str) -> bool:
    """Whether the Python version of NumPy's ufunc `name` gives NumPy's float64 results bit for
    bit (the sign of zero too) on probe values, through NumPy's array loop and its 0-d one. It
    depends only on the NumPy build and the CPU, so it is worked out once."""
    ufunc, python = (np.power, lambda x: x * x) if name == "power" else (
        getattr(np, name), primitives[name].math)
    exponent = (2,) if name == "power" else ()
    # Spread over signs and exponents 2**-40 .. 2**12, dense near 1: a fixed, scrambled set.
    spread = (np.arange(2048) * 0.6180339887498949) % 1.0
    values = np.where(np.arange(2048) % 2 == 0, 1.0, -1.0) * np.where(
        np.arange(2048) < 512, 4.0 * spread, np.exp2(-40.0 + 52.0 * spread))
    with np.errstate(all="ignore"):
        expected = ufunc(values, *exponent)
        expected[:256] = [ufunc(value, *exponent) for value in values[:256]]  # 0-d calls
        by_array = ufunc(values[:256], *exponent)
    got = np.array([_call_or_nan(python, value) for value in values.tolist()])
    # Where Python raises or gives nan, the exact version runs: those values need not agree.
    agree = (got.view(np.int64) == expected.view(np.int64)) | np.isnan(got)
    agree[:256] &= (by_array.view(np.int64) == expected[:256].view(np.int64)) | np.isnan(got[:256])
    return bool(np.all(agree))


def _call_or_nan(function, value: float) -> float:
    try:
        return function(value)
    except (ArithmeticError, ValueError):
        return math.nan


def _is_f64_scalar(value) -> bool:
    aval = value.aval
    return aval.shape == () and aval.dtype == np.float64 and aval.device == "cpu"


def _operand_ok(value) -> bool:
    if isinstance(value, Literal):
        kind = type(value.value)
        return kind in (bool, float) or (
            kind is int and abs(value.value) <= _LARGEST_EXACT_INTEGER)
    return _is_f64_scalar(value)


def _is_two(value) -> bool:
    if isinstance(value, Literal):
        return type(value.value) in (int, float) and value.value == 2
    return isinstance(value, Constant) and _is_f64_scalar(value) and value.value == 2


def float_template(equation) -> str | None:
    """The Python float expression for `equation` ({0}, {1} for its inputs), or None."""
    primitive = equation.primitive
    name = primitive.name
    if (len(equation.outputs) != 1 or not _is_f64_scalar(equation.outputs[0])
            or equation.attrs or not all(map(_operand_ok, equation.inputs))):
        return None
    if primitive.python_float is not None:
        return primitive.python_float
    if name == "power" and _is_two(equation.inputs[1]):
        return "{0} * {0}" if math_matches_numpy("power") else None
    if primitive.math is not None and len(equation.inputs) == 1 and math_matches_numpy(name):
        return f"math.{primitive.math.__name__}({{0}})"
    if primitive.silent:
        # it cannot warn, so NumPy may compute it on the float: falling back afterwards
        # cannot warn twice
        return f"float(np.{name}({{0}}))"
    return None


def lowerable(graph: Graph) -> bool:
    """Whether every equation of `graph` has a float version (none has a side effect or a
    subgraph: those never have a float form), and there are enough of them to pay for the
    checks around the float version: about as much as one NumPy call on a 0-d array."""
    return len(graph.equations) >= 2 and all(
        float_template(equation) is not None for equation in graph.equations)


def _checked(graph: Graph) -> list:
    """The Vars whose finiteness shows that every value of the graph was finite."""
    checked = {value: None for value in graph.outputs if isinstance(value, Var)}
    for equation in graph.equations:
        # an inf or nan read where it always gives one (Primitive.propagates_nan) shows in
        # the result; power is here only x * x (float_template), which shows it too
        propagating = (0,) if equation.primitive.name == "power" else \
            equation.primitive.propagates_nan
        for position, value in enumerate(equation.inputs):
            if isinstance(value, Var) and position not in propagating:
                checked[value] = None
    return list(checked)


def float_function_source(graph: Graph, function_name: str, exact_name: str, names) -> str:
    """The float version of a `lowerable` graph; `exact_name` is its NumPy version.

    `names` gives the graph's Python names (runtime.execution.executor's `_SourceNames`), so each line reads
    like the NumPy version's line for the same equation.
    """
    parameters = ", ".join(names.of(var) for var in graph.inputs)
    fallback = f"return {exact_name}({parameters})"
    floats = {}  # Var -> the name of its Python float

    def operand(value) -> str:
        if isinstance(value, Var):
            return floats[value]
        if isinstance(value, Constant):
            return names.literal(float(value.value))
        return names.literal(value.value)

    used = {value for equation in graph.equations for value in equation.inputs}
    body = []
    for var in graph.inputs:
        if var in used:  # made a Python float once
            floats[var] = f"{names.of(var)}_float"
            body.append(f"{floats[var]} = float({names.of(var)})")
    for equation in graph.equations:
        (output,) = equation.outputs
        floats[output] = names.of(output)
        expression = float_template(equation).format(*map(operand, equation.inputs))
        body.append(f"{floats[output]} = {expression}  # {output.aval}")

    results = []
    for value in graph.outputs:
        if isinstance(value, Var) and value not in graph.inputs:
            results.append(f"np.float64({floats[value]})")
        else:
            results.append(names.result(value))
    checked = " + ".join(floats[var] for var in _checked(graph) if var in floats)
    lines = [f"def {function_name}({parameters}):",
             '    if np.geterr()["under"] != "ignore":',
             f"        {fallback}",
             "    try:",
             *[f"        {line}" for line in body],
             "    except (ArithmeticError, ValueError):",
             f"        {fallback}"]
    if checked:
        lines += [f"    if not math.isfinite({checked}):", f"        {fallback}"]
    lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    return "\n".join(lines) + "\n"
