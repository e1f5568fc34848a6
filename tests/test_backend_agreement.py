"""The compiled CPU backend computes what the NumPy backend computes.

Every corpus function's traced gradient, and every rule table entry's (each entry's call as a
small function, tests/test_rule_table_grad.py), is traced twice: once for the NumPy backend and
once for the llvm backend with every elementwise region fused however small it is (the backend
normally fuses only regions of 1,024 elements or more), and graphs of scalars compiled whole.
The two must agree to 1e-13 relative, with NaN and inf where NumPy has them.
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.selection import backend_named, cpu_backend
from tests import corpus
from tests.numeric import assert_same_structure
from tests.test_rule_table_grad import build_wrappers

llvm = backend_named("llvm")
if llvm.available() is not None:
    pytest.skip(f"the llvm backend cannot run here: {llvm.available()}", allow_module_level=True)

CASES = {case.function.__name__: case for case in corpus.CASES}


def assert_agree(fused, reference, where=""):
    """Containers of the same structure whose arrays agree to 1e-13 relative (NaN where NaN)."""
    assert_same_structure(fused, reference, _assert_leaves_agree, where)


def _assert_leaves_agree(fused, reference, where):
    assert np.shape(fused) == np.shape(reference), where
    assert np.asarray(fused).dtype == np.asarray(reference).dtype, where
    np.testing.assert_allclose(fused, reference, rtol=1e-13, atol=_libm_absolute(reference),
                               equal_nan=True, err_msg=where)


def _libm_absolute(reference) -> float:
    """A kernel's vector tanh or exp may differ from NumPy's by an ulp (AVX2's do, AVX-512's
    agree to 1e-13 relative): an element that cancels to near zero keeps that absolute
    difference, an ulp or two of the array's largest values."""
    values = np.abs(np.asarray(reference, dtype=complex if np.iscomplexobj(reference)
                               else float))
    finite = values[np.isfinite(values)]
    return 1e-300 if finite.size == 0 else max(1e-300, 1e-15 * float(finite.max()))


def run_traced(backend: str, make_traced, args):
    """(result, traced function) of a fresh trace of `make_traced()` for `backend` ("numpy", or
    "llvm" with every region fused)."""
    before, threshold = cpu_backend(), llvm.min_elements
    try:
        cpu_backend(backend)
        if backend == "llvm":
            llvm.min_elements = 1
        traced = make_traced()
        return traced(*args), traced
    finally:
        llvm.min_elements = threshold
        cpu_backend(before)


def on_both_backends(make_traced, args):
    """(llvm result with every region fused, NumPy backend result, the llvm traced function)."""
    reference, _ = run_traced("numpy", make_traced, args)
    fused, traced = run_traced("llvm", make_traced, args)
    return fused, reference, traced


@pytest.mark.parametrize("name", list(CASES))
def test_corpus_gradients_agree(name):
    case = CASES[name]
    args = case.make_args(np.random.default_rng(0))
    fused, reference, _ = on_both_backends(
        lambda: autotrace.function(autotrace.grad(case.function, wrt=case.wrt)), args)
    assert_agree(fused, reference, name)


@pytest.fixture(scope="module")
def wrappers(tmp_path_factory):
    return build_wrappers(tmp_path_factory.mktemp("rule_table_backends"))


@pytest.mark.long_running
def test_rule_table_gradients_agree(wrappers):
    """One test for the whole table (its entries compile hundreds of small kernels): every
    entry whose gradient traces, fused, against the NumPy backend's."""
    compared = fused_graphs = 0
    for name, (wrapper, function) in wrappers.items():
        def make_traced():
            return autotrace.function(autotrace.grad(function, wrt=wrapper.wrt))
        try:
            reference, _ = run_traced("numpy", make_traced, wrapper.args)
        except Exception:  # noqa: BLE001 - a few rule helpers take values not known while
            continue       # tracing (np.sort's order for unsort): counted below, tested eagerly
        fused, traced = run_traced("llvm", make_traced, wrapper.args)
        assert_agree(fused, reference, name)
        compared += 1
        fused_graphs += "fused_cpu" in str(traced.graph(*wrapper.args))
    print(f"{compared} of {len(wrappers)} rule table entries trace; {fused_graphs} of them "
          "have fused kernels")
    assert compared > 0.95 * len(wrappers) and fused_graphs > 50


def test_nan_and_inf_propagate_as_in_numpy():
    def f(x):
        return np.sum(np.sqrt(x) * 3.0 + x * np.tanh(x))

    x = np.array([0.0, -1.0, np.inf, np.nan, 1e-310, 2.0] * 300)
    with np.errstate(all="ignore"):
        fused, reference, traced = on_both_backends(
            lambda: autotrace.function(autotrace.grad(f)), (x,))
    assert "fused_cpu" in str(traced.graph(x))
    assert_agree(fused, reference)
    assert np.isnan(reference).any() and np.isinf(reference).any()
