"""Every entry of tests/rule_table.py through the whole transform, to second order.

tests/test_rules.py checks each rule by itself (rule_vjp). Here each entry becomes a small
Python function that makes the entry's call, written out as source in a generated module:

    def linalg_solve_matrix(a0, a1):
        return np.linalg.solve(a0, a1)

and `check_grads(wrapper, args, wrt, order=2)` differentiates it with autotrace.grad, so the
rule is parsed, inlined, cleaned up, printed and run as generated code, and its second
derivative goes through the rules of the functions its body calls.

The wrapper must be real source (autotrace reads it), and the callee must be visible in that
source (a rule is inlined only where the call resolves before running), so the module is
written to a temporary file and imported. Arguments that carry no gradient and are plain
Python literals (axes, shapes, subscripts, index lists) are written into the call; everything
else is a parameter of the wrapper.

Eigenvectors, whose sign is arbitrary, are returned squared. cholesky, eigh and eigvalsh read
one triangle of their argument, and are checked along any direction, as NumPy runs them.
"""
from __future__ import annotations

import importlib.util
import re
import zlib

import numpy as np
import pytest

from autotrace.testing import check_grads
from autotrace.runtime.derivatives import adjoint_ops as ops
from tests.rule_table import (TABLE, align_eigenvectors, align_general_eigenvectors,
                              align_singular_vectors)

# Where a callee can be named in the wrapper's source, by the module that holds it.
NAMESPACES = [("np", np), ("np.linalg", np.linalg), ("ops", ops)]


def is_literal(value) -> bool:
    """True for a value with no float in it that prints as Python source of itself."""
    if isinstance(value, (bool, int, str, type(None))) and not isinstance(value, np.generic):
        return True
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        return all(is_literal(item) for item in value)
    return False


def has_float(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(has_float(item) for item in value)
    if isinstance(value, float):
        return True
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f"


def callee_source(func, name: str, bindings: dict) -> str:
    """How the wrapper names `func`: `np.linalg.solve` where possible, else a bound global."""
    for prefix, module in NAMESPACES:
        if getattr(module, getattr(func, "__name__", ""), None) is func:
            return f"{prefix}.{func.__name__}"
    bindings[name] = func
    return name


def identifier(entry_name: str) -> str:
    return re.sub(r"\W+", "_", entry_name).strip("_")


class Wrapper:
    """The source of one entry's wrapper, and how to call and check it."""

    def __init__(self, entry, bindings: dict):
        self.entry = entry
        self.name = identifier(entry.name)
        rng = np.random.default_rng(zlib.crc32(entry.name.encode()))
        args, kwargs = entry.arguments(rng)
        parameters, call_args, call_keywords = [], [], []
        self.args = []  # the values of the wrapper's parameters, in order
        position_of = {}  # an entry's wrt key (position or keyword) -> wrapper parameter index
        for key, value in list(enumerate(args)) + list(kwargs.items()):
            if is_literal(value):
                text = repr(value)
            else:
                text = f"a{key}" if isinstance(key, int) else f"kw_{key}"
                position_of[key] = len(parameters)
                parameters.append(text)
                self.args.append(value)
            if isinstance(key, int):
                call_args.append(text)
            else:
                call_keywords.append(f"{key}={text}")
        if entry.wrt is None:
            self.wrt = tuple(i for i, value in enumerate(self.args) if has_float(value))
        else:
            self.wrt = tuple(position_of[key] for key in entry.wrt)
        assert self.wrt, f"{entry.name}: nothing to differentiate"

        callee = callee_source(entry.func, f"{self.name}_func", bindings)
        call = f"{callee}({', '.join(call_args + call_keywords)})"
        body = []
        assert entry.direction is None, f"{entry.name}: a wrapper takes any direction"
        if entry.align is align_singular_vectors:  # (each u_k v_k^T, whatever the signs)
            body += [f"u, s, vh = {call}",
                     "return s, u[..., :, None, :] * np.swapaxes(vh, -1, -2)[..., None, :, :]"]
        elif entry.align is not None:
            assert entry.align in (align_eigenvectors, align_general_eigenvectors), \
                f"{entry.name}: unknown align"
            body += [f"w, v = {call}", "return w, v * v"]
        else:
            body.append(f"return {call}")
        self.source = (f"def {self.name}({', '.join(parameters)}):\n"
                       + "".join(f"    {line}\n" for line in body))


def build_wrappers(directory) -> dict:
    """Write every entry's wrapper into one module under `directory`; name -> (Wrapper, f)."""
    bindings = {}
    wrappers = [Wrapper(entry, bindings) for entry in TABLE]
    header = "import numpy as np\n\nfrom autotrace.runtime.derivatives import adjoint_ops as ops\n"
    path = directory / "rule_table_wrappers.py"
    path.write_text(header + "".join("\n\n" + w.source for w in wrappers))
    spec = importlib.util.spec_from_file_location("rule_table_wrappers", path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(bindings)
    spec.loader.exec_module(module)
    return {w.entry.name: (w, getattr(module, w.name)) for w in wrappers}


@pytest.fixture(scope="module")
def wrappers(tmp_path_factory):
    return build_wrappers(tmp_path_factory.mktemp("rule_table"))


@pytest.mark.parametrize("entry", TABLE, ids=[entry.name for entry in TABLE])
def test_rule_through_grad(entry, wrappers):
    wrapper, function = wrappers[entry.name]
    check_grads(function, wrapper.args, wrt=wrapper.wrt, order=min(2, entry.order))


def test_wrappers_read_like_user_code(tmp_path):
    """A few wrappers, to show what the table tests run (and that literals stay literal)."""
    built = build_wrappers(tmp_path)
    assert built["einsum/matmul"][0].source == (
        "def einsum_matmul(a1, a2):\n"
        "    return np.einsum('ij,jk->ik', a1, a2)\n")
    assert built["clip/keywords"][0].source == (
        "def clip_keywords(a0, kw_min, kw_max):\n"
        "    return np.clip(a0, min=kw_min, max=kw_max)\n")
    assert built["linalg.eigh"][0].source == (
        "def linalg_eigh(a0):\n"
        "    w, v = np.linalg.eigh(a0)\n"
        "    return w, v * v\n")
    assert built["helper:unbroadcast"][0].source == (
        "def helper_unbroadcast(a0, a1):\n"
        "    return ops.unbroadcast(a0, a1)\n")
    assert built["helper:unbroadcast"][0].wrt == (0,)
    assert built["reshape"][0].source == (
        "def reshape(a0):\n"
        "    return np.reshape(a0, (2, 6))\n")
