"""The sharded checkpoint-IO part: module state as this replica's shards (DTensors), written by every
rank as one shard each (torch.distributed.checkpoint) and read back on any number of replicas."""
from __future__ import annotations

from typing import Any

from torch import nn

from torchstrategy.distribute.parts.sharding import placed_like


class ShardedStateIO:
    """State of sharded modules as DTensors: no rank gathers the whole model to checkpoint it. Loading
    takes DTensors (from a sharded checkpoint) or full tensors (a file of a replicated strategy, a Keras
    file): full ones are laid out as the live sharded variables, each rank keeping its own shard."""

    #: tells tf.train.Checkpoint (and what builds on it) to write one shard per rank plus metadata
    sharded = True

    def state_dict(self, module: Any) -> dict:
        return module.state_dict()

    def load_state_dict(self, module: Any, state: Any) -> Any:
        from torchstrategy.checkpoint.sharded import PendingShardedState

        if isinstance(state, PendingShardedState):  # a sharded backup: load the shards laid out as `module`
            state = state.materialize(module, self)
        if isinstance(module, nn.Module):  # full tensors for sharded live variables: each rank keeps its shard
            live = module.state_dict()
            state = type(state)((key, placed_like(value, live.get(key))) for key, value in state.items())
        return module.load_state_dict(state)
