"""Freezing: Keras's `layer.trainable = False` on layers and modules (their Variables, at any
depth, leave trainable_variables, implicit_grad and the optimizers; a frozen
BatchNormalization runs in inference mode), and traced functions that trace again when a
Variable's trainable flag they read changes."""
import numpy as np
import pytest

import autotrace
from autotrace import Variable, layers, optimizers


def two_dense_layers():
    """Sequential(Dense(2), Dense(1)) on ones((4, 3)), with weights set by hand."""
    model = layers.Sequential([layers.Dense(2), layers.Dense(1)])
    model(np.ones((4, 3)))
    first, second = model.layers
    first.kernel.assign(np.full((3, 2), 0.5))
    first.bias.assign([0.0, 1.0])
    second.kernel.assign([[1.0], [2.0]])
    second.bias.assign([0.5])
    return model


def names(variables):
    return [variable.name.split("/")[-1] for variable in variables]


def test_a_frozen_layer_is_left_out_of_trainable_variables_gradients_and_updates():
    model = two_dense_layers()
    first, second = model.layers
    first.trainable = False
    assert not first.trainable and model.trainable and second.trainable
    assert model.trainable_variables == [second.kernel, second.bias]
    assert model.non_trainable_variables == [first.kernel, first.bias]
    assert first.trainable_variables == [] and names(first.non_trainable_variables) == [
        "kernel", "bias"]
    # loss = sum(h @ k2 + b2), h = x @ k1 + b1 = [1.5, 2.5] per row: dk2 = 4 * h, db2 = 4.
    x = np.ones((4, 3))
    pairs = autotrace.implicit_grad(lambda x: np.sum(model(x)))(x)
    assert [variable for _, variable in pairs] == [second.kernel, second.bias]
    assert [gradient.tolist() for gradient, _ in pairs] == [[[6.0], [10.0]], [4.0]]
    optimizers.SGD(0.1).apply_gradients(pairs)
    assert first.kernel.numpy().tolist() == [[0.5, 0.5]] * 3
    np.testing.assert_allclose(second.kernel.numpy(), [[1.0 - 0.6], [2.0 - 1.0]], rtol=1e-15)
    # minimize finds the trainable Variables the loss reads: the frozen ones are not.
    optimizers.SGD(0.1).minimize(lambda: np.sum(model(x)))
    assert first.kernel.numpy().tolist() == [[0.5, 0.5]] * 3


def test_freezing_a_container_freezes_its_layers_and_unfreezing_restores_them():
    model = two_dense_layers()
    model.trainable = False
    assert [layer.trainable for layer in model.layers] == [False, False]
    assert model.trainable_variables == [] and len(model.non_trainable_variables) == 4
    model.add(layers.Dense(1))                 # given to a frozen model: frozen too
    model(np.ones((4, 3)))
    assert not model.layers[2].trainable and model.trainable_variables == []
    model.trainable = True                     # as Keras: every sub-layer trains again
    assert [layer.trainable for layer in model.layers] == [True, True, True]
    assert len(model.trainable_variables) == 6


def test_a_layer_frozen_before_it_builds_makes_its_weights_frozen():
    layer = layers.Dense(2)
    layer.trainable = False
    layer(np.ones((1, 3)))
    assert layer.trainable_variables == [] and names(layer.non_trainable_variables) == [
        "kernel", "bias"]
    layer.trainable = True
    assert names(layer.trainable_variables) == ["kernel", "bias"]


def test_a_variable_made_non_trainable_by_its_user_stays_so_after_unfreezing():
    layer = layers.Dense(1)
    layer(np.ones((1, 2)))
    layer.bias.trainable = False
    layer.trainable = False
    layer.trainable = True
    assert layer.trainable_variables == [layer.kernel]


def test_a_frozen_batch_normalization_runs_in_inference_mode():
    layer = layers.BatchNormalization(momentum=0.5)
    x = np.array([[0.0], [2.0]])
    layer(x, training=True)                    # moving mean 0.5 * 0 + 0.5 * 1 = 0.5
    layer.trainable = False
    assert names(layer.non_trainable_variables) == [
        "gamma", "beta", "moving_mean", "moving_variance"]
    # (x - 0.5) / sqrt(1 + 1e-3), not the batch's (x - 1) / sqrt(1 + 1e-3); no update.
    np.testing.assert_allclose(layer(x, training=True)[:, 0],
                               np.array([-0.5, 1.5]) / np.sqrt(1.001), rtol=1e-12)
    assert layer.moving_mean.numpy().tolist() == [0.5]
    layer.trainable = True                     # the moving statistics stay non-trainable
    assert names(layer.trainable_variables) == ["gamma", "beta"]


def test_a_traced_step_traces_again_when_a_trainable_flag_it_read_changes():
    a, b = Variable(2.0, name="a"), Variable(3.0, name="b")
    optimizer = optimizers.SGD(0.1)

    @autotrace.function
    def step(x):
        optimizer.apply_gradients(autotrace.implicit_grad(lambda x: a * b * x)(x))

    step(1.0)                                  # a = 2 - 0.1 * 3, b = 3 - 0.1 * 2
    b.trainable = False
    step(1.0)                                  # a = 1.7 - 0.1 * 2.8; b stays
    assert (float(a), float(b), step.trace_count) == (pytest.approx(1.42, abs=1e-15), 2.8, 2)
    step(1.0)                                  # from the cache again
    assert step.trace_count == 2
    b.trainable = True
    step(1.0)                                  # both again: b = 2.8 - 0.1 * a
    assert step.trace_count == 3 and float(b) == pytest.approx(2.8 - 0.1 * (1.42 - 0.28))


def test_a_traced_step_traces_again_when_a_layer_is_frozen():
    model = two_dense_layers()
    optimizer = optimizers.SGD(0.1)

    @autotrace.function
    def step(x):
        optimizer.minimize(lambda: np.sum(model(x)))

    x = np.ones((4, 3))
    step(x)
    first_kernel = model.layers[0].kernel.numpy()
    model.layers[0].trainable = False
    step(x)
    assert step.trace_count == 2
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), first_kernel)


def test_a_concrete_function_refuses_a_changed_trainable_flag():
    w = Variable(1.0, name="w")

    def loss(x):
        return w * x

    step = autotrace.function(lambda x: autotrace.implicit_grad(loss)(x)[0][0])
    concrete = step.get_concrete_function(2.0)
    w.trainable = False
    with pytest.raises(TypeError, match=r"no longer fits the state of the objects it reads: "
                                        r"Variable 'w' was made non-trainable since the "
                                        r"function was traced\."):
        concrete(2.0)


def test_a_batch_normalization_frozen_after_a_trace_runs_in_inference_mode():
    # (a traced function noted the Variables' flags only: the layer's own, which decides its
    # mode, was baked into the trace, which kept updating the moving statistics)
    norm = layers.BatchNormalization(center=False, scale=False)
    x = np.arange(12.0).reshape(4, 3)
    normalized = autotrace.function(lambda x: norm(x, training=True))
    normalized(x)
    before = np.array(norm.moving_mean.read())
    norm.trainable = False
    np.testing.assert_allclose(normalized(x), norm(x, training=False))
    np.testing.assert_array_equal(norm.moving_mean.read(), before)
    assert normalized.trace_count == 2


class _Configured(autotrace.Module):
    """Holds an object that refers back to it (a config with an owner)."""

    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(2)
        self.config = type("Config", (), {})()
        self.config.owner = self
        self.dense.parent = self

    def call(self, x):
        return self.dense(x)


def test_freezing_a_module_that_objects_it_holds_refer_back_to():
    # (each module set walked again from its own attributes: RecursionError)
    module = _Configured()
    module(np.ones((1, 3)))
    module.trainable = False
    assert module.trainable_variables == [] and len(module.non_trainable_variables) == 2
    module.trainable = True
    assert len(module.trainable_variables) == 2


class _Wrapping(layers.Layer):
    """A layer whose call passes its keywords on: it takes training, as Keras reads it."""

    def __init__(self):
        super().__init__()
        self.norm = layers.BatchNormalization()

    def call(self, inputs, **kwargs):
        return self.norm(inputs, **kwargs)


def test_a_layer_whose_call_takes_keywords_gets_training():
    layer = _Wrapping()
    x = np.arange(12.0).reshape(4, 3)
    layer(x, training=True)
    assert not np.allclose(layer.norm.moving_mean.read(), 0.0)
    model = layers.Sequential([_Wrapping()])
    model(x, training=True)
    assert not np.allclose(model.layers[0].norm.moving_mean.read(), 0.0)
