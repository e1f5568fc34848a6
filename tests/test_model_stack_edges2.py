"""More edges of the model stack (layers under second derivatives, eager gradients through
layers that change state, optimizers, traced training steps), each checked against eager
NumPy, finite differences or a value computed by hand."""
import numpy as np
import pytest

import autotrace as at
from autotrace import layers
from autotrace.runtime.primitives.keyed_random import draw

_X = np.array([[0.3, -1.2, 0.5], [0.8, 0.1, -0.9], [-0.4, 0.2, 1.1], [1.5, -0.3, 0.0]])
_S = np.array([1.0, 0.7, 1.3])
_WEIGHTS = np.array([1.0, 2.0, 3.0])


def _normalized_by_hand(x, training, mean=0.0, variance=1.0, epsilon=1e-3):
    if training:
        mean, variance = x.mean(axis=0), x.var(axis=0)
    return (x - mean) / np.sqrt(variance + epsilon)


def _central(f, x, step):
    return np.stack([(f(x + step * e) - f(x - step * e)) / (2 * step)
                     for e in np.eye(x.size)], axis=-1)


def _batch_norm_loss(layer, training):
    def loss(s):
        return np.sum(np.tanh(layer(_X * s, training=training)) ** 3)
    return loss


@pytest.mark.parametrize("training, form", [(False, "hessian"), (False, "grad of grad"),
                                            (True, "traced hessian"), (True, "hessian")])
def test_an_unbuilt_batch_normalization_under_second_derivatives(training, form):
    layer = layers.BatchNormalization(momentum=0.5)
    loss = _batch_norm_loss(layer, training)
    if form == "grad of grad":
        derivative = at.grad(lambda s: np.sum(at.grad(loss)(s) * _WEIGHTS))
    else:
        derivative = at.hessian(loss)
    if form.startswith("traced"):
        derivative = at.function(derivative)
    if training and form != "traced hessian":
        # eagerly, the adjoint sweep inside runs the layer's update again: refused, not wrong
        with pytest.raises(at.StateError, match="moving_mean' is assigned inside a function"):
            derivative(_S)
        return
    result = derivative(_S)
    assert layer.built
    moved = layer.moving_mean.numpy()
    np.testing.assert_allclose(moved, 0.5 * (_X * _S).mean(axis=0) if training else 0.0,
                               rtol=1e-12)  # moved once, by the batch's mean

    def gradient_by_hand(s):
        return _central(lambda s: np.sum(np.tanh(_normalized_by_hand(_X * s, training)) ** 3),
                        s, 1e-6)
    np.testing.assert_allclose(at.grad(loss)(_S), gradient_by_hand(_S), rtol=1e-6, atol=1e-8)
    hessian = _central(at.grad(loss), _S, 1e-5)
    expected = hessian @ _WEIGHTS if form == "grad of grad" else hessian
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("traced", [False, True])
def test_gradient_through_a_training_batch_normalization_moves_its_statistics_once(traced):
    layer = layers.BatchNormalization(momentum=0.5)
    loss = _batch_norm_loss(layer, True)
    value_and_grad = at.value_and_grad(loss)
    step = at.function(value_and_grad) if traced else value_and_grad
    inputs = _X * _S
    expected_mean, expected_variance = np.zeros(3), np.ones(3)
    for _ in range(2):
        value, gradient = step(_S)
        expected_mean = 0.5 * expected_mean + 0.5 * inputs.mean(axis=0)
        expected_variance = 0.5 * expected_variance + 0.5 * inputs.var(axis=0)
        np.testing.assert_allclose(layer.moving_mean.numpy(), expected_mean, rtol=1e-12)
        np.testing.assert_allclose(layer.moving_variance.numpy(), expected_variance,
                                   rtol=1e-12)
        by_hand = np.sum(np.tanh(_normalized_by_hand(inputs, True)) ** 3)
        np.testing.assert_allclose(value, by_hand, rtol=1e-12)
        np.testing.assert_allclose(gradient, _central(
            lambda s: np.sum(np.tanh(_normalized_by_hand(_X * s, True)) ** 3), _S, 1e-6),
            rtol=1e-6, atol=1e-8)


def _kept(key, shape):
    # the mask Dropout(0.5) draws from the generator key `key`
    return draw(np.uint64(key), shape, np.float64, "uniform") >= 0.5


@pytest.mark.parametrize("traced", [False, True])
def test_gradient_through_a_training_dropout_uses_the_mask_of_its_value(traced):
    seed = 11
    dropout = layers.Dropout(0.5, seed=seed)
    x = np.linspace(-1.0, 1.0, 12)

    def loss(x):
        return np.sum(np.sin(dropout(x, training=True)) * x)
    value_and_grad = at.value_and_grad(loss)
    step = at.function(value_and_grad) if traced else value_and_grad
    for call in range(2):
        kept = _kept(seed + call, x.shape)
        assert 0 < kept.sum() < kept.size
        value, gradient = step(x)
        # d/dx of sum(sin(2 x) x) where kept, by hand
        np.testing.assert_allclose(value, np.sum(np.where(kept, np.sin(2 * x) * x, 0.0)),
                                   rtol=1e-12)
        np.testing.assert_allclose(
            gradient, np.where(kept, 2 * np.cos(2 * x) * x + np.sin(2 * x), 0.0), rtol=1e-12)
        assert int(dropout.generator.key) == seed + call + 1  # one mask drawn per step


def test_eager_and_traced_implicit_gradients_through_dropout_and_batch_normalization_agree():
    def run(traced):
        at.random.set_seed(3)
        dense = layers.Dense(3, use_bias=False, kernel_initializer="glorot_uniform")
        norm = layers.BatchNormalization(momentum=0.5)
        dropout = layers.Dropout(0.5, seed=4)

        def loss(x):
            return np.sum(np.tanh(dropout(norm(dense(x), training=True), training=True)) ** 2)
        step = at.implicit_value_and_grad(loss)
        step = at.function(step) if traced else step
        results = [step(_X) for _ in range(2)]
        return results, norm.moving_mean.numpy(), int(dropout.generator.key)
    eager, traced = run(False), run(True)
    assert eager[2] == traced[2] == 4 + 2
    np.testing.assert_allclose(eager[1], traced[1], rtol=1e-12)
    for (value, pairs), (traced_value, traced_pairs) in zip(eager[0], traced[0]):
        np.testing.assert_allclose(value, traced_value, rtol=1e-12)
        assert [v.name.split("/")[1] for _, v in pairs] == ["kernel", "gamma", "beta"]
        assert [v.name.split("/")[1] for _, v in traced_pairs] == ["kernel", "gamma", "beta"]
        for (gradient, _), (traced_gradient, _) in zip(pairs, traced_pairs):
            np.testing.assert_allclose(gradient, traced_gradient, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("traced", [False, True])
def test_apply_gradients_refuses_a_variable_given_twice_and_changes_nothing(traced):
    # Keras 3 and tf.keras run one update a pair (Adam's second from the state the first left),
    # which is not the step of the summed gradient the pairs come from: refused, whole
    w, b = at.Variable([1.0, 2.0], name="w"), at.Variable([0.5], name="b")
    optimizer = at.optimizers.Adam(learning_rate=0.1)

    def step(g1, g2):
        return optimizer.apply_gradients([(g1, w), (np.ones(1), b), (g2, w)])
    step = at.function(step) if traced else step
    with pytest.raises(ValueError) as raised:
        step(np.array([1.0, -1.0]), np.array([2.0, 3.0]))
    assert str(raised.value) == (
        "Adam.apply_gradients: Variable 'w' has two gradients (items 0 and 2); give it one, "
        "their sum, where both are parts of one loss's gradient")
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(b.numpy(), [0.5])
    assert int(optimizer.iterations) == 0
    # a pair whose gradient is None is skipped, and names no second gradient; the one step is
    # Adam's first: each element moves by the learning rate against its gradient's sign
    optimizer.apply_gradients([(None, w), (np.array([3.0, -3.0]), w)])
    np.testing.assert_allclose(w.numpy(), [0.9, 2.1], rtol=1e-6)


def _written_apart(x, v, w):
    a = x * 2.0
    v.assign(a)
    w.assign(a)
    return a[1:]


@pytest.mark.parametrize("body, expected_v, expected_w", [
    (lambda x, v, w: v.assign(x), [1.0, 2.0, 3.0], None),  # the caller's array itself
    (lambda x, v, w: (v.assign(x * 2.0), w.assign(v)), [2.0, 4.0, 6.0], [2.0, 4.0, 6.0]),
    (lambda x, v, w: (v.assign(x.T), x[::-1]), [1.0, 2.0, 3.0], None),  # a view of it
    (_written_apart, [2.0, 4.0, 6.0], [2.0, 4.0, 6.0]),  # a new array, returned viewed too
    (lambda x, v, w: (v.assign(x + 1.0), w.assign(x + 1.0)), [2.0, 3.0, 4.0], [2.0, 3.0, 4.0]),
])
def test_variables_written_by_a_cached_trace_own_their_arrays(body, expected_v, expected_w):
    v, w = at.Variable(np.zeros(3), name="v"), at.Variable(np.zeros(3), name="w")
    step = at.function(lambda x: body(x, v, w))
    for _ in range(2):  # the trace, then the cached graph
        x = np.array([1.0, 2.0, 3.0])
        result = step(x)
        arrays = [x] + [item for item in (result if isinstance(result, tuple) else [result])
                        if isinstance(item, np.ndarray) and item.flags.writeable]
        for array in arrays:  # a write into what the caller holds reaches no Variable
            array[...] = -7.0
        np.testing.assert_array_equal(v.numpy(), expected_v)
        if expected_w is not None:
            np.testing.assert_array_equal(w.numpy(), expected_w)
        for variable in (v, w):
            with pytest.raises(ValueError, match="read-only"):
                np.asarray(variable)[0] = 1.0
    assert step.trace_count == 1


@pytest.mark.parametrize("traced", [False, True])
def test_a_statistic_read_before_the_layer_updates_it_is_refused_not_differentiated(traced):
    layer = layers.BatchNormalization(momentum=0.5, name="read_first")
    layer(_X)

    def loss(s):  # its gradient is moving_mean as it was; the adjoint would read the new one
        return np.sum(s * layer.moving_mean) + np.sum(layer(_X * s, training=True))
    gradient = at.function(at.grad(loss)) if traced else at.grad(loss)
    with pytest.raises(at.StateError) as raised:
        gradient(_S)
    assert str(raised.value).startswith(
        "Variable 'read_first/moving_mean' is read by a function that autotrace.grad "
        "differentiates, then assigned by a call it makes (a layer's update)")
    np.testing.assert_array_equal(layer.moving_mean.numpy(), np.zeros(3))  # left as it was

    def loss_after(s):  # read after the update: the value both sweeps read
        y = layer(_X * s, training=True)
        return np.sum(s * layer.moving_mean) + np.sum(y)
    step = at.function(at.grad(loss_after)) if traced else at.grad(loss_after)
    np.testing.assert_allclose(step(_S), 0.5 * (_X * _S).mean(axis=0), atol=1e-12)


@pytest.mark.parametrize("traced", [False, True])
def test_an_assignment_in_a_differentiated_function_is_refused_traced_as_eagerly(traced):
    # traced, the adjoint sweep read the new value: 2 x v_old + 2 x v_new, [4, 8] for [2, 4]
    v = at.Variable(np.array([1.0, 2.0]), name="scaled")

    def f(x):
        y = np.sum(x * v * x)
        v.assign(v * 3.0)
        return y
    gradient = at.function(at.grad(f)) if traced else at.grad(f)
    with pytest.raises(at.StateError, match="Variable 'scaled' is assigned inside a function "
                                            "that autotrace.grad differentiates"):
        gradient(np.ones(2))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    assert at.grad(lambda x: np.sum(x * v * x))(np.ones(2)).tolist() == [2.0, 4.0]
