"""Train from CSV files through an input pipeline (tf.data's graph-mode readers).

    python examples/csv_pipeline.py [directory]

Writes four CSV shards of points on the plane y = 3 * x1 - 2 * x2 + 1 (with noise, and some x2
values left empty: their default is 0) into `directory` (a temporary one by default), then
reads them back the way a tf.data pipeline does: the file names interleaved two at a time
(the two open files read on two threads), each row parsed by CSVDataset, mapped on threads,
shuffled, batched and prefetched on a background thread. A traced
step fits W and B by SGD; it ends near W = [3, -2], B = 1.
"""
import sys
import tempfile
from pathlib import Path

import numpy as np

import autotrace
from autotrace import data


def write_shards(directory: Path, shards: int = 4, rows: int = 250) -> list[str]:
    rng = np.random.default_rng(0)
    names = []
    for shard in range(shards):
        inputs = rng.standard_normal((rows, 2))
        inputs[rng.random(rows) < 0.1, 1] = 0.0     # written as an empty field below
        targets = inputs @ [3.0, -2.0] + 1.0 + 0.1 * rng.standard_normal(rows)
        lines = ["x1,x2,y"] + [f"{x1:.6f},{'' if x2 == 0 else f'{x2:.6f}'},{y:.6f}"
                               for (x1, x2), y in zip(inputs, targets)]
        path = directory / f"points-{shard}.csv"
        path.write_text("\n".join(lines) + "\n")
        names.append(str(path))
    return names


def pipeline(names: list[str]) -> data.Dataset:
    def read(name):
        # x1 and y are required (a type); an empty x2 reads as its default, 0.
        return data.CSVDataset(name, [np.float64, 0.0, np.float64], header=True)

    return (data.Dataset.from_tensor_slices(names)
            .interleave(read, cycle_length=2, num_parallel_calls=2)
            .map(lambda x1, x2, y: (np.array([x1, x2]), y), num_parallel_calls=4)
            .shuffle(500, seed=0)
            .batch(50)
            .prefetch(data.AUTOTUNE))


def main(argv: list[str] | None = None) -> tuple[np.ndarray, float]:
    argv = sys.argv[1:] if argv is None else argv
    with tempfile.TemporaryDirectory() as scratch:
        names = write_shards(Path(argv[0] if argv else scratch))
        dataset = pipeline(names)
        W = autotrace.Variable(np.zeros(2), name="W")
        B = autotrace.Variable(0.0, name="B")
        optimizer = autotrace.optimizers.SGD(learning_rate=0.1)

        def loss(inputs, targets):
            return np.mean(np.square(inputs @ W + B - targets))
        gradients = autotrace.implicit_grad(loss)

        @autotrace.function
        def train_step(inputs, targets):
            optimizer.apply_gradients(gradients(inputs, targets))
            return loss(inputs, targets)

        for epoch in range(5):
            losses = [float(train_step(inputs, targets)) for inputs, targets in dataset]
            print(f"epoch {epoch}: {len(losses)} batches, mean loss {np.mean(losses):.4f}")
    print(f"W = {np.round(W.numpy(), 3)}, B = {float(B):.3f}")
    return W.numpy(), float(B)


if __name__ == "__main__":
    main()
