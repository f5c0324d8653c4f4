"""`tf.train`: ClusterSpec (TF's job -> task address map, from torchstrategy.cluster) and
checkpointing (Checkpoint, CheckpointManager, latest_checkpoint, get_checkpoint_state), tf.train.Example."""
from __future__ import annotations

from torchstrategy.checkpoint import (Checkpoint, CheckpointManager, CheckpointState, checkpoint_metadata,
                                      get_checkpoint_state, latest_checkpoint)
from torchstrategy.checkpoint import CheckpointOptions, list_variables, load_checkpoint, load_variable
from torchstrategy.cluster.spec import ClusterSpec
from torchstrategy.io.example import BytesList, Example, Feature, Features, FloatList, Int64List

__all__ = ["ClusterSpec", "Checkpoint", "CheckpointManager", "CheckpointState", "latest_checkpoint",
           "get_checkpoint_state", "checkpoint_metadata", "BytesList", "Example", "Feature", "Features",
           "FloatList", "Int64List",
           "CheckpointOptions", "load_checkpoint", "list_variables", "load_variable"]
