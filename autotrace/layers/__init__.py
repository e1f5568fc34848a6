"""Keras-like layers on `autotrace.Module`: Dense, Conv2D, Conv1D, Conv2DTranspose, pooling,
Flatten, Reshape, Dropout, BatchNormalization, LayerNormalization, Embedding, SimpleRNN, LSTM,
GRU, MultiHeadAttention, and the Sequential container.

    import autotrace as at
    from autotrace import layers

    model = layers.Sequential([
        layers.Conv2D(8, 3, activation="relu"), layers.MaxPool2D(), layers.Flatten(),
        layers.Dropout(0.25), layers.Dense(10)])
    def loss(images, labels):
        logits = model(images, training=True)
        return at.losses.sparse_softmax_cross_entropy(labels, logits)
    value, grads_and_vars = at.implicit_value_and_grad(loss)(images, labels)

Each layer makes its Variables on its first call (`build`), named like Keras' (`dense/kernel`,
`conv2d/bias`, `batch_normalization/moving_mean`, ...). Each `call` is ordinary NumPy code, which
the gradient transforms differentiate from its source.

State changed while a gradient is taken: the adjoint code autotrace generates runs a called
module's `call` again to recompute the values its gradient needs. `implicit_grad` holds
assignments to Variables back until the gradient is done, and each recomputation sees the
Variables as they were when its call ran (runtime/state.py). So BatchNormalization moves its
statistics once per call, and Dropout's generator, whose key is a Variable, draws the same
mask in the recomputation as in the forward pass.

The layers live by family: base (Layer and its argument checks), core (Dense, Flatten,
Reshape, Embedding, Sequential), convolutional (Conv2D, Conv1D, Conv2DTranspose, pooling),
normalization (BatchNormalization, LayerNormalization), recurrent (SimpleRNN, LSTM, GRU),
attention (MultiHeadAttention) and regularization (Dropout). Each layer makes its weights in
the floating dtype of its first inputs (float64 for integer inputs), so that a float32 model
computes in float32, unless it has a dtype policy (its `dtype` argument, or the global one of
`autotrace.mixed_precision` or `autotrace.config.set_floatx`): then in the policy's variable
dtype, casting its floating inputs to the compute dtype ("mixed_float16": float16
computations, float32 weights).
"""
from autotrace.layers.attention import MultiHeadAttention
from autotrace.layers.base import Layer
from autotrace.layers.convolutional import (
    AveragePool2D, AveragePooling2D, Conv1D, Conv2D, Conv2DTranspose, GlobalAveragePooling2D,
    MaxPool2D, MaxPooling2D,
)
from autotrace.layers.core import Dense, Embedding, Flatten, Reshape, Sequential
from autotrace.layers.normalization import BatchNormalization, LayerNormalization
from autotrace.layers.recurrent import GRU, LSTM, SimpleRNN
from autotrace.layers.regularization import Dropout

__all__ = ["Layer", "Dense", "Conv2D", "Conv1D", "Conv2DTranspose", "MaxPool2D",
           "MaxPooling2D", "AveragePool2D", "AveragePooling2D", "GlobalAveragePooling2D",
           "Flatten", "Reshape", "Dropout", "BatchNormalization", "LayerNormalization",
           "Embedding", "SimpleRNN", "LSTM", "GRU", "MultiHeadAttention", "Sequential"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports
