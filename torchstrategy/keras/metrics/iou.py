"""Intersection-over-union metrics (IoU, MeanIoU, BinaryIoU, OneHotIoU, OneHotMeanIoU): one confusion matrix
accumulated over batches (int64 by default, as Keras), which replicas add up."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.metrics.base import Metric, _device_of


class IoU(Metric):
    """Mean over `target_class_ids` of tp / (tp + fp + fn), from the confusion matrix of all batches seen.

    Classes absent from both labels and predictions are left out of the mean.

    >>> m = IoU(num_classes=2, target_class_ids=[0]); m.update_state([0, 0, 1, 1], [0, 1, 0, 1]); float(m.result())
    0.3333333...
    """

    def __init__(self, num_classes: int, target_class_ids: Sequence[int], name: Optional[str] = None,
                 dtype: Any = None, ignore_class: Optional[int] = None, sparse_y_true: bool = True,
                 sparse_y_pred: bool = True, axis: int = -1) -> None:
        super().__init__(name=name, dtype=dtype or "int64")
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is "
                             f"[0, {num_classes}).")
        self.num_classes = num_classes
        self.target_class_ids = list(target_class_ids)
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self.add_weight("total_confusion_matrix", (num_classes, num_classes))

    def _predicted_classes(self, y_pred: torch.Tensor) -> torch.Tensor:
        return y_pred if self.sparse_y_pred else y_pred.argmax(dim=self.axis)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(y_pred, y_true))
        y_true = backend.to_tensor(y_true).detach().to(device)
        y_pred = backend.to_tensor(y_pred).detach().to(device)
        if not self.sparse_y_true:
            y_true = y_true.argmax(dim=self.axis)
        y_pred = self._predicted_classes(y_pred)
        y_true = y_true.to(self._dtype).reshape(-1)
        y_pred = y_pred.to(self._dtype).reshape(-1)
        weights = torch.ones((), dtype=self._dtype, device=device) if sample_weight is None else \
            backend.to_tensor(sample_weight).to(device=device).to(self._dtype).reshape(-1)
        weights = torch.broadcast_to(weights, y_true.shape)
        n = self.num_classes
        valid = (y_true >= 0) & (y_true < n) & (y_pred >= 0) & (y_pred < n)
        if self.ignore_class is not None:
            valid = valid & (y_true != self.ignore_class)
        weights = torch.where(valid, weights, torch.zeros_like(weights))
        rows = torch.where(valid, y_true, torch.zeros_like(y_true)).to(torch.int64)
        cols = torch.where(valid, y_pred, torch.zeros_like(y_pred)).to(torch.int64)
        flat = torch.zeros(n * n, dtype=self._dtype, device=device).index_add_(0, rows * n + cols, weights)
        self.total_confusion_matrix.add_(flat.reshape(n, n))

    def result(self) -> torch.Tensor:
        cm = self.total_confusion_matrix.to(torch.float32)
        true_positives = torch.diagonal(cm)
        denominator = cm.sum(dim=0) + cm.sum(dim=1) - true_positives
        ids = torch.tensor(self.target_class_ids, dtype=torch.int64, device=cm.device)
        true_positives, denominator = true_positives[ids], denominator[ids]
        valid = denominator > 1e-9
        iou = true_positives / (denominator + backend.epsilon())
        iou = torch.where(valid, iou, torch.zeros_like(iou))
        return iou.sum(dim=self.axis) / (valid.to(torch.float32).sum() + backend.epsilon())

    def get_config(self) -> dict:
        return {**super().get_config(), "num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class BinaryIoU(IoU):
    """IoU of classes 0 and/or 1 after thresholding predictions (>= `threshold` is class 1)."""

    def __init__(self, target_class_ids: Sequence[int] = (0, 1), threshold: float = 0.5, name: Optional[str] = None,
                 dtype: Any = None) -> None:
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def _predicted_classes(self, y_pred: torch.Tensor) -> torch.Tensor:
        return (y_pred.to(torch.float32) >= self.threshold).to(torch.int64)

    def get_config(self) -> dict:
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold, "name": self.name,
                "dtype": self.dtype}


class MeanIoU(IoU):
    """IoU averaged over every class."""

    def __init__(self, num_classes: int, name: Optional[str] = None, dtype: Any = None,
                 ignore_class: Optional[int] = None, sparse_y_true: bool = True, sparse_y_pred: bool = True,
                 axis: int = -1) -> None:
        super().__init__(num_classes=num_classes, target_class_ids=list(range(num_classes)), name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred,
                         axis=axis)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["target_class_ids"]
        return config


class OneHotIoU(IoU):
    """IoU of one-hot labels (argmax over `axis`); predictions are probabilities unless `sparse_y_pred`."""

    def __init__(self, num_classes: int, target_class_ids: Sequence[int], name: Optional[str] = None,
                 dtype: Any = None, ignore_class: Optional[int] = None, sparse_y_pred: bool = False,
                 axis: int = -1) -> None:
        super().__init__(num_classes=num_classes, target_class_ids=target_class_ids, name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """Mean IoU of one-hot labels (argmax over `axis`)."""

    def __init__(self, num_classes: int, name: Optional[str] = None, dtype: Any = None,
                 ignore_class: Optional[int] = None, sparse_y_pred: bool = False, axis: int = -1) -> None:
        super().__init__(num_classes=num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["sparse_y_true"]
        return config
