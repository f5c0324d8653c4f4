"""Confusion-matrix metrics: Precision, Recall and AUC, accumulating weighted true/false positive and
negative counts per threshold exactly as Keras's `update_confusion_matrix_variables` does."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np
import torch

from torchstrategy.keras import backend
from torchstrategy.keras.losses import _checks
from torchstrategy.keras.metrics.base import Metric, _device_of, _divide_no_nan

NEG_INF = -1e10  # Keras's stand-in for -inf (top_k filtering, default threshold with top_k)


def _filter_top_k(y_pred: torch.Tensor, k: int) -> torch.Tensor:
    keep = torch.zeros_like(y_pred, dtype=torch.bool).scatter_(-1, y_pred.topk(k, dim=-1).indices, True)
    return torch.where(keep, y_pred, torch.full_like(y_pred, NEG_INF))


def _is_evenly_distributed(thresholds: Sequence[float]) -> bool:
    count = len(thresholds)
    if count < 3:
        return False
    even = np.arange(count, dtype=np.float32) / (count - 1)
    return bool(np.allclose(thresholds, even, atol=backend.epsilon()))


def _confusion_counts(
    y_true: Any, y_pred: Any, sample_weight: Any, thresholds: torch.Tensor, fn_name: str, *,
    top_k: Optional[int] = None,
    class_id: Optional[int] = None, multi_label: bool = False, label_weights: Optional[torch.Tensor] = None,
    evenly: bool = False,
) -> dict[str, torch.Tensor]:
    """Weighted tp/fp/tn/fn per threshold ((T,), or (T, labels) when multi_label); a prediction is
    positive when strictly above the threshold, a label when nonzero."""
    y_pred = backend.to_tensor(y_pred).detach().to(thresholds.dtype)
    y_true = backend.to_tensor(y_true).detach().to(y_pred.device, non_blocking=True)
    _checks.check_batch(y_true, y_pred, fn_name)
    y_true, y_pred = _checks.align_ranks(y_true, y_pred)
    _checks.check_same_shape(y_true, y_pred, fn_name)
    weights = torch.ones_like(y_pred)
    if sample_weight is not None:
        weights = backend.to_tensor(sample_weight).to(device=y_pred.device, dtype=y_pred.dtype)
        if weights.ndim == y_pred.ndim + 1 and weights.shape[-1] == 1:
            weights = weights.squeeze(-1)
        while 0 < weights.ndim < y_pred.ndim:
            weights = weights.unsqueeze(-1)
        try:
            weights = torch.broadcast_to(weights, y_pred.shape)
        except RuntimeError:
            raise ValueError(f"{fn_name}: sample_weight of shape {tuple(weights.shape)} does not fit predictions "
                             f"of shape {tuple(y_pred.shape)}; pass one weight per sample.") from None
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        y_true, y_pred, weights = y_true[..., class_id], y_pred[..., class_id], weights[..., class_id]
    if label_weights is not None and not multi_label:
        weights = weights * label_weights.to(weights.device)
    columns = y_pred.shape[-1] if multi_label else 1
    preds = y_pred.reshape(-1, columns)
    positive = (y_true != 0).reshape(-1, columns)
    weights = weights.reshape(-1, columns)
    pos_weight, neg_weight = weights * positive, weights * ~positive
    if evenly:  # bucket each prediction once instead of comparing it with every threshold
        count = thresholds.numel()
        bucket = (torch.ceil(torch.nan_to_num(preds) * (count - 1)) - 1).clamp(0, count - 1).to(torch.int64)
        flat = (bucket * columns + torch.arange(columns, device=preds.device)).reshape(-1)
        tp, fp = (torch.zeros(count * columns, dtype=preds.dtype, device=preds.device)
                  .index_add_(0, flat, w.reshape(-1)).reshape(count, columns).flip(0).cumsum(0).flip(0)
                  for w in (pos_weight, neg_weight))
    else:
        above = (preds.unsqueeze(0) > thresholds.view(-1, 1, 1)).to(preds.dtype)
        tp, fp = (above * pos_weight).sum(1), (above * neg_weight).sum(1)
    counts = {"tp": tp, "fp": fp, "fn": pos_weight.sum(0) - tp, "tn": neg_weight.sum(0) - fp}
    return counts if multi_label else {key: value.squeeze(-1) for key, value in counts.items()}


class _ThresholdMetric(Metric):
    """Shared by Precision and Recall: thresholds, top_k, class_id and two count states."""

    _states: tuple[str, str] = ("true_positives", "false_positives")

    def __init__(self, thresholds: Union[float, Sequence[float], None], top_k: Optional[int],
                 class_id: Optional[int], name: Optional[str], dtype: Any) -> None:
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        if thresholds is None:
            values = [0.5 if top_k is None else NEG_INF]
        else:
            values = [float(t) for t in (thresholds if isinstance(thresholds, (list, tuple)) else [thresholds])]
            if any(not 0.0 <= t <= 1.0 for t in values):
                raise ValueError(f"{type(self).__name__}: threshold values must be in [0, 1]; got {thresholds}.")
        self.thresholds = values
        self._threshold_tensor = torch.tensor(values, dtype=self._dtype)
        for state in self._states:
            self.add_weight(name=state, shape=(len(values),))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(y_pred, y_true))
        if self._threshold_tensor.device != device:
            self._threshold_tensor = self._threshold_tensor.to(device)
        counts = _confusion_counts(y_true, y_pred, sample_weight, self._threshold_tensor, self.name,
                                   top_k=self.top_k, class_id=self.class_id)
        for state in self._states:
            getattr(self, state).add_(counts[_KEYS[state]])

    def _ratio(self, positives: torch.Tensor, others: torch.Tensor) -> torch.Tensor:
        value = _divide_no_nan(positives, positives + others)
        return value[0] if len(self.thresholds) == 1 else value

    def get_config(self) -> dict:
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


_KEYS = {"true_positives": "tp", "false_positives": "fp", "true_negatives": "tn", "false_negatives": "fn"}


class Precision(_ThresholdMetric):
    """tp / (tp + fp) with predictions above `thresholds` (default 0.5) counted positive.

    >>> Precision()([0, 1, 1, 1], [1, 0, 1, 1])
    tensor(0.6667)
    """

    def __init__(self, thresholds: Union[float, Sequence[float], None] = None, top_k: Optional[int] = None,
                 class_id: Optional[int] = None, name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(thresholds, top_k, class_id, name, dtype)

    def result(self) -> torch.Tensor:
        return self._ratio(self.true_positives, self.false_positives)


class Recall(_ThresholdMetric):
    """tp / (tp + fn) with predictions above `thresholds` (default 0.5) counted positive."""

    _states = ("true_positives", "false_negatives")

    def __init__(self, thresholds: Union[float, Sequence[float], None] = None, top_k: Optional[int] = None,
                 class_id: Optional[int] = None, name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(thresholds, top_k, class_id, name, dtype)

    def result(self) -> torch.Tensor:
        return self._ratio(self.true_positives, self.false_negatives)


class AUC(Metric):
    """Area under the ROC or PR curve, approximated over `num_thresholds` thresholds (Keras's method:
    trapezoids for ROC, Davis & Goadrich interpolation for PR)."""

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC", summation_method: str = "interpolation",
                 name: Optional[str] = None, dtype: Any = None, thresholds: Optional[Sequence[float]] = None,
                 multi_label: bool = False, num_labels: Optional[int] = None,
                 label_weights: Optional[Sequence[float]] = None, from_logits: bool = False) -> None:
        super().__init__(name=name, dtype=dtype)
        self.curve, self.summation_method = str(curve).upper(), str(summation_method).lower()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f"Invalid AUC curve {curve!r}. Expected 'ROC' or 'PR'.")
        if self.summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f"Invalid AUC summation_method {summation_method!r}. "
                             "Expected 'interpolation', 'minoring' or 'majoring'.")
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            self._evenly = _is_evenly_distributed([0.0] + inner + [1.0])
        else:
            if num_thresholds <= 1:
                raise ValueError(f"AUC num_thresholds must be an integer > 1; got {num_thresholds}.")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._evenly = True
        eps = backend.epsilon()
        self.thresholds = [0.0 - eps] + inner + [1.0 + eps]
        self.num_thresholds = len(self.thresholds)
        self._threshold_tensor = torch.tensor(self.thresholds, dtype=self._dtype)
        self.multi_label, self.num_labels, self._from_logits = multi_label, num_labels, from_logits
        self.label_weights = None if label_weights is None else torch.tensor(label_weights, dtype=self._dtype)
        if num_labels and not multi_label:
            raise ValueError("AUC: `num_labels` is only used with multi_label=True.")
        self._built = False
        if not multi_label or num_labels:
            self._build(num_labels)

    def _build(self, num_labels: Optional[int]) -> None:
        shape = (self.num_thresholds, num_labels) if self.multi_label else (self.num_thresholds,)
        for state in ("true_positives", "false_positives", "true_negatives", "false_negatives"):
            self.add_weight(name=state, shape=shape)
        self._built = True

    def _build_like(self, shapes: Sequence[tuple]) -> None:
        """Builds the lazily made multi-label state from another replica's state shapes, so that a
        replica that saw no batch still has states to sum with the others."""
        if not self._built:
            self._build(int(shapes[0][1]))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(y_pred, y_true))
        y_pred = backend.to_tensor(y_pred)
        if not self._built:
            if y_pred.ndim != 2:
                raise ValueError(f"AUC with multi_label=True needs y_pred of rank 2 (batch, labels); "
                                 f"got shape {tuple(y_pred.shape)}.")
            self._build(y_pred.shape[1])
        if self._threshold_tensor.device != device:
            self._threshold_tensor = self._threshold_tensor.to(device)
        if self._from_logits:
            y_pred = torch.sigmoid(y_pred.to(self._dtype))
        counts = _confusion_counts(y_true, y_pred, sample_weight, self._threshold_tensor, self.name,
                                   multi_label=self.multi_label, evenly=self._evenly,
                                   label_weights=None if self.multi_label else self.label_weights)
        for state, key in _KEYS.items():
            getattr(self, state).add_(counts[key])

    def _interpolate_pr_auc(self) -> torch.Tensor:
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        dtp = tp[:-1] - tp[1:]
        predicted = tp + fp
        dp = predicted[:-1] - predicted[1:]
        slope = _divide_no_nan(dtp, dp.clamp_min(0))
        intercept = tp[1:] - slope * predicted[1:]
        both_positive = (predicted[:-1] > 0) & (predicted[1:] > 0)
        ratio = torch.where(both_positive, _divide_no_nan(predicted[:-1], predicted[1:].clamp_min(0)),
                            torch.ones_like(predicted[1:]))
        return _divide_no_nan(slope * (dtp + intercept * torch.log(ratio)), (tp[1:] + fn[1:]).clamp_min(0))

    def result(self) -> torch.Tensor:
        if not self._built:
            return torch.zeros((), dtype=self._dtype)
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        if self.curve == "PR" and self.summation_method == "interpolation":
            terms = self._interpolate_pr_auc()
        else:
            recall = _divide_no_nan(tp, tp + fn)
            if self.curve == "ROC":
                x, y = _divide_no_nan(fp, fp + tn), recall
            else:
                x, y = recall, _divide_no_nan(tp, tp + fp)
            if self.summation_method == "interpolation":
                heights = (y[:-1] + y[1:]) / 2.0
            elif self.summation_method == "minoring":
                heights = torch.minimum(y[:-1], y[1:])
            else:
                heights = torch.maximum(y[:-1], y[1:])
            terms = (x[:-1] - x[1:]) * heights
        if not self.multi_label:
            return terms.sum()
        per_label = terms.sum(dim=0)
        if self.label_weights is None:
            return per_label.mean()
        label_weights = self.label_weights.to(per_label.device)
        return _divide_no_nan((per_label * label_weights).sum(), label_weights.sum())

    def reset_state(self) -> None:
        if self._built:
            super().reset_state()

    def get_config(self) -> dict:
        config = {**super().get_config(), "num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels, "from_logits": self._from_logits,
                  "label_weights": None if self.label_weights is None else self.label_weights.tolist()}
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config
