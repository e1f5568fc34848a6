"""Train a classifier with autotrace, then export it to run where only NumPy is installed.

    python examples/export_model.py [directory]

A two-layer network (autotrace.layers.Dense) learns to tell two noisy rings of points apart.
`autotrace.export` then writes two modules into the directory (a temporary one by default):
- predict.py, the traced forward pass, with the trained weights in predict.npz;
- train_step.py, the traced training step (gradient and Adam update), which trains its own
  copy of the weights each time it is called.
Both are run in a fresh interpreter started with `python -I -S`, where autotrace cannot be
imported: the exported prediction equals autotrace's, and ten more exported steps lower the
loss as ten traced steps do.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import autotrace as at


def rings(rng, count: int):
    """Points on two noisy rings (radius 1 and 2), labelled 0 and 1."""
    labels = rng.integers(0, 2, count)
    angles = rng.uniform(0, 2 * np.pi, count)
    radii = 1.0 + labels + 0.2 * rng.standard_normal(count)
    points = np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1)
    return points, labels


class Classifier(at.Module):
    def __init__(self):
        super().__init__()
        self.hidden = at.layers.Dense(16, activation=at.nn.relu)
        self.out = at.layers.Dense(2)

    def call(self, points):
        return self.out(self.hidden(points))


def loss(model, points, labels):
    return at.losses.sparse_softmax_cross_entropy(labels, model(points))


# What runs in the fresh interpreter: only NumPy and the exported modules.
RUN_EXPORTED = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import predict, train_step
points = np.load(sys.argv[2])
labels = np.load(sys.argv[3])
losses = [float(train_step.train_step(points, labels)) for _ in range(10)]
print(json.dumps({"logits": predict.predict(points).tolist(), "losses": losses,
                  "autotrace_importable": "autotrace" in sys.modules}))
"""


def main(argv=None):
    directory = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="exported-"))
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    points, labels = rings(rng, 512)

    model = Classifier()
    optimizer = at.optimizers.Adam(learning_rate=0.05)

    @at.function
    def train_step(points, labels):
        value, gradients = at.implicit_value_and_grad(loss)(model, points, labels)
        optimizer.apply_gradients(gradients)
        return value

    @at.function
    def predict(points):
        return model(points)

    for step in range(60):
        value = train_step(points, labels)
    accuracy = np.mean(np.argmax(predict(points), axis=1) == labels)
    print(f"trained 60 steps: loss {float(value):.4f}, accuracy {accuracy:.3f}")

    at.export(predict, at.Spec((None, 2), np.float64), directory / "predict.py")
    at.export(train_step, points, labels, directory / "train_step.py")  # for this batch size
    print(f"exported predict.py and train_step.py to {directory}")

    np.save(directory / "points.npy", points)
    np.save(directory / "labels.npy", labels)
    numpy_folder = str(Path(np.__file__).resolve().parents[1])
    command = [sys.executable, "-I", "-S", "-c",
               f"import sys; sys.path.append({numpy_folder!r})\n" + RUN_EXPORTED,
               str(directory), str(directory / "points.npy"), str(directory / "labels.npy")]
    exported = json.loads(subprocess.run(command, capture_output=True, text=True,
                                         check=True).stdout)
    assert not exported["autotrace_importable"]

    logits, traced_logits = np.array(exported["logits"]), predict(points)
    print(f"exported predict equals autotrace's: {np.array_equal(logits, traced_logits)}")
    traced_losses = [float(train_step(points, labels)) for _ in range(10)]
    print(f"10 more steps, exported: loss {exported['losses'][0]:.4f} -> "
          f"{exported['losses'][-1]:.4f}; traced: {traced_losses[0]:.4f} -> "
          f"{traced_losses[-1]:.4f}")
    return logits, traced_logits, exported["losses"], traced_losses


if __name__ == "__main__":
    main(sys.argv[1:])
