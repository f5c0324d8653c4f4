"""`tf.distribute`: the strategies, the replica/cross-replica helpers and ReduceOp.
Each strategy lives in its own module; this file only names them."""
from __future__ import annotations

import types

from torchstrategy._context import get_strategy, has_strategy, in_cross_replica_context
from torchstrategy.distribute.default import DefaultStrategy
from torchstrategy.distribute.one_device import OneDeviceStrategy
from torchstrategy.distribute.strategy import Strategy, StrategyExtended
from torchstrategy.distribute.values import InputContext, PerReplica, ReduceOp, ReplicaContext


def get_replica_context() -> ReplicaContext | None:
    """The ReplicaContext inside `strategy.run` (or outside any scope); None in cross-replica context."""
    from torchstrategy import _context

    current = _context._current_replica()
    if current is not None:
        return current
    if _context.has_strategy():
        return None
    strategy = get_strategy()
    return ReplicaContext(strategy, 0)


class InputOptions:
    """Options for distributing datasets (accepted for TF scripts; prefetch placement is automatic)."""

    def __init__(self, experimental_fetch_to_device: bool | None = None, experimental_replication_mode: object = None,
                 experimental_place_dataset_on_device: bool = False, experimental_per_replica_buffer_size: int = 1):
        self.experimental_fetch_to_device = experimental_fetch_to_device
        self.experimental_replication_mode = experimental_replication_mode
        self.experimental_place_dataset_on_device = experimental_place_dataset_on_device
        self.experimental_per_replica_buffer_size = experimental_per_replica_buffer_size


experimental = types.SimpleNamespace()

__all__ = [
    "Strategy", "StrategyExtended", "DefaultStrategy", "OneDeviceStrategy", "ReduceOp", "ReplicaContext",
    "InputContext", "PerReplica", "InputOptions", "get_strategy", "has_strategy", "in_cross_replica_context",
    "get_replica_context", "experimental",
]
