"""`tf.train`: ClusterSpec (TF's job -> task address map, from torchstrategy.cluster) and the
namespace where Checkpoint and CheckpointManager arrive with the checkpointing work."""
from __future__ import annotations

from torchstrategy.cluster.spec import ClusterSpec

__all__ = ["ClusterSpec"]
