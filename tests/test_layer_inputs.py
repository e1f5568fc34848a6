"""What a built layer takes: inputs of another feature size or rank are refused with Keras's
message naming the layer and the size it was built for (eagerly, traced, and under the
gradient transforms), and a nested list of numbers is taken as the array NumPy makes of it."""
import numpy as np
import pytest

import autotrace as at
from autotrace import layers
from tests.numeric import check_every_mode
from tests.variable_helpers import check_variable_gradients


def incompatible(name, axis, size, shape):
    return (f'Input 0 of layer "{name}" is incompatible with the layer: expected axis {axis} '
            f"of input shape to have value {size}, but received input with shape {shape}")


# (a layer, the inputs it is built on, inputs it refuses, the message)
REFUSED = {
    "dense": (lambda: layers.Dense(4, name="dense"), (2, 3), (2, 5),
              incompatible("dense", -1, 3, (2, 5))),
    "layer_normalization": (lambda: layers.LayerNormalization(name="norm"), (2, 3), (2, 5),
                            incompatible("norm", -1, 3, (2, 5))),
    "layer_normalization_rank": (
        lambda: layers.LayerNormalization(center=False, scale=False, name="norm"), (2, 3),
        (2, 6, 3), 'Input 0 of layer "norm" is incompatible with the layer: expected ndim=2, '
                   'found ndim=3. Full shape received: (2, 6, 3)'),
    "batch_normalization": (lambda: layers.BatchNormalization(axis=1, name="bn"), (2, 3, 4),
                            (2, 5, 4), incompatible("bn", 1, 3, (2, 5, 4))),
    "lstm": (lambda: layers.LSTM(4, name="lstm"), (2, 6, 3), (2, 6, 5),
             incompatible("lstm", -1, 3, (2, 6, 5))),
    "gru": (lambda: layers.GRU(4, name="gru"), (2, 6, 3), (2, 6, 5),
            incompatible("gru", -1, 3, (2, 6, 5))),
    "conv1d": (lambda: layers.Conv1D(2, 3, name="conv"), (2, 8, 3), (2, 8, 5),
               incompatible("conv", -1, 3, (2, 8, 5))),
    "conv2d_transpose": (
        lambda: layers.Conv2DTranspose(2, 3, data_format="channels_first", name="up"),
        (1, 3, 4, 4), (1, 5, 4, 4), incompatible("up", 1, 3, (1, 5, 4, 4))),
    "sequential_images_of_another_size": (
        lambda: layers.Sequential([layers.Conv2D(2, 3), layers.Flatten(),
                                   layers.Dense(3, name="head")]),
        (2, 8, 8, 1), (2, 10, 10, 1), incompatible("head", -1, 72, (2, 128))),
}


@pytest.mark.parametrize("mode", ["eager", "traced", "grad"])
@pytest.mark.parametrize("kind", REFUSED)
def test_inputs_of_another_size_than_the_layer_was_built_for(kind, mode):
    make, built_on, refused, message = REFUSED[kind]
    layer = make()
    layer(np.ones(built_on))
    call = {"eager": layer, "traced": at.function(lambda x: layer(x)),
            "grad": at.grad(lambda x: np.sum(layer(x)))}[mode]
    with pytest.raises(ValueError) as raised:
        call(np.ones(refused))
    assert str(raised.value).splitlines()[0] == message  # (traced: the user's line follows)


def test_an_unknown_batch_size_is_not_a_mismatch_but_the_features_are():
    dense = layers.Dense(2, name="dense")
    dense(np.ones((1, 3)))
    fits = at.function(lambda x: dense(x), input_signature=[at.Spec((None, 3), np.float64)])
    np.testing.assert_allclose(fits(np.ones((4, 3))),
                               np.ones((4, 3)) @ dense.kernel.numpy() + dense.bias.numpy())
    refused = at.function(lambda x: dense(x), input_signature=[at.Spec((None, 5), np.float64)])
    with pytest.raises(ValueError) as raised:
        refused(np.ones((4, 5)))
    assert str(raised.value).splitlines()[0] == incompatible("dense", -1, 3, (None, 5))


def test_multi_head_attention_checks_value_and_key_too():
    attention = layers.MultiHeadAttention(2, 4, name="mha")
    attention(np.ones((2, 4, 3)), np.ones((2, 5, 6)))
    with pytest.raises(ValueError) as raised:
        attention(np.ones((2, 4, 3)), np.ones((2, 5, 3)))
    assert str(raised.value) == incompatible("mha", -1, 6, (2, 5, 3)).replace("Input 0",
                                                                              "Input 1")
    with pytest.raises(ValueError) as raised:
        attention(np.ones((2, 4, 3)), np.ones((2, 5, 6)), key=np.ones((2, 5, 3)))
    assert str(raised.value) == incompatible("mha", -1, 6, (2, 5, 3)).replace("Input 0",
                                                                              "Input 2")


def test_a_nested_list_of_numbers_is_taken_as_its_array():
    dense = layers.Dense(2)
    rows = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]
    outputs = dense(rows)
    x = np.array(rows)
    kernel, bias = dense.kernel.numpy(), dense.bias.numpy()
    np.testing.assert_allclose(outputs, x @ kernel + bias, rtol=1e-15)
    assert layers.Sequential([layers.Dense(3)])([[1.0, 2.0]]).shape == (1, 3)
    assert layers.Embedding(5, 2)([[1, 4]]).shape == (1, 2, 2)

    def loss():  # the kernel's gradient through the list: x.T @ 2 (x @ kernel + bias)
        return np.sum(dense(rows) ** 2)
    for gradients in (at.implicit_grad(loss), at.function(at.implicit_grad(loss))):
        (kernel_gradient, _), (bias_gradient, _) = gradients()
        np.testing.assert_allclose(kernel_gradient, x.T @ (2 * (x @ kernel + bias)),
                                   rtol=1e-12)
        np.testing.assert_allclose(bias_gradient, np.sum(2 * (x @ kernel + bias), axis=0),
                                   rtol=1e-12)
    check_variable_gradients(loss)
    # the gradient of what the list is made of, in every mode
    check_every_mode(lambda x: np.sum(np.tanh(dense([[1.0, 2.0, 3.0], x]))), np.array(rows[1]))


def test_a_list_that_is_not_one_array_of_numbers_is_refused_by_name():
    dense = layers.Dense(2, name="dense")
    with pytest.raises(TypeError) as raised:
        dense([[1.0, 2.0], [3.0]])
    assert str(raised.value) == (
        "Dense 'dense': argument `inputs` must be an array or a nested list of numbers that "
        "NumPy makes one array of; got a list of rows of different lengths")
    with pytest.raises(TypeError) as raised:
        dense([["a", "b"]])
    assert str(raised.value) == (
        "Dense 'dense': argument `inputs` must be an array or a nested list of numbers; got a "
        "list NumPy reads as dtype <U1")
    assert not dense.built
