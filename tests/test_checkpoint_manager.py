"""CheckpointManager: numbered saves in one directory, the newest max_to_keep kept (files and
state file), resuming a run, restore_or_initialize, and its argument errors."""
import json
import os

import pytest

from autotrace import Checkpoint, CheckpointManager, Variable, latest_checkpoint


def files(directory):
    return sorted(os.listdir(directory))


def checkpoint_files(*numbers):
    return sorted(f"ckpt-{number}{suffix}" for number in numbers
                  for suffix in (".index.json", ".npz"))


def test_keeps_the_newest_and_deletes_the_older(tmp_path):
    x = Variable(0.0)
    manager = CheckpointManager(Checkpoint(x=x), tmp_path, max_to_keep=2)
    assert manager.latest_checkpoint is None and manager.checkpoints == []
    for value in range(1, 5):
        x.assign(float(value))
        path = manager.save()
    assert path == str(tmp_path / "ckpt-4")
    assert manager.checkpoints == [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-4")]
    assert manager.latest_checkpoint == path == latest_checkpoint(tmp_path)
    assert files(tmp_path) == ["checkpoint"] + checkpoint_files(3, 4)
    assert json.loads((tmp_path / "checkpoint").read_text()) == {
        "latest": "ckpt-4", "all": ["ckpt-3", "ckpt-4"]}
    x.assign(0.0)
    Checkpoint(x=x).restore(manager.checkpoints[0])
    assert float(x) == 3.0


def test_a_manager_made_again_goes_on_with_the_checkpoints_of_the_earlier_run(tmp_path):
    x = Variable(1.0)
    ckpt = Checkpoint(x=x)
    first = CheckpointManager(ckpt, tmp_path, max_to_keep=3, checkpoint_name="model")
    for _ in range(3):
        first.save()
    Checkpoint(y=Variable(2.0)).save(tmp_path / "other")  # not the manager's: left alone
    again_ckpt = Checkpoint(x=Variable(0.0))
    again = CheckpointManager(again_ckpt, tmp_path, max_to_keep=3, checkpoint_name="model")
    assert again.checkpoints == [str(tmp_path / f"model-{n}") for n in (1, 2, 3)]
    assert again.restore_or_initialize() == str(tmp_path / "model-3")
    assert again_ckpt.save_counter == 3
    assert again.save() == str(tmp_path / "model-4")
    assert again.checkpoints == [str(tmp_path / f"model-{n}") for n in (2, 3, 4)]
    assert not os.path.exists(tmp_path / "model-1.npz")
    assert json.loads((tmp_path / "checkpoint").read_text()) == {
        "latest": "model-4", "all": ["other-1", "model-2", "model-3", "model-4"]}


def test_max_to_keep_none_keeps_every_checkpoint_and_numbers_can_be_given(tmp_path):
    manager = CheckpointManager(Checkpoint(x=Variable(1.0)), tmp_path, max_to_keep=None)
    assert manager.save(checkpoint_number=100) == str(tmp_path / "ckpt-100")
    for _ in range(6):
        manager.save()
    assert files(tmp_path) == ["checkpoint"] + checkpoint_files(100, 2, 3, 4, 5, 6, 7)
    assert manager.latest_checkpoint == str(tmp_path / "ckpt-7")


def test_restore_or_initialize_without_checkpoints_restores_nothing(tmp_path):
    x = Variable(5.0)
    assert CheckpointManager(Checkpoint(x=x), tmp_path / "new").restore_or_initialize() is None
    assert float(x) == 5.0


@pytest.mark.parametrize("arguments, error, message", [
    ({"max_to_keep": 0}, ValueError, "CheckpointManager: max_to_keep must be an int >= 1, or "
                                     "None to keep every checkpoint; got 0"),
    ({"checkpoint_name": "a/b"}, ValueError, "CheckpointManager: checkpoint_name must be a file "
                                             "name (no directory); got 'a/b'"),
])
def test_argument_errors(tmp_path, arguments, error, message):
    with pytest.raises(error) as raised:
        CheckpointManager(Checkpoint(x=Variable(1.0)), tmp_path, **arguments)
    assert str(raised.value) == message
