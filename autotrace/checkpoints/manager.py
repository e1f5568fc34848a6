"""`autotrace.CheckpointManager`: numbered checkpoints in one directory, the newest N kept.

    manager = autotrace.CheckpointManager(ckpt, "runs", max_to_keep=3)
    manager.restore_or_initialize()     # the latest checkpoint in runs, if there is one
    for epoch in range(10):
        ...
        manager.save()                  # runs/ckpt-<N>; the oldest beyond 3 are deleted
    manager.checkpoints                 # ['runs/ckpt-8', 'runs/ckpt-9', 'runs/ckpt-10']

As tf.train.CheckpointManager: the checkpoints a manager keeps are those of its name
(`<directory>/<checkpoint_name>-<N>`) listed in the directory's state file, so a manager made
again when training resumes goes on keeping (and deleting) the checkpoints of the earlier run.
"""
from __future__ import annotations

import os
import re

from .checkpoint import Checkpoint, training_ranks
from .storage import (checkpoint_in, read_state, remove_checkpoint,
                                        write_state)

__all__ = ["CheckpointManager"]


class CheckpointManager:
    """Saves a Checkpoint as `<directory>/<checkpoint_name>-<N>` and keeps the newest.

    Arguments:
        checkpoint: the autotrace.Checkpoint to save and restore.
        directory: where the checkpoints and the state file (`checkpoint`) go.
        max_to_keep: how many checkpoints to keep (an int >= 1), or None to keep all. After
            each save the oldest beyond it are deleted, and the state file lists those left.
        checkpoint_name: the start of each checkpoint's file names.

    Examples:
        >>> model = autotrace.layers.Dense(2)
        >>> manager = CheckpointManager(autotrace.Checkpoint(model=model), "runs", max_to_keep=2)
        >>> _ = manager.save(); _ = manager.save(); manager.save()
        'runs/ckpt-3'
        >>> manager.checkpoints
        ['runs/ckpt-2', 'runs/ckpt-3']
    """

    def __init__(self, checkpoint: Checkpoint, directory, max_to_keep: int | None = 5,
                 checkpoint_name: str = "ckpt"):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager needs an autotrace.Checkpoint; got "
                            f"{type(checkpoint).__name__}")
        if max_to_keep is not None and (isinstance(max_to_keep, bool) or
                                        not isinstance(max_to_keep, int) or max_to_keep < 1):
            raise ValueError(f"CheckpointManager: max_to_keep must be an int >= 1, or None to "
                             f"keep every checkpoint; got {max_to_keep!r}")
        if not checkpoint_name or os.path.basename(checkpoint_name) != checkpoint_name:
            raise ValueError(f"CheckpointManager: checkpoint_name must be a file name (no "
                             f"directory); got {checkpoint_name!r}")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._name = checkpoint_name
        self._max_to_keep = max_to_keep
        state = read_state(self._directory)
        names = [name for name in (state["all"] if state else []) if self._is_mine(name)]
        paths = [checkpoint_in(self._directory, name) for name in names]
        self._checkpoints = [path for path in paths if path is not None]

    @property
    def directory(self) -> str:
        """The directory the checkpoints are saved in."""
        return self._directory

    @property
    def max_to_keep(self) -> int | None:
        """How many checkpoints are kept (None: all)."""
        return self._max_to_keep

    @property
    def checkpoints(self) -> list[str]:
        """The paths of the checkpoints kept, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self) -> str | None:
        """The path of the newest checkpoint kept, or None if there is none yet."""
        return self._checkpoints[-1] if self._checkpoints else None

    def save(self, checkpoint_number: int | None = None) -> str:
        """Save the checkpoint as `<directory>/<checkpoint_name>-<N>`, N the checkpoint's new
        save count (or `checkpoint_number` where given), then delete the oldest checkpoints
        beyond `max_to_keep`.

        Returns:
            the new checkpoint's path.
        """
        if checkpoint_number is not None and (isinstance(checkpoint_number, bool) or
                                              not isinstance(checkpoint_number, int)):
            raise TypeError(f"CheckpointManager.save: checkpoint_number must be an int; got "
                            f"{checkpoint_number!r}")
        path = self._checkpoint._save(os.path.join(self._directory, self._name),
                                      checkpoint_number)
        kept = [other for other in self._checkpoints if other != path] + [path]
        removed = [] if self._max_to_keep is None else kept[:-self._max_to_keep]
        kept = kept[len(removed):]
        # The state file first: a save killed before the files are deleted leaves files that
        # no state lists, never a state listing files that are gone.
        ranks = training_ranks()
        if ranks is None or ranks.writes_files():  # several ranks: rank 0 writes for all
            state = read_state(self._directory)
            others = [name for name in state["all"] if not self._is_mine(name)] if state else []
            write_state(self._directory, os.path.basename(path),
                        others + [os.path.basename(other) for other in kept])
            for old in removed:
                remove_checkpoint(old)
        if ranks is not None:
            ranks.barrier()
        self._checkpoints = kept
        return path

    def restore_or_initialize(self) -> str | None:
        """Restore the latest checkpoint if there is one and return its path; else None (the
        objects keep the values they were made with)."""
        if self.latest_checkpoint is None:
            return None
        self._checkpoint.restore(self.latest_checkpoint)
        return self.latest_checkpoint

    def _is_mine(self, name: str) -> bool:
        return re.fullmatch(rf"{re.escape(self._name)}-[0-9]+", name) is not None

    def __repr__(self) -> str:
        return (f"<autotrace.CheckpointManager {os.path.join(self._directory, self._name)}-N, "
                f"max_to_keep={self._max_to_keep}>")
