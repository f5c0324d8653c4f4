"""The Strategy interface every strategy implements and the Keras layer relies on: scope, run,
reduce/gather, dataset distribution, and the hooks the trainer calls (setup, backward, step)."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import torch
from torch import nn

from torchstrategy import _context
from torchstrategy.data.distribute import DistributedDataset, map_structure
from torchstrategy.distribute.values import InputContext, PerReplica, ReduceOp, ReplicaContext, _as_reduce_op


@dataclass(frozen=True)
class StrategyExtended:
    """The few `strategy.extended` facts user code reads (TF names)."""

    should_checkpoint: bool = True
    should_save_summary: bool = True
    worker_devices: tuple = ()
    parameter_devices: tuple = ()


class Strategy:
    """Base of all strategies. Subclasses own one way of placing and synchronising replicas.

    The trainer (`keras.training`) talks to a strategy only through this interface:
    `setup` wraps the module, `distribute_data` feeds batches, `backward`/`optimizer_step`
    run a step, `_all_reduce`/`_sum_tensors`/`_any` combine replicas, `barrier` waits.
    """

    #: True for strategies that must see model creation inside `scope()` (e.g. sharded ones).
    _needs_model_in_scope = False

    def __init__(self, device: torch.device, num_replicas: int = 1, replica_id: int = 0) -> None:
        self._device = torch.device(device)
        self._num_replicas = int(num_replicas)
        self._replica_id = int(replica_id)

    # ----- facts ---------------------------------------------------------------------------
    @property
    def num_replicas_in_sync(self) -> int:
        """How many replicas train in lock step (processes x devices)."""
        return self._num_replicas

    @property
    def cluster_resolver(self) -> Any:
        return None

    @property
    def extended(self) -> StrategyExtended:
        return StrategyExtended(
            should_checkpoint=self._is_chief,
            should_save_summary=self._is_chief,
            worker_devices=(str(self._device),),
            parameter_devices=(str(self._device),),
        )

    @property
    def _is_chief(self) -> bool:
        """Whether this process prints progress and writes files."""
        return self._replica_id == 0

    @property
    def device(self) -> torch.device:
        """The torch device of this process's replica."""
        return self._device

    def __repr__(self) -> str:
        return f"{type(self).__name__}(device={self._device}, replicas={self._num_replicas})"

    # ----- scope and replica calls ---------------------------------------------------------
    @contextlib.contextmanager
    def scope(self) -> Iterator["Strategy"]:
        """Makes this the current strategy: models and optimizers created here belong to it."""
        with _context._enter_strategy(self):
            yield self

    def run(self, fn: Callable, args: Sequence[Any] = (), kwargs: Optional[dict] = None, options: Any = None) -> Any:
        """Runs `fn` once per local replica with that replica's inputs and returns its result."""
        kwargs = kwargs or {}
        args = map_structure(self._local_value, tuple(args))
        kwargs = map_structure(self._local_value, kwargs)
        with _context._enter_strategy(self) if _context.get_strategy() is not self else contextlib.nullcontext():
            with _context._enter_replica(ReplicaContext(self, self._replica_id)):
                return fn(*args, **kwargs)

    def _local_value(self, value: Any) -> Any:
        if isinstance(value, PerReplica):
            if len(value.values) != 1:
                raise ValueError(f"{type(self).__name__} runs one replica per process; got {value!r}")
            return value.values[0]
        return value

    def experimental_local_results(self, value: Any) -> tuple:
        """The values held by this process's replicas, as a tuple."""
        if isinstance(value, PerReplica):
            return value.values
        return (value,)

    def reduce(self, reduce_op: Any, value: Any, axis: Optional[int] = None) -> Any:
        """Combines a per-replica value over all replicas (and over `axis` when given)."""
        op = _as_reduce_op(reduce_op)
        local = self._local_value(value)
        if axis is None:
            return self._all_reduce(op, local)
        local = torch.as_tensor(local)
        total = self._all_reduce(ReduceOp.SUM, local.sum(dim=axis))
        if op is ReduceOp.SUM:
            return total
        count = self._all_reduce(ReduceOp.SUM, torch.tensor(float(local.shape[axis]), device=local.device))
        return total / count

    def gather(self, value: Any, axis: int = 0) -> Any:
        """Concatenates every replica's value along `axis` (all rows, in replica order)."""
        return self._all_gather(torch.as_tensor(self._local_value(value)), axis)

    # ----- datasets ------------------------------------------------------------------------
    def _input_context(self) -> InputContext:
        return InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=self._num_replicas)

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> DistributedDataset:
        """Splits each global batch of `dataset` over the replicas and puts it on the device."""
        if isinstance(dataset, DistributedDataset):
            return dataset
        return DistributedDataset(dataset, self._input_context(), self._device, split_global_batch=True,
                                  options=options)

    def distribute_datasets_from_function(self, dataset_fn: Callable, options: Any = None) -> DistributedDataset:
        """Calls `dataset_fn(InputContext)` for this worker; its batches are per-replica batches."""
        context = self._input_context()
        return DistributedDataset(dataset_fn(context), context, self._device, split_global_batch=False,
                                  options=options)

    def experimental_distribute_values_from_function(self, value_fn: Callable) -> Any:
        return value_fn(ReplicaContext(self, self._replica_id))

    # ----- the trainer's hooks -------------------------------------------------------------
    def setup(self, module: nn.Module, optimizer: Optional[torch.optim.Optimizer] = None) -> nn.Module:
        """Places `module` on the device and returns what the trainer should call (maybe a wrapper)."""
        module.to(self._device)
        return module

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        optimizer.step()

    def barrier(self) -> None:
        """Waits until every process reaches this point (no-op with one process)."""

    def broadcast(self, value: Any, src: int = 0) -> Any:
        """Rank `src`'s picklable `value`, on every process."""
        return value

    # ----- cross-replica arithmetic (one replica: identities) ------------------------------
    def _all_reduce(self, op: ReduceOp, value: Any) -> Any:
        return value

    def _all_gather(self, value: torch.Tensor, axis: int = 0) -> torch.Tensor:
        return value

    def _cross_replica_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        """Differentiable sum over replicas (SyncBatchNorm statistics)."""
        return tensor

    def _gather_objects(self, value: Any) -> list:
        """Every replica's picklable `value`, in rank order (per-replica state for checkpoints)."""
        return [value]

    def _broadcast_initial(self, tensor: torch.Tensor) -> torch.Tensor:
        """Makes a weight created in scope identical on every replica (rank 0's value)."""
        return tensor

    def _gather_batches(self, chunks: list[torch.Tensor]) -> torch.Tensor:
        """Per-batch outputs of every replica, concatenated in global batch order (predict)."""
        return torch.cat(chunks)

    def _reduce_gradients(self, grads: list) -> list:
        """Sums replicas' gradients before `optimizer.apply_gradients` updates (TF semantics)."""
        return grads

    def _sum_tensors(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        """Element-wise sum of each tensor over replicas (metric states)."""
        return tensors

    def _any(self, flag: bool) -> bool:
        """True on every replica if `flag` is True on any (agreed stop_training)."""
        return bool(flag)

    def _teardown(self) -> None:
        """Releases process groups and launched processes (called at interpreter exit)."""
