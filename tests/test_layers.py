"""autotrace.layers: outputs against NumPy references, gradients (inputs by check_grads,
Variables by implicit_grad against finite differences), traced training steps, the state
BatchNormalization and Dropout keep, and error messages."""
import doctest
import re

import numpy as np
import pytest

import autotrace as at
from autotrace import layers
from autotrace.testing import check_grads
from tests.variable_helpers import check_variable_gradients


def random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def conv_reference(x, kernel, stride=1):
    """Valid cross-correlation, channels_last, by loops over output positions."""
    kh, kw = kernel.shape[:2]
    rows = (x.shape[1] - kh) // stride + 1
    cols = (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], rows, cols, kernel.shape[3]))
    for i in range(rows):
        for j in range(cols):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.einsum("nabc,abco->no", patch, kernel)
    return out


# --- the reference example -----------------------------------------------------------------------

class TwoLayerNet(at.Module):
    def __init__(self):
        super().__init__()
        self.dense1 = layers.Dense(2, activation="relu", use_bias=False)
        self.dense2 = layers.Dense(3, use_bias=False)

    def call(self, x):
        return self.dense2(self.dense1(x))


class ThreeLayerNet(at.Module):
    def __init__(self):
        super().__init__()
        self.two = TwoLayerNet()
        self.dense3 = layers.Dense(4, use_bias=False)

    def call(self, x):
        return self.dense3(self.two(x))


def test_reference_example_builds_lazily():
    net = TwoLayerNet()
    assert net.variables == []
    net(np.array([[1.0]]))
    assert [v.shape for v in net.variables] == [(1, 2), (2, 3)]
    deeper = ThreeLayerNet()
    assert deeper.variables == []
    deeper(np.array([[1.0]]))
    assert [v.shape for v in deeper.variables] == [(1, 2), (2, 3), (3, 4)]
    check_variable_gradients(lambda x: np.sum(deeper(x) ** 2), np.array([[1.0], [-0.5]]))


# --- outputs -------------------------------------------------------------------------------------

def test_dense_output_names_and_activations():
    layer = layers.Dense(3, activation="relu")
    x = random(4, 5)
    y = layer(x)
    kernel, bias = layer.variables
    assert re.fullmatch(r"dense(_\d+)?/kernel", kernel.name) and bias.name.endswith("/bias")
    bias.assign(random(3, seed=1))
    np.testing.assert_allclose(layer(x), np.maximum(x @ kernel.numpy() + bias.numpy(), 0))
    assert y.shape == (4, 3)
    named = layers.Dense(2, activation=np.tanh, name="head")
    np.testing.assert_allclose(named(x), np.tanh(x @ named.kernel.numpy()))
    assert [v.name for v in named.variables] == ["head/kernel", "head/bias"]
    assert layers.Dense(2)(random(2, 3, 5)).shape == (2, 3, 2)  # any leading axes


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_conv2d_output(data_format):
    x = random(2, 7, 7, 3)
    layer = layers.Conv2D(4, (3, 2), strides=2, data_format=data_format)
    given = x if data_format == "channels_last" else x.transpose(0, 3, 1, 2)
    y = layer(given)
    assert layer.kernel.shape == (3, 2, 3, 4) and layer.bias.name.endswith("/bias")
    layer.bias.assign(random(4, seed=2))
    expected = conv_reference(x, layer.kernel.numpy(), stride=2) + layer.bias.numpy()
    if data_format == "channels_first":
        expected = expected.transpose(0, 3, 1, 2)
    y = layer(given)
    np.testing.assert_allclose(y, expected, atol=1e-12)
    assert layers.Conv2D(2, 3, padding="same")(x).shape == (2, 7, 7, 2)


def test_pooling_and_flatten_outputs():
    x = random(2, 4, 6, 3)
    blocks = x.reshape(2, 2, 2, 3, 2, 3)
    np.testing.assert_allclose(layers.MaxPool2D()(x), blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(layers.AveragePooling2D()(x), blocks.mean(axis=(2, 4)))
    assert layers.MaxPooling2D is layers.MaxPool2D
    assert layers.MaxPool2D(3, strides=1, padding="same")(x).shape == (2, 4, 6, 3)
    np.testing.assert_allclose(layers.Flatten()(x), x.reshape(2, -1))
    first = x.transpose(0, 3, 1, 2)
    # channels_first flattens in channels_last order, so a Dense after it sees the same features
    np.testing.assert_allclose(layers.Flatten(data_format="channels_first")(first),
                               x.reshape(2, -1))
    assert layers.Flatten()(np.arange(3.0)).shape == (3, 1)


def test_a_convnet_step_traces_with_an_unknown_batch_size():
    """Flatten and the sparse cross entropy need no batch size: one trace serves every batch
    size, with the gradients of the eager step."""
    model = layers.Sequential([layers.Conv2D(2, 3, activation="relu"), layers.MaxPool2D(),
                               layers.Flatten(), layers.Dense(3)])

    def loss(images, labels):
        return at.losses.sparse_softmax_cross_entropy(labels, model(images))

    gradients = at.implicit_grad(loss)
    step = at.function(gradients, input_signature=[at.Spec((None, 6, 6, 1)),
                                                   at.Spec((None,), np.int64)])
    for batch in (2, 5):
        images, labels = random(batch, 6, 6, 1), np.arange(batch) % 3
        eager = {id(v): g for g, v in gradients(images, labels)}
        traced = step(images, labels)
        assert len(traced) == len(eager) == 4
        for gradient, variable in traced:
            np.testing.assert_allclose(gradient, eager[id(variable)], rtol=1e-12, atol=1e-15)
    assert step.trace_count == 1


def test_embedding_output_and_gradient():
    layer = layers.Embedding(5, 3)
    indices = np.array([[0, 4], [2, 0]])
    y = layer(indices)
    assert y.shape == (2, 2, 3)
    assert re.fullmatch(r"embedding(_\d+)?/embeddings", layer.embeddings.name)
    assert np.all(np.abs(layer.embeddings.numpy()) <= 0.05)
    np.testing.assert_allclose(y, layer.embeddings.numpy()[indices])
    weights = random(2, 2, 3)
    [(gradient, _)] = check_variable_gradients(lambda i: np.sum(layer(i) * weights), indices)
    np.testing.assert_allclose(gradient[0], weights[0, 0] + weights[1, 1])  # repeated index 0
    np.testing.assert_allclose(gradient[1], 0)


def test_sequential_add_and_training_flag():
    model = layers.Sequential([layers.Dense(4, activation="tanh")])
    model.add(layers.Dropout(0.5, seed=0))
    model.add(layers.Dense(2))
    assert model.trainable_variables == []
    assert [v.name for v in model.variables] == [f"{model.layers[1].name}/seed_generator"]
    x = random(3, 5)
    np.testing.assert_allclose(model(x), model.layers[2](model.layers[0](x)))
    assert len(model.trainable_variables) == 4
    assert model.passes_training == (False, True, False)
    assert not np.allclose(model(x, training=True), model(x))  # the Dropout is on


class TrainingScale(layers.Layer):
    """A layer of the user's whose call takes `training` (and sets nothing else)."""

    def build(self, input_shape):
        self.add_weight("scale", (input_shape[-1],), "ones")

    def call(self, inputs, training=False):
        return inputs * self.scale * (2.0 if training else 1.0)


def test_sequential_passes_training_to_layers_of_the_users_whose_call_takes_it():
    # As Keras: read from the signature of `call`, for Layers and Modules alike.
    model = layers.Sequential([TrainingScale(), layers.Dense(1, use_bias=False)])
    x = np.array([[1.0, 3.0]])
    model(x)
    model.layers[1].kernel.assign([[1.0], [1.0]])
    assert model.passes_training == (True, False)
    assert model(x).tolist() == [[4.0]] and model(x, training=True).tolist() == [[8.0]]
    # d/dscale of sum(x * scale * 2 @ ones) = 2 * x, through implicit_grad and traced alike.
    def loss(x):
        return np.sum(model(x, training=True))
    [(scale_gradient, scale), _] = at.implicit_grad(loss)(x)
    assert scale is model.layers[0].scale and scale_gradient.tolist() == [2.0, 6.0]
    traced = at.function(lambda x: at.implicit_grad(loss)(x)[0][0])
    assert traced(x).tolist() == [2.0, 6.0]


@pytest.mark.parametrize("dtype", [None, "float32"])
def test_a_layer_whose_call_takes_no_training_drops_it(dtype):
    # As Keras's Layer.__call__: a loop may pass training= to every layer.
    dense = layers.Dense(1, use_bias=False, dtype=dtype)
    x = np.array([[1.0, 2.0]])
    dense(x)
    dense.kernel.assign([[3.0], [4.0]])
    assert dense(x, training=True).tolist() == [[11.0]]    # 1 * 3 + 2 * 4

    def loss(x):
        return np.sum(dense(x, training=True) ** 2)
    # d/dkernel of (x @ k)^2 = 2 * 11 * x^T; d/dx = 2 * 11 * k^T.
    [(gradient, _)] = at.implicit_grad(loss)(x)
    assert gradient.tolist() == [[22.0], [44.0]]
    assert at.grad(loss)(x).tolist() == [[66.0, 88.0]]
    traced = at.function(lambda x: at.implicit_grad(loss)(x)[0][0])
    assert traced(x).tolist() == [[22.0], [44.0]]
    with pytest.raises(TypeError, match="unexpected keyword argument 'mask'"):
        dense(x, mask=None)                 # only `training` is dropped


# --- gradients -----------------------------------------------------------------------------------

@pytest.mark.parametrize("make, shape", [
    (lambda: layers.Dense(3, activation="sigmoid"), (4, 5)),
    (lambda: layers.Dense(3, activation="gelu"), (2, 3, 5)),
    (lambda: layers.Conv2D(2, 3, padding="same", activation="tanh"), (2, 5, 5, 3)),
    (lambda: layers.Conv2D(2, 2, strides=2, data_format="channels_first"), (2, 3, 4, 4)),
    (lambda: layers.MaxPool2D(), (2, 4, 4, 3)),
    (lambda: layers.AveragePool2D(3, strides=2, padding="same"), (2, 5, 5, 2)),
    (lambda: layers.Flatten(data_format="channels_first"), (2, 3, 2, 2)),
    (lambda: layers.BatchNormalization(), (6, 3)),
    (lambda: layers.BatchNormalization(axis=1), (4, 3, 2, 2)),
])
def test_gradients_in_inputs(make, shape):
    layer = make()
    x = random(*shape, seed=3)
    layer(x)
    if isinstance(layer, layers.BatchNormalization):
        layer.moving_variance.assign(np.full(layer.moving_variance.shape, 2.0))
        # Training moves the statistics: its gradient is taken with implicit_grad, here of
        # the inputs held in a Variable (momentum 1: finite differences move nothing).
        layer.momentum = 1.0
        inputs = at.Variable(x, name="inputs")
        weights = random(*shape, seed=11)
        pairs = check_variable_gradients(lambda: np.sum(layer(inputs, training=True) ** 2 *
                                                    weights))
        assert pairs[-1][1] is inputs
    check_grads(lambda x: layer(x), (x,), modes=("reverse", "forward"))


def test_a_layer_update_under_plain_grad_is_made_once_and_a_loss_of_its_own_refused():
    # (a layer's call runs whole, then again for its gradient, from the state it began with:
    # tests/test_model_stack_edges2.py; a write in the loss itself stays an error)
    layer = layers.BatchNormalization(name="plain", momentum=0.5)
    x = random(4, 3)
    at.grad(lambda x: np.sum(layer(x, training=True) ** 2))(x)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.5 * x.mean(axis=0), rtol=1e-12)

    def loss(x):
        layer.moving_mean.assign(np.mean(x, axis=0))
        return np.sum(layer(x) ** 2)
    with pytest.raises(at.StateError, match=re.escape(
            "Variable 'plain/moving_mean' is assigned inside a function that autotrace.grad "
            "differentiates")):
        at.grad(loss)(x)


@pytest.mark.parametrize("make, shape", [
    (lambda: layers.Dense(3, activation="softmax"), (4, 5)),
    (lambda: layers.Conv2D(2, 3, strides=(1, 2), activation="relu"), (2, 5, 6, 3)),
    (lambda: layers.Conv2D(3, 2, padding="same", data_format="channels_first"), (2, 2, 4, 3)),
])
def test_gradients_in_variables(make, shape):
    layer = make()
    x = random(*shape, seed=4)
    layer(x)
    layer.bias.assign(random(*layer.bias.shape, seed=5) * 0.1)
    weights = random(*layer(x).shape, seed=6)
    pairs = check_variable_gradients(lambda x: np.sum(layer(x) * weights), x, rtol=1e-5,
                                     atol=1e-7)
    assert [v.name for _, v in pairs] == [layer.kernel.name, layer.bias.name]


def test_batch_normalization_gradients_in_gamma_and_beta():
    layer = layers.BatchNormalization(momentum=1.0)  # momentum 1: finite differences move nothing
    x = random(5, 3, seed=7)
    layer(x)
    layer.gamma.assign(random(3, seed=8))
    layer.beta.assign(random(3, seed=9))
    weights = random(5, 3, seed=10)
    for training in (True, False):
        pairs = check_variable_gradients(lambda x: np.sum(layer(x, training=training) ** 2 *
                                                      weights), x)
        assert [v.name.split("/")[-1] for _, v in pairs] == ["gamma", "beta"]


class SmallCNN(at.Module):
    def __init__(self):
        super().__init__()
        self.features = layers.Sequential([
            layers.Conv2D(4, 3, activation="relu"), layers.MaxPool2D(), layers.Flatten()])
        self.head = layers.Dense(3)

    def call(self, x, training=False):
        return self.head(self.features(x, training=training))


def cross_entropy(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probabilities = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_probabilities[np.arange(len(labels)), labels])


def test_small_cnn_gradients_match_finite_differences():
    model = SmallCNN()
    x, labels = random(3, 6, 6, 2, seed=11), np.array([0, 2, 1])
    model(x)
    for variable in model.variables:
        variable.assign(random(*variable.shape, seed=variable.size) * 0.5)
    pairs = check_variable_gradients(lambda x, y: cross_entropy(model(x), y), x, labels)
    assert [v.shape for _, v in pairs] == [(3, 3, 2, 4), (4,), (16, 3), (3,)]


# --- traced training steps -----------------------------------------------------------------------

def make_model():
    model = layers.Sequential([layers.Conv2D(3, 3, activation="relu"),
                               layers.BatchNormalization(momentum=0.5), layers.MaxPool2D(),
                               layers.Flatten(), layers.Dense(2)])
    model(np.zeros((1, 6, 6, 2)))
    for variable in model.trainable_variables:
        variable.assign(random(*variable.shape, seed=variable.size))
    return model


def training_step(model):
    def loss(x, y):
        return cross_entropy(model(x, training=True), y)

    def step(x, y):
        value, grads_and_vars = at.implicit_value_and_grad(loss)(x, y)
        for gradient, variable in grads_and_vars:
            variable.assign_sub(0.1 * gradient)
        return value
    return step


def test_training_step_traced_matches_eager():
    eager_model, traced_model = make_model(), make_model()
    eager_step = training_step(eager_model)
    traced_step = at.function(training_step(traced_model))
    for seed in range(3):
        x, y = random(4, 6, 6, 2, seed=20 + seed), np.array([0, 1, 1, 0])
        np.testing.assert_allclose(traced_step(x, y), eager_step(x, y), rtol=1e-12)
    assert traced_step.trace_count == 1
    for eager, traced in zip(eager_model.variables, traced_model.variables):
        np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-10, err_msg=eager.name)


def embedding_training_step(seed):
    embedding, dense = layers.Embedding(6, 3), layers.Dense(1)
    dense(embedding(np.zeros(1, dtype=int)))  # builds both
    for variable in embedding.trainable_variables + dense.trainable_variables:
        variable.assign(random(*variable.shape, seed=seed + variable.size))
    optimizer = at.optimizers.Adam(0.1)

    def loss(ids, y):
        return np.mean((dense(np.mean(embedding(ids), axis=1))[:, 0] - y) ** 2)

    def step(ids, y):
        value, grads_and_vars = at.implicit_value_and_grad(loss)(ids, y)
        optimizer.apply_gradients(grads_and_vars)
        return value
    return step, embedding.variables + dense.variables


def test_embedding_training_step_traced_matches_eager():
    (eager_step, eager_variables), (traced_step, traced_variables) = (
        embedding_training_step(1), embedding_training_step(1))
    traced_step = at.function(traced_step)
    y = np.array([1.0, -1.0])
    for ids in ([[1, 2], [3, 3]], [[0, 0], [0, 5]], [[4, 1], [1, 1]]):  # indices repeat
        ids = np.array(ids)
        np.testing.assert_allclose(traced_step(ids, y), eager_step(ids, y), rtol=1e-12)
    assert traced_step.trace_count == 1
    for eager, traced in zip(eager_variables, traced_variables):
        np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-12, err_msg=eager.name)


# --- BatchNormalization's moving statistics -------------------------------------------------------

def test_batch_normalization_moving_statistics():
    layer = layers.BatchNormalization(momentum=0.9, epsilon=0.01)
    batches = [random(8, 3, seed=30 + i) for i in range(3)]
    moving_mean, moving_variance = np.zeros(3), np.ones(3)
    for x in batches:
        y = layer(x, training=True)
        np.testing.assert_allclose(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 0.01))
        moving_mean = 0.9 * moving_mean + 0.1 * x.mean(0)
        moving_variance = 0.9 * moving_variance + 0.1 * x.var(0)
    np.testing.assert_allclose(layer.moving_mean.numpy(), moving_mean)
    np.testing.assert_allclose(layer.moving_variance.numpy(), moving_variance)
    x = random(2, 3, seed=40)
    np.testing.assert_allclose(layer(x), (x - moving_mean) / np.sqrt(moving_variance + 0.01))
    assert [v.name.split("/")[-1] for v in layer.non_trainable_variables] == [
        "moving_mean", "moving_variance"]
    assert [v.name.split("/")[-1] for v in layer.trainable_variables] == ["gamma", "beta"]


def test_batch_normalization_updates_once_per_gradient_step():
    # Nested two modules deep, call runs three times under a gradient (the adjoint sweep
    # recomputes it); the statistics must move once per step, eagerly and traced.
    for traced in (False, True):
        model = layers.Sequential([layers.Sequential([layers.BatchNormalization(momentum=0.5)])])
        norm = model.layers[0].layers[0]
        x = random(6, 2, seed=41)
        step = training_step(model)
        step = at.function(step) if traced else step
        for _ in range(2):
            step(x, np.array([0, 1, 1, 0, 0, 1]))
        np.testing.assert_allclose(norm.moving_mean.numpy(), 0.75 * x.mean(0))
        np.testing.assert_allclose(norm.moving_variance.numpy(), 0.25 + 0.75 * x.var(0))


def test_one_batch_normalization_called_twice_in_a_loss():
    # The second call reads the moving statistics the first one assigned, as plain calls do;
    # each recomputation by the adjoint sweep sees what its call saw, and updates nothing.
    first, second = random(8, 3, seed=60), 2.0 + random(8, 3, seed=61)
    plain = layers.BatchNormalization(momentum=0.5)
    layer = layers.BatchNormalization(momentum=0.5)
    plain(first, training=True), plain(second, training=True)
    layer(first)  # builds it; outside training nothing moves
    for traced in (False, True):
        layer.moving_mean.assign(np.zeros(3)), layer.moving_variance.assign(np.ones(3))
        layer.gamma.assign(np.array([1.0, 2.0, 0.5]))

        def loss(a, b):
            return np.sum(np.tanh(layer(a, training=True)) * layer(b, training=True) ** 2)
        gradients = at.implicit_grad(loss)
        [(d_gamma, gamma), (d_beta, beta)] = (at.function(gradients) if traced else gradients)(
            first, second)
        np.testing.assert_allclose(layer.moving_mean.numpy(), plain.moving_mean.numpy())
        np.testing.assert_allclose(layer.moving_variance.numpy(), plain.moving_variance.numpy())
        check_variable_gradients(loss, first, second)  # training: the statistics are the batch's
        assert gamma is layer.gamma and beta is layer.beta


# --- Dropout -------------------------------------------------------------------------------------

def test_dropout_statistics_and_identity():
    layer = layers.Dropout(0.3, seed=0)
    x = np.ones((200, 100))
    y = layer(x, training=True)
    assert abs(np.mean(y == 0) - 0.3) < 0.01
    np.testing.assert_allclose(y[y != 0], 1 / 0.7)
    assert abs(np.mean(y) - 1.0) < 0.02
    assert not np.array_equal(layer(x, training=True), y)  # a new mask each call
    assert layer(x) is x and layer(x, training=False) is x
    assert layers.Dropout(0.0)(x, training=True) is x
    np.testing.assert_array_equal(layers.Dropout(0.5, seed=3)(x, training=True),
                                  layers.Dropout(0.5, seed=3)(x, training=True))


def test_dropout_gradient_is_that_of_the_value_returned():
    # loss is linear in the kernel, so loss == <gradient, kernel> exactly when the gradient
    # used the mask the value used (the nested layers make the adjoint sweep recompute).
    model = layers.Sequential([layers.Sequential([layers.Dense(50, use_bias=False),
                                                  layers.Dropout(0.5, seed=1)])])
    x = random(4, 3, seed=50)
    model(x)
    kernel = model.layers[0].layers[0].kernel
    def loss(x):
        return np.sum(model(x, training=True))
    for _ in range(3):
        value, [(gradient, variable)] = at.implicit_value_and_grad(loss)(x)
        assert variable is kernel
        np.testing.assert_allclose(value, np.sum(gradient * kernel.numpy()))
    check_grads(lambda x: model(x), (x,))  # training=False: the identity


def test_one_dropout_called_twice_in_a_loss_draws_two_masks():
    dense, dropout = layers.Dense(40, use_bias=False), layers.Dropout(0.5, seed=5)
    x = random(4, 3, seed=51)
    dense(x)

    def loss(x):  # linear in the kernel: loss == <gradient, kernel> for the masks used
        h = dense(x)
        return np.sum(dropout(h, training=True)) + 3.0 * np.sum(dropout(h, training=True))

    masks = [dropout(np.ones((4, 40)), training=True) for _ in range(2)]
    assert not np.array_equal(*masks)
    for traced in (False, True):
        gradients = at.implicit_value_and_grad(loss)
        gradients = at.function(gradients) if traced else gradients
        for _ in range(2):
            dropout.generator.key.assign(np.uint64(5))
            value, [(gradient, _)] = gradients(x)
            assert int(dropout.generator.key) == 7  # two draws, once each
            np.testing.assert_allclose(value, np.sum(gradient * dense.kernel.numpy()))
            h = x @ dense.kernel.numpy()
            np.testing.assert_allclose(value, np.sum(h * masks[0]) + 3 * np.sum(h * masks[1]))


def test_dropout_draws_a_new_mask_on_every_call_of_a_traced_step():
    layer = layers.Dropout(0.5, seed=3)
    traced = at.function(lambda x: layer(x, training=True))
    masks = [traced(np.ones(64)) for _ in range(3)]
    assert traced.trace_count == 1 and int(layer.generator.key) == 3 + 3
    assert all(set(np.unique(mask)) <= {0.0, 2.0} for mask in masks)
    assert not np.array_equal(masks[0], masks[1]) and not np.array_equal(masks[1], masks[2])
    np.testing.assert_array_equal(at.function(lambda x: layer(x))(np.ones(3)), np.ones(3))


def test_set_seed_makes_unseeded_dropout_masks_and_initial_kernels_reproducible():
    def draws():
        at.random.set_seed(0)
        dense, first, second = layers.Dense(3), layers.Dropout(0.5), layers.Dropout(0.5)
        dense(np.ones((1, 4)))
        masks = [first(np.ones(16), training=True), second(np.ones(16), training=True),
                 at.function(lambda x: first(x, training=True))(np.ones(16))]
        return dense.kernel.numpy(), masks

    kernel, masks = draws()
    again, masks_again = draws()
    np.testing.assert_array_equal(kernel, again)
    for mask, mask_again in zip(masks, masks_again):
        np.testing.assert_array_equal(mask, mask_again)
    assert not np.array_equal(masks[0], masks[1])  # two layers, two streams (as in TF)
    # By hand: glorot_uniform from NumPy's generator of the seed; each Dropout's key from
    # set_seed's stream of seeds, its masks Philox's numbers of key, key + 1, ...
    limit = np.sqrt(6.0 / (4 + 3))
    np.testing.assert_array_equal(kernel,
                                  np.random.default_rng(0).uniform(-limit, limit, (4, 3)))
    seeds = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(1,)))
    first_key, second_key = seeds.integers(2 ** 63), seeds.integers(2 ** 63)

    def dropped(key):
        uniform = np.random.Generator(np.random.Philox(key=int(key))).random(16)
        return np.where(uniform >= 0.5, 1.0 / (1.0 - 0.5), 0.0)
    for mask, key in zip(masks, [first_key, second_key, first_key + 1]):
        np.testing.assert_array_equal(mask, dropped(key))


# --- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: layers.Dense(-1), ValueError,
     "Dense: argument `units` must be a positive integer, got -1"),
    (lambda: layers.Dense(2.5), ValueError,
     "Dense: argument `units` must be a positive integer, got 2.5"),
    (lambda: layers.Conv2D(2, 3, padding="full"), ValueError,
     "Conv2D: argument `padding` must be 'valid' or 'same', got 'full'"),
    (lambda: layers.Conv2D(2, (3, 0)), ValueError,
     "Conv2D: argument `kernel_size` must be a positive integer or a pair of them, got (3, 0)"),
    (lambda: layers.MaxPool2D(data_format="NHWC"), ValueError,
     "MaxPool2D: argument `data_format` must be 'channels_last' or 'channels_first', got "
     "'NHWC'"),
    (lambda: layers.Dropout(1.0), ValueError,
     "Dropout: argument `rate` must be a number in [0, 1), got 1.0"),
    (lambda: layers.Embedding(0, 3), ValueError,
     "Embedding: argument `input_dim` must be a positive integer, got 0"),
    (lambda: layers.BatchNormalization(momentum=1.5), ValueError,
     "BatchNormalization: argument `momentum` must be in [0, 1], got 1.5"),
    (lambda: layers.Sequential().add(3), TypeError,
     "Sequential.add: argument `layer` must be a layer or a function, got int"),
    (lambda: layers.Dense(2, activation="mish"), ValueError,
     "get_activation: activation must be one of 'relu', 'sigmoid', 'tanh', 'softmax', "
     "'gelu', 'linear', 'leaky_relu', 'elu', 'softplus', 'silu', 'swish', None or a function, "
     "got 'mish'"),
])
def test_argument_errors(make, error, message):
    with pytest.raises(error) as raised:
        make()
    assert str(raised.value) == message


@pytest.mark.parametrize("layer, inputs, error, message", [
    (layers.Dense(2, name="d"), np.ones(3), ValueError,
     "Dense 'd': argument `inputs` must have rank at least 2 (batch, ..., features), got "
     "shape (3,)"),
    (layers.Conv2D(2, 3, name="c"), np.ones((2, 5, 5)), ValueError,
     "Conv2D 'c': argument `inputs` must have rank 4 (batch, height, width, channels) or "
     "(batch, channels, height, width), got shape (2, 5, 5)"),
    (layers.AveragePool2D(name="p"), np.ones((5, 5)), ValueError,
     "AveragePool2D 'p': argument `inputs` must have rank 4 (batch, height, width, channels) "
     "or (batch, channels, height, width), got shape (5, 5)"),
    (layers.Embedding(4, 2, name="e"), np.ones(3), TypeError,
     "Embedding 'e': argument `inputs` must hold integer indices, got dtype float64"),
    (layers.Embedding(4, 2, name="e"), np.array([1, 4]), ValueError,
     "Embedding 'e': argument `inputs` must be in [0, 4) (input_dim), got values from 1 to 4"),
    (layers.BatchNormalization(axis=2, name="b"), np.ones((3, 2)), ValueError,
     "BatchNormalization 'b': argument `axis` must be an axis of the inputs, of rank 2, got 2"),
])
def test_input_errors(layer, inputs, error, message):
    with pytest.raises(error) as raised:
        layer(inputs)
    assert str(raised.value) == message


@pytest.mark.parametrize("family", ["core", "convolutional", "normalization",
                                    "recurrent", "attention", "regularization"])
def test_docstring_examples(family):
    import importlib
    module = importlib.import_module(f"autotrace.layers.{family}")
    results = doctest.testmod(module, extraglobs={"np": np})
    assert results.attempted > 0 and results.failed == 0


@pytest.mark.parametrize("make, shape", [
    (lambda: layers.Dense(3, activation="tanh"), (2, 4)),
    (lambda: layers.Conv2D(2, 2, activation="sigmoid"), (1, 3, 3, 2)),
])
def test_second_order_gradients_through_a_module_call(make, shape):
    layer = make()
    x = random(*shape, seed=12)
    layer(x)
    check_grads(lambda x: np.sum(layer(x) ** 2), (x,), order=2, modes=("reverse", "forward"))
