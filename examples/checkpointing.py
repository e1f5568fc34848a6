"""Gradient checkpointing: less memory for a long loop's gradient, for some recomputation.

    python examples/checkpointing.py [--steps 500] [--every 22]

A recurrent network runs 500 steps. Its gradient stores every step's state for the adjoint
sweep; with `checkpoint_every=k` it stores one snapshot every k steps and recomputes the steps
in between when the adjoint sweep reaches them. The script prints the peak memory of both
gradients (tracemalloc, which NumPy reports its arrays to) and checks they agree.
"""
import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy loads its BLAS: small products

import argparse  # noqa: E402 - after the BLAS settings
import math  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import autotrace  # noqa: E402


@autotrace.checkpoint
def cell(h, x_t, Wx, Wh):
    """One step; under `grad` a call of it keeps only its inputs, and runs again in the
    adjoint sweep (autotrace.source shows where)."""
    return np.tanh(x_t @ Wx + h @ Wh)


def short_loss(Wx, Wh, xs, h):
    for x_t in xs:
        h = cell(h, x_t, Wx, Wh)
    return np.sum(h ** 2)


def rnn_loss(Wx, Wh, xs, h):
    for x_t in xs:
        h = np.tanh(x_t @ Wx + h @ Wh)
    return np.sum(h ** 2)


def peak_megabytes(call) -> float:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    call()
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return peak / 1e6


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--every", type=int, default=0, help="0: the square root of --steps")
    options = parser.parse_args(argv)
    every = options.every or round(math.sqrt(options.steps))
    rng = np.random.default_rng(0)
    Wx = 0.1 * rng.standard_normal((16, 128))
    Wh = 0.05 * rng.standard_normal((128, 128))
    xs = rng.standard_normal((options.steps, 32, 16))
    h0 = np.zeros((32, 128))

    print("Where a checkpointed call runs again (the adjoint sweep of short_loss):\n")
    source = autotrace.source(autotrace.grad(short_loss, wrt=(0, 1)))
    print(source[source.index("# Adjoint sweep"):])

    plain = autotrace.grad(rnn_loss, wrt=(0, 1))
    segmented = autotrace.grad(rnn_loss, wrt=(0, 1), checkpoint_every=every)
    expected, got = plain(Wx, Wh, xs, h0), segmented(Wx, Wh, xs, h0)
    agree = all(np.allclose(g, e, rtol=1e-12, atol=1e-14) for g, e in zip(got, expected))
    stored = peak_megabytes(lambda: plain(Wx, Wh, xs, h0))
    checkpointed = peak_megabytes(lambda: segmented(Wx, Wh, xs, h0))
    print(f"{options.steps} steps: peak memory {stored:.1f} MB storing every step, "
          f"{checkpointed:.1f} MB with checkpoint_every={every} "
          f"({stored / checkpointed:.1f}x less); gradients agree: {agree}")
    return {"stored": stored, "checkpointed": checkpointed, "agree": agree,
            "source": source}


if __name__ == "__main__":
    main()
