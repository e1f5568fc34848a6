"""The protocol every backend follows (runtime/backends/__init__.py describes it)."""
from __future__ import annotations

import math

from ..ops import source_globals


class Backend:
    """The protocol, with the parts every backend shares; see the module docstring."""

    name = "backend"
    device_kind = "cpu"
    lowers_scalars = False
    writes_in_place = True
    keeps_buffers = False
    # primitive name -> source(args, attrs): a faster call of the same meaning in this backend's
    # array module, written in place of the primitive's own (`np.sum(...)`)
    sources: dict = {}

    def available(self) -> str | None:
        """None when this backend can run here, else why not (what to install)."""
        return None

    def array_module(self):
        raise NotImplementedError

    def namespace(self) -> dict:
        return {"np": self.array_module(), "math": math, **source_globals,
                "__name__": "autotrace_graph"}

    def place_constant(self, value, device: str):
        return value

    def passes(self) -> list:
        return []

    def compile_whole(self, graph, python_version):
        return None

    def run_on(self, function, device: str):
        return function

    def __repr__(self) -> str:
        return f"<autotrace backend {self.name}>"
