"""autotrace.export of graphs with autotrace's own ops (conv2d, pooling, erf, random draws, a
user's ops): written into the module as the NumPy code that computes them, or refused with an
error that names the op and why.

The modules run where autotrace cannot be imported (tests/exported.py) and must give the traced
function's results exactly.
"""
import re

import numpy as np
import pytest

import autotrace as at
from tests.exported import (  # noqa: F401 - numpy_backend is a fixture
    assert_runs_as_traced, flatten, numpy_backend)


class SmallConvNet(at.Module):
    """The MNIST example's model, smaller: conv + relu, max pooling, dense logits."""

    def __init__(self):
        super().__init__()
        self.conv = at.layers.Conv2D(4, 3, padding="same", activation="relu")
        self.pool = at.layers.MaxPool2D(2, padding="same")
        self.flatten = at.layers.Flatten()
        self.logits = at.layers.Dense(3)

    def call(self, images):
        return self.logits(self.flatten(self.pool(self.conv(images))))


def digits(count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(count, 5, 5, 1)), rng.integers(0, 3, size=count)


def test_exported_convnet_forward_and_gradient(tmp_path, numpy_backend):
    at.random.set_seed(0)
    model = SmallConvNet()
    images, labels = digits(6)
    model(images)  # builds the layers' Variables

    def loss(images, labels):
        return at.losses.sparse_softmax_cross_entropy(labels, model(images))

    @at.function
    def loss_and_gradients(images, labels):
        value, grads_and_vars = at.implicit_value_and_grad(loss)(images, labels)
        return {"loss": value, "logits": model(images),
                "gradients": [gradient for gradient, _ in grads_and_vars]}

    # A batch of unknown size would not trace: Flatten reshapes to (None, -1).
    path = at.export(loss_and_gradients, at.Spec((6, 5, 5, 1)), at.Spec((6,), np.int64),
                     tmp_path / "convnet.py")
    text = path.read_text()
    for op in ("conv2d", "conv2d_backprop_kernel", "max_pool2d", "max_pool2d_scatter"):
        assert f"\n{op} = _{op}\n" in text, op
    assert "# autotrace.runtime.primitives.windows.extract_patches\ndef extract_patches(" in text
    assert "import autotrace" not in text and "from autotrace" not in text
    for seed in (0, 1):
        arguments = digits(6, seed)
        expected = flatten(loss_and_gradients(*arguments), "call0")
        assert len(expected) == 1 + 1 + 4  # loss, logits, two kernels and two biases
        assert_runs_as_traced(tmp_path, "convnet", "loss_and_gradients", expected, arguments)


def test_exported_conv_layer_training_step(tmp_path, numpy_backend):
    at.random.set_seed(1)
    conv = at.layers.Conv2D(2, 3, strides=2, activation="relu")
    images, _ = digits(4, seed=1)
    targets = np.random.default_rng(2).normal(size=(4, 2, 2, 2))
    optimizer = at.optimizers.Adam(0.05)

    def loss(images, targets):
        pooled = at.nn.avg_pool2d(conv(images), 1)
        return np.mean((pooled - targets) ** 2)

    @at.function
    def train_step(images, targets):
        value, grads_and_vars = at.implicit_value_and_grad(loss)(images, targets)
        optimizer.apply_gradients(grads_and_vars)
        return value

    train_step(images, targets)  # the optimizer makes its slots on the first call
    at.export(train_step, images, targets, tmp_path / "conv_step.py")
    assert "\navg_pool2d_backprop = _avg_pool2d_backprop\n" in (
        tmp_path / "conv_step.py").read_text()
    expected = {f"call{call}": np.asarray(train_step(images, targets)) for call in range(3)}
    expected.update({f"variable {variable.name}": np.asarray(variable.value())
                     for variable in [*conv.variables, *optimizer.variables]})
    got = assert_runs_as_traced(tmp_path, "conv_step", "train_step", expected,
                                (images, targets), calls=3)
    assert not np.array_equal(got["call0"], got["call2"])  # it trained


def test_exported_gelu_uses_autotrace_erf(tmp_path, numpy_backend):
    traced = at.function(lambda x: at.nn.gelu(x))
    at.export(traced, at.Spec((None,)), tmp_path / "gelu.py", name="gelu")
    x = np.array([-7.0, -1.1, -0.3, 0.0, 0.5, 0.9, 2.0, 4.0, 30.0])  # every branch of erf
    assert_runs_as_traced(tmp_path, "gelu", "gelu", {"call0": traced(x)}, (x,))


def attention_heads(x, w):
    """A dense layer over (batch, tokens, features), split into heads, attended and merged:
    the NumPy backend's row_product and transposed_product."""
    heads = np.transpose(np.reshape(x @ w, (2, 5, 2, 3)), (0, 2, 1, 3))
    merged = np.transpose(heads @ np.swapaxes(heads, -1, -2) @ heads, (0, 2, 1, 3))
    return np.sum(np.tanh(np.reshape(merged, (2, 5, 6))) ** 2)


def test_exported_attention_writes_the_backends_product_helpers(tmp_path, numpy_backend):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 5, 4)), rng.standard_normal((4, 6)) / 2
    traced = at.function(at.grad(attention_heads, wrt=(0, 1)))
    at.export(traced, x, w, tmp_path / "attention.py", name="attention")
    source = (tmp_path / "attention.py").read_text()
    assert "def row_product(" in source and "def transposed_product(" in source
    assert_runs_as_traced(tmp_path, "attention", "attention",
                          flatten(traced(x, w), "call0"), (x, w))


def test_exported_random_draws_follow_the_generator_state(tmp_path, numpy_backend):
    generator = at.random.Generator(seed=7, name="noise_key")
    dropout = at.layers.Dropout(0.5, seed=3)

    @at.function
    def noisy(x):
        return x + generator.normal(x.shape), dropout(x, training=True), generator.uniform((2,))

    x = np.arange(6.0).reshape(2, 3)
    at.export(noisy, x, tmp_path / "noisy.py")  # exported at the Generators' present state
    expected = {}
    for call in range(3):  # each call draws anew, the keys advancing in Variables
        expected.update(flatten(noisy(x), f"call{call}"))
    expected["variable noise_key"] = np.asarray(generator.key.value())
    assert not np.array_equal(expected["call0.tuple[0]"], expected["call1.tuple[0]"])
    got = assert_runs_as_traced(tmp_path, "noisy", "noisy", expected, (x,), calls=3)
    assert got["variable noise_key"] == np.uint64(7 + 6)


def test_exported_random_draw_of_a_key_argument(tmp_path, numpy_backend):
    from autotrace.runtime.primitives.keyed_random import draw

    traced = at.function(lambda key: draw(key, (4,), np.float32, "normal"))
    at.export(traced, at.Spec((), np.uint64), tmp_path / "draw.py", name="draw")
    for key in (np.uint64(0), np.uint64(2 ** 63 + 5)):
        assert_runs_as_traced(tmp_path, "draw", "draw", {"call0": traced(key)}, (key,))


def test_export_refuses_an_op_that_needs_more_than_numpy(tmp_path):
    traced = at.function(lambda x: at.distributed.allreduce_mean([x])[0] * 2.0)
    with pytest.raises(at.ExportError) as error:
        at.export(traced, at.Spec((3,)), tmp_path / "mean.py")
    assert str(error.value) == (
        "autotrace.export: lambda_'s graph uses the op allreduce (computed by "
        "autotrace.distributed._allreduce_op), which cannot be written as NumPy code: "
        "autotrace.distributed._allreduce imports mpi4py; an exported module runs with NumPy "
        "and the standard library alone, so graphs with allreduce cannot be exported")
    assert not (tmp_path / "mean.py").exists() and not (tmp_path / "mean.npz").exists()


def make_scaled_op(factor):
    def scaled(x):
        return x * factor  # a closure: its factor is not in its source
    return scaled


@pytest.fixture
def user_op():
    """Registers ops a user defines (name -> function) for one test; binds them by name."""
    from autotrace.runtime.ops import primitives, source_globals
    from autotrace.runtime.primitives.registry import define_runtime_function
    defined = []

    def define(name, function):
        define_runtime_function(name, function, lambda x: x)
        defined.append(name)
        return lambda x: at.runtime.primitives.registry.bind(name, x)
    yield define
    for name in defined:
        del primitives[name], source_globals[name]


_SQUASH_COEFFICIENTS = (0.5, -0.25, 0.125)  # a literal table: written into the module
_SQUASH_SCALES = {"x": np.float64(2.0)}  # not a literal: an op that reads it is refused


def _horner(coefficients, t):
    result = coefficients[-1]
    for coefficient in coefficients[-2::-1]:
        result = result * t + coefficient
    return result


def _squash(x):
    return np.tanh(_horner(_SQUASH_COEFFICIENTS, x))


def _scaled(x):
    return x * _SQUASH_SCALES["x"]


def test_export_writes_a_users_op_with_its_helpers(tmp_path, user_op):
    squash = user_op("squash", _squash)
    traced = at.function(lambda x: squash(x) * 2.0)
    at.export(traced, at.Spec((3,)), tmp_path / "squash.py", name="squashed")
    text = (tmp_path / "squash.py").read_text()
    assert "_SQUASH_COEFFICIENTS = (0.5, -0.25, 0.125)\n" in text
    assert f"# {__name__}._horner\ndef _horner(coefficients, t):" in text
    x = np.array([-1.0, 0.5, 3.0])
    assert_runs_as_traced(tmp_path, "squash", "squashed", {"call0": traced(x)}, (x,))


def test_export_refuses_an_op_that_reads_a_global_object(tmp_path, user_op):
    scaled = user_op("scaled_by_table", _scaled)
    with pytest.raises(at.ExportError) as error:
        at.export(at.function(lambda x: scaled(x)), at.Spec((3,)), tmp_path / "s.py")
    assert str(error.value) == (
        f"autotrace.export: lambda_'s graph uses the op scaled_by_table (computed by "
        f"{__name__}._scaled), which cannot be written as NumPy code: {__name__}._scaled uses "
        f"_SQUASH_SCALES, a dict that is neither a literal nor NumPy's; an exported module "
        f"runs with NumPy and the standard library alone, so graphs with scaled_by_table "
        f"cannot be exported")


def test_export_refuses_an_op_computed_by_a_closure(tmp_path, user_op):
    scaled_by_three = user_op("scaled_by_three", make_scaled_op(3.0))
    with pytest.raises(at.ExportError) as error:
        at.export(at.function(lambda x: scaled_by_three(x) + 1.0), at.Spec((3,)),
                  tmp_path / "op.py", name="shifted")
    scaled = f"{__name__}.make_scaled_op.<locals>.scaled"
    assert str(error.value) == (
        f"autotrace.export: shifted's graph uses the op scaled_by_three (computed by "
        f"{scaled}), which cannot be written as NumPy code: {scaled} is a closure: it reads "
        f"variables of the function that made it, which its source does not hold; an exported "
        f"module runs with NumPy and the standard library alone, so graphs with "
        f"scaled_by_three cannot be exported")


def test_device_helpers_written_for_numpy_answer_as_the_runtime_does():
    from autotrace.exporting.op_sources import _ON_NUMPY
    from autotrace.runtime import devices
    written = {"np": np}
    for source in _ON_NUMPY.values():
        exec(source, written)
    x = np.ones(3)
    assert written["array_module"](x) is devices.array_module(x) is np
    assert written["device_of"](x) == devices.device_of(x) == "cpu"
    assert written["to_device"](x, "cpu") is devices.to_device(x, "cpu") is x


def pooled_gelu_conv(x, kernel):
    y = at.nn.gelu(at.nn.conv2d(x, kernel, strides=2, padding="same",
                                data_format="channels_first"))
    averaged = at.nn.avg_pool2d(y, 2, padding="same", data_format="channels_first")
    largest = at.nn.max_pool2d(y, 3, strides=1, padding="same", data_format="channels_first")
    return np.sum(averaged * averaged) + np.sum(largest ** 3)


def test_exported_gradient_and_jvp_hold_every_convolution_and_pooling_op(tmp_path,
                                                                        numpy_backend):
    rng = np.random.default_rng(5)
    x, kernel, tangent = rng.normal(size=(2, 3, 6, 6)), rng.normal(size=(3, 3, 3, 4)), \
        rng.normal(size=(2, 3, 6, 6))
    gradient = at.function(at.grad(pooled_gelu_conv, wrt=(0, 1)))
    derivative = at.function(lambda x, kernel, tangent: at.jvp(
        pooled_gelu_conv, (x, kernel), (tangent, np.ones_like(kernel))))
    at.export(gradient, x, kernel, tmp_path / "gradient.py", name="gradient")
    at.export(derivative, x, kernel, tangent, tmp_path / "derivative.py", name="derivative")
    written = {module: {line.split(" = ")[0] for line in (tmp_path / f"{module}.py").read_text()
                        .splitlines() if re.fullmatch(r"\w+ = _\w+", line)}
               for module in ("gradient", "derivative")}
    assert written["gradient"] | written["derivative"] == {
        "conv2d", "conv2d_backprop_input", "conv2d_backprop_kernel", "erf", "avg_pool2d",
        "avg_pool2d_backprop", "max_pool2d", "max_pool2d_scatter", "max_pool2d_gather"}
    assert_runs_as_traced(tmp_path, "gradient", "gradient",
                          flatten(gradient(x, kernel), "call0"), (x, kernel))
    assert_runs_as_traced(tmp_path, "derivative", "derivative",
                          flatten(derivative(x, kernel, tangent), "call0"), (x, kernel, tangent))
