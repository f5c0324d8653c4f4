"""Accuracy metrics: the per-sample match functions (`sparse_categorical_accuracy`, `binary_accuracy`,
top-k, ...) with Keras's label handling, and the metric classes that average them."""
from __future__ import annotations

from typing import Any

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.losses import _checks
from torchstrategy.keras.metrics.base import MeanMetricWrapper


def _pair(y_true: Any, y_pred: Any) -> tuple[torch.Tensor, torch.Tensor]:
    y_pred = backend.to_tensor(y_pred)
    return backend.to_tensor(y_true).to(y_pred.device, non_blocking=True), y_pred


def _float_matches(matches: torch.Tensor) -> torch.Tensor:
    return matches.to(backend.to_torch_dtype(backend.floatx()))


def _sparse_labels(y_true: torch.Tensor, y_pred: torch.Tensor, fn_name: str) -> torch.Tensor:
    """Labels of shape y_pred.shape[:-1] (a trailing 1 is dropped), checked but not value-checked."""
    _checks.check_batch(y_true, y_pred, fn_name)
    _checks.check_sparse_labels(y_true, y_pred, fn_name=fn_name, check_values=False)
    return y_true.reshape(y_pred.shape[:-1])


def _in_top_k(y_pred: torch.Tensor, labels: torch.Tensor, k: int) -> torch.Tensor:
    """tf.math.in_top_k: the label's score is beaten by fewer than k scores (ties count as in)."""
    index = labels.to(torch.int64).clamp(0, y_pred.shape[-1] - 1).unsqueeze(-1)
    target = y_pred.gather(-1, index)
    in_top = (y_pred > target).sum(dim=-1) < k
    valid = torch.isfinite(y_pred).all(dim=-1) & (labels >= 0) & (labels < y_pred.shape[-1])
    return in_top & valid


def accuracy(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Elementwise 1.0 where y_pred equals y_true (y_pred cast to y_true's dtype first)."""
    y_true, y_pred = _pair(y_true, y_pred)
    _checks.check_batch(y_true, y_pred, "accuracy")
    y_true, y_pred = _checks.align_ranks(y_true, y_pred)
    _checks.check_same_shape(y_true, y_pred, "accuracy")
    return _float_matches(y_true == y_pred.to(y_true.dtype))


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> torch.Tensor:
    """Mean over the last axis of (y_true == (y_pred > threshold))."""
    y_true, y_pred = _pair(y_true, y_pred)
    _checks.check_batch(y_true, y_pred, "binary_accuracy")
    y_true, y_pred = _checks.align_ranks(y_true, y_pred)
    _checks.check_same_shape(y_true, y_pred, "binary_accuracy")
    predicted = (y_pred > threshold).to(y_pred.dtype)
    return _float_matches(y_true.to(y_pred.dtype) == predicted).mean(dim=-1)


def categorical_accuracy(y_true: Any, y_pred: Any) -> torch.Tensor:
    """1.0 where argmax(y_true) == argmax(y_pred) (one-hot labels)."""
    y_true, y_pred = _pair(y_true, y_pred)
    _checks.check_batch(y_true, y_pred, "categorical_accuracy")
    if y_true.shape != y_pred.shape:
        _checks.check_categorical_labels(y_true, y_pred, fn_name="categorical_accuracy")
    return _float_matches(y_true.argmax(dim=-1) == y_pred.argmax(dim=-1))


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> torch.Tensor:
    """1.0 where the integer label equals argmax(y_pred); labels may be (N,) or (N, 1)."""
    y_true, y_pred = _pair(y_true, y_pred)
    labels = _sparse_labels(y_true, y_pred, "sparse_categorical_accuracy")
    predicted = y_pred.argmax(dim=-1)
    if labels.is_floating_point():  # Keras casts the argmax to the labels' dtype
        return _float_matches(labels == predicted.to(labels.dtype))
    return _float_matches(labels.to(torch.int64) == predicted)


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> torch.Tensor:
    """1.0 where the one-hot label's class is among the k highest scores."""
    y_true, y_pred = _pair(y_true, y_pred)
    _checks.check_batch(y_true, y_pred, "top_k_categorical_accuracy")
    if y_true.shape != y_pred.shape:
        _checks.check_categorical_labels(y_true, y_pred, fn_name="top_k_categorical_accuracy")
    return _float_matches(_in_top_k(y_pred, y_true.argmax(dim=-1), k))


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5, from_sorted_ids: bool = False
                                      ) -> torch.Tensor:
    """1.0 where the integer label is among the k highest scores (with `from_sorted_ids`, y_pred holds class
    ids sorted best first, and the label must be among its first k)."""
    if from_sorted_ids:
        ids = torch.as_tensor(y_pred)
        labels = torch.as_tensor(y_true).reshape(ids.shape[:-1]).to(ids.dtype)
        return (ids[..., :k] == labels.unsqueeze(-1)).any(-1).to(torch.float32)
    y_true, y_pred = _pair(y_true, y_pred)
    labels = _sparse_labels(y_true, y_pred, "sparse_top_k_categorical_accuracy")
    return _float_matches(_in_top_k(y_pred, labels, k))


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels exactly (elementwise)."""

    def __init__(self, name: str = "accuracy", dtype: Any = None) -> None:
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often (y_pred > threshold) equals the 0/1 label."""

    def __init__(self, name: str = "binary_accuracy", dtype: Any = None, threshold: float = 0.5) -> None:
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) matches the one-hot label."""

    def __init__(self, name: str = "categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) matches the integer label.

    >>> SparseCategoricalAccuracy()([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
    tensor(0.5000)
    """

    def __init__(self, name: str = "sparse_categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's class is among the top `k` predictions."""

    def __init__(self, k: int = 5, name: str = "top_k_categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the top `k` predictions."""

    def __init__(self, k: int = 5, name: str = "sparse_top_k_categorical_accuracy", dtype: Any = None,
                 from_sorted_ids: bool = False) -> None:
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k,
                         **({"from_sorted_ids": True} if from_sorted_ids else {}))
