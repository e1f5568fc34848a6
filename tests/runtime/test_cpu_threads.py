"""Fused CPU kernels on several threads (runtime/backends/llvm/cpu_threads.py, cpu_calls.py): the
results are bit for bit those of one thread, with 1, 2, 3 or 4 threads, for regions with and
without each kind of fused sum, odd sizes, float32 and float64, rows that broadcast; small
regions stay on the caller's thread; warnings, errors and refusals are as with one thread.
"""
import ctypes
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)

import autotrace  # noqa: E402
from autotrace.runtime.backends.llvm import cpu_threads  # noqa: E402
from autotrace.runtime.backends.llvm.cpu_kernels import kernel_width  # noqa: E402
from autotrace.runtime.backends.llvm.cpu_reductions import SUM_BLOCK  # noqa: E402
from autotrace.runtime.execution.executor import compile_graph  # noqa: E402
from tests.runtime.test_cpu_fusion import (  # noqa: E402
    REPOSITORY, fused_equations, fused_graph, fusing_backend, sample,
)

THREAD_COUNTS = (1, 2, 3, 4)


@pytest.fixture(autouse=True)
def threads_restored():
    before = cpu_threads.cpu_threads()
    yield
    cpu_threads.cpu_threads(before)


@pytest.fixture
def small_threshold(monkeypatch):
    """Kernels of 1,000 elements or more get parts, and pieces may be as small as the sums
    allow, so that small arrays (odd sizes, a tail, many pieces) test the split."""
    monkeypatch.setattr(cpu_threads, "MIN_PARALLEL_ELEMENTS", 1000)
    monkeypatch.setattr(cpu_threads, "MIN_PARALLEL_ARITHMETIC_ELEMENTS", 1000)
    monkeypatch.setattr(cpu_threads, "MIN_PIECE_ELEMENTS", 1)
    monkeypatch.setattr(cpu_threads, "MIN_PIECE_COLUMNS", 1)


def finite(shape, dtype, seed):
    values = sample(int(np.prod(shape)), np.float64, seed)
    values = np.where(np.isfinite(values) & (abs(values) < 1e3), values, 0.5)
    return values.astype(dtype).reshape(shape)


def results_by_thread_count(function, *args, unchecked=True):
    """{thread count: the fused graph's results}, and the kernels, which must have split."""
    graph = fused_graph(function, *args)
    kernels = [equation.attrs["kernel"] for equation in fused_equations(graph)]
    assert kernels, graph
    if unchecked:
        for kernel in kernels:
            kernel.call = kernel.unchecked
    run, _ = compile_graph(graph, backend=fusing_backend())
    results = {}
    for count in THREAD_COUNTS:
        cpu_threads.cpu_threads(count)
        with np.errstate(all="ignore"):
            results[count] = [np.array(value, copy=True) for value in run(*args)]
    return results, kernels


def assert_same_bits(results):
    first = results[THREAD_COUNTS[0]]
    for count, values in results.items():
        assert len(values) == len(first)
        for value, expected in zip(values, first):
            assert value.shape == expected.shape and value.dtype == expected.dtype
            assert value.tobytes() == expected.tobytes(), (count, np.max(abs(value - expected)))


# (name, function, shape): each kind of sum alone and together, outputs, broadcast rows
REGIONS = [
    ("elementwise", lambda a, r: np.tanh(a * 2.0) + a, (1003,)),
    ("elementwise, odd size", lambda a, r: np.exp(a * 0.5) * a - 1.0, (100_003,)),
    ("sum of all elements", lambda a, r: np.sum(np.exp(a * 0.5) * a), (4099,)),
    ("sum of all, and outputs", lambda a, r: (a * 3.0 + 1.0, np.sum(a * a),
                                              np.sum(np.abs(a) + 1.0)), (100_003,)),
    ("sum of all, a whole number of blocks", lambda a, r: np.sum(a * a + a), (256 * 37,)),
    ("sum over leading axes", lambda a, r: np.sum(a * 3.0 + a * a, axis=0), (301, 1024)),
    ("sum over leading axes, 3-d", lambda a, r: np.sum(a * 3.0 + 1.0, axis=(0, 1)),
     (3, 5, 528)),
    ("sum over trailing axes", lambda a, r: np.sum(np.exp(a) * 2.0, axis=-1), (1001, 48)),
    ("sum over trailing axes, 3-d", lambda a, r: np.sum(a * 3.0 + 1.0, axis=(1, 2)),
     (30, 5, 16)),
    ("a row that broadcasts", lambda a, r: np.tanh(a * r) + r, (301, 48)),
    ("every kind of sum and a row", lambda a, r: (
        np.sum(a * r, axis=0), np.sum(a * a + r, axis=-1), np.sum(a * 2.0 + r),
        a * r + 1.0), (7, 1024)),
    ("sums over leading axes and of all", lambda a, r: (np.sum(a * 3.0, axis=0),
                                                         np.sum(a * a)), (9, 2048)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, function, shape", REGIONS, ids=[case[0] for case in REGIONS])
def test_results_are_the_same_bits_with_any_number_of_threads(small_threshold, name, function,
                                                              shape, dtype):
    a, row = finite(shape, dtype, 1), finite(shape[-1:], dtype, 2)
    results, kernels = results_by_thread_count(function, a, row)
    assert_same_bits(results)
    # the split happened: every kernel ran on as many threads as it was given
    for kernel in kernels:
        assert kernel.parts is not None and kernel.parts.pieces(1) is None
        for count in THREAD_COUNTS[1:]:
            assert len(kernel.parts.pieces(count)) >= count, (kernel.spec, count)
    # and they are right: NumPy's, within a rounding of glibc's exp and tanh and of the
    # compensated sum of all elements
    with np.errstate(all="ignore"):
        expected = function(a, row)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for value, wanted in zip(results[1], expected):
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(value, wanted, rtol=tolerance, atol=tolerance)


def test_at_the_real_threshold_a_gradient_is_the_same_with_any_number_of_threads():
    def gelu_loss(x):
        y = 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
        return np.sum(y) + np.sum(y * y, axis=0).sum()

    x = finite((cpu_threads.MIN_PARALLEL_ARITHMETIC_ELEMENTS // 64 + 1, 64), np.float64, 3)
    gradient = autotrace.function(autotrace.value_and_grad(gelu_loss))
    kernels = [equation.attrs["kernel"] for equation in gradient.graph(x).equations
               if equation.primitive.name == "fused_cpu"]
    # the forward kernel's sum over a row of 64 stays on one thread: the adjoint's splits
    assert any(kernel.parts and kernel.parts.pieces(2) for kernel in kernels), gradient.graph(x)
    results = {}
    for count in THREAD_COUNTS:
        autotrace.config.cpu_threads(count)
        value, grad = gradient(x)
        results[count] = [np.asarray(value), grad]
    assert_same_bits(results)


def test_sums_split_as_they_are_added(small_threshold):
    """Pieces of a sum of all elements start at its blocks, of a sum over trailing axes at its
    rows; a sum over leading axes splits the columns of every row."""
    x, rows_of_128 = finite((64, 1024), np.float64, 4), finite((500, 128), np.float64, 4)
    width = kernel_width(fused_equations(fused_graph(lambda a: a * 2.0 + 1.0, x))[0]
                         .attrs["kernel"].spec)
    cases = [(lambda a: np.sum(a * a + 1.0), x, SUM_BLOCK * width, False),
             (lambda a: np.sum(a * a + 1.0, axis=-1), rows_of_128, 128, False),
             (lambda a: np.sum(a * a + 1.0, axis=0), x, width, True)]
    for function, value, align, by_columns in cases:
        [equation] = fused_equations(fused_graph(function, value))
        for count in THREAD_COUNTS[1:]:
            pieces = equation.attrs["kernel"].parts.pieces(count)
            for start, stop, rows, stride in pieces:
                assert start % align == 0 and (stop % align == 0 or stop == value.size)
                assert (rows, stride) == ((64, 1024) if by_columns else (1, 0))
            assert pieces[-1][1] == (1024 if by_columns else value.size)


def test_pieces_and_the_splits_that_would_change_a_sum(monkeypatch):
    monkeypatch.setattr(cpu_threads, "PIECES_PER_THREAD", 1)
    monkeypatch.setattr(cpu_threads, "MIN_PIECE_ELEMENTS", 1)
    monkeypatch.setattr(cpu_threads, "MIN_PIECE_COLUMNS", 128)
    assert cpu_threads.pieces(100, 8, 4) == [(0, 32, 1, 0), (32, 64, 1, 0), (64, 96, 1, 0),
                                             (96, 100, 1, 0)]
    assert cpu_threads.pieces(100, 8, 1) is None and cpu_threads.pieces(8, 8, 4) is None
    assert cpu_threads.pieces(64 * 1024, 8, 2, columns=1024) == [(0, 512, 64, 1024),
                                                                 (512, 1024, 64, 1024)]
    # a row too short to split, a block of a sum of all elements across two rows of the
    # columns, a row of a sum over trailing axes across them
    assert cpu_threads.pieces(64 * 96, 8, 2, columns=96) is None
    assert cpu_threads.pieces(64 * 1000, 8, 2, block=256, columns=1000) is None
    assert cpu_threads.pieces(64 * 1024, 8, 2, rows=(2048,), columns=1024) is None
    # no piece smaller than MIN_PIECE_ELEMENTS, however many threads
    monkeypatch.setattr(cpu_threads, "MIN_PIECE_ELEMENTS", 40)
    assert len(cpu_threads.pieces(100, 8, 4)) == 3


@pytest.mark.parametrize("function, limit", [
    (lambda a: np.tanh(a) * 2.0, "MIN_PARALLEL_ELEMENTS"),  # the C library's tanh
    (lambda a: a * 2.0 + 1.0, "MIN_PARALLEL_ARITHMETIC_ELEMENTS")])
def test_small_regions_stay_on_the_callers_thread(monkeypatch, function, limit):
    calls = []
    run = cpu_threads.WORKERS.run
    monkeypatch.setattr(cpu_threads.WORKERS, "run", lambda parts, threads: calls.append(
        parts) or run(parts, threads))
    cpu_threads.cpu_threads(2)
    limit = getattr(cpu_threads, limit)
    small, large = finite((limit - 1,), np.float64, 5), finite((limit,), np.float64, 5)
    [below] = fused_equations(fused_graph(function, small))
    [above] = fused_equations(fused_graph(function, large))
    assert below.attrs["kernel"].parts is None and ".part" not in below.attrs["kernel"].ir
    below.attrs["kernel"](small)
    assert calls == []
    np.testing.assert_allclose(above.attrs["kernel"](large), function(large), rtol=1e-13)
    assert len(calls) == 1 and len(calls[0]) >= 2
    cpu_threads.cpu_threads(1)
    above.attrs["kernel"](large)
    assert len(calls) == 1


@pytest.mark.parametrize("function, calls", [
    (lambda a: np.tanh(a) * 2.0, "inline"), (lambda a: np.exp(a) - a, True),
    (lambda a: a ** 2.5 + a, True), (lambda a: a ** 3 + a, False), (lambda a: a ** 0.5 + a, False),
    (lambda a: np.sqrt(a) + np.abs(a), False), (lambda a: np.maximum(a, 0.5) * 2.0, False),
    (lambda a: np.where(a > 0, a, 0.0) + 1.0, False)])
def test_which_kernels_compute_the_c_librarys_functions(function, calls):
    from autotrace.runtime.backends.llvm import compiler
    from autotrace.runtime.backends.llvm.cpu_kernels import computes_libm_function
    [equation] = fused_equations(fused_graph(function, np.linspace(0.5, 2.0, 1003)))
    kernel = equation.attrs["kernel"]
    assert any(computes_libm_function(step) for step in kernel.spec.steps) == bool(calls)
    # what the IR calls: the C library's functions, or LLVM's own (llvm.sqrt, llvm.fma), or
    # the module's own (autotrace.tanh.v4f64, where the CPU has a fused multiply-add)
    if calls == "inline":
        calls = not compiler.has_fused_multiply_add()
    called = {line.split("@")[1].split("(")[0] for line in kernel.ir.splitlines()
              if " call " in line and "@llvm." not in line and "@autotrace." not in line}
    assert bool(called) == calls, called


def test_kernels_release_the_gil_while_they_run(small_threshold):
    # ctypes releases the GIL around a call of a CFUNCTYPE, never of a PYFUNCTYPE
    [equation] = fused_equations(fused_graph(lambda a: np.tanh(a) * 2.0, np.ones(5000)))
    kernel = equation.attrs["kernel"]
    for function in (kernel.call.__globals__["compiled"], kernel.parts.part):
        assert not type(function)._flags_ & ctypes._FUNCFLAG_PYTHONAPI


SET_MXCSR_IR = """
declare void @llvm.x86.sse.ldmxcsr(ptr)
define void @autotrace_test_set_mxcsr(i32 %value) {
  %slot = alloca i32, align 4
  store i32 %value, ptr %slot, align 4
  call void @llvm.x86.sse.ldmxcsr(ptr %slot)
  ret void
}
"""


@pytest.mark.skipif(not llvm.has_mxcsr(), reason="MXCSR is read on x86-64 only")
def test_every_thread_computes_under_the_callers_floating_point_controls(small_threshold):
    """A library built with -ffast-math sets flush-to-zero in the thread that loads it: the
    pieces on the other threads flush denormals to zero too, as the calling thread does."""
    address = llvm.compile_module(SET_MXCSR_IR, ["autotrace_test_set_mxcsr"])
    set_control = ctypes.CFUNCTYPE(None, ctypes.c_uint32)(address["autotrace_test_set_mxcsr"])
    x = np.full(20_000, 3e-308)
    control = llvm.floating_point_control()
    set_control(control | 1 << 15)  # flush-to-zero
    try:
        results, _ = results_by_thread_count(lambda a: (a * 0.5 + a * 0.25, np.sum(a * 0.5)), x)
        assert llvm.floating_point_control() & 0xFFC0 == (control | 1 << 15) & 0xFFC0
    finally:
        set_control(control)
    assert_same_bits(results)
    assert not results[1][0].any() and results[1][1] == 0.0
    assert llvm.floating_point_control() & 0xFFC0 == control & 0xFFC0


def test_warnings_and_errors_are_as_with_one_thread(small_threshold):
    """A part that raises an exception NumPy warns on runs the region's NumPy calls, which warn
    as NumPy does; wrong arguments are refused with the same error."""
    x = np.linspace(-0.5, 0.5, 10_007)
    x[9_000] = 1000.0  # overflows in the last piece only
    graph = fused_graph(lambda a: (np.exp(a * 1000.0) * 2.0, np.sum(a * a)), x)
    run, _ = compile_graph(graph, backend=fusing_backend())
    for count in THREAD_COUNTS:
        cpu_threads.cpu_threads(count)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result, total = run(x)
        assert [str(warning.message) for warning in caught] == ["overflow encountered in exp"]
        with np.errstate(over="ignore"):  # NumPy's calls ran: NumPy's results, bit for bit
            assert np.array_equal(result, np.exp(x * 1000.0) * 2.0) and total == np.sum(x * x)
        with np.errstate(over="raise"), pytest.raises(FloatingPointError):
            run(x)
        [equation] = fused_equations(graph)
        with pytest.raises(TypeError, match=r"fused_\w+ takes arrays of shape \(10007,\)"):
            equation.attrs["kernel"](np.ones(10_006))


def test_the_calls_run_at_once_on_as_many_threads():
    import threading
    together = threading.Barrier(3, timeout=30)  # broken, and raising, unless 3 threads wait
    names = cpu_threads.WORKERS.run([lambda: together.wait() is not None and
                                     threading.current_thread().name] * 3, 3)
    assert len(set(names)) == 3 and threading.current_thread().name in names


def test_an_exception_in_a_worker_is_raised_after_every_call_finished():
    finished = []

    def failing():
        raise ValueError("in a worker")

    def slow():
        import time
        time.sleep(0.05)
        finished.append(True)
        return 1

    with pytest.raises(ValueError, match="in a worker"):
        cpu_threads.WORKERS.run([slow, failing, slow], 3)
    assert finished == [True, True]
    assert cpu_threads.WORKERS.run([lambda: 1, lambda: 2, lambda: 3], 2) == [1, 2, 3]


def test_the_caller_never_waits_for_a_worker_that_has_not_started():
    # a worker that cannot run yet (its core busy): the caller takes every call itself and
    # returns; the worker, when it runs, finds nothing left and runs nothing
    import threading
    workers = cpu_threads.Workers()
    release, ran_in_worker = threading.Event(), []

    class Busy:
        def take_calls(self):
            release.wait(timeout=30)

    workers._queues_for(1)[0].put(Busy())
    returned = []
    caller = threading.Thread(target=lambda: returned.append(workers.run(
        [lambda i=i: ran_in_worker.append(threading.current_thread().name) or i
         for i in range(6)], 2)))
    caller.start()
    caller.join(timeout=20)
    finished_while_busy = not caller.is_alive()
    release.set()
    caller.join(timeout=20)
    assert finished_while_busy and returned == [[0, 1, 2, 3, 4, 5]]
    assert set(ran_in_worker) == {caller.name}
    # the worker, free again, still takes its share of the next calls
    together = threading.Barrier(2, timeout=30)
    assert len(set(workers.run([lambda: together.wait() is not None and
                                threading.current_thread().name] * 2, 2))) == 2


def test_the_thread_count_is_set_by_config_or_the_environment():
    assert autotrace.config.cpu_threads(3) == 3 == cpu_threads.cpu_threads()
    for wrong in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="positive int"):
            autotrace.config.cpu_threads(wrong)
    program = ("from autotrace.runtime.backends.llvm.cpu_threads import cpu_threads\n"
               "import os; print(cpu_threads(), len(os.sched_getaffinity(0)))\n")
    environment = {key: value for key, value in os.environ.items()
                   if key != "AUTOTRACE_NUM_THREADS"}
    for setting, expected in [(None, "affinity"), ("3", "3"), ("1", "1"), ("zero", "error")]:
        env = dict(environment, PYTHONPATH=REPOSITORY)
        if setting is not None:
            env["AUTOTRACE_NUM_THREADS"] = setting
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                              env=env, timeout=120)
        if expected == "error":
            assert "AUTOTRACE_NUM_THREADS must be a positive integer" in done.stderr
            continue
        count, cores = done.stdout.split()
        assert count == (cores if expected == "affinity" else expected), done.stderr
