"""The four workloads of benchmarks/models.py: each loss written once over the array module
(`make_loss(np)`: NumPy for autotrace, jax.numpy for JAX, autograd.numpy for autograd), the same
loss in torch code, and its inputs (float64; the benchmark casts them to each dtype)."""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType, SimpleNamespace
from typing import Callable

import numpy

import autotrace

SQRT_TWO_OVER_PI = 0.7978845608028654


# -- the pieces, each written once over the array module ------------------------------------------

def building_blocks(np: ModuleType) -> SimpleNamespace:
    """GELU (tanh form), ReLU, layer norm, softmax and softmax cross-entropy in `np`'s functions.

    The maximum subtracted before exp is differentiated through (its gradient adds up to zero):
    autotrace.nn.softmax stops its gradient, but stop_gradient is no NumPy function, so code
    shared by every array module cannot."""
    def gelu(x):
        return 0.5 * x * (1.0 + np.tanh(SQRT_TWO_OVER_PI * (x + 0.044715 * x ** 3)))

    def relu(x):
        return np.where(x > 0, x, 0.0)  # as autotrace.nn.relu: derivative 0 at 0

    def layer_norm(x, gain, bias):
        centered = x - np.mean(x, axis=-1, keepdims=True)
        variance = np.mean(centered * centered, axis=-1, keepdims=True)
        return centered / np.sqrt(variance + 1e-5) * gain + bias

    def softmax(x):
        exponentials = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return exponentials / np.sum(exponentials, axis=-1, keepdims=True)

    def cross_entropy(logits, one_hot):
        shifted = logits - np.max(logits, axis=-1, keepdims=True)
        log_probabilities = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
        return -np.mean(np.sum(one_hot * log_probabilities, axis=-1))

    return SimpleNamespace(gelu=gelu, relu=relu, layer_norm=layer_norm, softmax=softmax,
                           cross_entropy=cross_entropy)


def image_operations(np: ModuleType) -> SimpleNamespace:
    """conv2d ("same", NHWC images, HWIO kernel) and 2x2 max pooling for `np`: autotrace.nn's
    (what autotrace.layers.Conv2D and MaxPool2D call) for NumPy, jax.lax's for jax.numpy."""
    if np.__name__.startswith("jax"):
        from jax import lax

        def conv2d(x, kernel):
            return lax.conv_general_dilated(x, kernel, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

        def max_pool(x):
            return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")

        return SimpleNamespace(conv2d=conv2d, max_pool=max_pool)
    if np is not numpy:
        raise NotImplementedError(f"{np.__name__} has no 2-d convolution")

    def conv2d(x, kernel):
        return autotrace.nn.conv2d(x, kernel, padding="same")

    def max_pool(x):
        return autotrace.nn.max_pool2d(x, 2, padding="same")

    return SimpleNamespace(conv2d=conv2d, max_pool=max_pool)


# -- (a) a pre-norm transformer block -------------------------------------------------------------

HEADS = 4


def make_transformer_loss(np: ModuleType) -> Callable:
    nn = building_blocks(np)

    def split_heads(t):  # (batch, tokens, features) -> (batch, heads, tokens, features / heads)
        batch, tokens, features = t.shape
        return np.transpose(np.reshape(t, (batch, tokens, HEADS, features // HEADS)),
                            (0, 2, 1, 3))

    def transformer_loss(Wq, Wk, Wv, Wo, gain1, bias1, gain2, bias2, W1, b1, W2, b2, x):
        batch, tokens, features = x.shape
        h = nn.layer_norm(x, gain1, bias1)
        q, k, v = split_heads(h @ Wq), split_heads(h @ Wk), split_heads(h @ Wv)
        scores = q @ np.swapaxes(k, -1, -2) * (features // HEADS) ** -0.5
        context = np.transpose(nn.softmax(scores) @ v, (0, 2, 1, 3))
        x = x + np.reshape(context, (batch, tokens, features)) @ Wo
        h = nn.layer_norm(x, gain2, bias2)
        x = x + nn.gelu(h @ W1 + b1) @ W2 + b2
        return np.mean(x * x)
    return transformer_loss


def torch_transformer_loss(Wq, Wk, Wv, Wo, gain1, bias1, gain2, bias2, W1, b1, W2, b2, x):
    import torch
    import torch.nn.functional as F
    batch, tokens, features = x.shape

    def split_heads(t):
        return t.reshape(batch, tokens, HEADS, features // HEADS).transpose(1, 2)

    h = F.layer_norm(x, (features,), gain1, bias1, eps=1e-5)
    q, k, v = split_heads(h @ Wq), split_heads(h @ Wk), split_heads(h @ Wv)
    weights = torch.softmax(q @ k.transpose(-1, -2) * (features // HEADS) ** -0.5, dim=-1)
    x = x + (weights @ v).transpose(1, 2).reshape(batch, tokens, features) @ Wo
    h = F.layer_norm(x, (features,), gain2, bias2, eps=1e-5)
    x = x + F.gelu(h @ W1 + b1, approximate="tanh") @ W2 + b2
    return (x * x).mean()


def transformer_inputs(rng) -> tuple:
    features, hidden = 64, 256
    projections = [rng.standard_normal((features, features)) / features ** 0.5
                   for _ in range(4)]
    norms = [1.0 + 0.1 * rng.standard_normal(features), 0.1 * rng.standard_normal(features),
             1.0 + 0.1 * rng.standard_normal(features), 0.1 * rng.standard_normal(features)]
    mlp = [rng.standard_normal((features, hidden)) / features ** 0.5,
           0.1 * rng.standard_normal(hidden),
           rng.standard_normal((hidden, features)) / hidden ** 0.5,
           0.1 * rng.standard_normal(features)]
    return (*projections, *norms, *mlp, rng.standard_normal((8, 64, features)))


# -- (b) an MLP 784-512-256-10 --------------------------------------------------------------------

def make_mlp_loss(np: ModuleType) -> Callable:
    nn = building_blocks(np)

    def mlp_loss(W1, b1, W2, b2, W3, b3, X, Y):
        hidden = nn.relu(nn.gelu(X @ W1 + b1) @ W2 + b2)
        return nn.cross_entropy(hidden @ W3 + b3, Y)
    return mlp_loss


def torch_mlp_loss(W1, b1, W2, b2, W3, b3, X, Y):
    import torch
    import torch.nn.functional as F
    hidden = torch.relu(F.gelu(X @ W1 + b1, approximate="tanh") @ W2 + b2)
    return -(Y * torch.log_softmax(hidden @ W3 + b3, dim=-1)).sum(dim=-1).mean()


def mlp_inputs(batch: int) -> Callable:
    def inputs(rng) -> tuple:
        sizes = (784, 512, 256, 10)
        parameters = []
        for fan_in, fan_out in zip(sizes, sizes[1:]):
            parameters += [rng.standard_normal((fan_in, fan_out)) * (2.0 / fan_in) ** 0.5,
                           0.1 * rng.standard_normal(fan_out)]
        X = rng.standard_normal((batch, 784))
        Y = numpy.eye(10)[rng.integers(0, 10, size=batch)]
        return (*parameters, X, Y)
    return inputs


# -- (c) examples/mnist_cnn.py's ConvNet ----------------------------------------------------------

def make_convnet_loss(np: ModuleType) -> Callable:
    nn, image_ops = building_blocks(np), image_operations(np)

    def convnet_loss(kernel1, bias1, kernel2, bias2, W3, b3, W4, b4, images, Y):
        x = image_ops.max_pool(nn.relu(image_ops.conv2d(images, kernel1) + bias1))
        x = image_ops.max_pool(nn.relu(image_ops.conv2d(x, kernel2) + bias2))
        x = nn.relu(np.reshape(x, (x.shape[0], -1)) @ W3 + b3)
        return nn.cross_entropy(x @ W4 + b4, Y)
    return convnet_loss


def torch_convnet_loss(kernel1, bias1, kernel2, bias2, W3, b3, W4, b4, images, Y):
    import torch
    import torch.nn.functional as F

    def conv_relu_pool(x, kernel, bias):  # NCHW images, HWIO kernels as views in torch's order
        x = F.conv2d(x, kernel.permute(3, 2, 0, 1), bias, padding="same")
        return F.max_pool2d(torch.relu(x), 2)

    x = conv_relu_pool(images.permute(0, 3, 1, 2), kernel1, bias1)  # channels_last memory
    x = conv_relu_pool(x, kernel2, bias2)
    x = torch.relu(x.permute(0, 2, 3, 1).reshape(x.shape[0], -1) @ W3 + b3)  # NHWC's order
    return -(Y * torch.log_softmax(x @ W4 + b4, dim=-1)).sum(dim=-1).mean()


def convnet_inputs(rng) -> tuple:
    shapes = [((5, 5, 1, 32), 25), ((5, 5, 32, 64), 800), ((256, 1024), 256), ((1024, 10), 1024)]
    parameters = []
    for shape, fan_in in shapes:
        parameters += [rng.standard_normal(shape) * (2.0 / fan_in) ** 0.5,
                       0.1 * rng.standard_normal(shape[-1])]
    images = rng.random((50, 8, 8, 1))
    Y = numpy.eye(10)[rng.integers(0, 10, size=50)]
    return (*parameters, images, Y)


# -- the workloads --------------------------------------------------------------------------------

@dataclass
class Workload:
    name: str
    description: str
    make_loss: Callable[[ModuleType], Callable]
    torch_loss: Callable
    make_inputs: Callable  # rng -> float64 arrays, the parameters first
    parameters: int  # how many of the first arguments the gradient is taken in


WORKLOADS = [
    Workload("transformer", "pre-norm transformer block, batch 8 x 64 tokens x 64 features, "
             "4 heads, MLP 256", make_transformer_loss, torch_transformer_loss,
             transformer_inputs, 12),
    Workload("mlp1", "MLP 784-512-256-10 (GELU, ReLU), cross-entropy, batch 1", make_mlp_loss,
             torch_mlp_loss, mlp_inputs(1), 6),
    Workload("mlp256", "the same MLP, batch 256", make_mlp_loss, torch_mlp_loss,
             mlp_inputs(256), 6),
    Workload("convnet", "examples/mnist_cnn.py's ConvNet without dropout, batch 50 of 8x8x1",
             make_convnet_loss, torch_convnet_loss, convnet_inputs, 8),
]
