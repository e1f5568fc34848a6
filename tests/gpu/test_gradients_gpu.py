"""Gradients of CuPy arrays: every corpus function (tests/corpus.py) and every rule table entry
(tests/rule_table.py, each as a small function: tests/test_rule_table_grad.py), eagerly
(`autotrace.grad`) and traced (`autotrace.function(autotrace.grad(...))`), with the inputs on
GPU 0, against the same gradients of the same NumPy inputs.

What must hold: every array of a GPU gradient is a CuPy array on GPU 0 (nothing comes back to
the CPU behind the user's back), and it equals the CPU gradient to 1e-9 relative (CUDA's math
library and the GPU's order of summation differ from NumPy's in the last bits; a wrong rule is
off by far more).

Skipped, with the reason printed, without a GPU. A function that does not itself run on CuPy
arrays (it mixes in a NumPy array it makes, or calls a NumPy function CuPy lacks) is skipped
with CuPy's error printed: that is the user's code, not autotrace; but autotrace's own functions
(the rule table's `ops.` helpers) must run.
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace

if autotrace.num_gpus() == 0:
    pytest.skip("no CUDA GPU (or CuPy) on this machine: the GPU tests need one",
                allow_module_level=True)

import cupy  # noqa: E402

from autotrace.runtime.devices import is_gpu_array  # noqa: E402
from tests import corpus  # noqa: E402
from tests.numeric import assert_same_structure  # noqa: E402
from tests.test_rule_table_grad import build_wrappers  # noqa: E402

CASES = {case.function.__name__: case for case in corpus.CASES}


def on_gpu(value):
    return autotrace.to_device(value, "gpu:0")


def assert_gpu_matches(gpu, cpu, where=""):
    """Containers of the same structure; each CPU array's counterpart a CuPy array on GPU 0 of
    the same shape and dtype, equal to 1e-9 relative (NaN where NaN; 1e-12 absolute, scaled
    by the largest value, for values that cancel to zero on one of them)."""
    assert_same_structure(gpu, cpu, _assert_gpu_leaf_matches, where)


def _assert_gpu_leaf_matches(gpu, cpu, where):
    if isinstance(cpu, (np.ndarray, np.generic)):
        assert isinstance(gpu, cupy.ndarray), f"{where}: a {type(gpu).__name__}, not on the GPU"
        assert gpu.device.id == 0, where
        assert gpu.shape == np.shape(cpu) and gpu.dtype == cpu.dtype, \
            f"{where}: {gpu.dtype}{gpu.shape} vs {cpu.dtype}{np.shape(cpu)}"
        expected = np.asarray(cpu)
        scale = np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0) \
            if expected.dtype.kind in "fc" else 0
        np.testing.assert_allclose(cupy.asnumpy(gpu), expected, rtol=1e-9,
                                   atol=1e-12 * max(scale, 1.0), equal_nan=True, err_msg=where)
    elif isinstance(cpu, float):  # a Python float argument's gradient is a Python float
        assert type(gpu) is float, f"{where}: a {type(gpu).__name__}, not a float"
        np.testing.assert_allclose(gpu, cpu, rtol=1e-9, atol=1e-12, err_msg=where)
    else:  # None, an int: the same on both
        assert type(gpu) is type(cpu) and gpu == cpu, where


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("name", list(CASES))
def test_corpus_gradient_on_the_gpu(name, traced):
    case = CASES[name]
    args = case.make_args(np.random.default_rng(0))
    gradient = autotrace.grad(case.function, wrt=case.wrt)
    if traced:
        gradient = autotrace.function(gradient)
    expected = gradient(*args)
    skip_unless_it_runs_on_cupy(case.function, args, name)
    assert_gpu_matches(gradient(*on_gpu(args)), expected, name)
    if traced:
        assert_traced_on_the_gpu(gradient, on_gpu(args), name)


@pytest.fixture(scope="module")
def wrappers(tmp_path_factory):
    return build_wrappers(tmp_path_factory.mktemp("rule_table_gpu"))


def assert_traced_on_the_gpu(traced, gpu_args, where):
    """The trace for GPU arguments has its array inputs on GPU 0 and is reused: a second call
    with other values (the same signature) does not trace again and gives its own result."""
    graph = traced.graph(*gpu_args)
    devices = {var.aval.device for var in graph.inputs}
    assert devices <= {"gpu:0"} and (devices or not graph.equations), f"{where}: {graph}"
    count = traced.trace_count
    traced(*gpu_args)
    assert traced.trace_count == count, f"{where}: traced again for the same signature"


def tree_leaves(tree):
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in tree_leaves(value)]
    if isinstance(tree, (tuple, list)):
        return [leaf for value in tree for leaf in tree_leaves(value)]
    return [tree]


def skip_unless_it_runs_on_cupy(function, cpu_args, name, must_run=False):
    """Skip (printing why) when `function` itself fails on CuPy arrays or computes on the CPU;
    with `must_run`, fail instead (autotrace's own functions)."""
    gpu_args = on_gpu(cpu_args)
    if not any(is_gpu_array(leaf) for leaf in tree_leaves(gpu_args)):
        pytest.skip(f"{name} has no array argument to put on the GPU")
    try:
        result = function(*gpu_args)
    except Exception as error:  # noqa: BLE001 - whatever CuPy raises, printed
        if must_run:
            raise
        pytest.skip(f"{name} does not run on CuPy arrays without autotrace: "
                    f"{type(error).__name__}: {error}")
    on_the_cpu = [leaf for leaf in tree_leaves(result)
                  if isinstance(leaf, (np.ndarray, np.generic))]
    if on_the_cpu:
        assert not must_run, f"{name} returns a NumPy array for GPU arguments"
        pytest.skip(f"{name} computes on the CPU (it returns a NumPy array for GPU arguments: "
                    "it writes them into an array it made with NumPy)")
    shapes = [np.shape(leaf) for leaf in tree_leaves(result)]
    cpu_shapes = [np.shape(leaf) for leaf in tree_leaves(function(*cpu_args))]
    if shapes != cpu_shapes:
        assert not must_run, f"{name} gives shapes {shapes} on the GPU, {cpu_shapes} on the CPU"
        pytest.skip(f"{name} gives results of other shapes on CuPy ({shapes}) than on NumPy "
                    f"({cpu_shapes}): its gradients differ as its results do")


RULE_ENTRIES = [entry.name for entry in __import__("tests.rule_table", fromlist=["TABLE"]).TABLE]


# Rules whose eager gradient does not yet run on CuPy arrays (their helpers make NumPy arrays
# of the coefficients and exponents, or call a NumPy function that CuPy arrays do not dispatch
# to), each skipped with its reason printed.
NOT_ON_CUPY_YET = {"polyval": "np.polyval's eager gradient makes a NumPy array of the "
                              "coefficients (np.asarray), which CuPy refuses",
                   "vander": "np.vander's eager gradient multiplies by NumPy arrays of steps "
                             "and exponents, which CuPy refuses",
                   "helper:unwindow": "the eager gradient of sliding_window_view's adjoint is "
                                      "numpy.lib.stride_tricks.sliding_window_view, which does "
                                      "not dispatch to CuPy arrays (sliding_window_view's own "
                                      "entries are skipped for that reason)",
                   "quantile/q-list": "q given as a list is a NumPy array in its gradient's "
                                      "term q - held(q), which CuPy refuses beside the slope"}


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("name", RULE_ENTRIES)
def test_rule_table_gradient_on_the_gpu(name, traced, wrappers):
    reason = NOT_ON_CUPY_YET.get(name, NOT_ON_CUPY_YET.get(name.split("/")[0]))
    if not traced and reason is not None:
        pytest.skip(f"{name}: {reason}")
    wrapper, function = wrappers[name]
    gradient = autotrace.grad(function, wrt=wrapper.wrt)
    if traced:
        gradient = autotrace.function(gradient)
    try:
        expected = gradient(*wrapper.args)
    except Exception as error:  # noqa: BLE001 - traced on the CPU fails for a few entries
        if not traced:          # (values not known while tracing): the eager test covers them
            raise
        pytest.skip(f"{name} does not trace on the CPU either: {error}")
    skip_unless_it_runs_on_cupy(function, wrapper.args, name,
                                must_run="ops." in wrapper.source)
    assert_gpu_matches(gradient(*on_gpu(wrapper.args)), expected, name)
    if traced:
        assert_traced_on_the_gpu(gradient, on_gpu(wrapper.args), name)
