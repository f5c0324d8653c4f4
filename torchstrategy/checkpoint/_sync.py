"""Who writes a checkpoint and how the other ranks wait for it: the current strategy (or, outside
any scope, the torch.distributed group) decides the chief; its outcome is shared with every rank."""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch.distributed as dist

from torchstrategy import _context


class Coordinator:
    """The writer/waiter roles for one save or restore, from a strategy or the process group."""

    def __init__(self, fallback_strategy: Any = None, strategy: Any = None) -> None:
        """`strategy` (when given) is used as it is; else the entered one, else `fallback_strategy`."""
        if strategy is not None:
            self._strategy = strategy
            return
        strategy = _context.get_strategy() if _context.has_strategy() else fallback_strategy
        if strategy is None:
            strategy = _context.get_strategy()
            if strategy.num_replicas_in_sync == 1 and dist.is_available() and dist.is_initialized() \
                    and dist.get_world_size() > 1:
                strategy = None  # saving outside every scope of a multi-process job: use the group itself
        self._strategy = strategy

    @property
    def is_writer(self) -> bool:
        if self._strategy is None:
            return dist.get_rank() == 0
        return bool(self._strategy.extended.should_checkpoint)

    @property
    def state_io(self) -> Any:
        """How module state is read and written: the strategy's (its checkpoint-IO part), else as stored."""
        from torchstrategy.checkpoint._objects import PlainStateIO

        strategy = self._strategy
        if strategy is not None:
            return strategy
        return PlainStateIO()

    @property
    def world_size(self) -> int:
        """Replicas in sync (recorded with a checkpoint: per-replica state restores only on as many)."""
        return dist.get_world_size() if self._strategy is None else int(self._strategy.num_replicas_in_sync)

    @property
    def processes(self) -> int:
        """Processes that take part in a save (a tensor-parallel job has more processes than replicas)."""
        if self._strategy is None:
            return dist.get_world_size()
        return int(self._strategy.num_processes)

    @property
    def strategy_name(self) -> str:
        return "torch.distributed" if self._strategy is None else type(self._strategy).__name__

    @property
    def sharded(self) -> bool:
        """True when every rank writes its own shards (the strategy's `sharded_checkpoints`)."""
        return self._strategy is not None and bool(self._strategy.sharded_checkpoints)

    def broadcast(self, value: Any) -> Any:
        """The chief's picklable `value` on every rank."""
        return self._broadcast(value)

    def gather(self, value: Any) -> list:
        """Every rank's picklable `value`, in rank order, on every rank."""
        if self.processes == 1:
            return [value]
        if self._strategy is None:
            values: list = [None] * dist.get_world_size()
            dist.all_gather_object(values, value)
            return values
        return list(self._strategy.gather_objects(value))

    def _broadcast(self, value: Any) -> Any:
        if self._strategy is None:
            box = [value]
            dist.broadcast_object_list(box, src=0)
            return box[0]
        return self._strategy.broadcast(value, src=0)

    def run_on_writer(self, write: Callable[[], None]) -> None:
        """Runs `write` on the chief; every rank returns only once it finished, and fails if it failed."""
        error: Optional[BaseException] = None
        if self.is_writer:
            try:
                write()
            except BaseException as caught:  # noqa: BLE001 - told to the other ranks, then re-raised
                error = caught
        if self.processes > 1:
            message = self._broadcast(None if error is None else f"{type(error).__name__}: {error}")
            if error is None and message is not None:
                raise RuntimeError(f"The chief failed to write the checkpoint ({message}).")
        if error is not None:
            raise error
