"""Saves cut short at every step: a save that replaces an existing checkpoint (training on after
restoring an earlier one) and fails or is killed at any write, flush, fsync, rename or removal
leaves every checkpoint restorable, with its old values or, once the new index is in place, the
new ones; and a saving process killed by SIGKILL at random moments never leaves a damaged
checkpoint behind."""
import itertools
import os
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from autotrace import Checkpoint, CheckpointManager, Variable, latest_checkpoint
from autotrace.checkpoints import storage as checkpoint_files
from autotrace.checkpoints.storage import read_state

ROOT = Path(__file__).resolve().parent.parent


class InjectedFailure(OSError):
    """The failure the test makes one file operation raise."""


class FileOperations:
    """Counts the operations by which autotrace changes files while saving (opening a file to
    write, each write, flush and fsync of it, each rename and removal) and makes the operation
    numbered `fail_at` raise InjectedFailure, after calling `before_failing()` (which can copy
    the directory as a process killed at that moment would leave it). `log` lists what each
    operation up to the failing one was."""

    def __init__(self, monkeypatch, fail_at: int, before_failing=lambda: None):
        self.fail_at, self.before_failing, self.log = fail_at, before_failing, []
        real_open, real_replace, real_remove, real_fsync = open, os.replace, os.remove, os.fsync
        # The descriptors of files open to write through checkpoint_files (a number is used
        # again once its file is closed: by the directory's sync, whose failure autotrace
        # ignores, since it only makes renames durable against a power cut).
        written = set()

        def opening(file, mode="r", *arguments, **keywords):
            if not any(letter in mode for letter in "wxa+"):
                return real_open(file, mode, *arguments, **keywords)
            self.step(f"open {os.path.basename(file)}")
            opened = real_open(file, mode, *arguments, **keywords)
            written.add(opened.fileno())
            return CountedFile(opened, os.path.basename(file), self.step, written)

        def replacing(source, target):
            self.step(f"rename to {os.path.basename(target)}")
            real_replace(source, target)

        def removing(path):
            self.step(f"remove {os.path.basename(path)}")
            real_remove(path)

        def syncing(descriptor):
            if descriptor in written:
                self.step("fsync")
            real_fsync(descriptor)

        monkeypatch.setattr(checkpoint_files, "open", opening, raising=False)
        monkeypatch.setattr(os, "replace", replacing)
        monkeypatch.setattr(os, "remove", removing)
        monkeypatch.setattr(os, "fsync", syncing)

    def step(self, what: str) -> None:
        if len(self.log) >= self.fail_at:
            return  # the clean-up after the failure runs as usual, and uncounted
        self.log.append(what)
        if len(self.log) == self.fail_at:
            self.before_failing()
            raise InjectedFailure(f"injected failure of operation {self.fail_at}: {what}")

    def done(self, what: str) -> bool:
        """Whether the operation `what` ran to its end before the failure."""
        return what in self.log[:self.fail_at - 1]


class CountedFile:
    """A file opened to write whose writes and flushes count as operations."""

    def __init__(self, file, name: str, step, open_descriptors: set):
        self._file, self._name, self._step = file, name, step
        self._open_descriptors = open_descriptors

    def write(self, data):
        self._step(f"write {len(data)} bytes to {self._name}")
        return self._file.write(data)

    def flush(self):
        self._step(f"flush {self._name}")
        self._file.flush()

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self._open_descriptors.discard(self._file.fileno())
        self._file.close()


def variables(value: float):
    """Two variables whose values are both made from `value` (a checkpoint holding one
    save's x with another save's y is damaged)."""
    return {"x": Variable(np.full((50, 4), value)), "y": Variable(np.float64(-value))}


def assert_restores(path, value: float) -> None:
    """Checkpoint `path` restores to variables(value)."""
    restored = variables(0.0)
    Checkpoint(**restored).restore(path).assert_consumed()
    expected = variables(value)
    for name, variable in restored.items():
        np.testing.assert_array_equal(variable.numpy(), expected[name].numpy(), err_msg=name)


def saved_checkpoints(directory, count: int) -> None:
    """`directory`/ckpt-1 ... ckpt-`count`, ckpt-N holding variables(N); the last the latest."""
    for number in range(1, count + 1):
        ckpt = Checkpoint(**variables(float(number)))
        ckpt.save_counter = number - 1
        ckpt.save(directory / "ckpt")


NEW_VALUE = 99.0


def save_over_ckpt_2(directory, saver: str) -> None:
    """Restore ckpt-1 and save again, which writes ckpt-2 anew (its save count is 2)."""
    restored = variables(0.0)
    ckpt = Checkpoint(**restored)
    if os.path.exists(directory / "ckpt-1.index.json"):
        ckpt.restore(directory / "ckpt-1")
    else:  # the manager deleted it
        ckpt.save_counter = 1
    for name, value in variables(NEW_VALUE).items():
        restored[name].assign(value.numpy())
    if saver == "Checkpoint.save":
        ckpt.save(directory / "ckpt")
    else:
        CheckpointManager(ckpt, directory, max_to_keep=2).save()


def check_after_cut(directory, operations: FileOperations, checkpoints: int, saver: str):
    """What is in `directory` after the save was cut at `operations.fail_at`: each checkpoint
    restores, ckpt-2 with its old values until its new index was in place, the state file
    names the previous latest until the new state file was in place."""
    index_switched = operations.done("rename to ckpt-2.index.json")
    state_switched = operations.done("rename to checkpoint")
    assert index_switched or not state_switched
    where = f"cut at operation {operations.fail_at} ({operations.log[-1]})"
    latest = "ckpt-2" if state_switched else f"ckpt-{checkpoints}"
    assert latest_checkpoint(directory) == str(directory / latest), where
    assert_restores(directory / "ckpt-2", NEW_VALUE if index_switched else 2.0)
    if not operations.done("remove ckpt-1.index.json"):  # the manager deletes it (of three)
        assert_restores(directory / "ckpt-1", 1.0)
    if checkpoints == 3:
        assert_restores(directory / "ckpt-3", 3.0)


@pytest.mark.parametrize("saver", ["Checkpoint.save", "CheckpointManager.save"])
@pytest.mark.parametrize("checkpoints", [2, 3], ids=["replacing-the-latest",
                                                     "replacing-an-earlier-one"])
def test_a_save_failing_or_killed_at_any_file_operation_leaves_every_checkpoint(
        tmp_path, monkeypatch, checkpoints, saver):
    template = tmp_path / "template"
    saved_checkpoints(template, checkpoints)
    for fail_at in itertools.count(1):
        directory, killed = tmp_path / f"failed-{fail_at}", tmp_path / f"killed-{fail_at}"
        shutil.copytree(template, directory)

        def as_a_kill_leaves_it():
            # Everything the save did up to here, and nothing of its clean-up.
            shutil.copytree(directory, killed)
        with monkeypatch.context() as patch:
            operations = FileOperations(patch, fail_at, as_a_kill_leaves_it)
            try:
                save_over_ckpt_2(directory, saver)
            except InjectedFailure:
                failed = True
            else:
                failed = False
        if not failed:
            assert len(operations.log) == fail_at - 1
            break
        assert len(operations.log) == fail_at
        assert not [name for name in os.listdir(directory) if name.endswith(".tmp")]
        check_after_cut(directory, operations, checkpoints, saver)
        check_after_cut(killed, operations, checkpoints, saver)
        # The next save goes through, and leaves no file of the cut one behind.
        for cut in (directory, killed):
            deletes_first = saver == "CheckpointManager.save" and checkpoints == 3
            # A deletion of ckpt-1 cut short leaves files that no state file lists (and that
            # no manager deletes): the state file goes first, never naming files that are gone.
            left = ([name for name in os.listdir(cut) if name.startswith("ckpt-1.")]
                    if deletes_first and "ckpt-1" not in read_state(cut)["all"] else [])
            save_over_ckpt_2(cut, saver)
            assert latest_checkpoint(cut) == str(cut / "ckpt-2")
            assert_restores(cut / "ckpt-2", NEW_VALUE)
            kept = [number for number in range(1, checkpoints + 1)
                    if not (deletes_first and number == 1)]
            data = [name for name in os.listdir(cut) if name.startswith("ckpt-2.")]
            assert sorted(os.listdir(cut)) == sorted(
                ["checkpoint"] + [f"ckpt-{number}{suffix}" for number in kept if number != 2
                                  for suffix in (".index.json", ".npz")] + data + left), fail_at
            assert len(data) == 2 and "ckpt-2.index.json" in data
    # Every kind of step was cut once: writes and renames of the data, the index and the state
    # file, and the removal of the data the new index replaced.
    assert fail_at > 20
    for done in ["rename to ckpt-2.b.npz", "rename to ckpt-2.index.json", "remove ckpt-2.npz",
                 "rename to checkpoint"]:
        assert done in operations.log
    assert any(step.startswith("write") and step.endswith(".tmp") and ".ckpt-2.b.npz." in step
               for step in operations.log)  # the data is written to a temporary, then renamed


def test_the_data_alternates_between_two_files_as_a_checkpoint_is_replaced(tmp_path):
    saved_checkpoints(tmp_path, 2)
    for data in ["ckpt-2.b.npz", "ckpt-2.npz", "ckpt-2.b.npz"]:
        save_over_ckpt_2(tmp_path, "Checkpoint.save")
        assert sorted(name for name in os.listdir(tmp_path) if name.startswith("ckpt-2")) == (
            sorted([data, "ckpt-2.index.json"]))
        assert_restores(tmp_path / "ckpt-2", NEW_VALUE)


# --- SIGKILL at random moments --------------------------------------------------------------

SAVING_FOREVER = """
    import os, signal, sys, time
    import numpy as np
    from autotrace import Checkpoint, Variable

    # Each round: a child saves over ckpt-2 of its directory again and again, with values
    # 10, 11, ..., and the parent kills it at a random moment after its first save.
    for round_number, delay in enumerate(float(delay) for delay in sys.argv[1:]):
        directory = f"round-{round_number}"
        first_saved, saving = os.pipe()
        child = os.fork()
        if child == 0:
            x, y = Variable(np.zeros((1000, 4))), Variable(np.float64(0.0))
            ckpt = Checkpoint(x=x, y=y)
            for value in range(10, 1000000):
                ckpt.restore(f"{directory}/ckpt-1")
                x.assign(np.full((1000, 4), float(value)))
                y.assign(np.float64(-value))
                ckpt.save(f"{directory}/ckpt")
                if value == 10:
                    os.write(saving, b"1")
            os._exit(0)
        assert os.read(first_saved, 1) == b"1"
        time.sleep(delay)
        os.kill(child, signal.SIGKILL)
        _, status = os.waitpid(child, 0)
        print(f"round {round_number}: killed={os.WIFSIGNALED(status)}", flush=True)
"""


def test_a_process_killed_while_saving_leaves_a_checkpoint_that_restores(tmp_path):
    seed = random.randrange(10**6)
    delays = [random.Random(seed + round_number).uniform(0.0, 0.3) for round_number in
              range(8)]
    for round_number in range(len(delays)):
        directory = tmp_path / f"round-{round_number}"
        ckpt = Checkpoint(x=Variable(np.full((1000, 4), 1.0)), y=Variable(np.float64(-1.0)))
        ckpt.save(directory / "ckpt")
        ckpt = Checkpoint(x=Variable(np.full((1000, 4), 2.0)), y=Variable(np.float64(-2.0)))
        ckpt.save_counter = 1
        ckpt.save(directory / "ckpt")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    started = time.monotonic()
    finished = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SAVING_FOREVER), *map(str, delays)],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert time.monotonic() - started < 60
    assert finished.stdout.count("killed=True") == len(delays), finished.stdout
    for round_number in range(len(delays)):
        directory = tmp_path / f"round-{round_number}"
        assert latest_checkpoint(directory) == str(directory / "ckpt-2")
        x, y = Variable(np.zeros((1000, 4))), Variable(np.float64(0.0))
        Checkpoint(x=x, y=y).restore(directory / "ckpt-2")
        value = -float(y.numpy())
        assert value >= 10.0, f"seed {seed}, round {round_number}: {value}"
        np.testing.assert_array_equal(x.numpy(), np.full((1000, 4), value),
                                      err_msg=f"seed {seed}, round {round_number}")
        # The next save of ckpt-2 goes through, and takes away what the killed one left.
        ckpt = Checkpoint(x=x, y=y)
        ckpt.save_counter = 1
        y.assign(np.float64(-5.0))
        ckpt.save(directory / "ckpt")
        assert not [name for name in os.listdir(directory) if name.endswith(".tmp")]
        assert len([name for name in os.listdir(directory) if name.startswith("ckpt-2")]) == 2
