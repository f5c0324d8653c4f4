"""`tf.train`: the namespace where Checkpoint and CheckpointManager live. Their atomic file
layer is torchstrategy/checkpoint.py; the objects themselves arrive with the checkpointing work."""
from __future__ import annotations

__all__: list[str] = []
