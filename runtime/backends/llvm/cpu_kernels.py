"""The vector instructions of fused elementwise kernels, for runtime/backends/llvm/cpu_fusion.py.

A kernel is described by a `KernelSpec` (no graph, no NumPy calls): its inputs (arrays of the
loop's length, scalars, or rows that repeat), its steps (one NumPy operation each, on inputs,
earlier steps or literals, in the dtypes NumPy computes it in), which steps it writes out and
which it adds up. `write_steps` writes the steps as LLVM IR on `<width x double>` vectors (a
`VectorBody`); runtime/backends/llvm/cpu_loop.py puts them in a loop, and runtime/backends/llvm/
cpu_reductions.py adds up the sums.

Transcendental functions call glibc's vector math library (libmvec) where it has them and libm
once per lane where it does not, except tanh: autotrace's own vector version, written into the
module (runtime/backends/llvm/cpu_vector_math.py) where the CPU has a fused multiply-add.
NumPy's NaN rules for maximum, minimum, fmax and fmin are written as compares and selects. No
fast-math flags: arithmetic is IEEE, as NumPy's, bit for bit; transcendental functions are
glibc's, which differ from NumPy's own by an ulp or two (NumPy brings its own SIMD versions of
some), and tanh is within 1.5 ulp of the correctly rounded result, 2 of NumPy's.
NumPy's warnings (an invalid value, a division by zero, an overflow): a kernel returns whether
it raised one of those floating-point exceptions (runtime/backends/llvm/cpu_loop.py), and the fused
call then runs the NumPy calls the region replaced (runtime/backends/llvm/cpu_fusion.py), as it does
under any other NumPy error state (`np.errstate(all="raise")`, `np.seterr`), so NumPy warns or
raises as it would unfused.
"""
from __future__ import annotations

import ctypes
import functools
import math
import struct
from dataclasses import dataclass

import numpy as np

from . import compiler as llvm
from .cpu_vector_math import inline_function
from ...primitives.primitive import primitives

FLOAT64, FLOAT32, BOOL = np.dtype(np.float64), np.dtype(np.float32), np.dtype(bool)
# NumPy dtype -> LLVM type of one value in registers, and in memory.
REGISTER_TYPES = {FLOAT64: "double", FLOAT32: "float", BOOL: "i1"}
MEMORY_TYPES = {FLOAT64: "double", FLOAT32: "float", BOOL: "i8"}

# Where a NumPy array object keeps its data pointer: right after the object header
# (PyArrayObject_fields: PyObject_HEAD; char *data; ...).
ARRAY_DATA_OFFSET = object.__basicsize__


@functools.cache
def array_layout_known() -> bool:
    """Whether NumPy arrays keep their data pointer at ARRAY_DATA_OFFSET in this interpreter
    (a free-threaded or debug build has a larger object header): kernels rely on it."""
    probe = np.arange(3.0)
    return ctypes.c_void_p.from_address(id(probe) + ARRAY_DATA_OFFSET).value == (
        probe.ctypes.data)


def computes(primitive, dtype_kind: str) -> bool:
    """Whether a kernel computes an op of `primitive` on values of this dtype kind ("f" float,
    "b" bool), from its LLVM form or libm function (`where` either way)."""
    if primitive.name == "where":
        return True
    if dtype_kind == "b":
        return primitive.llvm_bools
    return bool(primitive.llvm_instruction and not primitive.llvm_bools
                or primitive.llvm_intrinsic or primitive.llvm_compare
                or primitive.llvm_select or primitive.libm)


# Inputs below which libm's exp and exp2 give exactly 0.0 (under half the smallest subnormal:
# exp(x) < 2 ** -1075 for x < -745.13 in float64, 2 ** -150 for x < -103.97 in float32).
# libmvec computes such a lane apart, by a scalar call, at the cost of a whole vector or more:
# a causal attention's softmax, whose masked scores are -1e9, took 4.6 ms for (32, 4, 64, 64)
# float64 scores, against 0.79 ms unmasked (AVX-512). A kernel computes those lanes' exp of 0
# instead and sets them to 0, the same result; NumPy's underflow flag, which the kernel does
# not watch (NumPy ignores underflow unless np.errstate says otherwise, where the kernel's
# NumPy version runs instead), is not raised.
UNDERFLOWS_BELOW = {("exp", FLOAT64): -746.0, ("exp", FLOAT32): -104.0,
                    ("exp2", FLOAT64): -1076.0, ("exp2", FLOAT32): -151.0}

# Integer exponents of `power` written as multiplies (np.power(x, 3) -> x * x * x).
MAX_INTEGER_EXPONENT = 8
# How an input is read (KernelSpec): an array of the loop's length, a 0-d value, or (a positive
# number) a row of that many elements read over and over.
ARRAY, SCALAR = -1, 0
MAX_WIDTH = 16  # float32 lanes in an AVX-512 register: periods are multiples of it


@dataclass(frozen=True)
class Step:
    """One operation: `operation` (a NumPy name, or `astype`) on `operands`, each ("input", i),
    ("step", j) or ("literal", value), computed in `loop_dtypes` (one per operand), giving
    `dtype`."""

    operation: str
    operands: tuple
    loop_dtypes: tuple
    dtype: np.dtype


@dataclass(frozen=True)
class KernelSpec:
    """A fused kernel: `inputs` as (dtype, period) pairs, `steps` in order, `outputs`, the
    indices of the steps it writes to memory, and the `reduce_sum` steps whose sums it returns:
    `sums` (indices of sums of all elements), `leading_sums` ((index, R) pairs: sums over the
    leading axes into a row of R elements) and `trailing_sums` ((index, L) pairs: one sum per
    row of L elements, over the trailing axes). A kernel with a `row_length` L runs row by row
    (runtime/backends/llvm/cpu_rows.py says what its inputs, steps and trailing sums may be).

    An input's period is ARRAY for an array of the loop's length, SCALAR for a 0-d value passed
    by value, or P > 0 for an array of P elements read over and over (a row broadcast along
    leading axes, a bias); P, R and L are multiples of MAX_WIDTH, so a vector never wraps
    around a row.
    """

    inputs: tuple
    steps: tuple
    outputs: tuple
    sums: tuple = ()
    leading_sums: tuple = ()
    trailing_sums: tuple = ()
    row_length: int = 0

    def dtypes(self) -> set:
        return {dtype for dtype, _ in self.inputs} | {step.dtype for step in self.steps}


def kernel_width(spec: KernelSpec) -> int:
    """Lanes per vector: as many float64 as a register holds if the kernel computes any float64
    (float32 values then fill half a register), else as many float32; two registers' worth
    (at most MAX_WIDTH) in a kernel that `interleaves`."""
    floats = spec.dtypes() - {BOOL}
    width = llvm.vector_width(FLOAT64 if FLOAT64 in floats or not floats else FLOAT32)
    return max(width, min(2 * width, MAX_WIDTH)) if interleaves(spec) else width


def interleaves(spec: KernelSpec) -> bool:
    """Whether the kernel computes several registers of values in each pass of its loop: where
    it computes a function of the C library as IR of its own (cpu_vector_math.py), tens of dependent
    instructions a value, too long a chain for the processor to overlap one pass with the next
    on its own. LLVM splits each instruction on a wide vector into one per register, side by
    side, so that the registers' chains run together: the GELU gradient on 1e5 values, AVX2
    (Zen 3), one core, 370 -> 310 us in float64 (4 -> 8 lanes), 156 -> 135 in float32 (8 ->
    16); four registers gain nothing more and take twice as long to compile. Not in a kernel
    that calls libmvec (its functions take one register), adds up sums (their order is its
    lanes') or runs row by row."""
    if spec.sums or spec.leading_sums or spec.trailing_sums or spec.row_length:
        return False
    inline = False
    for step in spec.steps:
        if computes_libm_function(step):
            if inline_function(primitives[step.operation].libm, step.loop_dtypes[0]) is None:
                return False
            inline = True
    return inline


def float_constant(value, dtype: np.dtype) -> str:
    """`value` as an LLVM constant of `dtype`: the exact bits, as hex of the double."""
    if dtype == BOOL:
        return "true" if value else "false"
    converted = float(dtype.type(value))
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", converted))[0]


class VectorBody:
    """Writes SSA instructions on vectors of `width` lanes into `lines`."""

    def __init__(self, width: int, lines: list, declarations: dict, prefix: str):
        self.width = width
        self.lines = lines
        self.declarations = declarations
        self.prefix = prefix
        self.count = 0

    def vector(self, dtype) -> str:
        return f"<{self.width} x {REGISTER_TYPES[dtype]}>"

    def suffix(self, dtype) -> str:
        return f"v{self.width}{'f64' if dtype == FLOAT64 else 'f32'}"

    def emit(self, instruction: str) -> str:
        name = f"%{self.prefix}{self.count}"
        self.count += 1
        self.lines.append(f"  {name} = {instruction}")
        return name

    def declare(self, name: str, signature: str) -> None:
        self.declarations[name] = signature

    def splat(self, value, dtype) -> str:
        return f"splat ({REGISTER_TYPES[dtype]} {float_constant(value, dtype)})"

    def call(self, function: str, result_type: str, arguments) -> str:
        self.declare(function, f"declare {result_type} @{function}("
                               f"{', '.join(t for t, _ in arguments)})")
        return self.emit(f"call {result_type} @{function}("
                         f"{', '.join(f'{t} {v}' for t, v in arguments)})")

    def convert(self, value: str, source, target) -> str:
        """`value` of dtype `source` as `target`, as NumPy casts it."""
        if source == target:
            return value
        vector_source, vector_target = self.vector(source), self.vector(target)
        if source == BOOL:
            return self.emit(f"uitofp {vector_source} {value} to {vector_target}")
        if target == BOOL:
            return self.emit(f"fcmp une {vector_source} {value}, zeroinitializer")
        operation = "fpext" if target == FLOAT64 else "fptrunc"
        return self.emit(f"{operation} {vector_source} {value} to {vector_target}")

    def libm(self, function: str, dtype, values) -> str:
        """libm's `function` on each lane: autotrace's own vector version where it has one
        (runtime/backends/llvm/cpu_vector_math.py), else one libmvec call, else one scalar call
        a lane."""
        inline = inline_function(function, dtype)
        if inline is not None:
            return inline(self, values[0], dtype)
        vector = self.vector(dtype)
        symbol = llvm.vector_math(function, dtype, self.width, len(values))
        if symbol is not None:
            zero_below = UNDERFLOWS_BELOW.get((function, dtype))
            if zero_below is None:
                return self.call(symbol, vector, [(vector, value) for value in values])
            # lanes whose result is 0 are given 0 to compute, and their result set to 0
            masks = f"<{self.width} x i1>"
            below = self.emit(f"fcmp olt {vector} {values[0]}, {self.splat(zero_below, dtype)}")
            safe = self.emit(f"select {masks} {below}, {vector} zeroinitializer, "
                             f"{vector} {values[0]}")
            computed = self.call(symbol, vector, [(vector, safe)])
            return self.emit(f"select {masks} {below}, {vector} zeroinitializer, "
                             f"{vector} {computed}")
        scalar = REGISTER_TYPES[dtype]
        name = function + ("f" if dtype == FLOAT32 else "")
        result = "poison"
        for lane in range(self.width):
            lanes = [self.emit(f"extractelement {vector} {value}, i32 {lane}")
                     for value in values]
            computed = self.call(name, scalar, [(scalar, item) for item in lanes])
            result = self.emit(f"insertelement {vector} {result}, {scalar} {computed}, "
                               f"i32 {lane}")
        return result

    def step(self, step: Step, operands: list) -> str:
        """The instructions of one step on operands already cast to its loop dtypes."""
        operation, dtype = step.operation, step.loop_dtypes[0]
        vector = self.vector(dtype)
        if operation == "astype":
            return operands[0]  # the cast to the loop dtype (the target) did it
        if operation == "where":
            result = self.vector(step.loop_dtypes[1])
            return self.emit(f"select <{self.width} x i1> {operands[0]}, "
                             f"{result} {operands[1]}, {result} {operands[2]}")
        primitive = primitives[operation]
        if primitive.llvm_instruction:
            return self.emit(primitive.llvm_instruction.format(
                *operands, type=vector, true="splat (i1 true)", one=self.splat(1.0, dtype),
                negative_zero=self.splat(-0.0, dtype)))
        if primitive.llvm_intrinsic:
            intrinsic = f"llvm.{primitive.llvm_intrinsic}.{self.suffix(dtype)}"
            return self.call(intrinsic, vector, [(vector, operands[0])])
        if primitive.llvm_compare:
            return self.emit(f"fcmp {primitive.llvm_compare} {vector} "
                             f"{operands[0]}, {operands[1]}")
        if primitive.llvm_select:
            compare, nan_operand = primitive.llvm_select
            ordered = self.emit(f"fcmp {compare} {vector} {operands[0]}, {operands[1]}")
            nan = self.emit(f"fcmp uno {vector} {operands[nan_operand]}, zeroinitializer")
            first = self.emit(f"or <{self.width} x i1> {ordered}, {nan}")
            return self.emit(f"select <{self.width} x i1> {first}, {vector} {operands[0]}, "
                             f"{vector} {operands[1]}")
        exponent = integer_exponent(step)
        if exponent is not None:
            return self.integer_power(operands[0], exponent, dtype)
        if operation == "power" and step.operands[1] == ("literal", 0.5):
            # NumPy computes x ** 0.5 as sqrt(x): (-inf) ** 0.5 is NaN, not pow's inf
            return self.call(f"llvm.sqrt.{self.suffix(dtype)}", vector, [(vector, operands[0])])
        return self.libm(primitive.libm, dtype, operands)

    def integer_power(self, base: str, exponent: int, dtype) -> str:
        """base ** exponent by squaring. A negative exponent takes the reciprocal first, as
        NumPy's power(x, -1) does, so that no intermediate power overflows where the result
        does not (1e80 ** -4 is 1e-320, not 1 / inf)."""
        vector = self.vector(dtype)
        if exponent == 0:
            return self.splat(1.0, dtype)  # pow(x, 0) is 1, NaN included
        if exponent < 0:
            base = self.emit(f"fdiv {vector} {self.splat(1.0, dtype)}, {base}")
        result, square, remaining = None, base, abs(exponent)
        while remaining:
            if remaining & 1:
                result = square if result is None else self.emit(
                    f"fmul {vector} {result}, {square}")
            remaining >>= 1
            if remaining:
                square = self.emit(f"fmul {vector} {square}, {square}")
        return result


def computes_libm_function(step: Step) -> bool:
    """Whether a kernel computes `step` as a function of the C library (tanh, exp, pow...):
    a call to libmvec or libm, or autotrace's own vector version of it (runtime/backends/llvm/
    cpu_vector_math.py), tens of instructions a value rather than an instruction or two
    (`VectorBody.step`)."""
    if step.operation in ("astype", "where", "reduce_sum", "reduce_max", "reduce_min", "mean"):
        return False
    primitive = primitives[step.operation]
    if (primitive.llvm_instruction or primitive.llvm_intrinsic or primitive.llvm_compare
            or primitive.llvm_select or integer_exponent(step) is not None):
        return False
    return not (step.operation == "power" and step.operands[1] == ("literal", 0.5))


def integer_exponent(step: Step) -> int | None:
    """The exponent of `power(x, k)` for a literal integer k small enough to multiply out."""
    if step.operation != "power" or step.operands[1][0] != "literal":
        return None
    value = step.operands[1][1]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not (math.isfinite(value) and value == int(value)
            and abs(value) <= MAX_INTEGER_EXPONENT):
        return None
    return int(value)


def write_steps(spec: KernelSpec, body: VectorBody, loaded: dict) -> list:
    """The steps on the loaded inputs: each step's value (a `reduce_sum` step's is the value it
    adds up, in its own dtype)."""
    values = []
    for step in spec.steps:
        operands = []
        for (kind, item), loop_dtype in zip(step.operands, step.loop_dtypes):
            if kind == "literal":
                operands.append(body.splat(item, loop_dtype))
                continue
            value, dtype = (loaded[item], spec.inputs[item][0]) if kind == "input" else (
                values[item], spec.steps[item].dtype)
            operands.append(body.convert(value, dtype, loop_dtype))
        values.append(operands[0] if step.operation == "reduce_sum" else body.step(step, operands))
    return values
