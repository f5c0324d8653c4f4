"""The state one fit() owns and hands to its callbacks (TrainingState): the model's runtime, where
training stands (epoch, batch, data position) and the point a backup resumes from; putting that point back."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from torchstrategy import random as ts_random
from torchstrategy.keras import data_adapter


class TrainingProgress:
    """Where fit() stands, in the terms a backup needs to resume at the same batch."""

    def __init__(self) -> None:
        self.epoch = 0
        self.step = 0  # batches done in this epoch
        self.global_step = 0  # batches done since fit() started (or since the run that was resumed)
        self.data_state: Any = None  # the dataset's state when its current iterator was opened
        self.data_consumed = 0  # batches that iterator has given

    def start_epoch(self, epoch: int, step: int, data: data_adapter.EpochData, peeked: bool) -> None:
        self.epoch, self.step = epoch, step
        self.data_state, self.data_consumed = data.state, data.consumed - int(peeked)  # not yet trained on

    def finish_steps(self, count: int) -> None:
        """`count` more batches trained (one execution's)."""
        self.step += count
        self.global_step += count
        self.data_consumed += count

    def finish_epoch(self, data: data_adapter.EpochData) -> None:
        self.epoch, self.step = self.epoch + 1, 0
        if not data.persistent:  # the next epoch opens a fresh iterator from the dataset's state now
            self.data_state = data.source.get_state() if hasattr(data.source, "get_state") else None
            self.data_consumed = 0

    def snapshot(self, model: Any) -> dict:
        """Everything a backup stores to resume exactly here (this replica's RNG and metric states)."""
        return {"epoch": self.epoch, "step": self.step, "global_step": self.global_step,
                "data_state": self.data_state, "data_consumed": self.data_consumed,
                "rng": ts_random.get_rng_state(),
                # at an epoch boundary the totals belong to the finished epoch: the next starts from zero
                "metrics": model._compiled.metric_states() if self.step else None}


@dataclass
class TrainingState:
    """What the loop of one fit() call owns, handed to every callback as `callback.training_state`:

    - `runtime`: the model's strategy and the module its steps call (None until the first batch set it up);
    - `progress`: where training stands, in the terms a backup needs (TrainingProgress);
    - `resume_point`: a backup to resume from, left by a callback's `on_train_begin` (BackupAndRestore),
      taken and put back by the loop before the first step;
    - exit hooks (`on_exit`): what a callback holds for the call (a directory lock, a signal handler) is
      given back when fit ends, also when it raises (Keras calls no callback then).
    """

    runtime: Any = None
    progress: TrainingProgress = field(default_factory=TrainingProgress)
    resume_point: Optional[dict] = None
    _exit_hooks: list = field(default_factory=list)

    def on_exit(self, hook: Callable[[], None]) -> None:
        """Runs `hook()` when this fit() call ends, however it ends (last registered, first run)."""
        self._exit_hooks.append(hook)

    def close(self) -> None:
        """Runs the exit hooks once; the loop calls it in a `finally`."""
        hooks, self._exit_hooks = self._exit_hooks, []
        for hook in reversed(hooks):
            hook()

    def __getstate__(self) -> dict:
        # exit hooks hold this process's locks and handlers: a copy sent elsewhere (a closure that
        # reaches the model's callbacks, pickled for a parameter-server worker) carries none of them
        state = dict(self.__dict__)
        state["_exit_hooks"] = []
        return state

    def take_resume_point(self) -> Optional[dict]:
        """The resume point, cleared (the loop resumes from it once)."""
        point, self.resume_point = self.resume_point, None
        return point


def apply_resume_point(model: Any, runtime: Any, resume: dict, progress: TrainingProgress) -> None:
    """Puts back the weights, optimizer state, this replica's RNG and metric states of a backup."""
    runtime.strategy.load_state_dict(model, resume["model"])
    if resume.get("optimizer") is not None:
        runtime.strategy.load_state_dict(model.optimizer, resume["optimizer"])
    process = runtime.strategy.process_rank
    ts_random.set_rng_state(resume["rng"][process])
    model._compiled.load_metric_states(resume["metrics"][process])
    progress.global_step = resume["global_step"]
