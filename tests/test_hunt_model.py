"""The model stack as Keras users write it: custom layers, training steps eager and traced,
checked against NumPy references."""
import numpy as np
import pytest

import autotrace as at
from autotrace import layers


class Scale(layers.Layer):
    """A custom layer whose weights take add_weight's default dtype."""

    def build(self, input_shape):
        self.add_weight("kernel", (input_shape[-1], 2), initializer="ones")
        self.add_weight("calls", (), initializer="zeros", trainable=False)

    def call(self, inputs):
        self.calls.assign_add(1.0)
        return inputs @ self.kernel


@pytest.mark.parametrize("inputs_dtype, policy, weight_dtype", [
    (np.float32, None, np.float32),      # a float32 model stays float32, as in Keras
    (np.float64, None, np.float64),
    (np.int64, None, np.float64),
    (np.float64, "float32", np.float32),  # the layer's policy decides
])
def test_custom_layer_add_weight_takes_the_layers_dtype(inputs_dtype, policy, weight_dtype):
    layer = Scale(dtype=policy)
    inputs = np.arange(6).reshape(2, 3).astype(inputs_dtype)
    outputs = layer(inputs)
    assert layer.kernel.dtype == weight_dtype and layer.calls.dtype == weight_dtype
    assert outputs.dtype == weight_dtype
    np.testing.assert_array_equal(outputs, [[3.0, 3.0], [12.0, 12.0]])

    @at.function
    def step(x):
        (gradient, variable), = at.implicit_grad(lambda x: np.sum(layer(x) ** 2))(x)
        variable.assign_sub(0.01 * gradient)
        return gradient

    gradient = step(inputs)
    assert gradient.dtype == weight_dtype
    x = inputs.astype(np.float64)
    np.testing.assert_allclose(gradient, x.T @ (2 * x @ np.ones((3, 2))), rtol=1e-6)
    step(inputs)
    assert float(layer.calls) == 3.0  # one a call, traced or cached; none in the adjoint


class TracedCalls(at.Module):
    """A tf.Module whose `__call__` and another method are traced, as TensorFlow's guide
    writes them."""

    def __init__(self):
        super().__init__()
        self.w = at.Variable(np.array([1.0, 2.0], np.float32), name="w")
        self.v = at.Variable(np.array([0.5], np.float32), name="v")

    @at.function
    def __call__(self, x):
        return np.sum(np.sin(x * self.w)) + self.other(x)

    @at.function
    def other(self, x):
        return np.sum(x * self.v) ** 2


@pytest.mark.parametrize("traced_step", [False, True])
def test_implicit_grad_through_traced_methods_of_a_module(traced_step):
    module = TracedCalls()
    x = np.array([0.5, 0.3], np.float32)

    def gradients(x):
        return at.implicit_grad(lambda x: module(x) * 2 + module.other(x))(x)

    gradients_and_variables = (at.function(gradients) if traced_step else gradients)(x)
    assert [variable.name for _, variable in gradients_and_variables] == ["w", "v"]
    (w_gradient, _), (v_gradient, _) = gradients_and_variables
    assert w_gradient.dtype == v_gradient.dtype == np.float32
    x = x.astype(np.float64)
    np.testing.assert_allclose(w_gradient, 2 * x * np.cos(x * [1.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(v_gradient, [3 * 2 * np.sum(x * 0.5) * np.sum(x)], rtol=1e-6)


def test_implicit_grad_of_a_traced_method_alone_gives_its_variables_gradient():
    module = TracedCalls()
    x = np.array([0.5, 0.3], np.float32)   # (the method's Variables were left out, silently)
    (gradient, variable), = at.implicit_grad(lambda x: module.other(x))(x)
    assert variable is module.v
    np.testing.assert_allclose(gradient, [2 * 0.8 * 0.5 * 0.8], rtol=1e-6)


def test_clip_by_norm_takes_a_list_of_axes_as_tensorflow_does():
    t = np.array([[3.0, 4.0], [0.0, 0.5]], np.float32)
    for axes in ([1], (1,), 1):
        clipped = at.clip_by_norm(t, 1.0, axes=axes)
        assert clipped.dtype == np.float32
        np.testing.assert_allclose(clipped, [[0.6, 0.8], [0.0, 0.5]], rtol=1e-6)
    np.testing.assert_allclose(at.clip_by_norm(t, 2.5, axes=[0, 1]), t * 2.5 / np.sqrt(25.25),
                               rtol=1e-6)


class Callable:
    """A plain object (no Module) holding a Variable, called as a function."""

    def __init__(self):
        self.w = at.Variable(np.array([1.0, 2.0]), name="callable_w")

    def __call__(self, x):
        return np.sum(np.sin(x * self.w))


class TracedCallable(Callable):
    @at.function
    def __call__(self, x):
        return np.sum(np.sin(x * self.w))


@pytest.mark.parametrize("held_as", ["callable", "traced callable", "bound method"])
@pytest.mark.parametrize("traced_step", [False, True])
def test_implicit_grad_of_a_callable_reached_through_a_closure(held_as, traced_step):
    # (its Variable got no gradient, silently, where `held` is no argument)
    held = {"callable": Callable, "traced callable": TracedCallable,
            "bound method": lambda: Callable().__call__}[held_as]()
    x = np.array([0.3, 0.6])
    gradients = at.implicit_grad(lambda x: held(x) ** 2)
    (gradient, variable), = (at.function(gradients) if traced_step else gradients)(x)
    assert variable is getattr(held, "__self__", held).w
    w = np.array([1.0, 2.0])
    np.testing.assert_allclose(gradient, 2 * np.sum(np.sin(x * w)) * x * np.cos(x * w))
    dfdx = 2 * np.sum(np.sin(x * w)) * w * np.cos(x * w)
    np.testing.assert_allclose(at.grad(lambda x: held(x) ** 2)(x), dfdx)
    np.testing.assert_allclose(at.jvp(lambda x: held(x) ** 2, (x,), (np.ones(2),))[1],
                               np.sum(dfdx))
