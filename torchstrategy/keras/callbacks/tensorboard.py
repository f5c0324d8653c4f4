"""The Keras TensorBoard callback on tf.summary's event-file writers (the tensorboard package, imported lazily):
epoch scalars under log_dir/train and log_dir/validation, batch scalars, histograms, batch profiles."""
from __future__ import annotations

import os
import time
import warnings
from typing import Any, Optional, Union

import numpy as np
import torch

from torchstrategy import _context, profiler
from torchstrategy import summary as tf_summary
from torchstrategy.keras.callbacks.base import Callback, _is_chief, _to_python


def _summary_writer_class() -> Any:
    try:
        import tensorboard  # noqa: F401  (tf.summary's writers need it)
    except ImportError as error:
        raise ImportError(
            "keras.callbacks.TensorBoard needs the `tensorboard` package, which is not installed. "
            "Install it with `pip install torchstrategy[tensorboard]` (or `pip install tensorboard`)."
        ) from error
    return tf_summary.create_file_writer


def _scalar(value: Any) -> Optional[float]:
    value = _to_python(value)
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return float(value)
    return None  # non-scalar log entries are not scalars in TensorBoard either


def _profile_range(profile_batch: Any) -> tuple[int, int]:
    """Keras's `profile_batch` forms (N, (start, stop), 'start,stop'; 0 is off) as (start, stop)."""
    accepted = ("profile_batch must be 0 (no profiling), a positive int N (profile batch N), or a pair of positive "
                "ints (start, stop) with start <= stop, as a tuple/list or a 'start,stop' string (batches count "
                f"from 1 over the whole fit); got {profile_batch!r}.")
    value = profile_batch
    if isinstance(value, str):
        try:
            value = [int(part) for part in value.split(",")]
        except ValueError:
            raise ValueError(accepted) from None
        if len(value) == 1:
            value = value[0]
    if isinstance(value, int):
        start = stop = value
    elif isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        start, stop = value
    else:
        raise ValueError(accepted)
    if (start, stop) != (0, 0) and (start < 1 or stop < start):
        raise ValueError(accepted)
    return int(start), int(stop)


class TensorBoard(Callback):
    """Writes logs for TensorBoard: `tensorboard --logdir=log_dir`.

    Each epoch, training logs are written to `log_dir/train` and `val_*` logs (without the
    prefix) to `log_dir/validation`, tagged `epoch_<name>` at step `epoch`, with the optimizer's
    `epoch_learning_rate`. `update_freq='batch'` or an integer N also writes `batch_<name>`
    every N training steps. `histogram_freq=N` writes a histogram of every weight every N
    epochs. `profile_batch=(start, stop)` (or N, or 'start,stop'; 0 is off) records a
    `tf.profiler` trace of training batches start..stop, counted from 1 over the whole fit as
    Keras does, under `log_dir/train/plugins/profile/<timestamp>/`; each profiled batch is a
    `Trace("Profiled batch", step_num=N)` (so a `ProfilerStep#N` event) with N that same count.
    `write_graph`, `write_images` and the embeddings arguments are accepted for compatibility
    and do nothing yet. Only the chief process writes (and profiles).

    >>> tensorboard = TensorBoard(log_dir="logs", histogram_freq=1)  # doctest: +SKIP
    """

    def __init__(
        self,
        log_dir: Union[str, os.PathLike] = "logs",
        histogram_freq: int = 0,
        write_graph: bool = True,
        write_images: bool = False,
        write_steps_per_second: bool = False,
        update_freq: Union[str, int] = "epoch",
        profile_batch: Union[int, tuple, str] = 0,
        embeddings_freq: int = 0,
        embeddings_metadata: Any = None,
    ) -> None:
        super().__init__()
        self._writer_class = _summary_writer_class()
        if update_freq == "batch":
            update_freq = 1
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(
                f"TensorBoard update_freq must be 'epoch', 'batch' or a positive int, got {update_freq!r}."
            )
        if histogram_freq < 0:
            raise ValueError(f"TensorBoard histogram_freq must be >= 0, got {histogram_freq}.")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = update_freq
        self.profile_batch = profile_batch
        self._start_batch, self._stop_batch = _profile_range(profile_batch)
        self._should_profile = self._stop_batch > 0
        self._profiles_here = False  # decided once per fit: is this the chief?
        self._profiler_started = False
        self._batch_trace: Optional[profiler.Trace] = None
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._writers: dict[str, Any] = {}
        self._global_train_batch = 0
        self._epoch_start_time = 0.0
        self._epoch_batches = 0

    def _writer(self, kind: str) -> Any:
        if kind not in self._writers:
            subdir = "train" if kind == "train" else "validation"
            self._writers[kind] = self._writer_class(os.path.join(self.log_dir, subdir))
        return self._writers[kind]

    def _write_scalars(self, kind: str, entries: dict, step: int, prefix: str = "", suffix: str = "") -> None:
        """Keras's scalar summaries (TF 2 tensor scalars, as tf.summary.scalar writes them)."""
        values = {name: _scalar(value) for name, value in entries.items()}
        values = {name: value for name, value in values.items() if value is not None}
        if not values:
            return
        with self._writer(kind).as_default(step=step):
            for name, value in values.items():
                tf_summary.scalar(prefix + name + suffix, value)

    def _implements_train_batch_hooks(self) -> bool:
        # The same answer on every replica (the loop syncs replicas per step when hooks run); once the
        # profiled range is behind, profiling needs no more hooks.
        profile_pending = self._should_profile and self._global_train_batch < self._stop_batch
        return self.update_freq != "epoch" or self.write_steps_per_second or profile_pending

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._global_train_batch = 0
        if self._should_profile:
            strategy = getattr(self.model, "distribute_strategy", None) or _context.get_strategy()
            self._profiles_here = bool(strategy.is_chief)

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._epoch_start_time = time.time()
        self._epoch_batches = 0

    def on_train_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        self._global_train_batch += 1  # Keras counts here, from 1, across epochs
        if not self._profiles_here:
            return
        if self._global_train_batch == self._start_batch:
            self._start_profiler()
        if self._profiler_started:
            self._batch_trace = profiler.Trace("Profiled batch", step_num=self._global_train_batch)
            self._batch_trace.__enter__()

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self._epoch_batches += 1
        if self._batch_trace is not None:
            self._batch_trace.__exit__(None, None, None)
            self._batch_trace = None
        if self._profiler_started and self._global_train_batch >= self._stop_batch:
            self._stop_profiler()
        if self.update_freq == "epoch" or not _is_chief(self.model) or not logs:
            return
        if self._global_train_batch % self.update_freq == 0:
            self._write_scalars("train", logs, self._global_train_batch, prefix="batch_")

    def on_test_end(self, logs: Optional[dict] = None) -> None:
        iterations = getattr(getattr(self.model, "optimizer", None), "iterations", None)
        if iterations is None or not logs or not _is_chief(self.model):
            return
        self._write_scalars("validation", logs, int(_to_python(iterations)), prefix="evaluation_",
                            suffix="_vs_iterations")

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if not _is_chief(self.model):
            return
        self._log_epoch_metrics(epoch, logs or {})
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        if self._profiler_started:  # fit ended inside the profiled range
            self._stop_profiler()
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    # As in Keras, a profiler that cannot start or stop is reported, not fatal to training.
    def _start_profiler(self) -> None:
        try:
            # this callback already chose the chief, so the session records here whatever scope is entered
            profiler.start_session(os.path.join(self.log_dir, "train"), every_process=True)
            self._profiler_started = True
        except (profiler.AlreadyExistsError, OSError) as error:
            warnings.warn(f"TensorBoard could not start the profiler: {error}", stacklevel=2)

    def _stop_profiler(self) -> None:
        self._profiler_started = False
        try:
            profiler.stop(save=True)
        except (profiler.UnavailableError, OSError) as error:
            warnings.warn(f"TensorBoard could not save the profile: {error}", stacklevel=2)

    def _log_epoch_metrics(self, epoch: int, logs: dict) -> None:
        train_logs = {name: value for name, value in logs.items() if not name.startswith("val_")}
        val_logs = {name[4:]: value for name, value in logs.items() if name.startswith("val_")}
        optimizer = getattr(self.model, "optimizer", None)
        if "learning_rate" not in train_logs and hasattr(optimizer, "learning_rate"):
            train_logs["learning_rate"] = optimizer.learning_rate
        if self.write_steps_per_second:
            elapsed = time.time() - self._epoch_start_time
            train_logs["steps_per_second"] = self._epoch_batches / elapsed if elapsed > 0 else 0.0
        for kind, entries in (("train", train_logs), ("validation", val_logs)):
            if entries:
                self._write_scalars(kind, entries, epoch, prefix="epoch_")

    def _log_weights(self, epoch: int) -> None:
        writer = self._writer("train")
        if isinstance(self.model, torch.nn.Module):
            named = [
                (name.replace(".", "/"), param.detach().float().cpu())
                for name, param in self.model.named_parameters()
            ]
        else:
            named = [(f"weight_{index}", np.asarray(w)) for index, w in enumerate(self.model.get_weights())]
        with writer.as_default(step=epoch):
            for name, weight in named:
                tf_summary.histogram(f"{name}/histogram", weight)
