"""Batched derivatives: per-example gradients and Jacobians with autotrace.vmap, against a Python
loop, autotrace.jacobian and JAX.

    pip install -r benchmarks/requirements.txt jax
    python benchmarks/vmap.py                 # every library with its own threads
    python benchmarks/vmap.py --one-core      # everything on one core and one thread
    python benchmarks/vmap.py --only per_example --dtype float32 --repeat 1

The workloads:
- per_example: the gradient of an MLP 784-128-10 (tanh, log-softmax cross-entropy) for each of
  256 examples, with respect to its four parameters, as DP-SGD needs them. Columns:
    loop      a Python loop of autotrace.grad(loss) over the examples, stacked
    traced    autotrace.function(autotrace.vmap(autotrace.grad(loss), in_axes=(None, 0, 0)))
    jax       jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
- jacobian: the 100 x 100 Jacobian of x -> tanh(W2 tanh(W1 x + b1) + b2). Columns:
    jacrev    autotrace.jacrev(f): the gradient vmapped over the output's basis, one batched call
    jacobian  autotrace.jacobian(f) (reverse mode): the gradient code run once per output
    jax       jax.jit(jax.jacrev(f))

Each loss is written once as a function of the array module (`make_loss(np)`, as
benchmarks/models.py does); autotrace differentiates the NumPy version, JAX its own. Before
timing, every column's result in every dtype is checked against a float64 reference (the loop
of autotrace.grad over the examples, or autotrace.jacobian, itself checked against central
differences); one that differs, fails or has another dtype is reported and makes the exit status
1. The columns are timed in turns in the same run (benchmarks/traced_speed.py's
best_times_in_turns), each printed in microseconds and as a ratio to the first autotrace
column (traced, jacrev); lower is better.

Targets, printed as PASS or MISS (a MISS does not change the exit status), in each dtype:
the traced per-example gradients are faster than jax's, and jacrev is faster than
autotrace.jacobian.

--one-core pins the process to one CPU and every library to one thread (BLAS through its
variables, set before NumPy loads; XLA through XLA_FLAGS); without it each library keeps its
threads, printed at the start.
"""
from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# benchmarks/models.py pins the threads for --one-core before NumPy loads, and leaves the
# environment as given for XLA after grad_speed's BLAS setting: importing it first does both.
from models import Libraries, describe_autotrace, describe_threads  # noqa: E402
from grad_speed import describe_environment, parse_options  # noqa: E402
from traced_speed import best_times_in_turns, first_line, load_jax  # noqa: E402

import numpy  # noqa: E402

import autotrace  # noqa: E402

DTYPES = ("float32", "float64")
# Largest relative error (2-norm, per output) from the float64 reference.
TOLERANCE = {"float32": 1e-4, "float64": 1e-10}
FINITE_DIFFERENCE_STEP = 1e-6
FINITE_DIFFERENCE_TOLERANCE = 1e-7
BATCH, SIZES = 256, (784, 128, 10)
JACOBIAN_SIZE = 100


def make_example_loss(xp):
    """The cross-entropy of one example (image (784,), integer label) under the MLP."""
    def loss(parameters, image, label):
        w1, b1, w2, b2 = parameters
        scores = xp.tanh(image @ w1 + b1) @ w2 + b2
        shifted = scores - xp.max(scores)
        return xp.log(xp.sum(xp.exp(shifted))) - shifted[label]
    return loss


def make_layers(xp):
    """x -> tanh(W2 tanh(W1 x + b1) + b2), the parameters first."""
    def layers(w1, b1, w2, b2, x):
        return xp.tanh(w2 @ xp.tanh(w1 @ x + b1) + b2)
    return layers


@dataclass
class Workload:
    name: str
    description: str
    columns: tuple  # the names, the first autotrace's batched one (the ratios' unit)
    make_inputs: Callable  # rng -> float64 arguments
    reference: Callable  # float64 arguments -> list of arrays, checked elsewhere
    build: Callable  # (arguments, jax or None) -> {column: function of no arguments}
    target: tuple  # (column, column): the first must be faster
    finite_differences: Callable  # (arguments, reference, rng) -> relative error


def per_example_inputs(rng):
    parameters = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        parameters += [rng.standard_normal((fan_in, fan_out)) / numpy.sqrt(fan_in),
                       0.1 * rng.standard_normal(fan_out)]
    images = rng.random((BATCH, SIZES[0]))
    labels = rng.integers(0, SIZES[-1], BATCH)
    return tuple(parameters), images, labels


def per_example_loop(arguments):
    parameters, images, labels = arguments
    gradient = autotrace.grad(make_example_loss(numpy))
    examples = [gradient(parameters, image, label) for image, label in zip(images, labels)]
    return [numpy.stack(column) for column in zip(*examples)]


def per_example_columns(arguments, jax):
    parameters, images, labels = arguments
    loss = make_example_loss(numpy)
    traced = autotrace.function(autotrace.vmap(autotrace.grad(loss), in_axes=(None, 0, 0)))
    columns = {"traced": lambda: traced(parameters, images, labels),
               "loop": lambda: per_example_loop(arguments)}
    if jax is not None:
        jitted = jax.jit(jax.vmap(jax.grad(make_example_loss(jax.numpy)), in_axes=(None, 0, 0)))
        on_device = jax.tree_util.tree_map(jax.numpy.asarray, arguments)
        columns["jax"] = lambda: jax.block_until_ready(jitted(*on_device))
    return columns


def jacobian_inputs(rng):
    n = JACOBIAN_SIZE
    return (rng.standard_normal((n, n)) / numpy.sqrt(n), 0.1 * rng.standard_normal(n),
            rng.standard_normal((n, n)) / numpy.sqrt(n), 0.1 * rng.standard_normal(n),
            rng.standard_normal(n))


def jacobian_reference(arguments):
    return [autotrace.jacobian(make_layers(numpy), wrt=4)(*arguments)]


def jacobian_columns(arguments, jax):
    layers = make_layers(numpy)
    jacrev = autotrace.jacrev(layers, wrt=4)
    jacobian = autotrace.jacobian(layers, wrt=4)
    columns = {"jacrev": lambda: jacrev(*arguments), "jacobian": lambda: jacobian(*arguments)}
    if jax is not None:
        jitted = jax.jit(jax.jacrev(make_layers(jax.numpy), argnums=4))
        on_device = tuple(jax.numpy.asarray(a) for a in arguments)
        columns["jax"] = lambda: jax.block_until_ready(jitted(*on_device))
    return columns


def cast(arguments, dtype: str):
    """The float arrays of `arguments` (nested in tuples) in `dtype`; integer ones as they are."""
    if isinstance(arguments, tuple):
        return tuple(cast(a, dtype) for a in arguments)
    return arguments.astype(dtype) if arguments.dtype.kind == "f" else arguments


def as_arrays(result) -> list:
    return [numpy.asarray(r) for r in (result if isinstance(result, (tuple, list)) else [result])]


def relative_errors(got: list, expected: list) -> list:
    return [float(numpy.linalg.norm(numpy.asarray(g, numpy.float64) - e)
                  / max(numpy.linalg.norm(e), 1e-300)) for g, e in zip(got, expected)]


def jacobian_finite_differences(arguments, reference: list, rng) -> float:
    """The largest error of the Jacobian's columns for three inputs against central
    differences, relative to the largest element of the Jacobian."""
    layers, (jacobian,) = make_layers(numpy), reference
    worst = 0.0
    for column in rng.choice(JACOBIAN_SIZE, 3, replace=False):
        step = numpy.zeros(JACOBIAN_SIZE)
        step[column] = FINITE_DIFFERENCE_STEP
        *parameters, x = arguments
        estimate = (layers(*parameters, x + step) - layers(*parameters, x - step)) / (
            2 * FINITE_DIFFERENCE_STEP)
        worst = max(worst, float(numpy.max(numpy.abs(estimate - jacobian[:, column]))))
    return worst / float(numpy.max(numpy.abs(jacobian)))


def per_example_finite_differences(arguments, gradients, rng) -> float:
    """The largest error of two examples' gradients of w1 against central differences on two
    coordinates, relative to the largest element of that example's gradient."""
    parameters, images, labels = arguments
    loss = make_example_loss(numpy)
    worst = 0.0
    for example in rng.choice(BATCH, 2, replace=False):
        g = gradients[0][example]
        for flat in (int(numpy.argmax(numpy.abs(g))), int(rng.integers(g.size))):
            coordinate = numpy.unravel_index(flat, g.shape)
            values = []
            for step in (FINITE_DIFFERENCE_STEP, -FINITE_DIFFERENCE_STEP):
                w1 = parameters[0].copy()
                w1[coordinate] += step
                values.append(loss((w1, *parameters[1:]), images[example], labels[example]))
            estimate = (values[0] - values[1]) / (2 * FINITE_DIFFERENCE_STEP)
            worst = max(worst, abs(estimate - g[coordinate]) / float(numpy.max(numpy.abs(g))))
    return worst


WORKLOADS = [
    Workload("per_example", f"per-example gradients, MLP {'-'.join(map(str, SIZES))}, "
             f"batch {BATCH}", ("traced", "loop", "jax"), per_example_inputs, per_example_loop,
             per_example_columns, ("traced", "jax"), per_example_finite_differences),
    Workload("jacobian", f"Jacobian of tanh(W2 tanh(W1 x + b1) + b2), {JACOBIAN_SIZE} to "
             f"{JACOBIAN_SIZE}", ("jacrev", "jacobian", "jax"), jacobian_inputs,
             jacobian_reference, jacobian_columns, ("jacrev", "jacobian"),
             jacobian_finite_differences),
]



def check(workload: Workload, dtype: str, columns: dict, reference: list) -> tuple:
    """Call each column once, compare it with `reference`: (the columns that agree, passed)."""
    kept, passed = {}, True
    for name, call in columns.items():
        label = f"  {workload.name:<12} {dtype:<8} {name:<9}"
        start = time.perf_counter()
        try:
            got = as_arrays(call())
        except Exception as error:
            print(f"{label} FAILED: {first_line(error)}")
            traceback.print_exc(limit=-4, file=sys.stdout)
            passed = False
            continue
        first_call_s = time.perf_counter() - start
        errors = relative_errors(got, reference)
        dtypes = sorted({str(g.dtype) for g in got})
        shapes_agree = [g.shape for g in got] == [e.shape for e in reference]
        agrees = shapes_agree and max(errors) <= TOLERANCE[dtype] and dtypes == [dtype]
        print(f"{label} {'matches' if agrees else 'DIFFERS'}: largest relative error "
              f"{max(errors):.1e} (tolerance {TOLERANCE[dtype]:g}), {'/'.join(dtypes)}"
              f"{'' if shapes_agree else ', shapes differ'}, first call {first_call_s:.2f} s")
        if agrees:
            kept[name] = call
        passed &= agrees
    return kept, passed


def main(argv=None) -> int:
    options, workloads = parse_options(__doc__, argv, WORKLOADS, add_arguments=add_arguments)
    describe_environment()
    jax, _ = load_jax()
    if jax is not None:
        print(f"jax {jax.__version__}")
    describe_threads(Libraries(jax, None, None, None, False), options.one_core)
    describe_autotrace()

    started = time.perf_counter()
    rng = numpy.random.default_rng(0)
    inputs = {workload.name: workload.make_inputs(rng) for workload in workloads}
    print("\nThe float64 references, against central differences:")
    references, passed = {}, True
    for workload in workloads:
        reference = workload.reference(inputs[workload.name])
        error = workload.finite_differences(inputs[workload.name], reference, rng)
        agrees = error <= FINITE_DIFFERENCE_TOLERANCE
        print(f"  {workload.name:<12} {'matches' if agrees else 'DIFFERS'}: largest error "
              f"{error:.1e} of the largest element (tolerance {FINITE_DIFFERENCE_TOLERANCE:g})")
        if agrees:
            references[workload.name] = reference
        passed &= agrees

    for dtype in options.dtype or DTYPES:
        if jax is not None:  # a global switch: on for float64 only, so float32 stays float32
            jax.config.update("jax_enable_x64", dtype == "float64")
        print(f"\n== {dtype} ==\nChecking every column against the float64 reference:")
        rows = []
        for workload in workloads:
            if workload.name not in references:
                continue
            arguments = cast(inputs[workload.name], dtype)
            columns, agreed = check(workload, dtype, workload.build(arguments, jax),
                                    references[workload.name])
            passed &= agreed
            rows.append((workload, columns))
        print_times(dtype, rows, options.repeat)
    print()
    for workload in workloads:
        print(f"  {workload.name:<12} {workload.description}")
    print(f"Whole run: {time.perf_counter() - started:.0f} s after loading the libraries.")
    return 0 if passed else 1


def print_times(dtype: str, rows: list, repeat: int) -> None:
    """Time each row's columns in turns; print them in microseconds and as ratios."""
    print(f"\n{dtype}: times in microseconds, and as ratios to the first autotrace column "
          "(traced, jacrev); lower is better.")
    header = (f"{'workload':<12} " + " ".join(f"{'column':>9} {'us':>9} {'ratio':>6}"
                                              for _ in range(3)) + "   target")
    print(header)
    print("-" * len(header))
    for workload, columns in rows:
        seconds = best_times_in_turns(columns, repeat) if columns else {}
        unit = seconds.get(workload.columns[0])
        cells = " ".join(
            f"{name:>9} {1e6 * seconds[name]:>9.0f} {seconds[name] / unit:>5.2f}x"
            if name in seconds and unit else f"{name:>9} {'-':>9} {'-':>6}"
            for name in workload.columns)
        faster, slower = workload.target
        if {faster, slower} <= seconds.keys():
            verdict = "PASS" if seconds[faster] < seconds[slower] else "MISS"
            verdict = f"{faster} < {slower}: {verdict} ({seconds[slower] / seconds[faster]:.2f}x)"
        else:
            verdict = f"{faster} < {slower}: n/a"
        print(f"{workload.name:<12} {cells}   {verdict}")


def add_arguments(parser) -> None:
    parser.set_defaults(repeat=3)
    parser.add_argument("--dtype", nargs="*", choices=DTYPES, help="run only these dtypes")


if __name__ == "__main__":
    sys.exit(main())
