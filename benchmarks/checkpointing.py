"""What does gradient checkpointing save, and what does it cost? The gradient of an RNN over
1,000 steps (grad_speed.py's rnn workload, made longer), with and without
`grad(..., checkpoint_every=k)`, eagerly and traced (`autotrace.function`).

    python benchmarks/checkpointing.py [--steps 1000] [--hidden 64 128 256] [--every 32]

Peak memory is what tracemalloc sees during one gradient call (NumPy reports its array
allocations to it), the inputs excluded; time is the best of --repeat calls. Both are printed
beside the run without checkpointing as ratios: memory saved (how many times less) and time
cost (how many times longer). The gradients are checked equal to the ones without
checkpointing first; the script exits with status 1 if any differ.

A second table puts the same gradient beside its peers, in the same run: the NumPy primal (the
loss alone), autograd's grad (which stores every step), and jax.jit(jax.grad) of the loop
written as lax.scan, without and with jax.checkpoint on the step (what JAX offers for this:
each step's carry is kept, its insides recomputed). JAX's memory is the temporary memory XLA
plans for the compiled gradient (`compiled.memory_analysis()`), which tracemalloc cannot see.

BLAS runs on one thread unless OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS, MKL_NUM_THREADS) says
otherwise, as in the other benchmarks.
"""
from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy loads its BLAS

import argparse
import math
import sys
import time
import tracemalloc

import numpy

import autotrace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_speed import describe_environment, make_rnn_loss  # noqa: E402 - after the path
from traced_speed import load_jax  # noqa: E402

rnn_loss = make_rnn_loss(numpy)
WRT = (0, 1)


def inputs(rng, steps: int, hidden: int, batch: int = 16, features: int = 32):
    Wx = 0.1 * rng.standard_normal((features, hidden))
    Wh = 0.5 / math.sqrt(hidden) * rng.standard_normal((hidden, hidden))
    b = 0.01 * rng.standard_normal(hidden)
    xs = rng.standard_normal((steps, batch, features))
    h0 = numpy.zeros((batch, hidden))
    return Wx, Wh, b, xs, h0


def peak_bytes(call) -> int:
    """The most memory `call()` held at once beyond what was allocated before it."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    call()
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return peak


def best_time(call, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def measure(gradient, args, repeat: int):
    result = gradient(*args)  # a first call: generating, tracing and compiling happen here
    return result, peak_bytes(lambda: gradient(*args)), best_time(lambda: gradient(*args),
                                                                   repeat)


def jax_rnn_loss(jax, remat: bool):
    """The rnn loss as JAX writes a long loop: lax.scan, the step under jax.checkpoint if
    `remat`."""
    def loss(Wx, Wh, b, xs, h0):
        def step(h, x_t):
            return jax.numpy.tanh(x_t @ Wx + h @ Wh + b), None
        h, _ = jax.lax.scan(jax.checkpoint(step) if remat else step, h0, xs)
        return jax.numpy.sum(h ** 2)
    return loss


def peers(args, expected, repeat: int) -> str:
    """The peers' row for one size: times in ms (and JAX's planned memory in MB)."""
    cells = [f"{best_time(lambda: rnn_loss(*args), repeat) * 1e3:>8.1f}"]
    try:
        import autograd
        gradient = autograd.grad(make_rnn_loss(autograd.numpy), WRT)
        cells.append(f"{best_time(lambda: gradient(*args), repeat) * 1e3:>9.1f}")
    except ImportError:
        cells.append(f"{'-':>9}")
    jax, _ = load_jax() if "jax" not in sys.modules else (sys.modules["jax"], None)
    for remat in (False, True):
        if jax is None:
            cells.append(f"{'-':>17}")
            continue
        jitted = jax.jit(jax.grad(jax_rnn_loss(jax, remat), WRT))
        got = jax.block_until_ready(jitted(*args))
        if not all(numpy.allclose(g, e, rtol=1e-10, atol=1e-12) for g, e in zip(got, expected)):
            raise SystemExit("jax's gradient differs from autotrace's")
        planned = jitted.lower(*args).compile().memory_analysis()
        megabytes = f"{planned.temp_size_in_bytes / 1e6:.1f} MB" if planned else "? MB"
        elapsed = best_time(lambda: jax.block_until_ready(jitted(*args)), repeat)
        cells.append(f"{elapsed * 1e3:>7.1f} {megabytes:>9}")
    return " ".join(cells)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--hidden", type=int, nargs="*", default=[64, 128, 256])
    parser.add_argument("--every", type=int, default=32,
                        help="iterations per segment (0: the square root of --steps)")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args(argv)
    every = options.every or max(1, round(math.sqrt(options.steps)))
    describe_environment()
    print(f"rnn gradient, {options.steps} steps, batch 16, input 32, d/d(Wx, Wh); "
          f"checkpoint_every={every}")
    print(f"{'hidden':>6} {'mode':>7} {'peak MB':>9} {'with k':>8} {'saved':>7} "
          f"{'time ms':>8} {'with k':>8} {'cost':>6}")
    failed = False
    rng = numpy.random.default_rng(0)
    peer_rows = []
    for hidden in options.hidden:
        args = inputs(rng, options.steps, hidden)
        for mode in ("eager", "traced"):
            plain = autotrace.grad(rnn_loss, wrt=WRT)
            segmented = autotrace.grad(rnn_loss, wrt=WRT, checkpoint_every=every)
            if mode == "traced":
                plain, segmented = autotrace.function(plain), autotrace.function(segmented)
            expected, plain_peak, plain_time = measure(plain, args, options.repeat)
            got, peak, elapsed = measure(segmented, args, options.repeat)
            if not all(numpy.allclose(g, e, rtol=1e-10, atol=1e-12)
                       for g, e in zip(got, expected)):
                print(f"hidden {hidden}, {mode}: the gradients with checkpointing differ")
                failed = True
            print(f"{hidden:>6} {mode:>7} {plain_peak / 1e6:>9.1f} {peak / 1e6:>8.1f} "
                  f"{plain_peak / peak:>6.1f}x {plain_time * 1e3:>8.1f} {elapsed * 1e3:>8.1f} "
                  f"{elapsed / plain_time:>5.2f}x")
        peer_rows.append(f"{hidden:>6} {peers(args, expected, options.repeat)}")
    print("\npeers, ms (JAX: ms and the temporary memory XLA plans)")
    print(f"{'hidden':>6} {'primal':>8} {'autograd':>9} {'jax scan':>17} "
          f"{'jax scan+ckpt':>17}")
    print("\n".join(peer_rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
