"""What an optimizer's `learning_rate` may be (float, schedule, zero-argument callable), its validation,
and the float-with-`assign` value that `optimizer.learning_rate` hands out."""
from __future__ import annotations

import math
from typing import Any, Callable, Union

import numpy as np
import torch

from torchstrategy.keras.optimizers import schedules as _schedules

LearningRate = Union[float, _schedules.LearningRateSchedule, Callable[[], float]]


class LearningRateValue(float):
    """The float `optimizer.learning_rate` returns; like a Keras variable it also has `numpy()` and
    `assign(value)` (which sets the optimizer's learning rate), so `opt.lr.assign(0.1)` keeps working."""

    _optimizer: Any = None

    def numpy(self) -> np.float32:
        return np.float32(self)

    def assign(self, value: Any) -> None:
        if self._optimizer is None:
            raise ValueError("This learning-rate value is not attached to an optimizer.")
        self._optimizer.learning_rate = value

    # Copies and pickles are plain floats: logs that hold this value must not drag the optimizer along.
    def __reduce__(self) -> tuple:
        return (float, (float(self),))

    def __copy__(self) -> float:
        return float(self)

    def __deepcopy__(self, memo: dict) -> float:
        return float(self)


def to_learning_rate(value: Any) -> LearningRate:
    """Validates a `learning_rate` argument: numbers become floats (>= 0), schedules/callables pass through."""
    if isinstance(value, _schedules.LearningRateSchedule):
        return value
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) or (
        isinstance(value, torch.Tensor) and value.numel() == 1
    ):
        rate = float(value)
        if not math.isfinite(rate) or rate < 0:
            raise ValueError(f"`learning_rate` must be a finite number >= 0. Received: learning_rate={rate}")
        return rate
    if callable(value):
        return value
    raise ValueError(
        "Argument `learning_rate` should be a float, a `keras.optimizers.schedules.LearningRateSchedule`, or a "
        f"callable returning a float. Received: learning_rate={value!r}. (To give the optimizer its "
        "parameters, call `optimizer.build(model.parameters())` or pass `params=`.)"
    )
