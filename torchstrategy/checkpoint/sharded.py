"""The public API of sharded checkpoints for code outside checkpoint/: tell a sharded directory from a
file, write one from every rank, read one back (whole now, or per module/optimizer once it is set up)."""
from __future__ import annotations

from typing import Any, Callable, Optional

from torchstrategy.checkpoint import _sharded
from torchstrategy.checkpoint._sync import Coordinator

#: Saved state of one module or optimizer whose tensors load from a sharded checkpoint only when it is put
#: into its owner: a strategy's checkpoint IO calls `materialize(owner, io)` (every rank together), which
#: returns the state with its tensors laid out like `owner` is then (sharded if it is sharded by that time).
PendingShardedState = _sharded.PendingState


def is_sharded(path: str) -> bool:
    """True when `path` is a directory holding a (complete) sharded checkpoint."""
    return _sharded.is_sharded_checkpoint(path)


def remove_sharded(path: str) -> Optional[str]:
    """Deletes a checkpoint file or directory and the temps of its unfinished writes; the path if removed."""
    return _sharded.remove_checkpoint(path)


def write_sharded(path: str, state: dict, modules: dict, optimizers: dict, strategy: Any) -> str:
    """Writes `state` as a sharded checkpoint directory at `path`; every rank calls this together.

    `modules` and `optimizers` map keys of the written state to a module's or an optimizer's state dict
    (None for an optimizer that is not there): their tensors (weights, optimizer slots) are written by each
    rank as its own shards, the rest of `state` by the chief of `strategy`. Returns once the checkpoint is
    complete and installed (one rename); on a failure anywhere every rank raises and `path` keeps what it had.
    """
    split = _sharded.TensorSplit()
    written = dict(state)
    for key, module_state in modules.items():
        written[key] = split.module_state(key, module_state)
    for key, optimizer_state in optimizers.items():
        written[key] = None if optimizer_state is None else split.optimizer_state(key, optimizer_state)
    return _sharded.write(path, written, split.tensors, Coordinator(strategy=strategy))


class ShardedCheckpointReader:
    """A sharded checkpoint opened for reading: `state` is what was written, with every sharded tensor as
    a meta tensor (shape and dtype, no data) until it is loaded by `load_all` or a pending state."""

    def __init__(self, path: str) -> None:
        self._structure = _sharded.Structure(path)

    @property
    def state(self) -> Any:
        """The written state (a meta tensor where a sharded tensor is not loaded yet)."""
        return self._structure.tree

    def pending_module_state(self, state: dict) -> PendingShardedState:
        """A module's saved state (part of `self.state`) that loads when the strategy puts it into the module."""
        return _sharded.PendingState(self._structure, state, "module")

    def pending_optimizer_state(self, state: dict) -> PendingShardedState:
        """An optimizer's saved state (part of `self.state`) that loads when it is put into the optimizer."""
        return _sharded.PendingState(self._structure, state, "optimizer")

    def load_all(self) -> None:
        """Loads every tensor now, as full plain tensors (for a strategy that does not shard)."""
        self._structure.load_all()

    def verify(self) -> None:
        """Raises CheckpointCorruptedError, naming the file, when a shard file is missing or cut short: before
        anything loads (a caller with an older checkpoint to fall back on checks here)."""
        import torch.distributed.checkpoint as dcp

        _sharded._check_shard_files(self._structure.path, dcp.FileSystemReader(self._structure.path))


def run_on_chief(write: Callable[[], None], strategy: Any = None) -> None:
    """Runs `write` on the chief only; every rank returns once it finished, and raises if it failed.

    The chief is the entered strategy's (inside a `scope()`), else `strategy`'s, else rank 0 of the
    torch.distributed group in a multi-process job outside every scope.
    """
    Coordinator(strategy).run_on_writer(write)
