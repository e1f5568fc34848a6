"""How fast are autotrace's gradients? Five workloads, three ways to get their gradients.

    pip install -r benchmarks/requirements.txt    # autograd, for the comparison column
    python benchmarks/grad_speed.py

Every workload's loss is written once, as a function of the NumPy module it uses
(`make_loss(np_module)`), so that autotrace differentiates the NumPy version and autograd its own
`autograd.numpy` version of the same code. Each gradient is timed against the loss itself (the
"primal", plain NumPy) in the same run, and printed as a ratio to it: 2.0 means the gradient
costs two forward passes. Times are the best of several repeats, each repeat running the call
enough times to last at least 0.2 s (as `python -m timeit` does).

Before timing, autotrace's gradients are checked against the hand-written NumPy ones (and
autograd's too, when it is installed); the script exits with status 1 if any differ or fail.
The targets (an autotrace gradient costs at most 3 primals, and beats autograd) are printed as
PASS or MISS; a MISS does not change the exit status.

BLAS runs on one thread unless OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS, MKL_NUM_THREADS) says
otherwise: on a busy machine a multithreaded BLAS can slow a matrix product down a hundredfold,
which would drown the differences being measured.
"""
from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy loads its BLAS

import argparse
import importlib.metadata
import platform
import sys
import time
import timeit
import traceback
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

import numpy

import autotrace

MAX_RATIO_TO_PRIMAL = 3.0


# -- (a) logistic regression ----------------------------------------------------------------------

def make_logistic_loss(np: ModuleType) -> Callable:
    def logistic_loss(w, X, y):
        z = X @ w
        # log(1 + exp(z)) - y z is the log-loss of a label y in {0, 1}, written stably.
        return np.mean(np.logaddexp(0.0, z) - y * z)
    return logistic_loss


def logistic_grad(w, X, y):
    z = X @ w
    probability = 0.5 * (1.0 + numpy.tanh(0.5 * z))  # the sigmoid, without overflow
    return X.T @ (probability - y) / len(y)


def logistic_inputs(rng):
    X = rng.standard_normal((500, 100))
    w = 0.1 * rng.standard_normal(100)
    y = (rng.random(500) < 0.5).astype(numpy.float64)
    return w, X, y


# -- (b) MLP 784-256-10 ---------------------------------------------------------------------------

def make_mlp_loss(np: ModuleType) -> Callable:
    def mlp_loss(W1, b1, W2, b2, X, Y):
        hidden = np.tanh(X @ W1 + b1)
        logits = hidden @ W2 + b2
        shifted = logits - np.max(logits, axis=1, keepdims=True)
        log_probabilities = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
        return -np.mean(np.sum(Y * log_probabilities, axis=1))
    return mlp_loss


def mlp_grad(W1, b1, W2, b2, X, Y):
    hidden = numpy.tanh(X @ W1 + b1)
    logits = hidden @ W2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    probabilities = numpy.exp(shifted)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    d_logits = (probabilities - Y) / len(X)
    d_hidden = d_logits @ W2.T
    d_preactivation = d_hidden * (1.0 - hidden ** 2)
    return (X.T @ d_preactivation, d_preactivation.sum(axis=0),
            hidden.T @ d_logits, d_logits.sum(axis=0))


def mlp_inputs(rng):
    batch = 64
    W1 = 0.05 * rng.standard_normal((784, 256))
    b1 = 0.01 * rng.standard_normal(256)
    W2 = 0.1 * rng.standard_normal((256, 10))
    b2 = 0.01 * rng.standard_normal(10)
    X = rng.standard_normal((batch, 784))
    Y = numpy.eye(10)[rng.integers(0, 10, size=batch)]
    return W1, b1, W2, b2, X, Y


# -- (c) a scalar loop ----------------------------------------------------------------------------

def make_scalar_loop(np: ModuleType) -> Callable:
    def scalar_loop(x):
        for _ in range(100):
            x = np.sin(x) * 0.9 + 0.1 * x ** 2
        return x
    return scalar_loop


def scalar_loop_grad(x):
    history = []
    for _ in range(100):
        history.append(x)
        x = numpy.sin(x) * 0.9 + 0.1 * x ** 2
    dx = 1.0
    for x in reversed(history):
        dx = dx * (numpy.cos(x) * 0.9 + 0.2 * x)
    return float(dx)


def scalar_loop_inputs(rng):
    return (0.5,)


# -- (d) a recurrent network ----------------------------------------------------------------------

def make_rnn_loss(np: ModuleType) -> Callable:
    def rnn_loss(Wx, Wh, b, xs, h0):
        h = h0
        for x_t in xs:
            h = np.tanh(x_t @ Wx + h @ Wh + b)
        return np.sum(h ** 2)
    return rnn_loss


def rnn_grad(Wx, Wh, b, xs, h0):
    states = [h0]
    h = h0
    for x_t in xs:
        h = numpy.tanh(x_t @ Wx + h @ Wh + b)
        states.append(h)
    dh = 2.0 * h
    dWx = numpy.zeros_like(Wx)
    dWh = numpy.zeros_like(Wh)
    for t in range(len(xs) - 1, -1, -1):
        d_preactivation = dh * (1.0 - states[t + 1] ** 2)
        dWx += xs[t].T @ d_preactivation
        dWh += states[t].T @ d_preactivation
        dh = d_preactivation @ Wh.T
    return dWx, dWh


def rnn_inputs(rng):
    steps, batch, inputs, hidden = 50, 32, 32, 128
    Wx = 0.1 * rng.standard_normal((inputs, hidden))
    Wh = 0.05 * rng.standard_normal((hidden, hidden))
    b = 0.01 * rng.standard_normal(hidden)
    xs = rng.standard_normal((steps, batch, inputs))
    h0 = numpy.zeros((batch, hidden))
    return Wx, Wh, b, xs, h0


# -- (e) an elementwise chain: GELU over a million values ---------------------------------------

def make_gelu_loss(np: ModuleType) -> Callable:
    def gelu_loss(x):
        # GELU's tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), summed.
        return np.sum(0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3))))
    return gelu_loss


def gelu_grad(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x ** 3)
    t = numpy.tanh(inner)
    d_inner = 0.7978845608028654 * (1.0 + 3 * 0.044715 * x ** 2)
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * d_inner


def gelu_inputs(rng):
    return (rng.standard_normal(1_000_000),)


# -- the harness ----------------------------------------------------------------------------------

@dataclass
class Workload:
    name: str
    description: str
    make_loss: Callable[[ModuleType], Callable]
    hand_grad: Callable
    make_inputs: Callable
    wrt: int | tuple


WORKLOADS = [
    Workload("logistic", "logistic regression, X 500x100, d/dw", make_logistic_loss,
             logistic_grad, logistic_inputs, 0),
    Workload("mlp", "MLP 784-256-10, batch 64, d/d(W1,b1,W2,b2)", make_mlp_loss,
             mlp_grad, mlp_inputs, (0, 1, 2, 3)),
    Workload("scalar_loop", "x = sin(x)*0.9 + 0.1*x**2, 100 times, d/dx", make_scalar_loop,
             scalar_loop_grad, scalar_loop_inputs, 0),
    Workload("rnn", "RNN 50 steps, batch 32, input 32, hidden 128, d/d(Wx,Wh)", make_rnn_loss,
             rnn_grad, rnn_inputs, (0, 1)),
    Workload("gelu", "sum(gelu(x)), x of 1e6 float64, d/dx", make_gelu_loss, gelu_grad,
             gelu_inputs, 0),
]


def best_time(call: Callable[[], Any], repeat: int) -> float:
    """Seconds per call: the best of `repeat` runs, each long enough to time (>= 0.2 s)."""
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def as_tuple(gradient, wrt) -> tuple:
    return tuple(gradient) if isinstance(wrt, tuple) else (gradient,)


def same_gradients(got, expected, wrt) -> bool:
    got, expected = as_tuple(got, wrt), as_tuple(expected, wrt)
    return len(got) == len(expected) and all(
        numpy.shape(g) == numpy.shape(e) and numpy.allclose(g, e, rtol=1e-6, atol=1e-9)
        for g, e in zip(got, expected))


def load_autograd():
    try:
        import autograd
        import autograd.numpy
    except ImportError:
        print("autograd is not installed: its column is skipped. To compare with it:\n"
              "    pip install -r benchmarks/requirements.txt")
        return None, None
    return autograd, autograd.numpy


def parse_options(doc: str, argv=None, workloads=None, add_arguments=None):
    """`--repeat`, `--only` and `--one-core` for a benchmark over `workloads` (anything with a
    `name`; this module's WORKLOADS by default), and any options `add_arguments(parser)` adds:
    (options, chosen workloads)."""
    workloads = WORKLOADS if workloads is None else workloads
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing repeats (best is kept)")
    parser.add_argument("--only", nargs="*", choices=[w.name for w in workloads],
                        help="run only these workloads")
    parser.add_argument("--one-core", action="store_true",
                        help="run the whole process on one CPU core, BLAS and autotrace's "
                             "fused kernels on one thread: JAX (XLA) and autotrace otherwise "
                             "spread large elementwise loops over every core, which BLAS "
                             "pinned to one thread does not")
    if add_arguments is not None:
        add_arguments(parser)
    options = parser.parse_args(argv)
    if options.one_core:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        # one core, one thread: more would only take turns on it
        autotrace.config.cpu_threads(1)
    return options, [w for w in workloads if not options.only or w.name in options.only]


def describe_environment():
    """Print the machine and library versions; returns (autograd, autograd.numpy) or Nones."""
    print(f"python {platform.python_version()}, numpy {numpy.__version__}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}, "
          f"BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"autotrace kernel threads {autotrace.config.cpu_threads()}, "
          f"running on {len(os.sched_getaffinity(0))} of them")
    if os.environ.get("OPENBLAS_CORETYPE"):
        # A machine may pin OpenBLAS to an older CPU's kernels (Haswell's AVX2 on an AVX-512
        # CPU multiplies matrices half as fast); JAX brings its own, so say which is in use.
        print(f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} (OpenBLAS's kernels are "
              "that CPU's, whatever this one is)")
    autograd, autograd_numpy = load_autograd()
    if autograd is not None:
        print(f"autograd {importlib.metadata.version('autograd')}")
    return autograd, autograd_numpy


def main(argv=None) -> int:
    options, workloads = parse_options(__doc__, argv)
    autograd, autograd_numpy = describe_environment()

    rng = numpy.random.default_rng(0)
    failed = False
    rows = []
    print("\nChecking gradients against the hand-written NumPy ones:")
    for workload in workloads:
        args = workload.make_inputs(rng)
        primal = workload.make_loss(numpy)
        expected = workload.hand_grad(*args)
        row = {"workload": workload, "args": args, "primal": primal}
        start = time.perf_counter()
        try:
            autotrace_grad = autotrace.grad(primal, wrt=workload.wrt)
            got = autotrace_grad(*args)
        except Exception:
            print(f"  {workload.name:<12} autotrace FAILED:")
            traceback.print_exc(limit=-3, file=sys.stdout)
            failed = True
        else:
            first_call_ms = 1e3 * (time.perf_counter() - start)
            if same_gradients(got, expected, workload.wrt):
                row["autotrace"] = autotrace_grad
                print(f"  {workload.name:<12} autotrace matches "
                      f"(transform and first call {first_call_ms:.0f} ms)")
            else:
                print(f"  {workload.name:<12} autotrace DIFFERS from the hand-written gradient")
                failed = True
        if autograd is not None:
            autograd_grad = autograd.grad(workload.make_loss(autograd_numpy), workload.wrt)
            if same_gradients(autograd_grad(*args), expected, workload.wrt):
                row["autograd"] = autograd_grad
                print(f"  {workload.name:<12} autograd matches")
            else:
                print(f"  {workload.name:<12} autograd DIFFERS from the hand-written gradient")
                failed = True
        rows.append(row)

    print("\nTimes as ratios to the primal (the loss alone, plain NumPy); lower is better.")
    header = (f"{'workload':<12} {'primal us':>10} {'numpy hand':>11} {'autotrace':>10} "
              f"{'autograd':>10}   {'<=3x primal':<12} {'beats autograd':<14}")
    print(header)
    print("-" * len(header))
    for row in rows:
        workload, args = row["workload"], row["args"]
        primal_s = best_time(lambda: row["primal"](*args), options.repeat)
        ratios = {"hand": best_time(lambda: workload.hand_grad(*args), options.repeat) / primal_s}
        for column in ("autotrace", "autograd"):
            if column in row:
                ratios[column] = best_time(lambda: row[column](*args), options.repeat) / primal_s

        def cell(column):
            return f"{ratios[column]:>9.2f}x" if column in ratios else f"{'-':>10}"

        if "autotrace" not in ratios:
            within, beats = "FAILED", "FAILED"
        else:
            within = "PASS" if ratios["autotrace"] <= MAX_RATIO_TO_PRIMAL else "MISS"
            beats = ("n/a" if "autograd" not in ratios
                     else "PASS" if ratios["autotrace"] < ratios["autograd"] else "MISS")
        print(f"{workload.name:<12} {1e6 * primal_s:>10.1f} {ratios['hand']:>10.2f}x "
              f"{cell('autotrace')} {cell('autograd')}   {within:<12} {beats:<14}")
    print()
    for workload in workloads:
        print(f"  {workload.name:<12} {workload.description}")
    print(f"\nTargets: an autotrace gradient costs at most {MAX_RATIO_TO_PRIMAL:g}x its primal, "
          "and is faster than autograd's.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
