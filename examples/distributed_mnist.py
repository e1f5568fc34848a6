"""Data-parallel training over MPI: the 8x8 digits that scikit-learn ships, on several processes.

    pip install -e '.[distributed,examples]'    # mpi4py and mpich's mpiexec; scikit-learn
    mpiexec -n 2 python examples/distributed_mnist.py
    python examples/distributed_mnist.py         # also runs as one process, without MPI

Every rank builds the same model, takes rank 0's starting values (`broadcast_variables`),
and trains on its shard of each epoch's shuffled data (`Dataset.shard`); the
`DistributedOptimizer` averages the ranks' gradients before each Adam step, so every rank
applies the same update and the model stays the same everywhere. With n ranks and a batch of
`--batch-size` per rank, a step sees n times as many examples. The metrics are counted on
each rank's shard and summed across ranks (`sum_metric_states`). It reaches about 97%.
"""
import argparse

import numpy as np

import autotrace
from autotrace import distributed, layers


class MLP(autotrace.Module):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(64, activation="relu")
        self.logits = layers.Dense(10)

    def call(self, images):
        return self.logits(self.hidden(images))


def load_digits(seed: int = 0):
    """(train images, train labels, test images, test labels): 64 pixels in [0, 1]."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        raise SystemExit("This example reads scikit-learn's digits: "
                         "pip install -e '.[examples]'")
    digits = sklearn_digits()
    images = digits.images.reshape(len(digits.images), -1) / 16.0
    order = np.random.default_rng(seed).permutation(len(images))
    split = len(images) * 4 // 5
    train, test = order[:split], order[split:]
    return images[train], digits.target[train], images[test], digits.target[test]


def loss(model, images, labels):
    return autotrace.losses.sparse_softmax_cross_entropy(labels, model(images))


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32, help="examples per rank")
    arguments = parser.parse_args(argv)

    distributed.init()
    rank, ranks = distributed.rank(), distributed.size()
    train_images, train_labels, test_images, test_labels = load_digits()
    autotrace.random.set_seed(rank)  # different starting values, made equal below
    model = MLP()
    model(train_images[:1])  # builds the layers, so that their Variables exist
    distributed.broadcast_variables(model.variables, root=0)
    optimizer = distributed.DistributedOptimizer(autotrace.optimizers.Adam(1e-2))
    gradients = autotrace.implicit_value_and_grad(loss)
    train_loss = autotrace.metrics.Mean(name="train_loss")
    test_accuracy = autotrace.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    accuracy = float("nan")
    for epoch in range(arguments.epochs):
        # The same seed on every rank: one shuffle of the data, cut into disjoint shards.
        data = (autotrace.data.Dataset.from_tensor_slices((train_images, train_labels))
                .shuffle(len(train_images), seed=epoch).shard(ranks, rank)
                .batch(arguments.batch_size, drop_remainder=True))
        # Every rank must take the same number of steps: the shortest shard's batches.
        steps = len(train_images) // ranks // arguments.batch_size
        train_loss.reset_state()
        test_accuracy.reset_state()
        for images, labels in data.take(steps):
            value, grads_and_vars = gradients(model, images, labels)
            optimizer.apply_gradients(grads_and_vars)
            train_loss(value)
        shard = slice(rank, None, ranks)  # each rank scores its part of the test set
        test_accuracy(test_labels[shard], model(test_images[shard]))
        # The metrics' sums (totals and counts) over the ranks: the results of all the data.
        distributed.sum_metric_states(train_loss, test_accuracy)
        accuracy = float(test_accuracy.result())
        if rank == 0:
            print(f"epoch {epoch + 1}: loss {float(train_loss.result()):.4f}, test accuracy "
                  f"{accuracy:.2%} ({ranks} rank{'s' if ranks > 1 else ''})", flush=True)
    return float(accuracy)


if __name__ == "__main__":
    main()
