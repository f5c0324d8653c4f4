"""Values that cross the replica boundary: PerReplica results, ReduceOp, the ReplicaContext
handed to code inside `strategy.run`, and the InputContext given to dataset functions."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import torch

if TYPE_CHECKING:  # pragma: no cover
    from torchstrategy.distribute.strategy import Strategy


class ReduceOp(enum.Enum):
    """How `strategy.reduce` and `ReplicaContext.all_reduce` combine replicas' values."""

    SUM = "SUM"
    MEAN = "MEAN"


def _as_reduce_op(op: Any) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ReduceOp.__members__:
        return ReduceOp[op.upper()]
    raise ValueError(f"Unknown reduce op {op!r}: use tf.distribute.ReduceOp.SUM or ReduceOp.MEAN.")


class PerReplica:
    """One value per local replica, as `strategy.run` returns under multi-replica strategies.

    Read the parts with `strategy.experimental_local_results(value)`.
    """

    def __init__(self, values: Sequence[Any]) -> None:
        self.values = tuple(values)

    def __repr__(self) -> str:
        return f"PerReplica({list(self.values)!r})"


@dataclass(frozen=True)
class InputContext:
    """What a dataset function learns about its place in the job (tf.distribute.InputContext)."""

    num_input_pipelines: int = 1
    input_pipeline_id: int = 0
    num_replicas_in_sync: int = 1

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """The per-replica batch for a global batch; errors if it does not divide evenly."""
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(
                f"The global batch size ({global_batch_size}) must be divisible by the number of "
                f"replicas in sync ({self.num_replicas_in_sync})."
            )
        return global_batch_size // self.num_replicas_in_sync


class ReplicaContext:
    """The context code sees inside `strategy.run` (tf.distribute.ReplicaContext)."""

    def __init__(self, strategy: "Strategy", replica_id_in_sync_group: int) -> None:
        self.strategy = strategy
        self.replica_id_in_sync_group = replica_id_in_sync_group

    @property
    def num_replicas_in_sync(self) -> int:
        return self.strategy.num_replicas_in_sync

    def all_reduce(self, reduce_op: Any, value: Any, options: Any = None) -> Any:
        """Sums or averages `value` (a tensor or nest of tensors) over all replicas. `options`
        (CommunicationOptions) are performance hints; the collectives part chooses for itself."""
        op = _as_reduce_op(reduce_op)
        return self.strategy._collectives.all_reduce(op, value)

    def all_gather(self, value: torch.Tensor, axis: int, options: Any = None) -> torch.Tensor:
        """Concatenates every replica's `value` along `axis`, in replica order (`options`: hints, unused)."""
        return self.strategy._collectives.all_gather(value, axis)
