"""`tf.train`: ClusterSpec (TF's job -> task address map, from torchstrategy.cluster), checkpointing (Checkpoint,
CheckpointManager, latest_checkpoint, checkpoints_iterator, ...), the Example / SequenceExample protos,
ExponentialMovingAverage and Coordinator; `tf.train.experimental` (PythonState)."""
from __future__ import annotations

from torchstrategy.checkpoint import (Checkpoint, CheckpointManager, CheckpointState, checkpoint_metadata,
                                      get_checkpoint_state, latest_checkpoint)
from torchstrategy.checkpoint import CheckpointOptions, list_variables, load_checkpoint, load_variable
from torchstrategy.checkpoint.python_state import PythonState
from torchstrategy.checkpoint.watch import checkpoints_iterator
from torchstrategy.cluster.spec import ClusterSpec
from torchstrategy.coordinator import Coordinator
from torchstrategy.io.example import BytesList, Example, Feature, Features, FloatList, Int64List
from torchstrategy.io.sequence_example import FeatureList, FeatureLists, SequenceExample
from torchstrategy._machinery.lazy import namespace_module
from torchstrategy.moving_averages import ExponentialMovingAverage

experimental = namespace_module("torchstrategy.train.experimental", ("tf.train.experimental",),
                                dict(PythonState=PythonState))

__all__ = ["ClusterSpec", "Checkpoint", "CheckpointManager", "CheckpointState", "latest_checkpoint",
           "get_checkpoint_state", "checkpoint_metadata", "checkpoints_iterator", "BytesList", "Coordinator", "Example",
           "ExponentialMovingAverage", "Feature", "FeatureList", "FeatureLists", "Features", "FloatList", "Int64List",
           "SequenceExample", "CheckpointOptions", "load_checkpoint", "list_variables", "load_variable", "experimental"]
