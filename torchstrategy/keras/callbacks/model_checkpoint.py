"""keras.callbacks.ModelCheckpoint: saves the model (or only its weights) during fit(), every epoch or
every N batches, optionally only when a monitored metric improves; the chief writes, every rank keeps count."""
from __future__ import annotations

import difflib
import functools
import math
import operator
import os
import re
import string
import warnings
from typing import Any, Optional, Union

import numpy as np
import torch

from torchstrategy.checkpoint import check_directory_path
from torchstrategy.keras.callbacks.base import Callback, _is_chief, _print_msg, _to_python
from torchstrategy.keras.callbacks.monitoring import _available, _check_mode, _higher_is_better


class _FilepathKeyError(KeyError):
    """A KeyError (what Keras raises) whose message prints as written, not as a quoted repr."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _placeholder_keys(filepath: str) -> list[str]:
    """The names `filepath`'s `{...}` placeholders need, validated once so bad templates fail at once."""
    keys = []
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(filepath) if field is not None]
    except ValueError as error:
        raise ValueError(f'ModelCheckpoint filepath "{filepath}" is not a valid format string ({error}). '
                         "Write placeholders as {name} or {name:spec}, and double literal braces: {{ }}.") from error
    for field in fields:
        key = field.split(".", 1)[0].split("[", 1)[0]
        if not key or key.isdigit():
            raise ValueError(f'ModelCheckpoint filepath "{filepath}" has a positional placeholder {{{field}}}; '
                             "only named ones are filled, e.g. {epoch:02d} or {val_loss:.2f}.")
        if key not in keys:
            keys.append(key)
    return keys


# Keywords Keras 2's ModelCheckpoint took and Keras 3 dropped: what to use instead.
_REMOVED_KEYWORDS = {
    "period": "Keras 3 removed it: save every N batches with save_freq=N, or every epoch with save_freq='epoch'.",
    "options": "Keras 3 removed it (it was a tf.train.CheckpointOptions / SaveOptions); drop the argument.",
}


def _refuse_removed_keywords(init: Any) -> Any:
    """Wraps `__init__` so Keras 2's removed keywords fail with a TypeError that says what to use
    instead; the signature (read through `__wrapped__`) stays Keras 3's."""

    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        for name in kwargs:
            if name in _REMOVED_KEYWORDS:
                raise TypeError(f"ModelCheckpoint.__init__() got an unexpected keyword argument '{name}'. "
                                f"{_REMOVED_KEYWORDS[name]}")
        init(self, *args, **kwargs)

    return checked


class ModelCheckpoint(Callback):
    """Saves the model or its weights at the end of every epoch or every `save_freq` batches.

    `filepath` may hold named placeholders filled from `epoch` (1-based), `batch` (1-based within
    the epoch, int `save_freq` only) and the logs of that moment (epoch logs, or the batch logs
    when `save_freq` is an int): e.g. ``"weights.{epoch:02d}-{val_loss:.2f}.keras"``. A name that
    is not available raises a KeyError naming it and the available ones, before anything is written.

    With `save_best_only=True` a save happens only when `monitor` beats the best value so far
    (`mode` 'min', 'max', or 'auto': maximise accuracy/AUC/precision/recall-like names, minimise
    the rest, as EarlyStopping does); with a constant filepath the file always holds the best
    model. `initial_value_threshold` is the value to beat first. If `monitor` is missing from the
    logs, a warning lists the available names and nothing is saved.

    `save_weights_only=True` calls `model.save_weights(path)`, else `model.save(path)`; both write
    atomically and create missing directories. In a multi-replica run only the chief writes and
    prints; every replica keeps the same bookkeeping and waits at each save point until the chief's
    write is done. Keras 2's `period` and `options` raise a TypeError, as in Keras 3, whose message
    says what to use instead.

    >>> checkpoint = ModelCheckpoint("/tmp/ckpt/best.keras", monitor="val_accuracy", mode="max",
    ...                              save_best_only=True)
    """

    @_refuse_removed_keywords
    def __init__(
        self,
        filepath: Union[str, os.PathLike],
        monitor: str = "val_loss",
        verbose: int = 0,
        save_best_only: bool = False,
        save_weights_only: bool = False,
        mode: str = "auto",
        save_freq: Union[str, int] = "epoch",
        initial_value_threshold: Optional[float] = None,
    ) -> None:
        super().__init__()
        if not isinstance(filepath, (str, os.PathLike)):
            raise TypeError(f"ModelCheckpoint filepath must be a str or path, got {type(filepath).__name__}.")
        is_steps = isinstance(save_freq, int) and not isinstance(save_freq, bool)
        if save_freq != "epoch" and not is_steps:
            raise ValueError(f"Unrecognized save_freq: {save_freq!r}. Expected save_freq are 'epoch' or "
                             "a positive integer number of batches.")
        if is_steps and save_freq < 1:
            raise ValueError(f"save_freq={save_freq} must be at least 1 batch (or 'epoch').")
        self.filepath = os.fspath(filepath)
        self._format_keys = _placeholder_keys(self.filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = _check_mode(mode, "ModelCheckpoint")
        self.save_freq = save_freq
        self.initial_value_threshold = initial_value_threshold
        self.best: Optional[float] = None if initial_value_threshold is None else float(initial_value_threshold)
        self.monitor_op: Optional[Any] = None
        self._current_epoch = 0
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = 0
        self._keys_checked = False

    # ----- hooks ---------------------------------------------------------------------------
    def _implements_train_batch_hooks(self) -> bool:
        # Only batch-frequency saving needs per-step logs; fit() skips the host sync otherwise.
        return self.save_freq != "epoch"

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        # Fail before the first epoch, not after it: a folder that can never exist, a mistyped placeholder.
        static = self.filepath.split("{", 1)[0]
        folder = os.path.dirname(static)
        if folder:
            check_directory_path(folder, "ModelCheckpoint filepath's folder")
        self._check_keys_at_start()

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._current_epoch = epoch

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        if self.save_freq == "epoch":
            return
        logs = logs or {}
        if not self._keys_checked:  # batch logs have the same names every step: fail on the first
            self._check_format_keys(logs, batch)
        if self._should_save_on_batch(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if self.save_freq != "epoch":
            return
        self._save_model(epoch, None, logs or {})

    # ----- decisions -----------------------------------------------------------------------
    def _should_save_on_batch(self, batch: int) -> bool:
        """Counts batches since the last save (across epochs, as Keras does)."""
        if batch <= self._last_batch_seen:  # a new epoch restarted the batch index
            added = batch + 1
        else:
            added = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += added
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _set_monitor_op(self) -> None:
        # Resolved on first use: the model's metrics (which may state a direction) exist by then.
        maximize = self.mode == "max" or (self.mode == "auto" and _higher_is_better(self.monitor, self.model))
        self.monitor_op = operator.gt if maximize else operator.lt
        if self.best is None:
            self.best = -math.inf if maximize else math.inf

    def _should_save(self, epoch: int, logs: dict, filepath: str, chatty: bool) -> bool:
        if not self.save_best_only:
            if chatty:
                _print_msg(f"\nEpoch {epoch + 1}: saving model to {filepath}\n")
            return True
        if self.monitor_op is None:
            self._set_monitor_op()
        current = _to_python(logs.get(self.monitor))
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available, skipping. "
                          f"Available metrics are: {_available(logs)}", stacklevel=3)
            return False
        if isinstance(current, (np.ndarray, torch.Tensor)):
            warnings.warn(f"Can save best model only when `{self.monitor}` is a scalar value; got shape "
                          f"{tuple(current.shape)}. Falling back to save_best_only=False.", stacklevel=3)
            return True
        current = float(current)
        if self.monitor_op(current, self.best):
            if chatty:
                _print_msg(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to "
                           f"{current:.5f}, saving model to {filepath}\n")
            self.best = current
            return True
        if chatty:
            _print_msg(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}\n")
        return False

    # ----- paths and writing ---------------------------------------------------------------
    def _check_format_keys(self, logs: dict, batch: Optional[int]) -> None:
        available = ["epoch"] + (["batch"] if batch is not None else []) + list(logs.keys())
        missing = [key for key in self._format_keys if key not in available]
        if missing:
            raise _FilepathKeyError(
                f'Failed to format this callback filepath: "{self.filepath}". Reason: no value for '
                f"{', '.join(repr(key) for key in missing)}. Available keys are: {', '.join(available)}. "
                "Use one of these names in the placeholders (validation metrics need validation_data).")
        self._keys_checked = True

    def _metric_names_known_at_start(self) -> list[str]:
        """'loss' and the compiled metrics' names (as they appear in single-output logs)."""
        from torchstrategy.keras import metrics as metrics_module
        from torchstrategy.keras.compile_utils import _metric_leaves

        names = ["loss"]
        compiled = getattr(self.model, "_compiled", None)
        for spec in (getattr(compiled, "metrics_spec", None), getattr(compiled, "weighted_metrics_spec", None)):
            for item in _metric_leaves(spec):
                try:
                    name = item if isinstance(item, str) and item in ("accuracy", "acc") else \
                        getattr(item, "name", None) if not isinstance(item, str) else metrics_module.get(item).name
                except Exception:  # noqa: BLE001 - a name we cannot work out is simply not offered
                    name = None
                if isinstance(name, str) and name not in names:
                    names.append(name)
        return names

    def _check_keys_at_start(self) -> None:
        """Refuses placeholders fit() will surely not fill: near-misses of the names it provides (typos such
        as 'val_los' or 'epochs') and, with batch-frequency saving, validation names. Other unknown names
        (e.g. logs another callback adds, per-output metrics) wait for the check at the first save."""
        by_batch = self.save_freq != "epoch"
        names = self._metric_names_known_at_start()
        known = ["epoch"] + (["batch"] if by_batch else []) + names + ([] if by_batch else [f"val_{n}" for n in names])
        problems = []
        for key in self._format_keys:
            if by_batch and key.startswith("val_"):
                problems.append(f"'{key}' (batch logs hold no validation metrics; use save_freq='epoch')")
                continue
            if key in known or any(key.endswith("_" + name) for name in names) or \
                    re.sub(r"_\d+\Z", "", key) in known:
                continue  # known, a per-output variant such as 'out_1_loss', or a uniquified name ('mae_1')
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
            if close:
                problems.append(f"'{key}' (did you mean '{close[0]}'?)")
        if problems:
            val_note = "" if by_batch else " (the val_ ones only when fit() gets validation data)"
            raise _FilepathKeyError(
                f'Failed to format this callback filepath: "{self.filepath}". Reason: fit() will provide no value '
                f"for {', '.join(problems)}. Keys fit() provides: {', '.join(known)}{val_note}. Fix the placeholder "
                f"before training.")

    def _get_file_path(self, epoch: int, batch: Optional[int], logs: dict) -> str:
        """The filepath with its placeholders filled (epoch and batch are 1-based)."""
        self._check_format_keys(logs, batch)
        values = {key: _to_python(value) for key, value in logs.items()}
        if batch is not None and "batch" not in values:
            values["batch"] = batch + 1
        values["epoch"] = epoch + 1
        try:
            return self.filepath.format(**values)
        except (ValueError, TypeError, IndexError, AttributeError) as error:
            raise ValueError(f'Failed to format this callback filepath: "{self.filepath}" with epoch, batch '
                             f"and the logs ({error}). Check each placeholder's format spec against its "
                             "value's type, e.g. {epoch:02d} for an int, {val_loss:.2f} for a float.") from error

    def _save_model(self, epoch: int, batch: Optional[int], logs: dict) -> None:
        """Formats the path, decides, and has the chief write; every replica then waits for it."""
        from torchstrategy.keras import saving

        filepath = self._get_file_path(epoch, batch, logs)
        chief = _is_chief(self.model)
        decided = self._should_save(epoch, logs, filepath, chatty=chief and self.verbose > 0) and chief
        strategy = getattr(self.model, "distribute_strategy", None)
        if saving.holds_shards(self.model):
            # every replica gathers the shards the chief writes, so all follow the chief's decision
            decided = strategy.broadcast(decided, src=0)
        if decided:
            self._write(filepath, chief)
        # Batch logs are per replica, so replicas may decide differently: all meet here regardless.
        if strategy is not None:
            strategy.barrier()

    def _write(self, filepath: str, chief: bool = True) -> None:
        if os.path.isdir(filepath):
            raise IsADirectoryError(f"Please specify a non-directory filepath for ModelCheckpoint. Filepath "
                                    f"used is an existing directory: {filepath}")
        directory = os.path.dirname(filepath)
        if directory and chief:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
