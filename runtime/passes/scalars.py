"""Passes that make elementwise work cheaper: uniform constants as scalars, integer powers.

UniformConstants: an array constant all of whose elements are one value (the seed of a gradient,
`ones_like(y)` broadcast to y's shape; a folded `np.full`) read by an elementwise op is read
as that value alone, where the op then gives the same shape and dtype:

    i:f64[1000000] = multiply const0:f64[1000000] b     ->     i:f64[1000000] = multiply 1.0 b

The multiply read 8 MB to multiply by one; AlgebraicSimplification then drops it. An array
that `full` makes (np.zeros, np.ones with a known shape) is read so too: the gradient of a
function of `*args` adds each argument's contribution to a zero array of its shape, which
the call then no longer makes (the float64 softmax's gradient of (8, 4, 64, 64) values took
1,072 us with its zeros, mapped fresh from the system and read, and takes 408 without). The value is
a Python scalar (a Literal) where NumPy 2's weak promotion of a Python scalar gives the op's
dtype, and otherwise a 0-d constant of the array's dtype (f32 array * f64 array is f64, as is
f32 array * f64 scalar, but f32 array * Python float is f32). A constant that makes the result's
shape (x:f64[] * ones(3)) stays. So does the exponent of a power where NumPy computes one scalar
exponent apart from an array of it: NumPy 2 takes x ** 0.5 as sqrt(x), -0.0 for -0.0 and nan for
-inf where pow gives 0.0 and inf (`scalar_exponent_agrees` asks NumPy once), and x ** 2 and
x ** -1 as x * x and 1 / x, which pow does not always round alike. Of NumPy's ufuncs of two
inputs, power is the only one whose results differ so (nan payloads aside).

IntegerPowers: `power x n` becomes multiplies, as JAX's integer_pow does. NumPy computes it
with the C library's pow, tens of nanoseconds an element (most of the gradient of a GELU);
`x * x * x` costs a memory pass or two:

    c:f64[1000000] = power a 3      ->      c:f64[1000000] = square a
                                            d:f64[1000000] = multiply a c

- n from 2 to 16 by repeated squaring; -1 to -16, for floats, as (1 / x) ** -n (NumPy raises
  for integer arrays to negative powers, so those stay); 0.5 as sqrt where NumPy's power loop
  computes it so. Only where the result has the power's shape and dtype (an int array to the
  power 3.0 is a float array, and stays).
- Integer arrays give exactly NumPy's results (both wrap around alike). float32 and float64
  give results within 2|n| units in the last place of NumPy's (measured: 1.6e-15 relative for
  float64 x ** 16, 3.1e-15 for x ** -16) where the result is a normal number; inf, nan and
  signed zeros come out as NumPy's. A result below the smallest normal number (2.2e-308 for
  float64) may differ from pow's in its last subnormal digits, as XLA's integer_pow does.
  float16 (rounded at every multiply) and longdouble powers stay.

UniformConstants fires only under NumPy 2's promotion rules, which the graph's dtypes follow:
NumPy 1 promoted a 0-d array by its value, so `f32 array * f64 0-d array` was f32 there.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..graph import Constant, Equation, Graph, Literal, Var
from ..ops import primitives

# Dtypes whose values a Python scalar holds exactly (`.item()` of a longdouble rounds).
_LITERAL_DTYPES = frozenset(np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # bits by item size

# x ** 16 is 4 squarings; one pow over an array costs about as much as 40 multiplies over it.
_LARGEST_EXPONENT = 16

_NUMPY_2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"

# Values NumPy's power loop may treat apart when the exponent is one scalar (NumPy 2 computes
# x ** 0.5 as sqrt(x): -0.0 for -0.0 where pow gives 0.0, nan for -inf where pow gives inf).
_PROBE = [-0.0, 0.0, -np.inf, np.inf, np.nan, -2.0, -1.0, -0.5, 0.5, 1.0, 2.5, 3.0, 1e-30, 7e25]


def uniform_value(constant: Constant):
    """The one value every element of `constant` holds, bit for bit (so nan, and the sign of
    zero, count), as a NumPy scalar of its dtype; None if it holds several, or none."""
    value = constant.value
    if (not isinstance(value, (np.ndarray, np.generic)) or value.size == 0
            or constant.aval.device != "cpu" or value.dtype.kind not in "biufc"):
        return None
    flat = np.ascontiguousarray(value).reshape(-1)
    if flat.size > 1:
        itemsize = flat.dtype.itemsize
        unsigned = _UNSIGNED.get(itemsize)
        bits = flat.view(unsigned) if unsigned else flat.view(np.uint8).reshape(-1, itemsize)
        if not (np.array_equal(bits[-1], bits[0]) and np.all(bits == bits[0])):
            return None
    return flat[0]


@functools.cache
def scalar_exponent_agrees(name: str, dtype: np.dtype, exponent) -> bool:
    """Whether NumPy's `name` (power, float_power), computed in `dtype`, gives what it gives for
    an array of `exponent` for one scalar `exponent`: the same infs, nans and signs, and finite
    values within a few units in the last place (NumPy's pow on arrays is not always rounded
    as its scalar shortcuts x * x and 1 / x are). It depends only on the NumPy build and the
    CPU: worked out once."""
    with np.errstate(all="ignore"):
        try:
            base = np.array(_PROBE).astype(dtype)
            by_scalar = getattr(np, name)(base, np.asarray(exponent, dtype)[()])
            by_array = getattr(np, name)(base, np.full(base.shape, exponent, dtype))
        except (TypeError, ValueError, ArithmeticError):
            return False
    if by_scalar.dtype.kind != "f":
        return by_scalar.tobytes() == by_array.tobytes()
    finite = np.isfinite(by_array)
    return bool(np.array_equal(np.isnan(by_scalar), np.isnan(by_array))
                and np.array_equal(np.isinf(by_scalar), np.isinf(by_array))
                and np.array_equal(np.signbit(by_scalar), np.signbit(by_array))
                and np.allclose(by_scalar[finite], by_array[finite], atol=0,
                                rtol=8 * np.finfo(by_scalar.dtype).eps))


@functools.cache
def power_is_sqrt(dtype: np.dtype) -> bool:
    """Whether NumPy's power loop computes `x ** 0.5` in `dtype` as `sqrt(x)`, bit for bit."""
    with np.errstate(all="ignore"):
        base = np.array(_PROBE, dtype)
        return np.power(base, 0.5).tobytes() == np.sqrt(base).tobytes()


def _input_aval(value):
    """What a shape/dtype rule takes for an input: a literal's value, else its aval."""
    return value.value if isinstance(value, Literal) else value.aval


def _same_types(equation, inputs) -> bool:
    """Whether `equation` reading `inputs` gives results of exactly its results' types."""
    try:
        results = equation.primitive.abstract_eval(*map(_input_aval, inputs), **equation.attrs)
    except (TypeError, ValueError):
        return False
    results = results if isinstance(results, tuple) else (results,)
    return len(results) == len(equation.outputs) and all(
        result == var.aval for result, var in zip(results, equation.outputs))


def _is_elementwise(equation) -> bool:
    impl = equation.primitive.impl
    return isinstance(impl, np.ufunc) and impl.signature is None and not equation.attrs


# Exponents NumPy's float power loop computes, read as one scalar, with an operation other than
# pow (x * x, 1 / x, sqrt(x)), rounded as pow is not always (x ** 2: about one element in a
# thousand differs in its last digit from pow's): an array of one of them stays an array.
_COMPUTED_APART = (-1.0, 0.5, 2.0)


def _exponent_apart(equation, position: int, scalar) -> bool:
    """Whether `scalar` is a power's exponent that NumPy computes apart as one scalar."""
    name = equation.primitive.name
    if name not in ("power", "float_power") or position != 1:
        return False
    dtype = equation.outputs[0].aval.dtype
    if dtype.kind == "f" and np.asarray(scalar).dtype.kind in "iuf" \
            and float(scalar) in _COMPUTED_APART:
        return True
    return not scalar_exponent_agrees(name, dtype, scalar)


class UniformConstants:
    """Read an array constant of one repeated value as that value, in elementwise ops; and an
    array `full` makes (np.zeros, np.ones: the zero gradient a derivative adds a contribution
    to), which then is made no more where nothing else reads it."""

    def run(self, graph: Graph) -> Graph:
        if not _NUMPY_2:
            return graph
        # id of a constant or of a `full` result -> (its value, a 0-d constant of it)
        scalars: dict[int, tuple] = {}
        equations = []
        for equation in graph.equations:
            if _is_elementwise(equation):
                equation = self.with_scalars(equation, scalars)
            elif equation.primitive.name == "full" and math.prod(equation.attrs["shape"]):
                scalar = np.dtype(equation.attrs["dtype"]).type(equation.attrs["fill_value"])
                scalars[id(equation.outputs[0])] = (scalar, Constant(scalar))
            equations.append(equation)
        return Graph(graph.inputs, equations, graph.outputs)

    @staticmethod
    def with_scalars(equation, scalars):
        """`equation` reading its uniform constants (and `full` results) as scalars where that
        changes no type."""
        inputs = list(equation.inputs)
        for position, value in enumerate(inputs):
            if isinstance(value, Var):
                if id(value) not in scalars:
                    continue
            elif not isinstance(value, Constant):
                continue
            if id(value) not in scalars:
                scalar = uniform_value(value)
                scalars[id(value)] = (scalar, None if scalar is None else Constant(scalar))
            scalar, zero_d = scalars[id(value)]
            if scalar is None or _exponent_apart(equation, position, scalar):
                continue
            candidates = [zero_d] if value.aval.shape != () else []
            # The executor writes a complex literal by its repr, which has no name for inf or nan.
            if scalar.dtype in _LITERAL_DTYPES and (
                    scalar.dtype.kind != "c" or np.isfinite(scalar)):
                candidates.insert(0, Literal(scalar.item()))
            for candidate in candidates:  # a Python scalar where it gives the same types
                trial = [*inputs[:position], candidate, *inputs[position + 1:]]
                if _same_types(equation, trial):
                    inputs = trial
                    break
        if all(new is old for new, old in zip(inputs, equation.inputs)):
            return equation
        return equation.replace(inputs=tuple(inputs))


def _exponent(value):
    """A power's exponent as a Python number, if it is a literal or 0-d real constant."""
    if isinstance(value, Literal):
        return value.value if type(value.value) in (int, float) else None
    if isinstance(value, Constant) and value.aval.shape == () and value.aval.device == "cpu" \
            and value.aval.dtype.kind in "iuf":
        return value.value.item()
    return None


class IntegerPowers:
    """`power x n` for small integers n (and 0.5) as multiplies (and sqrt); NumPy's scalar
    `**` (scalar_power) likewise, but for 0.5."""

    def run(self, graph: Graph) -> Graph:
        equations = []
        for equation in graph.equations:
            equations.extend(self.rewrite(equation) or [equation])
        return Graph(graph.inputs, equations, graph.outputs)

    @staticmethod
    def rewrite(equation):
        """The equations that compute the power's result with multiplies, or None."""
        # (scalar_power: NumPy's `**` on two numbers, C's pow, which takes no square root)
        name = equation.primitive.name
        if name not in ("power", "scalar_power") or equation.attrs:
            return None
        base, exponent = equation.inputs[0], _exponent(equation.inputs[1])
        (output,) = equation.outputs
        dtype = output.aval.dtype
        if not isinstance(base, Var) or exponent is None or base.aval.dtype != dtype:
            return None
        floats = dtype in (np.dtype(np.float32), np.dtype(np.float64))
        if not floats and dtype.kind not in "iu":
            return None
        equations = []

        def emit(name, *inputs):
            aval = primitives[name].abstract_eval(*map(_input_aval, inputs))
            equations.append(Equation(primitives[name], inputs, {}, [Var(aval)],
                                      equation.scope))
            return equations[-1].outputs[0]

        if exponent == 0.5 and floats and name == "power" and power_is_sqrt(dtype):
            emit("sqrt", base)
        elif float(exponent).is_integer() and 2 <= abs(exponent) <= _LARGEST_EXPONENT and (
                exponent > 0 or floats):
            if exponent < 0:
                base = emit("divide", Literal(1.0), base)  # NumPy's power of -1 is 1 / x too
            _repeated_squares(base, int(abs(exponent)), emit)
        elif exponent == -1 and floats:
            emit("divide", Literal(1.0), base)
        else:
            return None
        last = equations[-1]
        if last.outputs[0].aval != output.aval:
            return None
        equations[-1] = last.replace(outputs=(output,))
        return equations


def _repeated_squares(base: Var, exponent: int, emit) -> Var:
    """base ** exponent (>= 2) with squarings and multiplies: x**6 is x**2 * (x**2)**2."""
    result, power = None, base
    while True:
        if exponent & 1:
            result = power if result is None else emit("multiply", result, power)
        exponent >>= 1
        if not exponent:
            return result
        power = emit("square", power)
