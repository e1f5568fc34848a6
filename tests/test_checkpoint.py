"""Checkpoints: round trips, values waiting for lazily made variables, every damaged file with
its message (and nothing assigned), atomic saves, latest_checkpoint and the save counter."""
import io
import json
import os
import re
import zipfile

import numpy as np
import pytest

import autotrace
from autotrace import Checkpoint, Variable, latest_checkpoint, optimizers
from autotrace.checkpoints.checkpoint import CheckpointError
from autotrace.checkpoints.storage import _write_npz


class Linear(autotrace.Module):
    """Makes its kernel on its first call, from the input's last dimension."""

    def __init__(self, units, name=None):
        super().__init__(name=name)
        self.units = units

    def build(self, input_shape):
        self.add_weight("kernel", (input_shape[-1], self.units))

    def call(self, x):
        return x @ self.kernel


class Stack(autotrace.Module):
    """Variables in nested lists and dicts, and sub-modules."""

    def __init__(self, name=None):
        super().__init__(name=name)
        self.layers = [Linear(3, name=f"{self.name}_a"), Linear(2, name=f"{self.name}_b")]
        self.extra = {"scale": Variable(2.0, name="scale"),
                      "pairs": [(Variable(np.arange(3), name="index"),)]}

    def call(self, x):
        return self.layers[1](self.layers[0](x)) * self.extra["scale"]


X = np.arange(8.0).reshape(2, 4) / 8


def values(variables):
    return [variable.numpy() for variable in variables]


def assert_values(variables, expected):
    for variable, value in zip(variables, expected, strict=True):
        np.testing.assert_array_equal(variable.numpy(), value, err_msg=variable.name)


def test_reference_example(tmp_path):
    x, y = Variable(10.), Variable(5.)
    ckpt = Checkpoint(x=x, y=y)
    x.assign(2.)
    path = ckpt.save(str(tmp_path / "ckpt"))
    x.assign(11.)
    assert x + y == 16
    ckpt.restore(path)
    assert x + y == 7
    assert path == str(tmp_path / "ckpt-1") and ckpt.save_counter == 1


def test_module_with_nested_lists_and_dicts_round_trips(tmp_path):
    model = Stack(name="stack")
    model(X)
    ckpt = Checkpoint(model=model)
    saved = values(model.variables)
    path = ckpt.save(tmp_path / "ckpt")
    for variable in model.variables:
        variable.assign(variable.numpy() * 0 + 7)
    ckpt.restore(path).assert_consumed()
    assert_values(model.variables, saved)
    index = json.loads((tmp_path / "ckpt-1.index.json").read_text())
    assert list(index["variables"]) == ["model/layers/0/kernel", "model/layers/1/kernel",
                                        "model/extra/scale", "model/extra/pairs/0/0"]
    assert index["variables"]["model/extra/pairs/0/0"]["dtype"] == "int64"
    with np.load(path + ".npz", allow_pickle=False) as data:  # a plain npz
        np.testing.assert_array_equal(data["model/layers/1/kernel"], saved[1])


def train(model, optimizer, steps):
    for _ in range(steps):
        gradients = [np.full(v.shape, 0.5) for v in model.trainable_variables]
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))


def test_optimizer_slots_round_trip_and_training_continues_the_same(tmp_path):
    model, optimizer = Linear(2, name="net"), optimizers.Adam(0.1)
    model(X)
    ckpt = Checkpoint(model=model, optimizer=optimizer)
    train(model, optimizer, 2)
    path = ckpt.save(tmp_path / "ckpt")
    train(model, optimizer, 1)
    after_one_more = values(model.variables + optimizer.variables)
    train(model, optimizer, 3)
    ckpt.restore(path).assert_consumed()
    assert int(optimizer.iterations) == 2
    train(model, optimizer, 1)
    assert_values(model.variables + optimizer.variables, after_one_more)
    assert [name for name in json.loads((tmp_path / "ckpt-1.index.json").read_text())[
        "variables"]] == ["model/kernel", "optimizer/iterations", "optimizer/learning_rate",
                          "optimizer/slots/model/kernel/m", "optimizer/slots/model/kernel/v"]


def test_slots_follow_attribute_paths_not_the_numbers_layers_were_made_with(tmp_path):
    def make():
        model = autotrace.layers.Sequential([autotrace.layers.Dense(3), autotrace.layers.Dense(2)])
        model(X)
        return model, optimizers.Adam(0.1)
    trained, optimizer = make()
    train(trained, optimizer, 2)
    path = Checkpoint(model=trained, optimizer=optimizer).save(tmp_path / "ckpt")
    expected = {name: variable.numpy() for name, variable in zip(
        ["first_m", "second_m"], [optimizer.get_slot(trained.layers[0].kernel, "m"),
                                  optimizer.get_slot(trained.layers[1].kernel, "m")])}
    autotrace.layers.Dense(5)  # a fresh process may number its layers differently
    fresh, fresh_optimizer = make()
    assert fresh.layers[0].name != trained.layers[0].name
    status = Checkpoint(model=fresh, optimizer=fresh_optimizer).restore(path)
    assert "optimizer/slots/model/layers/0/kernel/m" in status.waiting
    fresh_optimizer.apply_gradients([(np.zeros(v.shape), v) for v in fresh.trainable_variables])
    status.assert_consumed()
    # One step with zero gradients: m decays by beta_1 from the restored value.
    np.testing.assert_allclose(fresh_optimizer.get_slot(fresh.layers[0].kernel, "m").numpy(),
                               0.9 * expected["first_m"])
    np.testing.assert_allclose(fresh_optimizer.get_slot(fresh.layers[1].kernel, "m").numpy(),
                               0.9 * expected["second_m"])


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_slots_restored_before_the_first_step_wait_for_it(tmp_path, traced):
    model, optimizer = Linear(2, name="net"), optimizers.SGD(0.1, momentum=0.9)
    model(X)
    train(model, optimizer, 2)
    path = Checkpoint(model=model, optimizer=optimizer).save(tmp_path / "ckpt")
    velocity = optimizer.slots["net/kernel"]["momentum"].numpy()
    fresh = optimizers.SGD(0.1, momentum=0.9)
    status = Checkpoint(model=model, optimizer=fresh).restore(path)
    assert status.waiting == ["optimizer/slots/model/kernel/momentum"]
    with pytest.raises(AssertionError, match=re.escape(
            f"checkpoint {path}: values not restored, since no Variable exists at their "
            "paths: 'optimizer/slots/model/kernel/momentum'. Build the objects")):
        status.assert_consumed()
    before = model.kernel.numpy()

    def step(gradient):
        fresh.apply_gradients([(gradient, model.kernel)])
    step = autotrace.function(step) if traced else step
    step(np.ones((4, 2)))
    status.assert_consumed()
    velocity = 0.9 * velocity - 0.1
    np.testing.assert_allclose(fresh.slots["net/kernel"]["momentum"].numpy(), velocity)
    np.testing.assert_allclose(model.kernel.numpy(), before + velocity)
    step(np.ones((4, 2)))  # the slot goes on from its new value, not the restored one
    np.testing.assert_allclose(fresh.slots["net/kernel"]["momentum"].numpy(),
                               0.9 * velocity - 0.1)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_lazily_built_module_restored_before_its_first_call(tmp_path, traced):
    trained = Stack(name="trained")
    trained(X)
    path = Checkpoint(model=trained).save(tmp_path / "ckpt")
    fresh = Stack(name="fresh")
    status = Checkpoint(model=fresh).restore(path)
    assert status.waiting == ["model/layers/0/kernel", "model/layers/1/kernel"]
    assert fresh.extra["scale"].numpy() == 2.0  # existing variables are restored at once
    call = autotrace.function(fresh) if traced else fresh
    np.testing.assert_allclose(call(X), trained(X))
    status.assert_consumed().assert_existing_objects_matched()
    assert_values(fresh.variables, values(trained.variables))
    if traced:
        fresh.layers[0].kernel.assign(np.zeros((4, 3)))
        np.testing.assert_array_equal(call(X), np.zeros((2, 2)))  # not the restored values


def test_a_waiting_value_of_another_shape_is_an_error_when_the_variable_is_made(tmp_path):
    trained = Linear(3, name="net")
    trained(X)
    path = Checkpoint(model=trained).save(tmp_path / "ckpt")
    fresh = Linear(3, name="net")
    status = Checkpoint(model=fresh).restore(path)
    with pytest.raises(CheckpointError) as error:
        fresh(np.ones((2, 5)))
    message = (f"Variable 'model/kernel' has shape (5, 3), but checkpoint {path} holds shape "
               "(4, 3). The value still waits, and a layer that made the Variable while it "
               "built is left unbuilt: build it again so that it makes the Variable with shape "
               "(4, 3) and dtype float64 (a layer makes its weights in the floating dtype of its "
               "first inputs)")
    assert str(error.value) == message
    with pytest.raises(AssertionError, match=re.escape(message)):
        status.assert_consumed()
    Linear(3, name="net")(X)  # the error is raised once, not at every later attribute set
    assert not fresh.built and fresh.variables == [] and status.waiting == ["model/kernel"]
    np.testing.assert_array_equal(fresh(X), trained(X))  # built again: restored
    status.assert_consumed()


def test_a_layer_built_in_another_dtype_than_saved_waits_and_restores_when_built_again(
        tmp_path):
    # Saved in float32, called first on float64 inputs (np.ones' default): refused, nothing
    # lost; called on float32 inputs, the layers build in float32 and get the saved values.
    x32 = np.ones((2, 3), np.float32)
    trained = autotrace.layers.Sequential([autotrace.layers.Dense(4), autotrace.layers.Dense(1)])
    trained(x32)
    path = Checkpoint(model=trained).save(tmp_path / "ckpt")
    fresh = autotrace.layers.Sequential([autotrace.layers.Dense(4), autotrace.layers.Dense(1)])
    status = Checkpoint(model=fresh).restore(path)
    with pytest.raises(CheckpointError, match=r"^Variable 'model/layers/0/kernel' has dtype "
                                              r"float64, but checkpoint .* holds dtype float32\."):
        fresh(np.ones((2, 3)))
    assert not fresh.layers[0].built and fresh.variables == []   # no orphan kernel
    assert len(status.waiting) == 4
    np.testing.assert_array_equal(fresh(x32), trained(x32))
    status.assert_consumed()
    assert_values(fresh.variables, values(trained.variables))


def test_values_waiting_for_a_model_that_is_gone_do_not_keep_it_alive(tmp_path):
    import gc
    import weakref
    from autotrace import tracking
    trained = Linear(3, name="net")
    trained(X)
    path = Checkpoint(model=trained).save(tmp_path / "ckpt")
    listening = len(tracking._listeners)
    fresh = Linear(3, name="net")
    status = Checkpoint(model=fresh).restore(path)
    assert status.waiting == ["model/kernel"] and len(tracking._listeners) == listening + 1
    gone = weakref.ref(fresh)
    del fresh
    gc.collect()
    assert gone() is None
    Linear(3, name="other")(X)  # an attribute set: the restore finds its model gone, stops
    assert len(tracking._listeners) == listening
    assert status.waiting == ["model/kernel"]


def test_a_model_built_inside_implicit_grad_starts_from_the_restored_values(tmp_path):
    def make(initializer):
        return autotrace.layers.Sequential([
            autotrace.layers.Dense(1, use_bias=False, kernel_initializer=initializer),
            autotrace.layers.Dense(1, use_bias=False, kernel_initializer=initializer)])

    def loss(model, x):
        return np.sum(model(x))

    x = np.array([[1.0]])
    trained = make("ones")
    trained(x)
    path = Checkpoint(model=trained).save(tmp_path / "ckpt")
    fresh = make("zeros")
    Checkpoint(model=fresh).restore(path).expect_partial()
    # The layers are built, and restored, inside the loss: the adjoint sweep's recomputation
    # of each layer must see the restored kernels too (d loss / d kernel = the other kernel).
    gradients = autotrace.implicit_grad(loss)(fresh, x)
    assert [float(g.item()) for g, _ in gradients] == [1.0, 1.0]
    assert [float(v.numpy().item()) for v in fresh.variables] == [1.0, 1.0]


def test_values_no_object_makes_are_reported(tmp_path):
    x, y = Variable(1.0), Variable(2.0)
    path = Checkpoint(x=x, y=y).save(tmp_path / "ckpt")
    status = Checkpoint(x=x).restore(path)
    with pytest.raises(AssertionError, match="values not restored, since no Variable exists "
                                             "at their paths: 'y'. Build"):
        status.assert_consumed()
    assert status.expect_partial() is status


def test_restoring_none_restores_nothing(tmp_path):
    x = Variable(1.0)
    status = Checkpoint(x=x).restore(latest_checkpoint(tmp_path))
    with pytest.raises(AssertionError, match="nothing was restored"):
        status.assert_consumed()
    assert x == 1.0


def test_save_right_after_restore_keeps_waiting_values(tmp_path):
    trained = Linear(3, name="net")
    trained(X)
    path = Checkpoint(model=trained).save(tmp_path / "ckpt")
    ckpt = Checkpoint(model=Linear(3, name="net"))
    ckpt.restore(path)
    again = ckpt.save(tmp_path / "ckpt")
    assert again.endswith("ckpt-2")
    other = Linear(3, name="net")
    Checkpoint(model=other).restore(again)
    other(X)
    assert_values(other.variables, values(trained.variables))


# --- damaged files and mismatches: an error naming variable and file, nothing assigned ----------

@pytest.fixture
def saved(tmp_path):
    """Variables a (checkpointed before b) and b, saved, then changed."""
    a, b = Variable(np.ones(3), name="a"), Variable(np.full((2, 2), 2.0), name="b")
    ckpt = Checkpoint(a=a, b=b)
    path = ckpt.save(tmp_path / "ckpt")
    a.assign(np.zeros(3))
    b.assign(np.zeros((2, 2)))
    return ckpt, path, a, b


def rewrite_index(path, change):
    index = json.loads(open(path + ".index.json").read())
    change(index)
    with open(path + ".index.json", "w") as file:
        json.dump(index, file)


def restore_error(ckpt, path, a, b) -> str:
    with pytest.raises(CheckpointError) as error:
        ckpt.restore(path)
    assert a.numpy().tolist() == [0.0] * 3 and b.numpy().tolist() == [[0.0, 0.0]] * 2
    return str(error.value)


def truncate(file_name, size):
    with open(file_name, "r+b") as file:
        file.truncate(size(os.path.getsize(file_name)))


def write_npz(file_name, arrays):
    with open(file_name, "wb") as file:
        _write_npz(file, arrays)


# How a checkpoint's files are damaged -> the message (ending "..." for its start only).
DAMAGED_FILES = {
    "index missing": (lambda path: os.remove(path + ".index.json"),
                      "no checkpoint at {path}: {path}.index.json does not exist"),
    "index not JSON": (lambda path: truncate(path + ".index.json", lambda size: 40),
                       "{path}.index.json is not valid JSON (Unterminated string..."),
    "index without counter": (
        lambda path: rewrite_index(path, lambda index: index.pop("save_counter")),
        "{path}.index.json is not a checkpoint index: it has no integer 'save_counter'"),
    "counter true": (
        lambda path: rewrite_index(path, lambda index: index.update(save_counter=True)),
        "{path}.index.json is not a checkpoint index: it has no integer 'save_counter'"),
    "negative counter": (
        lambda path: rewrite_index(path, lambda index: index.update(save_counter=-3)),
        "{path}.index.json is not a checkpoint index: its 'save_counter' is -3, but a count of "
        "saves is never negative"),
    "index nested too deeply": (  # json.loads raises RecursionError
        lambda path: open(path + ".index.json", "w").write("[" * 100_000 + "]" * 100_000),
        "{path}.index.json is not a checkpoint index: its JSON is nested too deeply to be read"),
    "index naming a data file elsewhere": (
        lambda path: rewrite_index(path, lambda index: index.update(data="../other-1.npz")),
        "{path}.index.json is not a checkpoint index: its 'data' is '../other-1.npz'; the data "
        "of ckpt-1 is 'ckpt-1.npz' or 'ckpt-1.b.npz'"),
    "data missing": (lambda path: os.remove(path + ".npz"),
                     "{path}.npz does not exist (the data of checkpoint {path}, indexed by "
                     "{path}.index.json)"),
    "data truncated": (lambda path: truncate(path + ".npz", lambda size: size // 2),
                       "{path}.npz is not a readable npz file (File is not a zip file)"),
    "checksum mismatch": (  # b's bytes changed, a's kept
        lambda path: write_npz(path + ".npz", {"a": np.ones(3), "b": np.full((2, 2), 2.5)}),
        "'b' in {path}.npz is corrupt: it does not match its shape, dtype and checksum in "
        "{path}.index.json"),
    "name not in data": (lambda path: write_npz(path + ".npz", {"a": np.ones(3)}),
                         "'b' is listed in {path}.index.json but missing from {path}.npz"),
}


@pytest.mark.parametrize("damage, expected", DAMAGED_FILES.values(), ids=DAMAGED_FILES.keys())
def test_damaged_files(saved, damage, expected):
    ckpt, path, a, b = saved
    damage(path)
    message, expected = restore_error(ckpt, path, a, b), expected.format(path=path)
    if expected.endswith("..."):
        assert message.startswith(expected[:-3]), message
    else:
        assert message == expected


def test_variable_missing_from_the_checkpoint(saved, tmp_path):
    ckpt, path, a, b = saved
    c = Variable(0.0, name="c")
    with pytest.raises(CheckpointError) as error:
        Checkpoint(a=a, b=b, c=c).restore(path)
    assert str(error.value) == (f"checkpoint {path} has no value for Variable 'c' (it has "
                                f"'a', 'b'; see {path}.index.json)")
    assert a.numpy().tolist() == [0.0] * 3


def test_variable_of_another_shape(saved):
    _, path, a, _ = saved
    b = Variable(np.zeros((2, 3)), name="b")
    assert restore_error(Checkpoint(a=a, b=b), path, a, Variable(np.zeros((2, 2)))) == (
        f"Variable 'b' has shape (2, 3), but checkpoint {path} holds shape (2, 2)")


def test_variable_of_another_dtype(saved):
    _, path, a, _ = saved
    b = Variable(np.zeros((2, 2), np.float32), name="b")
    assert restore_error(Checkpoint(a=a, b=b), path, a, Variable(np.zeros((2, 2)))) == (
        f"Variable 'b' has dtype float32, but checkpoint {path} holds dtype float64")


# --- atomic saves, latest_checkpoint, the counter -----------------------------------------------

@pytest.mark.parametrize("failing", [".npz", ".index.json", "checkpoint"])
def test_a_crash_while_saving_leaves_the_previous_checkpoint(tmp_path, monkeypatch, failing):
    x = Variable(np.arange(3.0))
    ckpt = Checkpoint(x=x)
    first = ckpt.save(tmp_path / "ckpt")
    x.assign(np.full(3, 9.0))
    replace = os.replace

    def crash(source, target):
        if target.endswith(failing):
            raise OSError("disk full")
        replace(source, target)
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        ckpt.save(tmp_path / "ckpt")
    monkeypatch.undo()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]
    assert ckpt.save_counter == 1 and latest_checkpoint(tmp_path) == first
    ckpt.restore(first)
    assert x.numpy().tolist() == [0.0, 1.0, 2.0]
    assert ckpt.save(tmp_path / "ckpt") == str(tmp_path / "ckpt-2")


def test_latest_checkpoint(tmp_path):
    assert latest_checkpoint(tmp_path) is None
    assert latest_checkpoint(tmp_path / "not-there") is None
    ckpt = Checkpoint(x=Variable(1.0))
    ckpt.save(tmp_path / "ckpt")
    second = ckpt.save(tmp_path / "ckpt")
    assert latest_checkpoint(tmp_path) == second
    other = Checkpoint(y=Variable(2.0)).save(tmp_path / "other")
    assert latest_checkpoint(str(tmp_path)) == other
    assert json.loads((tmp_path / "checkpoint").read_text()) == {
        "latest": "other-1", "all": ["ckpt-1", "ckpt-2", "other-1"]}
    (tmp_path / "checkpoint").write_text("{")
    with pytest.raises(CheckpointError, match="checkpoint is not a valid checkpoint state"):
        latest_checkpoint(tmp_path)
    (tmp_path / "checkpoint").write_text("{\"a\": " * 100_000 + "}" * 100_000)
    with pytest.raises(CheckpointError) as error:
        latest_checkpoint(tmp_path)
    assert str(error.value) == (f"{tmp_path}/checkpoint is not a valid checkpoint state file: "
                                "its JSON is nested too deeply to be read")


def test_save_counter_goes_on_after_restore(tmp_path):
    x = Variable(1.0)
    ckpt = Checkpoint(x=x)
    for _ in range(3):
        path = ckpt.save(tmp_path / "ckpt")
    again = Checkpoint(x=x)
    assert again.save_counter == 0
    again.restore(path)
    assert again.save_counter == 3
    assert again.save(tmp_path / "ckpt") == str(tmp_path / "ckpt-4")


def test_saving_or_restoring_inside_a_traced_function_is_an_error(tmp_path):
    ckpt = Checkpoint(x=Variable(1.0))
    step = autotrace.function(lambda: ckpt.save(tmp_path / "ckpt"))
    with pytest.raises(TypeError, match="Checkpoint.save cannot run inside autotrace.function"):
        step()


# --- two Variables under one path are refused ---------------------------------------------------

class Holder:
    """A plain object whose attribute names are set freely (setattr allows any string)."""


def holder_with_attributes(**attributes):
    holder = Holder()
    for name, value in attributes.items():
        setattr(holder, name, value)
    return holder


# objects -> how the two Variables are reached, in the message
COLLIDING = {
    "key with a slash beside nested dicts": (
        lambda v, w: {"a": {"a/b": v, "a": {"b": w}}}, "'a/a/b': a['a/b'] and a['a']['b']"),
    "int key beside str key": (lambda v, w: {"a": {1: v, "1": w}}, "'a/1': a[1] and a['1']"),
    "list index beside dict key": (lambda v, w: {"a": [v], "b": w, "a/0": Variable(3.0)},
                                   "'a/0': a[0] and a/0"),
    "attribute with a slash beside a dict": (
        lambda v, w: {"m": holder_with_attributes(**{"x/y": v, "x": {"y": w}})},
        "'m/x/y': m.x/y and m.x['y']"),
}


@pytest.mark.parametrize("objects, routes", COLLIDING.values(), ids=COLLIDING.keys())
def test_two_variables_under_one_path_are_refused(tmp_path, objects, routes):
    v, w = Variable(1.0), Variable(2.0)
    ckpt = Checkpoint(**objects(v, w))
    with pytest.raises(CheckpointError) as error:
        ckpt.save(tmp_path / "ckpt")
    assert str(error.value) == (
        f"two Variables would be saved under one path {routes}; rename a dict key or attribute "
        "so that their paths differ ('/' separates the parts of a path, and keys are written "
        "with str())")
    assert not os.listdir(tmp_path)


def test_restoring_into_two_variables_under_one_path_is_refused(tmp_path):
    path = Checkpoint(a={"a": {"b": Variable(5.0)}}).save(tmp_path / "ckpt")
    v, w = Variable(1.0), Variable(2.0)
    with pytest.raises(CheckpointError, match=re.escape("one path 'a/a/b': a['a/b'] and a[")):
        Checkpoint(a={"a/b": v, "a": {"b": w}}).restore(path)
    assert (float(v), float(w)) == (1.0, 2.0)


def test_one_variable_reached_twice_is_saved_once(tmp_path):
    v = Variable(1.0)
    path = Checkpoint(a={"x": v, "y": [v]}).save(tmp_path / "ckpt")
    assert list(json.loads(open(path + ".index.json").read())["variables"]) == ["a/x"]


def test_a_variable_at_an_optimizer_slot_path_is_refused(tmp_path):
    kernel = Variable(np.ones(2), name="kernel")
    optimizer = optimizers.Adam(0.1)
    optimizer.apply_gradients([(np.ones(2), kernel)])
    ckpt = Checkpoint(model={"kernel": kernel}, optimizer=optimizer,
                      **{"optimizer/slots/model/kernel/m": Variable(np.zeros(2))})
    with pytest.raises(CheckpointError, match=re.escape(
            "one path 'optimizer/slots/model/kernel/m': ")):
        ckpt.save(tmp_path / "ckpt")


# --- files that lie: sizes, names out of the directory, temporaries ------------------------------

def npy_claiming(shape, data: bytes) -> bytes:
    """An npy file whose header claims float64s of `shape`, followed by `data`."""
    file = io.BytesIO()
    np.lib.format.write_array_header_1_0(file, {"descr": "<f8", "fortran_order": False,
                                                "shape": shape})
    return file.getvalue() + data


def test_a_header_claiming_more_bytes_than_the_file_is_an_error_not_an_allocation(saved):
    ckpt, path, a, b = saved
    with zipfile.ZipFile(path + ".npz", "w") as archive:  # 800 GB of float64 for a
        archive.writestr("a.npy", npy_claiming((10**11,), np.ones(3).tobytes()))
        archive.writestr("b.npy", npy_claiming((2, 2), np.full(4, 2.0).tobytes()))
    assert restore_error(ckpt, path, a, b) == (
        f"'a' in {path}.npz is corrupt: its header claims 800000000000 bytes of data, more "
        f"than the whole file holds ({os.path.getsize(path + '.npz')} bytes)")


@pytest.mark.parametrize("latest", ["../outside-1", "/tmp/outside-1", "sub/ckpt-1", ".."])
def test_a_state_file_naming_a_checkpoint_out_of_its_directory_is_refused(tmp_path, latest):
    directory = tmp_path / "runs"
    Checkpoint(x=Variable(1.0)).save(directory / "ckpt")
    Checkpoint(x=Variable(2.0)).save(tmp_path / "outside")  # a real checkpoint there
    (directory / "checkpoint").write_text(json.dumps({"latest": latest, "all": []}))
    with pytest.raises(CheckpointError) as error:
        latest_checkpoint(directory)
    assert str(error.value) == (
        f"{directory}/checkpoint is not a valid checkpoint state file: it names {latest!r}, "
        "which is not the name of a checkpoint in its directory (the state file holds names "
        "alone, no paths)")


def test_a_checkpoint_whose_files_link_out_of_the_directory_is_refused(tmp_path):
    directory = tmp_path / "runs"
    directory.mkdir()
    elsewhere = Checkpoint(x=Variable(2.0)).save(tmp_path / "elsewhere")
    for suffix in (".index.json", ".npz"):
        os.symlink(elsewhere + suffix, directory / f"ckpt-1{suffix}")
    (directory / "checkpoint").write_text(json.dumps({"latest": "ckpt-1", "all": ["ckpt-1"]}))
    with pytest.raises(CheckpointError) as error:
        latest_checkpoint(directory)
    assert str(error.value) == (
        f"{directory}/ckpt-1.index.json leads out of {directory} (to {elsewhere}.index.json); "
        "autotrace reads only checkpoints in the directory of their state file")


def test_a_replacing_data_file_that_links_out_of_the_directory_is_refused(tmp_path):
    directory = tmp_path / "runs"
    Checkpoint(x=Variable(1.0)).save(directory / "ckpt")
    elsewhere = Checkpoint(x=Variable(2.0)).save(tmp_path / "elsewhere")
    os.symlink(elsewhere + ".npz", directory / "ckpt-1.b.npz")
    rewrite_index(str(directory / "ckpt-1"), lambda index: index.update(data="ckpt-1.b.npz"))
    with pytest.raises(CheckpointError) as error:
        latest_checkpoint(directory)
    assert str(error.value) == (
        f"{directory}/ckpt-1.b.npz leads out of {directory} (to {elsewhere}.npz); "
        "autotrace reads only checkpoints in the directory of their state file")


def test_a_directory_that_is_a_link_is_fine(tmp_path):
    path = Checkpoint(x=Variable(2.0)).save(tmp_path / "real" / "ckpt")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert latest_checkpoint(tmp_path / "link") == str(tmp_path / "link" / "ckpt-1")
    assert path == str(tmp_path / "real" / "ckpt-1")


def test_a_save_removes_the_temporary_files_a_killed_save_left(tmp_path):
    ckpt = Checkpoint(x=Variable(1.0))
    ckpt.save(tmp_path / "ckpt")
    left = [".ckpt-2.npz.0123456789ab.tmp", ".ckpt-2.index.json.ba9876543210.tmp",
            ".ckpt-1.b.npz.00000000ffff.tmp", ".checkpoint.0123456789ab.tmp"]
    kept = [".other-2.npz.0123456789ab.tmp",     # another prefix's
            ".ckpt-2.npz.tmp", "ckpt-2.npz.0123456789ab.tmp", ".ckpt-x.npz.0123456789ab.tmp",
            ".ckpt-2.npz.0123456789ab.tmp.keep", ".checkpoint.tmp",
            ".checkpoints.0123456789ab.tmp", "notes.tmp"]  # not names autotrace makes
    for name in left + kept:
        (tmp_path / name).write_bytes(b"partial")
    ckpt.save(tmp_path / "ckpt")
    assert sorted(os.listdir(tmp_path)) == sorted(
        kept + ["checkpoint", "ckpt-1.index.json", "ckpt-1.npz", "ckpt-2.index.json",
                "ckpt-2.npz"])


def test_a_variable_named_like_a_data_member_reads_its_own_value(tmp_path):
    x, x_npy = Variable(np.ones(2)), Variable(np.full(3, 2.0))
    ckpt = Checkpoint(a={"x": x, "x.npy": x_npy})
    path = ckpt.save(tmp_path / "ckpt")
    x.assign(np.zeros(2))
    x_npy.assign(np.zeros(3))
    ckpt.restore(path)
    assert x.numpy().tolist() == [1.0, 1.0] and x_npy.numpy().tolist() == [2.0, 2.0, 2.0]
