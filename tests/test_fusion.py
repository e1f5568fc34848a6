"""Kernel fusion (runtime/backends/fusion.py): the kernels' exact text for a few traced functions, where
groups end, dtypes and literals in C, stable names; and, without a GPU, what the kernels compute:
a small interpreter of the C they contain runs each kernel on NumPy arrays in place of the
equations it replaces, and the graph must give the same results as the graph run unfused.
"""
import re

import numpy as np
import pytest

from autotrace.runtime.backends import cupy_backend
from autotrace.runtime.backends.cupy_backend import GpuFusion
from autotrace.runtime.backends.numpy_backend import NumpyBackend
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.backends.fusion import c_literal, fuse, kernel_source
from autotrace.runtime.graph import Constant, Literal
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.tracer import trace

rng = np.random.default_rng(0)
v3 = rng.standard_normal(3)
m34 = rng.standard_normal((3, 4))
f32 = rng.standard_normal((3, 4)).astype(np.float32)
i34 = rng.integers(-5, 5, (3, 4))
with_nan = np.array([1.0, np.nan, -2.0, np.inf])


def optimized(function, *args):
    return optimize(trace(function, args)[0])


def operations(function, *args):
    return [kernel.operation for kernel in fuse(optimized(function, *args))]


# --- the kernels' text --------------------------------------------------------------------------

def test_tanh_of_affine_is_one_kernel():
    graph = optimized(lambda x, w, b: np.tanh(x * w + b), v3, v3, v3)
    assert str(GpuFusion().run(graph)).splitlines()[1:] == [
        "  d:f64[3] = fused_gpu[kernel=fused_85c48f973088] a b c", "  in (d) }"]
    [kernel] = fuse(graph)
    assert kernel.in_params == "float64 x0, float64 x1, float64 x2"
    assert kernel.out_params == "float64 y0"
    assert kernel.operation == "double t0 = x0 * x1; double t1 = t0 + x2; y0 = tanh(t1);"
    assert kernel.inputs == graph.inputs and kernel.outputs == graph.outputs
    assert kernel.equations == tuple(graph.equations)
    assert kernel_source(graph) == f"""\
# d:f64[3] = multiply a b
# e:f64[3] = add[out=0] d c
# f:f64[3] = tanh[out=0] e
{kernel.name} = cupy.ElementwiseKernel(
    "float64 x0, float64 x1, float64 x2",
    "float64 y0",
    "double t0 = x0 * x1; double t1 = t0 + x2; y0 = tanh(t1);",
    "{kernel.name}")
f = {kernel.name}(a, b, c)"""


def test_an_input_read_twice_is_one_parameter():
    assert operations(lambda x: np.exp(-x * x) * x, v3) == [
        "double t0 = -x0; double t1 = t0 * x0; double t2 = exp(t1); y0 = t2 * x0;"]


def test_broadcast_inputs_and_where_and_comparisons():
    [kernel] = fuse(optimized(lambda x, b: np.where(x > b, x, 0.5 * x) + b, m34, v3[:, None]))
    assert kernel.in_params == "float64 x0, float64 x1"
    assert kernel.operation == ("bool t0 = x0 > x1; double t1 = 0.5 * x0; "
                                "double t2 = t0 ? x0 : t1; y0 = t2 + x1;")


def test_maximum_keeps_numpy_nan_semantics():
    assert operations(lambda x: np.maximum(x, 0.0) * 2.0, v3) == [
        "double t0 = (x0 >= 0.0 || isnan(x0)) ? x0 : 0.0; y0 = t0 * 2.0;"]


# --- where groups end ---------------------------------------------------------------------------

def test_groups_end_at_ops_that_are_not_elementwise():
    def f(x, w):
        h = np.tanh(x * 2.0 + 1.0)
        return np.exp(h @ w) - 1.0
    graph = optimized(f, m34, m34.T)
    names = [[equation.primitive.name for equation in kernel.equations] for kernel in fuse(graph)]
    assert names == [["multiply", "add", "tanh"], ["exp", "subtract"]]


def test_groups_end_at_values_read_outside_them():
    def f(x):
        shared = np.sin(x) * 3.0     # read by two groups: its own kernel's output
        return np.exp(shared) + 1.0, np.cos(shared) * shared
    graph = optimized(f, v3)
    kernels = fuse(graph)
    assert [k.operation for k in kernels] == [
        "double t0 = sin(x0); y0 = t0 * 3.0;",
        "double t0 = exp(x0); y0 = t0 + 1.0;",
        "double t0 = cos(x0); y0 = t0 * x0;"]
    assert kernels[1].inputs == kernels[0].outputs == kernels[2].inputs


def test_graph_outputs_and_reductions_end_groups():
    def f(x):
        y = np.exp(x) + 1.0
        return y, np.sum(y * y), np.log(y) * 2.0
    names = [[e.primitive.name for e in k.equations] for k in fuse(optimized(f, v3))]
    assert names == [["exp", "add"], ["log", "multiply"]]  # y*y is alone: one launch already


def test_no_group_without_a_c_form():
    assert fuse(optimized(lambda x: np.logaddexp(x, 1.0) * 2.0, v3)) == []
    assert fuse(optimized(lambda x: (x * 1j) * 2.0, v3)) == []    # complex has no C type here
    assert fuse(optimized(lambda x: np.sum(x), v3)) == []


def test_a_group_has_one_shape():
    names = [[e.primitive.name for e in k.equations]
             for k in fuse(optimized(lambda x, y: np.exp(x * 2.0) + y, v3, m34.T))]
    assert names == [["multiply", "exp"]]  # the add has another shape: it is left alone


# --- dtypes and literals ------------------------------------------------------------------------

def test_dtypes_map_to_c_types():
    [kernel] = fuse(optimized(lambda x: np.exp(x) * 0.1 + 2.0, f32))
    assert (kernel.in_params, kernel.out_params) == ("float32 x0", "float32 y0")
    assert kernel.operation == "float t0 = exp(x0); float t1 = t0 * 0.1f; y0 = t1 + 2.0f;"
    [kernel] = fuse(optimized(lambda i: (i * 3 - 1) > 2, i34))
    assert kernel.in_params == "int64 x0" and kernel.out_params == "bool y0"
    assert kernel.operation == "long long t0 = x0 * 3; long long t1 = t0 - 1; y0 = t1 > 2;"


def test_mixed_dtypes_are_cast_as_numpy_casts_them():
    [kernel] = fuse(optimized(lambda x, i: np.sqrt(x * i) + 1.0, f32, i34))
    assert kernel.operation == (
        "double t0 = (double)x0 * (double)x1; double t1 = sqrt(t0); y0 = t1 + 1.0;")


@pytest.mark.parametrize("value, dtype, text", [
    (0.1, np.float64, "0.1"), (1 / 3, np.float64, "0.3333333333333333"),
    (2, np.float64, "2.0"), (1e-300, np.float64, "1e-300"), (-1.5, np.float64, "(-1.5)"),
    (float("inf"), np.float64, "INFINITY"), (-np.inf, np.float64, "(-INFINITY)"),
    (float("nan"), np.float64, "NAN"), (0.1, np.float32, "0.1f"), (3, np.float32, "3.0f"),
    (1e-8, np.float32, "1e-08f"), (-4, np.int64, "(-4)"), (True, np.bool_, "true"),
    (np.float32(0.5), np.float64, "0.5"),
])
def test_literals(value, dtype, text):
    assert c_literal(value, np.dtype(dtype)) == text


def test_a_kernel_has_the_same_name_in_every_trace():
    first = fuse(optimized(lambda x, w, b: np.tanh(x * w + b), v3, v3, v3))
    second = fuse(optimized(lambda p, q, r: np.tanh(p * q + r), m34, m34, m34))
    other = fuse(optimized(lambda x, w, b: np.tanh(x * w - b), v3, v3, v3))
    assert first[0].name == second[0].name != other[0].name
    assert re.fullmatch(r"fused_[0-9a-f]{12}", first[0].name)


# --- what the kernels compute, checked on the CPU -----------------------------------------------

_C_TYPES = {"double": np.float64, "float": np.float32, "long long": np.int64, "int": np.int32,
            "bool": np.bool_}
_C_FUNCTIONS = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
                "acosh": np.arccosh, "atanh": np.arctanh, "fabs": np.absolute, "pow": np.power,
                "atan2": np.arctan2, "max": np.maximum, "min": np.minimum}
_CONSTANTS = {"INFINITY": np.float32(np.inf), "NAN": np.float32(np.nan),
              "true": np.bool_(True), "false": np.bool_(False)}
_BINARY = {"||": (1, np.logical_or), "&&": (2, np.logical_and), "==": (3, np.equal),
           "!=": (3, np.not_equal), "<": (4, np.less), "<=": (4, np.less_equal),
           ">": (4, np.greater), ">=": (4, np.greater_equal), "+": (5, np.add),
           "-": (5, np.subtract), "*": (6, np.multiply), "/": (6, np.true_divide)}
_TOKEN = re.compile(
    r"\s*(long long|\d+\.?\d*(?:e[+-]?\d+)?f?|\w+|&&|\|\||[<>=!]=|[-+*/<>!?:()=,;])")


def run_kernel(operation: str, arguments: dict) -> np.ndarray:
    """Run a kernel's C `operation` on NumPy arrays, with C's typing: every constant and
    variable has its C type (NumPy scalars and arrays, not Python numbers)."""
    variables = dict(arguments)
    for statement in filter(None, (s.strip() for s in operation.split(";"))):
        tokens = _TOKEN.findall(statement)
        assert "".join(tokens) == statement.replace(" ", "").replace("longlong", "long long")
        ctype = tokens.pop(0) if tokens[0] in _C_TYPES else None
        target, equals = tokens.pop(0), tokens.pop(0)
        assert equals == "="
        parser = _Parser(tokens, variables)
        value = parser.expression()
        assert not parser.tokens, parser.tokens
        if ctype is not None:
            value = np.asarray(value).astype(_C_TYPES[ctype])
        variables[target] = value
    return variables["y0"]


class _Parser:
    """Precedence climbing over the C expressions the kernels use, evaluating as it goes."""

    def __init__(self, tokens, variables):
        self.tokens, self.variables = tokens, variables

    def take(self, expected=None):
        token = self.tokens.pop(0)
        assert expected is None or token == expected, (token, expected)
        return token

    def expression(self):
        condition = self.binary(1)
        if self.tokens and self.tokens[0] == "?":
            self.take("?")
            when_true = self.expression()
            self.take(":")
            return np.where(condition, when_true, self.expression())
        return condition

    def binary(self, lowest):
        left = self.unary()
        while self.tokens and self.tokens[0] in _BINARY and _BINARY[self.tokens[0]][0] >= lowest:
            precedence, function = _BINARY[self.take()]
            right = self.binary(precedence + 1)
            if function is np.true_divide:
                assert np.result_type(left, right).kind == "f", "C divides integers otherwise"
            left = function(left, right)
        return left

    def unary(self):
        token = self.take()
        if token == "-":
            return np.negative(self.unary())
        if token == "!":
            return np.logical_not(self.unary())
        if token == "(" and self.tokens[0] in _C_TYPES:
            ctype = self.take()
            self.take(")")
            return np.asarray(self.unary()).astype(_C_TYPES[ctype])
        if token == "(":
            value = self.expression()
            self.take(")")
            return value
        if token[0].isdigit():
            if token.endswith("f"):
                return np.float32(token[:-1])
            return np.float64(token) if "." in token or "e" in token else np.int64(token)
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        if self.tokens and self.tokens[0] == "(":
            self.take("(")
            arguments = [self.expression()]
            while self.tokens[0] == ",":
                self.take(",")
                arguments.append(self.expression())
            self.take(")")
            function = _C_FUNCTIONS.get(token) or getattr(np, token)
            return function(*arguments)
        return self.variables[token]


class _InterpretedKernel:
    """Stands for cupy.ElementwiseKernel without a GPU: runs the kernel's C on NumPy arrays."""

    def __init__(self, in_params, out_params, operation, name):
        self.in_params, self.operation = in_params, operation

    def __call__(self, *arrays):
        shape = np.broadcast_shapes(*(np.shape(array) for array in arrays))
        arguments = {f"x{i}": np.broadcast_to(array, shape) for i, array in enumerate(arrays)}
        with np.errstate(all="ignore"):
            return run_kernel(self.operation, arguments)


class _InterpretedGpu(NumpyBackend):
    """The CuPy backend's passes with NumPy's array module and interpreted kernels."""
    name = "interpreted_gpu"
    lowers_scalars = False

    def passes(self):
        return [GpuFusion()]


def run_fused(graph, *args):
    """The graph with each group replaced by one `fused_gpu` equation (the CuPy backend's own
    pass) and compiled by the executor, kernels run by `run_kernel`; the equations a kernel
    replaces are gone, so nothing outside may read their results."""
    backend = _InterpretedGpu()
    fused = GpuFusion().run(graph)
    assert len(fused.equations) == len(graph.equations) - sum(
        len(kernel.equations) - 1 for kernel in fuse(graph))
    original = cupy_backend._elementwise_kernel
    cupy_backend._elementwise_kernel = _InterpretedKernel
    try:
        function, _ = compile_graph(fused, backend=backend)
    finally:
        cupy_backend._elementwise_kernel = original
    with np.errstate(all="ignore"):
        return function(*args)


def softplus_layer(x, w, b):
    z = x @ w + b
    return np.where(z > 20.0, z, np.log1p(np.exp(np.minimum(z, 20.0)))).sum(axis=0)


FUNCTIONS = [
    ("tanh_affine", lambda x, w, b: np.tanh(x * w + b), (v3, v3, v3)),
    ("gaussian", lambda x: np.exp(-x * x / 2.0) / np.sqrt(2 * np.pi), (m34,)),
    ("relu_grad_like", lambda x, g: np.where(x > 0, g, 0.0) * 0.5 + x ** 2, (m34, m34)),
    ("nan_maximum", lambda x: (np.maximum(x, 0.0) * 2.0, np.minimum(0.0, x) + 1.0), (with_nan,)),
    ("float32", lambda x: np.tanh(x * np.float32(1.5) + 0.1) - x / 3.0, (f32,)),
    ("mixed", lambda x, i: np.sqrt(np.abs(x * i)) + (i > 0) * 1.0, (f32, i34)),
    ("integers", lambda i: np.maximum(i * 3 - 1, -4) + i * i, (i34,)),
    ("broadcast", lambda x, b: np.arctan2(x - b, 2.0) * np.cos(b), (m34, v3[:, None])),
    ("softplus_layer", softplus_layer, (m34, m34.T, v3)),
    ("shared", lambda x: (np.sin(x) * 3.0) + np.cos(np.sin(x) * 3.0), (m34,)),
]


@pytest.mark.parametrize("name, function, args", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_kernels_compute_what_the_graph_computes(name, function, args):
    graph = optimized(function, *args)
    assert fuse(graph), "each function here has something to fuse"
    with np.errstate(all="ignore"):
        expected = compile_graph(graph)[0](*args)
    for result, wanted in zip(run_fused(graph, *args), expected):
        assert np.asarray(result).dtype == np.asarray(wanted).dtype
        np.testing.assert_allclose(result, wanted, rtol=1e-6 if wanted.dtype == np.float32
                                   else 1e-13)
