"""Python's functions of numbers on traced values: the math module's, which converted code calls
through REPLACEMENTS (control_statements.py NUMPY_REPLACEMENTS), and the builtin round, which
a Tracer's `__round__` calls (`traced_round`).

A math function of floats gives a Python float. Where NumPy has a function of the same meaning
on a float64 number, its twin (math.exp and np.exp, math.pow and NumPy's scalar `**`: the op
whose row of facts names the math function), a traced argument is taken as math takes it, as
a float64 number, and the twin's result is a weak traced value (weak_scalars.py): it stands
for the Python float math gives, and meets arrays as one does.

    y = math.exp(x[0])     # x: f64[3] -> exp(getitem(x, 0)), weak: y * v is f32 for an f32 v

Where math raises instead of answering (math.log(0.0), math.sqrt(-1.0)), the graph gives what
the twin gives (-inf, nan): a traced value has no value to test while tracing. A math function
without a twin is refused for a traced argument, saying what to write (math.floor gives an int
and math.isnan a bool, which a traced value cannot be); on Python numbers every one is math's
own. math.erfc, math.gamma and math.lgamma, which NumPy lacks, are ops of their own that call
math's function on each element (runtime/primitives/math_special.py).

`round(x, ndigits)` of a traced NumPy scalar rounds as NumPy's does, with np.round. What NumPy
does not answer with a NumPy scalar is refused: `round(x)` gives a Python int, round of a Python
float rounds its exact decimal value, and a 0-d array has no `__round__` (NumPy's TypeError). A
0-d value that may be either (a 0-d argument, an example of autotrace.vmap: type_checks.py)
rounds as a NumPy scalar.
"""
from __future__ import annotations

import functools
import inspect
import math
import operator

import numpy as np

from ..primitives.elementwise import astype
from ..primitives.index import holds_traced
from ..primitives.registry import UntraceableError, bind, is_traced, primitives
from ..primitives.special import erf
from ..state import StateCell
from .type_checks import ARRAY, stands_for
from .weak_scalars import WEAK_DTYPES, make_weak

_FLOAT64 = np.dtype(np.float64)


def _log(x, base=None):
    """math.log: of one number, np.log; with a base, math's own quotient of two logs."""
    return np.log(x) if base is None else np.divide(np.log(x), np.log(base))


def _hypot(*values):
    """math.hypot of one number (its absolute value) or of two."""
    if len(values) > 2:
        raise UntraceableError(
            f"autotrace traces math.hypot of two values (as np.hypot), not of {len(values)}: "
            f"write math.hypot(math.hypot(a, b), c)")
    return np.fabs(*values) if len(values) == 1 else np.hypot(*values)


def _twins() -> dict:
    """The math functions that NumPy has a twin of, and the twin, called on float64 numbers:
    the op whose row of facts names the math function (runtime/primitives/elementwise.py,
    math_special.py), as a NumPy function where it is one; math.log and math.hypot take more
    than their twins; math.erf's is autotrace's erf (runtime/primitives/special.py), which
    agrees with it to a few units in the last place."""
    twins = {primitive.math: getattr(np, name, None) or functools.partial(bind, name)
             for name, primitive in primitives.items() if primitive.math is not None}
    return {**twins, math.log: _log, math.hypot: _hypot, math.erf: erf}


# The math functions that NumPy has a twin of, and the twin (scalar_power for math.pow: C's
# pow, as math.pow and NumPy's scalars compute it).
TWINS = _twins()

_INT = ("math.{0} gives a Python int, which a traced value has none of while tracing: write "
        "np.{0}(x), which keeps x's dtype (np.{0}(x).astype(int) for integers)")
_BOOL = ("math.{0} gives a Python bool, which a traced value has none of while tracing: "
         "write np.{0}(x), a traced bool (an `if` on it becomes a traced branch)")
_NO_TWIN = "autotrace cannot trace math.{0} of a traced value: "
# Why a math function with no twin is refused for a traced value, and what to write instead.
_REFUSALS = {
    **dict.fromkeys(["floor", "ceil", "trunc"], _INT),
    **dict.fromkeys(["isnan", "isinf", "isfinite"], _BOOL),
    "isclose": ("math.isclose gives a Python bool, which a traced value has none of while "
                "tracing: write np.abs(a - b) <= np.maximum(rel_tol * np.maximum(np.abs(a), "
                "np.abs(b)), abs_tol), a traced bool"),
    "nextafter": _NO_TWIN + "write np.nextafter(x, y)",
    "remainder": _NO_TWIN + "NumPy has no IEEE remainder; write x - y * np.round(x / y), "
                            "which differs where x / y rounds to a half",
    "ulp": _NO_TWIN + "write np.spacing(np.abs(x))",
    "ldexp": _NO_TWIN + "write x * 2.0 ** i",
    "frexp": _NO_TWIN + "write np.frexp(x)",
    "modf": _NO_TWIN + "write np.modf(x)",
    "prod": _NO_TWIN + "write np.prod(np.stack(values))",
    "fsum": _NO_TWIN + "write np.sum(np.stack(values)), which rounds as it adds",
    "dist": _NO_TWIN + "write np.sqrt(np.sum((np.stack(p) - np.stack(q)) ** 2))",
}
_REFUSED = _NO_TWIN + "compute it with NumPy's functions, or outside the traced function"


def _without_twin(function):
    """`function`, refused where an argument holds a traced value (_REFUSALS says why)."""
    message = _REFUSALS.get(function.__name__, _REFUSED).format(function.__name__)

    @functools.wraps(function)
    def refused(*args, **kwargs):
        if any(holds_traced(_read(value)) for value in (*args, *kwargs.values())):
            raise UntraceableError(message)
        return function(*args, **kwargs)
    return refused


def _with_twin(function, twin):
    """`function` computed as `twin` where an argument is traced (see the module's
    docstring)."""
    @functools.wraps(function)
    def traced(*args):
        args = tuple(_read(value) for value in args)
        if not any(is_traced(value) for value in args) or not _takes(twin, len(args)):
            return function(*args)  # (math's own error for a wrong number of arguments)
        return make_weak(twin(*(_as_float(value, function) for value in args)))
    return traced


def _takes(twin, count: int) -> bool:
    """Whether `twin` takes `count` arguments, as its math function does."""
    if isinstance(twin, np.ufunc):
        return count == twin.nin
    try:
        inspect.signature(twin).bind(*range(count))
    except TypeError:
        return False
    return True


def _read(value):
    return value.read() if isinstance(value, StateCell) else value


def _as_float(value, function):
    """`value` as math takes it: a float64 number (a traced one stays traced)."""
    if not is_traced(value):
        return float(value)  # as math converts it, with its errors
    if value.ndim > 0:  # NumPy's own error
        raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
    if value.dtype.kind == "c":
        raise UntraceableError(
            f"autotrace cannot trace math.{function.__name__} of a complex value: math takes "
            f"its real part (with a ComplexWarning); write math.{function.__name__}(x.real)")
    return value if value.dtype == _FLOAT64 else astype(value, _FLOAT64)


def _replacements() -> dict:
    functions = [getattr(math, name) for name in dir(math) if not name.startswith("_")]
    return {function: _with_twin(function, TWINS[function]) if function in TWINS
            else _without_twin(function) for function in functions if callable(function)}


# What converted code calls in place of each function of the math module.
REPLACEMENTS = _replacements()


def traced_round(value, ndigits=None):
    """`round(value, ndigits)` of the traced value `value` (see the module's docstring): NumPy's
    `round` of the NumPy scalar it stands for, np.round(value, ndigits)."""
    if value.ndim > 0 or stands_for(value) == ARRAY:
        raise TypeError("type numpy.ndarray doesn't define __round__ method")  # NumPy's
    number = (WEAK_DTYPES[value.dtype].__name__ if value._weak
              else f"numpy.{value.dtype.type.__name__}")
    if value.dtype.kind in "bc":
        raise TypeError(f"type {number} doesn't define __round__ method")
    if value._weak:
        raise UntraceableError(
            f"autotrace cannot trace round() of a Python {number}: Python rounds its exact "
            f"decimal value, NumPy's np.round does not; write np.round(x, ndigits)")
    if ndigits is None:
        raise UntraceableError(
            "round(x) gives a Python int, which a traced value has none of while tracing: "
            "write np.round(x), which keeps x's dtype (round(x, ndigits) rounds as np.round "
            "does)")
    if is_traced(ndigits):
        raise UntraceableError("autotrace cannot trace round(x, ndigits) with a traced "
                               "ndigits: give it as a Python int")
    return np.round(value, operator.index(ndigits))
