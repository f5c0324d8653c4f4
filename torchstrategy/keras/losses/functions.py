"""The per-sample Keras loss functions (`sparse_categorical_crossentropy`, `mean_squared_error`, ...) and
their aliases, with Keras numerics: epsilon clipping of probabilities and stable log-softmax/logits paths."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy.keras import backend
from torchstrategy.keras.losses._checks import (
    align_ranks, cached_logits, check_batch, check_categorical_labels, check_same_shape, check_sparse_labels,
    as_predictions, regression_inputs, targets_like,
)


def _sparse_ce(y_true: Any, y_pred: Any, from_logits: bool, axis: int, ignore_class: Optional[int]):
    y_pred, from_logits = cached_logits(y_pred, from_logits)
    y_pred = as_predictions(y_pred)
    labels = backend.to_tensor(y_true)
    check_batch(labels, y_pred, "sparse_categorical_crossentropy")
    check_sparse_labels(labels, y_pred, axis, ignore_class)
    y_pred = y_pred.movedim(axis, -1)
    labels = labels.to(y_pred.device, non_blocking=True).to(torch.int64).reshape(y_pred.shape[:-1])
    if not from_logits:  # Keras 2: log of the clipped probabilities, then a softmax cross-entropy on them
        eps = backend.epsilon()
        y_pred = torch.log(y_pred.clamp(eps, 1.0 - eps))
    log_probs = F.log_softmax(y_pred, dim=-1)
    valid = None
    if ignore_class is not None:
        valid = labels != ignore_class
        labels = torch.where(valid, labels, torch.zeros_like(labels))
    losses = -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    if valid is not None:
        losses = torch.where(valid, losses, torch.zeros_like(losses))
    return losses, valid


def sparse_categorical_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, ignore_class: Optional[int] = None, axis: int = -1
) -> torch.Tensor:
    """Per-sample cross-entropy of integer labels (shape y_pred.shape[:-1], or with a trailing 1).

    >>> sparse_categorical_crossentropy([1, 2], [[0.05, 0.95, 0.], [0.1, 0.8, 0.1]])  # ~[0.0513, 2.3026]
    tensor([0.0513, 2.3026])
    """
    return _sparse_ce(y_true, y_pred, from_logits, axis, ignore_class)[0]


def categorical_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1
) -> torch.Tensor:
    """Per-sample cross-entropy of one-hot (or soft) labels with the same shape as y_pred."""
    y_pred, from_logits = cached_logits(y_pred, from_logits)
    y_pred = as_predictions(y_pred)
    y_true = targets_like(y_true, y_pred)
    check_batch(y_true, y_pred, "categorical_crossentropy")
    check_categorical_labels(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_true.shape[axis]
    if from_logits:
        return -(y_true * F.log_softmax(y_pred, dim=axis)).sum(dim=axis)
    eps = backend.epsilon()
    y_pred = (y_pred / y_pred.sum(dim=axis, keepdim=True)).clamp(eps, 1.0 - eps)
    return -(y_true * torch.log(y_pred)).sum(dim=axis)


def binary_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1
) -> torch.Tensor:
    """Per-sample binary cross-entropy, averaged over `axis` (Keras clips then uses log(p + eps))."""
    y_pred, from_logits = cached_logits(y_pred, from_logits)
    y_pred = as_predictions(y_pred)
    y_true = targets_like(y_true, y_pred)
    check_batch(y_true, y_pred, "binary_crossentropy")
    y_true, y_pred = align_ranks(y_true, y_pred)
    check_same_shape(y_true, y_pred, "binary_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        elementwise = F.binary_cross_entropy_with_logits(y_pred, y_true, reduction="none")
    else:
        eps = backend.epsilon()
        y_pred = y_pred.clamp(eps, 1.0 - eps)
        elementwise = -(y_true * torch.log(y_pred + eps) + (1.0 - y_true) * torch.log(1.0 - y_pred + eps))
    return elementwise.mean(dim=axis)


def mean_squared_error(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Mean over the last axis of (y_true - y_pred)^2."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "mean_squared_error")
    return (y_pred - y_true).square().mean(dim=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Mean over the last axis of |y_true - y_pred|."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "mean_absolute_error")
    return (y_pred - y_true).abs().mean(dim=-1)


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> torch.Tensor:
    """100 * mean over the last axis of |y_true - y_pred| / max(|y_true|, epsilon)."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "mean_absolute_percentage_error")
    diff = ((y_true - y_pred) / y_true.abs().clamp_min(backend.epsilon())).abs()
    return 100.0 * diff.mean(dim=-1)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Mean over the last axis of (log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1))^2."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "mean_squared_logarithmic_error")
    eps = backend.epsilon()
    return (torch.log1p(y_pred.clamp_min(eps)) - torch.log1p(y_true.clamp_min(eps))).square().mean(dim=-1)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> torch.Tensor:
    """Mean over the last axis of the Huber loss: quadratic for |error| <= delta, linear beyond."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "huber")
    error = (y_pred - y_true).abs()
    return torch.where(error <= delta, 0.5 * error.square(), delta * error - 0.5 * delta**2).mean(dim=-1)


def kl_divergence(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Sum over the last axis of y_true * log(y_true / y_pred), both clipped to [epsilon, 1]."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "kl_divergence")
    eps = backend.epsilon()
    y_true, y_pred = y_true.clamp(eps, 1.0), y_pred.clamp(eps, 1.0)
    return (y_true * torch.log(y_true / y_pred)).sum(dim=-1)


def hinge(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Mean over the last axis of max(1 - y_true * y_pred, 0); 0/1 labels are mapped to -1/1 first."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "hinge")
    is_binary = torch.all((y_true == 0) | (y_true == 1))  # stays a tensor: no host sync
    y_true = torch.where(is_binary, 2.0 * y_true - 1.0, y_true)
    return (1.0 - y_true * y_pred).clamp_min(0.0).mean(dim=-1)


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> torch.Tensor:
    """Negative cosine similarity along `axis` (-1 means identical directions), as the Keras loss."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "cosine_similarity")
    y_true = F.normalize(y_true, dim=axis, eps=1e-6)  # Keras: x / sqrt(max(sum(x^2), 1e-12))
    y_pred = F.normalize(y_pred, dim=axis, eps=1e-6)
    return -(y_true * y_pred).sum(dim=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
