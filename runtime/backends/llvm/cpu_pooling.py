"""Max pooling and its gradient on the CPU, each one compiled loop.

runtime/primitives/pooling.py computes `max_pool2d` and `max_pool2d_scatter` tap by tap with
NumPy: a stack of the taps, a maximum per tap, a comparison and a `where` per tap, then a fold
into a zero image. That is a dozen passes over arrays the size of the image. On this backend
the channels_last ops of float32 and float64 images become one loop each:

    y:f64[50,4,4,32] = max_pool2d x           ->  y = max_pool_cpu x
    d:f64[50,8,8,32] = max_pool2d_scatter g x  ->  d = max_pool_scatter_cpu g x

For each window, the loop reads its taps in row-major order, a vector register of channels at
a time (the IR is written in vectors, then a scalar loop for the channels left over), and

- `max_pool_cpu` writes NumPy's maximum of the taps, as np.max over the stacked taps folds
  them: m = maximum(m, tap), which keeps the first NaN and, between equal values (0.0 and
  -0.0), the later one;
- `max_pool_scatter_cpu` picks the winning tap as `_winning_taps` does: the first equal to
  that maximum (0.0 == -0.0), or the first NaN where it is NaN; and writes `g + 0.0` there and
  +0.0 at every other tap: what the fold's `0 + where(winner, g, 0)` gives, bit for bit. Only
  windows that do not overlap (strides at least the pool size) are compiled, so that each
  pixel gets at most one value and no sum's order is in question, and of at most
  MAX_SCATTER_TAPS taps (2x2), for the compile time; pixels under no window are zeroed first.

"same" padding is -inf, as in pooling.py: the image is padded (a copy) before the loop, and
the scatter's padded result cropped. A kernel is compiled once per dtype, window and strides
(the image's sizes are arguments). A 2x2 pool of 50x8x8x32 float64 images (the MNIST ConvNet's
first) takes 30-40 us against NumPy's 230-330, its gradient 50-90 us against 660-870 (one
core of a Zen 3).
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import compiler as llvm
from ..outer_products import with_primitive
from ...graph import Graph
from ...primitives import pooling
from ...primitives.batching import refuse_batching
from ...primitives.registry import Primitive, bind, is_traced, primitives, register
from ...primitives.windows import WindowGeometry, pad_spatial, window_geometry

_FLOATS = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
# The gradient's loop is compiled for windows of at most this many taps: LLVM takes 50-85 ms
# to compile it for a 2x2 window, but 145-215 ms for 3x3, past the 150 ms a kernel may take
# (the pool's loop: 50-85 ms for either).
MAX_SCATTER_TAPS = 4
_ATTRS = ("pool_size", "strides", "padding", "data_format")


class CpuMaxPooling:
    """Write each channels_last `max_pool2d` of a float32 or float64 image batch as
    `max_pool_cpu`, and each such `max_pool2d_scatter` whose windows do not overlap and hold
    at most MAX_SCATTER_TAPS taps as `max_pool_scatter_cpu`."""

    def run(self, graph: Graph) -> Graph:
        if not llvm.available():
            return graph
        graph = with_primitive(graph, lambda equation: _compiles(equation, "max_pool2d"),
                               max_pool_cpu)
        return with_primitive(graph, lambda equation: _compiles(equation, "max_pool2d_scatter"),
                              max_pool_scatter_cpu)


def _compiles(equation, name: str) -> bool:
    if equation.primitive.name != name or equation.attrs.get("data_format") != "channels_last":
        return False
    avals = [getattr(value, "aval", None) for value in (*equation.inputs, *equation.outputs)]
    if any(aval is None or aval.ndim != 4 or aval.dtype not in _FLOATS
           or aval.dtype != avals[0].dtype for aval in avals):
        return False
    image = avals[-1] if name == "max_pool2d_scatter" else avals[0]
    if None in image.shape[1:]:
        return False
    if name == "max_pool2d_scatter":
        return _scatter_compiles(equation.attrs["pool_size"], equation.attrs["strides"])
    return True


def _scatter_compiles(pool_size, strides) -> bool:
    """Whether the gradient's loop serves these windows: they do not overlap and hold at most
    MAX_SCATTER_TAPS taps."""
    return (pool_size[0] * pool_size[1] <= MAX_SCATTER_TAPS
            and all(stride >= size for stride, size in zip(strides, pool_size)))


def max_pool(x, *, pool_size, strides, padding, data_format="channels_last"):
    """max_pool2d(x, ...) of a channels_last float32 or float64 x, by one compiled loop: NumPy's
    result bit for bit."""
    if is_traced(x):  # a compiled graph inlined into another trace
        return bind("max_pool_cpu", x, pool_size=pool_size, strides=strides, padding=padding,
                    data_format=data_format)
    geometry, padded = _padded(x, pool_size, strides, padding)
    out = np.empty((x.shape[0], *geometry.output_size, x.shape[3]), x.dtype)
    _kernel("pool", x.dtype, geometry)(x.shape[0], *padded.shape[1:], *geometry.output_size,
                                       padded, padded, out)
    return out


def max_pool_scatter(g, x, *, pool_size, strides, padding, data_format="channels_last"):
    """max_pool2d_scatter(g, x, ...) of channels_last float32 or float64 g and x, by one
    compiled loop where windows do not overlap and hold at most MAX_SCATTER_TAPS taps (else
    by NumPy): NumPy's result bit for bit."""
    if is_traced(g) or is_traced(x):
        return bind("max_pool_scatter_cpu", g, x, pool_size=pool_size, strides=strides,
                    padding=padding, data_format=data_format)
    if not _scatter_compiles(pool_size, strides):
        return pooling.max_pool2d_scatter(g, x, pool_size, strides, padding, data_format)
    geometry, padded = _padded(x, pool_size, strides, padding)
    g = np.ascontiguousarray(g, dtype=x.dtype)
    covered = _covers(geometry, padded.shape[1:3])
    out = (np.empty if covered else np.zeros)(padded.shape, x.dtype)
    _kernel("scatter", x.dtype, geometry)(x.shape[0], *padded.shape[1:],
                                          *geometry.output_size, padded, g, out)
    if not any(before or after for before, after in geometry.pads):
        return out
    (top, _), (left, _) = geometry.pads
    height, width = geometry.input_size
    return np.ascontiguousarray(out[:, top:top + height, left:left + width])


def _padded(x, pool_size, strides, padding) -> tuple:
    geometry = window_geometry(x.shape[1:3], pool_size, strides, padding, "pooling")
    return geometry, np.ascontiguousarray(pad_spatial(x, geometry, -np.inf))


def _covers(geometry: WindowGeometry, padded_size: tuple) -> bool:
    """Whether every pixel of the padded image lies under a window."""
    return all(stride == size and count * stride == length for stride, size, count, length in
               zip(geometry.strides, geometry.window, geometry.output_size, padded_size))


_kernels: dict = {}  # (kind, dtype, window, strides) -> the compiled loop


def _kernel(kind: str, dtype, geometry: WindowGeometry):
    key = (kind, dtype, geometry.window, geometry.strides)
    kernel = _kernels.get(key)
    if kernel is None:
        name = _function_name(kind, dtype, geometry)
        address = llvm.compile_module(pooling_ir(kind, dtype, geometry), [name])[name]
        kernel = _kernels[key] = ctypes.CFUNCTYPE(
            None, *[ctypes.c_int64] * 6, *[ctypes.py_object] * 3)(address)
    return kernel


def _function_name(kind: str, dtype, geometry: WindowGeometry) -> str:
    numbers = "_".join(map(str, (*geometry.window, *geometry.strides)))
    return f"autotrace_max_{kind}_{_FLOATS[np.dtype(dtype)]}_{numbers}"


def pooling_ir(kind: str, dtype, geometry: WindowGeometry) -> str:
    """The loop's LLVM IR: `void autotrace_max_<pool|scatter>_<float|double>_<window>_<strides>(
    i64 batch, i64 height, i64 width, i64 channels, i64 out_height, i64 out_width, x, g, out)`,
    the arrays NumPy's array objects (their data pointer read at byte 16), each C-contiguous: x
    the padded (batch, height, width, channels) image, g (for the scatter) and out as
    `max_pool` and `max_pool_scatter` say (g is not read by the pool). The window and strides
    are constants of the loop, its taps written out one by one; the loops run over images,
    rows and columns of windows, then channels: a vector register of them at a time, then
    one at a time. `optsize` and the loops' metadata keep LLVM from unrolling the loops or
    vectorizing them a second time."""
    dtype = np.dtype(dtype)
    lanes = llvm.vector_width(dtype)
    vectors = _window_body(kind, geometry, dtype, lanes, "v")
    tail = _window_body(kind, geometry, dtype, 1, "s")
    window_h = geometry.window[0]
    stride_h, stride_w = geometry.strides
    tap_rows = "\n".join(f"  %y{i} = add i64 %pixel.row, {i}\n"
                         f"  %y{i}.pixels = mul i64 %y{i}, %width" for i in range(window_h))
    tap_columns = "\n".join(f"  %row{i} = add i64 %y{i}.pixels, %left"
                            for i in range(window_h))
    data = "\n".join(f"  %{name}.field = getelementptr i8, ptr %{name}, i64 16\n"
                     f"  %{name}.data = load ptr, ptr %{name}.field, align 8"
                     for name in ("x", "g", "out"))
    name = _function_name(kind, dtype, geometry)
    sizes = "i64 %batch, i64 %height, i64 %width, i64 %channels, i64 %out_h, i64 %out_w"
    # The loop takes the data pointers as noalias arguments and is inlined into the function
    # that reads them from the arrays: its loads and stores then carry that fact.
    return f"""
define void @{name}({sizes}, ptr %x, ptr %g, ptr %out) #0 {{
entry:
{data}
  call void @{name}.loop(i64 %batch, i64 %height, i64 %width, i64 %channels, i64 %out_h,
                          i64 %out_w, ptr %x.data, ptr %g.data, ptr %out.data)
  ret void
}}
define internal void @{name}.loop({sizes}, ptr noalias %x.data, ptr noalias %g.data,
                                  ptr noalias %out.data) #1 {{
entry:
  %any.image = icmp sgt i64 %batch, 0
  %any.row = icmp sgt i64 %out_h, 0
  %any.column = icmp sgt i64 %out_w, 0
  %any.channel = icmp sgt i64 %channels, 0
  %any.window = and i1 %any.row, %any.column
  %any.value = and i1 %any.image, %any.channel
  %work = and i1 %any.window, %any.value
  %main = and i64 %channels, -{lanes}
  %any.vector = icmp sgt i64 %main, 0
  %any.tail = icmp slt i64 %main, %channels
  br i1 %work, label %image, label %done
image:
  %n = phi i64 [0, %entry], [%n.next, %image_end]
  %image.rows = mul i64 %n, %height
  %image.windows = mul i64 %n, %out_h
  br label %row
row:
  %r = phi i64 [0, %image], [%r.next, %row_end]
  %top = mul i64 %r, {stride_h}
  %pixel.row = add i64 %image.rows, %top
{tap_rows}
  %window.row = add i64 %image.windows, %r
  %window.first = mul i64 %window.row, %out_w
  br label %column
column:
  %q = phi i64 [0, %row], [%q.next, %column_end]
  %left = mul i64 %q, {stride_w}
{tap_columns}
  %window = add i64 %window.first, %q
  %window.base = mul i64 %window, %channels
  br i1 %any.vector, label %vectors, label %tail_start
vectors:
  %c.v = phi i64 [0, %column], [%c.v.next, %vectors]
{vectors}
{llvm.next_step("c.v", lanes, "%main", "vectors", "tail_start", ", !llvm.loop !0")}
tail_start:
  br i1 %any.tail, label %tail, label %column_end
tail:
  %c.s = phi i64 [%main, %tail_start], [%c.s.next, %tail]
{tail}
{llvm.next_step("c.s", 1, "%channels", "tail", "column_end", ", !llvm.loop !3")}
column_end:
{llvm.next_step("q", 1, "%out_w", "column", "row_end")}
row_end:
{llvm.next_step("r", 1, "%out_h", "row", "image_end")}
image_end:
{llvm.next_step("n", 1, "%batch", "image", "done")}
done:
  ret void
}}
attributes #0 = {{ nounwind optsize }}
attributes #1 = {{ nounwind alwaysinline optsize }}
!0 = distinct !{{!0, !1, !2}}
!1 = !{{!"llvm.loop.vectorize.enable", i1 false}}
!2 = !{{!"llvm.loop.unroll.disable"}}
!3 = distinct !{{!3, !1, !2}}
"""


def _window_body(kind: str, geometry: WindowGeometry, dtype, lanes: int, tag: str) -> str:
    """The IR of one step of the channel loop: `lanes` channels (%c.<tag> the first) of one
    window, whose taps' rows start at %row<i> pixels."""
    scalar, size = _FLOATS[dtype], dtype.itemsize
    value = scalar if lanes == 1 else f"<{lanes} x {scalar}>"
    truth = "i1" if lanes == 1 else f"<{lanes} x i1>"
    zero = "0.0" if lanes == 1 else "zeroinitializer"
    true = "true" if lanes == 1 else "<" + ", ".join(["i1 true"] * lanes) + ">"
    window_w = geometry.window[1]
    taps = [(i, j) for i in range(geometry.window[0]) for j in range(window_w)]
    c = f"%c.{tag}"
    lines = []
    for k, (i, j) in enumerate(taps):  # the pixel under tap k, and its value
        lines += [f"  %pixel{k}.{tag} = add i64 %row{i}, {j}",
                  f"  %first{k}.{tag} = mul i64 %pixel{k}.{tag}, %channels",
                  f"  %at{k}.{tag} = add i64 %first{k}.{tag}, {c}",
                  f"  %p{k}.{tag} = getelementptr {scalar}, ptr %x.data, i64 %at{k}.{tag}",
                  f"  %v{k}.{tag} = load {value}, ptr %p{k}.{tag}, align {size}"]
    # m = maximum(m, tap), NumPy's maximum: NaN kept, the later of equal values
    largest = f"%v0.{tag}"
    for k in range(1, len(taps)):
        lines += [f"  %nan{k}.{tag} = fcmp uno {value} {largest}, {zero}",
                  f"  %greater{k}.{tag} = fcmp ogt {value} {largest}, %v{k}.{tag}",
                  f"  %keep{k}.{tag} = or {truth} %nan{k}.{tag}, %greater{k}.{tag}",
                  f"  %m{k}.{tag} = select {truth} %keep{k}.{tag}, {value} {largest}, "
                  f"{value} %v{k}.{tag}"]
        largest = f"%m{k}.{tag}"
    if kind == "pool":
        return "\n".join(lines + [
            f"  %out.at.{tag} = add i64 %window.base, {c}",
            f"  %out.p.{tag} = getelementptr {scalar}, ptr %out.data, i64 %out.at.{tag}",
            f"  store {value} {largest}, ptr %out.p.{tag}, align {size}"])
    # The winner, as pooling._winning_taps picks it: the first tap equal to the largest
    # (0.0 == -0.0), or the first NaN, where the largest is NaN.
    lines += [f"  %g.at.{tag} = add i64 %window.base, {c}",
              f"  %g.p.{tag} = getelementptr {scalar}, ptr %g.data, i64 %g.at.{tag}",
              f"  %gradient.{tag} = load {value}, ptr %g.p.{tag}, align {size}",
              f"  %share.{tag} = fadd {value} %gradient.{tag}, {zero}"]
    found = None  # whether an earlier tap won
    for k in range(len(taps)):
        lines += [f"  %equal{k}.{tag} = fcmp oeq {value} %v{k}.{tag}, {largest}",
                  f"  %isnan{k}.{tag} = fcmp uno {value} %v{k}.{tag}, {zero}",
                  f"  %candidate{k}.{tag} = or {truth} %equal{k}.{tag}, %isnan{k}.{tag}"]
        won = f"%candidate{k}.{tag}"
        if found is not None:
            lines += [f"  %unfound{k}.{tag} = xor {truth} {found}, {true}",
                      f"  %won{k}.{tag} = and {truth} %candidate{k}.{tag}, %unfound{k}.{tag}"]
            won = f"%won{k}.{tag}"
        lines += [f"  %w{k}.{tag} = select {truth} {won}, {value} %share.{tag}, {value} {zero}",
                  f"  %o{k}.{tag} = getelementptr {scalar}, ptr %out.data, i64 %at{k}.{tag}",
                  f"  store {value} %w{k}.{tag}, ptr %o{k}.{tag}, align {size}"]
        if found is None:
            found = f"%candidate{k}.{tag}"
        elif k < len(taps) - 1:
            lines.append(f"  %found{k}.{tag} = or {truth} {found}, %candidate{k}.{tag}")
            found = f"%found{k}.{tag}"
    return "\n".join(lines)


def _pooled_shape(x, **attrs):
    return primitives["max_pool2d"].abstract_eval(x, **attrs)


def _scatter_shape(g, x, **attrs):
    return primitives["max_pool2d_scatter"].abstract_eval(g, x, **attrs)


def _call(function: str, args, attrs) -> str:
    options = ", ".join(f"{name}={attrs[name]!r}" for name in _ATTRS)
    return f"{function}({', '.join(args)}, {options})"


_AFTER_BATCHING = refuse_batching("it is made by the CPU backend's passes, after batching")
max_pool_cpu = register(Primitive(
    "max_pool_cpu", lambda x, **attrs: max_pool(x, **attrs), _pooled_shape, fresh=True,
    source=lambda args, attrs: _call("max_pool", args, attrs),
    globals=lambda attrs: {"max_pool": max_pool}, batching=_AFTER_BATCHING))
max_pool_scatter_cpu = register(Primitive(
    "max_pool_scatter_cpu", lambda g, x, **attrs: max_pool_scatter(g, x, **attrs),
    _scatter_shape, fresh=True, source=lambda args, attrs: _call("max_pool_scatter", args, attrs),
    globals=lambda attrs: {"max_pool_scatter": max_pool_scatter}, batching=_AFTER_BATCHING))
