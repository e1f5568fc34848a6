"""CPU row fusion: a region that reduces rows over the trailing axis and uses the results in the
same rows becomes one row kernel (runtime/backends/llvm/cpu_rows.py), as XLA fuses softmax.

NumPy runs softmax `exp(x - max(x, -1, keepdims)) / sum(..., -1, keepdims)` as five calls, three
of them writing an array of x's size; its gradient, layer norm and log-sum-exp likewise. A row
region of shape S = (..., L) holds, in graph order:

- elementwise equations with results of shape S, whose inputs are arrays of shape S, 0-d values,
  rows repeated along the leading axes, or one value per row (shape S[:-1] + (1,), the result
  of a keepdims reduction: `x - m`);
- `reduce_sum`, `reduce_max`, `reduce_min` and `mean` over the trailing axis of a float array of
  shape S, keepdims or not, in its own dtype;
- elementwise equations on the region's per-row values (`sqrt(var + eps)`, `log(s) + m`).

    b:f64[512,1] = reduce_max[axis=(1,) keepdims=True] a
    c:f64[512,64] = subtract a b                 ->   h:f64[512,64] = fused_cpu[kernel=...] a
    d:f64[512,64] = exp c
    e:f64[512,1] = reduce_sum[axis=(1,) keepdims=True] d
    h:f64[512,64] = divide d e

Regions grow and close as runtime/backends/llvm/cpu_fusion.py's do (a region closes when an
equation outside it reads one of its values). A region becomes a row kernel if it has a
reduction or a per-row input, is worth a call (cpu_fusion.worth_fusing: two equations of
`MIN_FUSED_ELEMENTS` elements, or a chain of `MIN_CHAIN_EQUATIONS` of `MIN_CHAIN_ELEMENTS`: the
log-softmax cross-entropy of 64 rows of 10 classes and its gradient, twenty NumPy calls, is one
kernel, and a float32 MLP's gradient 4.5% faster), and has rows of 2 to MAX_ROW_LENGTH
elements; the others are left to CpuFusion, which runs after this pass on what it leaves. Its
outputs are the values read outside it, per-row values included.
"""
from __future__ import annotations

import math
import warnings

from .cpu_calls import compiled_kernel
from .cpu_fusion import (KERNEL_DTYPES, MAX_REGION_EQUATIONS, Region, fuse_regions, fused_cpu,
                         merged, region_as_numpy, region_steps, step_dtypes, worth_fusing)
from .cpu_kernels import ARRAY, MAX_WIDTH, SCALAR, KernelSpec, array_layout_known
from .cpu_reductions import PAIRWISE_BLOCK
from .cpu_rows import PER_ROW, ROW_REDUCTIONS, RowPlan
from . import compiler as llvm
from ...graph import Equation, Graph, Literal, Var

# Each value a later pass reads is kept in a row buffer on the kernel's stack (a thread's stack
# may be small: 128 KiB by default on musl): rows of at most this many elements, and buffers of
# at most this many bytes in all, so that they stay in the cache too.
MAX_ROW_LENGTH = 4096
MAX_ROW_BUFFER_BYTES = 64 * 1024


class CpuRowFusion:
    """Replace each row region (a reduction over the trailing axis and its uses in the same
    rows) by one `fused_cpu` equation, a row kernel."""

    def __init__(self, min_elements: int | None = None):
        self.min_elements = min_elements  # None: `worth_fusing`; a number: every region that large

    def run(self, graph: Graph) -> Graph:
        if not (llvm.available() and array_layout_known()):
            return graph
        regions = [region for region in find_row_regions(graph)
                   if worth_fusing(region, self.min_elements) and _has_rows(region)]
        return fuse_regions(graph, regions, _row_equation)


def reduced_rows(equation: Equation) -> tuple | None:
    """The shape of the array whose rows `equation` reduces over the trailing axis (a float
    array, in its own dtype, keepdims or not), or None."""
    if equation.primitive.name not in ROW_REDUCTIONS or not isinstance(equation.inputs[0], Var):
        return None
    aval = equation.inputs[0].aval
    if (set(equation.attrs) - {"axis", "keepdims"} or aval.dtype.kind != "f"
            or aval.dtype not in KERNEL_DTYPES or equation.outputs[0].aval.dtype != aval.dtype
            or aval.device != "cpu" or aval.ndim == 0 or None in aval.shape
            or equation.attrs["axis"] != (aval.ndim - 1,)
            or not 2 <= aval.shape[-1] <= MAX_ROW_LENGTH):
        return None
    return aval.shape


def input_kind(shape: tuple, rows: tuple) -> int | None:
    """How a row kernel on `rows` (its shape) reads an input of `shape` in an elementwise step:
    ARRAY, SCALAR, PER_ROW (rows[:-1] + (1,)), a period P (a row of P elements, a multiple of
    the row length, repeated along the leading axes), or None if it cannot."""
    if shape == rows:
        return ARRAY
    if shape == ():
        return SCALAR
    if shape == rows[:-1] + (1,):
        return PER_ROW
    row = shape
    while row and row[0] == 1:
        row = row[1:]
    if not row or None in row or len(row) >= len(rows) or rows[-len(row):] != row:
        return None
    return math.prod(row)


def per_row_shapes(rows: tuple) -> tuple:
    """The shapes of a row region's per-row values: keepdims, or not."""
    return rows[:-1] + (1,), rows[:-1]


def _elementwise(equation: Equation) -> bool:
    """Whether a kernel computes `equation`, one result, given compatible shapes."""
    if len(equation.outputs) != 1 or step_dtypes(equation) is None:
        return False
    result = equation.outputs[0].aval
    if result.dtype not in KERNEL_DTYPES or result.device != "cpu" or None in result.shape:
        return False
    for value in equation.inputs:
        if isinstance(value, Literal):
            if isinstance(value.value, complex) or value.value is None:
                return False
        elif value.aval.dtype not in KERNEL_DTYPES or value.aval.device != "cpu":
            return False
    return True


def _fits(equation: Equation, rows: tuple, row_values: set) -> str | None:
    """How `equation` fits in a row region of `rows`: "element", "row" (on per-row values
    alone), "reduce", or None."""
    if reduced_rows(equation) == rows:
        return "reduce"
    if not _elementwise(equation) or not 2 <= rows[-1] <= MAX_ROW_LENGTH:
        return None
    shape = equation.outputs[0].aval.shape
    arrays = [value for value in equation.inputs if isinstance(value, Var)]
    if shape == rows:
        # a per-row value that NumPy broadcasts along the rows: keepdims (a row reduction's
        # result of rows[:-1], as NumPy broadcasts it, would repeat along the leading axes)
        return "element" if all(
            input_kind(value.aval.shape, rows) is not None and (
                id(value) not in row_values or value.aval.shape in (rows[:-1] + (1,), ()))
            for value in arrays) else None
    if shape in per_row_shapes(rows) and shape != ():
        # an input of this shape that no region computes is one value per row only where it
        # cannot be taken for a row repeated along the leading axes
        if all(value.aval.shape == () or value.aval.shape == shape and (
                id(value) in row_values or input_kind(shape, rows) in (None, PER_ROW))
               for value in arrays) and any(id(value) in row_values for value in arrays):
            return "row"
    return None


def find_row_regions(graph: Graph) -> list[Region]:
    """The maximal row regions of `graph`, in the order of their last equations."""
    region_of: dict[int, Region] = {}  # id of a Var -> the region that computes it
    row_values: set[int] = set()       # ids of the Vars that are a region's per-row values
    readers: dict[int, list] = {}      # id of a Var -> the regions that read it
    position = {id(equation): index for index, equation in enumerate(graph.equations)}
    regions: list[Region] = []
    for equation in graph.equations:
        arrays = [value for value in equation.inputs if isinstance(value, Var)]
        shapes = []  # the shapes of the row regions it might join: on their per-row values
        for value in arrays:
            found = region_of.get(id(value))
            if found is not None and id(value) in row_values:
                shapes.append(found.current().shape)
        if reduced_rows(equation) is not None:
            shapes.append(reduced_rows(equation))
        if _elementwise(equation) and equation.outputs[0].aval.shape != ():
            shapes.append(equation.outputs[0].aval.shape)
        region, kind = None, None
        for rows in dict.fromkeys(shapes):
            kind = _fits(equation, rows, row_values)
            if kind is None:
                continue
            candidates = []
            for value in arrays:
                for found in [region_of.get(id(value)), *readers.get(id(value), [])]:
                    found = found and found.current()
                    if (found is not None and not found.closed and found.shape == rows
                            and all(found is not other for other in candidates)
                            and len(found.equations) < MAX_REGION_EQUATIONS):
                        candidates.append(found)
            if candidates:
                region = merged(candidates, regions, position)
            elif kind != "row":
                region = Region(rows)
                regions.append(region)
            if region is not None:
                break
        if region is not None:
            region.equations.append(equation)
            region_of[id(equation.outputs[0])] = region
            if kind in ("row", "reduce"):
                row_values.add(id(equation.outputs[0]))
            for value in arrays:
                readers.setdefault(id(value), []).append(region)
        for value in arrays:
            producer = region_of.get(id(value))
            if producer is not None and producer.current() is not region:
                producer.current().closed = True
    return regions


def _has_rows(region: Region) -> bool:
    """Whether the region needs a row kernel: it uses a row's reduction in the row, or has a
    maximum, minimum or mean, or a sum CpuFusion's loop cannot add (rows of no multiple of
    MAX_WIDTH elements, or longer than PAIRWISE_BLOCK), or reads one value per row, or a row
    repeated along the leading axes that CpuFusion's loop cannot read (of no multiple of
    MAX_WIDTH elements: a bias of 10 logits). Else CpuFusion's loop computes it."""
    computed = {id(equation.outputs[0]) for equation in region.equations}
    reduced = set()
    length = region.shape[-1]
    for equation in region.equations:
        if reduced_rows(equation) is not None:
            reduced.add(id(equation.outputs[0]))
            if (equation.primitive.name != "reduce_sum" or length % MAX_WIDTH
                    or length > PAIRWISE_BLOCK):
                return True
            continue
        for value in equation.inputs:
            if not isinstance(value, Var):
                continue
            if id(value) in reduced:
                return True
            if id(value) not in computed:
                kind = input_kind(value.aval.shape, region.shape)
                if kind == PER_ROW or kind is not None and kind > 0 and kind % MAX_WIDTH:
                    return True
    return False


def _row_equation(region: Region, read_outside: set) -> Equation | None:
    rows = region.shape
    inputs, argument_of, step_of, steps = region_steps(
        region, lambda equation: reduced_rows(equation) is not None)
    results = [equation.outputs[0] for equation in region.equations
               if id(equation.outputs[0]) in read_outside]
    outputs = [var for var in results if var.aval.shape == rows]
    per_row = [var for var in results if var.aval.shape != rows]
    # an input that a per-row step reads is one value per row; one that an elementwise step
    # reads, as NumPy broadcasts it (the region is left to NumPy where they differ)
    kinds = [input_kind(value.aval.shape, rows) for value in inputs]
    for equation in region.equations:
        if equation.outputs[0].aval.shape == rows or reduced_rows(equation) is not None:
            continue
        for value in equation.inputs:
            index = argument_of.get(id(value))
            if index is not None and value.aval.shape != ():
                if kinds[index] not in (None, PER_ROW):
                    return None
                kinds[index] = PER_ROW
    spec = KernelSpec(
        tuple((value.aval.dtype, kind) for value, kind in zip(inputs, kinds)), tuple(steps),
        tuple(step_of[id(var)] for var in outputs),
        trailing_sums=tuple((step_of[id(var)], rows[-1]) for var in per_row),
        row_length=rows[-1])
    plan = RowPlan(spec)
    if sum(spec.steps[index].dtype.itemsize for index in plan.buffered) * (
            rows[-1] + MAX_WIDTH) > MAX_ROW_BUFFER_BYTES:
        return None
    try:
        kernel = compiled_kernel(spec, rows, tuple(value.aval.shape for value in inputs),
                                 region_as_numpy(region.equations, inputs, outputs + per_row),
                                 tuple(var.aval.shape for var in per_row))
    except RuntimeError as error:
        warnings.warn(f"autotrace could not compile a fused CPU row kernel ({error}); "
                      f"its {len(steps)} equations run as NumPy calls", RuntimeWarning)
        return None
    return Equation(fused_cpu, inputs, {"kernel": kernel}, outputs + per_row)
