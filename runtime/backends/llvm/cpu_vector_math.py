"""autotrace's own vector tanh, written as LLVM IR into fused kernels (runtime/backends/llvm/
cpu_kernels.py) in place of a call to glibc's libmvec, which costs three times as much.

    tanh = inline_function("tanh", np.float64)    # None where it cannot be inlined here
    value = tanh(body, operand, np.float64)       # SSA name of tanh on each lane of `operand`

The writers emit plain IEEE arithmetic on a `VectorBody`'s vectors (no fast-math flags; `fma`
is the exactly rounded fused multiply-add, so they are written only where the CPU has one) and
integer operations on the values' bits. For a = |x|:

- a < 0.5493 (tanh(a) < 1/2): tanh(a) = a + a z P(z) / Q(z), z = a * a, with P/Q a rational
  fit of (tanh(a) - a) / (a z), whose relative error (5.6e-17 in float64, 6.2e-8 in float32)
  is a tenth of an ulp of the result at most, as a z P / Q is a tenth of the result at most;
- otherwise tanh(a) = 1 - 2u / (1 + u), u = exp(-2a), with a clamped to 20 (9.5 in float32)
  where the result rounds to 1: exp by Cody and Waite's reduction, -2a = n ln2 + r with
  |r| <= ln2 / 2 (the first step exact under fma), a polynomial of degree 11 (6) for exp(r)
  and 2 ** n written into the exponent bits;
- both branches share one division, the sign of x is copied onto the result (tanh(-0.0) is
  -0.0), and a NaN comes out quieted, as from glibc's.

Measured against tanhl (x87's 64-bit significand) on 10 million values of every exponent, and
on every float32: at most 2 ulp from the correctly rounded tanh in float64 and float32; NumPy's
own (glibc's tanh, NumPy's SIMD tanhf) is within 2 ulp of it. No floating-point exception that
NumPy warns on (invalid, division by zero, overflow) is raised by any input but a signaling
NaN, as for glibc's.
"""
from __future__ import annotations

import struct

import numpy as np

from . import compiler as llvm

FLOAT64, FLOAT32 = np.dtype(np.float64), np.dtype(np.float32)


class TanhConstants:
    """The constants of tanh in one float dtype (the module docstring says what each is)."""

    def __init__(self, dtype, bits: int, crossover: float, clamp: float, numerator: tuple,
                 denominator: tuple, exp_coefficients: tuple, ln2_high: float, ln2_low: float,
                 exponent_bias: int):
        self.dtype, self.bits = np.dtype(dtype), bits
        self.crossover, self.clamp = crossover, clamp
        self.numerator, self.denominator = numerator, denominator  # P, and Q less its 1
        self.exp_coefficients = exp_coefficients  # R: exp(r) = 1 + r + r c / (2 - c)
        self.ln2_high, self.ln2_low = ln2_high, ln2_low
        self.exponent_bias = exponent_bias
        self.mantissa_bits = {64: 52, 32: 23}[bits]
        self.shifter = 1.5 * 2.0 ** self.mantissa_bits  # adding it rounds to an integer

    def bits_of(self, value: float) -> int:
        if self.bits == 64:
            return struct.unpack("<Q", struct.pack("<d", value))[0]
        return struct.unpack("<I", struct.pack("<f", value))[0]


TANH = {
    FLOAT64: TanhConstants(
        np.float64, 64, crossover=1.0, clamp=20.0,
        numerator=(-0.3333333333333333, -0.021408625624635535, -0.0002432346109074976,
                   -1.724196864037584e-08),
        denominator=(0.46422587687390593, 0.02451529267753459, 0.00025425434001041103),
        exp_coefficients=(0.166666666666666, -0.0027777777777002934, 6.613756318687473e-05,
                          -1.653389974904173e-06, 4.138059249231763e-08),
        ln2_high=0.6931471805599453, ln2_low=2.3190468138462996e-17, exponent_bias=1023),
    FLOAT32: TanhConstants(
        np.float32, 32, crossover=1.0, clamp=9.5,
        numerator=(-0.3333333134651184, -0.0017275267746299505, 5.728390169679187e-05),
        denominator=(0.405181884765625,),
        exp_coefficients=(0.16666625440120697, -0.0027666937094181776),
        ln2_high=0.6931471824645996, ln2_low=-1.9046542121259336e-09, exponent_bias=127),
}


def inline_function(name: str, dtype):
    """The writer of libm's function `name` on vectors of `dtype` as inline IR, or None where
    there is none (another function or dtype, or a CPU without fused multiply-add)."""
    dtype = np.dtype(dtype)
    if name != "tanh" or dtype not in TANH or not llvm.has_fused_multiply_add():
        return None
    return tanh


def tanh(body, x: str, dtype) -> str:
    """tanh of each lane of the vector `x` of `dtype`, written into `body` (a VectorBody)."""
    constants = TANH[np.dtype(dtype)]
    writer = _Writer(body, constants)
    vector, integers = writer.vector, writer.integers
    bits = body.emit(f"bitcast {vector} {x} to {integers}")
    magnitude_bits = body.emit(f"and {integers} {bits}, {writer.integer_splat(~writer.sign)}")
    infinity_bits = writer.exponent_mask
    nan = body.emit(f"icmp ugt {integers} {magnitude_bits}, {writer.integer_splat(infinity_bits)}")
    large = body.emit(f"icmp uge {integers} {magnitude_bits}, "
                      f"{writer.integer_splat(constants.bits_of(constants.crossover))}")
    # a, with NaN, inf and everything past the clamp as the clamp: no lane computes on a NaN
    clamp_bits = writer.integer_splat(constants.bits_of(constants.clamp))
    beyond = body.emit(f"icmp ugt {integers} {magnitude_bits}, {clamp_bits}")
    clamped_bits = body.emit(f"select {writer.masks} {beyond}, {integers} {clamp_bits}, "
                             f"{integers} {magnitude_bits}")
    a = body.emit(f"bitcast {integers} {clamped_bits} to {vector}")

    # u = exp(-2a) = 2 ** n exp(r), -2a = n ln2 + r, and exp(r) = M / B (B = 2 - c,
    # M = B + 2r, c = r - r * r * R(r * r)): 2u / (1 + u) = 2 ** (n + 1) M / (B + 2 ** n M)
    y = body.emit(f"fmul {vector} {a}, {writer.splat(-2.0)}")
    shifted = writer.fma(y, writer.splat(1.4426950408889634), writer.splat(constants.shifter))
    n = body.emit(f"fsub {vector} {shifted}, {writer.splat(constants.shifter)}")
    reduced = writer.fma(n, writer.splat(-constants.ln2_high), y)  # exact
    r = writer.fma(n, writer.splat(-constants.ln2_low), reduced)
    square = body.emit(f"fmul {vector} {r}, {r}")
    negative_square = body.emit(f"fneg {vector} {square}")
    c = writer.fma(negative_square, writer.polynomial(square, constants.exp_coefficients), r)
    b = body.emit(f"fsub {vector} {writer.splat(2.0)}, {c}")
    m = writer.fma(r, writer.splat(2.0), b)
    # 2 ** n: n sits in the low bits of `shifted`, whose own exponent shifts out
    shifted_bits = body.emit(f"bitcast {vector} {shifted} to {integers}")
    biased = body.emit(f"add {integers} {shifted_bits}, "
                       f"{writer.integer_splat(constants.exponent_bias)}")
    scale_bits = body.emit(f"shl {integers} {biased}, "
                           f"{writer.integer_splat(constants.mantissa_bits)}")
    twice_scale_bits = body.emit(f"add {integers} {scale_bits}, "
                                 f"{writer.integer_splat(1 << constants.mantissa_bits)}")
    scale = body.emit(f"bitcast {integers} {scale_bits} to {vector}")
    twice_scale = body.emit(f"bitcast {integers} {twice_scale_bits} to {vector}")
    large_numerator = body.emit(f"fmul {vector} {twice_scale}, {m}")
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

    result_bits = body.emit(f"bitcast {vector} {magnitude} to {integers}")
    sign = body.emit(f"and {integers} {bits}, {writer.integer_splat(writer.sign)}")
    signed_bits = body.emit(f"or {integers} {result_bits}, {sign}")
    signed = body.emit(f"bitcast {integers} {signed_bits} to {vector}")
    # a NaN comes out quieted, as from glibc's x + x, but by its bits: LLVM would compute
    # x + x on every lane, and 1e308 + 1e308 raises the overflow flag
    quiet_bit = 1 << (constants.mantissa_bits - 1)
    quieted_bits = body.emit(f"or {integers} {bits}, {writer.integer_splat(quiet_bit)}")
    quieted = body.emit(f"bitcast {integers} {quieted_bits} to {vector}")
    return writer.select(nan, quieted, signed)


class _Writer:
    """Typed helpers over a VectorBody for one float dtype and its integers of the same size."""

    def __init__(self, body, constants: TanhConstants):
        self.body, self.constants = body, constants
        self.vector = body.vector(constants.dtype)
        self.integer = f"i{constants.bits}"
        self.integers = f"<{body.width} x {self.integer}>"
        self.masks = f"<{body.width} x i1>"
        self.sign = 1 << (constants.bits - 1)
        self.exponent_mask = constants.bits_of(float("inf"))
        self.fma_name = f"llvm.fma.{body.suffix(constants.dtype)}"

    def splat(self, value: float) -> str:
        return self.body.splat(value, self.constants.dtype)

    def integer_splat(self, value: int) -> str:
        value &= (1 << self.constants.bits) - 1
        if value >= 1 << (self.constants.bits - 1):
            value -= 1 << self.constants.bits
        return f"splat ({self.integer} {value})"

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
