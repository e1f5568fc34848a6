"""How Python calls a fused CPU kernel (runtime/backends/llvm/cpu_fusion.py): the arguments
checked, the outputs allocated, NumPy's calls where NumPy would warn, and a large kernel run on
several threads.

`compiled_kernel(spec, shape, ...)` compiles a kernel (or loads it from the caches) and wraps
it as a `CompiledKernel`, which the graph's code calls like the equations it replaces. A kernel
large enough to win back what handing out pieces costs (`parallel_from`) also gets its `part`
functions (runtime/backends/llvm/cpu_loop.py), and its call runs on `cpu_threads()` threads
(runtime/backends/llvm/cpu_threads.py), with the same results, bit for bit.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import math

import numpy as np

from ...abstract import AbstractArray
from . import compiler as llvm
from . import cpu_threads
from .cpu_kernels import BOOL, SCALAR, KernelSpec, computes_libm_function, kernel_width
from .cpu_loop import kernel_ir
from .cpu_reductions import SUM_BLOCK
from .cpu_rows import row_kernel_ir
from .cpu_scalar import numpy_errors_default
from ...primitives.registry import bind, is_traced


class CompiledKernel:
    """A fused kernel for one shape, called like the equations it replaces:
    `kernel(*inputs)` returns its output array, or a tuple of them. `kernel.ir` is its LLVM
    IR and `kernel.call.source` the Python that calls it, for people to read. `kernel.parts`
    runs it on several threads (None: it always runs on the caller's)."""

    def __init__(self, name: str, spec: KernelSpec, shape: tuple, input_shapes: tuple,
                 address: int, ir: str, numpy_version=None, sum_shapes: tuple = (),
                 parts: dict | None = None):
        self.name = name
        self.numpy_version = numpy_version  # what runs where NumPy might warn or raise
        self.ir = ir
        self.spec = spec
        self.input_shapes = input_shapes
        self.shape = shape
        self.size = math.prod(shape)
        summed = spec.sums + tuple(index for index, _ in spec.leading_sums + spec.trailing_sums)
        sum_shapes = sum_shapes or ((),) * len(summed)
        self.avals = tuple([AbstractArray(shape, spec.steps[index].dtype)
                            for index in spec.outputs]
                           + [AbstractArray(sum_shape, spec.steps[index].dtype)
                              for index, sum_shape in zip(summed, sum_shapes)])
        # the names its call gives its results: a result given by name is written into that
        # array (a buffer the graph keeps from call to call: runtime/execution/call_buffers.py)
        self.result_names = tuple([f"y{index}" for index in range(len(spec.outputs))]
                                  + [f"total{index}" for index in range(len(summed))])
        self.address = address
        self.parts = KernelParts(self, **parts) if parts else None
        self.call = _wrapper(self, address)

    @functools.cached_property
    def unchecked(self):
        """`call` without the NumPy calls: the kernel's own results, under any NumPy error
        state and whatever values it computes (for tests)."""
        return _wrapper(self, self.address, as_numpy=False)

    def __call__(self, *inputs):
        return self.call(*inputs)

    def __repr__(self) -> str:
        return self.name


def compiled_kernel(spec: KernelSpec, shape: tuple, input_shapes: tuple,
                    numpy_version=None, sum_shapes: tuple = ()) -> CompiledKernel:
    """Compile (or load from the caches) the kernel of `spec`, wrapped for results of `shape`,
    sums of `sum_shapes` (0-d if not given) and inputs of `input_shapes`, running
    `numpy_version` instead under a non-default NumPy error state. With at least
    `parallel_from(spec)` elements, and a split of them that keeps its sums' order, its parts
    are compiled too."""
    parts = (math.prod(shape) >= parallel_from(spec)
             and KernelParts.split(spec, math.prod(shape), 2) is not None)
    # named by its content, so written once, then renamed
    ir = (row_kernel_ir if spec.row_length else kernel_ir)(spec, "kernel", parts)
    digest = hashlib.sha256(ir.encode()).hexdigest()[:12]
    function = f"fused_{digest}"
    suffixes = ["", ".part", ".totals"] if parts and spec.sums else ["", ".part"] if parts else [""]
    for suffix in suffixes:
        ir = ir.replace(f"@kernel{suffix}(", f"@{function}{suffix}(", 1)
    addresses = llvm.compile_module(ir, [function + suffix for suffix in suffixes])
    shaped = hashlib.sha256(f"{digest}{shape}{input_shapes}{sum_shapes}".encode()).hexdigest()
    return CompiledKernel(
        f"fused_{shaped[:12]}", spec, shape, input_shapes, addresses[function], ir,
        numpy_version, sum_shapes,
        {"part": addresses[f"{function}.part"], "totals": addresses.get(f"{function}.totals")}
        if parts else None)


def parallel_from(spec: KernelSpec) -> int:
    """The fewest elements on which a kernel of `spec` runs on several threads: fewer where it
    computes the C library's functions, which cost more an element (cpu_threads says how
    much)."""
    if any(computes_libm_function(step) for step in spec.steps):
        return cpu_threads.MIN_PARALLEL_ELEMENTS
    return cpu_threads.MIN_PARALLEL_ARITHMETIC_ELEMENTS


class KernelParts:
    """A kernel's `part` and `totals` functions (runtime/backends/llvm/cpu_loop.py), called on
    the pieces of its elements (cpu_threads.pieces), one per thread."""

    def __init__(self, kernel: CompiledKernel, part: int, totals: int | None):
        spec = kernel.spec
        self.spec, self.size = spec, kernel.size
        self.width = kernel_width(spec)
        self.block = SUM_BLOCK * self.width
        self.first_total = len(spec.inputs) + len(spec.outputs)
        self.total_count = len(spec.sums)
        types = _argument_types(kernel)[1:]
        self.part = ctypes.CFUNCTYPE(ctypes.c_uint8, *[ctypes.c_int64] * 4, ctypes.c_uint32,
                                     *types)(part)
        self.totals = totals and ctypes.CFUNCTYPE(
            ctypes.c_uint8, ctypes.c_int64, *[ctypes.py_object] * (2 * self.total_count))(totals)
        self._pieces: dict[int, list | None] = {}

    @staticmethod
    def split(spec: KernelSpec, size: int, threads: int) -> list | None:
        """cpu_threads.pieces for a kernel of `spec` on `size` elements."""
        columns = {length for _, length in spec.leading_sums}
        if len(columns) > 1:  # two rows of accumulators of different lengths
            return None
        width = kernel_width(spec)
        rows = tuple(length for _, length in spec.trailing_sums)
        if spec.row_length:  # a row kernel (cpu_rows.py) runs whole rows
            width, rows = 1, (spec.row_length,)
        return cpu_threads.pieces(size, width, threads,
                                  SUM_BLOCK * width if spec.sums else None, rows,
                                  columns.pop() if columns else None)

    def pieces(self, threads: int) -> list | None:
        """The pieces for `threads` threads (None: run whole, on the caller's thread)."""
        if threads not in self._pieces:
            self._pieces[threads] = self.split(self.spec, self.size, threads)
        return self._pieces[threads]

    def run(self, threads: int, pieces: list, *arguments) -> bool:
        """Run the kernel's part on each piece, one per thread, with the kernel's `arguments`
        (each total's block sums go to a buffer, which `totals` then adds up into it);
        whether any part raised a floating-point exception NumPy warns on."""
        totals = arguments[self.first_total:self.first_total + self.total_count]
        if totals:
            blocks = self.size // self.block + 1
            buffers = [np.empty((blocks, self.width)) for _ in totals]
            for buffer in buffers:
                buffer[-1] = 0.0  # the elements after the last whole block: maybe none
            arguments = (arguments[:self.first_total] + tuple(buffers)
                         + arguments[self.first_total + self.total_count:])
        # every piece computes under this thread's floating-point controls (x86: MXCSR's
        # rounding and flush-to-zero), as the kernel run whole here would
        control = llvm.floating_point_control() or 0
        part = self.part
        raised = any(cpu_threads.WORKERS.run(
            [functools.partial(part, *piece, control, *arguments) for piece in pieces],
            threads))
        if totals:
            raised |= bool(self.totals(blocks, *buffers, *totals))
        return raised


def _argument_types(kernel: CompiledKernel) -> list:
    """The ctypes types of the kernel's arguments: n, then each input (an array object, or a
    0-d value by value), then each result (an array object)."""
    types = [ctypes.c_int64]
    for dtype, period in kernel.spec.inputs:
        types.append({np.dtype(np.float64): ctypes.c_double, np.dtype(np.float32): ctypes.c_float,
                      BOOL: ctypes.c_bool}[dtype] if period == SCALAR else ctypes.py_object)
    return types + [ctypes.py_object] * len(kernel.avals)


def _wrapper(kernel: CompiledKernel, address: int, as_numpy: bool = True):
    """A small Python function that allocates the outputs and calls the kernel through ctypes
    (the array objects themselves are passed; the kernel reads their data pointers). ctypes
    releases the GIL while the kernel runs; a kernel with parts runs them on `cpu_threads()`
    threads.

    With `as_numpy` (and a NumPy version of the kernel), it runs the region's NumPy calls
    instead under a non-default NumPy error state, and after the kernel where it raised an
    invalid value, division by zero or overflow exception (the kernel returns whether it did:
    runtime/backends/llvm/cpu_loop.py), so that NumPy warns or raises as it would unfused; the
    kernel's results are NumPy's anyway, to an ulp or two. Their results are written into the
    arrays given for the kernel's (`y0=`, ...), as the kernel's are: such an array may be the
    rows of a join the caller reads through another name (runtime/execution/call_buffers.py).

    Called with traced values (a compiled graph inlined into another trace), it records the
    fused equation instead: converting a tracer to an array raises a TypeError first.
    """
    parameters, prologue, dtypes = [], [], {}
    for index, ((dtype, period), value_shape) in enumerate(zip(kernel.spec.inputs,
                                                                kernel.input_shapes)):
        name = f"x{index}"
        parameters.append(name)
        if period != SCALAR:
            # the kernel reads `size` elements of this dtype: anything else would read past
            # the array's memory, so it is checked, not assumed
            prologue += [f"        {name} = ascontiguousarray({name}, {name}_dtype)",
                         f"        if {name}.shape != {value_shape!r}:",
                         "            raise TypeError"]
            dtypes[f"{name}_dtype"] = dtype
    spec = kernel.spec
    results = list(kernel.result_names)
    # a sum over leading axes adds each row into its output: it starts at zero
    zeroed = results[len(spec.outputs) + len(spec.sums):][:len(spec.leading_sums)]
    namespace = {"ascontiguousarray": np.ascontiguousarray, "empty": np.empty, "zeros": np.zeros,
                 "ArgumentError": ctypes.ArgumentError, "record": _recorder(kernel),
                 "errors_default": numpy_errors_default, "numpy_version": kernel.numpy_version,
                 "into": _into, **dtypes}
    for result, aval in zip(results, kernel.avals):
        namespace[f"{result}_dtype"] = aval.dtype
        allocate = "zeros" if result in zeroed else "empty"
        prologue += [f"        if {result} is None:",
                     f"            {result} = {allocate}({aval.shape!r}, {result}_dtype)"]
        if result in zeroed:
            prologue += ["        else:", f"            {result}.fill(0)"]
    namespace["compiled"] = ctypes.CFUNCTYPE(ctypes.c_uint8, *_argument_types(kernel))(address)
    # a sum of all elements is a NumPy scalar, as np.sum returns it
    returned = [f"{result}[()]" if aval.shape == () else result
                for result, aval in zip(results, kernel.avals)]
    returned = returned[0] if len(returned) == 1 else ", ".join(returned)
    arguments = ", ".join(parameters)
    passed = ", ".join(parameters + results)
    signature = ", ".join(parameters + [f"{result}=None" for result in results])
    as_numpy = as_numpy and kernel.numpy_version is not None
    as_numpys = f"into(numpy_version({arguments}), {', '.join(results)})"
    unless = ["    if not errors_default():", f"        return {as_numpys}"]
    call = [f"        nonfinite = compiled({kernel.size}, {passed})"]
    if kernel.parts is not None:
        namespace.update(thread_count=cpu_threads.cpu_threads, pieces_for=kernel.parts.pieces,
                         run_parts=kernel.parts.run)
        call = ["        threads = thread_count()",
                "        pieces = pieces_for(threads)",
                "        if pieces is None:",
                f"    {call[0]}",
                "        else:",
                f"            nonfinite = run_parts(threads, pieces, {passed})"]
    source = "\n".join([
        f"def {kernel.name}({signature}):",
        *(unless if as_numpy else []),
        "    try:",
        *prologue,
        *call,
        "    except (TypeError, ValueError, ArgumentError) as error:",
        f"        return record(error, {arguments})",
        *(["    if nonfinite:", f"        return {as_numpys}"] if as_numpy else []),
        f"    return {returned}",
    ])
    exec(compile(source, f"<autotrace kernel {kernel.name}>", "exec"), namespace)
    function = namespace[kernel.name]
    function.source = source
    return function


def _into(results, *given):
    """The NumPy version's `results` (one value, or a tuple of them), each written into the
    array `given` for it where there is one and returned as the kernel returns it (a 0-d sum
    as a NumPy scalar)."""
    values = (results,) if len(given) == 1 else tuple(results)
    written = []
    for value, out in zip(values, given):
        if out is None:
            written.append(value)
        else:
            np.copyto(out, value)
            written.append(out[()] if out.shape == () else out)
    return written[0] if len(given) == 1 else tuple(written)


def _recorder(kernel: CompiledKernel):
    def record(error, *inputs):
        if not any(is_traced(value) for value in inputs):
            raise TypeError(
                f"{kernel.name} takes arrays of shape {kernel.shape} and 0-d values of the "
                f"dtypes it was compiled for, not {', '.join(map(_describe, inputs))}") from None
        return bind("fused_cpu", *inputs, kernel=kernel)
    return record


def _describe(value) -> str:
    shape = getattr(value, "shape", None)
    return type(value).__name__ if shape is None else f"{type(value).__name__} of shape {shape}"
