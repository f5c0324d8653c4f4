"""The state one fit() owns and hands to its callbacks (TrainingState): the model's runtime, where
training stands (epoch, batch, data position) and the point a backup resumes from; putting that point back,
on the replica count that wrote it or on another one."""
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
        self.global_positions = False  # data_consumed counts global batches that any replica count reads alike
        self.job_seed: Optional[int] = None  # what replicas resumed on another count derive their generators from

    def start_epoch(self, epoch: int, step: int, data: data_adapter.EpochData, peeked: bool) -> None:
        self.epoch, self.step = epoch, step
        self.data_state, self.data_consumed = data.state, data.consumed - int(peeked)  # not yet trained on
        self.global_positions = data.global_positions

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
        """Everything a backup stores to resume exactly here (this replica's RNG and metric states), and what
        a job of another replica count needs instead of them (`elastic`: the job's seed, set once from the
        generators' state without drawing, and whether the data position holds on any count)."""
        if self.job_seed is None:
            self.job_seed = ts_random.rng_fingerprint()
        return {"epoch": self.epoch, "step": self.step, "global_step": self.global_step,
                "data_state": self.data_state, "data_consumed": self.data_consumed,
                "rng": ts_random.get_rng_state(),
                # at an epoch boundary the totals belong to the finished epoch: the next starts from zero
                "metrics": model._compiled.metric_states() if self.step else None,
                "elastic": {"seed": self.job_seed, "global_data_position": self.global_positions}}


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


def written_by_same_replicas(backup: dict, strategy: Any) -> bool:
    """Whether `strategy` has the replicas and processes that wrote `backup` (each process takes back its own
    generators and metric totals), rather than another count (they are derived and merged instead)."""
    return backup["world_size"] == strategy.num_replicas_in_sync and len(backup["rng"]) == strategy.num_processes


def resumable_on_another_count(backup: dict) -> Optional[str]:
    """None when `backup` can resume on any replica count, else why not (for the caller's message)."""
    elastic = backup.get("elastic")
    if not isinstance(elastic, dict):
        return ("it holds per-replica state (random generators, metric totals, data position) that cannot be split "
                "or merged (it was written before backups recorded a job seed)")
    if not elastic.get("global_data_position"):
        return ("its data position counts batches of per-replica or per-worker pipelines (a dataset function, or "
                "files sharded over workers), which another replica count reads differently")
    return None


def check_resumed_input(resume: dict, data: data_adapter.EpochData, strategy: Any) -> None:
    """Refuses, before any step, to resume a backup of another replica count on an input that this job reads
    per replica or per worker: the backup's data position would not name the same samples here."""
    if written_by_same_replicas(resume, strategy) or data.global_positions:
        return
    raise ValueError(
        f"This fit() resumes a backup written by {resume['world_size']} replica(s) on "
        f"{strategy.num_replicas_in_sync}, but here its input is read per replica or per worker (a dataset "
        f"function, or files sharded over the {strategy.num_processes} processes), so the backup's position in "
        f"global batches names other samples. Resume with {resume['world_size']} replica(s), or give fit a "
        f"dataset of global batches read whole by every worker (AutoShardPolicy.DATA).")


def apply_resume_point(model: Any, runtime: Any, resume: dict, progress: TrainingProgress) -> None:
    """Puts back the weights, optimizer state, RNG and metric states of a backup. On the replica count that
    wrote it each process takes back its own generators and metric totals (bit-identical to the run that
    went on); on another count each process derives its generators from the job seed, the step and its rank,
    and rank 0 takes the job-wide metric totals (the others start from zero), so the epoch-end sum over
    replicas logs what the uninterrupted run would have."""
    strategy = runtime.strategy
    strategy.load_state_dict(model, resume["model"])
    if resume.get("optimizer") is not None:
        strategy.load_state_dict(model.optimizer, resume["optimizer"])
    process = strategy.process_rank
    elastic = resume.get("elastic")
    if written_by_same_replicas(resume, strategy):
        ts_random.set_rng_state(resume["rng"][process])
        model._compiled.load_metric_states(resume["metrics"][process])
    else:
        ts_random.set_derived_seed(elastic["seed"], resume["global_step"], process)
        if process == 0:
            model._compiled.load_metric_states(_summed_metric_states(resume["metrics"]))
    progress.global_step = resume["global_step"]
    if isinstance(elastic, dict):
        progress.job_seed = elastic["seed"]


def _summed_metric_states(per_process: list) -> Optional[list]:
    """Every metric state summed over the processes that wrote them (None at an epoch boundary)."""
    present = [states for states in per_process if states is not None]
    if not present:
        return None
    totals = [[tensor.clone() for tensor in metric] for metric in present[0]]
    for states in present[1:]:
        shapes = [[tuple(t.shape) for t in metric] for metric in states]
        if shapes != [[tuple(t.shape) for t in metric] for metric in totals]:
            raise ValueError(f"The backup's metric states differ between the processes that wrote it "
                             f"({[[tuple(t.shape) for t in m] for m in totals]} and {shapes}), so they cannot be "
                             f"merged for another replica count. Resume with {len(per_process)} replica process(es).")
        totals = [[total + tensor for total, tensor in zip(mine, theirs)] for mine, theirs in zip(totals, states)]
    return totals
