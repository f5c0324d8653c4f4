"""Checkpointing: atomic, checksummed files (`write_atomically`, `save_state`, `load_state`), sharded checkpoint
directories (`is_sharded`, `write_sharded`, ...), tf.train.Checkpoint / CheckpointManager, the directory lock."""
from __future__ import annotations

from torchstrategy.checkpoint._io import (CheckpointCorruptedError, check_directory_path, load_state, save_state,
                                         write_atomically)
from torchstrategy.checkpoint.checkpoint import (Checkpoint, CheckpointLoadStatus, InitializationOnlyStatus,
                                                 checkpoint_metadata)
from torchstrategy.checkpoint.lock import DirectoryLock, DirectoryLockedError
from torchstrategy.checkpoint.manager import (CheckpointManager, CheckpointState, get_checkpoint_state,
                                              latest_checkpoint, update_checkpoint_state)
from torchstrategy.checkpoint.options import CheckpointOptions
from torchstrategy.checkpoint.reader import CheckpointReader, list_variables, load_checkpoint, load_variable
from torchstrategy.checkpoint.sharded import (PendingShardedState, ShardedCheckpointReader, is_sharded,
                                              remove_sharded, run_on_chief, write_sharded)

__all__ = ["write_atomically", "save_state", "load_state", "CheckpointCorruptedError", "check_directory_path",
           "Checkpoint", "CheckpointLoadStatus", "InitializationOnlyStatus", "checkpoint_metadata", "DirectoryLock",
           "DirectoryLockedError", "CheckpointManager", "CheckpointState", "get_checkpoint_state",
           "latest_checkpoint", "update_checkpoint_state", "PendingShardedState", "ShardedCheckpointReader",
           "is_sharded", "remove_sharded", "run_on_chief", "write_sharded", "CheckpointOptions", "CheckpointReader",
           "load_checkpoint", "list_variables", "load_variable"]
