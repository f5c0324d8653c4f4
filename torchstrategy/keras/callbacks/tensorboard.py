"""The Keras TensorBoard callback on torch.utils.tensorboard.SummaryWriter (imported lazily):
epoch scalars under log_dir/train and log_dir/validation, optional batch scalars and histograms."""
from __future__ import annotations

import os
import time
from typing import Any, Optional, Union

import numpy as np
import torch

from torchstrategy.keras.callbacks.base import Callback, _is_chief, _to_python


def _summary_writer_class() -> type:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as error:
        raise ImportError(
            "keras.callbacks.TensorBoard needs the `tensorboard` package, which is not installed. "
            "Install it with `pip install torchstrategy[tensorboard]` (or `pip install tensorboard`)."
        ) from error
    return SummaryWriter


def _scalar(value: Any) -> Optional[float]:
    value = _to_python(value)
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return float(value)
    return None  # non-scalar log entries are not scalars in TensorBoard either


class TensorBoard(Callback):
    """Writes logs for TensorBoard: `tensorboard --logdir=log_dir`.

    Each epoch, training logs are written to `log_dir/train` and `val_*` logs (without the
    prefix) to `log_dir/validation`, tagged `epoch_<name>` at step `epoch`, with the optimizer's
    `epoch_learning_rate`. `update_freq='batch'` or an integer N also writes `batch_<name>`
    every N training steps. `histogram_freq=N` writes a histogram of every weight every N
    epochs. `write_graph`, `write_images`, `profile_batch` and the embeddings arguments are
    accepted for compatibility and do nothing yet. Only the chief process writes.

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
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._writers: dict[str, Any] = {}
        self._global_train_batch = 0
        self._epoch_start_time = 0.0
        self._epoch_batches = 0

    def _writer(self, kind: str) -> Any:
        if kind not in self._writers:
            subdir = "train" if kind == "train" else "validation"
            self._writers[kind] = self._writer_class(log_dir=os.path.join(self.log_dir, subdir))
        return self._writers[kind]

    def _implements_train_batch_hooks(self) -> bool:
        return self.update_freq != "epoch" or self.write_steps_per_second

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._global_train_batch = 0

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._epoch_start_time = time.time()
        self._epoch_batches = 0

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self._global_train_batch += 1
        self._epoch_batches += 1
        if self.update_freq == "epoch" or not _is_chief(self.model) or not logs:
            return
        if self._global_train_batch % self.update_freq == 0:
            writer = self._writer("train")
            for name, value in logs.items():
                value = _scalar(value)
                if value is not None:
                    writer.add_scalar("batch_" + name, value, global_step=self._global_train_batch)

    def on_test_end(self, logs: Optional[dict] = None) -> None:
        iterations = getattr(getattr(self.model, "optimizer", None), "iterations", None)
        if iterations is None or not logs or not _is_chief(self.model):
            return
        writer = self._writer("validation")
        step = int(_to_python(iterations))
        for name, value in logs.items():
            value = _scalar(value)
            if value is not None:
                writer.add_scalar(f"evaluation_{name}_vs_iterations", value, global_step=step)

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if not _is_chief(self.model):
            return
        self._log_epoch_metrics(epoch, logs or {})
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

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
            if not entries:
                continue
            writer = self._writer(kind)
            for name, value in entries.items():
                value = _scalar(value)
                if value is not None:
                    writer.add_scalar("epoch_" + name, value, global_step=epoch)

    def _log_weights(self, epoch: int) -> None:
        writer = self._writer("train")
        if isinstance(self.model, torch.nn.Module):
            named = [
                (name.replace(".", "/"), param.detach().float().cpu())
                for name, param in self.model.named_parameters()
            ]
        else:
            named = [(f"weight_{index}", np.asarray(w)) for index, w in enumerate(self.model.get_weights())]
        for name, weight in named:
            writer.add_histogram(f"{name}/histogram", weight, global_step=epoch)
