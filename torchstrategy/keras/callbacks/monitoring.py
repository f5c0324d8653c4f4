"""Callbacks that watch a logged quantity and act on the run: EarlyStopping,
ReduceLROnPlateau and TerminateOnNaN (Keras semantics, messages on the chief only)."""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Callable, Optional

import numpy as np

from torchstrategy.keras.callbacks.base import Callback, _is_chief, _print_msg

_MODES = ("auto", "min", "max")
# Names whose larger value is better, for mode='auto' when the metric object cannot tell.
_HIGHER_IS_BETTER_SUFFIXES = ("acc", "accuracy", "auc", "precision", "recall", "f1_score", "fbeta_score")


def _check_mode(mode: str, owner: str) -> str:
    if mode not in _MODES:
        raise ValueError(f"{owner} mode={mode!r} is unknown. Use one of {_MODES}.")
    return mode


def _higher_is_better(monitor: str, model: Any) -> bool:
    """Direction for mode='auto': losses go down; a metric object may say so itself
    (Keras 3 `_direction`); else Keras 2's rule on the name (accuracy, AUC... go up)."""
    name = monitor[4:] if monitor.startswith("val_") else monitor
    if name == "loss":
        return False
    for metric in getattr(model, "metrics", None) or ():
        direction = getattr(metric, "_direction", None)
        if getattr(metric, "name", None) == name and direction in ("up", "down"):
            return direction == "up"
    return name.endswith(_HIGHER_IS_BETTER_SUFFIXES)


def _available(logs: dict) -> str:
    return ",".join(logs.keys())


def _learning_rate(model: Any, owner: str) -> float:
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "learning_rate"):
        raise ValueError(
            f"{owner} needs `model.optimizer.learning_rate`; compile the model with an optimizer first."
        )
    return float(optimizer.learning_rate)


class EarlyStopping(Callback):
    """Stops training when `monitor` has stopped improving (sets `model.stop_training`).

    An epoch improves when it beats the best value so far by more than `min_delta`. Training
    stops once `patience` epochs in a row did not improve (never at epoch 0 and never before
    `start_from_epoch`). With `baseline`, the patience counter only restarts on epochs that
    also beat the baseline. With `restore_best_weights`, the weights of the best epoch are put
    back at the end of training (as Keras 3 does: whether or not training stopped early).
    `stopped_epoch` is the 0-based epoch at which training stopped (0 if it did not).

    >>> stopper = EarlyStopping(monitor="loss", patience=2)
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        min_delta: float = 0,
        patience: int = 0,
        verbose: int = 0,
        mode: str = "auto",
        baseline: Optional[float] = None,
        restore_best_weights: bool = False,
        start_from_epoch: int = 0,
    ) -> None:
        super().__init__()
        self.monitor = monitor
        self.min_delta = abs(min_delta)
        self.patience = patience
        self.verbose = verbose
        self.mode = _check_mode(mode, "EarlyStopping")
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.monitor_op: Optional[Callable[[Any, Any], bool]] = None
        self.wait = 0
        self.stopped_epoch = 0
        self.best: float = math.inf
        self.best_weights: Optional[list] = None
        self.best_epoch = 0

    def _set_monitor_op(self) -> None:
        maximize = self.mode == "max" or (self.mode == "auto" and _higher_is_better(self.monitor, self.model))
        self.monitor_op = operator.gt if maximize else operator.lt
        self.best = -math.inf if maximize else math.inf

    def _is_improvement(self, value: float, reference: float) -> bool:
        shift = self.min_delta if self.monitor_op is operator.gt else -self.min_delta
        return bool(self.monitor_op(value - shift, reference))

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0
        self.monitor_op = None  # the direction may depend on metrics built during the first step

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if self.monitor_op is None:
            self._set_monitor_op()
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        chatty = self.verbose > 0 and _is_chief(self.model)
        if self.stopped_epoch > 0 and chatty:
            _print_msg(f"Epoch {self.stopped_epoch + 1}: early stopping\n")
        if self.restore_best_weights and self.best_weights is not None:
            if chatty:
                _print_msg(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.\n")
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs: Optional[dict]) -> Optional[float]:
        """The monitored value from `logs`, or None with a warning naming the available keys."""
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                f"Available metrics are: {_available(logs)}",
                stacklevel=2,
            )
            return None
        return float(value)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when `monitor` stopped improving for `patience`
    epochs, then waits `cooldown` epochs before counting again; never goes below `min_lr`.

    Adds the learning rate used during the epoch to the logs as 'learning_rate'.

    >>> reduce_lr = ReduceLROnPlateau(monitor="val_loss", factor=0.2, patience=5, min_lr=0.001)
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        factor: float = 0.1,
        patience: int = 10,
        verbose: int = 0,
        mode: str = "auto",
        min_delta: float = 1e-4,
        cooldown: int = 0,
        min_lr: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        if "epsilon" in kwargs:  # Keras 2 spelling of min_delta
            min_delta = kwargs.pop("epsilon")
        if kwargs:
            raise TypeError(f"ReduceLROnPlateau got unexpected arguments {sorted(kwargs)}.")
        if factor >= 1.0:
            raise ValueError(
                f"ReduceLROnPlateau does not support a factor >= 1.0. Got factor={factor}; use e.g. 0.1."
            )
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.mode = _check_mode(mode, "ReduceLROnPlateau")
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        self.cooldown_counter = 0
        self.wait = 0
        self._reset()

    def _reset(self) -> None:
        # Keras's rule for 'auto' here is "acc" anywhere in the name means maximize.
        maximize = self.mode == "max" or (self.mode == "auto" and "acc" in self.monitor)
        if maximize:
            self.monitor_op = lambda value, best: np.greater(value, best + self.min_delta)
            self.best = -math.inf
        else:
            self.monitor_op = lambda value, best: np.less(value, best - self.min_delta)
            self.best = math.inf
        self.cooldown_counter = 0
        self.wait = 0

    def in_cooldown(self) -> bool:
        """True while the callback is waiting out `cooldown` epochs after a reduction."""
        return self.cooldown_counter > 0

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._reset()

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        logs = logs if logs is not None else {}
        logs["learning_rate"] = _learning_rate(self.model, "ReduceLROnPlateau")
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not available. "
                f"Available metrics are: {_available(logs)}.",
                stacklevel=2,
            )
            return
        current = float(current)
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
            return
        if self.in_cooldown():
            return
        self.wait += 1
        if self.wait < self.patience:
            return
        old_lr = _learning_rate(self.model, "ReduceLROnPlateau")
        if old_lr > np.float32(self.min_lr):
            new_lr = max(old_lr * self.factor, self.min_lr)
            self.model.optimizer.learning_rate = new_lr
            if self.verbose > 0 and _is_chief(self.model):
                _print_msg(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.\n")
            self.cooldown_counter = self.cooldown
            self.wait = 0


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch's loss is NaN or infinite (`raise_error=True`: raises RuntimeError
    at once, so no other callback's on_train_end runs)."""

    def __init__(self, raise_error: bool = False) -> None:
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            if self.raise_error:
                raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {float(loss)}. "
                                   "Terminating training immediately.")
            if _is_chief(self.model):
                _print_msg(f"Batch {batch}: Invalid loss, terminating training\n")
            self.model.stop_training = True
