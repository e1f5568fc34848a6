"""Max pooling and its gradient on the CPU, each one compiled loop.

runtime/primitives/pooling.py computes `max_pool2d` and `max_pool2d_scatter` tap by tap with
NumPy: a stack of the taps, a maximum per tap, a comparison and a `where` per tap, then a fold
into a zero image. That is a dozen passes over arrays the size of the image. On this backend
the channels_last ops of float32 and float64 images become one loop each:

    y:f64[50,4,4,32] = max_pool2d x           ->  y = max_pool_cpu x
    d:f64[50,8,8,32] = max_pool2d_scatter g x  ->  d = max_pool_scatter_cpu g x

For each window, the loop reads its taps in row-major order with the channels innermost (LLVM
vectorizes over them) and

- `max_pool_cpu` writes NumPy's maximum of the taps, as np.max over the stacked taps folds
  them: m = maximum(m, tap), which keeps the first NaN and, between equal values (0.0 and
  -0.0), the later one;
- `max_pool_scatter_cpu` finds the first largest tap, as `_winning_taps` does (the first NaN
  where the window holds one; a tap equal to the largest, 0.0 == -0.0, else), and writes
  `g + 0.0` there and +0.0 at every other tap: what the fold's `0 + where(winner, g, 0)`
  gives, bit for bit. Only windows that do not overlap (strides at least the pool size) are
  compiled, so that each pixel gets at most one value and no sum's order is in question;
  pixels under no window are zeroed first.

"same" padding is -inf, as in pooling.py: the image is padded (a copy) before the loop, and
the scatter's padded result cropped. A kernel is compiled once per dtype, window and strides
(the image's sizes are arguments). A 2x2 pool of 50x8x8x32 float64 images (the MNIST ConvNet's
first) takes 31-38 us against NumPy's 230-330, its gradient 80-100 us against 660-870 (one
core of a Zen 3).
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import compiler as llvm
from ..outer_products import with_primitive
from ...graph import Graph
from ...primitives.batching import refuse_batching
from ...primitives.registry import Primitive, bind, is_traced, primitives, register
from ...primitives.windows import WindowGeometry, pad_spatial, window_geometry

_FLOATS = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_ATTRS = ("pool_size", "strides", "padding", "data_format")


class CpuMaxPooling:
    """Write each channels_last `max_pool2d` of a float32 or float64 image batch as
    `max_pool_cpu`, and each such `max_pool2d_scatter` whose windows do not overlap as
    `max_pool_scatter_cpu`."""

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
        return all(stride >= size for stride, size in
                   zip(equation.attrs["strides"], equation.attrs["pool_size"]))
    return True


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
    """max_pool2d_scatter(g, x, ...) of channels_last float32 or float64 g and x whose windows
    do not overlap, by one compiled loop: NumPy's result bit for bit."""
    if is_traced(g) or is_traced(x):
        return bind("max_pool_scatter_cpu", g, x, pool_size=pool_size, strides=strides,
                    padding=padding, data_format=data_format)
    geometry, padded = _padded(x, pool_size, strides, padding)
    g = np.ascontiguousarray(g, dtype=x.dtype)
    covered = _covers(geometry, padded.shape[1:3])
    out = (np.empty if covered else np.zeros)(padded.shape, x.dtype)
    _kernel("scatter", x.dtype, geometry)(x.shape[0], *padded.shape[1:],
                                          *geometry.output_size, padded, g, out)
    if padded is x:
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
    are constants of the loop, its taps written out one by one."""
    scalar, size = _FLOATS[np.dtype(dtype)], np.dtype(dtype).itemsize
    (window_h, window_w), (stride_h, stride_w) = geometry.window, geometry.strides
    taps = [(i, j) for i in range(window_h) for j in range(window_w)]
    lines = []
    for k, (i, j) in enumerate(taps):  # the pixel under tap k, and its value
        lines += [f"  %tap{k}.pixel = add i64 %row{i}, {j}",
                  f"  %at{k} = mul i64 %tap{k}.pixel, %channels",
                  f"  %at{k}.c = add i64 %at{k}, %c",
                  f"  %p{k} = getelementptr {scalar}, ptr %x.data, i64 %at{k}.c",
                  f"  %v{k} = load {scalar}, ptr %p{k}, align {size}"]
    if kind == "pool":  # m = maximum(m, tap): NaN kept, the later of equal values
        largest = "%v0"
        for k in range(1, len(taps)):
            lines += [f"  %nan{k} = fcmp uno {scalar} {largest}, 0.0",
                      f"  %greater{k} = fcmp ogt {scalar} {largest}, %v{k}",
                      f"  %keep{k} = or i1 %nan{k}, %greater{k}",
                      f"  %m{k} = select i1 %keep{k}, {scalar} {largest}, {scalar} %v{k}"]
            largest = f"%m{k}"
        lines += ["  %out.at = add i64 %window.base, %c",
                  f"  %out.p = getelementptr {scalar}, ptr %out.data, i64 %out.at",
                  f"  store {scalar} {largest}, ptr %out.p, align {size}"]
    else:  # the first largest tap: the first NaN, else the first equal to the largest
        best, index = "%v0", "0"
        for k in range(1, len(taps)):
            lines += [f"  %larger{k} = fcmp ogt {scalar} %v{k}, {best}",
                      f"  %isnan{k} = fcmp uno {scalar} %v{k}, 0.0",
                      f"  %bestnum{k} = fcmp ord {scalar} {best}, 0.0",
                      f"  %firstnan{k} = and i1 %isnan{k}, %bestnum{k}",
                      f"  %take{k} = or i1 %larger{k}, %firstnan{k}",
                      f"  %best{k} = select i1 %take{k}, {scalar} %v{k}, {scalar} {best}",
                      f"  %index{k} = select i1 %take{k}, i32 {k}, i32 {index}"]
            best, index = f"%best{k}", f"%index{k}"
        lines += ["  %g.at = add i64 %window.base, %c",
                  f"  %g.p = getelementptr {scalar}, ptr %g.data, i64 %g.at",
                  f"  %gradient = load {scalar}, ptr %g.p, align {size}",
                  f"  %share = fadd {scalar} %gradient, 0.0"]
        for k in range(len(taps)):
            lines += [f"  %won{k} = icmp eq i32 {index}, {k}",
                      f"  %w{k} = select i1 %won{k}, {scalar} %share, {scalar} 0.0",
                      f"  %o{k} = getelementptr {scalar}, ptr %out.data, i64 %at{k}.c",
                      f"  store {scalar} %w{k}, ptr %o{k}, align {size}"]
    body = "\n".join(lines)
    rows = "\n".join(f"  %y{i} = add i64 %pixel.row, {i}\n"
                     f"  %y{i}.pixels = mul i64 %y{i}, %width\n"
                     f"  %row{i} = add i64 %y{i}.pixels, %left" for i in range(window_h))
    data = "\n".join(f"  %{name}.field = getelementptr i8, ptr %{name}, i64 16\n"
                     f"  %{name}.data = load ptr, ptr %{name}.field, align 8"
                     for name in ("x", "g", "out"))
    return f"""
define void @{_function_name(kind, dtype, geometry)}(i64 %batch, i64 %height, i64 %width,
    i64 %channels, i64 %out_h, i64 %out_w, ptr %x, ptr %g, ptr %out) #0 {{
entry:
{data}
  %per_image = mul i64 %out_h, %out_w
  %windows = mul i64 %batch, %per_image
  %any = icmp sgt i64 %windows, 0
  %any_channel = icmp sgt i64 %channels, 0
  %work = and i1 %any, %any_channel
  br i1 %work, label %window, label %done
window:
  %w = phi i64 [0, %entry], [%w.next, %window_end]
  %image = udiv i64 %w, %per_image
  %within = urem i64 %w, %per_image
  %row = udiv i64 %within, %out_w
  %column = urem i64 %within, %out_w
  %top = mul i64 %row, {stride_h}
  %left = mul i64 %column, {stride_w}
  %rows = mul i64 %image, %height
  %pixel.row = add i64 %rows, %top
  %window.base = mul i64 %w, %channels
{rows}
  br label %channel
channel:
  %c = phi i64 [0, %window], [%c.next, %channel]
{body}
  %c.next = add nuw nsw i64 %c, 1
  %more.c = icmp slt i64 %c.next, %channels
  br i1 %more.c, label %channel, label %window_end
window_end:
  %w.next = add nuw nsw i64 %w, 1
  %more = icmp slt i64 %w.next, %windows
  br i1 %more, label %window, label %done
done:
  ret void
}}
attributes #0 = {{ nounwind }}
"""


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
