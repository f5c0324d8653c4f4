"""Keras 3's further per-sample loss functions: focal cross-entropies, squared/categorical hinge, Poisson,
log-cosh, Dice, Tversky, Circle, generalized cross-entropy and CTC, with Keras's formulas and epsilons."""
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from torchstrategy.keras import backend
from torchstrategy.keras.losses._checks import align_ranks, as_predictions, regression_inputs, targets_like


def _pair(y_true: Any, y_pred: Any) -> tuple[torch.Tensor, torch.Tensor]:
    y_pred = as_predictions(y_pred)
    return targets_like(y_true, y_pred), y_pred


def _hinge_labels(y_true: torch.Tensor) -> torch.Tensor:
    is_binary = torch.all((y_true == 0) | (y_true == 1))  # a tensor: no host sync
    return torch.where(is_binary, 2.0 * y_true - 1.0, y_true)


def squared_hinge(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Mean over the last axis of max(1 - y_true * y_pred, 0)^2; 0/1 labels are mapped to -1/1 first."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "squared_hinge")
    return (1.0 - _hinge_labels(y_true) * y_pred).clamp_min(0.0).square().mean(dim=-1)


def categorical_hinge(y_true: Any, y_pred: Any) -> torch.Tensor:
    """max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    pos = (y_true * y_pred).sum(dim=-1)
    neg = ((1.0 - y_true) * y_pred).amax(dim=-1)
    return (neg - pos + 1.0).clamp_min(0.0)


def poisson(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Mean over the last axis of y_pred - y_true * log(y_pred + epsilon)."""
    y_true, y_pred = _pair(y_true, y_pred)
    return (y_pred - y_true * torch.log(y_pred + backend.epsilon())).mean(dim=-1)


def log_cosh(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Mean over the last axis of log(cosh(y_pred - y_true)), computed stably as x + softplus(-2x) - log 2."""
    y_true, y_pred = regression_inputs(y_true, y_pred, "log_cosh")
    x = y_pred - y_true
    return (x + F.softplus(-2.0 * x) - math.log(2.0)).mean(dim=-1)


def binary_focal_crossentropy(y_true: Any, y_pred: Any, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1) -> torch.Tensor:
    """Binary cross-entropy times (1 - p_t)^gamma (and alpha / 1 - alpha with class balancing), averaged on `axis`."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true, y_pred = align_ranks(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = torch.sigmoid(y_pred)
    eps = backend.epsilon()
    clipped = y_pred.clamp(eps, 1.0 - eps)
    bce = -(y_true * torch.log(clipped) + (1.0 - y_true) * torch.log(1.0 - clipped))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = (1.0 - p_t).pow(gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return focal.mean(dim=axis)


def categorical_focal_crossentropy(y_true: Any, y_pred: Any, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, label_smoothing: float = 0.0,
                                   axis: int = -1) -> torch.Tensor:
    """Sum over `axis` of alpha * (1 - p)^gamma * -y_true * log(p), p the renormalized, clipped probabilities."""
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_true.shape[-1]
    if from_logits:
        y_pred = torch.softmax(y_pred, dim=axis)
    eps = backend.epsilon()
    output = (y_pred / y_pred.sum(dim=axis, keepdim=True)).clamp(eps, 1.0 - eps)
    return (alpha * (1.0 - output).pow(gamma) * (-y_true * torch.log(output))).sum(dim=axis)


def categorical_generalized_cross_entropy(y_true: Any, y_pred: Any, q: float) -> torch.Tensor:
    """(1 - p^q) / q, p the predicted probability of the integer label y_true."""
    y_pred = as_predictions(y_pred)
    labels = backend.to_tensor(y_true).to(y_pred.device).to(torch.int64).reshape(y_pred.shape[:-1])
    p = y_pred.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return (1.0 - p.pow(q)) / q


def dice(y_true: Any, y_pred: Any, axis: Any = None) -> torch.Tensor:
    """1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + epsilon), summed over `axis` (all when None)."""
    y_true, y_pred = _pair(y_true, y_pred)
    dims = _dims(axis, y_pred)
    inter = (y_true * y_pred).sum(dim=dims)
    return 1.0 - 2.0 * inter / (y_true.sum(dim=dims) + y_pred.sum(dim=dims) + backend.epsilon())


def tversky(y_true: Any, y_pred: Any, alpha: float = 0.5, beta: float = 0.5, axis: Any = None) -> torch.Tensor:
    """1 - TP / (TP + alpha * FP + beta * FN + epsilon) with soft counts summed over `axis` (all when None)."""
    y_true, y_pred = _pair(y_true, y_pred)
    dims = _dims(axis, y_pred)
    inter = (y_true * y_pred).sum(dim=dims)
    fp = ((1.0 - y_pred) * y_true).sum(dim=dims)
    fn = (y_pred * (1.0 - y_true)).sum(dim=dims)
    return 1.0 - inter / (inter + fp * alpha + fn * beta + backend.epsilon())


def _dims(axis: Any, tensor: torch.Tensor) -> Any:
    if axis is None:
        return tuple(range(tensor.ndim))
    return tuple(axis) if isinstance(axis, (tuple, list)) else axis


def _circle_with_mask(y_true: Any, y_pred: Any, ref_labels: Any = None, ref_embeddings: Any = None,
                      remove_diagonal: bool = True, gamma: float = 80, margin: float = 0.4):
    y_pred = as_predictions(y_pred)
    labels = backend.to_tensor(y_true).to(y_pred.device).to(torch.int64)
    ref = y_pred if ref_embeddings is None else backend.to_tensor(ref_embeddings).to(y_pred)
    ref_labels = labels if ref_labels is None else backend.to_tensor(ref_labels).to(y_pred.device).to(torch.int64)
    distances = (1.0 - y_pred @ ref.T).clamp_min(0.0)
    positive = labels.reshape(-1, 1) == ref_labels.reshape(-1, 1).T
    negative = ~positive
    if remove_diagonal:
        positive = positive & ~torch.eye(positive.shape[0], positive.shape[1], dtype=torch.bool,
                                         device=positive.device)
    pos_weights = ((margin + distances) * positive).clamp_min(0.0)
    neg_weights = ((1.0 + margin - distances) * negative).clamp_min(0.0)
    pos_w = -gamma * pos_weights * (margin - distances)
    neg_w = gamma * neg_weights * (1.0 - margin - distances)
    minus_inf = torch.full_like(distances, float("-inf"))
    p_loss = torch.logsumexp(torch.where(positive, pos_w, minus_inf), dim=1)
    n_loss = torch.logsumexp(torch.where(negative, neg_w, minus_inf), dim=1)
    losses = F.softplus(p_loss + n_loss)
    return losses, losses > 0


def circle(y_true: Any, y_pred: Any, ref_labels: Any = None, ref_embeddings: Any = None, remove_diagonal: bool = True,
           gamma: float = 80, margin: float = 0.4) -> torch.Tensor:
    """Circle loss of L2-normalized embeddings `y_pred` with integer labels `y_true` (per sample).

    Samples with no positive or negative pair get 0; the `Circle` class leaves them out of the mean, as Keras.
    """
    return _circle_with_mask(y_true, y_pred, ref_labels, ref_embeddings, remove_diagonal, gamma, margin)[0]


def ctc(y_true: Any, y_pred: Any) -> torch.Tensor:
    """CTC loss of integer label rows `y_true` (batch, max_length; 0 is the blank/padding) against logits
    `y_pred` (batch, time, classes), one value per sample."""
    y_pred = as_predictions(y_pred)
    labels = backend.to_tensor(y_true).to(y_pred.device)
    if labels.ndim != 2:
        raise ValueError("Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` in "
                         f"integer format. Received: y_true.shape={tuple(labels.shape)}")
    if y_pred.ndim != 3:
        raise ValueError("Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, "
                         f"num_classes)`. Received: y_pred.shape={tuple(y_pred.shape)}")
    labels = labels.to(torch.int64)
    batch, steps = y_pred.shape[0], y_pred.shape[1]
    label_lengths = (labels != 0).sum(dim=-1)
    input_lengths = torch.full((batch,), steps, dtype=torch.int64, device=y_pred.device)
    log_probs = F.log_softmax(y_pred, dim=-1).transpose(0, 1)
    return F.ctc_loss(log_probs, labels, input_lengths, label_lengths, blank=0, reduction="none",
                      zero_infinity=False)

