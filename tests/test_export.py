"""autotrace.export: traced functions written as modules that need NumPy alone; their entry
points (keyword arguments, fixed values) and results (namedtuples, dataclasses).

The modules run where autotrace cannot be imported (tests/exported.py) and must give the traced
function's results exactly. autotrace's own ops in exported modules: tests/test_export_ops.py.
"""
import collections
import dataclasses
import re

import numpy as np
import pytest

import autotrace as at
from tests.exported import (  # noqa: F401 - numpy_backend is a fixture
    assert_runs_as_traced, flatten, import_exported, numpy_backend, run_exported)


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


Batch = collections.namedtuple("Batch", ["inputs", "targets"])


def test_exported_module_checks_the_arrays_nested_in_its_arguments(tmp_path):
    # Arrays in a dict, a tuple or a namedtuple are checked as plain arguments are: one of
    # another shape would otherwise be computed with, silently wrong.
    def error(batch, pair, *, named):
        return (np.sum(batch["x"]) / batch["x"].shape[0] + np.sum(pair[1]) +
                np.sum(named.targets - named.inputs))

    at.export(at.function(error), {"x": at.Spec((4,))}, (2.0, at.Spec((None, 2))),
              tmp_path / "error.py", named=Batch(at.Spec((3,)), at.Spec((3,), np.float32)))
    module = import_exported(tmp_path / "error.py")
    arguments = {"batch": {"x": np.arange(4.0)}, "pair": (2.0, np.ones((5, 2))),
                 "named": Batch(np.zeros(3), np.ones(3, np.float32))}
    assert module.error(**arguments) == 1.5 + 10.0 + 3.0
    for argument, wrong, message in [
            ("batch", {"x": np.arange(8.0)},
             "batch['x']: expected an array of shape (4,) and dtype float64, got one of "
             "shape (8,) and dtype float64"),
            ("pair", (2.0, np.ones((5, 3))),
             "pair[1]: expected an array of shape (None, 2) and dtype float64, got one of "
             "shape (5, 3) and dtype float64"),
            ("named", Batch(np.zeros(3), np.ones(3)),
             "named[1]: expected an array of shape (3,) and dtype float32, got one of shape "
             "(3,) and dtype float64")]:
        with pytest.raises(TypeError) as raised:
            module.error(**{**arguments, argument: wrong})
        assert str(raised.value) == message


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
