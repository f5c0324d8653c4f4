"""The Keras `Callback` base class, the `History` callback fit() always adds, and the small
helpers every callback shares (chief detection, printing, turning log tensors into floats)."""
from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np
import torch

_BATCH_HOOKS = {
    "train": ("on_train_batch_begin", "on_train_batch_end", "on_batch_begin", "on_batch_end"),
    "test": ("on_test_batch_begin", "on_test_batch_end"),
    "predict": ("on_predict_batch_begin", "on_predict_batch_end"),
}


def _is_chief(model: Any) -> bool:
    """True when this process should write output: the strategy's chief, or no strategy at all."""
    strategy = getattr(model, "distribute_strategy", None)  # None: a callback used without a Keras model
    return True if strategy is None else bool(strategy.is_chief)


def _print_msg(message: str) -> None:
    """Writes to the *current* sys.stdout (looked up at call time, so redirection and capture work)."""
    stream = sys.stdout
    stream.write(message)
    stream.flush()


def _to_python(value: Any) -> Any:
    """One-element tensors and NumPy scalars become Python numbers; everything else is kept."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.detach().reshape(()).item()
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    return value


def _pythonify_logs(logs: Optional[dict]) -> dict:
    """Converts log values in place (callbacks share one dict, as in Keras) and returns it."""
    if logs is None:
        return {}
    if not isinstance(logs, dict):
        raise TypeError(f"Callback logs must be a dict of name -> value, got {type(logs).__name__}.")
    for key, value in logs.items():
        logs[key] = _to_python(value)
    return logs


class Callback:
    """Base class of Keras callbacks: override the `on_*` hooks you need.

    `model` is the model being trained (set by `set_model`) and `params` the dict fit() hands
    every callback (`verbose`, `epochs`, `steps`).

    >>> class PrintLoss(Callback):
    ...     def on_epoch_end(self, epoch, logs=None):
    ...         print(epoch, logs["loss"])
    >>> PrintLoss().on_epoch_end(0, {"loss": 0.5})
    0 0.5
    """

    #: the running fit()'s TrainingState (runtime, progress, resume point), set by the loop; None outside fit
    training_state: Any = None

    def __init__(self) -> None:
        self.model: Any = None
        self.params: Optional[dict] = None
        self.validation_data = None  # kept for Keras 2 scripts that read it

    def set_params(self, params: dict) -> None:
        """Stores the training parameters (`verbose`, `epochs`, `steps`)."""
        self.params = params

    def set_model(self, model: Any) -> None:
        """Stores the model the callback acts on."""
        self.model = model

    def set_training_state(self, state: Any) -> None:
        """Stores the TrainingState of the fit() that calls this callback (where training stands)."""
        self.training_state = state

    # Keras 2 names; the default train-batch hooks delegate to them.
    def on_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        """Alias of `on_train_batch_begin` kept for backward compatibility."""

    def on_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        """Alias of `on_train_batch_end` kept for backward compatibility."""

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        """Called at the start of every training epoch (0-based `epoch`)."""

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        """Called at the end of every epoch with the epoch's metrics, `val_*` included."""

    def on_train_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        """Called before each training step; calls `on_batch_begin` by default."""
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        """Called after each training step with running averages; calls `on_batch_end`."""
        self.on_batch_end(batch, logs)

    def on_test_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        """Called before each evaluation step."""

    def on_test_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        """Called after each evaluation step."""

    def on_predict_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        """Called before each prediction step."""

    def on_predict_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        """Called after each prediction step (`logs['outputs']` holds the batch outputs)."""

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        """Called once when fit() starts."""

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        """Called once when fit() ends (also after an early stop)."""

    def on_test_begin(self, logs: Optional[dict] = None) -> None:
        """Called when evaluation (or fit's validation) starts."""

    def on_test_end(self, logs: Optional[dict] = None) -> None:
        """Called when evaluation ends, with the evaluation metrics."""

    def on_predict_begin(self, logs: Optional[dict] = None) -> None:
        """Called when predict() starts."""

    def on_predict_end(self, logs: Optional[dict] = None) -> None:
        """Called when predict() ends."""

    # The training loop asks these so it can skip per-step host syncs nobody listens to.
    def _implements_train_batch_hooks(self) -> bool:
        return self._overrides_any(_BATCH_HOOKS["train"])

    def _implements_test_batch_hooks(self) -> bool:
        return self._overrides_any(_BATCH_HOOKS["test"])

    def _implements_predict_batch_hooks(self) -> bool:
        return self._overrides_any(_BATCH_HOOKS["predict"])

    def _overrides_any(self, names: tuple) -> bool:
        # An instance attribute counts too: LambdaCallback installs hooks that way.
        return any(
            name in vars(self) or getattr(type(self), name) is not getattr(Callback, name) for name in names
        )


class History(Callback):
    """Records every epoch's logs; fit() adds one and returns it (also set as `model.history`).

    `history` maps each log name ('loss', 'accuracy', 'val_loss', ...) to the list of its
    per-epoch values and `epoch` lists the epoch indices that ran.
    """

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self
