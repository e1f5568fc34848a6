"""Kernel fusion: groups of elementwise equations written as CuPy `ElementwiseKernel` source.

On a GPU each NumPy ufunc is one kernel launch that reads its inputs from memory and writes its
result back. `y = tanh(x * w + b)` is three launches and two temporary arrays; fused, it is one
launch and none:

    >>> print(kernel_source(optimize(trace(lambda x, w, b: np.tanh(x * w + b), (x, x, x))[0])))
    # d:f64[3] = multiply a b
    # e:f64[3] = add[out=0] d c
    # f:f64[3] = tanh[out=0] e
    fused_85c48f973088 = cupy.ElementwiseKernel(
        "float64 x0, float64 x1, float64 x2",
        "float64 y0",
        "double t0 = x0 * x1; double t1 = t0 + x2; y0 = tanh(t1);",
        "fused_85c48f973088")
    f = fused_85c48f973088(a, b, c)

A group is maximal: it grows backwards from an elementwise equation (its root) through the
equations that compute its inputs, as long as each is elementwise (a ufunc called as a function
or `where`, with a C form, `Primitive.c`, and dtypes in `C_TYPES`), has the root's shape, and
its result is read only inside the group (not by a later equation outside it, not a graph
output). So a group has one output, the root's, and its other results never reach memory.
A lone equation is left alone: it is one kernel launch already.

Parameters are named by position (x0, x1 ... in, y0 out, t0, t1 ... for temporaries), never by
the graph's names, and the kernel's name is a hash of its parameters and operation: the same
expression in any graph is the same kernel, so CuPy compiles it once and then takes it from its
cache. Literals are written as C constants of the type they are computed in.

Nothing here imports CuPy or runs a kernel; `FusedKernel` holds what `cupy.ElementwiseKernel`
takes, and the executor may call it in place of the equations it replaces.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from ..graph import (Constant, Equation, Graph, Literal, Var, _Names, format_equation,
                     readers_of)

# NumPy dtype -> C type of the variables that hold it in a kernel.
C_TYPES = {
    np.dtype(np.float64): "double", np.dtype(np.float32): "float",
    np.dtype(np.int64): "long long", np.dtype(np.int32): "int", np.dtype(bool): "bool",
}


@dataclass(frozen=True)
class FusedKernel:
    """One group of fused equations, as `cupy.ElementwiseKernel(in_params, out_params,
    operation, name)` takes it.

    Attributes:
        name: `fused_` and a hash of the parameters and operation (see `kernel_name`).
        in_params: `"float64 x0, float32 x1"`, one per entry of `inputs`.
        out_params: `"float64 y0"`, one per entry of `outputs`.
        operation: C statements computing the outputs from the inputs, one element at a time.
        equations: the graph's equations it replaces, in graph order.
        inputs: the graph values (Vars and array Constants) it reads, in parameter order.
        outputs: the graph values it computes, in parameter order.
    """

    name: str
    in_params: str
    out_params: str
    operation: str
    equations: tuple
    inputs: tuple
    outputs: tuple

    def __repr__(self) -> str:  # graphs print the equation that calls it as kernel=fused_...
        return self.name


def fuse(graph: Graph) -> list[FusedKernel]:
    """The fusable groups of `graph` (best after `runtime.passes.optimize`), in graph order.

    Arguments:
        graph: a traced graph; it is not changed.
    Returns:
        one FusedKernel per group of two or more elementwise equations.
    Examples:
        >>> [kernel.operation for kernel in fuse(graph_of_tanh_x_times_w_plus_b)]
        ['double t0 = x0 * x1; double t1 = t0 + x2; y0 = tanh(t1);']
    """
    return [_kernel(group) for group in _groups(graph) if len(group) > 1]


def replace_regions(graph: Graph, fused_at: dict, replaced: set) -> Graph:
    """`graph` with the equations of each fused region (their ids in `replaced`) taken out and
    the region's one equation (`fused_at[id(its last equation)]`) in the last one's place: its
    inputs are all computed before that, each being read by an equation of the region. The
    region's equation takes the last one's name scope."""
    equations = []
    for equation in graph.equations:
        if id(equation) in fused_at:
            equations.append(fused_at[id(equation)].replace(scope=equation.scope))
        elif id(equation) not in replaced:
            equations.append(equation)
    return Graph(graph.inputs, equations, graph.outputs)


def run_equations(equations, inputs, values):
    """Compute `equations` with their primitives' NumPy implementations, `inputs` (graph values)
    given as `values`: what a fused kernel computes, one equation at a time. Returns the
    environment, graph value id -> value."""
    environment = {id(value): given for value, given in zip(inputs, values)}

    def read(value):
        if isinstance(value, Literal):
            return value.value
        return environment[id(value)] if id(value) in environment else value.value

    for equation in equations:
        attrs = {key: item for key, item in equation.attrs.items() if key != "out"}
        results = equation.primitive.impl(*map(read, equation.inputs), **attrs)
        results = results if len(equation.outputs) > 1 else (results,)
        for var, result in zip(equation.outputs, results):
            environment[id(var)] = result
    return environment


def kernel_source(graph: Graph) -> str:
    """Every fused kernel of `graph` as readable Python that builds and calls it with CuPy:
    the equations it replaces (as the graph prints them), the kernel, and its call."""
    names = _Names()
    for var in graph.inputs:
        names.of(var)
    printed = {id(equation): format_equation(equation, names) for equation in graph.equations}
    blocks = []
    for kernel in fuse(graph):
        replaced = [f"# {printed[id(equation)]}" for equation in kernel.equations]
        arguments = ", ".join(names.use(value).split(":")[0] for value in kernel.inputs)
        results = ", ".join(names.use(value).split(":")[0] for value in kernel.outputs)
        blocks.append("\n".join([
            *replaced,
            f"{kernel.name} = cupy.ElementwiseKernel(",
            f'    "{kernel.in_params}",',
            f'    "{kernel.out_params}",',
            f'    "{kernel.operation}",',
            f'    "{kernel.name}")',
            f"{results} = {kernel.name}({arguments})",
        ]))
    return "\n\n".join(blocks)


def kernel_name(in_params: str, out_params: str, operation: str) -> str:
    """`fused_` and 12 hex digits of a hash of the kernel's text: equal text, equal name."""
    text = "\n".join([in_params, out_params, operation]).encode()
    return f"fused_{hashlib.sha256(text).hexdigest()[:12]}"


# --- which equations fuse -----------------------------------------------------------------------

def is_elementwise(equation: Equation) -> bool:
    """Whether `equation` has a C form here: a ufunc called as a function (or `where`) with one
    result, each input and the result of a dtype in C_TYPES, computed in a kind its C forms
    (`Primitive.c`) have. Buffer reuse's `out=` does not matter: a kernel writes its own
    output."""
    name = equation.primitive.name
    impl = equation.primitive.impl
    forms = equation.primitive.c
    if not forms or set(equation.attrs) - {"out"} or len(equation.outputs) != 1:
        return False
    if name != "where" and not (isinstance(impl, np.ufunc) and impl.nout == 1):
        return False
    if equation.outputs[0].aval.dtype not in C_TYPES:
        return False
    for value in equation.inputs:
        if isinstance(value, (Var, Constant)) and value.aval.dtype not in C_TYPES:
            return False
        if isinstance(value, Literal) and not isinstance(value.value, (bool, int, float)):
            return False
    return all(dtype.kind in forms for dtype in loop_dtypes(equation))


def loop_dtypes(equation: Equation) -> list:
    """The dtypes NumPy computes each input in (after its type resolution casts them)."""
    if equation.primitive.name == "where":
        return [np.dtype(bool)] + [equation.outputs[0].aval.dtype] * 2
    ufunc = equation.primitive.impl
    types = [value.aval.dtype if not isinstance(value, Literal)
             else np.dtype(bool) if isinstance(value.value, bool) else type(value.value)
             for value in equation.inputs]
    return list(ufunc.resolve_dtypes((*types, None))[:ufunc.nin])


def _groups(graph: Graph) -> list[list[Equation]]:
    """Maximal groups, found from the last equation back: an equation joins the group of the
    equations that read its result if they are all in one group, it is elementwise with the
    same shape, and its result is no graph output; otherwise it starts a group of its own."""
    readers = readers_of(graph)
    graph_outputs = {id(value) for value in graph.outputs}
    group_of: dict[int, list[Equation]] = {}
    groups = []
    for equation in reversed(graph.equations):
        if not is_elementwise(equation):
            continue
        result = equation.outputs[0]
        owners = {id(group_of.get(id(reader))) for reader in readers.get(id(result), [])}
        group = group_of.get(id(readers[id(result)][0])) if id(result) in readers else None
        if (id(result) not in graph_outputs and len(owners) == 1 and group is not None
                and group[0].outputs[0].aval.shape == result.aval.shape):
            group.append(equation)
        else:
            group = [equation]
            groups.append(group)
        group_of[id(equation)] = group
    return [list(reversed(group)) for group in reversed(groups)]


# --- writing a group as C -----------------------------------------------------------------------

def _kernel(group: list[Equation]) -> FusedKernel:
    names: dict[int, str] = {}  # graph value -> its C name inside the kernel
    types: dict[int, np.dtype] = {}
    inputs, statements = [], []
    root = group[-1]
    for equation in group:
        operands = []
        for value, loop_dtype in zip(equation.inputs, loop_dtypes(equation)):
            if isinstance(value, Literal):
                operands.append(c_literal(value.value, loop_dtype))
                continue
            if isinstance(value, Constant) and value.aval.shape == ():
                text, dtype = c_literal(value.value.item(), value.aval.dtype), value.aval.dtype
            else:
                if id(value) not in names:
                    names[id(value)] = f"x{len(inputs)}"
                    types[id(value)] = value.aval.dtype
                    inputs.append(value)
                text, dtype = names[id(value)], types[id(value)]
            operands.append(text if dtype == loop_dtype else f"({C_TYPES[loop_dtype]}){text}")
        result = equation.outputs[0]
        kind = loop_dtypes(equation)[-1].kind
        expression = equation.primitive.c[kind].format(*operands)
        if equation is root:
            statements.append(f"y0 = {expression};")
        else:
            names[id(result)] = f"t{len(statements)}"
            types[id(result)] = result.aval.dtype
            statements.append(f"{C_TYPES[result.aval.dtype]} t{len(statements)} = {expression};")
    in_params = ", ".join(f"{value.aval.dtype.name} {names[id(value)]}" for value in inputs)
    out_params = f"{root.outputs[0].aval.dtype.name} y0"
    operation = " ".join(statements)
    return FusedKernel(kernel_name(in_params, out_params, operation), in_params, out_params,
                       operation, tuple(group), tuple(inputs), (root.outputs[0],))


def c_literal(value, dtype: np.dtype) -> str:
    """A Python or NumPy scalar as a C constant of `dtype`'s type, as NumPy would convert it:
    `0.1`, `0.1f` for float32, `INFINITY`, `NAN`, `-2`, `true`."""
    dtype = np.dtype(dtype)
    converted = dtype.type(value).item()
    if dtype.kind == "b":
        return "true" if converted else "false"
    if dtype.kind in "iu":
        text = repr(converted)
    elif math.isnan(converted):
        return "NAN"
    elif math.isinf(converted):
        text = "INFINITY" if converted > 0 else "-INFINITY"
    elif dtype == np.float32:
        text = str(np.float32(converted))
        text = (text if "." in text or "e" in text else text + ".0") + "f"
    else:
        text = repr(float(converted))
    return f"({text})" if text.startswith("-") else text
