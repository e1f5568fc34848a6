"""Mixed precision: dtype policies of layers (outputs in the compute dtype, weights in the
variable dtype, gradients in the weights' dtype), floatx, and the LossScaleOptimizer (scaled
loss, unscaled gradients, skipped steps and halved scale on overflow, doubled scale after
the growth steps) against hand-computed updates, eagerly, traced and checkpointed."""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace import layers, mixed_precision, optimizers


@pytest.fixture(autouse=True)
def no_global_policy():
    """Each test starts and ends without a global policy (autotrace's default)."""
    mixed_precision.set_global_policy(None)
    yield
    mixed_precision.set_global_policy(None)


def random(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_policy_names_and_dtypes():
    policy = mixed_precision.Policy("mixed_float16")
    assert (policy.name, policy.compute_dtype, policy.variable_dtype) == (
        "mixed_float16", "float16", "float32")
    assert mixed_precision.Policy("float64").compute_dtype == "float64"
    with pytest.raises(ValueError, match=re.escape(
            "Policy: argument `name` must be one of 'float16', 'float32', 'float64', "
            "'mixed_float16', got 'mixed_bfloat16' (NumPy has no bfloat16; use "
            "'mixed_float16')")):
        mixed_precision.Policy("mixed_bfloat16")
    with pytest.raises(ValueError, match=re.escape(
            "Dense: argument `dtype` must be a Policy or one of 'float16', 'float32', "
            "'float64', 'mixed_float16', got 'int8'")):
        layers.Dense(2, dtype="int8")


def test_dense_under_mixed_float16_computes_in_float16():
    mixed_precision.set_global_policy("mixed_float16")
    model = layers.Sequential([layers.Dense(3, activation="relu"), layers.Dense(2)])
    x = random(4, 5, dtype=np.float64)
    outputs = model(x)
    assert outputs.dtype == np.float16
    assert [v.dtype for v in model.variables] == [np.float32] * 4
    first, second = model.layers
    # the same computation written out in float16
    hidden = np.maximum(x.astype(np.float16) @ first.kernel.numpy().astype(np.float16) +
                        first.bias.numpy().astype(np.float16), 0)
    expected = (hidden @ second.kernel.numpy().astype(np.float16) +
                second.bias.numpy().astype(np.float16))
    np.testing.assert_array_equal(outputs, expected)

    def loss():
        return np.mean(model(x).astype(np.float32) ** 2)
    value, grads_and_vars = at.implicit_value_and_grad(loss)()
    assert [g.dtype for g, _ in grads_and_vars] == [np.float32] * 4


def test_layer_dtype_argument_over_the_global_policy():
    mixed_precision.set_global_policy("mixed_float16")
    layer = layers.Dense(2, dtype="float64")
    assert layer(random(1, 3)).dtype == np.float64 and layer.kernel.dtype == np.float64
    assert layers.Dense(2).dtype_policy == mixed_precision.Policy("mixed_float16")
    # integer indices are not cast; the embeddings are float32, looked up in float16
    embedding = layers.Embedding(5, 2)
    assert embedding(np.array([[0, 4]])).dtype == np.float16
    assert embedding.embeddings.dtype == np.float32


def test_layers_that_cannot_compute_mixed_refuse():
    class Scale(layers.Layer):   # reads its weight uncast: it cannot compute mixed
        default_name = "scale"

        def build(self, input_shape):
            self.add_weight("factor", (input_shape[-1],), initializer="ones")

        def call(self, inputs):
            return inputs * self.factor

    layer = Scale(dtype="mixed_float16", name="scaling")
    with pytest.raises(TypeError, match=re.escape(
            "Scale 'scaling' does not support the mixed policy 'mixed_float16' yet (its "
            "weights ['scaling/factor'] would be used in float32); give it dtype='float16' or "
            "'float32'")):
        layer(random(2, 3, 4))
    with pytest.raises(TypeError, match="does not support the mixed policy"):
        layer(random(2, 3, 4))   # built now, and still refused
    # layers without weights are fine
    assert layers.Flatten(dtype="mixed_float16")(random(2, 3, 1)).dtype == np.float16


def test_attention_under_mixed_float16_masks_and_normalizes_in_float32():
    attention = layers.MultiHeadAttention(num_heads=2, key_dim=3, dtype="mixed_float16")
    twin = layers.MultiHeadAttention(num_heads=2, key_dim=3, dtype="float32")
    query, value = random(2, 4, 5), random(2, 6, 5)
    attention(query, value)
    twin(query, value)
    for variable, other in zip(attention.trainable_variables, twin.trainable_variables):
        assert variable.dtype == np.float32
        other.assign(variable.numpy())
    outputs, weights = attention(query, value, return_attention_scores=True)
    expected, expected_weights = twin(query, value, return_attention_scores=True)
    assert outputs.dtype == weights.dtype == np.float16
    np.testing.assert_allclose(outputs, expected, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(weights, expected_weights, rtol=2e-2, atol=2e-3)
    # a causal mask: masked weights are exactly 0 (-1e9 would be -inf in float16) and each
    # row still sums to 1
    square = random(2, 4, 5)
    causal = attention(square, square, use_causal_mask=True, return_attention_scores=True)[1]
    assert np.all(causal[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0)
    np.testing.assert_allclose(np.sum(causal.astype(np.float32), axis=-1), 1.0, atol=5e-3)

    traced = at.function(lambda q, v: attention(q, v))
    np.testing.assert_array_equal(traced(query, value), outputs)

    def loss():
        return np.sum(attention(query, value).astype(np.float32) ** 2)
    _, grads_and_vars = at.implicit_value_and_grad(loss)()
    assert len(grads_and_vars) == 8 and all(g.dtype == np.float32 for g, _ in grads_and_vars)

    def twin_loss():
        return np.sum(twin(query, value) ** 2)
    _, twin_grads = at.implicit_value_and_grad(twin_loss)()
    # the key biases' gradients are 0 but for rounding (a shift of every key's score for one
    # query leaves its softmax as it is): tolerances scale with the largest gradient
    largest = max(float(np.max(np.abs(h))) for h, _ in twin_grads)
    for (g, _), (h, _) in zip(grads_and_vars, twin_grads):
        np.testing.assert_allclose(g, h, rtol=5e-2, atol=2e-2 * largest)


@pytest.mark.parametrize("make, shape", [
    (lambda dtype: layers.LayerNormalization(dtype=dtype), (3, 4)),
    (lambda dtype: layers.BatchNormalization(dtype=dtype), (3, 4)),
    (lambda dtype: layers.Conv1D(2, 3, padding="causal", dilation_rate=2, dtype=dtype), (6, 2)),
    (lambda dtype: layers.Conv2D(2, 2, dtype=dtype), (4, 4, 2)),
    (lambda dtype: layers.LSTM(3, return_sequences=True, dtype=dtype), (4, 2)),
    (lambda dtype: layers.GRU(3, dtype=dtype), (4, 2)),
    (lambda dtype: layers.SimpleRNN(3, dtype=dtype), (4, 2)),
])
def test_layers_under_mixed_float16_match_float32(make, shape):
    x = random(2, *shape)
    mixed, single = make("mixed_float16"), make("float32")
    mixed(x)
    single(x)
    for variable, twin in zip(mixed.variables, single.variables):
        assert variable.dtype == np.float32
        variable.assign(twin.numpy() + random(*twin.shape, seed=variable.size) * 0.1)
        twin.assign(variable.numpy())
    kwargs = {"training": True} if isinstance(mixed, layers.BatchNormalization) else {}
    outputs = mixed(x, **kwargs)
    assert outputs.dtype == np.float16
    np.testing.assert_allclose(outputs, single(x, **kwargs), rtol=2e-2, atol=2e-2)

    def loss():
        return np.sum(mixed(x).astype(np.float32) ** 2)
    _, grads_and_vars = at.implicit_value_and_grad(loss)()
    assert grads_and_vars and all(g.dtype == np.float32 for g, _ in grads_and_vars)


def test_floatx():
    assert at.config.floatx() is None
    assert layers.Dense(2)(random(1, 3)).dtype == np.float32       # the inputs' dtype
    assert layers.Dense(2)(np.ones((1, 3))).dtype == np.float64
    at.config.set_floatx("float32")
    assert at.config.floatx() == "float32"
    for layer in (layers.Dense(2), layers.Conv1D(2, 1), layers.SimpleRNN(2)):
        assert layer(np.ones((1, 3, 2))).dtype == np.float32
        assert {v.dtype for v in layer.variables} == {np.dtype(np.float32)}
    at.config.set_floatx(None)
    assert at.config.floatx() is None and mixed_precision.global_policy() is None
    with pytest.raises(ValueError, match=re.escape(
            "set_floatx: argument `name` must be one of ('float16', 'float32', 'float64') or "
            "None, got 'float8'")):
        at.config.set_floatx("float8")


# --- loss scaling ------------------------------------------------------------------------------

def test_scaled_loss_and_unscaled_gradients():
    optimizer = mixed_precision.LossScaleOptimizer(optimizers.SGD(0.1), initial_scale=8.0)
    assert float(optimizer.get_scaled_loss(np.float32(1.5))) == 12.0
    assert optimizer.get_scaled_loss(np.float32(1.5)).dtype == np.float32
    unscaled = optimizer.get_unscaled_gradients([np.array([8.0, 16.0], np.float32), None])
    np.testing.assert_array_equal(unscaled[0], [1.0, 2.0])
    assert unscaled[0].dtype == np.float32 and unscaled[1] is None


def sgd_run(optimizer, w, gradients):
    """Apply each gradient in turn; the scale after each step."""
    scales = []
    for gradient in gradients:
        optimizer.apply_gradients([(np.array(gradient, np.float32), w)])
        scales.append(float(optimizer.loss_scale))
    return scales


def test_dynamic_scale_halves_and_skips_then_doubles():
    w = at.Variable(np.array([1.0, 2.0], np.float32))
    optimizer = mixed_precision.LossScaleOptimizer(optimizers.SGD(0.5, momentum=0.5),
                                                   initial_scale=16.0, dynamic_growth_steps=3)
    scales = sgd_run(optimizer, w, [[1.0, 1.0], [np.inf, 1.0], [np.nan, 0.0],
                                    [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    assert scales == [16.0, 8.0, 4.0, 4.0, 4.0, 8.0, 8.0]
    # four applied steps of momentum SGD on gradient 1, by hand
    velocity, value = 0.0, np.array([1.0, 2.0])
    for _ in range(5):
        velocity = 0.5 * velocity - 0.5 * 1.0
        value = value + velocity
    np.testing.assert_allclose(w.numpy(), value, rtol=1e-6)
    assert int(optimizer.iterations) == 5 and int(optimizer.step_counter) == 1
    assert w.dtype == np.float32


def test_skipped_step_changes_nothing():
    w = at.Variable(np.array([1.0, 2.0], np.float32))
    optimizer = mixed_precision.LossScaleOptimizer(optimizers.Adam(0.1))
    optimizer.apply_gradients([(np.array([0.5, -1.0], np.float32), w)])
    state = [v.numpy() for v in optimizer.variables] + [w.numpy()]
    optimizer.apply_gradients([(np.array([np.inf, 1.0], np.float32), w)])
    after = [v.numpy() for v in optimizer.variables] + [w.numpy()]
    names = [v.name for v in optimizer.variables]
    for name, old, new in zip(names + ["w"], state, after):
        if name not in ("loss_scale_optimizer/dynamic_scale", "loss_scale_optimizer/step_counter"):
            np.testing.assert_array_equal(new, old, err_msg=name)
    assert float(optimizer.loss_scale) == 2.0 ** 14 and int(optimizer.step_counter) == 0
    assert len(names) == 6  # iterations, learning rate, Adam's m and v, the scale, the counter


def test_fixed_scale_applies_every_step():
    w = at.Variable(np.array([1.0], np.float32))
    optimizer = mixed_precision.LossScaleOptimizer(optimizers.SGD(1.0), dynamic=False,
                                                   initial_scale=4.0)
    optimizer.apply_gradients([(np.array([0.25], np.float32), w)])
    assert w.numpy()[0] == 0.75 and float(optimizer.loss_scale) == 4.0


def mixed_model_and_data():
    layer = layers.Dense(1, use_bias=False, dtype="mixed_float16")
    x = np.array([[1.0, 2.0]], np.float32)
    layer(x)
    layer.kernel.assign(np.array([[0.5], [-0.25]], np.float32))
    return layer, x


def test_mixed_dense_step_matches_a_hand_computed_update():
    layer, x = mixed_model_and_data()
    optimizer = mixed_precision.LossScaleOptimizer(optimizers.SGD(0.1), initial_scale=1024.0)

    def loss():
        return np.sum(layer(x).astype(np.float32) ** 2)
    layer.kernel.assign(np.array([[1.0], [0.5]], np.float32))
    value = optimizer.minimize(loss)
    y = 1.0 + 1.0
    assert float(value) == y ** 2
    np.testing.assert_allclose(layer.kernel.numpy(), [[1.0 - 0.1 * 2 * y * 1.0],
                                                      [0.5 - 0.1 * 2 * y * 2.0]], rtol=1e-6)
    assert layer.kernel.dtype == np.float32


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_a_gradient_overflowing_float16_is_skipped():
    layer, x = mixed_model_and_data()
    optimizer = mixed_precision.LossScaleOptimizer(optimizers.SGD(0.1), initial_scale=2.0**15)

    def scaled_loss():
        return optimizer.get_scaled_loss(np.sum(layer(x)))      # a float16 loss
    _, grads_and_vars = at.implicit_value_and_grad(scaled_loss)()
    gradient = optimizer.get_unscaled_gradients([grads_and_vars[0][0]])[0]
    # the scaled gradient is 2**15 x = [2**15, 2**16] in float16, whose largest is 65504
    assert gradient.dtype == np.float32
    assert gradient[0, 0] == 1.0 and np.isinf(gradient[1, 0])
    optimizer.apply_gradients([(gradient, layer.kernel)])
    np.testing.assert_array_equal(layer.kernel.numpy(), [[0.5], [-0.25]])
    assert float(optimizer.loss_scale) == 2.0 ** 14
    # at the halved scale the same step is finite and applied
    _, grads_and_vars = at.implicit_value_and_grad(scaled_loss)()
    gradient = optimizer.get_unscaled_gradients([grads_and_vars[0][0]])[0]
    optimizer.apply_gradients([(gradient, layer.kernel)])
    np.testing.assert_allclose(layer.kernel.numpy(), [[0.5 - 0.1], [-0.25 - 0.2]], rtol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_traced_step_with_an_unknown_batch_size():
    layer = layers.Dense(2, dtype="mixed_float16")
    x = random(3, 4)
    layer(x)
    optimizer = mixed_precision.LossScaleOptimizer(optimizers.SGD(0.1), initial_scale=4.0,
                                                   dynamic_growth_steps=2)
    eager_layer = layers.Dense(2, dtype="mixed_float16")
    eager_layer(x)
    eager_layer.kernel.assign(layer.kernel.numpy())
    eager = mixed_precision.LossScaleOptimizer(optimizers.SGD(0.1), initial_scale=4.0,
                                               dynamic_growth_steps=2)

    def step_of(model, optimizer):
        def step(x, poison):
            def scaled_loss():
                loss = np.mean(model(x).astype(np.float32) ** 2) * poison
                return optimizer.get_scaled_loss(loss)
            _, grads_and_vars = at.implicit_value_and_grad(scaled_loss)()
            gradients = optimizer.get_unscaled_gradients([g for g, _ in grads_and_vars])
            optimizer.apply_gradients(zip(gradients, [v for _, v in grads_and_vars]))
            return model(x)
        return step
    traced = at.function(step_of(layer, optimizer),
                         input_signature=[at.Spec((None, 4), np.float32),
                                          at.Spec((), np.float32)])
    eager_step = step_of(eager_layer, eager)
    scales = []
    for batch, poison in [(x, 1.0), (x[:2], 1.0), (x, np.inf), (x[:1], 1.0), (x, 1.0)]:
        outputs = traced(batch, np.float32(poison))
        expected = eager_step(batch, np.float32(poison))
        assert outputs.dtype == np.float16
        # float16 results of one rounding or two, traced and eager
        np.testing.assert_allclose(outputs, expected, rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(layer.kernel.numpy(), eager_layer.kernel.numpy(),
                                   rtol=1e-3, atol=1e-4)
        assert float(optimizer.loss_scale) == float(eager.loss_scale)
        scales.append(float(optimizer.loss_scale))
    # two finite steps double the scale, the inf step halves it
    assert scales == [4.0, 8.0, 4.0, 4.0, 8.0]
    assert int(optimizer.iterations) == 4


def test_checkpoint_saves_and_restores_the_loss_scale(tmp_path):
    layer, x = mixed_model_and_data()
    optimizer = mixed_precision.LossScaleOptimizer(optimizers.Adam(0.01), initial_scale=64.0,
                                                   dynamic_growth_steps=2)
    w = layer.kernel
    for gradient in ([[1.0], [1.0]], [[np.nan], [1.0]], [[1.0], [2.0]]):
        optimizer.apply_gradients([(np.array(gradient, np.float32), w)])
    assert float(optimizer.loss_scale) == 32.0 and int(optimizer.step_counter) == 1
    path = at.Checkpoint(model=layer, optimizer=optimizer).save(tmp_path / "ckpt")

    fresh_layer, _ = mixed_model_and_data()
    fresh = mixed_precision.LossScaleOptimizer(optimizers.Adam(0.01), initial_scale=64.0,
                                               dynamic_growth_steps=2)
    at.Checkpoint(model=fresh_layer, optimizer=fresh).restore(path)
    assert float(fresh.loss_scale) == 32.0 and int(fresh.step_counter) == 1
    assert int(fresh.iterations) == 2
    # one more finite step doubles both scales, and moves both the same
    for opt, kernel in ((optimizer, w), (fresh, fresh_layer.kernel)):
        opt.apply_gradients([(np.array([[0.5], [0.5]], np.float32), kernel)])
        assert float(opt.loss_scale) == 64.0
    np.testing.assert_array_equal(fresh_layer.kernel.numpy(), w.numpy())


def test_input_gradients_through_a_policy_cast():
    """The transforms differentiate a layer with a policy as it runs: its float64 inputs cast
    to float32 first, so the gradient is that of the float32 computation, cast back."""
    layer = layers.Dense(2, activation="tanh", dtype="float32")
    x = random(3, 4, dtype=np.float64)
    layer(x)
    layer.kernel.assign(random(4, 2, seed=5))
    kernel = layer.kernel.numpy().astype(np.float64)
    weights = random(3, 2, seed=4, dtype=np.float64)

    def loss(x):
        return np.sum(layer(x).astype(np.float64) * weights)
    gradient = at.grad(loss)(x)
    assert gradient.dtype == np.float64
    # by hand: d/dx sum(tanh(x k + b) w) = ((1 - tanh^2) w) k^T
    outputs = np.tanh(x @ kernel + layer.bias.numpy())
    # float32 arithmetic: errors of a few float32 roundings
    np.testing.assert_allclose(gradient, ((1 - outputs ** 2) * weights) @ kernel.T, rtol=1e-5,
                               atol=1e-6)
    tangent = at.jvp(loss, (x,), (np.ones_like(x),))[1]
    np.testing.assert_allclose(tangent, np.sum(gradient), rtol=1e-5, atol=1e-6)
