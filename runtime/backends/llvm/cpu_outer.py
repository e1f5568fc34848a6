"""Outer products on the CPU, each one compiled loop.

runtime/backends/outer_products.py writes each matmul whose contracted length is 1 as
`matmul_outer`, which np.einsum computes. On this backend a product of two matrices of one
float dtype, (m, 1) @ (1, n), becomes `outer_cpu` instead:

    c:f32[784,512] = matmul_outer a b     ->     c:f32[784,512] = outer_cpu a b

whose code calls `outer_product(a, b)`: a loop compiled once per dtype that writes row i of the
result as `a[i] * b + 0.0`, the row `b` read from the cache, in vectors of two registers. The
+0.0 is matmul's: its sum starts at +0.0, so a product of -0.0 gives +0.0, and every other
product is the rounded product, as outer_products.py says; the result is NumPy's matmul's, bit
for bit. It takes half einsum's time, the time it takes to write the result: (784, 1) @ (1, 512)
90 -> 42 us in float32, 164 -> 79 us in float64; (512, 1) @ (1, 256) 33 -> 15 and 60 -> 27 us
(AVX2, Zen 3, one core). Batched products, and products of mixed dtypes, stay einsum's.
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import compiler as llvm
from ..outer_products import product_primitive, with_primitive
from ...graph import Graph
from ...primitives.registry import bind, is_traced

_FLOATS = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


class CpuOuterProducts:
    """Write each `matmul_outer` of two matrices of one float dtype as `outer_cpu`."""

    def run(self, graph: Graph) -> Graph:
        return with_primitive(graph, _compiles, outer_cpu) if llvm.available() else graph


def _compiles(equation) -> bool:
    if equation.primitive.name != "matmul_outer" or "out" in equation.attrs:
        return False
    avals = [getattr(value, "aval", None) for value in (*equation.inputs, *equation.outputs)]
    return all(aval is not None and aval.ndim == 2 and aval.dtype in _FLOATS
               and aval.dtype == avals[0].dtype for aval in avals)


def outer_product(a, b, out=None):
    """`a @ b` for a column `a` (m, 1) and a row `b` (1, n) of one float dtype, bit for bit
    NumPy's matmul, written into `out` (a C-contiguous (m, n) array of that dtype) if given."""
    if is_traced(a) or is_traced(b):  # a compiled graph inlined into another trace
        return bind("outer_cpu", a, b)
    m, n = a.shape[0], b.shape[1]
    if a.shape[1] != 1 or b.shape[0] != 1 or a.dtype != b.dtype or a.dtype not in _FLOATS:
        raise TypeError(f"outer_product takes a column and a row of one float dtype, not "
                        f"{a.dtype}{list(a.shape)} and {b.dtype}{list(b.shape)}")
    if out is None:
        out = np.empty((m, n), a.dtype)
    elif out.shape != (m, n) or out.dtype != a.dtype or not out.flags.c_contiguous:
        raise ValueError(f"outer_product writes into a C-contiguous {a.dtype}{[m, n]}, not "
                         f"{out.dtype}{list(out.shape)}")
    column = np.ascontiguousarray(a.reshape(m))  # views, where the operands are contiguous
    row = np.ascontiguousarray(b.reshape(n))
    _kernel(a.dtype)(m, n, column, row, out)
    return out


_kernels: dict = {}  # dtype -> the compiled loop, called through ctypes


def _kernel(dtype):
    kernel = _kernels.get(dtype)
    if kernel is None:
        name = f"autotrace_outer_{_FLOATS[dtype]}"
        address = llvm.compile_module(outer_ir(dtype), [name])[name]
        kernel = _kernels[dtype] = ctypes.CFUNCTYPE(
            None, ctypes.c_int64, ctypes.c_int64, *[ctypes.py_object] * 3)(address)
    return kernel


def outer_ir(dtype) -> str:
    """The loop's LLVM IR: `void autotrace_outer_<float|double>(i64 m, i64 n, column, row,
    out)`, the three arrays passed as NumPy's array objects (their data pointer read at byte
    16), each C-contiguous."""
    scalar, size = _FLOATS[np.dtype(dtype)], np.dtype(dtype).itemsize
    width = 2 * llvm.vector_width(dtype)
    vector = f"<{width} x {scalar}>"
    data = "\n".join(f"  %{name}.field = getelementptr i8, ptr %{name}, i64 16\n"
                     f"  %{name}.data = load ptr, ptr %{name}.field, align 8"
                     for name in ("column", "row", "out"))
    return f"""
define void @autotrace_outer_{scalar}(i64 %m, i64 %n, ptr %column, ptr %row, ptr %out) #0 {{
entry:
{data}
  %main = and i64 %n, -{width}
  %any_row = icmp sgt i64 %m, 0
  br i1 %any_row, label %row_start, label %done
row_start:
  %i = phi i64 [0, %entry], [%i.next, %row_end]
  %a.at = getelementptr {scalar}, ptr %column.data, i64 %i
  %a = load {scalar}, ptr %a.at, align {size}
  %a.lane = insertelement {vector} poison, {scalar} %a, i32 0
  %a.all = shufflevector {vector} %a.lane, {vector} poison, <{width} x i32> zeroinitializer
  %offset = mul i64 %i, %n
  %out.row = getelementptr {scalar}, ptr %out.data, i64 %offset
  %any_vector = icmp sgt i64 %main, 0
  br i1 %any_vector, label %vectors, label %tail_start
vectors:
  %j = phi i64 [0, %row_start], [%j.next, %vectors]
  %b.at = getelementptr {scalar}, ptr %row.data, i64 %j
  %b = load {vector}, ptr %b.at, align {size}
  %product = fmul {vector} %a.all, %b
  %sum = fadd {vector} %product, zeroinitializer
  %c.at = getelementptr {scalar}, ptr %out.row, i64 %j
  store {vector} %sum, ptr %c.at, align {size}
{llvm.next_step("j", width, "%main", "vectors", "tail_start")}
tail_start:
  %any_tail = icmp slt i64 %main, %n
  br i1 %any_tail, label %tail, label %row_end
tail:
  %k = phi i64 [%main, %tail_start], [%k.next, %tail]
  %b.k.at = getelementptr {scalar}, ptr %row.data, i64 %k
  %b.k = load {scalar}, ptr %b.k.at, align {size}
  %product.k = fmul {scalar} %a, %b.k
  %sum.k = fadd {scalar} %product.k, 0.0
  %c.k.at = getelementptr {scalar}, ptr %out.row, i64 %k
  store {scalar} %sum.k, ptr %c.k.at, align {size}
{llvm.next_step("k", 1, "%n", "tail", "row_end")}
row_end:
{llvm.next_step("i", 1, "%m", "row_start", "done")}
done:
  ret void
}}
attributes #0 = {{ nounwind }}
"""


outer_cpu = product_primitive("outer_cpu", outer_product)
