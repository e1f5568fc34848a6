"""Training on a GPU: what autotrace makes inside `autotrace.device("gpu:0")` lives there
(Variables, layers' weights, optimizer slots, metrics, random draws), a traced training step
runs there without copying to the CPU, and it computes what the same training on the CPU does.

Skipped, with the reason printed, without a GPU.
"""
import numpy as np
import pytest

import autotrace
from autotrace import layers

if autotrace.num_gpus() == 0:
    pytest.skip("no CUDA GPU (or CuPy) on this machine: the GPU tests need one",
                allow_module_level=True)

import cupy  # noqa: E402


def on_gpu0(value) -> bool:
    return isinstance(value, cupy.ndarray) and value.device.id == 0


def test_variables_and_draws_made_inside_a_gpu_device_live_there():
    host = np.arange(3.0)
    with autotrace.device("gpu:0"):
        made_here = autotrace.Variable(host, name="w")
        number = autotrace.Variable(2.0, name="s")
        generator = autotrace.random.Generator(seed=7)
        draws = generator.normal((2, 3))
        default_draws = autotrace.random.uniform((4,))
    outside = autotrace.Variable(np.zeros(2))
    kept = autotrace.Variable(cupy.ones(2))  # a GPU value stays on its GPU
    assert on_gpu0(made_here.value()) and made_here.device == "gpu:0"
    assert on_gpu0(number.value()) and on_gpu0(kept.value())
    assert outside.device == "cpu" and isinstance(outside.value(), np.ndarray)
    assert on_gpu0(draws) and on_gpu0(default_draws)
    np.testing.assert_array_equal(cupy.asnumpy(draws),
                                  autotrace.random.Generator(seed=7).normal((2, 3)))
    made_here.assign(np.ones(3))  # NumPy values are copied to the Variable's device
    assert on_gpu0(made_here.value())
    np.testing.assert_array_equal(made_here.numpy(), np.ones(3))


def test_a_gpu_value_is_not_assigned_to_a_cpu_variable():
    variable = autotrace.Variable(np.zeros(2), name="host")
    with pytest.raises(autotrace.DeviceError) as error:
        variable.assign(cupy.ones(2))
    assert str(error.value) == (
        "Variable 'host' is on cpu; cannot assign a value on gpu:0: move it with "
        "autotrace.to_device(value, 'cpu') first")
    np.testing.assert_array_equal(variable.numpy(), np.zeros(2))


def test_a_traced_op_of_two_devices_names_both():
    with autotrace.device("gpu:0"):
        weights = autotrace.Variable(np.ones((3, 2)), name="weights")

    @autotrace.function
    def affine(x):
        return x @ weights

    with pytest.raises(autotrace.DeviceError) as error:
        affine(np.ones((4, 3)))
    assert str(error.value) == (
        "the inputs are on cpu and gpu:0: a traced function runs on one device; move them "
        "with autotrace.to_device(x, 'cpu') first (a Variable is on the device it was made "
        "on: make it inside autotrace.device('gpu:0') to have it there)")


class Classifier(autotrace.Module):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(32, activation="relu")
        self.dropout = layers.Dropout(0.25, seed=1)
        self.logits = layers.Dense(4)

    def call(self, x, training=False):
        return self.logits(self.dropout(self.hidden(x), training=training))


def train(device: str, images, labels, steps: int = 6, make_model=Classifier,
          learning_rate: float = 1e-2):
    """(losses, final weights as NumPy, model, optimizer, mean loss metric, the traced step) of
    `steps` Adam steps of `make_model()` with everything made inside
    `autotrace.device(device)`."""
    autotrace.random.set_seed(0)
    with autotrace.device(device):
        images, labels = autotrace.to_device((images, labels), device)
        model = make_model()
        optimizer = autotrace.optimizers.Adam(learning_rate=learning_rate)
        mean_loss = autotrace.metrics.Mean(name="loss")
        gradients = autotrace.implicit_value_and_grad(
            lambda x, y: autotrace.losses.sparse_softmax_cross_entropy(y, model(x, True)))

        @autotrace.function
        def step(x, y):
            value, grads_and_vars = gradients(x, y)
            optimizer.apply_gradients(grads_and_vars)
            mean_loss(value)
            return value

        losses = [float(step(images, labels)) for _ in range(steps)]
    weights = [variable.numpy() for variable in model.variables]
    return losses, weights, model, optimizer, mean_loss, step


def test_the_sparse_cross_entropy_and_its_gradient_run_eagerly_on_the_gpu():
    rng = np.random.default_rng(1)
    logits, labels = rng.standard_normal((5, 3)), rng.integers(0, 3, 5)

    def loss(logits, labels):
        return autotrace.losses.sparse_softmax_cross_entropy(labels, logits)

    value, gradient = autotrace.value_and_grad(loss)(logits, labels)
    gpu_value, gpu_gradient = autotrace.value_and_grad(loss)(
        *autotrace.to_device((logits, labels), "gpu:0"))
    assert on_gpu0(gpu_value) and on_gpu0(gpu_gradient)
    np.testing.assert_allclose(autotrace.to_numpy(gpu_value), value, rtol=1e-12)
    np.testing.assert_allclose(autotrace.to_numpy(gpu_gradient), gradient, rtol=1e-12)
    with pytest.raises(IndexError, match=r"class indices in \[0, 3\).*got \[3\]"):
        loss(*autotrace.to_device((logits, np.array([0, 3, 1, 1, 2])), "gpu:0"))


def test_a_model_trains_on_the_gpu_as_on_the_cpu():
    rng = np.random.default_rng(0)
    images, labels = rng.standard_normal((64, 10)), rng.integers(0, 4, 64)
    cpu_losses, cpu_weights, *_ = train("cpu", images, labels)
    gpu_losses, gpu_weights, model, optimizer, mean_loss, step = train("gpu:0", images, labels)
    assert step.trace_count == 1
    assert {var.aval.device for var in step.graph(*autotrace.to_device(
        (images, labels), "gpu:0")).inputs} == {"gpu:0"}
    assert all(on_gpu0(variable.value()) for variable in model.variables)
    assert all(on_gpu0(slot.value()) for slots in optimizer.slots.values()
               for slot in slots.values())
    assert on_gpu0(mean_loss.result())
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-9)
    assert gpu_losses[-1] < 0.8 * gpu_losses[0]
    for gpu, cpu in zip(gpu_weights, cpu_weights):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-9, atol=1e-12)


def test_a_checkpoint_of_gpu_variables_restores_onto_the_gpu(tmp_path):
    with autotrace.device("gpu:0"):
        weights = autotrace.Variable(np.arange(4.0), name="weights")
    path = autotrace.Checkpoint(weights=weights).save(str(tmp_path / "ckpt"))
    weights.assign(np.zeros(4))
    autotrace.Checkpoint(weights=weights).restore(path)
    assert on_gpu0(weights.value())
    np.testing.assert_array_equal(weights.numpy(), np.arange(4.0))


def test_the_mnist_example_model_trains_on_the_gpu_as_on_the_cpu():
    """examples/mnist_cnn.py's ConvNet (Conv2D, MaxPool2D, Flatten, Dense, Dropout), a few
    traced Adam steps on 8x8 images, on each device."""
    from examples.mnist_cnn import ConvNet

    rng = np.random.default_rng(1)
    images, labels = rng.uniform(0.0, 1.0, (16, 8, 8, 1)), rng.integers(0, 10, 16)
    cpu_losses, *_ = train("cpu", images, labels, 3, ConvNet, learning_rate=1e-3)
    gpu_losses, _, model, *_ = train("gpu:0", images, labels, 3, ConvNet, learning_rate=1e-3)
    assert all(on_gpu0(variable.value()) for variable in model.variables)
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-9)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_an_optimizer_made_on_the_cpu_updates_a_model_on_the_gpu(traced):
    optimizer = autotrace.optimizers.SGD(learning_rate=0.5, momentum=0.9)  # outside: on the CPU
    with autotrace.device("gpu:0"):
        weights = autotrace.Variable(np.array([1.0, -2.0]), name="w")

    def step():
        optimizer.apply_gradients([(2.0 * weights.value(), weights)])

    step = autotrace.function(step) if traced else step
    step()
    step()
    # momentum SGD by hand: v = 0.9 v - 0.5 g, w += v, with g = 2 w
    w, v = np.array([1.0, -2.0]), np.zeros(2)
    for _ in range(2):
        v = 0.9 * v - 0.5 * (2.0 * w)
        w = w + v
    assert on_gpu0(weights.value()) and optimizer.iterations.device == "gpu:0"
    np.testing.assert_allclose(weights.numpy(), w, rtol=1e-15)
    assert int(optimizer.iterations.numpy()) == 2


def mixed_precision_training(device, images, labels, steps=3):
    """A Dense model under "mixed_float16" trained by traced loss-scaled SGD steps on
    `device`, the third step's gradients poisoned with an inf: (losses, weights, scales,
    model, optimizer)."""
    with autotrace.device(device):
        model = layers.Sequential([layers.Dense(4, activation="relu", dtype="mixed_float16"),
                                   layers.Dense(3, dtype="mixed_float16")])
        model(images)
        for index, variable in enumerate(model.variables):
            variable.assign(np.random.default_rng(index).uniform(-0.5, 0.5, variable.shape))
        optimizer = autotrace.mixed_precision.LossScaleOptimizer(
            autotrace.optimizers.SGD(0.1), initial_scale=2.0 ** 10, dynamic_growth_steps=1)
        loss = autotrace.losses.SparseCategoricalCrossentropy(from_logits=True)

        @autotrace.function
        def step(images, labels, poison):
            def scaled_loss():
                return optimizer.get_scaled_loss(loss(labels, model(images)) * poison)
            value, grads_and_vars = autotrace.implicit_value_and_grad(scaled_loss)()
            gradients = optimizer.get_unscaled_gradients([g for g, _ in grads_and_vars])
            optimizer.apply_gradients(zip(gradients, [v for _, v in grads_and_vars]))
            return value

        losses, scales = [], []
        for poison in [1.0, 1.0, np.inf][:steps]:
            poison = autotrace.to_device(np.float32(poison), device)
            losses.append(float(autotrace.to_numpy(step(images, labels, poison))))
            scales.append(float(optimizer.loss_scale.numpy()))
    return losses, [v.numpy() for v in model.variables], scales, model, optimizer


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_mixed_precision_with_loss_scaling_trains_on_the_gpu_as_on_the_cpu():
    rng = np.random.default_rng(2)
    images = rng.standard_normal((8, 5)).astype(np.float32)
    labels = rng.integers(0, 3, 8)
    cpu_losses, cpu_weights, cpu_scales, *_ = mixed_precision_training("cpu", images, labels)
    gpu_losses, gpu_weights, gpu_scales, model, optimizer = mixed_precision_training(
        "gpu:0", *autotrace.to_device((images, labels), "gpu:0"))
    assert all(on_gpu0(variable.value()) for variable in model.variables)
    assert on_gpu0(optimizer.loss_scale.value())
    assert [variable.dtype for variable in model.variables] == [np.float32] * 4
    # growth after every finite step; the inf step halves the scale and changes nothing
    assert gpu_scales == cpu_scales == [2.0 ** 11, 2.0 ** 12, 2.0 ** 11]
    np.testing.assert_allclose(gpu_losses[:2], cpu_losses[:2], rtol=1e-2)
    for gpu, cpu in zip(gpu_weights, cpu_weights):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-2, atol=1e-3)


def test_multi_label_auc_and_weighted_loss_classes_on_the_gpu():
    rng = np.random.default_rng(3)
    labels = (rng.uniform(size=(10, 3)) < 0.5).astype(np.float64)
    scores = rng.uniform(size=(10, 3))
    weights = rng.uniform(0.5, 2.0, 10)
    cpu_auc = autotrace.metrics.AUC(num_thresholds=20, multi_label=True)
    cpu_auc(labels, scores, sample_weight=weights)
    with autotrace.device("gpu:0"):
        gpu_auc = autotrace.metrics.AUC(num_thresholds=20, multi_label=True, num_labels=3)
    gpu_value = gpu_auc(*autotrace.to_device((labels, scores, weights), "gpu:0"))
    assert on_gpu0(gpu_value)
    np.testing.assert_allclose(autotrace.to_numpy(gpu_value), cpu_auc.result(), rtol=1e-12)
    loss = autotrace.losses.BinaryCrossentropy(label_smoothing=0.1)
    gpu_loss = loss(*autotrace.to_device((labels, scores, weights), "gpu:0"))
    assert on_gpu0(gpu_loss)
    np.testing.assert_allclose(autotrace.to_numpy(gpu_loss),
                               loss(labels, scores, sample_weight=weights), rtol=1e-12)
