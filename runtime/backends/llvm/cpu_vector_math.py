"""autotrace's own vector tanh, written as LLVM IR into each fused kernel's module (runtime/
backends/llvm/cpu_kernels.py) in place of a call to glibc's libmvec, which costs about twice as
much.

    tanh = inline_function("tanh", np.float64)    # None where it cannot be inlined here
    value = tanh(body, operand, np.float64)       # SSA name of tanh on each lane of `operand`

The writer emits plain IEEE arithmetic on a `VectorBody`'s vectors (no fast-math flags; `fma`
is the exactly rounded fused multiply-add, so it is written only where the CPU has one) and
integer operations on the values' bits. For a = |x|, in float64:

- a < 1: tanh(a) = a + a z P(z) / Q(z), z = a * a, P / Q a rational fit of (tanh(a) - a) /
  (a z) (relative error 5.6e-17), a z P / Q being a third of the result at most;
- a >= 1: tanh(a) = 1 - 2u / (1 + u), u = exp(-2a), a clamped to 20, where the result rounds
  to 1: -2a = n ln2 + r, |r| <= ln2 / 2 (Cody and Waite's reduction, its first step exact
  under fma), exp(r) = M / B with B = 2 - c, M = B + 2r and c = r - r * r * R(r * r) for a fit
  R of degree 4, so that 2u / (1 + u) = 2 ** (n + 1) M / (B + 2 ** n M), powers of two added
  to the exponent bits;
- both share one division.

In float32, one rational over the whole range instead, tanh(a) = a P(z) / Q(z) for P of degree
5 and Q of degree 4 (relative error 1.4e-9, a twentieth of an ulp), a clamped to 9.02, where
the result rounds to 1, and the result to 1 (rounding lets a P / Q reach 1 + 2 ulps near the
clamp). It is half the instructions of the two branches above and takes the float32 GELU
gradient from 0.84 to 0.61 ns a value (Zen 4, one core), for a larger error: the rounding of a
dozen steps near a = 8, where P and Q are large, adds up to 4.8 ulp (XLA's float32 tanh, a
rational of the same kind: 5.5).

In both, the sign of x is copied onto the result (tanh(-0.0) is -0.0); a NaN is not clamped and
comes out NaN.

Measured against the correctly rounded tanh (tanhl, x87's 64-bit significand, for 16 million
float64 of every exponent; float64 tanh for every float32 in [2 ** -14, 10], the range where
tanh is neither x nor 1): at most 1.37 ulp in float64, 4.80 in float32 (more than 1 ulp for
19% of them); NumPy's own (glibc's tanh, 1.17 ulp; NumPy's SIMD tanhf, 1.37) is within 1 ulp
(float64), 5 (float32) of it. Only integer compares and quiet arithmetic see a NaN or inf: no
input raises a floating-point flag NumPy warns on (but a signaling NaN, as in glibc's), so a
kernel never falls back to NumPy's calls for them.
"""
from __future__ import annotations

import struct

import numpy as np

from . import compiler as llvm

FLOAT64, FLOAT32 = np.dtype(np.float64), np.dtype(np.float32)


class _Constants:
    """What every tanh's constants have: the float `dtype`, its `bits`, and the `clamp`."""

    def __init__(self, dtype, clamp: float):
        self.dtype, self.clamp = np.dtype(dtype), clamp
        self.bits = 8 * self.dtype.itemsize

    def bits_of(self, value: float) -> int:
        if self.bits == 64:
            return struct.unpack("<Q", struct.pack("<d", value))[0]
        return struct.unpack("<I", struct.pack("<f", value))[0]


class TanhConstants(_Constants):
    """The constants of the two-branch tanh (the module docstring says what each is)."""

    def __init__(self, dtype, crossover: float, clamp: float, numerator: tuple,
                 denominator: tuple, exp_coefficients: tuple, ln2_high: float, ln2_low: float):
        super().__init__(dtype, clamp)
        self.crossover = crossover
        self.numerator, self.denominator = numerator, denominator  # P, and Q less its 1
        # R: c = r - r * r * R(r * r), and exp(r) = 1 + r + r c / (2 - c) = M / B
        self.exp_coefficients = exp_coefficients
        self.ln2_high, self.ln2_low = ln2_high, ln2_low
        self.mantissa_bits = np.finfo(self.dtype).nmant
        self.shifter = 1.5 * 2.0 ** self.mantissa_bits  # adding it rounds to an integer

    def write(self, writer, x: str) -> str:
        return _tanh(writer, x)


class RationalTanhConstants(_Constants):
    """The constants of the one-rational tanh, a P(z) / Q(z) (the module docstring says how)."""

    def __init__(self, dtype, clamp: float, numerator: tuple, denominator: tuple):
        super().__init__(dtype, clamp)
        self.numerator, self.denominator = numerator, denominator

    def write(self, writer, x: str) -> str:
        return _rational_tanh(writer, x)


TANH = {  # the constants of each dtype's tanh, which write it
    # Fitted by least squares weighted for relative error, iterated (Loeb), on Chebyshev
    # nodes of |x| in [0, 1] and |r| in [0, ln2 / 2], in 50-digit arithmetic, then rounded.
    FLOAT64: TanhConstants(
        np.float64, crossover=1.0, clamp=20.0,
        numerator=(-0.3333333333333333, -0.021408625624635535, -0.0002432346109074976,
                   -1.724196864037584e-08),
        denominator=(0.46422587687390593, 0.02451529267753459, 0.00025425434001041103),
        exp_coefficients=(0.166666666666666, -0.0027777777777002934, 6.613756318687473e-05,
                          -1.653389974904173e-06, 4.138059249231763e-08),
        ln2_high=0.6931471805599453, ln2_low=2.3190468138462996e-17),
    # P / Q fitted to tanh(a) / a over a in [0, 9.02], P(0) = Q(0) = 1, by least squares
    # weighted for relative error, reweighted toward the largest errors until they level
    # (Lawson), on 72,000 points dense near both ends, then rounded to float32.
    FLOAT32: RationalTanhConstants(
        np.float32, clamp=9.02,
        numerator=(1.0, 0.13681529462337494, 0.003870324231684208, 2.8046177249052562e-05,
                   3.067186682415013e-08, -1.2262238967275518e-11),
        denominator=(1.0, 0.47014862298965454, 0.02725321240723133, 0.00039420954999513924,
                     1.2899881767225452e-06)),
}


def inline_function(name: str, dtype):
    """The writer of libm's function `name` on vectors of `dtype` as inline IR, or None where
    there is none (another function or dtype, or a CPU without fused multiply-add)."""
    dtype = np.dtype(dtype)
    if name != "tanh" or dtype not in TANH or not llvm.has_fused_multiply_add():
        return None
    return tanh


def tanh(body, x: str, dtype) -> str:
    """tanh of each lane of the vector `x` of `dtype`: a call, written into `body` (a
    VectorBody), of the function of the module that computes it, written on first use. One
    copy a module, not one per loop (a kernel and its part for threads, each with a loop and
    a tail: four), halves the time LLVM takes to compile the GELU gradient's kernel (157 -> 95
    ms) for 5% more time a call (327 -> 340 us on 1e5 float64, AVX2)."""
    dtype = np.dtype(dtype)
    vector = body.vector(dtype)
    name = f"autotrace.tanh.{body.suffix(dtype)}"
    if name not in body.declarations:
        lines: list = []
        writer = _Writer(type(body)(body.width, lines, body.declarations, "h"), TANH[dtype],
                         table=f"@{name}.constants")
        result = TANH[dtype].write(writer, "%x")
        body.declarations[name] = "\n".join([
            writer.table_definition(),
            f"define internal fastcc {vector} @{name}({vector} %x) noinline #0 {{", *lines,
            f"  ret {vector} {result}", "}"])
    return body.emit(f"call fastcc {vector} @{name}({vector} {x})")


def _tanh(writer, x: str) -> str:
    """The instructions of tanh on each lane of `x`, written by `writer` (a _Writer)."""
    body, constants = writer.body, writer.constants
    vector, integers = writer.vector, writer.integers
    bits, magnitude_bits, not_nan, a = _clamped_magnitude(writer, x)
    large = body.emit(f"icmp sge {integers} {magnitude_bits}, "
                      f"{writer.integer_splat(constants.bits_of(constants.crossover))}")

    # u = exp(-2a) = 2 ** n exp(r), -2a = n ln2 + r, and exp(r) = M / B (B = 2 - c,
    # M = B + 2r, c = r - r * r * R(r * r)): 2u / (1 + u) = 2 ** (n + 1) M / (B + 2 ** n M).
    # Doublings are additions and powers of two integer additions to the exponent bits, which
    # round alike, so that fewer instructions compete for the multiplier.
    twice_a = body.emit(f"fadd {vector} {a}, {a}")
    y = body.emit(f"fneg {vector} {twice_a}")
    shifted = writer.fma(y, writer.splat(1.4426950408889634), writer.splat(constants.shifter))
    n = body.emit(f"fsub {vector} {shifted}, {writer.splat(constants.shifter)}")
    reduced = writer.fma(n, writer.splat(-constants.ln2_high), y)  # exact
    r = writer.fma(n, writer.splat(-constants.ln2_low), reduced)
    square = body.emit(f"fmul {vector} {r}, {r}")
    negative_square = body.emit(f"fneg {vector} {square}")
    c = writer.fma(negative_square, writer.polynomial(square, constants.exp_coefficients), r)
    b = body.emit(f"fsub {vector} {writer.splat(2.0)}, {c}")
    twice_r = body.emit(f"fadd {vector} {r}, {r}")
    m = body.emit(f"fadd {vector} {b}, {twice_r}")
    # n + 1 sits in the low bits of `shifted` + 1, whose own exponent shifts out
    shifted_bits = body.emit(f"bitcast {vector} {shifted} to {integers}")
    plus_one = body.emit(f"add {integers} {shifted_bits}, {writer.integer_splat(1)}")
    exponent_step = body.emit(f"shl {integers} {plus_one}, "
                              f"splat ({writer.integer} {constants.mantissa_bits})")
    scale_bits = body.emit(f"add {integers} {exponent_step}, "
                           f"{writer.integer_splat(constants.bits_of(0.5))}")
    scale = body.emit(f"bitcast {integers} {scale_bits} to {vector}")  # 2 ** n
    m_bits = body.emit(f"bitcast {vector} {m} to {integers}")
    large_numerator_bits = body.emit(f"add {integers} {m_bits}, {exponent_step}")
    large_numerator = body.emit(f"bitcast {integers} {large_numerator_bits} to {vector}")
    large_denominator = writer.fma(scale, m, b)

    # a z P(z) / Q(z)
    z = body.emit(f"fmul {vector} {a}, {a}")
    az = body.emit(f"fmul {vector} {a}, {z}")
    small_numerator = body.emit(
        f"fmul {vector} {az}, {writer.polynomial(z, constants.numerator)}")
    q = writer.polynomial(z, constants.denominator)
    small_denominator = writer.fma(z, q, writer.splat(1.0))

    numerator = writer.select(large, large_numerator, small_numerator)
    denominator = writer.select(large, large_denominator, small_denominator)
    ratio = body.emit(f"fdiv {vector} {numerator}, {denominator}")
    from_one = body.emit(f"fsub {vector} {writer.splat(1.0)}, {ratio}")
    from_a = body.emit(f"fadd {vector} {a}, {ratio}")
    magnitude = writer.select(large, from_one, from_a)
    return _with_sign_of(writer, body.emit(f"bitcast {vector} {magnitude} to {integers}"), bits)


def _rational_tanh(writer, x: str) -> str:
    """The instructions of float32 tanh, a P(z) / Q(z), on each lane of `x`."""
    body, constants = writer.body, writer.constants
    vector, integers = writer.vector, writer.integers
    bits, _, not_nan, a = _clamped_magnitude(writer, x)
    z = body.emit(f"fmul {vector} {a}, {a}")
    numerator = body.emit(
        f"fmul {vector} {a}, {writer.polynomial(z, constants.numerator)}")
    ratio = body.emit(
        f"fdiv {vector} {numerator}, {writer.polynomial(z, constants.denominator)}")
    # at most 1: compared as integers, as the clamp is, NaN left NaN
    ratio_bits = body.emit(f"bitcast {vector} {ratio} to {integers}")
    one_bits = writer.integer_splat(constants.bits_of(1.0))
    above_one = body.emit(f"icmp sgt {integers} {ratio_bits}, {one_bits}")
    too_large = body.emit(f"and {writer.masks} {above_one}, {not_nan}")
    magnitude_bits = body.emit(f"select {writer.masks} {too_large}, {integers} {one_bits}, "
                               f"{integers} {ratio_bits}")
    return _with_sign_of(writer, magnitude_bits, bits)


def _clamped_magnitude(writer, x: str) -> tuple:
    """The bits of `x`, those of |x|, the lanes that are not NaN, and a: |x| as a vector,
    the clamp past it (inf included), NaN left NaN (arithmetic on a quiet NaN gives NaN and
    raises no flag, so a NaN lane comes out NaN)."""
    body, constants, integers = writer.body, writer.constants, writer.integers
    bits = body.emit(f"bitcast {writer.vector} {x} to {integers}")
    # |x| as an integer, sign bit clear: compared as signed integers, it orders as |x| does,
    # NaN above inf, without a floating-point compare (which raises invalid on a NaN)
    magnitude_bits = body.emit(f"and {integers} {bits}, {writer.integer_splat(~writer.sign)}")
    clamp_bits = writer.integer_splat(constants.bits_of(constants.clamp))
    past_clamp = body.emit(f"icmp sgt {integers} {magnitude_bits}, {clamp_bits}")
    not_nan = body.emit(f"icmp sle {integers} {magnitude_bits}, "
                        f"{writer.integer_splat(writer.exponent_mask)}")
    beyond = body.emit(f"and {writer.masks} {past_clamp}, {not_nan}")
    clamped_bits = body.emit(f"select {writer.masks} {beyond}, {integers} {clamp_bits}, "
                             f"{integers} {magnitude_bits}")
    return bits, magnitude_bits, not_nan, body.emit(
        f"bitcast {integers} {clamped_bits} to {writer.vector}")


def _with_sign_of(writer, magnitude_bits: str, bits: str) -> str:
    """The value of `magnitude_bits` with the sign bit of `bits`."""
    body, integers = writer.body, writer.integers
    sign = body.emit(f"and {integers} {bits}, {writer.integer_splat(writer.sign)}")
    signed_bits = body.emit(f"or {integers} {magnitude_bits}, {sign}")
    return body.emit(f"bitcast {integers} {signed_bits} to {writer.vector}")


class _Writer:
    """Typed helpers over a VectorBody for one float dtype and its integers of the same size.

    Constants are read from a table, the global `table` of the module (`table_definition()`),
    at offsets from one base address, rather than written into the instructions: x86-64 JIT
    code takes the large code model, where LLVM loads each constant of the instructions from an
    address of its own, a 10-byte `movabs` before each broadcast. The base address passes
    through an empty inline `asm`, so that LLVM keeps it in a register instead of folding it
    into each load's address again, and the table is `externally_initialized`, so that LLVM
    does not read its values at compile time and write them back into the instructions. tanh
    is then 5% (float64) to 15% (float32) faster a call: 2.52 -> 2.39 ns a value in float64,
    0.94 -> 0.80 in float32 (Zen 3, one core, best of six runs each)."""

    def __init__(self, body, constants: TanhConstants, table: str):
        self.body, self.constants = body, constants
        self.table = table
        self.entries: dict = {}  # (LLVM type, literal) -> (index in the table, vector)
        self.vector = body.vector(constants.dtype)
        self.integer = f"i{constants.bits}"
        self.integers = f"<{body.width} x {self.integer}>"
        self.masks = f"<{body.width} x i1>"
        self.sign = 1 << (constants.bits - 1)
        self.exponent_mask = constants.bits_of(float("inf"))
        self.fma_name = f"llvm.fma.{body.suffix(constants.dtype)}"

    def splat(self, value: float) -> str:
        """`value` (rounded to the dtype) on every lane."""
        bits = self.constants.bits_of(float(self.constants.dtype.type(value)))
        return self._from_table(bits)

    def integer_splat(self, value: int) -> str:
        """The integer `value` (modulo 2 ** bits) on every lane, as integers."""
        return self._from_table(value & ((1 << self.constants.bits) - 1), integers=True)

    def _from_table(self, bits: int, integers: bool = False) -> str:
        """The table's entry of these bits on every lane, read from the table on first use."""
        if bits not in self.entries:
            index = len(self.entries)
            scalar = self.integer
            if not self.entries:  # one base address, opaque to LLVM (see the class docstring)
                self.base = self.body.emit(f'call ptr asm "", "=r,0"(ptr {self.table})')
            address = self.body.emit(f"getelementptr {scalar}, ptr {self.base}, i64 {index}")
            value = self.body.emit(f"load {scalar}, ptr {address}")
            vector_type = f"<{self.body.width} x {scalar}>"
            one = self.body.emit(f"insertelement {vector_type} poison, {scalar} {value}, i32 0")
            splat = self.body.emit(f"shufflevector {vector_type} {one}, {vector_type} poison, "
                                   f"<{self.body.width} x i32> zeroinitializer")
            as_float = self.body.emit(f"bitcast {vector_type} {splat} to {self.vector}")
            self.entries[bits] = (index, splat, as_float)
        _, splat, as_float = self.entries[bits]
        return splat if integers else as_float

    def table_definition(self) -> str:
        """The global holding the constants the instructions read, in their order."""
        wrap = 1 << self.constants.bits  # LLVM writes integers signed
        values = ", ".join(f"{self.integer} {bits - wrap if bits >= wrap // 2 else bits}"
                           for bits in self.entries)
        return (f"{self.table} = internal externally_initialized global "
                f"[{len(self.entries)} x {self.integer}] [{values}], "
                f"align {self.constants.bits // 8}")

    def fma(self, a: str, b: str, c: str) -> str:
        """a * b + c, rounded once."""
        return self.body.call(self.fma_name, self.vector,
                              [(self.vector, a), (self.vector, b), (self.vector, c)])

    def polynomial(self, x: str, coefficients: tuple) -> str:
        """coefficients[0] + coefficients[1] x + ..., by Horner's rule."""
        result = self.splat(coefficients[-1])
        for coefficient in reversed(coefficients[:-1]):
            result = self.fma(result, x, self.splat(coefficient))
        return result

    def select(self, mask: str, if_true: str, if_false: str) -> str:
        return self.body.emit(f"select {self.masks} {mask}, {self.vector} {if_true}, "
                              f"{self.vector} {if_false}")
