"""The eager guide's MNIST model, trained on the 8x8 digits that scikit-learn ships.

    pip install -e '.[examples]'      # scikit-learn (the data, no download) and tqdm
    python examples/mnist_cnn.py --logdir /tmp/digits

Two Conv2D + MaxPool2D blocks, Dense(1024) with Dropout, Dense(10); Adam on the softmax cross
entropy, one traced training step (`autotrace.function`, traced once), metrics each epoch,
TensorBoard summaries and the model's graph (the Graphs tab) in --logdir, and a checkpoint
there after every epoch. Run it again with the same --logdir and it resumes from the latest
checkpoint (one that has all --epochs already is evaluated, not trained). It reaches about 98%
test accuracy.
"""
import argparse
import sys
import time

import numpy as np

import autotrace
from autotrace import layers


class ConvNet(autotrace.Module):
    def __init__(self, width: float = 1.0):
        """width: a multiple of the guide's numbers of filters and units (32, 64, 1024)."""
        super().__init__()
        self.conv1 = layers.Conv2D(round(32 * width), 5, padding="same", activation="relu")
        self.pool1 = layers.MaxPool2D(2, padding="same")
        self.conv2 = layers.Conv2D(round(64 * width), 5, padding="same", activation="relu")
        self.pool2 = layers.MaxPool2D(2, padding="same")
        self.flatten = layers.Flatten()
        self.dense = layers.Dense(round(1024 * width), activation="relu")
        self.dropout = layers.Dropout(0.4, seed=0)
        self.logits = layers.Dense(10)

    def call(self, images, training=False):
        x = self.pool1(self.conv1(images))
        x = self.flatten(self.pool2(self.conv2(x)))
        return self.logits(self.dropout(self.dense(x), training=training))


def load_digits(seed: int = 0):
    """(train images, train labels, test images, test labels): 8x8x1 images in [0, 1]."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        sys.exit("This example reads scikit-learn's digits: pip install -e '.[examples]'")
    digits = sklearn_digits()
    images = (digits.images / 16.0)[..., None]
    order = np.random.default_rng(seed).permutation(len(images))
    split = len(images) * 4 // 5
    train, test = order[:split], order[split:]
    return images[train], digits.target[train], images[test], digits.target[test]


def progress(iterable, total: int, description: str):
    """A tqdm progress bar when the output is a terminal and tqdm is installed."""
    if sys.stdout.isatty():
        try:
            from tqdm import tqdm
            return tqdm(iterable, total=total, desc=description, leave=False)
        except ImportError:
            pass
    return iterable


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logdir", default="/tmp/autotrace_digits")
    parser.add_argument("--epochs", type=int, default=8, help="train until this many epochs")
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--width", type=float, default=1.0,
                        help="a multiple of the layers' widths (0.25: a quarter as wide, faster)")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    arguments = parser.parse_args(argv)

    train_images, train_labels, test_images, test_labels = load_digits()
    autotrace.random.set_seed(0)
    model = ConvNet(arguments.width)
    optimizer = autotrace.optimizers.Adam(learning_rate=arguments.learning_rate)
    epoch = autotrace.Variable(0, name="epoch", trainable=False)
    checkpoint = autotrace.Checkpoint(model=model, optimizer=optimizer, epoch=epoch)
    latest = autotrace.latest_checkpoint(arguments.logdir)
    if latest is not None:
        checkpoint.restore(latest)  # the model's values wait until its first call builds it
        print(f"Resumed from {latest} after epoch {int(epoch)}")

    def loss(model, images, labels):
        logits = model(images, training=True)
        return autotrace.losses.sparse_softmax_cross_entropy(labels, logits)

    gradients = autotrace.implicit_value_and_grad(loss)
    train_loss = autotrace.metrics.Mean(name="train_loss")
    test_accuracy = autotrace.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    @autotrace.function
    def train_step(images, labels):
        value, grads_and_vars = gradients(model, images, labels)
        optimizer.apply_gradients(grads_and_vars)
        train_loss(value)

    @autotrace.function
    def evaluate(images, labels):
        test_accuracy(labels, model(images, training=False))

    writer = autotrace.summary.create_file_writer(arguments.logdir)
    # The model's graph for TensorBoard's Graphs tab, each layer a box of its own
    # (`tensorboard --logdir ...`, then Graphs).
    writer.graph(model, autotrace.Spec((arguments.batch_size, *train_images.shape[1:])))
    batches = len(train_images) // arguments.batch_size
    if int(epoch) >= arguments.epochs:
        print(f"Already trained for {int(epoch)} epochs, --epochs {arguments.epochs}: nothing "
              f"to train (give a larger --epochs to train more); evaluating the checkpoint")
        test_accuracy.reset()
        evaluate(test_images, test_labels)
        accuracy = float(test_accuracy.result())
    while int(epoch) < arguments.epochs:
        started = time.perf_counter()
        data = (autotrace.data.Dataset.from_tensor_slices((train_images, train_labels))
                .shuffle(len(train_images), seed=int(epoch))
                .batch(arguments.batch_size, drop_remainder=True))
        train_loss.reset()
        for images, labels in progress(data, batches, f"epoch {int(epoch) + 1}"):
            train_step(images, labels)
        test_accuracy.reset()
        evaluate(test_images, test_labels)
        epoch.assign_add(1)
        accuracy = float(test_accuracy.result())
        writer.scalar("train/loss", train_loss.result(), step=int(epoch))
        writer.scalar("test/accuracy", accuracy, step=int(epoch))
        writer.flush()
        path = checkpoint.save(f"{arguments.logdir}/ckpt")
        print(f"epoch {int(epoch)}: loss {float(train_loss.result()):.4f}, test accuracy "
              f"{accuracy:.2%} ({time.perf_counter() - started:.1f} s), saved {path}")
    print(f"train_step traced {train_step.trace_count} time(s); test accuracy {accuracy:.2%}")
    return accuracy


if __name__ == "__main__":
    main()
