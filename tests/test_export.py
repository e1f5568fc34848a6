"""autotrace.export: traced functions written as modules that need NumPy alone.

Each exported module runs in a fresh interpreter (`python -I -S`) whose sys.path holds NumPy's
folder and the module's, and no autotrace: the script checks that autotrace, runtime and
transforms cannot be imported there, then runs the module on inputs from an .npz and saves its
results, which must equal the traced function's, run here on the NumPy backend, exactly.
"""
import collections
import dataclasses
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autotrace as at
from autotrace.runtime.backends import cpu_backend

NUMPY_FOLDER = str(Path(np.__file__).resolve().parents[1])

# Flattens a result into {path: array}; the path names each container's type (and a namedtuple's
# or dataclass's fields), so equal keys mean equal structures. Run both here and in the fresh
# interpreter.
FLATTEN = '''
def flatten(value, path="result"):
    if isinstance(value, dict):
        return {key: leaf for name in value
                for key, leaf in flatten(value[name], f"{path}.dict[{name!r}]").items()}
    if isinstance(value, tuple) and hasattr(type(value), "_make"):
        return {key: leaf for name, item in zip(value._fields, value) for key, leaf in
                flatten(item, f"{path}.{type(value).__name__}(namedtuple).{name}").items()}
    if hasattr(type(value), "__dataclass_fields__"):
        return {key: leaf for name in type(value).__dataclass_fields__ for key, leaf in
                flatten(getattr(value, name),
                        f"{path}.{type(value).__name__}(dataclass).{name}").items()}
    if isinstance(value, (tuple, list)):
        return {key: leaf for index, item in enumerate(value)
                for key, leaf in flatten(item, f"{path}.{type(value).__name__}[{index}]").items()}
    return {path: np.asarray(value)}
'''
namespace = {"np": np}
exec(FLATTEN, namespace)
flatten = namespace["flatten"]

RUNNER = '''
import sys
sys.path[:] = [p for p in sys.path if "site-packages" not in p] + [{folder!r}, {numpy!r}]
for name in ("autotrace", "runtime", "transforms"):
    try:
        __import__(name)
    except ModuleNotFoundError:
        continue
    sys.exit(f"{{name}} is importable here; the test must run without it")
import numpy as np
import {module} as exported
{flatten}
inputs = np.load({inputs!r}, allow_pickle=False)
calls = {calls}
results = {{}}
arguments = [inputs[f"argument{{index}}"] for index in range(len(inputs.files))
             if f"argument{{index}}" in inputs.files]
keywords = {literals!r}
for key in inputs.files:  # "keyword x", or "keyword params W" for params={{"W": ...}}
    if key.startswith("keyword "):
        words = key.split(" ")
        if len(words) == 2:
            keywords[words[1]] = inputs[key]
        else:
            keywords.setdefault(words[1], {{}})[words[2]] = inputs[key]
for call in range(calls):
    for key, value in flatten(exported.{entry}(*arguments, **keywords), f"call{{call}}").items():
        results[key] = value
for name, value in exported.variables.items():
    results["variable " + name] = np.asarray(value)
np.savez({results!r}, **results)
'''


@pytest.fixture
def numpy_backend():
    """Trace on the NumPy backend, the one export writes, so results agree to the last bit."""
    before = cpu_backend()
    cpu_backend("numpy")
    yield
    cpu_backend(before)


def run_exported(tmp_path: Path, module: str, entry: str, arguments, calls: int = 1,
                 keywords: dict | None = None) -> dict:
    """Run `entry` of the exported module `module` `calls` times on `arguments` (and
    `keywords`: arrays, dicts of arrays, or Python literals) in a fresh interpreter without
    autotrace; its flattened results, final Variables, and what it printed ("stdout")."""
    inputs = tmp_path / "inputs.npz"
    saved = {f"argument{index}": value for index, value in enumerate(arguments)}
    literals = {}
    for name, value in (keywords or {}).items():
        if isinstance(value, dict):
            saved.update({f"keyword {name} {key}": item for key, item in value.items()})
        elif isinstance(value, np.ndarray):
            saved[f"keyword {name}"] = value
        else:
            literals[name] = value
    np.savez(inputs, **saved)
    results = tmp_path / "results.npz"
    script = tmp_path / "run_exported.py"
    script.write_text(RUNNER.format(folder=str(tmp_path), numpy=NUMPY_FOLDER, module=module,
                                    flatten=FLATTEN, inputs=str(inputs), calls=calls,
                                    literals=literals, entry=entry, results=str(results)))
    finished = subprocess.run([sys.executable, "-I", "-S", str(script)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    with np.load(results, allow_pickle=False) as saved:
        return {**{key: saved[key] for key in saved.files}, "stdout": finished.stdout}


def import_exported(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SHIFT = np.array([0.25, -0.5, 1.0])  # a global array: a constant of the graph, in the .npz


def loss(w, X, y):
    residual = np.tanh((X * SHIFT) @ w) - y
    return np.mean(residual * residual)


def test_exported_gradient_equals_the_traced_one(tmp_path, numpy_backend):
    @at.function
    def loss_and_grads(w, X, y):
        value, (dw, dX) = at.value_and_grad(loss, wrt=(0, 1))(w, X, y)
        return {"loss": value, "grads": [dw, dX], "scaled": (value * 2.0,)}

    rng = np.random.default_rng(0)
    w, X, y = rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)
    path = at.export(loss_and_grads, at.Spec((3,)), at.Spec((None, 3)), at.Spec((None,)),
                     tmp_path / "loss_grads.py")
    assert path == tmp_path / "loss_grads.py" and (tmp_path / "loss_grads.npz").exists()
    text = path.read_text()
    assert "import autotrace" not in text and "from autotrace" not in text
    assert "    loss_and_grads(w, X, y)" in text and "    X: f64[?,3]" in text

    for rows in (5, 2):  # the unknown dimension: one module for every size
        arguments = (w, X[:rows], y[:rows])
        expected = flatten(loss_and_grads(*arguments), "call0")
        got = run_exported(tmp_path, "loss_grads", "loss_and_grads", arguments)
        assert sorted(set(got) - {"stdout"}) == sorted(expected)
        for key in expected:
            assert np.array_equal(got[key], expected[key]), key
    with np.load(tmp_path / "loss_grads.npz", allow_pickle=False) as saved:
        assert [key for key in saved.files if np.array_equal(saved[key], SHIFT)] == ["const0"]
    assert "const0 = _constants['const0']" in text


def test_exported_training_step_trains_its_own_variables(tmp_path, numpy_backend):
    weights = at.Variable(np.array([0.5, -0.2, 0.1]), name="weights")
    bias = at.Variable(0.0, name="bias")
    optimizer = at.optimizers.Adam(0.1)

    def mean_squared_error(X, y):
        residual = X @ weights + bias - y
        return np.mean(residual * residual)

    @at.function
    def train_step(X, y, scale):
        value, grads = at.implicit_value_and_grad(mean_squared_error)(X, y)
        optimizer.apply_gradients(grads)
        return value * scale, [value]

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(8, 3)), rng.normal(size=8)
    train_step(X, y, 2.0)  # the optimizer makes its slots on the first call
    path = at.export(train_step, X, at.Spec((8,)), 2.0, str(tmp_path / "train.py"))
    text = path.read_text()
    assert "    train_step(X, y, *, scale=2.0)" in text and "    scale = 2.0" in text
    assert "    'weights' *" in text and "    'Adam/learning_rate'\n" in text

    expected = {}
    for call in range(3):
        expected.update(flatten(train_step(X, y, 2.0), f"call{call}"))
    expected["variable weights"] = weights.value()
    expected["variable bias"] = np.asarray(bias.value())
    got = run_exported(tmp_path, "train", "train_step", (X, y), calls=3)
    for key in expected:
        assert np.array_equal(got[key], expected[key]), key
    assert got["variable Adam/iterations"] == optimizer.iterations.value()


def test_exported_module_checks_its_inputs(tmp_path):
    at.export(at.function(lambda x: x * 2.0), at.Spec((None, 3)), tmp_path / "double.py")
    module = import_exported(tmp_path / "double.py")
    assert np.array_equal(module.lambda_(np.ones((2, 3))), np.full((2, 3), 2.0))
    with pytest.raises(TypeError) as error:
        module.lambda_(np.ones((2, 4)))
    assert str(error.value) == ("x: expected an array of shape (None, 3) and dtype float64, "
                                "got one of shape (2, 4) and dtype float64")


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
    from autotrace.runtime.registry import define_runtime_function
    defined = []

    def define(name, function):
        define_runtime_function(name, function, lambda x: x)
        defined.append(name)
        return lambda x: at.runtime.registry.bind(name, x)
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


def test_export_refuses_a_result_it_cannot_rebuild(tmp_path):
    class Pair(tuple):  # a tuple of its own kind, not a namedtuple: its class is the user's
        pass

    with pytest.raises(at.ExportError) as error:
        at.export(at.function(lambda x: Pair((x, x + 1.0))), at.Spec((3,)), tmp_path / "p.py")
    assert str(error.value) == (
        "autotrace.export: lambda_ returns a Pair; an exported module rebuilds tuples, "
        "lists, dicts, namedtuples and dataclasses only: return one of those")


def test_export_wants_a_module_path_last(tmp_path):
    with pytest.raises(TypeError, match=re.escape(
            "autotrace.export(function, *arguments, path): the last argument must be the "
            "path of the module to write, like 'model_grad.py'")):
        at.export(at.function(lambda x: x), at.Spec((3,)))
    with pytest.raises(ValueError, match=re.escape("the path must end in .py")):
        at.export(at.function(lambda x: x), at.Spec((3,)), tmp_path / "model.txt")


def doubled_until_large(x):
    while np.sum(x) < 100.0:
        x = x * 2.0
    if np.sum(x) > 150.0:
        x = x - 1.0
    return x


def test_exported_control_flow_runs_its_loops_and_branches(tmp_path, numpy_backend):
    traced = at.function(doubled_until_large)
    at.export(traced, at.Spec((3,)), tmp_path / "doubling.py")
    assert "def _doubled_until_large_graph_body_2(a):" in (tmp_path / "doubling.py").read_text()
    for x in (np.array([1.0, 2.0, 3.5]), np.array([50.0, 60.0, 70.0])):  # both branches
        got = run_exported(tmp_path, "doubling", "doubled_until_large", (x,))
        assert np.array_equal(got["call0"], traced(x))


# --- autotrace's own ops: written into the module as the NumPy code that computes them --------

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


def assert_runs_as_traced(tmp_path, module, entry, expected, arguments, calls=1, keywords=None):
    """Run the exported module without autotrace and compare with `expected` (flattened
    results of the traced function, and Variables), bit for bit."""
    got = run_exported(tmp_path, module, entry, arguments, calls=calls, keywords=keywords)
    assert set(expected) <= set(got), sorted(set(expected) - set(got))
    for key in expected:
        assert got[key].dtype == expected[key].dtype, key
        assert np.array_equal(got[key], expected[key]), key
    return got


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
    assert "# autotrace.runtime.windows.extract_patches\ndef extract_patches(" in text
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
    from autotrace.runtime.random import draw

    traced = at.function(lambda key: draw(key, (4,), np.float32, "normal"))
    at.export(traced, at.Spec((), np.uint64), tmp_path / "draw.py", name="draw")
    for key in (np.uint64(0), np.uint64(2 ** 63 + 5)):
        assert_runs_as_traced(tmp_path, "draw", "draw", {"call0": traced(key)}, (key,))


# --- keyword arguments and structured results -------------------------------------------------

Fit = collections.namedtuple("Fit", ["prediction", "loss"])


@dataclasses.dataclass(frozen=True)
class Report:
    fit: Fit
    sizes: dict
    note: str


@at.function
def fit_report(X, *, params, target, scale=1.0, note="plain"):
    prediction = X @ params["W"] * scale + params["b"]
    loss = np.mean((prediction - target) ** 2)
    return Report(Fit(prediction, loss), {"W": np.sum(params["W"] ** 2)}, note)


def test_exported_function_takes_the_same_keywords(tmp_path, numpy_backend):
    rng = np.random.default_rng(3)
    X, target = rng.normal(size=(4, 3)), rng.normal(size=4)
    params = {"W": rng.normal(size=3), "b": np.array(0.25)}
    at.export(fit_report, at.Spec((None, 3)), tmp_path / "fit.py",
              params={"W": at.Spec((3,)), "b": at.Spec(())}, target=at.Spec((None,)), scale=2.0)
    text = (tmp_path / "fit.py").read_text()
    assert "    fit_report(X, *, params, target, scale=2.0, note='plain')\n" in text
    assert "Fit = collections.namedtuple('Fit', ['prediction', 'loss'])" in text
    assert "Report = dataclasses.make_dataclass('Report', ['fit', 'sizes', 'note'], " \
           "frozen=True)" in text

    result = fit_report(X, params=params, target=target, scale=2.0)
    expected = flatten(result, "call0")
    assert sorted(expected) == [
        "call0.Report(dataclass).fit.Fit(namedtuple).loss",
        "call0.Report(dataclass).fit.Fit(namedtuple).prediction",
        "call0.Report(dataclass).note", "call0.Report(dataclass).sizes.dict['W']"]
    for keywords in ({"params": params, "target": target, "scale": 2.0},
                     {"target": target, "params": params, "note": "plain"}):
        assert_runs_as_traced(tmp_path, "fit", "fit_report", expected, (X,), keywords=keywords)

    module = import_exported(tmp_path / "fit.py")
    exported = module.fit_report(X, params=params, target=target)
    assert exported.fit._fields == ("prediction", "loss") and exported.note == "plain"
    assert dataclasses.is_dataclass(exported) and type(exported).__name__ == "Report"
    with pytest.raises(dataclasses.FrozenInstanceError):
        exported.note = "changed"
    with pytest.raises(ValueError) as error:
        module.fit_report(X, params=params, target=target, scale=3.0)
    assert str(error.value) == ("scale: this module was exported with scale=2.0, which its "
                                "code has built in; export it again for scale=3.0")
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'target'"):
        module.fit_report(X, params=params)


def test_exported_namedtuple_result_by_position_and_keyword(tmp_path, numpy_backend):
    @at.function
    def fit(X, y, w):
        prediction = X @ w
        return Fit(prediction=prediction, loss=np.mean((prediction - y) ** 2))

    rng = np.random.default_rng(4)
    X, y, w = rng.normal(size=(5, 2)), rng.normal(size=5), rng.normal(size=2)
    at.export(fit, X, tmp_path / "fit_tuple.py", w=w, y=y)  # keywords in another order
    assert "    fit(X, y, w)\n" in (tmp_path / "fit_tuple.py").read_text()
    expected = flatten(fit(X, y, w), "call0")
    assert sorted(expected) == ["call0.Fit(namedtuple).loss", "call0.Fit(namedtuple).prediction"]
    assert_runs_as_traced(tmp_path, "fit_tuple", "fit", expected, (X, y, w))
    assert_runs_as_traced(tmp_path, "fit_tuple", "fit", expected, (X,), keywords={"w": w, "y": y})


def test_exported_print_prints_on_every_call(tmp_path, numpy_backend):
    @at.function
    def logged(x):
        at.print("sum:", np.sum(x))
        return x * 2.0

    x = np.array([1.0, 2.5])
    at.export(logged, x, tmp_path / "logged.py")
    got = assert_runs_as_traced(tmp_path, "logged", "logged", {"call0": logged(x)}, (x,),
                                calls=2)
    assert got["stdout"] == "sum: 3.5\nsum: 3.5\n"


def test_device_helpers_written_for_numpy_answer_as_the_runtime_does():
    from autotrace.export_ops import _ON_NUMPY
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


def test_exported_entry_point_with_star_args_and_fixed_values(tmp_path):
    @at.function
    def combine(x, *rest, offset=None, variables=1.5):
        total = x + sum(rest[1:]) * rest[0]
        return total if offset is None else total + offset

    x = np.ones(2)
    at.export(combine, x, 3.0, x, x, tmp_path / "combine.py", variables=1.5)
    text = (tmp_path / "combine.py").read_text()
    # The fixed 3.0 of *rest has no name; `variables` would hide the module's own.
    assert "def combine(x, argument2, argument3, *, offset=None):" in text
    assert "    argument1 = 3.0\n" in text and "    variables = 1.5\n" in text
    module = import_exported(tmp_path / "combine.py")
    assert np.array_equal(module.combine(x, x, 2 * x), combine(x, 3.0, x, 2 * x))
    assert np.array_equal(module.combine(x, x, 2 * x, offset=None), np.full(2, 10.0))
    with pytest.raises(ValueError) as error:
        module.combine(x, x, x, offset=np.ones(2))
    assert str(error.value) == ("offset: this module was exported with offset=None, which its "
                                "code has built in; export it again for offset=array([1., 1.])")


def grown_until_large(x):
    while np.sum(x) < 100.0:
        x = np.sin(x) + x * 1.5
    return np.sum(x * x)


def test_exported_gradient_of_a_while_loop_replays_its_stack(tmp_path, numpy_backend):
    gradient = at.function(at.grad(grown_until_large))
    at.export(gradient, at.Spec((3,)), tmp_path / "loop_grad.py", name="loop_grad")
    text = (tmp_path / "loop_grad.py").read_text()
    assert ".pop()" in text and "def loop_grad(x, *, dy=None):" in text
    for x in (np.array([0.1, 0.2, 0.3]), np.array([40.0, 30.0, 31.0])):  # trips, none
        expected = gradient(x)
        assert np.allclose(expected, at.grad(grown_until_large)(x))  # eager agrees
        assert_runs_as_traced(tmp_path, "loop_grad", "loop_grad", {"call0": expected}, (x,))
