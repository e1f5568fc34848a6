"""CPU fusion: each large region of elementwise equations becomes one compiled loop.

NumPy runs `0.5 * x * (1.0 + np.tanh(...))` one ufunc at a time, each reading its inputs from
memory and writing a temporary back: the traced gelu gradient on 1e6 doubles is 20 calls and
~450 MB of memory traffic (52 ms). Fused, it reads x once and writes the result once (1.5 ms):

    b:f64[1000000] = multiply 0.5 a
    c:f64[1000000] = power a 3           ->   b:f64[1000000] = fused_cpu[kernel=fused_d4bf...] a
    ...                                                                               const0
    u:f64[1000000] = add s t

and the graph's code calls the kernel by name: `b = fused_d4bfd66c818e(a, const0)`.

A region is a maximal set of equations that the kernels can compute (runtime/backends/llvm/
cpu_kernels.py: arithmetic, libm functions, comparisons, where, maximum..., in float64, float32
and bool) with one output shape, whose inputs are arrays of that shape, 0-d values, or rows that
broadcast along its leading axes (a bias of a multiple of 16 elements). A sum of a region
value `y` is added up in the same loop, so `y` need not be written at all: of all its elements
(`np.sum(y)`), over its leading axes into a row of a multiple of 16 elements (the bias gradient
`y.sum(axis=0)`), or over its trailing axes, rows of 16 to 128 elements (`np.sum(y, axis=-1)`;
`summed_layout`, runtime/backends/llvm/cpu_reductions.py).

Before this pass, CpuRowFusion (runtime/backends/llvm/cpu_row_fusion.py) makes row kernels of
the regions that reduce rows over the trailing axis and use the results in the same rows
(softmax, layer norm), read one value per row (`x - m` with m of shape [N, 1]), or read rows
this loop cannot (of no multiple of 16 elements); this pass fuses what it leaves, after
CpuRecompute (runtime/backends/llvm/cpu_recompute.py) has copied into later regions the
arithmetic they would otherwise read back from memory.

A region is built in graph order: an equation joins the regions that compute its inputs or read
the same array it reads, merging them, unless one of those regions is closed or one of its sums
is an input. A region closes when an equation outside it reads one of its values, because the
fused equation takes the place of the region's last equation and every reader must come after
it. The fused equation's outputs are the region values read outside it or returned by the graph.

A region reads at most MAX_LATE_INPUTS arrays that equations outside it compute after its first
equation: each stays alive until the region's last equation, where the fused call is.

Only regions that win back the call's fixed cost are fused (`worth_fusing`): two equations of
at least `MIN_FUSED_ELEMENTS` elements, or `MIN_CHAIN_EQUATIONS` of at least
`MIN_CHAIN_ELEMENTS`. A region the compiler refuses stays as NumPy calls, with
a warning. Runs after DeadCode and MatmulLayout, before BufferReuse (which may then write into
the fused equation's fresh outputs). The graph's code calls each kernel through
runtime/backends/llvm/cpu_calls.py, which runs a large region on every core
(runtime/backends/llvm/cpu_threads.py), with the results of one thread, bit for bit.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import compiler as llvm
from .cpu_calls import CompiledKernel, compiled_kernel
from .cpu_kernels import (ARRAY, computes, MAX_WIDTH, REGISTER_TYPES, SCALAR, KernelSpec, Step,
                          array_layout_known)
from .cpu_reductions import PAIRWISE_BLOCK
from ..fusion import loop_dtypes, replace_regions, run_equations
from ...graph import Constant, Equation, Graph, Literal, Var
from ...primitives.batching import refuse_batching
from ...primitives.registry import C_ORDER, Primitive, register

# Below this many elements a fused call saves less than it costs. A call costs ~0.8 us (ctypes,
# np.empty per output), a NumPy ufunc call ~0.3 us; measured (2 cores, AVX-512) on tanh(x*y)+1:
# 1.3 -> 1.1 us at 256 elements, 2.1 -> 2.0 us at 1,024, 3.1 -> 3.1 us at 2,048 (libmvec's tanh
# is as fast as NumPy's, so fusing it wins only memory traffic); on the gelu gradient 19x at 256
# and 30x at 2,048 (NumPy's power(x, 3) is slow). Regions of cheap ops break even near 1,000.
MIN_FUSED_ELEMENTS = 1024
# A longer chain fuses at fewer elements: each NumPy call it replaces costs ~0.5 us, the fused
# call ~0.9 us. Measured (Zen 3, one core) on chains of multiplies and adds, NumPy -> fused:
# three equations 3.6 -> 3.5 us at 128 elements, 4.1 -> 3.7 at 512; four 4.2 -> 3.5 at 128.
# The batch-1 MLP's gradient (regions of 256 and 512 values: GELU and its derivative) takes
# 290-300 us in float64 so, 335-365 without. The gain per call is small beside a kernel's
# compile time (tens of ms, once), won back only after tens of thousands of calls: hence 256,
# not lower.
MIN_CHAIN_EQUATIONS, MIN_CHAIN_ELEMENTS = 3, 256
# A region grows no longer than this many equations, to bound a kernel's compile time.
MAX_REGION_EQUATIONS = 256
# A region reads at most this many arrays that equations outside it compute after its first
# equation: the fused call takes the place of the region's last equation, so each of them stays
# alive until then. A gradient's sum over steps, `dW = dW + h_t.T @ d_t` in an RNN's backward
# pass, is a chain of adds that would otherwise grow into one region reading every step's
# product (50 arrays of 128x128, all alive at once: 6.5 MB more memory to fault in on every
# call). The traced RNN gradient of benchmarks/backends.py took 1.8x-1.9x its primal so, and
# 1.4x with a limit of 0, 1 or 2 (one BLAS thread; with two, 2.0x -> 1.15x). One lets a
# product join the elementwise chain it feeds (`(g @ W.T) * (1 - t * t)`, begun before it).
MAX_LATE_INPUTS = 1

KERNEL_DTYPES = frozenset(REGISTER_TYPES)


class CpuFusion:
    """Replace each large elementwise region by one `fused_cpu` equation (a compiled loop)."""

    def __init__(self, min_elements: int | None = None):
        self.min_elements = min_elements  # None: `worth_fusing`; a number: every region that large

    def run(self, graph: Graph) -> Graph:
        if not (llvm.available() and array_layout_known()):
            return graph
        regions = [region for region in find_regions(graph)
                   if worth_fusing(region, self.min_elements)]
        return fuse_regions(graph, regions, _fused_equation)


def worth_fusing(region: Region, min_elements: int | None = None) -> bool:
    """Whether one call of `region`'s kernel costs less than its equations' NumPy calls (the
    constants above say how that was measured); with `min_elements`, whether it has two
    equations or more, of at least that many elements."""
    count, size = len(region.equations), region.size
    if min_elements is not None:
        return count >= 2 and size >= min_elements
    return (count >= 2 and size >= MIN_FUSED_ELEMENTS) or (
        count >= MIN_CHAIN_EQUATIONS and size >= MIN_CHAIN_ELEMENTS)


def fuse_regions(graph: Graph, regions: list, kernel_equation) -> Graph:
    """`graph` with each of `regions` replaced by its kernel's equation, at the place of its
    last equation: `kernel_equation(region, ids of the values read outside their regions)`
    gives it, or None to leave the region's equations as they are."""
    if not regions:
        return graph
    read_outside = _values_read_outside(graph, regions)
    fused_at: dict[int, Equation] = {}
    replaced: set[int] = set()
    for region in regions:
        equation = kernel_equation(region, read_outside)
        if equation is None:
            continue
        replaced.update(id(member) for member in region.equations)
        fused_at[id(region.equations[-1])] = equation
    return replace_regions(graph, fused_at, replaced)


# --- which equations fuse, and into which regions -----------------------------------------------

@dataclass(eq=False)
class Region:
    """Equations (in graph order) that become one kernel, all with results of `shape`."""

    shape: tuple
    equations: list = field(default_factory=list)
    closed: bool = False
    late_inputs: set = field(default_factory=set)  # ids: MAX_LATE_INPUTS says which
    merged_into: Region | None = None  # the region that took this one's equations

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def current(self) -> Region:
        region = self
        while region.merged_into is not None:
            region = region.merged_into
        return region


def step_dtypes(equation: Equation) -> list | None:
    """The dtypes a kernel computes `equation`'s operands in, or None if no kernel can."""
    name = equation.primitive.name
    if name == "astype":
        return [equation.attrs["dtype"]]
    if set(equation.attrs) - {"out"}:
        return None
    impl = equation.primitive.impl
    if name != "where" and not (isinstance(impl, np.ufunc) and impl.nout == 1):
        return None
    primitive = equation.primitive
    if not (computes(primitive, "f") or computes(primitive, "b")):
        return None
    try:
        dtypes = loop_dtypes(equation)
    except (TypeError, ValueError):
        return None
    if any(dtype not in KERNEL_DTYPES for dtype in dtypes):
        return None
    operands = dtypes[1:] if name == "where" else dtypes
    kinds = {dtype.kind for dtype in operands}
    if name != "where" and primitive.llvm_bools:
        return dtypes if kinds == {"b"} else None
    return dtypes if name == "where" or kinds == {"f"} and computes(primitive, "f") else None


def fusable_shape(equation: Equation) -> tuple | None:
    """The shape of `equation`'s result if a kernel can compute it, else None."""
    if len(equation.outputs) != 1:
        return None
    result = equation.outputs[0].aval
    if (result.dtype not in KERNEL_DTYPES or result.device != "cpu" or None in result.shape
            or result.shape == ()):
        return None
    for value in equation.inputs:
        if isinstance(value, Literal):
            if isinstance(value.value, complex) or value.value is None:
                return None
            continue
        aval = value.aval
        if (aval.dtype not in KERNEL_DTYPES or aval.device != "cpu"
                or input_period(aval.shape, result.shape) is None):
            return None
    if step_dtypes(equation) is None:
        return None
    return result.shape


def input_period(shape: tuple, result_shape: tuple) -> int | None:
    """How a kernel computing `result_shape` reads an input of `shape`: ARRAY (the same shape),
    SCALAR (0-d), a period P (a row that broadcasts along leading axes, P elements, a multiple
    of MAX_WIDTH), or None if it cannot."""
    if shape == result_shape:
        return ARRAY
    if shape == ():
        return SCALAR
    row = shape
    while row and row[0] == 1:
        row = row[1:]
    if not row or None in row or len(row) >= len(result_shape) \
            or result_shape[-len(row):] != row:
        return None
    size = math.prod(row)
    return size if size % MAX_WIDTH == 0 else None


ALL, LEADING, TRAILING = "all", "leading", "trailing"


def summed_layout(equation: Equation) -> tuple | None:
    """How a kernel adds up `equation`'s sum as it computes the array it sums (float64 or
    float32, keepdims or not, no dtype), or None if it cannot: (ALL, 0) for a sum of all
    elements, (LEADING, R) for a sum over the leading axes into a row of R elements, (TRAILING,
    L) for one sum per row of L elements (the trailing axes); R and L are multiples of
    MAX_WIDTH, and L at most PAIRWISE_BLOCK (runtime/backends/llvm/cpu_reductions.py says why)."""
    if equation.primitive.name != "reduce_sum" or not isinstance(equation.inputs[0], Var):
        return None
    aval = equation.inputs[0].aval
    if (set(equation.attrs) - {"axis", "keepdims"} or aval.dtype.kind != "f"
            or aval.dtype not in KERNEL_DTYPES or equation.outputs[0].aval.dtype != aval.dtype
            or aval.ndim == 0 or None in aval.shape):
        return None
    axes, ndim = equation.attrs["axis"], aval.ndim
    if axes == tuple(range(ndim)):
        return ALL, 0
    if axes == tuple(range(len(axes))):
        row = math.prod(aval.shape[len(axes):])
        return (LEADING, row) if row % MAX_WIDTH == 0 else None
    if axes == tuple(range(ndim - len(axes), ndim)):
        row = math.prod(aval.shape[ndim - len(axes):])
        return (TRAILING, row) if row % MAX_WIDTH == 0 and row <= PAIRWISE_BLOCK else None
    return None


def find_regions(graph: Graph) -> list[Region]:
    """The maximal regions of `graph`, in the order of their last equations."""
    region_of: dict[int, Region] = {}  # id of a Var -> the region that computes it
    sums: set[int] = set()              # ids of the Vars that are a region's sums
    readers: dict[int, list] = {}      # id of an array Var -> the regions that read it
    position = {id(equation): index for index, equation in enumerate(graph.equations)}
    computed_at = {id(var): index for index, equation in enumerate(graph.equations)
                   for var in equation.outputs}

    def late_inputs(equations, region=None) -> set:
        """ids of the arrays `equations` read that are computed after the first of them,
        not by one of them nor by `region`."""
        start, computed = position[id(equations[0])], {id(e.outputs[0]) for e in equations}
        return {id(value) for member in equations for value in member.inputs
                if isinstance(value, Var) and value.aval.shape != ()
                and computed_at.get(id(value), -1) > start and id(value) not in computed
                and (region is None or region_of.get(id(value)) is None
                     or region_of[id(value)].current() is not region)}

    regions: list[Region] = []
    for equation in graph.equations:
        shape = fusable_shape(equation)
        summed = (equation.inputs[0].aval.shape
                  if shape is None and summed_layout(equation) is not None else None)
        region = None
        if shape is not None or summed is not None:
            shape = shape or summed
            arrays = [value for value in equation.inputs
                      if isinstance(value, Var) and value.aval.shape == shape]
            # a region's sum is known only after its loop: who reads it comes after the region
            totals_of = [region_of[id(value)].current() for value in equation.inputs
                         if id(value) in sums]
            candidates = []
            for value in arrays:
                for found in [region_of.get(id(value)), *readers.get(id(value), [])]:
                    found = found and found.current()
                    if (found is not None and not found.closed and found.shape == shape
                            and all(found is not other for other in candidates + totals_of)
                            and len(found.equations) < MAX_REGION_EQUATIONS):
                        late = found.late_inputs | late_inputs([found.equations[0], equation],
                                                               found)
                        if candidates:  # merging regions: count again over all of them
                            late = late_inputs(sorted(
                                [*found.equations, equation,
                                 *(m for other in candidates for m in other.equations)],
                                key=lambda member: position[id(member)]))
                        if len(late) <= MAX_LATE_INPUTS:
                            candidates.append(found)
            if candidates:
                region = merged(candidates, regions, position)
            elif summed is None:  # a sum of an array no region computes or reads stays np.sum
                region = Region(shape)
                regions.append(region)
            if region is not None:
                region.equations.append(equation)
                region.late_inputs = (late_inputs(region.equations) if len(candidates) > 1 else
                                      region.late_inputs
                                      | late_inputs([region.equations[0], equation], region))
                region_of[id(equation.outputs[0])] = region
                if summed is not None:
                    sums.add(id(equation.outputs[0]))
                for value in arrays:
                    readers.setdefault(id(value), []).append(region)
        for value in equation.inputs:
            producer = region_of.get(id(value)) if isinstance(value, Var) else None
            if producer is not None and producer.current() is not region:
                producer.current().closed = True
    return regions


def merged(candidates: list, regions: list, position: dict) -> Region:
    """The first of `candidates` with the equations of the others, in graph order (`position`:
    id of an equation -> its index); the others leave `regions`, pointing at it."""
    region = candidates[0]
    for other in candidates[1:]:
        region.equations = sorted(region.equations + other.equations,
                                  key=lambda member: position[id(member)])
        other.merged_into = region
        regions.remove(other)
    return region


def _values_read_outside(graph: Graph, regions: list[Region]) -> set[int]:
    """ids of the Vars that an equation outside their region reads, or that the graph returns."""
    member_of = {id(equation): region for region in regions for equation in region.equations}
    produced_by = {id(var): member_of.get(id(equation))
                   for equation in graph.equations for var in equation.outputs}
    outside = {id(value) for value in graph.outputs if isinstance(value, Var)}
    for equation in graph.equations:
        for value in equation.inputs:
            if isinstance(value, Var) and produced_by.get(id(value)) is not member_of.get(
                    id(equation)):
                outside.add(id(value))
    return outside


# --- one region as a kernel ---------------------------------------------------------------------

def region_steps(region: Region, reduces) -> tuple[list, dict, dict, list]:
    """A region's equations as kernel steps: (the graph values the kernel reads, in argument
    order; id of such a value -> its argument position; id of a Var computed in the region ->
    its step; the Steps). `reduces(equation)`: whether it reduces its input (its step takes its
    input's dtype)."""
    inputs: list = []
    argument_of: dict[int, int] = {}
    step_of: dict[int, int] = {}
    steps = []
    for equation in region.equations:
        operands = []
        for value in equation.inputs:
            if isinstance(value, Literal):
                operands.append(("literal", value.value))
            elif isinstance(value, Constant) and value.aval.shape == ():
                operands.append(("literal", value.value.item()))
            elif id(value) in step_of:
                operands.append(("step", step_of[id(value)]))
            else:
                if id(value) not in argument_of:
                    argument_of[id(value)] = len(inputs)
                    inputs.append(value)
                operands.append(("input", argument_of[id(value)]))
        step_of[id(equation.outputs[0])] = len(steps)
        dtypes = [equation.inputs[0].aval.dtype] if reduces(equation) else step_dtypes(equation)
        steps.append(Step(equation.primitive.name, tuple(operands), tuple(dtypes),
                          equation.outputs[0].aval.dtype))
    return inputs, argument_of, step_of, steps


def _fused_equation(region: Region, read_outside: set) -> Equation | None:
    inputs, _, step_of, steps = region_steps(
        region, lambda equation: equation.primitive.name == "reduce_sum")
    layout_of = {id(equation.outputs[0]): summed_layout(equation)
                 for equation in region.equations if equation.primitive.name == "reduce_sum"}
    results = [equation.outputs[0] for equation in region.equations
               if id(equation.outputs[0]) in read_outside]
    outputs = [var for var in results if id(var) not in layout_of]
    summed = {kind: [var for var in results if layout_of.get(id(var), (None,))[0] == kind]
              for kind in (ALL, LEADING, TRAILING)}
    spec = KernelSpec(
        tuple((value.aval.dtype, input_period(value.aval.shape, region.shape))
              for value in inputs),
        tuple(steps), tuple(step_of[id(var)] for var in outputs),
        tuple(step_of[id(var)] for var in summed[ALL]),
        *(tuple((step_of[id(var)], layout_of[id(var)][1]) for var in summed[kind])
          for kind in (LEADING, TRAILING)))
    sums = summed[ALL] + summed[LEADING] + summed[TRAILING]
    try:
        kernel = compiled_kernel(spec, region.shape,
                                 tuple(value.aval.shape for value in inputs),
                                 region_as_numpy(region.equations, inputs, outputs + sums),
                                 tuple(var.aval.shape for var in sums))
    except RuntimeError as error:
        warnings.warn(f"autotrace could not compile a fused CPU kernel ({error}); "
                      f"its {len(steps)} equations run as NumPy calls", RuntimeWarning)
        return None
    return Equation(fused_cpu, inputs, {"kernel": kernel}, outputs + sums)


def region_as_numpy(equations, inputs, results):
    """The region as NumPy calls: run where NumPy's error state is not its default, so that
    np.errstate(all="raise") raises and np.seterr's warnings come, as they would unfused, and
    where the kernel raised an exception that NumPy warns on, so that NumPy's warnings come."""
    def run(*values):
        environment = run_equations(equations, inputs, values)
        computed = tuple(environment[id(var)] for var in results)
        return computed[0] if len(computed) == 1 else computed
    return run


def _fused_impl(*inputs, kernel: CompiledKernel):
    return kernel(*inputs)


def _fused_abstract_eval(*avals, kernel: CompiledKernel):
    return kernel.avals if len(kernel.avals) > 1 else kernel.avals[0]


def _fused_source(args, attrs) -> str:
    into = attrs.get("out", ())
    into = (into,) if isinstance(into, str) else into
    given = [f"{result}={name}" for result, name in zip(attrs["kernel"].result_names, into)
             if name is not None]
    return f"{attrs['kernel'].name}({', '.join([*args, *given])})"


fused_cpu = register(Primitive(
    "fused_cpu", _fused_impl, _fused_abstract_eval, source=_fused_source, fresh=True,
    takes_out=C_ORDER,
    globals=lambda attrs: {attrs["kernel"].name: attrs["kernel"].call},
    batching=refuse_batching("it is made by the CPU backend's passes, after batching")))
