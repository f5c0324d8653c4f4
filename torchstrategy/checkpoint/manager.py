"""`tf.train.CheckpointManager`, `tf.train.latest_checkpoint` and TF's 'checkpoint' index file
(text-proto lines such as `model_checkpoint_path: "ckpt-3"`), written atomically after the data."""
from __future__ import annotations

import contextlib
import json
import os
import re
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence

from torchstrategy._machinery.moved_keywords import moved_keywords
from torchstrategy.checkpoint import _io, _sharded
from torchstrategy.checkpoint._sync import Coordinator
from torchstrategy.checkpoint.lock import DirectoryLock, DirectoryLockedError
from torchstrategy.formats.tf_bundle import BundleCorruptedError, is_bundle

_INDEX = "checkpoint"
_LINE = re.compile(r'^\s*(\w+)\s*:\s*(.+?)\s*$')
_SAVE_LOCK_WAIT_S = 60.0  # how long a save waits for another live job's save of the same prefix


@dataclass
class CheckpointState:
    """The index file's content (TF's CheckpointState proto); paths are full paths."""

    model_checkpoint_path: str
    all_model_checkpoint_paths: list = field(default_factory=list)
    all_model_checkpoint_timestamps: list = field(default_factory=list)
    last_preserved_timestamp: float = 0.0


def _index_path(directory: str, latest_filename: Optional[str]) -> str:
    return os.path.join(directory, latest_filename or _INDEX)


def _relative(path: str, directory: str) -> str:
    return os.path.relpath(os.path.abspath(path), os.path.abspath(directory))


def update_checkpoint_state(directory: str, model_checkpoint_path: str, all_model_checkpoint_paths: Sequence[str],
                            all_model_checkpoint_timestamps: Optional[Sequence[float]] = None,
                            last_preserved_timestamp: Optional[float] = None,
                            latest_filename: Optional[str] = None) -> None:
    """Atomically rewrites the directory's index (paths stored relative to `directory`, as TF 2 does)."""
    lines = [f"model_checkpoint_path: {json.dumps(_relative(model_checkpoint_path, directory), ensure_ascii=False)}"]
    lines += [f"all_model_checkpoint_paths: {json.dumps(_relative(p, directory), ensure_ascii=False)}"
              for p in all_model_checkpoint_paths]
    lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in all_model_checkpoint_timestamps or ()]
    if last_preserved_timestamp is not None:
        lines.append(f"last_preserved_timestamp: {float(last_preserved_timestamp)!r}")
    text = "\n".join(lines) + "\n"
    index = _index_path(directory, latest_filename)
    if os.path.abspath(index) == os.path.abspath(model_checkpoint_path):
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with the index file; use another name.")
    _io.write_atomically(index, lambda handle: handle.write(text.encode("utf-8")))


def get_checkpoint_state(checkpoint_dir: str, latest_filename: Optional[str] = None) -> Optional[CheckpointState]:
    """Parses the index file of `checkpoint_dir`; None (with a warning if unreadable) when there is none."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    index = _index_path(checkpoint_dir, latest_filename)
    if not os.path.isfile(index):
        return None
    values: dict = {"all_model_checkpoint_paths": [], "all_model_checkpoint_timestamps": []}
    try:
        with open(index, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                match = _LINE.match(line)
                if match is None:
                    raise ValueError(f"line {number} is not 'key: value'")
                key, raw = match.groups()
                value = json.loads(raw)
                if key in ("all_model_checkpoint_paths", "all_model_checkpoint_timestamps"):
                    values[key].append(value)
                elif key in ("model_checkpoint_path", "last_preserved_timestamp"):
                    values[key] = value
    except (ValueError, UnicodeDecodeError) as error:
        warnings.warn(f"Ignoring the checkpoint index '{index}': it cannot be parsed ({error}).", stacklevel=2)
        return None
    if not values.get("model_checkpoint_path"):
        warnings.warn(f"Ignoring the checkpoint index '{index}': it has no model_checkpoint_path.", stacklevel=2)
        return None
    full = lambda p: p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)  # noqa: E731
    return CheckpointState(full(values["model_checkpoint_path"]),
                           [full(p) for p in values["all_model_checkpoint_paths"]],
                           [float(t) for t in values["all_model_checkpoint_timestamps"]],
                           float(values.get("last_preserved_timestamp", 0.0)))


def latest_checkpoint(checkpoint_dir: str, latest_filename: Optional[str] = None) -> Optional[str]:
    """The path of the newest checkpoint named by the directory's index, or None if there is no index or
    its file (sharded checkpoint directory, or TF bundle's `.index`) does not exist (tf.train.latest_checkpoint)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    path = state.model_checkpoint_path
    if not (_sharded.exists(path) or is_bundle(path)):  # a file, a sharded directory, or TF's '{path}.index'
        return None
    return state.model_checkpoint_path


def _as_int(value: Any, what: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{what} must be an integer or an integer tf.Variable/tensor; got {value!r}.") from None


class CheckpointManager:
    """Keeps the newest `max_to_keep` checkpoints of a Checkpoint in `directory` (tf.train.CheckpointManager).

    Its list survives restarts through the directory's 'checkpoint' index. Only the chief writes or
    deletes files (under a sharded strategy every rank also writes its shards into the directory the chief
    chose); every rank returns from `save()` once the checkpoint and the index are complete.
    While it saves, the chief holds the lock file `.{checkpoint_name}.torchstrategy.lock`; hidden temp
    files that killed saves of this prefix left are removed by the next save and by a new manager,
    unless another live job is saving under the prefix or holds the directory's own lock.

    >>> manager = CheckpointManager(Checkpoint(model=model), "/tmp/run", max_to_keep=3)  # doctest: +SKIP
    >>> manager.restore_or_initialize()  # None on a fresh directory  # doctest: +SKIP
    >>> manager.save()  # '/tmp/run/ckpt-1'  # doctest: +SKIP
    """

    def __init__(self, checkpoint: Any, directory: str, max_to_keep: Optional[int],
                 keep_checkpoint_every_n_hours: Optional[float] = None, checkpoint_name: str = "ckpt",
                 step_counter: Any = None, checkpoint_interval: Optional[int] = None,
                 init_fn: Optional[Callable[[], Any]] = None, last_checkpoint_step: Optional[int] = None) -> None:
        from torchstrategy.checkpoint.checkpoint import Checkpoint

        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager manages a tf.train.Checkpoint; got {type(checkpoint).__name__}. "
                            f"Wrap your objects: tf.train.Checkpoint(model=model, optimizer=optimizer).")
        if max_to_keep is not None and (not isinstance(max_to_keep, int) or max_to_keep <= 0):
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep!r}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        _io.check_directory_path(self._directory, "CheckpointManager directory")
        self._max_to_keep = max_to_keep
        self._keep_every_n_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        # where the interval counts from (TF: used only with checkpoint_interval); None: the first save saves
        self._last_checkpoint_step: Optional[int] = (None if checkpoint_interval is None or last_checkpoint_step is None
                                                     else int(last_checkpoint_step))
        #: torchstrategy's switch (not in TF): restore_or_initialize falls back to older managed checkpoints,
        #: newest first, when the latest is corrupted or missing, instead of raising
        self.fallback_to_previous = False
        self._init_fn = init_fn
        self._maybe_delete: "OrderedDict[str, float]" = OrderedDict()
        now = time.time()
        state = get_checkpoint_state(self._directory)
        if state is None:
            self._latest_checkpoint: Optional[str] = None
            self._last_preserved_timestamp = now - 1.0  # a manager re-created at once must not preserve
        else:
            self._latest_checkpoint = state.model_checkpoint_path
            self._last_preserved_timestamp = min(state.last_preserved_timestamp, now)
            stamps = state.all_model_checkpoint_timestamps
            if len(stamps) != len(state.all_model_checkpoint_paths):
                stamps = [self._last_preserved_timestamp] * len(state.all_model_checkpoint_paths)
            for path, stamp in zip(state.all_model_checkpoint_paths, stamps):
                stamp = min(stamp, now)
                if stamp > self._last_preserved_timestamp:
                    self._maybe_delete[path] = stamp
        if Coordinator(checkpoint._owning_strategy()).is_writer:
            self._clear_temps_of_dead_writers()

    # ----- facts -----------------------------------------------------------------------------
    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self) -> Any:
        return self._checkpoint

    @property
    def checkpoint_interval(self) -> Optional[int]:
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self) -> Optional[str]:
        """The newest checkpoint's path (pass it to `Checkpoint.restore`), or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self) -> list:
        """Managed checkpoint paths, oldest first (ones kept by keep_checkpoint_every_n_hours drop out)."""
        return list(self._maybe_delete)

    # ----- saving ----------------------------------------------------------------------------
    def save(self, checkpoint_number: Any = None, check_interval: bool = True, options: Any = None) -> Optional[str]:
        """Writes `{directory}/{checkpoint_name}-{n}` (n = `checkpoint_number`, else the incremented
        save counter), records it in the index, then deletes checkpoints beyond `max_to_keep`.
        Returns the path, or None when `checkpoint_interval` steps have not passed yet."""
        if self._checkpoint_interval is not None:
            step = _as_int(self._step_counter, "step_counter")
            if self._last_checkpoint_step is not None:
                if step == self._last_checkpoint_step:
                    return None
                if check_interval and step < self._last_checkpoint_step + self._checkpoint_interval:
                    return None
            self._last_checkpoint_step = step
        self._checkpoint.save_counter.assign_add(1)
        number = int(self._checkpoint.save_counter) if checkpoint_number is None else \
            _as_int(checkpoint_number, "checkpoint_number")
        path = f"{self._prefix}-{number}"
        wrote = []

        def record_on_chief(save_path: str) -> None:
            self._record_and_sweep(save_path, on_disk=True)
            wrote.append(save_path)

        self._checkpoint._write(path, after_write=record_on_chief, guard=self._saving, options=options)
        if not wrote:  # the other ranks keep the same list in memory; only the chief touches files
            self._record_and_sweep(path, on_disk=False)
        return path

    # ----- temp files of killed saves -----------------------------------------------------
    def _save_lock(self) -> DirectoryLock:
        """Held by whichever job is saving under this prefix, so others know its temp files are in use."""
        folder, name = os.path.split(self._prefix)
        return DirectoryLock(folder or ".", purpose=f"CheckpointManager saving '{self._prefix}-N'",
                             lock_name=f".{name}.torchstrategy.lock")

    def _own_temps(self) -> list:
        """Temp files of unfinished writes of `{prefix}-N` (as `_io.write_atomically` names them)."""
        folder, name = os.path.split(self._prefix)
        folder = folder or "."
        pattern = re.compile(r"\." + re.escape(name) + r"-\d+\.[a-z0-9_]+\.tmp\Z")
        try:
            names = os.listdir(folder)
        except OSError:
            return []
        return [os.path.join(folder, entry) for entry in names if pattern.match(entry)]

    def _remove_own_temps(self) -> None:
        """Deletes this prefix's temp files; call with the save lock held. Skipped while another live job
        holds the directory's own lock (e.g. its BackupAndRestore): the folder is that job's."""
        if DirectoryLock(self._directory).live_holder() is not None:
            return
        for temp in self._own_temps():
            try:
                _sharded.remove_entry(temp)  # a temp file, or a sharded save's temp directory
            except OSError:
                pass

    def _clear_temps_of_dead_writers(self) -> None:
        """At start: removes temps a killed save left, unless a live job is saving under this prefix now."""
        if not self._own_temps():
            return  # nothing to do: do not touch (or create) lock files
        lock = self._save_lock()
        try:
            lock.acquire()
        except DirectoryLockedError:
            return  # a live job is writing: its temp file is in use
        try:
            self._remove_own_temps()
        finally:
            lock.release()

    @contextlib.contextmanager
    def _saving(self) -> Iterator[None]:
        """The chief's save: waits for another live job's save of this prefix, takes the save lock, removes
        temps that killed saves left, then writes."""
        lock = self._save_lock()
        deadline = time.monotonic() + _SAVE_LOCK_WAIT_S
        while True:
            try:
                lock.acquire()
                break
            except DirectoryLockedError:
                if time.monotonic() >= deadline:
                    holder = lock.live_holder()
                    who = f" ({lock._describe(holder)})" if holder else ""
                    raise DirectoryLockedError(
                        f"Cannot save '{self._prefix}-N': another live job{who} has been saving checkpoints with this "
                        f"prefix for over {_SAVE_LOCK_WAIT_S:g} s (its lock file is '{lock.path}'). Give each job its "
                        f"own directory or checkpoint_name; if that job is gone, delete the lock file.") from None
                time.sleep(0.05)
        try:
            self._remove_own_temps()
            yield
        finally:
            lock.release()

    def _record_and_sweep(self, save_path: str, on_disk: bool) -> None:
        self._maybe_delete.pop(save_path, None)  # an overwritten checkpoint moves to the end
        self._maybe_delete[save_path] = time.time()
        self._latest_checkpoint = save_path
        if on_disk:  # point the index at the new file before deleting anything (a kill in between is safe)
            self._record_state()
        removed = self._sweep(on_disk)
        if on_disk and removed:
            self._record_state()

    def _sweep(self, on_disk: bool) -> bool:
        if not self._max_to_keep:
            return False
        removed = False
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.popitem(last=False)
            removed = True
            if self._keep_every_n_hours and stamp - self._keep_every_n_hours * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = stamp  # preserved on disk, no longer managed
                continue
            if on_disk:
                if is_bundle(path) and not os.path.exists(path):
                    from torchstrategy.checkpoint._tf_write import remove_tf_checkpoint

                    remove_tf_checkpoint(path)  # TF's bundle: '.index' and '.data-*' files
                else:
                    _sharded.remove_checkpoint(path)  # a file, or a sharded checkpoint's directory
        return removed

    def _record_state(self) -> None:
        update_checkpoint_state(self._directory, self._latest_checkpoint, list(self._maybe_delete),
                                list(self._maybe_delete.values()), self._last_preserved_timestamp)

    # ----- restoring -------------------------------------------------------------------------
    @moved_keywords(fallback_to_previous="set `manager.fallback_to_previous = True` before calling it.")
    def restore_or_initialize(self) -> Optional[str]:
        """Restores the latest checkpoint and returns its path; with none, calls `init_fn` (if given) and
        returns None. A corrupted or missing latest file raises, naming it, unless the manager's
        `fallback_to_previous` is True (torchstrategy's switch): then older managed checkpoints are tried,
        newest first, with a warning for each file skipped."""
        from torchstrategy.checkpoint._io import CheckpointCorruptedError

        fallback_to_previous = bool(self.fallback_to_previous)
        if self._latest_checkpoint is None:
            if self._init_fn is not None:
                self._init_fn()
            return None
        candidates = [self._latest_checkpoint]
        if fallback_to_previous:
            candidates += [p for p in reversed(self.checkpoints) if p != self._latest_checkpoint]
        failures = []
        for path in candidates:
            try:
                self._checkpoint.restore(path)
            except (CheckpointCorruptedError, BundleCorruptedError, FileNotFoundError) as error:
                if not fallback_to_previous:
                    raise
                failures.append(path)
                warnings.warn(f"Skipping checkpoint '{path}' and falling back to an older one: {error}", stacklevel=2)
                continue
            if self._checkpoint_interval is not None:
                self._last_checkpoint_step = _as_int(self._step_counter, "step_counter")
            return path
        raise CheckpointCorruptedError(
            f"No readable checkpoint in '{self._directory}': {', '.join(repr(p) for p in failures)} are all corrupted "
            f"or missing. Delete the directory to start over.")
