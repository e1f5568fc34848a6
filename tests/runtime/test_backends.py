"""The backend seam (runtime/backends/): which backend a graph runs on, one device spelling,
the configuration switch, and a backend's namespace and passes reaching the executor."""
import math

import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends import selection as backends
from autotrace.runtime.backends.protocol import Backend
from autotrace.runtime.backends.selection import backend_for, backend_named, cpu_backend
from autotrace.runtime.backends.numpy_backend import NumpyBackend
from autotrace.runtime.devices import DeviceError, device_of
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.graph import Equation, Graph
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.tracer import trace


class _FakeCupyArray:
    """What device_of reads of a CuPy array: its module and `device.id`."""
    __module__ = "cupy._core.core"

    class device:
        id = 1


def test_one_device_spelling():
    assert device_of(np.zeros(3)) == "cpu"
    assert device_of(np.float64(1.0)) == "cpu"
    assert device_of(2.5) == "cpu"
    assert device_of(_FakeCupyArray()) == "gpu:1"
    graph, _ = trace(lambda x: x * 2.0, (np.zeros(2),))
    assert str(graph.inputs[0].aval) == "f64[2]"


def test_cpu_graphs_run_on_the_configured_cpu_backend():
    before = cpu_backend()
    try:
        cpu_backend("numpy")
        assert backend_for(("cpu", "cpu")).name == "numpy"
        assert backend_for(()).name == "numpy"
    finally:
        cpu_backend(before)


def test_gpu_graphs_run_on_cupy():
    assert backend_for(("gpu:0",)).name == "cupy"


def test_two_devices_are_an_error_naming_both():
    with pytest.raises(DeviceError) as error:
        backend_for(("gpu:0", "cpu"))
    assert str(error.value) == (
        "the inputs are on cpu and gpu:0: a traced function runs on one device; move them "
        "with autotrace.to_device(x, 'cpu') first (a Variable is on the device it was made "
        "on: make it inside autotrace.device('gpu:0') to have it there)")


def test_unknown_names_are_errors_listing_the_known_ones():
    with pytest.raises(ValueError) as error:
        cpu_backend("fortran")
    assert str(error.value) == ("unknown CPU backend 'fortran': expected one of 'auto', "
                                "'llvm', 'numpy'")
    with pytest.raises(ValueError, match=r"^unknown backend 'fortran': expected one of "):
        backend_named("fortran")


def test_the_namespace_is_the_backends():
    namespace = backend_named("numpy").namespace()
    assert namespace["np"] is np and namespace["math"] is math
    assert "conv2d" in namespace  # autotrace's own array functions, called by name


class _Doubling(Backend):
    """A backend whose array module doubles every product and whose pass marks the graph:
    shows that compile_graph runs generated code in the backend's namespace and that optimize
    runs its passes."""
    name = "doubling"

    class _Module:
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def multiply(a, b, **kwargs):
            return 2 * np.multiply(a, b, **kwargs)

    def array_module(self):
        return self._Module()

    def passes(self):
        return [_CountingPass()]


class _CountingPass:
    runs = 0

    def run(self, graph: Graph) -> Graph:
        _CountingPass.runs += 1
        assert all("out" not in equation.attrs for equation in graph.equations), \
            "backend passes run before buffer reuse"
        return graph


def test_compile_graph_runs_in_the_backends_namespace_and_optimize_runs_its_passes():
    x = np.arange(3.0)
    graph, _ = trace(lambda x: np.exp(x * x) + 1.0, (x,))
    backend = _Doubling()
    runs = _CountingPass.runs
    optimized = optimize(graph, backend=backend)
    assert _CountingPass.runs == runs + 1
    function, source = compile_graph(optimized, backend=backend)
    assert "np.multiply(a, a)" in source
    np.testing.assert_allclose(function(x)[0], np.exp(2 * x * x) + 1.0)


def test_a_scalar_graph_is_python_floats_only_where_the_backend_allows():
    graph = optimize(trace(lambda x: x * 3.0 + 1.0, (np.float64(2.0),))[0])
    assert "math" not in compile_graph(graph, backend=_Doubling())[1]
    lowered = compile_graph(graph, backend=NumpyBackend())[1]
    assert "_numpy(" in lowered  # the float version, guarded by the NumPy one


def test_primitive_globals_reach_the_generated_code():
    from autotrace.runtime.ops import Primitive
    from autotrace.runtime.graph import Var

    calls = []

    def kernel(a):
        calls.append(a)
        return a + 10.0

    primitive = Primitive("test_kernel", lambda a, **attrs: a + 10.0,
                          abstract_eval=lambda aval, **attrs: aval,
                          source=lambda args, attrs: f"my_kernel_7({args[0]})",
                          globals=lambda attrs: {"my_kernel_7": kernel})
    x = np.ones(2)
    graph, _ = trace(lambda x: x * 1.5, (x,))
    result = Var(graph.outputs[0].aval)
    graph = Graph(graph.inputs, [*graph.equations, Equation(primitive, graph.outputs, {},
                                                            [result])], [result])
    function, source = compile_graph(graph, backend=NumpyBackend())
    assert "my_kernel_7(b)" in source
    np.testing.assert_array_equal(function(x)[0], [11.5, 11.5])
    assert len(calls) == 1


def test_autotrace_function_compiles_for_the_configured_backend():
    before = cpu_backend()
    try:
        cpu_backend("numpy")
        traced = autotrace.function(lambda x: np.tanh(x) * 2.0)
        assert traced(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]
        assert "np.tanh(" in traced.source(np.zeros(3))
    finally:
        cpu_backend(before)
    assert backends.CPU_CHOICES == ("auto", "llvm", "numpy")


def test_config_switch_is_the_runtimes():
    before = autotrace.config.cpu_backend()
    try:
        assert autotrace.config.cpu_backend("numpy") == "numpy" == cpu_backend()
    finally:
        autotrace.config.cpu_backend(before)
    assert autotrace.config.cpu_backend() == before
