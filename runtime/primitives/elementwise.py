"""Elementwise ops: every NumPy ufunc, plus where, clip, astype, copy, round and friends.

Every ufunc with its own loop (`add`, `sin`, `logaddexp`, `greater`, `divmod`, ...) is one
primitive named after it, from one generic rule: the shape broadcasts, the dtype is what the
ufunc's own type resolution says (`ufunc.resolve_dtypes`, which follows NumPy 2's weak-scalar
promotion: a Python float literal times an f32 array is f32). The executor writes
`np.add(a, b)`, or `np.add(a, b, out=a)` once buffer reuse has marked it. What backends know
about a ufunc (its C and LLVM forms, libm and array-API names, ...) is its row of
ELEMENTWISE_FACTS, fields of its Primitive: adding an elementwise op is its row and its rule.
"""
from __future__ import annotations

import inspect
import math

import numpy as np

from ..abstract import AbstractArray, broadcast_origins, broadcast_shapes, unknown_dimension_error
from ..unknown_sizes import static_shape
from .batching import elementwise_batching, never_batched
from .registry import (INPUTS_ORDER, Primitive, array_method, bind, bind_like, declare,
                       define_runtime_function, device_of_inputs, is_traced,
                       literal_source, numpy_functions, out_argument, primitives, register,
                       reject_arguments, shape_of, static, static_dtype, traces, ufunc_methods,
                       untraceable, untraceable_shape, UntraceableError)
from .out_writes import masked_outer_message, unmasked_out_message
from .same_sizes import check_unknown_sizes
from .weak_inputs import cast_weak_inputs, clip_bounds, python_number_as


def _resolution_type(aval):
    """What `ufunc.resolve_dtypes` takes for an input: a dtype, or a Python scalar's type."""
    if isinstance(aval, AbstractArray):
        return aval.dtype
    if isinstance(aval, bool):
        return np.dtype(bool)
    return type(aval)


def _zero_example(aval):
    """A 0-d stand-in with the input's dtype (or the literal itself), for dtype rules."""
    return np.zeros((), aval.dtype) if isinstance(aval, AbstractArray) else aval


def elementwise_dtypes(function, avals, attrs=None) -> list:
    """The dtypes `function` gives for inputs of these dtypes, by running it on 0-d examples."""
    with np.errstate(all="ignore"):
        result = function(*[_zero_example(aval) for aval in avals], **(attrs or {}))
    results = result if isinstance(result, tuple) else (result,)
    return [np.asarray(r).dtype for r in results]


def _ufunc_rule(ufunc: np.ufunc):
    def abstract_eval(*avals):
        shape = broadcast_shapes(*[shape_of(aval) for aval in avals])
        try:
            signature = (*[_resolution_type(aval) for aval in avals], *[None] * ufunc.nout)
            dtypes = ufunc.resolve_dtypes(signature)[ufunc.nin:]
        except (TypeError, ValueError):
            dtypes = elementwise_dtypes(ufunc, avals)
        device, origins = device_of_inputs(avals), broadcast_origins(avals, shape)
        outputs = tuple(AbstractArray(shape, dtype, device, origins) for dtype in dtypes)
        return outputs[0] if ufunc.nout == 1 else outputs
    return abstract_eval


def _ufunc_source(name: str):
    def source(args, attrs):
        if "out" in attrs:
            return f"np.{name}({', '.join(args)}, out={out_argument(args, attrs)})"
        return f"np.{name}({', '.join(args)})"
    return source


# --- what backends know about each ufunc: one row each (the fields of Primitive) ---------------

_FLOAT, _NUMBER, _ANY = ("f",), ("f", "i"), ("f", "i", "b")


def _c(template: str, kinds: tuple = _FLOAT) -> dict:
    """One C expression for each dtype kind in `kinds` (runtime/backends/fusion.py)."""
    return {kind: template for kind in kinds}


def _arithmetic(operator: str, instruction: str, array_api: str, neutral: tuple) -> dict:
    """`a <operator> b`: the same expression in C and on Python floats, one LLVM instruction;
    an inf or nan in either operand makes the result inf or nan."""
    return dict(c=_c(f"{{0}} {operator} {{1}}", _NUMBER), python_float=f"{{0}} {operator} {{1}}",
                llvm_instruction=f"{instruction} {{type}} {{0}}, {{1}}", propagates_nan=(0, 1),
                array_api=array_api, neutral=neutral)


def _libm(libm: str, array_api: str | None = None, *, math_function=None,
          propagates: bool = False, silent: bool = False) -> dict:
    """A function of one float that the C library computes (`tanh`), and the array API as a
    function of floats where it has one; `propagates`: inf or nan in gives inf or nan out."""
    return dict(libm=libm, c=_c(f"{libm}({{0}})"), math=math_function, silent=silent,
                propagates_nan=(0,) if propagates else (), array_api=array_api,
                float_only=array_api is not None)


def _rounding(libm: str, array_api: str | None) -> dict:
    """floor and its kin: exact in C, in LLVM's intrinsic and in the array API's function."""
    return dict(libm=libm, c=_c(f"{libm}({{0}})"), llvm_intrinsic=libm, array_api=array_api)


def _binary_libm(libm: str, array_api: str, float_only: bool = True) -> dict:
    """A function of two floats that the C library computes (`pow`)."""
    return dict(libm=libm, c=_c(f"{libm}({{0}}, {{1}})"), array_api=array_api,
                float_only=float_only)


def _comparison(operator: str, predicate: str, array_api: str) -> dict:
    """NumPy's comparisons are false with a nan, except not_equal: ordered predicates (olt),
    and the unordered une for not_equal."""
    return dict(c=_c(f"{{0}} {operator} {{1}}", _ANY), llvm_compare=predicate, array_api=array_api)


def _on_bools(instruction: str, c: str | None = None, array_api: str | None = None) -> dict:
    """Logic on bools: one LLVM instruction on i1 values (a C form where GPU kernels have one)."""
    return dict(c=None if c is None else {"b": c}, llvm_instruction=instruction,
                llvm_bools=True, array_api=array_api)


def _select(predicate: str, nan_operand: int, c: dict, array_api: str | None = None) -> dict:
    """`(a <predicate> b || isnan(operand)) ? a : b`: maximum and minimum give NaN if either is
    NaN (and b where they are equal: maximum(-0.0, 0.0) is 0.0), fmax and fmin the other
    operand where one is NaN (C's fmax does that, not NumPy's maximum)."""
    return dict(c=c, llvm_select=(predicate, nan_operand), array_api=array_api)


ELEMENTWISE_FACTS = {
    # -0.0 + x and x + -0.0 are x, +0.0 + x not; x - 0.0 is x, x - (-0.0) is x + 0.0
    "add": _arithmetic("+", "fadd", "add", neutral=(0, (0, 1), True)),
    "subtract": _arithmetic("-", "fsub", "subtract", neutral=(0, (1,), False)),
    "multiply": _arithmetic("*", "fmul", "multiply", neutral=(1, (0, 1), None)),
    "divide": dict(c=_c("{0} / {1}"), python_float="{0} / {1}", neutral=(1, (1,), None),
                   llvm_instruction="fdiv {type} {0}, {1}", array_api="divide", float_only=True),
    "negative": dict(c=_c("-{0}", _NUMBER), python_float="-{0}",
                     llvm_instruction="fneg {type} {0}", propagates_nan=(0,),
                     array_api="negative"),
    # x + -0.0 is x, for -0.0 and nan too
    "positive": dict(python_float="+{0}", llvm_instruction="fadd {type} {0}, {negative_zero}",
                     propagates_nan=(0,), array_api="positive"),
    "square": dict(c=_c("{0} * {0}", _NUMBER), python_float="{0} * {0}",
                   llvm_instruction="fmul {type} {0}, {0}", propagates_nan=(0,),
                   array_api="square"),
    "reciprocal": dict(llvm_instruction="fdiv {type} {one}, {0}", array_api="reciprocal"),
    "absolute": dict(libm="fabs", c=_c("fabs({0})"), python_float="abs({0})",
                     llvm_intrinsic="fabs", propagates_nan=(0,), array_api="abs"),
    "fabs": dict(llvm_intrinsic="fabs", propagates_nan=(0,), math=math.fabs),
    "sqrt": dict(libm="sqrt", c=_c("sqrt({0})"), python_float="math.sqrt({0})",
                 llvm_intrinsic="sqrt", propagates_nan=(0,), array_api="sqrt", float_only=True,
                 math=math.sqrt),
    "cbrt": _libm("cbrt", math_function=getattr(math, "cbrt", None), propagates=True),
    "exp": _libm("exp", "exp", math_function=math.exp),
    "exp2": _libm("exp2", math_function=getattr(math, "exp2", None)),  # (math's: Python 3.11)
    "expm1": _libm("expm1", "expm1", math_function=math.expm1),
    "log": _libm("log", "log", math_function=math.log, propagates=True),
    "log2": _libm("log2", "log2", math_function=math.log2, propagates=True),
    "log10": _libm("log10", "log10", math_function=math.log10, propagates=True),
    "log1p": _libm("log1p", "log1p", math_function=math.log1p, propagates=True),
    "sin": _libm("sin", "sin", math_function=math.sin, propagates=True),
    "cos": _libm("cos", "cos", math_function=math.cos, propagates=True),
    "tan": _libm("tan", "tan", math_function=math.tan, propagates=True),
    "arcsin": _libm("asin", "asin", math_function=math.asin, propagates=True),
    "arccos": _libm("acos", "acos", math_function=math.acos, propagates=True),
    "arctan": _libm("atan", "atan", math_function=math.atan, silent=True),
    "sinh": _libm("sinh", "sinh", math_function=math.sinh, propagates=True),
    "cosh": _libm("cosh", "cosh", math_function=math.cosh, propagates=True),
    "tanh": _libm("tanh", "tanh", math_function=math.tanh, silent=True),
    "arcsinh": _libm("asinh", "asinh", math_function=math.asinh, propagates=True),
    "arccosh": _libm("acosh", "acosh", math_function=math.acosh, propagates=True),
    "arctanh": _libm("atanh", "atanh", math_function=math.atanh, propagates=True),
    "floor": _rounding("floor", "floor"),
    "ceil": _rounding("ceil", "ceil"),
    "trunc": _rounding("trunc", "trunc"),
    "rint": _rounding("rint", None),
    "power": dict(_binary_libm("pow", "pow", float_only=False), neutral=(1, (1,), None)),
    "arctan2": dict(_binary_libm("atan2", "atan2"), math=math.atan2),
    "hypot": dict(_binary_libm("hypot", "hypot"), math=math.hypot),
    "logaddexp": dict(array_api="logaddexp", float_only=True),
    "copysign": dict(array_api="copysign", float_only=True, math=math.copysign),
    "fmod": dict(math=math.fmod),
    "degrees": dict(math=math.degrees),
    "radians": dict(math=math.radians),
    "nextafter": dict(array_api="nextafter", float_only=True),
    "maximum": _select("ogt", 0, {"f": "({0} >= {1} || isnan({0})) ? {0} : {1}",
                                  "i": "max({0}, {1})"}, "maximum"),
    "minimum": _select("olt", 0, {"f": "({0} <= {1} || isnan({0})) ? {0} : {1}",
                                  "i": "min({0}, {1})"}, "minimum"),
    "fmax": _select("oge", 1, _c("fmax({0}, {1})")),
    "fmin": _select("ole", 1, _c("fmin({0}, {1})")),
    "greater": _comparison(">", "ogt", "greater"),
    "greater_equal": _comparison(">=", "oge", "greater_equal"),
    "less": _comparison("<", "olt", "less"),
    "less_equal": _comparison("<=", "ole", "less_equal"),
    "equal": _comparison("==", "oeq", "equal"),
    "not_equal": _comparison("!=", "une", "not_equal"),
    "logical_and": _on_bools("and {type} {0}, {1}", "{0} && {1}", "logical_and"),
    "logical_or": _on_bools("or {type} {0}, {1}", "{0} || {1}", "logical_or"),
    "logical_xor": _on_bools("xor {type} {0}, {1}", array_api="logical_xor"),
    "logical_not": _on_bools("xor {type} {0}, {true}", "!{0}", "logical_not"),
    "bitwise_and": _on_bools("and {type} {0}, {1}"),
    "bitwise_or": _on_bools("or {type} {0}, {1}"),
    "bitwise_xor": _on_bools("xor {type} {0}, {1}"),
    "invert": _on_bools("xor {type} {0}, {true}", array_api="bitwise_invert"),
    **{name: dict(array_api=name) for name in (
        "sign", "isnan", "isinf", "isfinite", "signbit", "floor_divide", "remainder")},
    "conjugate": dict(array_api="conj"),
}


def _register_ufuncs() -> None:
    for attribute in dir(np):
        ufunc = getattr(np, attribute)
        if not isinstance(ufunc, np.ufunc) or ufunc.signature is not None:
            continue  # matmul and the other generalized ufuncs are in linalg.py
        if ufunc.__name__ in primitives:
            continue  # an alias: np.abs is np.absolute
        register(Primitive(
            ufunc.__name__, ufunc, _ufunc_rule(ufunc), source=_ufunc_source(ufunc.__name__),
            fresh=True, writes_into=tuple(range(ufunc.nin)) if ufunc.nout == 1 else (),
            takes_out=INPUTS_ORDER if ufunc.nout == 1 else None, batching=elementwise_batching,
            **ELEMENTWISE_FACTS.get(ufunc.__name__, {})))


# --- `**` on NumPy scalars ---------------------------------------------------------------------
# NumPy computes `a ** b` on two numbers (a NumPy scalar such as np.sum's result, or a Python
# number) with its scalar arithmetic, C's pow; arrays and np.power use the power ufunc, whose
# loop takes a square root for an exponent of 0.5: -0.0 and nan for -0.0 and -inf where pow
# gives 0.0 and inf, and a last bit that differs for about one value in a thousand. A traced
# 0-d value is taken for a NumPy scalar, as NumPy's 0-d results are, unless it is a view, or the
# result of one of ZERO_D_ARRAYS (np.copy, np.array, np.where, np.zeros(())) or a 0-d array
# argument (runtime/tracing/signature.py traces those apart from NumPy scalars).
ZERO_D_ARRAYS = frozenset({"copy", "where", "full"})


def scalar_power(base, exponent):
    """`base ** exponent` as NumPy's scalar arithmetic computes it (see above)."""
    return _number(base) ** _number(exponent)


def _number(value):
    return value[()] if isinstance(value, np.ndarray) else value


# NumPy's scalar `**` is the C library's pow, which math.pow calls too (its errors, where NumPy
# would warn, hand over to NumPy: runtime/passes/floats.py). Batched, it is the power ufunc of
# the stacked numbers, as NumPy's `**` of arrays is: it may differ from pow in the last bit.
define_runtime_function("scalar_power", scalar_power, _ufunc_rule(np.power), fresh=True,
                        libm="pow", python_float="math.pow({0}, {1})", math=math.pow,
                        batching=lambda call: bind("power", *call.args))


def power(base, exponent):
    """A traced value's `**` (and its reflection): NumPy's scalar `**` where both are numbers
    (a 0-d traced value that is no view, a Python or NumPy number) and one is a float, else an
    array's `**`: the power ufunc, or the ufunc of its fast path (below)."""
    if _scalar_operand(base) and _scalar_operand(exponent):
        kinds = {np.dtype(_dtype_of(value)).kind for value in (base, exponent)}
        if "f" in kinds and "c" not in kinds:
            return bind("scalar_power", base, exponent)
        return apply_ufunc(np.power, "__call__", base, exponent)
    fast = _array_power_ufunc(base, exponent)
    if fast is not None:
        return apply_ufunc(fast, "__call__", base)
    return apply_ufunc(np.power, "__call__", base, exponent)


# An array's `**` takes three exponents given as a Python int or float (not a bool, not a NumPy
# number) apart (fast_scalar_power, numpy/_core/src/multiarray/number.c): `a ** 2` is
# np.square(a) for any dtype, `a ** -1` np.reciprocal(a) and `a ** 0.5` np.sqrt(a) for floats
# and complex numbers. The power loop of integers, float32 and float64 computes those exponents
# so too, bit for bit (tests/runtime/test_traced_edge_cases.py checks), so `power` stays for
# them (runtime/passes/scalars.py rewrites it); a bool array's square is int8 where its power is
# int64, and the float16, longdouble and complex power loops round otherwise.
_ARRAY_POWER_UFUNCS = {(int, 2): np.square, (int, -1): np.reciprocal, (float, 0.5): np.sqrt}
_POWER_LOOP_AGREES = frozenset(np.dtype(t) for t in (np.float32, np.float64))


def _array_power_ufunc(base, exponent):
    """The ufunc NumPy's `base ** exponent` of an array calls instead of power, if it differs."""
    if not is_traced(base):
        return None
    dtype = base.aval.dtype
    if dtype.kind == "b" and hasattr(type(exponent), "_weak") and exponent._weak and \
            exponent.dtype.kind == "i":  # a Python int whose value the trace does not know
        raise UntraceableError(
            "autotrace cannot trace `**` of a bool array to a Python int that a traced loop or "
            "branch carries: NumPy's result is int8 where the int is 2, int64 otherwise; write "
            "np.square(x) or np.power(x, n)")
    if type(exponent) not in (int, float):
        return None
    ufunc = _ARRAY_POWER_UFUNCS.get((type(exponent), exponent))
    if ufunc is None or dtype.kind in "iu" or dtype in _POWER_LOOP_AGREES:
        return None
    return ufunc if ufunc is np.square or dtype.kind in "fc" else None


def _scalar_operand(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, float, complex, np.number)):
        return True
    aval = getattr(value, "aval", None)
    return isinstance(aval, AbstractArray) and aval.shape == () and is_traced(value) and \
        getattr(value, "_link", None) is None and \
        value.graph_var not in getattr(value._builder, "zero_d_arrays", ())


def _dtype_of(value):
    aval = getattr(value, "aval", None)
    return aval.dtype if isinstance(aval, AbstractArray) else np.asarray(value).dtype


def apply_ufunc(ufunc: np.ufunc, method: str, *inputs, **kwargs):
    """What a tracer's `__array_ufunc__` does: bind the ufunc (or its method) as a primitive.
    With `dtype=`, the ufunc runs on its inputs cast as NumPy casts them: to the loop it picks
    for that output dtype in a call, to that dtype in a reduction."""
    if method == "outer":  # as NumPy computes it; both operands arrays, none weak
        if kwargs.get("where", True) is not True:
            raise UntraceableError(masked_outer_message(ufunc.__name__))
        a, b = (v if is_traced(v) or isinstance(v, np.ndarray) else np.asarray(v) for v in inputs)
        return apply_ufunc(ufunc, "__call__", np.reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)
    dtype = kwargs.pop("dtype", None)
    function = ufunc_methods.get((ufunc.__name__, method))  # filled by reduce.py
    summed = (ufunc, method) == (np.add, "reduce")  # where=: by np.sum's binding, as traced
    masked = summed or getattr(function, "takes_where", False)  # (np.logaddexp.reduce's too)
    if kwargs.get("where", None) is True:  # (NumPy's default: every element)
        del kwargs["where"]
    if method == "__call__" and kwargs.get("where", None) is not None:
        raise UntraceableError(unmasked_out_message(ufunc.__name__))  # (with out=: tracer.py)
    reject_arguments(f"numpy.{ufunc.__name__}", where=None if masked else kwargs.pop("where", None),
                     casting=kwargs.pop("casting", None), order=kwargs.pop("order", None),
                     subok=kwargs.pop("subok", None))
    if dtype is not None and method == "__call__":
        inputs = _in_loop_dtypes(ufunc, inputs, np.dtype(dtype))
    elif dtype is not None:
        if function is not None and "dtype" in inspect.signature(function).parameters:
            kwargs["dtype"] = dtype  # np.sum(a, dtype=...): NumPy reduces in that dtype
        else:
            inputs = (_cast_to(inputs[0], np.dtype(dtype)), *inputs[1:])
    if method == "__call__" and not kwargs:
        if ufunc.__name__ not in primitives:
            raise untraceable(f"numpy.{ufunc.__name__}")
        check_unknown_sizes(ufunc.__name__, inputs, core=2 if ufunc is np.matmul else 0)
        return bind(ufunc.__name__, *inputs)
    if function is None or "out" in kwargs:
        keywords = ", ".join(f"{keyword}=" for keyword in kwargs)
        raise untraceable(f"numpy.{ufunc.__name__}.{method}" if method != "__call__"
                          else f"numpy.{ufunc.__name__} with {keywords}")
    kwargs.setdefault("axis", 0)  # ufunc.reduce and .accumulate default to the first axis
    return (numpy_functions[function] if summed else function)(*inputs, **kwargs)


def _in_loop_dtypes(ufunc: np.ufunc, inputs: tuple, dtype: np.dtype) -> tuple:
    """The inputs of `ufunc(*inputs, dtype=dtype)`, each cast to its dtype in the loop NumPy
    picks for an output of `dtype` (NumPy's error where none casts to it by "same_kind");
    Python numbers stay weak, as the loop's dtype takes them."""
    if ufunc.nout != 1:
        raise untraceable(f"numpy.{ufunc.__name__} with dtype=")
    kinds = tuple(value if isinstance(value, (int, float, complex)) and not isinstance(
        value, bool) else _dtype_of(value) for value in inputs)
    loop = ufunc.resolve_dtypes(tuple(kind if isinstance(kind, np.dtype) else type(kind)
                                      for kind in kinds) + (None,),
                                signature=(None,) * ufunc.nin + (dtype,))
    return tuple(value if not isinstance(kind, np.dtype) else _cast_to(value, wanted)
                 for value, kind, wanted in zip(inputs, kinds, loop))


def _cast_to(value, dtype: np.dtype):
    if is_traced(value):
        return value if value.dtype == dtype else astype(value, dtype)
    return np.asarray(value, dtype=dtype)


def _ufunc_binding(ufunc):
    return lambda *inputs, **kwargs: apply_ufunc(ufunc, "__call__", *inputs, **kwargs)


_register_ufuncs()
for _ufunc in [getattr(np, name) for name in dir(np)]:
    if isinstance(_ufunc, np.ufunc):  # a tracer's __array_ufunc__ needs no entry; callers might
        numpy_functions.setdefault(_ufunc, _ufunc_binding(_ufunc))


# --- where, clip, astype, copy (elementwise_functions.py: round, isclose, ...) ---------------

def elementwise_rule(function):
    """Shapes broadcast; the dtype is what `function` gives on 0-d examples."""
    def abstract_eval(*avals, **attrs):
        shape = broadcast_shapes(*[shape_of(aval) for aval in avals])
        device, origins = device_of_inputs(avals), broadcast_origins(avals, shape)
        dtypes = elementwise_dtypes(function, avals, attrs)
        outputs = tuple(AbstractArray(shape, dtype, device, origins) for dtype in dtypes)
        return outputs[0] if len(outputs) == 1 else outputs
    return abstract_eval


register(Primitive("where", np.where, elementwise_rule(np.where),
                   source=lambda args, attrs: f"np.where({', '.join(args)})", fresh=True,
                   c=_c("{0} ? {1} : {2}", _ANY), batching=elementwise_batching))


@traces(np.where)
def bind_where(condition, x=None, y=None):
    if x is None and y is None:
        raise untraceable_shape("numpy.where with one argument")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    check_unknown_sizes("numpy.where", (condition, x, y))
    return bind("where", *cast_weak_inputs(np.where, (condition, x, y)))


register(Primitive("clip", np.clip, elementwise_rule(np.clip), source=_ufunc_source("clip"),
                   fresh=True, writes_into=(0,), takes_out=INPUTS_ORDER,
                   batching=elementwise_batching))


@traces(np.clip)
def bind_clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
              max=np._NoValue, **kwargs):
    reject_arguments("numpy.clip", out=out, **{key: value for key, value in kwargs.items()})
    lower = a_min if a_min is not np._NoValue else min
    upper = a_max if a_max is not np._NoValue else max
    lower = None if lower is np._NoValue else lower
    upper = None if upper is np._NoValue else upper
    check_unknown_sizes("numpy.clip", (a, lower, upper))
    return bind("clip", *cast_weak_inputs(np.clip, (a, *clip_bounds(a, lower, upper))))


for _function in (np.clip, np.round, np.conjugate):
    array_method(_function)
array_method(np.conjugate, name="conj")
# x.conj() and x.conjugate() of a real x give x itself (Tracer.conjugate too): no view to keep
declare(np.conjugate, view=lambda result, x: None)


@traces(np.isposinf)
def bind_isposinf(x, out=None):
    reject_arguments("numpy.isposinf", out=out)
    return np.logical_and(np.isinf(x), np.logical_not(np.signbit(x)))


@traces(np.isneginf)
def bind_isneginf(x, out=None):
    reject_arguments("numpy.isneginf", out=out)
    return np.logical_and(np.isinf(x), np.signbit(x))


register(Primitive(
    "astype", lambda x, dtype: x.astype(dtype),
    lambda aval, dtype: AbstractArray(aval.shape, dtype, aval.device, aval.origins),
    source=lambda args, attrs: f"{args[0]}.astype({literal_source(attrs['dtype'])})",
    fresh=True, array_api_source=lambda args, attrs: (
        f"np.astype({args[0]}, {literal_source(attrs['dtype'])})"),
    batching=elementwise_batching))


def astype(x, dtype, copy=True):
    """`x.astype(dtype)` as an op, a new array (of x's dtype too) as NumPy's; but with
    copy=False, x of that dtype already is NumPy's result itself, and so this one's."""
    dtype = static_dtype(dtype)
    if not copy and x.dtype == dtype:
        return x
    return bind("astype", python_number_as(x, dtype), dtype=dtype)


@traces(getattr(np, "astype", astype))
def bind_astype(x, dtype, /, *, copy=True, device=None):
    return astype(x, dtype, copy)


def _copy_source(args, attrs) -> str:
    order = attrs.get("order", "K")
    return f"np.copy({args[0]})" if order == "K" else f"np.copy({args[0]}, order={order!r})"


# `order="C"` makes a row-major copy of a view (runtime/passes/layout.py asks for one).
# A Python float is a new value, as np.copy's result is a new array.
register(Primitive("copy", np.copy, lambda aval, order="K": aval, source=_copy_source,
                   fresh=True, python_float="{0}", batching=elementwise_batching))


@traces(np.copy, makes_array=True)
def bind_copy(a, order="K", subok=False):
    order = static(order, "np.copy's order")
    if order not in ("K", "A", "C", "F"):
        raise ValueError(f"np.copy: order must be 'K', 'A', 'C' or 'F', not {order!r}")
    return bind("copy", a) if order == "K" else bind("copy", a, order=order)


# --- creation from a traced value: zeros_like and friends ---------------------------------------

def _full(shape, fill_value, dtype):
    return np.full(shape, fill_value, dtype)


def _full_source(args, attrs):
    shape, value, dtype = attrs["shape"], attrs["fill_value"], attrs["dtype"]
    if value == 0 and not isinstance(value, bool):
        return f"np.zeros({literal_source(shape)}, {literal_source(dtype)})"
    if value == 1 and not isinstance(value, bool):
        return f"np.ones({literal_source(shape)}, {literal_source(dtype)})"
    return f"np.full({literal_source(shape)}, {literal_source(value)}, {literal_source(dtype)})"


register(Primitive("full", _full, lambda shape, fill_value, dtype: AbstractArray(shape, dtype),
                   source=_full_source, fresh=True, batching=never_batched))


def _full_like_source(args, attrs):
    value, dtype = attrs["fill_value"], literal_source(attrs["dtype"])
    if value in (0, 1) and not isinstance(value, bool):
        return f"np.{'zeros' if value == 0 else 'ones'}_like({args[0]}, {dtype})"
    return f"np.full_like({args[0]}, {literal_source(value)}, {dtype})"


# With a dimension of unknown size, `np.zeros_like(x)` cannot be `full[shape=...]`: it takes x.
register(Primitive(
    "full_like", lambda a, fill_value, dtype: np.full_like(a, fill_value, dtype),
    lambda aval, fill_value, dtype: AbstractArray(aval.shape, dtype, aval.device, aval.origins),
    source=_full_like_source, fresh=True, batching=elementwise_batching))


def full_like(a, fill_value, dtype=None, shape=None):
    """An array like `a` (or of `shape`) filled with `fill_value`, as an op of a's trace."""
    shape = a.shape if shape is None else static(static_shape(
        shape if isinstance(shape, (tuple, list)) else (shape,)), "the shape of numpy.full_like")
    dtype = np.dtype(dtype) if dtype is not None else a.dtype
    if getattr(fill_value, "_builder", None) is not None:  # (a Python int checked to fit)
        fill_value = python_number_as(fill_value, dtype)
        return astype(np.broadcast_to(fill_value, shape), dtype)
    fill_value = static(fill_value, "the fill value of numpy.full_like")
    if None in shape:
        if shape != a.shape:
            raise unknown_dimension_error(f"numpy.full_like with shape={shape}", a.aval)
        return bind("full_like", a, fill_value=fill_value, dtype=dtype)
    return bind_like(a, "full", shape=shape, fill_value=fill_value, dtype=dtype)


@traces(np.zeros_like, np.empty_like, makes_array=True)
def bind_zeros_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return full_like(a, 0, dtype, shape)


@traces(np.ones_like, makes_array=True)
def bind_ones_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return full_like(a, 1, dtype, shape)


@traces(np.full_like, makes_array=True)
def bind_full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return full_like(a, fill_value, dtype, shape)
