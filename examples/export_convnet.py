"""A ConvNet's training step and predictions exported as modules that need NumPy alone.

    python examples/export_convnet.py --folder /tmp/exported

Builds a small model of the MNIST example's kind (Conv2D + MaxPool2D, Dense) on 8x8 images,
exports `train_step` (loss, gradients through conv2d and max pooling, an Adam update) and
`predict` with `autotrace.export`, then runs both modules in a fresh interpreter that sees
NumPy and nothing else (`python -I -S`, autotrace not importable), and checks that they give
what the traced functions give, to the last bit: the exported step trains its own copy of the
weights, as the traced one trains the model's Variables.
"""
import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import autotrace
from autotrace import layers


class ConvNet(autotrace.Module):
    def __init__(self):
        super().__init__()
        self.conv = layers.Conv2D(8, 3, padding="same", activation="relu")
        self.pool = layers.MaxPool2D(2)
        self.flatten = layers.Flatten()
        self.logits = layers.Dense(10)

    def call(self, images):
        return self.logits(self.flatten(self.pool(self.conv(images))))


# Run in the fresh interpreter: the exported modules on the saved batch, results saved back.
RUN_EXPORTED = """
import sys
# the standard library, the modules' folder and NumPy's: no site-packages, so no autotrace
sys.path[:] = [path for path in sys.path if "site-packages" not in path] + [{folder!r}, {numpy!r}]
try:
    import autotrace
    sys.exit("autotrace is importable here")
except ModuleNotFoundError:
    pass
import numpy as np
import predict, train_step

with np.load({batch!r}) as batch:
    images, labels = batch["images"], batch["labels"]
losses = [train_step.train_step(images, labels) for step in range({steps})]
np.savez({results!r}, losses=np.array(losses), logits=predict.predict(images))
"""


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="/tmp/autotrace_exported")
    parser.add_argument("--steps", type=int, default=5)
    arguments = parser.parse_args(argv)
    folder = Path(arguments.folder)
    folder.mkdir(parents=True, exist_ok=True)

    backend = autotrace.config.cpu_backend()
    autotrace.config.cpu_backend("numpy")  # the backend exported modules are: equal bits
    try:
        return train_and_export(folder, arguments.steps)
    finally:
        autotrace.config.cpu_backend(backend)


def train_and_export(folder: Path, steps: int) -> float:
    autotrace.random.set_seed(0)
    rng = np.random.default_rng(0)
    images, labels = rng.uniform(size=(16, 8, 8, 1)), rng.integers(0, 10, size=16)
    model = ConvNet()
    optimizer = autotrace.optimizers.Adam(learning_rate=1e-2)

    def loss(images, labels):
        return autotrace.losses.sparse_softmax_cross_entropy(labels, model(images))

    @autotrace.function
    def train_step(images, labels):
        value, grads_and_vars = autotrace.implicit_value_and_grad(loss)(images, labels)
        optimizer.apply_gradients(grads_and_vars)
        return value

    @autotrace.function
    def predict(images):
        return model(images)

    model(images)  # builds the layers
    autotrace.export(train_step, images, labels, folder / "train_step.py")
    print(f"wrote {folder / 'train_step.py'} and {folder / 'train_step.npz'}")

    traced_losses = [train_step(images, labels) for step in range(steps)]
    # The predictions after training: exported now, the module holds the trained weights.
    autotrace.export(predict, images, folder / "predict.py")
    np.savez(folder / "batch.npz", images=images, labels=labels)
    script = folder / "run_exported.py"
    script.write_text(textwrap.dedent(RUN_EXPORTED).format(
        folder=str(folder), numpy=str(Path(np.__file__).resolve().parents[1]),
        batch=str(folder / "batch.npz"), steps=steps,
        results=str(folder / "results.npz")))
    subprocess.run([sys.executable, "-I", "-S", str(script)], check=True)
    with np.load(folder / "results.npz") as results:
        same_losses = np.array_equal(results["losses"], traced_losses)
        same_logits = np.array_equal(results["logits"], predict(images))
    print(f"losses over {steps} steps: {np.round(traced_losses, 4).tolist()}")
    print(f"without autotrace: same losses {same_losses}, same predictions {same_logits}")
    if not (same_losses and same_logits):
        sys.exit("the exported modules disagree with the traced functions")
    return float(traced_losses[-1])


if __name__ == "__main__":
    main()
