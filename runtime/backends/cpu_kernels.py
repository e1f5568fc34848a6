"""LLVM IR for fused elementwise kernels: one loop that reads each input once and writes each
output once, `width` elements at a time, for runtime/backends/cpu_fusion.py.

A kernel is described by a `KernelSpec` (no graph, no NumPy calls): its inputs (arrays of the
loop's length, scalars, or rows that repeat), its steps (one NumPy operation each, on inputs,
earlier steps or literals, in the dtypes NumPy computes it in) and which steps it writes out.
`kernel_ir(spec, name)` writes it as a function

    void name(i64 n, ptr array0, ..., double scalar0, ..., ptr output0, ..., ptr total0, ...)

where an array argument is the NumPy array object itself (its data pointer is read at
`ARRAY_DATA_OFFSET`, which saves the microsecond `array.ctypes.data` costs per argument), and a
total is a 0-d array that receives a sum of all elements of a step (see `_Sums`).

The body runs on `<width x double>` vectors; the last `n % width` elements are copied into
vector-sized stack buffers and run through the same body, so every element is computed by the
same instructions. Transcendental functions call glibc's vector math library (libmvec) where
it has them and libm once per lane where it does not; NumPy's NaN rules for maximum, minimum,
fmax and fmin are written as compares and selects. No fast-math flags: arithmetic is IEEE,
as NumPy's, bit for bit; transcendental functions are glibc's, which differ from NumPy's own
by an ulp or two (NumPy brings its own SIMD versions of some), and a float32 sum is added in
float64 (NumPy adds float32 pairwise in float32), so it is the more accurate of the two.
Kernels do not warn as NumPy does on an invalid value, a division by zero or an overflow; under
any other NumPy error state (`np.errstate(all="raise")`, `np.seterr`) the region runs as the
NumPy calls it replaced (runtime/backends/cpu_fusion.py), which warn or raise as NumPy does.
"""
from __future__ import annotations

import ctypes
import functools
import math
import struct
from dataclasses import dataclass

import numpy as np

from runtime.backends import llvm
from runtime.fusion import LIBM_NAMES

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


_ARITHMETIC = {"add": "fadd", "subtract": "fsub", "multiply": "fmul", "divide": "fdiv"}
_INTRINSICS = {"absolute": "fabs", "sqrt": "sqrt", "floor": "floor", "ceil": "ceil",
               "trunc": "trunc", "rint": "rint"}
_COMPARISONS = {"greater": "ogt", "greater_equal": "oge", "less": "olt", "less_equal": "ole",
                "equal": "oeq", "not_equal": "une"}
# NumPy's rules as `(a <compare> b || isnan(<operand>)) ? a : b`: maximum and minimum return
# NaN if either is NaN (and b when they are equal: maximum(-0.0, 0.0) is 0.0); fmax and fmin
# return the other operand when one is NaN.
_SELECTS = {"maximum": ("ogt", 0), "minimum": ("olt", 0), "fmax": ("oge", 1),
            "fmin": ("ole", 1)}
_LOGICAL = {"logical_and": "and", "logical_or": "or"}
_BINARY_LIBM = {"arctan2": "atan2", "hypot": "hypot", "power": "pow"}
UNARY_LIBM = {name: libm for name, libm in LIBM_NAMES.items() if name not in _INTRINSICS}

FLOAT_OPERATIONS = frozenset([*_ARITHMETIC, *_INTRINSICS, *_COMPARISONS, *_SELECTS,
                              *_BINARY_LIBM, *UNARY_LIBM, "negative", "square", "where"])
BOOL_OPERATIONS = frozenset([*_LOGICAL, "logical_not", "where"])
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
    indices of the steps it writes to memory, and `sums`, those of the `reduce_sum` steps (a sum
    of all elements) whose totals it returns.

    An input's period is ARRAY for an array of the loop's length, SCALAR for a 0-d value passed
    by value, or P > 0 for an array of P elements read over and over (a row broadcast along
    leading axes, a bias); P is a multiple of MAX_WIDTH, so a vector never wraps around it.
    """

    inputs: tuple
    steps: tuple
    outputs: tuple
    sums: tuple = ()

    def dtypes(self) -> set:
        return {dtype for dtype, _ in self.inputs} | {step.dtype for step in self.steps}


def kernel_width(spec: KernelSpec) -> int:
    """Lanes per vector: as many float64 as a register holds if the kernel computes any float64
    (float32 values then fill half a register), else as many float32."""
    floats = spec.dtypes() - {BOOL}
    return llvm.vector_width(FLOAT64 if FLOAT64 in floats or not floats else FLOAT32)


def float_constant(value, dtype: np.dtype) -> str:
    """`value` as an LLVM constant of `dtype`: the exact bits, as hex of the double."""
    if dtype == BOOL:
        return "true" if value else "false"
    converted = float(dtype.type(value))
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", converted))[0]


class _Body:
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
        """libm's `function` on each lane: one libmvec call, or one scalar call a lane."""
        vector = self.vector(dtype)
        symbol = llvm.vector_math(function, dtype, self.width, len(values))
        if symbol is not None:
            return self.call(symbol, vector, [(vector, value) for value in values])
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
        if operation in _ARITHMETIC:
            return self.emit(f"{_ARITHMETIC[operation]} {vector} {operands[0]}, {operands[1]}")
        if operation == "negative":
            return self.emit(f"fneg {vector} {operands[0]}")
        if operation == "square":
            return self.emit(f"fmul {vector} {operands[0]}, {operands[0]}")
        if operation in _INTRINSICS:
            intrinsic = f"llvm.{_INTRINSICS[operation]}.{self.suffix(dtype)}"
            return self.call(intrinsic, vector, [(vector, operands[0])])
        if operation in _COMPARISONS:
            return self.emit(f"fcmp {_COMPARISONS[operation]} {vector} "
                             f"{operands[0]}, {operands[1]}")
        if operation in _SELECTS:
            compare, nan_operand = _SELECTS[operation]
            ordered = self.emit(f"fcmp {compare} {vector} {operands[0]}, {operands[1]}")
            nan = self.emit(f"fcmp uno {vector} {operands[nan_operand]}, zeroinitializer")
            first = self.emit(f"or <{self.width} x i1> {ordered}, {nan}")
            return self.emit(f"select <{self.width} x i1> {first}, {vector} {operands[0]}, "
                             f"{vector} {operands[1]}")
        if operation == "where":
            result = self.vector(step.loop_dtypes[1])
            return self.emit(f"select <{self.width} x i1> {operands[0]}, "
                             f"{result} {operands[1]}, {result} {operands[2]}")
        if operation in _LOGICAL:
            return self.emit(f"{_LOGICAL[operation]} {vector} {operands[0]}, {operands[1]}")
        if operation == "logical_not":
            return self.emit(f"xor {vector} {operands[0]}, splat (i1 true)")
        if operation == "astype":
            return operands[0]  # the cast to the loop dtype (the target) did it
        exponent = integer_exponent(step)
        if exponent is not None:
            return self.integer_power(operands[0], exponent, dtype)
        if operation == "power" and step.operands[1] == ("literal", 0.5):
            # NumPy computes x ** 0.5 as sqrt(x): (-inf) ** 0.5 is NaN, not pow's inf
            return self.call(f"llvm.sqrt.{self.suffix(dtype)}", vector, [(vector, operands[0])])
        if operation in _BINARY_LIBM:
            return self.libm(_BINARY_LIBM[operation], dtype, operands)
        return self.libm(UNARY_LIBM[operation], dtype, operands)

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


def _write_body(spec: KernelSpec, body: _Body, loaded: dict) -> tuple[list, list]:
    """The steps on the loaded inputs: (each array output's value, each summed value in
    float64)."""
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
    summed = [body.convert(values[index], spec.steps[index].dtype, FLOAT64)
              for index in spec.sums]
    return [values[index] for index in spec.outputs], summed


class _Sums:
    """The accumulators of the kernel's sums, all in float64 whatever the summed dtype.

    Each lane adds its values plainly into a block sum `b`; every `SUM_BLOCK` vectors the block
    sum is added into `s` with Kahan's compensation `c`, and plainly into `p`. The error is
    that of summing SUM_BLOCK values plus a few roundings, as NumPy's pairwise sum, and
    the loop-carried chain is one add per vector. Kahan's `c` turns inf into NaN, so where the
    plain total `p` is inf or NaN, it is the result, as NumPy's would be.
    """

    NAMES = ("b", "s", "c", "p")

    def __init__(self, count: int, width: int):
        self.count = count
        self.vector = f"<{width} x double>"
        # NumPy's sums start from +0.0: a sum of -0.0s is 0.0
        self.initial = {name: "zeroinitializer" for name in self.NAMES}

    def names(self, suffix: str) -> list:
        return [f"%{name}{index}{suffix}" for index in range(self.count) for name in self.NAMES]

    def phis(self, suffix: str, incoming: list) -> list:
        """One phi per accumulator: incoming is [(value suffix or None for the initial value,
        block)]."""
        lines = []
        for index in range(self.count):
            for name in self.NAMES:
                sources = ", ".join(
                    f"[ {self.initial[name] if source is None else f'%{name}{index}{source}'}"
                    f", %{block} ]" for source, block in incoming)
                lines.append(f"  %{name}{index}{suffix} = phi {self.vector} {sources}")
        return lines

    def flush(self, source: str, target: str, block_sum: str | None = None) -> list:
        """Add the block sums (`b<source>`, or `block_sum` formatted with the index) into
        s, c and p, giving the accumulators `<target>`; `b<target>` starts over."""
        lines, v = [], self.vector
        for k in range(self.count):
            b = block_sum.format(k) if block_sum else f"%b{k}{source}"
            lines += [f"  %y{k}{target} = fsub {v} {b}, %c{k}{source}",
                      f"  %s{k}{target} = fadd {v} %s{k}{source}, %y{k}{target}",
                      f"  %d{k}{target} = fsub {v} %s{k}{target}, %s{k}{source}",
                      f"  %c{k}{target} = fsub {v} %d{k}{target}, %y{k}{target}",
                      f"  %p{k}{target} = fadd {v} %p{k}{source}, {b}"]
        return lines

    def results(self, source: str, width: int, dtypes: list, addresses: list) -> list:
        """Reduce the lanes and store each sum."""
        lines, v = [], self.vector
        reduce = f"llvm.vector.reduce.fadd.v{width}f64"
        for k, (dtype, address) in enumerate(zip(dtypes, addresses)):
            for name in ("s", "c", "p"):
                lines.append(f"  %{name}{k}.total = call double @{reduce}(double 0.0, "
                             f"{v} %{name}{k}{source})")
            lines += [f"  %kahan{k} = fsub double %s{k}.total, %c{k}.total",
                      f"  %spread{k} = fsub double %p{k}.total, %p{k}.total",
                      f"  %finite{k} = fcmp oeq double %spread{k}, 0.0",
                      f"  %sum{k} = select i1 %finite{k}, double %kahan{k}, double %p{k}.total"]
            value = f"%sum{k}"
            if dtype == FLOAT32:
                lines.append(f"  %sum{k}.f32 = fptrunc double %sum{k} to float")
                value = f"%sum{k}.f32"
            lines.append(f"  store {REGISTER_TYPES[dtype]} {value}, ptr {address}, "
                         f"align {dtype.itemsize}")
        return lines


SUM_BLOCK = 32  # vectors added plainly before a compensated add into the total


def kernel_ir(spec: KernelSpec, name: str) -> str:
    """The LLVM module of one fused kernel named `name` (see the module docstring)."""
    width = kernel_width(spec)
    declarations: dict[str, str] = {}
    parameters, entry, arrays = ["i64 %n"], [], []
    for index, (dtype, period) in enumerate(spec.inputs):
        if period == SCALAR:
            parameters.append(f"{REGISTER_TYPES[dtype]} %scalar{index}")  # %s<k>: a sum
        else:
            parameters.append(f"ptr %object{index}")
            arrays.append((f"%object{index}", f"%data{index}", dtype))
    outputs = []
    for index, step_index in enumerate(spec.outputs):
        parameters.append(f"ptr %result{index}")
        outputs.append((f"%result{index}", f"%out{index}", spec.steps[step_index].dtype))
        arrays.append(outputs[-1])
    sum_dtypes = [spec.steps[index].dtype for index in spec.sums]
    for index, dtype in enumerate(sum_dtypes):
        parameters.append(f"ptr %total{index}")
        arrays.append((f"%total{index}", f"%sum_out{index}", dtype))
    for array_object, data, _ in arrays:
        entry.append(f"  {data}.field = getelementptr i8, ptr {array_object}, "
                     f"i64 {ARRAY_DATA_OFFSET}")
        entry.append(f"  {data} = load ptr, ptr {data}.field, align 8")
    sums = _Sums(len(spec.sums), width)
    accumulator = f"<{width} x double>"

    def scalars(body: _Body) -> dict:
        splats = {}
        for index, (dtype, period) in enumerate(spec.inputs):
            if period == SCALAR:
                vector = body.vector(dtype)
                one = body.emit(f"insertelement {vector} poison, {REGISTER_TYPES[dtype]} "
                                f"%scalar{index}, i32 0")
                splats[index] = body.emit(f"shufflevector {vector} {one}, {vector} poison, "
                                          f"<{width} x i32> zeroinitializer")
        return splats

    def load(body: _Body, address: str, dtype) -> str:
        memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
        value = body.emit(f"load {memory}, ptr {address}, align {dtype.itemsize}")
        return body.emit(f"icmp ne {memory} {value}, zeroinitializer") if dtype == BOOL else value

    def store(body: _Body, value: str, address: str, dtype) -> None:
        memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
        if dtype == BOOL:
            value = body.emit(f"zext <{width} x i1> {value} to {memory}")
        body.lines.append(f"  store {memory} {value}, ptr {address}, align {dtype.itemsize}")

    # the vector loop over the first n - n % width elements
    loop: list[str] = []
    body = _Body(width, loop, declarations, "v")
    loaded = {}
    for index, (dtype, period) in enumerate(spec.inputs):
        if period != SCALAR:
            position = "%i" if period == ARRAY else f"%j{period}"
            address = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr %data{index}, "
                                f"i64 {position}")
            loaded[index] = load(body, address, dtype)
    results, summed = _write_body(spec, body, {**loaded, **scalars(body)})
    for value, (_, data, dtype) in zip(results, outputs):
        address = body.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr {data}, i64 %i")
        store(body, value, address, dtype)
    for k, value in enumerate(summed):
        loop.append(f"  %b{k}.add = fadd {accumulator} %b{k}, {value}")

    # the rest, through stack buffers of one vector each
    tail: list[str] = []
    rest = _Body(width, tail, declarations, "t")
    buffers = []
    loaded = {}
    for index, (dtype, period) in enumerate(spec.inputs):
        if period == SCALAR:
            continue
        memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
        buffer, source = f"%buffer_in{index}", f"%data{index}"
        buffers.append(f"  {buffer} = alloca {memory}, align 64")
        # with a periodic input n is a multiple of the width: this never runs for it
        position = "%main" if period == ARRAY else "0"
        address = rest.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr {source}, "
                            f"i64 {position}")
        tail.append(f"  store {memory} zeroinitializer, ptr {buffer}, align 64")
        bytes_ = rest.emit(f"mul i64 %rest, {dtype.itemsize}")
        tail.append(f"  call void @llvm.memcpy.p0.p0.i64(ptr {buffer}, ptr {address}, "
                    f"i64 {bytes_}, i1 false)")
        loaded[index] = load(rest, buffer, dtype)
    results, summed = _write_body(spec, rest, {**loaded, **scalars(rest)})
    for index, (value, (_, data, dtype)) in enumerate(zip(results, outputs)):
        memory = f"<{width} x {MEMORY_TYPES[dtype]}>"
        buffer = f"%buffer_out{index}"
        buffers.append(f"  {buffer} = alloca {memory}, align 64")
        store(rest, value, buffer, dtype)
        address = rest.emit(f"getelementptr {MEMORY_TYPES[dtype]}, ptr {data}, i64 %main")
        bytes_ = rest.emit(f"mul i64 %rest, {dtype.itemsize}")
        tail.append(f"  call void @llvm.memcpy.p0.p0.i64(ptr {address}, ptr {buffer}, "
                    f"i64 {bytes_}, i1 false)")
    if summed:
        lanes = ", ".join(f"i64 {lane}" for lane in range(width))
        count = rest.emit(f"insertelement <{width} x i64> poison, i64 %rest, i32 0")
        counts = rest.emit(f"shufflevector <{width} x i64> {count}, <{width} x i64> poison, "
                           f"<{width} x i32> zeroinitializer")
        mask = rest.emit(f"icmp slt <{width} x i64> <{lanes}>, {counts}")
        for k, value in enumerate(summed):
            kept = rest.emit(f"select <{width} x i1> {mask}, {accumulator} {value}, "
                             f"{accumulator} zeroinitializer")
            tail.append(f"  %b{k}.tail = fadd {accumulator} %b{k}.after, {kept}")
            for total in ("s", "c", "p"):
                tail.append(f"  %{total}{k}.tail = fadd {accumulator} %{total}{k}.after, "
                            f"splat (double -0.0)")
        declarations["reduce"] = (f"declare double @llvm.vector.reduce.fadd.v{width}f64("
                                  f"double, {accumulator})")
    declarations["llvm.memcpy.p0.p0.i64"] = (
        "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")

    flush = []
    if summed:
        flush = ["  %position = and i64 %next, " + str(SUM_BLOCK * width - 1),
                 "  %full = icmp eq i64 %position, 0",
                 "  br i1 %full, label %flush, label %latch",
                 "flush:", *sums.flush("", ".flushed", "%b{}.add"),
                 "  br label %latch"]
    latch_phis = []
    for k in range(sums.count):
        latch_phis += [f"  %b{k}.latch = phi {accumulator} [ %b{k}.add, %loop ], "
                       f"[ zeroinitializer, %flush ]"]
        for total in ("s", "c", "p"):
            latch_phis.append(f"  %{total}{k}.latch = phi {accumulator} [ %{total}{k}, %loop ], "
                              f"[ %{total}{k}.flushed, %flush ]")
    periods = sorted({period for _, period in spec.inputs if period > 0})
    widest = FLOAT64 if summed else max(spec.dtypes(), key=lambda dtype: dtype.itemsize)
    vector_bits = width * widest.itemsize * 8
    lines = [
        *sorted(declarations.values()), "",
        f"define void @{name}({', '.join(parameters)}) #0 {{",
        "entry:", *buffers, *entry,
        f"  %main = and i64 %n, {-width}",
        "  %rest = sub i64 %n, %main",
        "  %any = icmp sgt i64 %main, 0",
        "  br i1 %any, label %loop, label %after",
        "loop:",
        "  %i = phi i64 [ 0, %entry ], [ %next, %latch ]",
        *[f"  %j{period} = phi i64 [ 0, %entry ], [ %j{period}.next, %latch ]"
          for period in periods],
        *sums.phis("", [(None, "entry"), (".latch", "latch")]),
        *loop,
        f"  %next = add nuw nsw i64 %i, {width}",
        *[line for period in periods for line in (
            f"  %j{period}.step = add nuw nsw i64 %j{period}, {width}",
            f"  %j{period}.wraps = icmp eq i64 %j{period}.step, {period}",
            f"  %j{period}.next = select i1 %j{period}.wraps, i64 0, i64 %j{period}.step")],
        *(flush or ["  br label %latch"]),
        "latch:",
        *latch_phis,
        "  %more = icmp slt i64 %next, %main",
        "  br i1 %more, label %loop, label %after",
        "after:",
        *sums.phis(".after", [(None, "entry"), (".latch", "latch")]),
        "  %partial = icmp sgt i64 %rest, 0",
        "  br i1 %partial, label %tail, label %done",
        "tail:",
        *tail,
        "  br label %done",
        "done:",
        *sums.phis(".done", [(".after", "after"), (".tail", "tail")]),
        *sums.flush(".done", ".final"),
        *sums.results(".final", width, sum_dtypes, [f"%sum_out{k}" for k in range(sums.count)]),
        "  ret void",
        "}",
        "",
        f'attributes #0 = {{ nounwind "min-legal-vector-width"="{vector_bits}" }}',
    ]
    return "\n".join(lines) + "\n"
