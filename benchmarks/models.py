"""Fast as installed? Gradients of four small models with autotrace, JAX, PyTorch and autograd,
each library as a user installs it, in float32 and in float64.

    pip install -r benchmarks/requirements.txt jax torch
    python benchmarks/models.py                     # every library with its own threads
    python benchmarks/models.py --one-core          # everything on one core and one thread
    python benchmarks/models.py --only mlp1 --repeat 1 --dtype float32

The workloads (benchmarks/model_losses.py):
- transformer: a pre-norm transformer block (layer norm, q/k/v projections, 4-head softmax
  attention over 64 keys, output projection, residual, layer norm, GELU MLP of 256, residual),
  batch 8 x 64 tokens x 64 features; the loss is the mean square of its output;
- mlp1, mlp256: an MLP 784-512-256-10 (GELU, then ReLU), log-softmax cross-entropy, batch 1
  and batch 256;
- convnet: the loss of examples/mnist_cnn.py's training step: its ConvNet (Conv2D 32 5x5 same +
  ReLU, MaxPool 2, Conv2D 64 5x5 same + ReLU, MaxPool 2, Dense 1024 + ReLU, Dense 10) on a
  batch of 50 8x8x1 images, softmax cross-entropy. Without dropout, whose random masks no two
  libraries draw alike. The convolution and pooling are the ops autotrace.layers' Conv2D and
  MaxPool2D call (autotrace.nn.conv2d, max_pool2d), and jax.lax's for JAX.

Each loss is written once, as a function of the array module (`make_loss(np)`, as
benchmarks/grad_speed.py does): autotrace differentiates the NumPy version, JAX and autograd
their own versions of the same code. PyTorch's is torch code computing the same function. The
GELU is the tanh form everywhere. All gradients are with respect to every parameter.

The columns, timed in turns in the same run (benchmarks/traced_speed.py's best_times_in_turns:
a burst of load from elsewhere slows every column alike):
    primal     the loss in plain NumPy (its time in us; every other column is a ratio to it)
    eager      autotrace.grad(loss)
    traced     autotrace.function(autotrace.grad(loss)), on the default CPU backend
    jax        jax.jit(jax.grad(loss)); 64-bit floats are enabled for the float64 runs only
    torch      eager PyTorch's backward pass (torch.autograd.grad(loss, parameters))
    compiled   the same under torch.compile, where it compiles (otherwise the reason is printed)
    autograd   autograd.grad(loss), where autograd has the loss's functions

Before timing, autotrace's eager float64 gradient of each workload is checked against central
finite differences on a few coordinates, and every column's gradient, in every dtype, against
it (relative error in the 2-norm, per parameter); a gradient that differs, fails, or is not of
the inputs' dtype is reported and makes the exit status 1. Then the peak memory of one gradient
call of each column is printed, as each library can be asked for it.

Targets, printed as PASS or MISS (a MISS does not change the exit status): for each workload and
dtype, the traced gradient is faster than jax.jit(jax.grad), and costs at most 2.5 primals.
Beside the float32 rows, the widest float dtype the traced gradient's graph computes in.

--one-core pins the process to one CPU and every library to one thread: BLAS (OpenBLAS, MKL and
OpenMP variables, set before NumPy loads), PyTorch (set_num_threads(1)) and XLA (XLA_FLAGS).
The flag must be on the command line: the variables are read when the libraries load. Without
it, each library keeps the threads it starts with; this script does not pin BLAS to one thread
as the other benchmarks do. threadpoolctl, when installed, tells BLAS's threads.

torch.compile's first compile of a workload takes 15 to 45 s on 2 cores (about 3 minutes for
the eight, on top of the rest), once for each thread setting: later runs find most of it in
its cache. --no-compile skips the column.
"""
from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
import tracemalloc
import traceback
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
ONE_CORE_XLA_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
if "--one-core" in sys.argv[1:]:
    for _variable in THREAD_VARIABLES:
        os.environ[_variable] = "1"
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {ONE_CORE_XLA_FLAGS}".strip()
_THREADS_AS_GIVEN = {variable: os.environ.get(variable) for variable in THREAD_VARIABLES}

import numpy  # noqa: E402  OpenBLAS reads its number of threads now, from the above

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_speed import describe_environment, parse_options  # noqa: E402
from traced_speed import best_times_in_turns, first_line, load_jax  # noqa: E402

# grad_speed pins BLAS to one thread for its own workloads by setting these variables when it
# is imported; NumPy has already started its BLAS, and torch and XLA, loaded later, must see the
# environment as it was given.
for _variable, _value in _THREADS_AS_GIVEN.items():
    if _value is None:
        os.environ.pop(_variable, None)
    else:
        os.environ[_variable] = _value

import autotrace  # noqa: E402
from autotrace.runtime.graph import Graph  # noqa: E402
from model_losses import WORKLOADS, Workload  # noqa: E402

MAX_TRACED_RATIO = 2.5
DTYPES = ("float32", "float64")
# Largest relative error (2-norm, per parameter) from the float64 reference: float32 gradients
# carry the rounding of float32 inputs and sums; float64 ones differ in summation order only.
TOLERANCE = {"float32": 1e-4, "float64": 1e-9}
FINITE_DIFFERENCE_STEP = 1e-6
FINITE_DIFFERENCE_TOLERANCE = 1e-6  # relative to the largest element of the parameter's gradient
COLUMNS = ("eager", "traced", "jax", "torch", "compiled", "autograd")
NUMPY_COLUMNS = ("primal", "eager", "traced", "autograd")  # what tracemalloc can see


@dataclass
class Libraries:
    jax: ModuleType | None
    torch: ModuleType | None
    autograd: ModuleType | None
    autograd_numpy: ModuleType | None
    torch_compile: bool


def load_torch(one_core: bool):
    try:
        import torch
    except ImportError:
        print("torch is not installed: its columns are skipped.")
        return None
    if one_core:
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
    return torch


def describe_threads(libraries: Libraries, one_core: bool) -> None:
    """The threads each library computes with, as far as each can be asked."""
    try:
        import threadpoolctl
    except ImportError:
        blas = "threadpoolctl is not installed, so as the environment says: " + ", ".join(
            f"{variable}={os.environ.get(variable, 'unset')}" for variable in THREAD_VARIABLES)
    else:
        pools = threadpoolctl.threadpool_info()
        blas = ", ".join(f"{pool['internal_api']} {pool['num_threads']}" for pool in pools
                         ) or "none found"
    print(f"threads: BLAS (NumPy): {blas}")
    if libraries.torch is not None:
        print(f"threads: torch: {libraries.torch.get_num_threads()} intra-op, "
              f"{libraries.torch.get_num_interop_threads()} inter-op")
    if libraries.jax is not None:
        print(f"threads: jax: XLA's CPU thread pools, sized by the {len(os.sched_getaffinity(0))}"
              f" CPU(s) this process may run on; XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}")
    print("threads: autotrace: the calling thread (its compiled kernels are single-threaded; "
          "its matrix products are NumPy's, on BLAS's threads)")
    if one_core and os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        print("note: --one-core was not on the command line, so BLAS and XLA kept their threads")


def describe_autotrace() -> None:
    """Where autotrace's three folders load from, and the CPU backend of traced functions."""
    import autotrace.runtime
    import autotrace.transforms
    from autotrace.runtime.backends.selection import backend_named, cpu_backend
    package = os.path.dirname(os.path.abspath(autotrace.__file__))
    # runtime/ and transforms/ sit beside autotrace/ in a checkout, inside it when installed
    mixed = [os.path.dirname(module.__file__) for module in (autotrace.runtime,
                                                             autotrace.transforms)
             if os.path.dirname(os.path.dirname(os.path.abspath(module.__file__)))
             not in (package, os.path.dirname(package))]
    if mixed:  # an editable install of another checkout, say, supplying runtime/
        print(f"WARNING: autotrace from {package}, but {' and '.join(mixed)} from another "
              "checkout: the numbers below are of the two mixed")
    else:
        print(f"autotrace from {package}")
    llvm_reason = backend_named("llvm").available()
    print(f"autotrace's traced gradients run on its {cpu_backend()} CPU backend"
          + (f" (llvm cannot run here: {llvm_reason})" if llvm_reason else
             " (llvm: fused elementwise kernels)"))


@dataclass
class Row:
    """One workload in one dtype: its inputs and a gradient function of each column."""
    workload: Workload
    args: tuple
    gradients: dict  # column -> function of no arguments, or the Exception that stopped it
    traced: object  # the autotrace.function, whose graph is looked at
    jax_plan: Callable | None = None  # -> XLA's planned bytes for one call

    def primal(self):
        return self.workload.make_loss(numpy)(*self.args)


def build_row(workload: Workload, args: tuple, libraries: Libraries) -> Row:
    """Every column's gradient of `workload` at `args`, not yet called."""
    wrt = tuple(range(workload.parameters))
    primal = workload.make_loss(numpy)
    eager = autotrace.grad(primal, wrt=wrt)
    traced = autotrace.function(autotrace.grad(primal, wrt=wrt))
    row = Row(workload, args, {"eager": lambda: eager(*args), "traced": lambda: traced(*args)},
              traced)
    jax = libraries.jax
    if jax is not None:
        jitted = jax.jit(jax.grad(workload.make_loss(jax.numpy), argnums=wrt))
        jax_args = tuple(jax.numpy.asarray(a) for a in args)  # on its device once, as users do
        row.gradients["jax"] = lambda: jax.block_until_ready(jitted(*jax_args))
        row.jax_plan = lambda: xla_planned_bytes(jitted, jax_args)
    torch = libraries.torch
    if torch is not None:
        tensors = [torch.from_numpy(a).requires_grad_(index < workload.parameters)
                   for index, a in enumerate(args)]

        def torch_gradient(loss):
            return lambda: torch.autograd.grad(loss(*tensors), tensors[:workload.parameters])
        row.gradients["torch"] = torch_gradient(workload.torch_loss)
        if libraries.torch_compile:
            row.gradients["compiled"] = torch_gradient(torch.compile(workload.torch_loss))
    if libraries.autograd is not None:
        try:
            autograd_gradient = libraries.autograd.grad(
                workload.make_loss(libraries.autograd_numpy), wrt)
        except NotImplementedError as error:
            row.gradients["autograd"] = error
        else:
            row.gradients["autograd"] = lambda: autograd_gradient(*args)
    return row


def as_arrays(gradient) -> list:
    """A gradient of any library as a list of NumPy arrays."""
    return [numpy.asarray(g.detach() if hasattr(g, "detach") else g) for g in gradient]


def relative_errors(got: list, expected: list) -> list:
    """Per parameter, |got - expected| / |expected| in the 2-norm."""
    return [float(numpy.linalg.norm(numpy.asarray(g, numpy.float64) - e)
                  / max(numpy.linalg.norm(e), 1e-300)) for g, e in zip(got, expected)]


def finite_difference_check(workload: Workload, args: tuple, gradient: list, rng) -> float:
    """The largest error of `gradient` against central differences of the loss, on two
    coordinates of each parameter (its largest element and a random one), each relative to the
    largest element of that parameter's gradient."""
    loss = workload.make_loss(numpy)
    worst = 0.0
    for index, g in enumerate(gradient):
        scale = float(numpy.max(numpy.abs(g)))
        for flat in {int(numpy.argmax(numpy.abs(g))), int(rng.integers(g.size))}:
            coordinate = numpy.unravel_index(flat, g.shape)
            values = []
            for step in (FINITE_DIFFERENCE_STEP, -FINITE_DIFFERENCE_STEP):
                moved = list(args)
                moved[index] = args[index].copy()
                moved[index][coordinate] += step
                values.append(float(loss(*moved)))
            estimate = (values[0] - values[1]) / (2 * FINITE_DIFFERENCE_STEP)
            worst = max(worst, abs(estimate - float(g[coordinate])) / max(scale, 1e-300))
    return worst


def numpy_peak_bytes(call: Callable) -> int:
    """The most memory that Python and NumPy allocations made by `call` held at once,
    as tracemalloc sees them (NumPy reports its array buffers to it)."""
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def kept_bytes(traced, args: tuple) -> int:
    """The bytes of the buffers the traced gradient's compiled function keeps from one call to
    the next for its intermediates (runtime/execution/call_buffers.py): allocated at its first
    call, so tracemalloc does not see them over a later one."""
    run = traced.get_concrete_function(*args)._entry.run
    return sum(buffer.nbytes for name, pool in getattr(run, "__globals__", {}).items()
               if name.startswith("kept_") for buffers in pool for buffer in buffers)


def torch_peak_bytes(torch, call: Callable) -> int | None:
    """The most memory torch's CPU allocator held at once during `call`, from the allocation
    and free events its profiler records (None where this torch does not expose them)."""
    from torch.profiler import ProfilerActivity, profile
    try:
        with stderr_silenced(), profile(activities=[ProfilerActivity.CPU],
                                        profile_memory=True) as profiler:
            call()
        events = [event for event in profiler.profiler.kineto_results.events()
                  if event.name() == "[memory]"]
    except Exception:
        return None
    held = peak = 0
    for event in sorted(events, key=lambda event: event.start_ns()):
        held += event.nbytes()
        peak = max(peak, held)
    return peak if events else None


@contextlib.contextmanager
def stderr_silenced():
    """Standard error (file descriptor 2) to /dev/null: the profiler's C++ side prints a line
    as it starts and as it stops."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def xla_planned_bytes(jitted, args) -> int | None:
    """XLA's plan for one call: its temporary buffers and outputs (compiled memory analysis)."""
    try:
        analysis = jitted.lower(*args).compile().memory_analysis()
        return analysis.temp_size_in_bytes + analysis.output_size_in_bytes
    except Exception:
        return None


def float_dtypes(graph: Graph, dtypes: set | None = None) -> set:
    """Every float dtype that `graph` computes in: its equations' outputs, the steps inside its
    fused kernels, and any graphs held in its equations' attributes."""
    dtypes = set() if dtypes is None else dtypes
    for equation in graph.equations:
        for output in equation.outputs:
            dtypes.add(output.aval.dtype)
        for value in equation.attrs.values():
            if isinstance(value, Graph):
                float_dtypes(value, dtypes)
            steps = getattr(getattr(value, "spec", None), "steps", ())
            dtypes.update(step.dtype for step in steps if hasattr(step, "dtype"))
    return {numpy.dtype(d) for d in dtypes if numpy.dtype(d).kind == "f"}


def widening_equations(graph: Graph, dtype) -> list:
    """The equations of `graph` whose output is a wider float than `dtype` but none of whose
    inputs is: where the computation leaves `dtype`, as `divide(bool, int64) -> float64`."""
    found = []
    for equation in graph.equations:
        wide = [o.aval.dtype for o in equation.outputs
                if o.aval.dtype.kind == "f" and o.aval.dtype.itemsize > dtype.itemsize]
        input_dtypes = [i.aval.dtype for i in equation.inputs if hasattr(i, "aval")]
        if wide and wide[0] not in input_dtypes:
            inputs = ", ".join(str(i.aval.dtype) if hasattr(i, "aval") else repr(i.value)
                               for i in equation.inputs)
            found.append(f"{equation.primitive.name}({inputs}) -> {wide[0]}")
    return found


def check_row(row: Row, dtype: str, reference: list) -> bool:
    """Call every column's gradient once and compare it with `reference`; keep in
    `row.gradients` those that agree. True if every column that should run did and agreed."""
    passed, kept = True, {}
    label = f"  {row.workload.name:<12} {dtype:<8}"
    for name in COLUMNS:
        if name not in row.gradients:
            continue
        gradient = row.gradients[name]
        if isinstance(gradient, Exception):
            print(f"{label} {name:<9} skipped: {first_line(gradient)}")
            continue
        start = time.perf_counter()
        try:
            got = as_arrays(gradient())
        except Exception as error:
            if name in ("compiled", "autograd"):  # "where it runs": its reason, not a failure
                print(f"{label} {name:<9} skipped, it failed: {first_line(error)}")
                continue
            print(f"{label} {name:<9} FAILED: {first_line(error)}")
            traceback.print_exc(limit=-4, file=sys.stdout)
            passed = False
            continue
        first_call_s = time.perf_counter() - start
        errors = relative_errors(got, reference)
        dtypes = sorted({str(g.dtype) for g in got})
        agrees = max(errors) <= TOLERANCE[dtype] and dtypes == [dtype]
        verdict = "matches" if agrees else "DIFFERS"
        print(f"{label} {name:<9} {verdict}: largest relative error {max(errors):.1e} "
              f"(tolerance {TOLERANCE[dtype]:g}), gradients {'/'.join(dtypes)}, first call "
              f"{first_call_s:.2f} s")
        if agrees:
            kept[name] = gradient
        passed &= agrees
    row.gradients = kept
    return passed


def peak_memory(row: Row, libraries: Libraries) -> dict:
    """Column -> bytes held at most during one call (None where it cannot be known)."""
    peaks = {"primal": numpy_peak_bytes(row.primal)}
    for name, gradient in row.gradients.items():
        if name in NUMPY_COLUMNS:
            peaks[name] = numpy_peak_bytes(gradient)
            if name == "traced":
                peaks[name] += kept_bytes(row.traced, row.args)
        elif name in ("torch", "compiled"):
            peaks[name] = torch_peak_bytes(libraries.torch, gradient)
        elif name == "jax":
            peaks[name] = row.jax_plan()
    return peaks


def run_dtype(dtype: str, workloads: list, inputs: dict, references: dict,
              libraries: Libraries, repeat: int) -> bool:
    """Check, then time, every workload in one dtype; print its tables. True if all agreed."""
    if libraries.jax is not None:
        # a global switch: on for float64 only, so that float32 stays float32 inside JAX too
        libraries.jax.config.update("jax_enable_x64", dtype == "float64")
    print(f"\n== {dtype} ==\nChecking every column against autotrace's eager float64 gradient:")
    rows, passed = [], True
    for workload in workloads:
        if workload.name not in references:
            continue
        args = tuple(numpy.asarray(a, dtype) for a in inputs[workload.name])
        row = build_row(workload, args, libraries)
        passed &= check_row(row, dtype, references[workload.name])
        rows.append(row)

    print(f"\n{dtype}: times as ratios to the primal (the loss in plain NumPy); lower is better.")
    header = (f"{'workload':<12} {'primal us':>10} " + " ".join(f"{n:>8}" for n in COLUMNS)
              + f" {'tr/jax':>7} {'tr/torch':>8}   {'tr<jax':<6} {'tr<=2.5x':<8}"
              + ("  traced graph" if dtype == "float32" else ""))
    print(header)
    print("-" * len(header))
    memory = []
    for row in rows:
        seconds = best_times_in_turns({"primal": row.primal, **row.gradients}, repeat)
        primal_s = seconds.pop("primal")
        ratios = {name: time_s / primal_s for name, time_s in seconds.items()}
        cells = " ".join(f"{ratios[n]:>7.2f}x" if n in ratios else f"{'-':>8}" for n in COLUMNS)

        def versus(other):
            if {"traced", other} <= ratios.keys():
                return ratios["traced"] / ratios[other]
            return None
        to_jax, to_torch = versus("jax"), versus("torch")
        versus_cells = (f"{to_jax:>6.2f}x" if to_jax is not None else f"{'-':>7}") + " " + (
            f"{to_torch:>7.2f}x" if to_torch is not None else f"{'-':>8}")
        if "traced" not in ratios:
            faster = within = "FAILED"
        else:
            faster = "n/a" if to_jax is None else "PASS" if to_jax < 1.0 else "MISS"
            within = "PASS" if ratios["traced"] <= MAX_TRACED_RATIO else "MISS"
        line = (f"{row.workload.name:<12} {1e6 * primal_s:>10.1f} {cells} {versus_cells}   "
                f"{faster:<6} {within:<8}")
        if dtype == "float32" and "traced" in row.gradients:
            line += "  " + traced_graph_note(row.traced, row.args)
        print(line)
        memory.append((row.workload, peak_memory(row, libraries)))
    print_memory(dtype, memory)
    return passed


def traced_graph_note(traced, args) -> str:
    """The widest float dtype of the traced gradient's graph, and the equations of the graph as
    traced (before fusion) where it widens past float32."""
    widest = max(float_dtypes(traced.graph(*args)), key=lambda d: d.itemsize, default=None)
    if widest is None or widest.itemsize <= 4:
        return f"widest {widest}"
    widening = widening_equations(traced.graph(*args, optimized=False), numpy.dtype("float32"))
    return f"widest {widest}, from {'; '.join(sorted(set(widening))) or '?'}"


def print_memory(dtype: str, memory: list) -> None:
    names = ("primal", *COLUMNS)
    print(f"\n{dtype}: peak memory of one call, MiB (n/a: the library cannot say; -: no column)")
    header = f"{'workload':<12} " + " ".join(f"{n:>8}" for n in names)
    print(header)
    print("-" * len(header))
    for workload, peaks in memory:
        cells = " ".join(
            f"{'-':>8}" if n not in peaks else f"{'n/a':>8}" if peaks[n] is None
            else f"{peaks[n] / 2 ** 20:>8.2f}" for n in names)
        print(f"{workload.name:<12} {cells}")


MEMORY_NOTE = """\
Peak memory: primal, eager, traced and autograd are tracemalloc's peak over the call: the
Python objects and NumPy array buffers allocated during it (NumPy reports its buffers to
tracemalloc; the compiled backend allocates its outputs with NumPy too); traced adds the
buffers its compiled function keeps from call to call for its intermediates. tracemalloc cannot see
BLAS's own work buffers, nor any allocator but Python's and NumPy's: not XLA's, not torch's.
torch and compiled are torch's CPU allocator's peak over the call, from the allocation events its
profiler records. jax is not measured: XLA on CPU keeps no memory statistics
(device.memory_stats() is None); its column is XLA's plan for the compiled gradient (temporary
buffers + outputs, from its memory analysis), not a measurement. Each counts only what the
call allocates, its results included, not its inputs."""


def main(argv=None) -> int:
    options, workloads = parse_options(__doc__, argv, WORKLOADS, add_arguments=add_arguments)
    autograd, autograd_numpy = describe_environment()
    jax, _ = load_jax()
    if jax is not None:
        print(f"jax {jax.__version__}")
    torch = load_torch(options.one_core)
    if torch is not None:
        print(f"torch {torch.__version__}")
    libraries = Libraries(jax, torch, autograd, autograd_numpy,
                          torch is not None and not options.no_compile)
    describe_threads(libraries, options.one_core)
    describe_autotrace()

    started = time.perf_counter()
    rng = numpy.random.default_rng(0)
    inputs = {workload.name: workload.make_inputs(rng) for workload in workloads}
    print("\nThe reference: autotrace's eager float64 gradient, against central differences:")
    references, passed = {}, True
    for workload in workloads:
        args = inputs[workload.name]
        try:
            reference = as_arrays(autotrace.grad(workload.make_loss(numpy),
                                                 wrt=tuple(range(workload.parameters)))(*args))
        except Exception as error:
            print(f"  {workload.name:<12} FAILED: {first_line(error)}")
            traceback.print_exc(limit=-4, file=sys.stdout)
            passed = False
            continue
        error = finite_difference_check(workload, args, reference, rng)
        agrees = error <= FINITE_DIFFERENCE_TOLERANCE
        print(f"  {workload.name:<12} {'matches' if agrees else 'DIFFERS'}: largest error "
              f"{error:.1e} of the largest element (tolerance {FINITE_DIFFERENCE_TOLERANCE:g})")
        if agrees:
            references[workload.name] = reference
        passed &= agrees

    for dtype in options.dtype or DTYPES:
        passed &= run_dtype(dtype, workloads, inputs, references, libraries, options.repeat)

    print()
    for workload in workloads:
        print(f"  {workload.name:<12} {workload.description}")
    print("  tr/jax, tr/torch: the traced gradient's time over jax's, over eager torch's")
    print(MEMORY_NOTE)
    print(f"\nTargets, each workload and dtype: the traced gradient faster than jax.jit(grad) "
          f"(tr<jax) and at most {MAX_TRACED_RATIO:g}x its NumPy primal (tr<=2.5x).")
    print(f"Whole run: {time.perf_counter() - started:.0f} s after loading the libraries.")
    return 0 if passed else 1


def add_arguments(parser) -> None:
    parser.set_defaults(repeat=3)  # eight rows of seven columns: three turns keep it near 5 min
    parser.add_argument("--dtype", nargs="*", choices=DTYPES, help="run only these dtypes")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the torch.compile column (its first compiles are slow)")


if __name__ == "__main__":
    sys.exit(main())
