"""Which C function the scalar kernel (runtime/backends/llvm/cpu_scalar.py) calls for a float32
transcendental op, so that its results stay within MAX_ULPS of NumPy's.

NumPy computes sin, cos, exp, log and tanh of float32 values with SIMD code of its own on CPUs
with AVX2 or AVX-512 (and Intel's SVML for more functions on AVX-512), the C library's float
functions elsewhere; they round differently in the last bits. `float32_function(name)` measures
once per process, on a fixed spread of values, how far the C library's float function (`sinf`)
is from NumPy's float32 ufunc, then its double one rounded to float (`(float) tanh((double) x)`,
nearly always the exactly rounded result); the first within MAX_ULPS at every value, with
NumPy's infinities, nans and signs of zero, is the one the kernel calls. Where neither is, the op
is not compiled in float32 and its graph stays NumPy's.

Measured on an AVX2 CPU (glibc 2.36, NumPy 2.4): sinf and cosf within 1 ulp of NumPy, expf
within 2, tanhf 3 but tanh in double within 1, logf 3 and log in double 3 (NumPy's AVX2 logf is
up to 3 ulps from the exact value): log of float32 stays NumPy's there. The other functions
(tan, sinh, expm1, log1p, ..., the functions of two values) are the C library's float
functions in NumPy too: 0 ulps.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from . import compiler as llvm
from ...primitives.primitive import primitives

# The largest difference from NumPy's float32 result allowed, in units in the last place, as
# the fused kernels' libmvec functions (runtime/backends/llvm/cpu_kernels.py): an ulp or two.
MAX_ULPS = 2
PROBES = 1 << 17  # values probed per function: a few milliseconds


def probe_values(count: int, seed: int) -> np.ndarray:
    """float32 values spread over signs and exponents 2**-30 .. 2**20, dense near [-4, 4], with
    0, -0, infinities and nan first: a fixed set."""
    rng = np.random.default_rng(seed)
    near = rng.uniform(-4.0, 4.0, count // 2)
    spread = np.exp2(rng.uniform(-30.0, 20.0, count - count // 2)) * rng.choice([-1.0, 1.0],
                                                                              count - count // 2)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5]
    return np.concatenate([special, near, spread]).astype(np.float32)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """How many float32 values lie between `got` and `want` (0 where both are nan; a very
    large number where only one is nan, or their signs of zero differ)."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    ordered = [np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
               for bits in (got.view(np.int32).astype(np.int64),
                            want.view(np.int32).astype(np.int64))]
    distance = np.abs(ordered[0] - ordered[1])
    distance[np.isnan(got) & np.isnan(want)] = 0
    distance[np.isnan(got) != np.isnan(want)] = 1 << 40
    distance[(got == 0) & (want == 0) & (np.signbit(got) != np.signbit(want))] = 1 << 40
    distance[np.isinf(got) != np.isinf(want)] = 1 << 40
    return distance


@functools.cache
def float32_function(name: str) -> tuple[str, str] | None:
    """(C function, the LLVM type it computes in: "float" or "double") for the op `name` on
    float32 values, or None where neither version is within MAX_ULPS of NumPy (see above)."""
    libm, numpy_function = primitives[name].libm, primitives[name].impl
    arity = getattr(numpy_function, "nin", None) or numpy_function.__code__.co_argcount
    arguments = [probe_values(PROBES, seed) for seed in range(arity)]
    with np.errstate(all="ignore"):
        if arity == 2:  # exponents mostly small: pow of large ones is 0 or inf
            arguments[1] = np.where(np.abs(arguments[1]) <= 16, arguments[1],
                                    np.fmod(arguments[1], np.float32(7.0)))
        want = numpy_function(*arguments)
        zero_d = [numpy_function(*(np.asarray(a[i]) for a in arguments)) for i in range(256)]
    for function, kind in ((libm + "f", "float"), (libm, "double")):
        got = _call_each(function, kind, arity, arguments)
        if got is None:
            continue
        if (ulp_distance(got, want).max() <= MAX_ULPS
                and ulp_distance(got[:256], np.array(zero_d, np.float32)).max() <= MAX_ULPS):
            return function, kind
    return None


def _call_each(function: str, kind: str, arity: int, arguments: list) -> np.ndarray | None:
    """`function` of the C library on each value (in double, then rounded, for "double"), by a
    compiled loop that calls it as the scalar kernel does."""
    name = f"autotrace_probe_{function}"
    reads, converts = [], []
    for number in range(arity):
        reads += [f"  %p{number} = getelementptr float, ptr %in{number}, i64 %i",
                  f"  %x{number} = load float, ptr %p{number}"]
        converts.append(f"%x{number}" if kind == "float" else f"%d{number}")
        if kind == "double":
            reads.append(f"  %d{number} = fpext float %x{number} to double")
    arguments_text = ", ".join(f"{kind} {text}" for text in converts)
    result = "%r" if kind == "float" else "%rd"
    ir = "\n".join([
        f"declare {kind} @{function}({', '.join([kind] * arity)})",
        f"define void @{name}(ptr %in0, ptr %in1, ptr %out, i64 %n) {{",
        "entry:", "  br label %loop", "loop:",
        "  %i = phi i64 [ 0, %entry ], [ %next, %loop ]", *reads,
        f"  {result} = call {kind} @{function}({arguments_text})",
        *([] if kind == "float" else ["  %r = fptrunc double %rd to float"]),
        "  %q = getelementptr float, ptr %out, i64 %i", "  store float %r, ptr %q",
        "  %next = add i64 %i, 1", "  %done = icmp eq i64 %next, %n",
        "  br i1 %done, label %exit, label %loop", "exit:", "  ret void", "}", ""])
    try:
        address = llvm.compile_module(ir, [name])[name]
    except RuntimeError:  # no such function in this C library
        return None
    inputs = [np.ascontiguousarray(values, np.float32) for values in arguments]
    inputs += inputs[:1] * (2 - arity)
    out = np.empty_like(inputs[0])
    pointer = ctypes.c_void_p
    run = ctypes.CFUNCTYPE(None, pointer, pointer, pointer, ctypes.c_int64)(address)
    run(inputs[0].ctypes.data, inputs[1].ctypes.data, out.ctypes.data, len(out))
    return out


_STRICT = {"oge": "ogt", "ole": "olt"}


@functools.cache
def float32_select(name: str) -> tuple[str, int] | None:
    """`Primitive.llvm_select` of maximum, minimum, fmax or fmin as NumPy computes it on float32
    values: of two equal values (0.0 and -0.0) NumPy's float32 fmax and fmin give the second
    where its SIMD loops run (the float64 ones, on 0-d values, the first). None where NumPy
    gives neither the first nor the second for both orders."""
    predicate, nan_operand = primitives[name].llvm_select
    ufunc = primitives[name].impl
    zero, negative_zero = np.asarray(0.0, np.float32), np.asarray(-0.0, np.float32)
    signs = (bool(np.signbit(ufunc(zero, negative_zero))),
             bool(np.signbit(ufunc(negative_zero, zero))))
    if signs == (True, False):  # the second
        return _STRICT.get(predicate, predicate), nan_operand
    if signs == (False, True) and predicate in _STRICT:  # the first
        return predicate, nan_operand
    return None
