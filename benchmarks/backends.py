"""The CPU backends side by side: the traced gradient on the NumPy backend and on the compiled
(llvm) backend, against jax.jit(jax.grad) and the NumPy primal, in one run.

    python benchmarks/backends.py               # every workload of grad_speed.py
    python benchmarks/backends.py --only gelu   # one

Each column is the traced gradient's time as a ratio to the primal (the loss in plain NumPy,
timed in the same run, the columns taking turns so that load from elsewhere slows all alike),
then the llvm column over the jax column. Every library runs as installed: BLAS on the threads
OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS, MKL_NUM_THREADS) gives it, every core where they are
unset; autotrace's fused kernels and XLA's loops on every core the process may use
(autotrace's: AUTOTRACE_NUM_THREADS, or `autotrace.config.cpu_threads`), all printed below.
`--one-core` runs the whole process on one core, BLAS and autotrace's kernels on one thread.

Every workload runs in float64 and in float32 (`--dtype` picks one): the inputs are cast to
the dtype, and each gradient is checked against the hand-written float64 one (to 1e-6 relative
in float64, 2e-3 relative or 1e-5 absolute in float32) before it is timed.

Targets of the compiled backend (printed as PASS or MISS; a MISS does not change the exit
status, a gradient that differs from the hand-written one does):
- every workload, in each dtype: faster than jax.jit(grad), and at most 2.5x its primal (the
  scalar loop: at most 0.5x jax, whose primal is Python's own loop);
- a kernel compiles cold in at most 150 ms, loads from the disk cache in at most 5 ms, and a
  cached traced call adds at most 2 us to the work it does.
"""
from __future__ import annotations

import os
import sys

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
if "--one-core" in sys.argv[1:]:
    for _variable in THREAD_VARIABLES:
        os.environ[_variable] = "1"  # before NumPy loads its BLAS
_THREADS_AS_GIVEN = {variable: os.environ.get(variable) for variable in THREAD_VARIABLES}

import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy  # noqa: E402  OpenBLAS reads its number of threads now, from the above

import autotrace  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_speed import as_tuple, describe_environment, parse_options  # noqa: E402
from trace_overhead import function_hit_us  # noqa: E402
from traced_speed import best_times_in_turns, load_jax  # noqa: E402

# grad_speed pins BLAS to one thread for its own runs by setting these variables when it is
# imported; NumPy's BLAS has read them already, and what is printed must be what it read.
for _variable, _value in _THREADS_AS_GIVEN.items():
    if _value is None:
        os.environ.pop(_variable, None)
    else:
        os.environ[_variable] = _value

TARGETS = {"scalar_loop": 0.5}  # llvm time / jax time, at most (others: below 1)
MAX_PRIMALS = 2.5  # llvm time / primal time, at most (the scalar loop excepted)
# (relative, absolute) tolerances of a gradient against the hand-written float64 one
TOLERANCES = {numpy.dtype(numpy.float64): (1e-6, 1e-9), numpy.dtype(numpy.float32): (2e-3, 1e-5)}
MAX_COLD_COMPILE_MS, MAX_DISK_HIT_MS, MAX_CALL_OVERHEAD_US = 150.0, 5.0, 2.0


def traced_gradient(workload, backend: str):
    """A fresh autotrace.function of the workload's gradient, traced for `backend`."""
    autotrace.config.cpu_backend(backend)
    return autotrace.function(autotrace.grad(workload.make_loss(numpy), wrt=workload.wrt))


def add_dtype_option(parser) -> None:
    parser.add_argument("--dtype", nargs="*", choices=["float64", "float32"],
                        default=["float64", "float32"], help="run only these dtypes")


def cast(args: tuple, dtype) -> tuple:
    """The workload's inputs in `dtype`: arrays cast, a Python float as a 0-d array."""
    return tuple(numpy.asarray(a, dtype) if type(a) is float or numpy.asarray(a).dtype.kind == "f"
                 else a for a in args)


def close_enough(got, expected, wrt, dtype) -> bool:
    got, expected = as_tuple(got, wrt), as_tuple(expected, wrt)
    relative, absolute = TOLERANCES[numpy.dtype(dtype)]
    return len(got) == len(expected) and all(
        numpy.shape(g) == numpy.shape(e) and numpy.asarray(g).dtype == dtype
        and numpy.allclose(g, e, rtol=relative, atol=absolute)
        for g, e in zip(got, expected))


def main(argv=None) -> int:
    options, workloads = parse_options(__doc__, argv, add_arguments=add_dtype_option)
    describe_environment()
    jax, jax_numpy = load_jax()
    if jax is not None:
        print(f"jax {jax.__version__}")
    llvm_reason = _llvm_unavailable()
    if llvm_reason:
        print(f"the llvm backend cannot run here ({llvm_reason}): its column is skipped")
    backends = ["numpy"] + ([] if llvm_reason else ["llvm"])

    failed, table = False, []
    print("\nChecking gradients against the hand-written NumPy ones (float64):")
    for dtype in map(numpy.dtype, options.dtype):
        rng = numpy.random.default_rng(0)
        for workload in workloads:
            inputs = workload.make_inputs(rng)
            args = cast(inputs, dtype)
            expected = workload.hand_grad(*inputs)
            primal = workload.make_loss(numpy)
            calls = {"primal": lambda primal=primal, args=args: primal(*args)}
            for backend in backends:
                gradient = traced_gradient(workload, backend)
                if not close_enough(gradient(*args), expected, workload.wrt, dtype):
                    print(f"  {workload.name:<12} {dtype} {backend} DIFFERS from the "
                          "hand-written gradient")
                    failed = True
                    continue
                calls[backend] = lambda g=gradient, a=args: g(*a)
            if jax is not None:
                jitted = jax.jit(jax.grad(workload.make_loss(jax_numpy), workload.wrt))
                if close_enough(jax.block_until_ready(jitted(*args)), expected, workload.wrt,
                                dtype):
                    calls["jax"] = lambda f=jitted, a=args: jax.block_until_ready(f(*a))
            checked = ', '.join(name for name in calls if name != 'primal')
            print(f"  {workload.name:<12} {dtype.name:<8} checked: {checked}")
            table.append((workload, dtype, calls))
    autotrace.config.cpu_backend("auto")

    print("\nTimes as ratios to the primal (the loss alone, plain NumPy); lower is better.")
    names = ["numpy", "llvm", "jax"]
    header = (f"{'workload':<12} {'dtype':<8} {'primal us':>10} "
              + " ".join(f"{n:>9}" for n in names) + f" {'llvm/jax':>9}   target")
    print(header)
    print("-" * len(header))
    for workload, dtype, calls in table:
        seconds = best_times_in_turns(calls, options.repeat)
        primal_s = seconds.pop("primal")
        ratios = {name: time_s / primal_s for name, time_s in seconds.items()}
        cells = " ".join(f"{ratios[n]:>8.2f}x" if n in ratios else f"{'-':>9}" for n in names)
        versus = ratios["llvm"] / ratios["jax"] if {"llvm", "jax"} <= ratios.keys() else None
        if versus is None:
            verdict = "n/a"
        elif workload.name in TARGETS:
            verdict = (f"<= {TARGETS[workload.name]:g}x jax: "
                       f"{'PASS' if versus <= TARGETS[workload.name] else 'MISS'}")
        else:
            kept = ratios["llvm"] <= MAX_PRIMALS and versus < 1.0
            verdict = f"< jax, <= {MAX_PRIMALS:g}x primal: {'PASS' if kept else 'MISS'}"
        versus_cell = f"{versus:>8.2f}x" if versus is not None else f"{'-':>9}"
        print(f"{workload.name:<12} {dtype.name:<8} {1e6 * primal_s:>10.1f} {cells} "
              f"{versus_cell}   {verdict}")
    print()
    for workload in workloads:
        print(f"  {workload.name:<12} {workload.description}")

    if not llvm_reason:
        compile_figures()
    call_overhead()
    return 1 if failed else 0


def _llvm_unavailable():
    from autotrace.runtime.backends.selection import backend_named
    return backend_named("llvm").available()


def compile_figures() -> None:
    """Cold compile and disk-cache load of the kernels of two gradients (GELU: one fused
    kernel; the scalar loop: one native function of ~1,200 operations), in a fresh cache."""
    from grad_speed import make_gelu_loss, make_scalar_loop
    from autotrace.runtime.backends.llvm import compiler as llvm

    directory = tempfile.mkdtemp(prefix="autotrace-kernels-")
    previous = os.environ.get("AUTOTRACE_CACHE_DIR")
    os.environ["AUTOTRACE_CACHE_DIR"] = directory
    cases = [("GELU gradient", make_gelu_loss,
              numpy.random.default_rng(1).standard_normal(1_000_000)),
             ("scalar loop gradient", make_scalar_loop, numpy.asarray(0.5))]
    try:
        autotrace.config.cpu_backend("llvm")
        for label, make_loss, x in cases:
            figures = []
            for _ in ("cold", "from disk"):
                llvm.forget_compiled()  # as a new process would start
                start = time.perf_counter()
                autotrace.function(autotrace.grad(make_loss(numpy)))(x)
                statistics = llvm.statistics()
                figures.append((statistics, 1e3 * (time.perf_counter() - start)))
            (cold, cold_call), (warm, warm_call) = figures
            cold_ms = max(cold["compile_ms"], default=float("nan"))
            hit_ms = max(warm["load_ms"], default=float("nan"))
            print(f"\n{label}: {len(cold['compile_ms'])} kernel(s), slowest compiled cold in "
                  f"{cold_ms:.1f} ms (target <= {MAX_COLD_COMPILE_MS:g}: "
                  f"{'PASS' if cold_ms <= MAX_COLD_COMPILE_MS else 'MISS'}), loaded from the "
                  f"disk cache in {hit_ms:.2f} ms (target <= {MAX_DISK_HIT_MS:g}: "
                  f"{'PASS' if hit_ms <= MAX_DISK_HIT_MS else 'MISS'}); the first call, "
                  f"transform and trace included: {cold_call:.0f} ms cold, {warm_call:.0f} ms "
                  "with the disk cache")
    finally:
        autotrace.config.cpu_backend("auto")
        shutil.rmtree(directory, ignore_errors=True)
        if previous is None:
            os.environ.pop("AUTOTRACE_CACHE_DIR", None)
        else:
            os.environ["AUTOTRACE_CACHE_DIR"] = previous


def call_overhead() -> None:
    """What a cached traced call adds to the work it does (benchmarks/trace_overhead.py)."""
    overhead_us = function_hit_us(number=20000)
    print(f"A cached traced call adds {overhead_us:.2f} us (target <= {MAX_CALL_OVERHEAD_US:g}: "
          f"{'PASS' if overhead_us <= MAX_CALL_OVERHEAD_US else 'MISS'})")


if __name__ == "__main__":
    sys.exit(main())
