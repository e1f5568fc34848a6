"""Shared by the runtime tests: trace, optimize and compile a function, then call it."""
import numpy as np

from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.execution.executor import compile, compile_graph
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.signature import signature_and_arrays
from autotrace.runtime.tracing.tracer import trace


def compiled(function, *args, optimized=True):
    """`function` traced with `args`, optimized, compiled: (callable like function, source)."""
    graph, structure = trace(function, args)
    if optimized:
        graph = optimize(graph)
    run, source = compile_graph(graph)

    def call(*call_args):
        return structure.unflatten(run(*signature_and_arrays(call_args, {})[1]))
    return call, source


def optimized_ops(function, *args, backend="numpy"):
    """The primitives of `function`'s graph, traced with `args` and compiled for `backend`."""
    graph, _ = trace(function, args)
    return [equation.primitive.name
            for equation in compile(graph, backend_named(backend)).graph.equations]


def assert_same(result, expected):
    """Equal values, shapes and dtypes, through tuples, lists and dicts."""
    if isinstance(expected, (tuple, list)):
        assert type(result) is type(expected) and len(result) == len(expected)
        for r, e in zip(result, expected):
            assert_same(r, e)
    elif isinstance(expected, dict):
        assert result.keys() == expected.keys()
        for key in expected:
            assert_same(result[key], expected[key])
    elif isinstance(expected, (np.ndarray, np.generic)):
        assert np.shape(result) == np.shape(expected)
        assert np.asarray(result).dtype == np.asarray(expected).dtype, (result, expected)
        np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-12)
    else:
        assert result == expected
