"""Values that cross the replica boundary: PerReplica results, ReduceOp, the ReplicaContext (with merge_call)
handed to code inside `strategy.run`, the Input/ValueContext given to input functions, RunOptions."""
from __future__ import annotations

import collections
import enum
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import torch

from torchstrategy.tf_types import DistributedPerReplica, DistributedValues

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


class InputReplicationMode(enum.Enum):
    """How an input function's dataset is replicated: PER_WORKER (one pipeline per process, split over its
    replicas) or PER_REPLICA (one pipeline per replica)."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class PerReplica(DistributedPerReplica):
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
        self._strategy = strategy
        self._replica_id_in_sync_group = int(replica_id_in_sync_group)

    @property
    def strategy(self) -> "Strategy":
        """The strategy running this replica."""
        return self._strategy

    @property
    def replica_id_in_sync_group(self) -> int:
        """This replica's index among all `num_replicas_in_sync` replicas."""
        return self._replica_id_in_sync_group

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def devices(self) -> tuple:
        """The devices this replica computes on, as device strings (one)."""
        return (str(self._strategy.device),)

    def all_reduce(self, reduce_op: Any, value: Any, options: Any = None) -> Any:
        """Sums or averages `value` (a tensor or nest of tensors) over all replicas. `options`
        (CommunicationOptions) are performance hints; the collectives part chooses for itself."""
        op = _as_reduce_op(reduce_op)
        return self._strategy._collectives.all_reduce(op, value)

    def all_gather(self, value: torch.Tensor, axis: int, options: Any = None) -> torch.Tensor:
        """Concatenates every replica's `value` along `axis`, in replica order (`options`: hints, unused)."""
        return self._strategy._collectives.all_gather(value, axis)

    def merge_call(self, merge_fn: Callable, args: Sequence[Any] = (), kwargs: Optional[dict] = None) -> Any:
        """Calls `merge_fn(strategy, *args, **kwargs)` once in this process, in cross-replica context, and
        returns its result to every local replica. With several replicas in this process each argument
        reaches merge_fn as a PerReplica of the replicas' values (in replica order), as in TF; with one,
        as the replica gave it."""
        from torchstrategy import _context

        if _context.current_replica() is not self:
            raise RuntimeError("merge_call is called from the replica function, on the ReplicaContext that "
                               "tf.distribute.get_replica_context() returns inside strategy.run.")
        kwargs = dict(kwargs or {})
        strategy = self._strategy
        ids = list(strategy.local_replica_ids)
        if len(ids) == 1:
            with _context.cross_replica_section():
                return strategy.run_once(lambda: merge_fn(strategy, *args, **kwargs))
        slot = _merge_slot(strategy)
        slot[self._replica_id_in_sync_group] = (tuple(args), kwargs)

        def merged() -> Any:
            calls = [slot.pop(i) for i in ids]
            per_args = tuple(PerReplica([call[0][n] for call in calls]) for n in range(len(calls[0][0])))
            per_kwargs = {key: PerReplica([call[1][key] for call in calls]) for key in calls[0][1]}
            with _context.cross_replica_section():
                return merge_fn(strategy, *per_args, **per_kwargs)

        return strategy.run_once(merged)


_merge_slots: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_merge_lock = threading.Lock()


def _merge_slot(strategy: Any) -> dict:
    """The dict where a strategy's local replicas leave their merge_call arguments (one per strategy)."""
    with _merge_lock:
        return _merge_slots.setdefault(strategy, {})


class ValueContext:
    """What `experimental_distribute_values_from_function` hands its function: which replica the value is for."""

    def __init__(self, replica_id_in_sync_group: int = 0, num_replicas_in_sync: int = 1) -> None:
        self._replica_id_in_sync_group = int(replica_id_in_sync_group)
        self._num_replicas_in_sync = int(num_replicas_in_sync)

    @property
    def replica_id_in_sync_group(self) -> int:
        return self._replica_id_in_sync_group

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    def __repr__(self) -> str:
        return (f"ValueContext(replica_id_in_sync_group={self._replica_id_in_sync_group}, "
                f"num_replicas_in_sync={self._num_replicas_in_sync})")


class RunOptions(collections.namedtuple("RunOptions", ["experimental_enable_dynamic_batch_size",
                                                       "experimental_bucketizing_dynamic_shape",
                                                       "experimental_xla_options"])):
    """Options of `strategy.run` (TF's fields; TPU compilation hints, accepted and not needed here)."""

    __slots__ = ()

    def __new__(cls, experimental_enable_dynamic_batch_size: bool = True,
                experimental_bucketizing_dynamic_shape: bool = False,
                experimental_xla_options: Any = None) -> "RunOptions":
        return super().__new__(cls, experimental_enable_dynamic_batch_size, experimental_bucketizing_dynamic_shape,
                               experimental_xla_options)
