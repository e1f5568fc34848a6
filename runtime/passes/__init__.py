"""The graph passes, in the order they run on every new trace.

    optimize(graph)                               # all of PASSES, in order
    optimize(graph, show_after=("DeadCode",))     # and print the graph after a named pass

1. ConstantFolding         equations of constants only are evaluated once, at trace time
2. UniformConstants        an array constant of one repeated value (a seed of ones) read by an
                           elementwise op is read as that scalar
3. IntegerPowers           x ** 3 as x * x * x, x ** -1 as 1 / x, x ** 0.5 as sqrt(x)
4. AlgebraicSimplification x*1, x+(-0.0), --x, transpose of transpose, reshape of reshape, ...
5. StackedProducts         the matmuls of each slice of one array by one matrix, and sums of
                           products of transposed matrices, as one matmul (an unrolled RNN's)
6. CommonSubexpressions    one equation per (primitive, inputs, attributes)
7. DeadCode                equations whose results reach no output are dropped
8. MatmulLayout            a transpose that several matmuls read on the right is copied once
9. BufferReuse             results written into dying inputs' buffers (`out=`)
10. FreshOutputs           outputs the passes made an input, a constant or another output
                           are copied where NumPy's would be new arrays (outputs.py)
Each pass is a class in its own module with `run(graph) -> graph`, but for FreshOutputs, which
compares the optimized graph with the traced one and runs last, always. A backend's own passes
(runtime/backends/: fusion into compiled kernels) run before BufferReuse, which then reuses
the buffers the fused kernels leave.

When the executor writes the optimized graph as Python, it lowers a graph of float64 scalars to
Python float arithmetic guarded by its NumPy version (floats.py), and deletes each array
once its buffer is dead (runtime/execution/executor.py).
"""
from __future__ import annotations

from ..graph import Graph
from .algebra import AlgebraicSimplification
from .buffers import BufferReuse
from .cleanup import CommonSubexpressions, ConstantFolding, DeadCode
from .layout import MatmulLayout
from .outputs import FreshOutputs
from .products import StackedProducts
from .scalars import IntegerPowers, UniformConstants

PASSES = [ConstantFolding(), UniformConstants(), IntegerPowers(), AlgebraicSimplification(),
          StackedProducts(), CommonSubexpressions(), DeadCode(), MatmulLayout(), BufferReuse()]


def optimize(graph: Graph, passes=None, show_after=(), backend=None) -> Graph:
    """Run `passes` (by default PASSES) on `graph`, in order; the original is left alone.

    Arguments:
        graph: a traced graph.
        passes: the passes to run instead of PASSES.
        show_after: names of passes (`"DeadCode"`) after which to print the graph, to debug.
        backend: a runtime.backends.protocol.Backend whose own passes run before BufferReuse.
    Returns:
        the optimized graph, whose outputs share memory with its inputs, its constants and
        each other only where `graph`'s do (FreshOutputs).
    """
    traced = graph
    if passes is None:
        passes = PASSES
        if backend is not None and backend.passes():
            passes = [*PASSES[:-1], *backend.passes(), PASSES[-1]]
        if backend is not None and not backend.writes_in_place:
            passes = [each for each in passes if not isinstance(each, BufferReuse)]
    for graph_pass in passes:
        graph = graph_pass.run(graph)
        if type(graph_pass).__name__ in show_after:
            print(f"# after {type(graph_pass).__name__}\n{graph}")
    return FreshOutputs().run(traced, graph)
