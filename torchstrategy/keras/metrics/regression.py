"""Regression and probabilistic metrics: means of the per-sample loss functions (MSE, MAE, MAPE, MSLE,
cosine similarity, the cross-entropies, KL divergence) and RootMeanSquaredError."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.losses import _checks
from torchstrategy.keras.losses import functions as loss_functions
from torchstrategy.keras.metrics.base import Mean, MeanMetricWrapper, _device_of


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> torch.Tensor:
    """Cosine similarity along `axis` (1 means identical directions); the metric, not the loss."""
    return -loss_functions.cosine_similarity(y_true, y_pred, axis=axis)


class MeanSquaredError(MeanMetricWrapper):
    """Mean of squared errors."""

    _fusable = True  # MeanMetricWrapper._fusable

    def __init__(self, name: str = "mean_squared_error", dtype: Any = None) -> None:
        super().__init__(loss_functions.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """Mean of absolute errors."""

    _fusable = True  # MeanMetricWrapper._fusable

    def __init__(self, name: str = "mean_absolute_error", dtype: Any = None) -> None:
        super().__init__(loss_functions.mean_absolute_error, name=name, dtype=dtype)


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """Mean of 100 * |error| / max(|y_true|, epsilon)."""

    def __init__(self, name: str = "mean_absolute_percentage_error", dtype: Any = None) -> None:
        super().__init__(loss_functions.mean_absolute_percentage_error, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """Mean of squared log(1 + x) differences."""

    def __init__(self, name: str = "mean_squared_logarithmic_error", dtype: Any = None) -> None:
        super().__init__(loss_functions.mean_squared_logarithmic_error, name=name, dtype=dtype)


class CosineSimilarity(MeanMetricWrapper):
    """Mean cosine similarity between labels and predictions along `axis`."""

    def __init__(self, name: str = "cosine_similarity", dtype: Any = None, axis: int = -1) -> None:
        super().__init__(cosine_similarity, name=name, dtype=dtype, axis=axis)


class RootMeanSquaredError(Mean):
    """sqrt of the (weighted) mean of elementwise squared errors."""

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        self._follow_device(_device_of(y_pred, y_true))
        y_true, y_pred = _checks.regression_inputs(y_true, y_pred, "root_mean_squared_error")
        squared = (y_pred.detach().to(self._dtype) - y_true.to(self._dtype)).square()
        super().update_state(squared, sample_weight=sample_weight)

    def result(self) -> torch.Tensor:
        return torch.sqrt(super().result())


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """Mean sparse categorical cross-entropy; labels equal to `ignore_class` are left out of the mean."""

    def __init__(self, name: str = "sparse_categorical_crossentropy", dtype: Any = None, from_logits: bool = False,
                 ignore_class: Optional[int] = None, axis: int = -1) -> None:
        super().__init__(loss_functions.sparse_categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, axis=axis, ignore_class=ignore_class)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = self._inputs(y_true, y_pred)
        kwargs = self._fn_kwargs
        values, valid = loss_functions._sparse_ce(y_true, y_pred, kwargs["from_logits"], kwargs["axis"],
                                                  kwargs["ignore_class"])
        if valid is not None:  # ignored positions get weight 0, so they leave the mean entirely
            mask = valid.to(values.dtype)
            sample_weight = mask if sample_weight is None else _weights_times(sample_weight, mask)
        Mean.update_state(self, values, sample_weight=sample_weight)


def _weights_times(sample_weight: Any, mask: torch.Tensor) -> torch.Tensor:
    weights = backend.to_tensor(sample_weight).to(device=mask.device, dtype=mask.dtype)
    while weights.ndim < mask.ndim:
        weights = weights.unsqueeze(-1)
    return weights * mask


class CategoricalCrossentropy(MeanMetricWrapper):
    """Mean categorical cross-entropy of one-hot labels."""

    _fusable = True  # MeanMetricWrapper._fusable

    def __init__(self, name: str = "categorical_crossentropy", dtype: Any = None, from_logits: bool = False,
                 label_smoothing: float = 0, axis: int = -1) -> None:
        super().__init__(loss_functions.categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class BinaryCrossentropy(MeanMetricWrapper):
    """Mean binary cross-entropy."""

    def __init__(self, name: str = "binary_crossentropy", dtype: Any = None, from_logits: bool = False,
                 label_smoothing: float = 0) -> None:
        super().__init__(loss_functions.binary_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class KLDivergence(MeanMetricWrapper):
    """Mean Kullback-Leibler divergence."""

    def __init__(self, name: str = "kl_divergence", dtype: Any = None) -> None:
        super().__init__(loss_functions.kl_divergence, name=name, dtype=dtype)

