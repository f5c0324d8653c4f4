"""What fit() checks before it trains: epoch counts up front, and once the model is built but before the
first step, the class_weight classes and the validation data's shapes (so no epoch is spent first)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.keras import data_adapter
from torchstrategy.keras.runtime import call_on_one_row, eval_mode
from torchstrategy.nest import flatten as flatten_structure


def check_epochs(epochs: Any, initial_epoch: Any) -> None:
    """Keras trains nothing for a negative epoch count and counts from a negative initial_epoch; refuse both."""
    for name, value in (("epochs", epochs), ("initial_epoch", initial_epoch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"fit(): `{name}` must be a non-negative integer; got {value!r}. E.g. "
                             f"fit(x, y, epochs=10) trains 10 epochs; initial_epoch=3 resumes as epoch 3 of them.")


def _check_class_weight(model: Any, table: torch.Tensor, output: Any) -> None:
    """class_weight keys must be classes a single-output model can predict: index < its last dimension
    (2 for one sigmoid unit); Keras would silently weigh a class that never occurs."""
    outputs = flatten_structure(output)
    if len(outputs) != 1 or not isinstance(outputs[0], torch.Tensor) or outputs[0].dim() < 2:
        return
    units = int(outputs[0].shape[-1])
    classes = 2 if units == 1 else units
    if len(table) > classes:  # the table ends at the largest class index given
        raise ValueError(f"fit(): class_weight names class {len(table) - 1}, but model '{model.name}' has {classes} "
                         f"output classes (indices 0 to {classes - 1}, from its output of shape "
                         f"{tuple(outputs[0].shape[1:])} per sample). Give weights only for classes 0..{classes - 1}.")


def _validation_x(validation_data: tuple) -> Any:
    """The x of array-like validation data (None for a dataset or generator, which are not peeked)."""
    x = validation_data[0]
    return x if x is not None and data_adapter._is_array_like(x) else None


def check_before_training(model: Any, train_x: Any, class_weights: Optional[torch.Tensor], val_data: Optional[tuple]) -> None:
    """Checks made once the model is built and before the first step, so bad arguments fail before
    an epoch of training is spent: class_weight classes and the validation data's shapes."""
    if class_weights is not None and train_x is not None:
        _check_class_weight(model, class_weights, call_on_one_row(model, train_x, eval_mode(model)))
    val_x = _validation_x(val_data) if val_data is not None else None
    if val_x is not None:
        if data_adapter._num_rows(val_x) == 0:
            raise ValueError("fit(): validation_data has no samples; pass at least one row, or leave it out.")
        try:
            call_on_one_row(model, val_x, eval_mode(model))
        except (ValueError, RuntimeError, TypeError) as error:
            shapes = [tuple(leaf.shape[1:]) for leaf in flatten_structure(val_x) if hasattr(leaf, "shape")]
            raise ValueError(f"fit(): validation_data does not fit model '{model.name}' (its x has per-sample "
                             f"shape(s) {shapes}): {error} Give validation x with the same per-sample shape as "
                             f"the training x.") from error
