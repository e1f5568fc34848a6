"""CPU recomputation: values of a fused region that only later fused regions read, and that
arithmetic computes from what those regions can read anyway, are computed again there instead
of being written to memory and read back.

A gradient reads the forward pass's intermediates. The GELU of a transformer's MLP,
`0.5 * x * (1 + tanh(c * (x + 0.044715 * x ** 3)))`, leaves four arrays of x's size for its
backward pass (x * x, 0.5 * x, the tanh and 1 + tanh): the forward kernel writes five arrays,
the GELU itself (which the next matmul reads) and those four, and the backward kernel reads the
four back. Three are arithmetic on x and on the tanh; computed again in the backward kernel,
the forward one writes two arrays and the backward one reads two (x, a matmul's result written
anyway, and the tanh):

    forward:  g, s, t, u, h = fused_a(x, b)      ->    t, h = fused_a(x, b)
    backward: dx = fused_b(dh, g, s, t, u)       ->    dx = fused_b(dh, x, b, t)

Only arithmetic is computed again (`cheap`: an LLVM instruction or intrinsic, a compare, a
select: add, multiply, divide, square, sqrt, where, maximum, casts...), never a function of the
C library (tanh, exp, log: tens of instructions a value, as costly as the memory traffic saved),
nor a region's sums: their results are read as they were. Arithmetic is IEEE, correctly
rounded, in the kernels as in NumPy, so the values computed again are the same bits, whoever
computes them: every result of the graph is unchanged, bit for bit, as long as no kernel
raises a floating-point exception. One that does (a value overflows, divides by zero, or is
NaN where a compare sees it) runs its region as NumPy's calls instead, so that NumPy warns
(runtime/backends/llvm/cpu_calls.py): the region that computes the value again then does so
too, and warns again, and its functions of the C library are NumPy's, which may differ from
the kernel's by an ulp.

The pass runs after CpuRowFusion, on the regions CpuFusion will fuse (`find_regions`), so it
sees which values would be written (read outside their region) and where they would be read.
A value of a region R is computed again where:
- it has at least MIN_RECOMPUTED_ELEMENTS elements (smaller ones stay in the cache between the
  kernels, and cost little to keep);
- it is neither returned nor read by an equation outside every fused region (a matmul: it is
  written then anyway), only by equations of later regions;
- cheap equations of R compute it, at most MAX_RECOMPUTED_EQUATIONS of them, from R's inputs,
  values of R written anyway and results of library functions (each of those then written, if
  it was not).
The values of R so computed again are chosen together, all or none (`_Plan.copies`), where that
costs less memory traffic than it saves: counted in arrays of R's size, each value written once
and read once by each region that reads it, against the arrays those regions then read that
they did not (rows and 0-d values counting their share), the library results written that were
not, and ARITHMETIC_COST for each equation computed again. Each reading region gets its own
copy of the equations it needs, placed just before its first equation that reads one of their
values (after R's kernel, so every input is computed by then), which CpuFusion then fuses into
that region.

Measured on a 2-core Zen 4, one core, one process, the graphs with and without the pass taking
turns: the float64 transformer block of benchmarks/models.py 3% faster, its MLP at batch 256 1%,
the training step of benchmarks/char_lm.py 2%; the GELU's forward kernel over (32, 64, 256)
float64 values from 1.0-1.15 to 0.86 ms, its backward one from 0.73 to 0.56.
"""
from __future__ import annotations

import math

from .cpu_fusion import find_regions, fusable_shape, worth_fusing
from ...graph import Equation, Graph, Var, readers_of

MIN_RECOMPUTED_ELEMENTS = 16384
# At most this many equations computed again for one value.
MAX_RECOMPUTED_EQUATIONS = 24
# An arithmetic equation computed again, in arrays of memory traffic: a vector instruction or
# two an element, against a load or a store.
ARITHMETIC_COST = 0.125


class CpuRecompute:
    """Compute again, in the fused regions that read them, the values of earlier regions that
    arithmetic computes from what those regions read anyway (see the module docstring)."""

    def __init__(self, min_elements: int | None = None):
        # as CpuFusion's: which regions it will fuse; a number (AUTOTRACE_FUSION_MIN_ELEMENTS,
        # to test the kernels on small arrays) is also the least size computed again
        self.min_elements = min_elements

    def run(self, graph: Graph) -> Graph:
        regions = [region for region in find_regions(graph)
                   if worth_fusing(region, self.min_elements)]
        if len(regions) < 2:
            return graph
        plan = _Plan(graph, regions, MIN_RECOMPUTED_ELEMENTS if self.min_elements is None
                     else self.min_elements)
        copies = [copy for region in regions for copy in plan.copies(region)]
        return plan.rewritten(copies) if copies else graph


def cheap(equation: Equation) -> bool:
    """Whether a kernel computes `equation` elementwise with an instruction or two an element,
    correctly rounded (not a function of the C library, not a sum of a region's values)."""
    primitive = equation.primitive
    return fusable_shape(equation) is not None and (
        not primitive.libm or bool(primitive.llvm_intrinsic or primitive.llvm_instruction))


class _Plan:
    """The graph's regions and readers, and what to compute again where."""

    def __init__(self, graph: Graph, regions: list, min_elements: int):
        self.graph, self.min_elements = graph, min_elements
        self.region_of = {id(equation): region for region in regions
                          for equation in region.equations}
        self.producer = {id(var): equation for equation in graph.equations
                         for var in equation.outputs}
        self.position = {id(equation): index for index, equation in enumerate(graph.equations)}
        self.readers = readers_of(graph)
        self.returned = {id(value) for value in graph.outputs if isinstance(value, Var)}

    def written_anyway(self, var: Var) -> bool:
        """Whether `var` reaches memory whatever this pass does: returned, or read by an
        equation that no region fuses."""
        return id(var) in self.returned or any(
            self.region_of.get(id(reader)) is None for reader in self.readers.get(id(var), []))

    def tree(self, var: Var, region) -> tuple[list, list] | None:
        """(the cheap equations of `region` that compute `var`, in graph order; the values they
        start from: inputs of the region, values written anyway, library results), or None
        where there are none or more than MAX_RECOMPUTED_EQUATIONS."""
        equations, leaves, seen = [], [], set()

        def visit(value) -> bool:
            if not isinstance(value, Var) or id(value) in seen:
                return True
            seen.add(id(value))
            equation = self.producer.get(id(value))
            if (equation is None or self.region_of.get(id(equation)) is not region
                    or not cheap(equation)
                    or (value is not var and self.written_anyway(value))):
                leaves.append(value)
                return True
            if not all(visit(each) for each in equation.inputs):
                return False
            equations.append(equation)
            return len(equations) <= MAX_RECOMPUTED_EQUATIONS

        if not visit(var) or not equations:
            return None
        equations.sort(key=lambda equation: self.position[id(equation)])
        return equations, leaves

    def copies(self, region) -> list:
        """[(a reading region, its first equation reading one of the values, {id of a value:
        the equations that compute it})] for the values of `region` worth computing again in
        the regions that read them, or []."""
        trees: dict[int, tuple] = {}      # id of a value -> (its equations, their leaves)
        read_by: dict = {}                # a reading region -> ids of the values it reads
        read_outside: set[int] = set()    # ids of the values of `region` read outside it
        for equation in region.equations:
            var = equation.outputs[0]
            readers = [reader for reader in self.readers.get(id(var), [])
                       if self.region_of.get(id(reader)) is not region]
            if readers:
                read_outside.add(id(var))
            if (not readers or math.prod(var.aval.shape) < self.min_elements
                    or self.written_anyway(var)):
                continue
            tree = self.tree(var, region)
            if tree is None:
                continue
            trees[id(var)] = tree
            for reader in readers:
                values = read_by.setdefault(self.region_of[id(reader)], [])
                if id(var) not in values:
                    values.append(id(var))
        if not trees:
            return []
        saved = len(trees) + sum(len(values) for values in read_by.values())
        cost, written = 0.0, set()
        for other, values in read_by.items():
            already = {id(value) for member in other.equations for value in member.inputs}
            equations = {id(each) for value in values for each in trees[value][0]}
            leaves = {id(leaf): leaf for value in values for leaf in trees[value][1]}
            cost += ARITHMETIC_COST * len(equations) + sum(
                math.prod(leaf.aval.shape) / region.size
                for leaf_id, leaf in leaves.items() if leaf_id not in already)
            written.update(leaf_id for leaf_id in leaves if leaf_id not in read_outside
                           and self.region_of.get(id(self.producer.get(leaf_id))) is region)
        if cost + len(written) >= saved:
            return []
        copies = []
        for other, values in read_by.items():
            first = min((reader for value in values for reader in self.readers[value]
                         if self.region_of.get(id(reader)) is other),
                        key=lambda reader: self.position[id(reader)])
            copies.append((other, first, {value: trees[value][0] for value in values}))
        return copies

    def rewritten(self, copies: list) -> Graph:
        """The graph with each copy's equations placed before its first reader, and the
        equations of its region reading the copies' values."""
        before: dict[int, list] = {}   # id of an equation -> the copied equations put before it
        renamed: dict[int, dict] = {}  # id of a reading equation -> {id of a value: its copy}
        for other, first, trees in copies:
            copy_of: dict[int, Var] = {}
            inserted = before.setdefault(id(first), [])
            equations = {id(each): each for tree in trees.values() for each in tree}
            for equation in sorted(equations.values(),
                                   key=lambda each: self.position[id(each)]):
                outputs = [Var(var.aval) for var in equation.outputs]
                inputs = [copy_of.get(id(value), value) if isinstance(value, Var) else value
                          for value in equation.inputs]
                inserted.append(equation.replace(inputs=inputs, outputs=outputs))
                copy_of.update((id(old), new) for old, new in zip(equation.outputs, outputs))
            for member in other.equations:
                names = renamed.setdefault(id(member), {})
                names.update((value, copy_of[value]) for value in trees)
        equations = []
        for equation in self.graph.equations:
            equations.extend(before.get(id(equation), ()))
            names = renamed.get(id(equation))
            if names and any(isinstance(value, Var) and id(value) in names
                             for value in equation.inputs):
                equation = equation.replace(inputs=[
                    names.get(id(value), value) if isinstance(value, Var) else value
                    for value in equation.inputs])
            equations.append(equation)
        return Graph(self.graph.inputs, equations, self.graph.outputs)
