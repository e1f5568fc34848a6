"""The compiled CPU backend: the NumPy backend, with each region of elementwise equations that is
large enough to pay fused into one loop compiled by LLVM (cpu_fusion.py), which reads each
input once and writes each output once, calling glibc's vector math (libmvec) for the
transcendental functions but tanh, which it writes itself (cpu_vector_math.py); rows reduced
over the trailing axis and used in the same rows (softmax, layer norm) in one row kernel each
(cpu_row_fusion.py); arithmetic that a later kernel can compute from what it reads anyway
computed again there rather than written and read back (cpu_recompute.py); an outer product
(a column times a row) in one loop that writes it (cpu_outer.py); max pooling and its
gradient in one loop each (cpu_pooling.py); and a graph of scalars compiled whole into one
native function, its repeated blocks rolled back into loops (cpu_scalar.py).

It needs llvmlite, a dependency of autotrace. Where llvmlite cannot be imported or cannot compile
for the CPU, `backend_for` warns once and gives the NumPy backend instead
(`config.cpu_backend("auto")`); a kernel that fails to build leaves its region to NumPy with one
warning.
"""
from __future__ import annotations

import os

from ..numpy_backend import NumpyBackend
from . import compiler


class LlvmBackend(NumpyBackend):
    name = "llvm"
    # Regions smaller than this stay NumPy calls; None: cpu_fusion.worth_fusing's measured
    # rule. AUTOTRACE_FUSION_MIN_ELEMENTS=1 fuses every region, to test the kernels on programs
    # of small arrays.
    min_elements: int | None = int(os.environ.get("AUTOTRACE_FUSION_MIN_ELEMENTS", 0)) or None

    def available(self) -> str | None:
        reason = compiler.unavailable_reason()
        if reason is not None:
            return f"llvmlite did not load ({reason})"
        return None

    # The compiled parts load when first used (they register their own primitives).
    def passes(self) -> list:
        from .cpu_fusion import CpuFusion
        from .cpu_outer import CpuOuterProducts
        from .cpu_pooling import CpuMaxPooling
        from .cpu_recompute import CpuRecompute
        from .cpu_row_fusion import CpuRowFusion
        return [*super().passes(), CpuOuterProducts(), CpuMaxPooling(),
                CpuRowFusion(self.min_elements),
                CpuRecompute(self.min_elements), CpuFusion(self.min_elements)]

    def compile_whole(self, graph, python_version):
        from .cpu_scalar import compile_scalar_graph
        return compile_scalar_graph(graph, fallback=python_version)


BACKEND = LlvmBackend()
