"""Run under `mpiexec -n N` (N dividing 24) by tests/test_distributed.py: checks that
autotrace.distributed averages gradients into the full batch's, trains as one process on the
full batch does, and broadcasts variables. Each rank prints one JSON line of its findings and
exits 1 if any check fails."""
import json
import os
import sys

import numpy as np

import autotrace as at
from autotrace import distributed

BATCH, FEATURES, HIDDEN = 24, 5, 4
TOLERANCE = 1e-12


def loss(kernel, bias, readout, x, y):
    return np.mean((np.tanh(x @ kernel + bias) @ readout - y) ** 2)


loss_gradient = at.grad(loss, wrt=(0, 1, 2))


def initial_parameters():
    parameters = np.random.default_rng(0)
    return (parameters.normal(size=(FEATURES, HIDDEN)), parameters.normal(size=HIDDEN),
            parameters.normal(size=HIDDEN))


def max_difference(left, right):
    return max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
               for a, b in zip(left, right))


def train(optimizer, x, y, steps=5):
    """`steps` updates of fresh variables from the same start; returns their values."""
    variables = [at.Variable(value, name=name) for value, name in
                 zip(initial_parameters(), ("kernel", "bias", "readout"))]
    for _ in range(steps):
        gradients = loss_gradient(*[v.numpy() for v in variables], x, y)
        optimizer.apply_gradients(zip(gradients, variables))
    return [v.numpy() for v in variables]


def main():
    distributed.init()
    rank, size = distributed.rank(), distributed.size()
    data = np.random.default_rng(1)
    x, y = data.normal(size=(BATCH, FEATURES)), data.normal(size=BATCH)
    shard = slice(rank * BATCH // size, (rank + 1) * BATCH // size)
    x_shard, y_shard = x[shard], y[shard]
    found = {"rank": rank, "size": size, "local_rank": distributed.local_rank()}

    # One step's gradient: the mean of the shards' gradients is the full batch's.
    full = loss_gradient(*initial_parameters(), x, y)
    shard_gradients = loss_gradient(*initial_parameters(), x_shard, y_shard)
    found["gradient_error"] = max_difference(distributed.allreduce_mean(shard_gradients), full)
    # Buckets of 64 bytes split the gradients into many reductions; the result is the same.
    found["small_bucket_error"] = max_difference(
        distributed.allreduce_mean(shard_gradients, bucket_bytes=64), full)
    found["shard_differs"] = max_difference(shard_gradients, full) > 1e-3

    # float32 stays float32; these means are exact in binary.
    mixed = distributed.allreduce_mean([np.full(3, rank, np.float32), np.full(2, rank, float)])
    expected_mean = (size - 1) / 2
    found["dtypes_kept"] = [a.dtype.name for a in mixed] == ["float32", "float64"]
    found["dtype_mean_ok"] = all(np.all(a == expected_mean) for a in mixed)

    # A few steps of training on the shards, against one process on the full batch.
    found["training_error"] = {}
    for name, make in (("SGD", lambda: at.optimizers.SGD(0.1, momentum=0.9)),
                       ("Adam", lambda: at.optimizers.Adam(0.05))):
        on_shards = train(distributed.DistributedOptimizer(make()), x_shard, y_shard)
        on_full_batch = train(make(), x, y)
        found["training_error"][name] = max_difference(on_shards, on_full_batch)

    # Inside autotrace.function: the averaging is one op of the graph, run on every call.
    variables = [at.Variable(value, name=name) for value, name in
                 zip(initial_parameters(), ("kernel", "bias", "readout"))]
    optimizer = distributed.DistributedOptimizer(at.optimizers.Adam(0.05))

    @at.function
    def traced_step(x, y):
        gradients = loss_gradient(*[v.value() for v in variables], x, y)
        optimizer.apply_gradients(zip(gradients, variables))

    for _ in range(5):
        traced_step(x_shard, y_shard)
    found["traced_training_error"] = max_difference(
        [v.numpy() for v in variables], train(at.optimizers.Adam(0.05), x, y))
    found["traced_once"] = traced_step.trace_count == 1 and "allreduce" in str(
        traced_step.graph(x_shard, y_shard))

    # minimize: gradients of the Variables the loss reads, averaged.
    kernel, bias, readout = [at.Variable(value) for value in initial_parameters()]
    optimizer = distributed.DistributedOptimizer(at.optimizers.SGD(0.1))
    optimizer.minimize(lambda: loss(kernel, bias, readout, x_shard, y_shard))
    reference = [at.Variable(value) for value in initial_parameters()]
    at.optimizers.SGD(0.1).minimize(
        lambda: loss(reference[0], reference[1], reference[2], x, y))
    found["minimize_error"] = max_difference([kernel, bias, readout], reference)

    # A None gradient is passed on as such: its Variable is left alone, as without ranks.
    updated, untouched = at.Variable(np.zeros(2)), at.Variable(np.ones(3))
    distributed.DistributedOptimizer(at.optimizers.SGD(1.0)).apply_gradients(
        [(np.full(2, float(rank)), updated), (None, untouched)])
    found["none_gradient_ok"] = (np.array_equal(updated.numpy(), np.full(2, -expected_mean))
                                 and np.array_equal(untouched.numpy(), np.ones(3)))

    # Metrics: each rank counts its shard; the summed state is the whole batch's metric.
    mean_loss, accuracy = at.metrics.Mean(), at.metrics.Accuracy()
    mean_loss(y_shard ** 2)
    accuracy(y_shard > 0, x_shard[:, 0] > 0)
    distributed.sum_metric_states(mean_loss, accuracy)
    whole_batch = [np.mean(y ** 2), np.mean((y > 0) == (x[:, 0] > 0))]
    found["metrics_error"] = max_difference([mean_loss.result(), accuracy.result()], whole_batch)

    # broadcast_variables: each rank starts from its own values; all end with the root's.
    last = size - 1
    for root in (0, last):
        own = [at.Variable(np.arange(6.0).reshape(2, 3) * (rank + 1)),
               at.Variable(np.float32(rank + 10))]
        distributed.broadcast_variables(own, root=root)
        expected = [np.arange(6.0).reshape(2, 3) * (root + 1), np.float32(root + 10)]
        found[f"broadcast_from_{root}_ok"] = all(
            np.array_equal(v.numpy(), e) and v.dtype == np.asarray(e).dtype
            for v, e in zip(own, expected))

    # Checkpoints: rank 0 writes them (each rank holding its own value, the file holds rank
    # 0's), every rank restores them; a manager keeps 2 and removes the rest once.
    directory = os.environ["CHECKPOINT_DIR"]
    weights = at.Variable(np.full(3, float(rank)), name="weights")
    manager = at.CheckpointManager(at.Checkpoint(weights=weights), directory, max_to_keep=2)
    paths = [manager.save() for _ in range(3)]
    weights.assign(np.full(3, -1.0))
    at.Checkpoint(weights=weights).restore(paths[-1])
    found["checkpoint_ok"] = (np.array_equal(weights.numpy(), np.zeros(3))
                              and sorted(os.listdir(directory)) == sorted(
                                  ["checkpoint"] + [os.path.basename(path) + suffix
                                                    for path in paths[1:]
                                                    for suffix in (".index.json", ".npz")]))

    # Ranks passing different arrays: every rank gets the same error, and none hangs.
    try:
        distributed.allreduce_mean([np.zeros(2 + (rank == 1))])
        found["mismatch_error"] = None
    except distributed.DistributedError as error:
        found["mismatch_error"] = str(error)

    passed = (found["gradient_error"] <= TOLERANCE and found["small_bucket_error"] <= TOLERANCE
              and (found["shard_differs"] or size == 1) and found["none_gradient_ok"]
              and found["dtypes_kept"] and found["dtype_mean_ok"]
              and max(found["training_error"].values()) <= TOLERANCE
              and found["traced_training_error"] <= TOLERANCE and found["traced_once"]
              and found["minimize_error"] <= TOLERANCE and found["metrics_error"] <= TOLERANCE
              and found["broadcast_from_0_ok"] and found[f"broadcast_from_{last}_ok"]
              and (found["mismatch_error"] is not None or size == 1)
              and found["checkpoint_ok"])
    found["passed"] = bool(passed)
    # One write per line, so that the lines of several ranks do not interleave.
    sys.stdout.write(json.dumps(found) + "\n")
    sys.stdout.flush()
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
