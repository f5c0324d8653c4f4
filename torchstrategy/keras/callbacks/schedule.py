"""LearningRateScheduler: sets `model.optimizer.learning_rate` from a user function at the
start of every epoch and records the rate in the epoch logs, as Keras does."""
from __future__ import annotations

import inspect
import numbers
from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy.keras.callbacks.base import Callback, _is_chief, _print_msg


def _takes_learning_rate(schedule: Callable) -> Optional[bool]:
    """True when `schedule` accepts (epoch, lr), False for (epoch) only, None when unknown."""
    try:
        parameters = inspect.signature(schedule).parameters.values()
    except (TypeError, ValueError):  # some builtins have no signature
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    has_varargs = any(p.kind is p.VAR_POSITIONAL for p in parameters)
    return has_varargs or len(positional) >= 2


def _as_float(value: Any) -> float:
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value.item())
    if isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"The output of the `schedule` function should be a float. Got: {value!r}")


class LearningRateScheduler(Callback):
    """Sets the learning rate to `schedule(epoch, lr)` (or `schedule(epoch)`) each epoch.

    `epoch` is 0-based and `lr` the current rate. The rate used is logged as 'learning_rate'.

    >>> def schedule(epoch, lr):
    ...     return lr if epoch < 10 else lr * 0.9
    >>> callback = LearningRateScheduler(schedule)
    """

    def __init__(self, schedule: Callable[..., float], verbose: int = 0) -> None:
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"LearningRateScheduler needs a callable schedule(epoch[, lr]), got {schedule!r}.")
        self.schedule = schedule
        self.verbose = verbose
        self._two_args = _takes_learning_rate(schedule)

    def _optimizer(self) -> Any:
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None or not hasattr(optimizer, "learning_rate"):
            raise ValueError(
                'Optimizer must have a "learning_rate" attribute; compile the model with an optimizer.'
            )
        return optimizer

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        optimizer = self._optimizer()
        current = float(optimizer.learning_rate)
        if self._two_args is None:
            try:  # as Keras: try the (epoch, lr) form, fall back to the old (epoch) one
                learning_rate = self.schedule(epoch, current)
            except TypeError:
                learning_rate = self.schedule(epoch)
        elif self._two_args:
            learning_rate = self.schedule(epoch, current)
        else:
            learning_rate = self.schedule(epoch)
        learning_rate = _as_float(learning_rate)
        optimizer.learning_rate = learning_rate
        if self.verbose > 0 and _is_chief(self.model):
            _print_msg(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {learning_rate}.\n")

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if logs is not None:
            logs["learning_rate"] = float(self._optimizer().learning_rate)
