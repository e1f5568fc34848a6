"""The CuPy backend: graphs of GPU arrays run as CuPy calls, with each group of elementwise
equations (runtime/backends/fusion.py) one CuPy ElementwiseKernel instead of one launch per
equation.

    d = fused_85c48f973088(a, b, c)  # f64[3]@gpu:0

The `GpuFusion` pass replaces each group by one `fused_gpu` equation at the group's last
equation (runtime/backends/fusion.replace_regions).
The kernel is built the first time generated code needs it (`Primitive.globals`) and CuPy caches
its compilation by the kernel's text. Constant folding and graphs that never reach a GPU
compute the group with the equations it replaced, so the pass needs no GPU to be tested.
"""
from __future__ import annotations

from functools import lru_cache, wraps

import numpy as np

from .protocol import Backend
from ..devices import cupy_module, gpu_count, parse_device
from .fusion import FusedKernel, fuse, replace_regions, run_equations
from ..graph import Equation, Graph
from ..primitives.registry import Primitive


def _impl(*values, kernel: FusedKernel):
    environment = run_equations(kernel.equations, kernel.inputs, values)
    return environment[id(kernel.outputs[0])]


# NVRTC's headers do not define C's INFINITY and NAN, which kernels' literals use
# (runtime/backends/fusion.c_literal): as float constants, they convert to double exactly.
_PREAMBLE = """
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fc00000)
#endif
"""


@lru_cache(maxsize=None)
def _elementwise_kernel(in_params: str, out_params: str, operation: str, name: str):
    return cupy_module().ElementwiseKernel(in_params, out_params, operation, name,
                                           preamble=_PREAMBLE)


def _kernel_globals(attrs) -> dict:
    kernel = attrs["kernel"]
    return {kernel.name: _elementwise_kernel(kernel.in_params, kernel.out_params,
                                             kernel.operation, kernel.name)}


FUSED_GPU = Primitive(
    "fused_gpu", _impl,
    abstract_eval=lambda *avals, kernel: kernel.outputs[0].aval,
    source=lambda args, attrs: f"{attrs['kernel'].name}({', '.join(args)})",
    fresh=True,
    globals=_kernel_globals)


class GpuFusion:
    """Each fusable group (runtime/backends/fusion.fuse) becomes one `fused_gpu` equation."""

    def run(self, graph: Graph) -> Graph:
        kernels = fuse(graph)
        if not kernels:
            return graph
        replaced = {id(equation) for kernel in kernels for equation in kernel.equations}
        fused_at = {id(kernel.equations[-1]): Equation(FUSED_GPU, kernel.inputs,
                                                       {"kernel": kernel}, kernel.outputs)
                    for kernel in kernels}
        return replace_regions(graph, fused_at, replaced)


class CupyBackend(Backend):
    name = "cupy"
    device_kind = "gpu"
    lowers_scalars = False  # a 0-d GPU value stays on the GPU

    def available(self) -> str | None:
        if cupy_module() is None:
            return "CuPy is not installed (pip install 'autotrace[gpu]') or cannot start"
        return None

    def array_module(self):
        cupy = cupy_module()
        if cupy is None:
            raise RuntimeError(f"the cupy backend cannot run here: {self.available()}")
        return cupy

    def place_constant(self, value, device: str):
        """A NumPy array or scalar, copied to the graph's GPU once, when the graph is compiled
        (CuPy refuses NumPy arrays as arguments); other constants (dtypes, shapes) as they are."""
        if isinstance(value, (np.ndarray, np.generic)):
            cupy = self.array_module()
            with cupy.cuda.Device(parse_device(device).index):
                return cupy.asarray(value)
        return value

    def passes(self) -> list:
        return [GpuFusion()]

    def run_on(self, function, device: str):
        """With one GPU, `function` itself; with several, `function` run with the graph's GPU
        current, whichever GPU is current where it is called."""
        if gpu_count() < 2:
            return function
        gpu, index = self.array_module().cuda.Device, parse_device(device).index

        @wraps(function)
        def on_device(*arrays):
            with gpu(index):  # a context of its own per call: calls may come from threads
                return function(*arrays)
        return on_device


BACKEND = CupyBackend()
