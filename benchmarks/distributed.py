"""Data-parallel training over MPI: what a reduction costs, and a step on 1 and 2 ranks.

    python benchmarks/distributed.py                  # one rank: the step only
    mpiexec -n 2 python benchmarks/distributed.py     # the reductions, and the step on 2

Printed by rank 0:
- allreduce_mean's time against the message size (1 KB to 64 MB of float64), and the
  bandwidth it reaches (bytes reduced per second, as each rank sees it);
- the same gradients (an MLP's 100 arrays of 40 KB) reduced one Allreduce per array against
  one bucket, which is why DistributedOptimizer packs them;
- one training step of an MLP 784-512-512-10 on a batch of 1024 split over the ranks (the
  gradient on each rank's share, then the averaged update): its time, and the speedup over
  one rank when both runs are printed.

Each time is the median of repeated runs; BLAS runs on one thread per rank (below), so that
the ranks do not take each other's cores.
"""
from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy loads its BLAS

import time

import numpy as np

import autotrace as at
from autotrace import distributed

GLOBAL_BATCH = 1024
LAYERS = (784, 512, 512, 10)


def median_seconds(work, repeats: int) -> float:
    """The median time of `work()`, each run started together on every rank."""
    times = []
    for _ in range(repeats):
        distributed.allreduce_mean([np.zeros(1)])  # a barrier: the ranks start together
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    median = float(np.median(times))
    if distributed.size() == 1:
        return median
    from mpi4py import MPI
    # The slowest rank's median: a step is as slow as its slowest rank.
    return MPI.COMM_WORLD.allreduce(median, op=MPI.MAX)


def reduction_sizes() -> None:
    if distributed.rank() == 0:
        print("allreduce_mean of one float64 array (median):")
        print(f"{'bytes':>12} {'time':>12} {'bandwidth':>14}")
    for exponent in range(10, 27, 2):
        array = np.ones(2 ** exponent // 8)
        seconds = median_seconds(lambda: distributed.allreduce_mean([array]),
                                 repeats=max(5, min(200, 2 ** (24 - exponent))))
        if distributed.rank() == 0:
            print(f"{array.nbytes:>12,} {seconds * 1e6:>10.1f}us "
                  f"{array.nbytes / seconds / 1e9:>10.2f} GB/s")


def bucketing() -> None:
    gradients = [np.ones(5000) for _ in range(100)]
    one_each = median_seconds(lambda: [distributed.allreduce_mean([g]) for g in gradients], 20)
    bucketed = median_seconds(lambda: distributed.allreduce_mean(gradients), 20)
    if distributed.rank() == 0:
        print(f"\n100 arrays of 40 KB: one allreduce each {one_each * 1e3:.2f} ms, one bucket "
              f"{bucketed * 1e3:.2f} ms ({one_each / bucketed:.1f}x)")


def mlp_loss(W1, b1, W2, b2, W3, b3, X, Y):
    hidden = np.tanh(X @ W1 + b1)
    hidden = np.tanh(hidden @ W2 + b2)
    logits = hidden @ W3 + b3
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probabilities = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * log_probabilities, axis=1))


def training_step() -> None:
    rank, ranks = distributed.rank(), distributed.size()
    rng = np.random.default_rng(0)
    variables = []
    for inputs, outputs in zip(LAYERS[:-1], LAYERS[1:]):
        variables.append(at.Variable(rng.normal(size=(inputs, outputs)) / np.sqrt(inputs)))
        variables.append(at.Variable(np.zeros(outputs)))
    X = rng.normal(size=(GLOBAL_BATCH, LAYERS[0]))
    Y = np.eye(LAYERS[-1])[rng.integers(0, LAYERS[-1], GLOBAL_BATCH)]
    share = slice(rank * GLOBAL_BATCH // ranks, (rank + 1) * GLOBAL_BATCH // ranks)
    X, Y = X[share], Y[share]
    gradient = at.function(at.grad(mlp_loss, wrt=tuple(range(6))))
    optimizer = distributed.DistributedOptimizer(at.optimizers.SGD(0.01))

    def step():
        values = gradient(*[v.numpy() for v in variables], X, Y)
        optimizer.apply_gradients(zip(values, variables))

    step()  # traces the gradient
    seconds = median_seconds(step, repeats=20)
    if rank == 0:
        parameters = sum(v.numpy().size for v in variables)
        print(f"\nMLP {'-'.join(map(str, LAYERS))} ({parameters:,} parameters), batch "
              f"{GLOBAL_BATCH} over {ranks} rank{'s' if ranks > 1 else ''}: "
              f"{seconds * 1e3:.1f} ms a step")


def main() -> None:
    distributed.init()
    if distributed.rank() == 0:
        print(f"{distributed.size()} rank(s); BLAS threads per rank: "
              f"{os.environ['OPENBLAS_NUM_THREADS']}; cores: {os.cpu_count()}; load average "
              f"{os.getloadavg()[0]:.1f}\n", flush=True)
    if distributed.size() > 1:
        reduction_sizes()
        bucketing()
    training_step()


if __name__ == "__main__":
    main()
