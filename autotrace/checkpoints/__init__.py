"""Saving and restoring Variables: `Checkpoint` and `latest_checkpoint` (checkpoint.py), the
files and how they are written safely (storage.py), and `CheckpointManager`, numbered
checkpoints in one directory (manager.py). (Gradient checkpointing, recomputing a function's
values in its derivative, is `autotrace.checkpoint`: autotrace/recompute.py.)
"""
from .checkpoint import Checkpoint, CheckpointError, RestoreStatus, latest_checkpoint
from .manager import CheckpointManager

__all__ = ["Checkpoint", "CheckpointError", "RestoreStatus", "latest_checkpoint",
           "CheckpointManager"]
