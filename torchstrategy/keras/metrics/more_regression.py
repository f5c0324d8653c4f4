"""Keras 3's further mean-of-function metrics (Hinge, SquaredHinge, CategoricalHinge, Poisson, LogCoshError,
Pearson and concordance correlation) and `R2Score`, whose sum/count states replicas add up."""
from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.losses import functions as loss_functions
from torchstrategy.keras.losses import more_functions
from torchstrategy.keras.losses._checks import align_ranks, as_predictions, targets_like
from torchstrategy.keras.metrics.base import MeanMetricWrapper, Metric, _device_of


def pearson_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> torch.Tensor:
    """Pearson correlation of y_true and y_pred along `axis` (population standard deviations)."""
    y_pred = as_predictions(y_pred)
    y_true, y_pred = align_ranks(targets_like(y_true, y_pred), y_pred)
    t = y_true - y_true.mean(dim=axis, keepdim=True)
    p = y_pred - y_pred.mean(dim=axis, keepdim=True)
    t = t / t.std(dim=axis, keepdim=True, unbiased=False)
    p = p / p.std(dim=axis, keepdim=True, unbiased=False)
    return (t * p).mean(dim=axis)


def concordance_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> torch.Tensor:
    """Lin's concordance correlation along `axis`, with Keras's terms: mean(2 * (y_true - mean(y_pred)) *
    (y_pred - mean(y_pred)) / (var(y_true) + var(y_pred) + (mean(y_true) - mean(y_pred))^2 + epsilon))."""
    y_pred = as_predictions(y_pred)
    y_true, y_pred = align_ranks(targets_like(y_true, y_pred), y_pred)
    true_mean = y_true.mean(dim=axis, keepdim=True)
    pred_mean = y_pred.mean(dim=axis, keepdim=True)
    true_var = (y_true - true_mean).var(dim=axis, keepdim=True, unbiased=False)
    pred_var = (y_pred - pred_mean).var(dim=axis, keepdim=True, unbiased=False)
    covar = (y_true - pred_mean) * (y_pred - pred_mean)
    norm = true_var + pred_var + (true_mean - pred_mean).square()
    return (2.0 * covar / (norm + backend.epsilon())).mean(dim=axis)


class Hinge(MeanMetricWrapper):
    """Mean of the hinge loss."""

    def __init__(self, name: str = "hinge", dtype: Any = None) -> None:
        super().__init__(loss_functions.hinge, name=name, dtype=dtype)


class SquaredHinge(MeanMetricWrapper):
    """Mean of the squared hinge loss."""

    def __init__(self, name: str = "squared_hinge", dtype: Any = None) -> None:
        super().__init__(more_functions.squared_hinge, name=name, dtype=dtype)


class CategoricalHinge(MeanMetricWrapper):
    """Mean of the categorical hinge loss."""

    def __init__(self, name: str = "categorical_hinge", dtype: Any = None) -> None:
        super().__init__(more_functions.categorical_hinge, name=name, dtype=dtype)


class Poisson(MeanMetricWrapper):
    """Mean of the Poisson loss."""

    def __init__(self, name: str = "poisson", dtype: Any = None) -> None:
        super().__init__(more_functions.poisson, name=name, dtype=dtype)


class LogCoshError(MeanMetricWrapper):
    """Mean of log(cosh(prediction error))."""

    def __init__(self, name: str = "logcosh", dtype: Any = None) -> None:
        super().__init__(more_functions.log_cosh, name=name, dtype=dtype)


class PearsonCorrelation(MeanMetricWrapper):
    """Mean over batches' samples of the Pearson correlation along `axis`."""

    def __init__(self, name: str = "pearson_correlation", dtype: Any = None, axis: int = -1) -> None:
        super().__init__(pearson_correlation, name=name, dtype=dtype, axis=axis)


class ConcordanceCorrelation(MeanMetricWrapper):
    """Mean over batches' samples of the concordance correlation along `axis`."""

    def __init__(self, name: str = "concordance_correlation", dtype: Any = None, axis: int = -1) -> None:
        super().__init__(concordance_correlation, name=name, dtype=dtype, axis=axis)


class R2Score(Metric):
    """Coefficient of determination over all batches seen, per output column then aggregated.

    `class_aggregation`: 'uniform_average' (mean of columns), 'variance_weighted_average', or None (per column);
    `num_regressors` > 0 gives the adjusted R2. The states (sums per column) are built on the first batch.
    """

    _STATES = ("squared_sum", "sum", "residual", "count")

    def __init__(self, class_aggregation: Optional[str] = "uniform_average", num_regressors: int = 0,
                 name: str = "r2_score", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        valid = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in valid:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of {valid}. "
                             f"Received: class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError("Invalid value for argument `num_regressors`. Expected a value >= 0. "
                             f"Received: num_regressors={num_regressors}")
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self._built = False

    def _build(self, columns: int) -> None:
        self.add_weight("num_samples")
        for state in self._STATES:
            self.add_weight(state, (columns,))
        self._built = True

    def _build_like(self, shapes: Sequence[tuple]) -> None:
        """Builds the column states from another replica's state shapes (a replica that saw no batch)."""
        if not self._built:
            self._build(int(shapes[1][0]))  # shapes: num_samples (), then (columns,) each

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(y_pred, y_true))
        y_pred = backend.to_tensor(y_pred).detach().to(device=device, dtype=self._dtype)
        y_true = backend.to_tensor(y_true).detach().to(device=device, dtype=self._dtype)
        y_true, y_pred = align_ranks(y_true, y_pred)
        if y_pred.ndim != 2 or y_true.ndim != 2:
            raise ValueError("R2Score expects 2D inputs with shape (batch_size, output_dim). Received input shapes: "
                             f"y_pred.shape={tuple(y_pred.shape)} and y_true.shape={tuple(y_true.shape)}.")
        if not self._built:
            self._build(y_pred.shape[-1])
        weights = torch.ones((), dtype=self._dtype, device=device) if sample_weight is None else \
            backend.to_tensor(sample_weight).to(device=device, dtype=self._dtype)
        if weights.ndim == 1:
            weights = weights.unsqueeze(1)
        weights = torch.broadcast_to(weights, y_true.shape)
        weighted = y_true * weights
        self.sum.add_(weighted.sum(dim=0))
        self.squared_sum.add_((y_true * weighted).sum(dim=0))
        self.residual.add_(((y_true - y_pred).square() * weights).sum(dim=0))
        self.count.add_(weights.sum(dim=0))
        self.num_samples.add_(y_true.numel())

    def result(self) -> torch.Tensor:
        if not self._built:
            return torch.zeros((), dtype=self._dtype)
        mean = self.sum / self.count
        total = self.squared_sum - self.sum * mean
        raw = 1.0 - self.residual / total
        raw = torch.where(torch.isinf(raw), torch.zeros_like(raw), raw)
        if self.class_aggregation == "uniform_average":
            score = raw.mean()
        elif self.class_aggregation == "variance_weighted_average":
            score = (total * raw).sum() / total.sum()
        else:
            score = raw
        if self.num_regressors:
            n, p = float(self.num_samples), float(self.num_regressors)
            if p > n - 1:
                warnings.warn("More independent predictors than datapoints in adjusted R2 score. Falling back "
                              "to standard R2 score.", stacklevel=2)
            elif p == n - 1:
                warnings.warn("Division by zero in Adjusted R2 score. Falling back to standard R2 score.",
                              stacklevel=2)
            else:
                score = 1.0 - (1.0 - score) * (n - 1.0) / (n - p - 1.0)
        return score

    def get_config(self) -> dict:
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
