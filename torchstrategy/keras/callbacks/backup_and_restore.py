"""BackupAndRestore: a backup of the whole training state (weights, optimizer, epoch and batch,
data position, every replica's RNG and metric states) so a killed fit() resumes at the same batch, on any count."""
from __future__ import annotations

import os
import shutil
import signal
import threading
import warnings
from typing import Any, Optional, Union

from torchstrategy._machinery.moved_keywords import moved_keywords
from torchstrategy.checkpoint import CheckpointCorruptedError, check_directory_path, load_state, save_state
from torchstrategy.checkpoint.sharded import ShardedCheckpointReader, is_sharded, remove_sharded, write_sharded
from torchstrategy.keras.callbacks.base import Callback
from torchstrategy.keras.training_state import resumable_on_another_count, written_by_same_replicas

#: Exit code after a preemption save: non-zero, so torchrun (--max-restarts) or a scheduler restarts the job.
PREEMPTION_EXIT_CODE = 42
_FORMAT = "torchstrategy.backup"


class BackupAndRestore(Callback):
    """Backs up training every epoch (or every `save_freq` batches) into `backup_dir`; a new fit()
    with the same callback restores the backup and continues from the batch it was taken at.

    It resumes on any number of replicas (torchrun's elastic `--nnodes=1:2` shrinking or growing the job):
    the data position counts global batches, so the interrupted epoch goes on from the same global batch
    and every sample is still seen once; the epoch's metric totals are merged into rank 0's; each
    replica's random generators are derived from a job seed, the step and its rank. On the count that
    wrote it the resumed run is bit-identical to one never stopped; on another count the weights match
    such a run (to float rounding) for models without randomness in training: dropout masks cannot be the
    same when the rows are split over another number of replicas. A dataset function's per-replica
    batches, or files sharded per worker, resume only on the count that read them.

    Under a strategy with `sharded_checkpoints` (FSDPStrategy) the backup is the directory
    `backup_dir/backup`: every rank writes its shards of the weights and optimizer slots, the chief the
    rest (torch.distributed.checkpoint lays them out anew on another count); either kind of backup resumes
    under either kind of strategy. `double_checkpoint=True` (Keras) keeps the backup before the latest
    (`backup.ckpt.bkp`, `backup.bkp`) and resumes from it when the latest cannot be read.

    torchstrategy's switch (Keras 3 has none): `callback.save_before_preemption = True` makes SIGTERM have
    every replica save at the same batch and exit with code 42 (a restartable failure for torchrun).

    >>> import torchstrategy as tf
    >>> backup = tf.keras.callbacks.BackupAndRestore(backup_dir="/tmp/backup", save_freq=100)
    """

    @moved_keywords(save_before_preemption="set `callback.save_before_preemption = True` on the BackupAndRestore "
                                           "before fit (Keras 3.15's constructor has no such argument).")
    def __init__(self, backup_dir: str, save_freq: Union[str, int] = "epoch", double_checkpoint: bool = False,
                 delete_checkpoint: bool = True) -> None:
        super().__init__()
        if not backup_dir:
            raise ValueError("BackupAndRestore needs a backup_dir (a folder only this job writes to).")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError(f"save_freq must be 'epoch' or a positive number of batches; got {save_freq!r}.")
        self.backup_dir = str(backup_dir)
        check_directory_path(self.backup_dir, "BackupAndRestore backup_dir")
        self.save_freq = save_freq
        self.double_checkpoint = bool(double_checkpoint)
        self.delete_checkpoint = delete_checkpoint
        #: torchstrategy's switch: on SIGTERM every replica saves at the same batch, then exits with code 42
        self.save_before_preemption = False
        self._path = os.path.join(self.backup_dir, "backup.ckpt")  # one file, from the chief
        self._sharded_path = os.path.join(self.backup_dir, "backup")  # a sharded backup's directory
        # double_checkpoint: the backup before the latest (Keras names its copies `<file>.bkp`)
        self._previous_path, self._previous_sharded_path = self._path + ".bkp", self._sharded_path + ".bkp"
        self._lock: Any = None
        self._preempted = threading.Event()
        self._previous_handler: Any = None
        self._save_at_epoch_end = False
        self._exit_at_epoch_end = False

    # ----- start: lock the folder, hand a backup to fit() ----------------------------------
    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        strategy = self.model.distribute_strategy
        self.training_state.on_exit(self._release)  # the lock and SIGTERM handler go back even if fit raises
        if strategy.is_chief:
            self._prepare_folder()
        strategy.barrier()
        try:
            found = self._read(self._path, self._sharded_path)
        except (CheckpointCorruptedError, OSError) as error:
            found = self._read(self._previous_path, self._previous_sharded_path) if self.double_checkpoint else None
            if found is None:
                raise
            warnings.warn(f"BackupAndRestore: the latest backup in '{self.backup_dir}' cannot be read ({error}); "
                          f"resuming from the one before it (double_checkpoint).", stacklevel=2)
        if found is not None:
            backup, structure = found
            if not isinstance(backup, dict) or backup.get("format") != _FORMAT:
                raise ValueError(f"'{self._path}' is not a BackupAndRestore backup; give BackupAndRestore a folder "
                                 f"of its own.")
            self._check_replica_count(backup, strategy)
            if structure is not None:
                self._prepare_sharded_resume(backup, structure, strategy)
            self.training_state.resume_point = backup
        if self.save_before_preemption and threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(signal.SIGTERM, lambda signum, frame: self._preempted.set())

    @staticmethod
    def _read(path: str, sharded_path: str) -> Optional[tuple]:
        """(backup state, sharded reader or None) from the file `path` or the sharded directory, or None."""
        if is_sharded(sharded_path):
            structure = ShardedCheckpointReader(sharded_path)
            structure.verify()  # a missing or short shard is found now, while the previous backup can stand in
            return structure.state, structure
        if os.path.exists(path):
            return load_state(path), None
        return None

    def _check_replica_count(self, backup: dict, strategy: Any) -> None:
        """Refuses, before any step, a backup that cannot resume on this job's replica count."""
        if written_by_same_replicas(backup, strategy):
            return
        reason = resumable_on_another_count(backup)
        if reason is not None:
            raise ValueError(
                f"The backup in '{self.backup_dir}' was written by {backup['world_size']} replica(s), and this job "
                f"has {strategy.num_replicas_in_sync}: {reason}. Resume with {backup['world_size']} replica(s), "
                f"or delete the backup to start over.")

    @staticmethod
    def _prepare_sharded_resume(backup: dict, structure: Any, strategy: Any) -> None:
        """A sharded strategy loads the weights and slots when fit puts them back, laid out as the model is
        then (each rank reads only its shards); another strategy reads them whole now."""
        if strategy.sharded_checkpoints:
            backup["model"] = structure.pending_module_state(backup["model"])
            if backup.get("optimizer") is not None:
                backup["optimizer"] = structure.pending_optimizer_state(backup["optimizer"])
        else:
            structure.load_all()

    def _prepare_folder(self) -> None:
        try:
            os.makedirs(self.backup_dir, exist_ok=True)
            probe = os.path.join(self.backup_dir, f".write-test-{os.getpid()}")
            with open(probe, "w") as handle:
                handle.write("ok")
            os.unlink(probe)
        except OSError as error:
            raise PermissionError(f"BackupAndRestore cannot write to backup_dir '{self.backup_dir}' "
                                  f"({error.strerror}). Give it a writable folder.") from error
        from torchstrategy.checkpoint import DirectoryLock

        self._lock = DirectoryLock(self.backup_dir, purpose="BackupAndRestore")
        self._lock.acquire()

    # ----- saving --------------------------------------------------------------------------
    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        # After an epoch's last batch the epoch is not over (logs, validation, epoch callbacks): save at
        # its end instead, so a resumed run never starts inside an epoch with no batch left to build on.
        last_of_epoch = self.params.get("steps") == batch + 1
        if isinstance(self.save_freq, int) and self.training_state.progress.global_step % self.save_freq == 0:
            if last_of_epoch:
                self._save_at_epoch_end = True
            else:
                self._save()
        if self.save_before_preemption:
            strategy = self.model.distribute_strategy
            if strategy.any_replica(self._preempted.is_set()):  # every replica stops at this same batch
                if last_of_epoch:
                    self._exit_at_epoch_end = True
                else:
                    self._save_and_exit()

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if self._exit_at_epoch_end:
            self._save_and_exit()
        if self.save_freq == "epoch" or self._save_at_epoch_end:
            self._save_at_epoch_end = False
            self._save()

    def _save_and_exit(self) -> None:
        self._save()
        self._release()
        raise SystemExit(PREEMPTION_EXIT_CODE)

    def _implements_train_batch_hooks(self) -> bool:
        return isinstance(self.save_freq, int) or self.save_before_preemption

    def _save(self) -> None:
        model = self.model
        strategy = model.distribute_strategy
        snapshot = self.training_state.progress.snapshot(model)
        replicas = strategy.gather_objects({"rng": snapshot.pop("rng"), "metrics": snapshot.pop("metrics")})
        # through the strategy's checkpoint IO, on every rank (a sharded strategy collects state collectively)
        model_state = strategy.state_dict(model)
        optimizer_state = strategy.state_dict(model.optimizer) if model.optimizer is not None else None
        from torchstrategy.version import TORCHSTRATEGY_VERSION

        common = dict(snapshot, format=_FORMAT, version=TORCHSTRATEGY_VERSION,
                      world_size=strategy.num_replicas_in_sync, strategy=type(strategy).__name__,
                      rng=[r["rng"] for r in replicas], metrics=[r["metrics"] for r in replicas])
        if self.double_checkpoint and strategy.is_chief:
            self._keep_previous()
        if strategy.sharded_checkpoints:  # every rank writes its own shards; returns once the backup is complete
            strategy.barrier()  # the previous backup is kept before any rank replaces it
            write_sharded(self._sharded_path, common, modules={"model": model_state},
                          optimizers={"optimizer": optimizer_state}, strategy=strategy)
            if strategy.is_chief and os.path.exists(self._path):
                os.unlink(self._path)  # a backup of the other kind is older now
            return
        if strategy.is_chief:
            backup = dict(common, model={k: v.detach().cpu() for k, v in model_state.items()},
                          optimizer=optimizer_state)
            save_state(backup, self._path)
            if is_sharded(self._sharded_path):
                remove_sharded(self._sharded_path)  # a backup of the other kind is older now
        strategy.barrier()  # nobody moves on before the backup is complete

    def _keep_previous(self) -> None:
        """double_checkpoint: copies the latest backup (file or directory) to its `.bkp` name, atomically."""
        for latest, previous in ((self._path, self._previous_path), (self._sharded_path, self._previous_sharded_path)):
            partial = f"{previous}.partial-{os.getpid()}"
            if os.path.isfile(latest):
                shutil.copyfile(latest, partial)
                os.replace(partial, previous)
                if is_sharded(self._previous_sharded_path):
                    remove_sharded(self._previous_sharded_path)  # of the other kind: older now
            elif is_sharded(latest):
                shutil.rmtree(partial, ignore_errors=True)
                shutil.copytree(latest, partial)
                shutil.rmtree(previous, ignore_errors=True)
                os.replace(partial, previous)

    # ----- end -----------------------------------------------------------------------------
    def on_train_end(self, logs: Optional[dict] = None) -> None:
        strategy = self.model.distribute_strategy
        if self.delete_checkpoint and strategy.is_chief:
            for path in (self._path, self._previous_path):
                if os.path.exists(path):
                    os.unlink(path)
            for path in (self._sharded_path, self._previous_sharded_path):
                if os.path.isdir(path):
                    remove_sharded(path)
        self._release()

    def _release(self) -> None:
        if self._previous_handler is not None:
            signal.signal(signal.SIGTERM, self._previous_handler)
            self._previous_handler = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
