"""Differentially private SGD on the 8x8 digits that scikit-learn ships: per-example gradients.

    pip install -e '.[examples]'      # scikit-learn (the data, no download)
    python examples/per_example_gradients.py

DP-SGD (Abadi et al., 2016) bounds how much any one training example can move the model: each
example's gradient is clipped to an L2 norm of at most C, the clipped gradients are summed,
Gaussian noise of standard deviation sigma * C is added to the sum, and the step takes its
average. That needs one gradient per example, which
`autotrace.vmap(autotrace.grad(loss), in_axes=(None, 0, 0))` computes for a whole batch at
once: `loss` is written for one example, vmap maps it over the images and labels and shares the
parameters (None). The clipping, the sum and the noise are traced with it by autotrace.function
into one graph, traced once. Before training, the per-example gradients are checked against a
Python loop of autotrace.grad over the examples. A one-hidden-layer MLP (64-32-10, tanh) reaches
about 94% test accuracy in a few seconds.
"""
import argparse
import sys

import numpy as np

import autotrace


def load_digits(seed: int = 0):
    """(train images, train labels, test images, test labels): flat 64-pixel images in [0, 1]."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        sys.exit("This example reads scikit-learn's digits: pip install -e '.[examples]'")
    digits = sklearn_digits()
    images = digits.images.reshape(len(digits.images), -1) / 16.0
    order = np.random.default_rng(seed).permutation(len(images))
    split = len(images) * 4 // 5
    train, test = order[:split], order[split:]
    return images[train], digits.target[train], images[test], digits.target[test]


def initial_parameters(rng, sizes=(64, 32, 10)):
    """(w1, b1, w2, b2), the weights scaled by 1 / sqrt(fan-in)."""
    parameters = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        parameters += [rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in),
                       np.zeros(fan_out)]
    return tuple(parameters)


def logits(parameters, images):
    """The MLP's scores: of one image (64,) or of a batch of them (n, 64)."""
    w1, b1, w2, b2 = parameters
    return np.tanh(images @ w1 + b1) @ w2 + b2


def loss(parameters, image, label):
    """The softmax cross-entropy of one example: one image (64,) and its label (an int)."""
    scores = logits(parameters, image)
    shifted = scores - np.max(scores)
    return np.log(np.sum(np.exp(shifted))) - shifted[label]


per_example_gradients = autotrace.vmap(autotrace.grad(loss), in_axes=(None, 0, 0))


def private_gradient(parameters, images, labels, noise, clip, sigma):
    """DP-SGD's gradient: each example's gradient clipped to norm `clip`, summed, plus
    `sigma * clip` times `noise` (standard normal draws, one per parameter), averaged."""
    gradients = per_example_gradients(parameters, images, labels)
    squared_norms = sum(np.sum(np.reshape(g, (len(images), -1)) ** 2, axis=1)
                        for g in gradients)
    scale = np.minimum(1.0, clip / np.maximum(np.sqrt(squared_norms), 1e-12))
    return tuple((np.tensordot(scale, g, axes=1) + sigma * clip * draw) / len(images)
                 for g, draw in zip(gradients, noise))


def check_against_a_loop(parameters, images, labels) -> float:
    """The largest difference between the vmapped per-example gradients and a Python loop of
    autotrace.grad over the examples (asserted to be at rounding level)."""
    batched = per_example_gradients(parameters, images, labels)
    one_at_a_time = autotrace.grad(loss)
    looped = [one_at_a_time(parameters, image, label) for image, label in zip(images, labels)]
    difference = 0.0
    for index, gradient in enumerate(batched):
        expected = np.stack([example[index] for example in looped])
        assert gradient.shape == expected.shape, (gradient.shape, expected.shape)
        np.testing.assert_allclose(gradient, expected, rtol=1e-10, atol=1e-12)
        difference = max(difference, float(np.max(np.abs(gradient - expected))))
    return difference


def accuracy(parameters, images, labels) -> float:
    return float(np.mean(np.argmax(logits(parameters, images), axis=1) == labels))


def mean_loss(parameters, images, labels) -> float:
    scores = logits(parameters, images)
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    log_sums = np.log(np.sum(np.exp(shifted), axis=1))
    return float(np.mean(log_sums - shifted[np.arange(len(labels)), labels]))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=0.5)
    parser.add_argument("--clip", type=float, default=1.0, help="C: each gradient's largest norm")
    parser.add_argument("--sigma", type=float, default=1.0,
                        help="the noise multiplier: the noise's deviation is sigma * C")
    arguments = parser.parse_args(argv)

    train_images, train_labels, test_images, test_labels = load_digits()
    rng = np.random.default_rng(0)
    parameters = initial_parameters(rng)

    difference = check_against_a_loop(parameters, train_images[:16], train_labels[:16])
    print(f"Per-example gradients of 16 examples agree with a loop of autotrace.grad "
          f"(largest difference {difference:.1e})")

    step = autotrace.function(private_gradient)
    batches = len(train_images) // arguments.batch_size
    for epoch in range(1, arguments.epochs + 1):
        data = (autotrace.data.Dataset.from_tensor_slices((train_images, train_labels))
                .shuffle(len(train_images), seed=epoch)
                .batch(arguments.batch_size, drop_remainder=True))
        for images, labels in data:
            noise = tuple(rng.standard_normal(np.shape(p)) for p in parameters)
            gradient = step(parameters, images, labels, noise, arguments.clip, arguments.sigma)
            parameters = tuple(p - arguments.learning_rate * g
                               for p, g in zip(parameters, gradient))
        if epoch % 3 == 0 or epoch == arguments.epochs:
            print(f"epoch {epoch:2d}: training loss "
                  f"{mean_loss(parameters, train_images, train_labels):.3f}, accuracy "
                  f"{accuracy(parameters, train_images, train_labels):.2%} "
                  f"({batches} private steps an epoch)")
    test = accuracy(parameters, test_images, test_labels)
    print(f"Test accuracy {test:.2%}; the private step was traced {step.trace_count} time(s)")
    return {"test_accuracy": test, "difference": difference, "trace_count": step.trace_count}


if __name__ == "__main__":
    main()
