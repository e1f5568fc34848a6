"""The Keras layers beyond Dense and Conv2D: LayerNormalization, GlobalAveragePooling2D,
Reshape, Conv1D, SimpleRNN, LSTM, GRU, MultiHeadAttention and Conv2DTranspose. Outputs against
NumPy references written here (for LSTM, GRU and attention, Keras' equations), gradients
against finite differences, each layer traced with an unknown batch size against its eager
self, checkpoints, and float32 kept float32."""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace import layers
from autotrace.testing import check_grads
from tests.variable_helpers import check_variable_gradients


def random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def randomize(layer, seed=1, scale=0.5):
    """Random values in every trainable Variable of a built layer (zero biases test
    nothing)."""
    for variable in layer.trainable_variables:
        variable.assign(random(*variable.shape, seed=seed + variable.size) * scale)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# --- outputs -------------------------------------------------------------------------------------

def test_layer_normalization_output():
    x = random(3, 4, 5)
    layer = layers.LayerNormalization(epsilon=0.01)
    layer(x)
    assert [v.name for v in layer.variables] == [f"{layer.name}/gamma", f"{layer.name}/beta"]
    randomize(layer)
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    expected = (x - mean) / np.sqrt(variance + 0.01) * layer.gamma.numpy() + layer.beta.numpy()
    np.testing.assert_allclose(layer(x), expected, rtol=1e-12)

    over_two = layers.LayerNormalization(axis=[1, 2], center=False)
    over_two(x)
    assert [v.shape for v in over_two.variables] == [(4, 5)]
    randomize(over_two)
    flat = x.reshape(3, 20)
    normalized = ((flat - flat.mean(1, keepdims=True)) /
                  np.sqrt(flat.var(1, keepdims=True) + 1e-3)).reshape(3, 4, 5)
    np.testing.assert_allclose(over_two(x), normalized * over_two.gamma.numpy(), rtol=1e-12)


def test_global_average_pooling_and_reshape_outputs():
    x = random(2, 3, 4, 5)
    np.testing.assert_allclose(layers.GlobalAveragePooling2D()(x),
                               [[x[n, :, :, c].sum() / 12 for c in range(5)] for n in range(2)])
    first = layers.GlobalAveragePooling2D(data_format="channels_first", keepdims=True)(x)
    assert first.shape == (2, 3, 1, 1)
    np.testing.assert_allclose(first[:, :, 0, 0], x.mean(axis=(2, 3)))

    np.testing.assert_array_equal(layers.Reshape((5, 12))(x), x.reshape(2, 5, 12))
    np.testing.assert_array_equal(layers.Reshape((-1, 3))(x), x.reshape(2, 20, 3))
    with pytest.raises(ValueError, match=re.escape(
            "Reshape 'bad': cannot reshape examples of shape (3, 4, 5) (60 elements) to "
            "target_shape (7, -1)")):
        layers.Reshape((7, -1), name="bad")(x)


def conv1d_reference(x, kernel, stride=1, pad_before=0, pad_after=0):
    """Cross-correlation of (batch, steps, channels) by a loop over output steps."""
    x = np.pad(x, ((0, 0), (pad_before, pad_after), (0, 0)))
    width = kernel.shape[0]
    steps = (x.shape[1] - width) // stride + 1
    return np.stack([np.einsum("nkc,kcf->nf", x[:, t * stride:t * stride + width], kernel)
                     for t in range(steps)], axis=1)


def test_conv1d_output():
    x = random(2, 7, 3)
    layer = layers.Conv1D(4, 3, strides=2, activation="tanh")
    layer(x)
    assert layer.kernel.shape == (3, 3, 4) and layer.bias.shape == (4,)
    randomize(layer)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    np.testing.assert_allclose(layer(x), np.tanh(conv1d_reference(x, kernel, 2) + bias),
                               rtol=1e-12)
    same = layers.Conv1D(2, 4, padding="same", data_format="channels_first", use_bias=False)
    same(x.transpose(0, 2, 1))
    randomize(same)
    expected = conv1d_reference(x, same.kernel.numpy(), 1, 1, 2)  # SAME: the extra one after
    np.testing.assert_allclose(same(x.transpose(0, 2, 1)), expected.transpose(0, 2, 1),
                               rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape(
            "Conv1D: strides (2,) and dilation_rate (2,) cannot both be above 1 (as in "
            "Keras); use one or the other")):
        layers.Conv1D(2, 3, strides=2, dilation_rate=2)


def simple_rnn_reference(x, kernel, recurrent, bias):
    h = np.zeros((x.shape[0], kernel.shape[1]))
    outputs = []
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ kernel + h @ recurrent + bias)
        outputs.append(h)
    return np.stack(outputs, axis=1)


def lstm_reference(x, kernel, recurrent, bias, h, c):
    """Keras' LSTM: gates i, f, c, o in that order."""
    outputs = []
    for t in range(x.shape[1]):
        i, f, g, o = np.split(x[:, t] @ kernel + h @ recurrent + bias, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), h, c


def gru_reference(x, kernel, recurrent, bias, reset_after):
    """Keras' GRU: gates z, r, h in that order; reset_after has an input and a recurrent bias."""
    units = recurrent.shape[0]
    h = np.zeros((x.shape[0], units))
    input_bias, recurrent_bias = (bias[0], bias[1]) if reset_after else (bias, 0)
    outputs = []
    for t in range(x.shape[1]):
        x_z, x_r, x_h = np.split(x[:, t] @ kernel + input_bias, 3, axis=1)
        h_z, h_r, h_h = np.split(h @ recurrent + recurrent_bias, 3, axis=1)
        z, r = sigmoid(x_z + h_z), sigmoid(x_r + h_r)
        if reset_after:
            candidate = np.tanh(x_h + r * h_h)
        else:
            candidate = np.tanh(x_h + (r * h) @ recurrent[:, 2 * units:])
        h = z * h + (1 - z) * candidate
        outputs.append(h)
    return np.stack(outputs, axis=1)


def test_simple_rnn_output_sequences_state_and_backwards():
    x = random(2, 4, 3)
    layer = layers.SimpleRNN(5, return_sequences=True, return_state=True)
    layer(x)
    assert [v.name for v in layer.variables] == [
        f"{layer.name}/{name}" for name in ("kernel", "recurrent_kernel", "bias")]
    recurrent = layer.recurrent_kernel.numpy()  # orthogonal, as Keras' default
    np.testing.assert_allclose(recurrent.T @ recurrent, np.eye(5), atol=1e-12)
    randomize(layer)
    weights = [v.numpy() for v in layer.variables]
    sequence, state = layer(x)
    expected = simple_rnn_reference(x, *weights)
    np.testing.assert_allclose(sequence, expected, rtol=1e-12)
    np.testing.assert_allclose(state, expected[:, -1], rtol=1e-12)

    backwards = layers.SimpleRNN(5, go_backwards=True)
    backwards(x)
    for variable, weight in zip(backwards.variables, weights):
        variable.assign(weight)
    np.testing.assert_allclose(backwards(x), simple_rnn_reference(x[:, ::-1], *weights)[:, -1],
                               rtol=1e-12)


def test_lstm_output_against_keras_equations():
    x = random(2, 4, 3)
    layer = layers.LSTM(2, return_sequences=True, return_state=True)
    layer(x)
    np.testing.assert_array_equal(layer.bias.numpy(), [0, 0, 1, 1, 0, 0, 0, 0])  # forget: 1
    assert layer.kernel.shape == (3, 8) and layer.recurrent_kernel.shape == (2, 8)
    randomize(layer)
    weights = [v.numpy() for v in layer.variables]
    h0, c0 = random(2, 2, seed=5), random(2, 2, seed=6)
    sequence, h, c = layer(x, initial_state=[h0, c0])
    expected = lstm_reference(x, *weights, h0, c0)
    for value, reference in zip((sequence, h, c), expected):
        np.testing.assert_allclose(value, reference, rtol=1e-12)
    zeros = np.zeros((2, 2))
    plain = layers.LSTM(2, unit_forget_bias=False)
    plain(x)
    np.testing.assert_array_equal(plain.bias.numpy(), np.zeros(8))
    last = layer(x)[0][:, -1]
    np.testing.assert_allclose(last, lstm_reference(x, *weights, zeros, zeros)[1], rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape(
            f"LSTM {layer.name!r}: argument `initial_state` must hold 2 array(s) (batch, "
            f"units), got 1")):
        layer(x, initial_state=[h0])


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_output_against_keras_equations(reset_after):
    x = random(2, 4, 3)
    layer = layers.GRU(2, reset_after=reset_after, return_sequences=True)
    layer(x)
    assert layer.bias.shape == ((2, 6) if reset_after else (6,))
    randomize(layer)
    expected = gru_reference(x, *[v.numpy() for v in layer.variables], reset_after)
    np.testing.assert_allclose(layer(x), expected, rtol=1e-12)
    output, state = layers.GRU(2, return_state=True)(x)
    np.testing.assert_array_equal(output, state)


# --- gradients -----------------------------------------------------------------------------------

@pytest.mark.parametrize("make, shape", [
    (lambda: layers.LayerNormalization(), (3, 4)),
    (lambda: layers.Conv1D(2, 3, strides=2, padding="same"), (2, 5, 3)),
    (lambda: layers.LSTM(2, return_sequences=True), (2, 3, 2)),
    (lambda: layers.GRU(2, reset_after=False), (2, 3, 2)),
])
def test_gradients_in_inputs(make, shape):
    layer = make()
    x = random(*shape, seed=3)
    layer(x)
    randomize(layer)
    check_grads(lambda x: layer(x), (x,), modes=("reverse", "forward"))


@pytest.mark.parametrize("make", [
    lambda: layers.SimpleRNN(2, return_state=True),
    lambda: layers.LSTM(2, return_state=True),
    lambda: layers.GRU(2, return_sequences=True, return_state=True),
])
def test_recurrent_gradients_in_weights(make):
    layer = make()
    x = random(2, 3, 2, seed=4)
    layer(x)
    randomize(layer)
    weights = [random(*np.shape(output), seed=7 + i) for i, output in enumerate(layer(x))]

    def loss(x):
        return sum(np.sum(output * weight) for output, weight in zip(layer(x), weights))
    pairs = check_variable_gradients(loss, x, rtol=1e-5, atol=1e-8)
    assert [v.name for _, v in pairs] == [v.name for v in layer.variables]


def test_gradients_in_initial_states():
    layer = layers.LSTM(2, return_state=True)
    x = random(2, 3, 2, seed=14)
    layer(x)
    randomize(layer)
    check_grads(lambda x, h, c: layer(x, initial_state=[h, c]),
                (x, random(2, 2, seed=15), random(2, 2, seed=16)), wrt=(0, 1, 2))


def test_the_number_of_time_steps_must_be_known_when_traced():
    layer = layers.GRU(2, name="unknown_steps")
    traced = at.function(lambda x: layer(x), input_signature=[at.Spec((2, None, 3))])
    with pytest.raises(ValueError, match=re.escape(
            "GRU 'unknown_steps': the number of time steps (axis 1 of `inputs`) must be known, "
            "since the loop over them is unrolled when traced; give it a size in the Spec")):
        traced(random(2, 4, 3))


# --- traced with an unknown batch size, checkpoints, float32 -------------------------------------

LAYERS = [
    (lambda: layers.LayerNormalization(axis=(1, 2)), (4, 3)),
    (lambda: layers.GlobalAveragePooling2D(), (2, 3, 2)),
    (lambda: layers.Reshape((-1, 2)), (3, 4)),
    (lambda: layers.Conv1D(2, 3, padding="same"), (5, 3)),
    (lambda: layers.SimpleRNN(3, go_backwards=True), (4, 2)),
    (lambda: layers.LSTM(3, return_sequences=True, return_state=True), (4, 2)),
    (lambda: layers.GRU(3, return_state=True), (4, 2)),
    (lambda: layers.Conv2DTranspose(2, 3, strides=2, padding="same"), (3, 3, 2)),
]


@pytest.mark.parametrize("make, example", LAYERS)
def test_traced_with_an_unknown_batch_size_matches_eager(make, example):
    layer = make()
    layer(random(1, *example))
    randomize(layer)
    traced = at.function(lambda x: layer(x),
                         input_signature=[at.Spec((None,) + example, np.float64)])
    for batch in (2, 5):
        x = random(batch, *example, seed=batch)
        eager, value = layer(x), traced(x)
        for a, b in zip(eager if isinstance(eager, list) else [eager],
                        value if isinstance(value, list) else [value]):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
    assert traced.trace_count == 1


def test_weights_save_and_restore(tmp_path):
    model = layers.Sequential([layers.Conv1D(3, 2), layers.LayerNormalization(),
                               layers.LSTM(3, return_sequences=True), layers.GRU(2),
                               layers.Reshape((1, 2))])
    x = random(2, 5, 3)
    model(x)
    randomize(model)
    expected = model(x)
    checkpoint = at.Checkpoint(model=model)
    path = checkpoint.save(str(tmp_path / "ckpt"))
    names = [v.name for v in model.variables]
    assert len(names) == 10 and len(set(names)) == 10
    for variable in model.variables:
        variable.assign(np.zeros(variable.shape))
    checkpoint.restore(path).assert_consumed()
    np.testing.assert_array_equal(model(x), expected)


@pytest.mark.parametrize("make, example", LAYERS)
def test_float32_stays_float32(make, example):
    layer = make()
    x = random(2, *example).astype(np.float32)
    outputs = layer(x)
    for output in outputs if isinstance(outputs, list) else [outputs]:
        assert output.dtype == np.float32
    assert all(v.dtype == np.float32 for v in layer.variables)
    if layer.variables:
        def loss(x):
            output = layer(x)
            return np.sum((output[0] if isinstance(output, list) else output) ** 2)
        pairs = at.implicit_grad(loss)(x)
        assert pairs and all(g.dtype == np.float32 for g, _ in pairs)


# --- MultiHeadAttention --------------------------------------------------------------------------

def attention_reference(layer, query, value, key, mask=None):
    """Keras' equations with einsum, from the layer's weights."""
    w = {v.name.split("/")[-1]: v.numpy() for v in layer.trainable_variables}
    q = np.einsum("btd,dnh->btnh", query, w["query_kernel"]) + w["query_bias"]
    k = np.einsum("bsd,dnh->bsnh", key, w["key_kernel"]) + w["key_bias"]
    v = np.einsum("bsd,dnh->bsnh", value, w["value_kernel"]) + w["value_bias"]
    scores = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask[:, None], scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    attended = np.einsum("bnts,bsnh->btnh", weights, v)
    return np.einsum("btnh,nho->bto", attended, w["output_kernel"]) + w["output_bias"], weights


def built_attention(seed=1, **options):
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=3, **options)
    layer(random(1, 3, 4), random(1, 5, 6), random(1, 5, 2))
    randomize(layer, seed=seed)
    return layer


def test_multi_head_attention_output_masks_and_scores():
    layer = built_attention(value_dim=2, output_shape=7)
    assert [(v.name.split("/")[-1], v.shape) for v in layer.trainable_variables] == [
        ("query_kernel", (4, 2, 3)), ("query_bias", (2, 3)), ("key_kernel", (2, 2, 3)),
        ("key_bias", (2, 3)), ("value_kernel", (6, 2, 2)), ("value_bias", (2, 2)),
        ("output_kernel", (2, 2, 7)), ("output_bias", (7,))]
    query, value, key = random(2, 3, 4, seed=2), random(2, 5, 6, seed=3), random(2, 5, 2, seed=4)
    output, scores = layer(query, value, key, return_attention_scores=True)
    expected, expected_scores = attention_reference(layer, query, value, key)
    np.testing.assert_allclose(output, expected, rtol=1e-12)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-12)

    mask = np.random.default_rng(5).random((2, 3, 5)) > 0.4
    mask[:, :, 0] = True  # every target attends to something
    np.testing.assert_allclose(layer(query, value, key, attention_mask=mask.astype(int)),
                               attention_reference(layer, query, value, key, mask)[0],
                               rtol=1e-12)
    causal = np.tril(np.ones((3, 5), bool))[None] & mask
    np.testing.assert_allclose(layer(query, value, key, attention_mask=mask,
                                     use_causal_mask=True),
                               attention_reference(layer, query, value, key, causal)[0],
                               rtol=1e-12)
    self_attention = layers.MultiHeadAttention(num_heads=2, key_dim=3)
    x = random(2, 3, 4, seed=6)
    self_attention(x, x)
    randomize(self_attention)
    np.testing.assert_array_equal(self_attention(x, x), self_attention(x, x, x))  # key: value
    np.testing.assert_allclose(self_attention(x, x),
                               attention_reference(self_attention, x, x, x)[0], rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape(
            f"MultiHeadAttention {layer.name!r}: argument `value` must have rank 3 (batch, "
            f"sequence, features), got shape (5, 6)")):
        layer(query, value[0])


def test_multi_head_attention_gradients():
    layer = built_attention(use_bias=True)
    query, value, key = random(2, 3, 4, seed=7), random(2, 5, 6, seed=8), random(2, 5, 2, seed=9)
    mask = np.tril(np.ones((3, 5), bool))[None].repeat(2, axis=0)
    check_grads(lambda q, v, k: layer(q, v, k, attention_mask=mask), (query, value, key),
                wrt=(0, 1, 2), modes=("reverse", "forward"))
    weights = random(2, 3, 4, seed=10)
    pairs = check_variable_gradients(lambda q: np.sum(layer(q, value, key) * weights), query,
                                     rtol=1e-5, atol=1e-8)
    assert [v for _, v in pairs] == layer.trainable_variables


def test_multi_head_attention_traced_with_an_unknown_batch_size_matches_eager():
    layer = built_attention()

    def attend(query, value, key, mask):
        return layer(query, value, key, attention_mask=mask, return_attention_scores=True)
    traced = at.function(attend, input_signature=[
        at.Spec((None, 3, 4)), at.Spec((None, 5, 6)), at.Spec((None, 5, 2)),
        at.Spec((None, 3, 5), np.bool_)])
    for batch in (1, 4):
        arguments = (random(batch, 3, 4, seed=batch), random(batch, 5, 6, seed=batch + 1),
                     random(batch, 5, 2, seed=batch + 2),
                     np.random.default_rng(batch).random((batch, 3, 5)) > 0.3)
        for value, eager in zip(traced(*arguments), attend(*arguments)):
            np.testing.assert_allclose(value, eager, rtol=1e-12, atol=1e-14)
    assert traced.trace_count == 1


def test_multi_head_attention_dropout_float32_and_checkpoint(tmp_path):
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=3, dropout=0.5)
    query, value = random(2, 3, 4).astype(np.float32), random(2, 5, 6).astype(np.float32)
    output, scores = layer(query, value, return_attention_scores=True)
    assert output.dtype == scores.dtype == np.float32
    assert all(v.dtype == np.float32 for v in layer.trainable_variables)
    causal = np.tril(np.ones((1, 3, 5), bool))
    assert layer(query, value, attention_mask=causal).dtype == np.float32
    pairs = at.implicit_grad(lambda q: np.sum(layer(q, value, attention_mask=causal,
                                                    training=True) ** 2))(query)
    assert len(pairs) == 8 and all(g.dtype == np.float32 for g, _ in pairs)
    np.testing.assert_array_equal(layer(query, value), output)  # not training: no dropout
    assert not np.allclose(layer(query, value, training=True), output)

    checkpoint = at.Checkpoint(layer=layer)
    path = checkpoint.save(str(tmp_path / "ckpt"))
    for variable in layer.trainable_variables:
        variable.assign(np.zeros(variable.shape, np.float32))
    checkpoint.restore(path).assert_consumed()
    np.testing.assert_array_equal(layer(query, value), output)


# --- Conv2DTranspose -----------------------------------------------------------------------------

def conv_transpose_reference(x, kernel, stride, size, pad_top, pad_left):
    """Each input pixel adds its channels times the kernel (kh, kw, filters, channels) to a
    window of the output, by loops; the output cropped by the convolution's padding."""
    batch, height, width, _ = x.shape
    kh, kw, filters, _ = kernel.shape
    full = np.zeros((batch, max((height - 1) * stride + kh, size[0] + pad_top),
                     max((width - 1) * stride + kw, size[1] + pad_left), filters))
    for i in range(height):
        for j in range(width):
            full[:, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,abfc->nabf", x[:, i, j], kernel)
    return full[:, pad_top:pad_top + size[0], pad_left:pad_left + size[1]]


@pytest.mark.parametrize("options, size, pads", [
    (dict(strides=2), (7, 9), (0, 0)),  # valid: h * stride + max(kernel - stride, 0)
    (dict(strides=2, padding="same"), (6, 8), (0, 0)),  # SAME's total padding 1: at the bottom
    (dict(strides=1, padding="same"), (3, 4), (1, 1)),
    (dict(strides=2, output_padding=1), (8, 10), (0, 0)),
    # SAME's padding for each size: height 5 total 2, one at the top; width 8 total 1, at the
    # bottom, as TensorFlow's conv2d_transpose (which Keras' layer calls) pads
    (dict(strides=2, padding="same", output_padding=(0, 1)), (5, 8), (1, 0)),
])
def test_conv2d_transpose_output(options, size, pads):
    x = random(2, 3, 4, 3)
    layer = layers.Conv2DTranspose(2, 3, activation="relu", **options)
    layer(x)
    assert layer.kernel.shape == (3, 3, 2, 3)  # Keras' layout: (..., filters, in channels)
    randomize(layer)
    expected = conv_transpose_reference(x, layer.kernel.numpy(), layer.strides[0], size, *pads)
    np.testing.assert_allclose(layer(x), np.maximum(expected + layer.bias.numpy(), 0),
                               rtol=1e-12, atol=1e-14)
    first = layers.Conv2DTranspose(2, 3, data_format="channels_first", **options)
    first(x.transpose(0, 3, 1, 2))
    first.kernel.assign(layer.kernel.numpy())
    np.testing.assert_allclose(first(x.transpose(0, 3, 1, 2)), expected.transpose(0, 3, 1, 2),
                               rtol=1e-12, atol=1e-14)


def test_conv2d_transpose_gradients_and_refusals():
    x = random(2, 3, 3, 2, seed=12)
    layer = layers.Conv2DTranspose(2, (2, 3), strides=(2, 1), padding="same")
    layer(x)
    randomize(layer)
    check_grads(lambda x: layer(x), (x,), modes=("reverse", "forward"))
    weights = random(*layer(x).shape, seed=13)
    pairs = check_variable_gradients(lambda x: np.sum(layer(x) * weights), x)
    assert [v.name for _, v in pairs] == [layer.kernel.name, layer.bias.name]
    with pytest.raises(ValueError, match=re.escape(
            "Conv2DTranspose 'even': output_padding (0, 0) gives outputs of length 4, which "
            "the convolution with kernel 2, stride 2 and padding 'same' maps to length 2, "
            "not 3; choose another output_padding, or None")):
        layers.Conv2DTranspose(1, 2, strides=2, padding="same", output_padding=0,
                               name="even")(x)
    with pytest.raises(ValueError, match=re.escape(
            "Conv2DTranspose: argument `output_padding` must be None or a non-negative integer "
            "or pair of them, each less than its stride (2, 2), got 2")):
        layers.Conv2DTranspose(1, 2, strides=2, output_padding=2)
