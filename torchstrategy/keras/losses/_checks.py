"""Input handling shared by losses and metrics: conversion to float tensors on the prediction's device
and the label checks that turn common mistakes (one-hot vs sparse labels, batch mismatch) into clear errors."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras import backend


def as_predictions(y_pred: Any) -> torch.Tensor:
    """y_pred as a float tensor; half types are upcast so losses are computed in float32."""
    tensor = backend.to_tensor(y_pred)
    if not tensor.is_floating_point() or tensor.dtype in (torch.float16, torch.bfloat16):
        tensor = tensor.to(backend.to_torch_dtype(backend.floatx()))
    return tensor


def targets_like(y_true: Any, y_pred: torch.Tensor) -> torch.Tensor:
    tensor = backend.to_tensor(y_true)
    if tensor.dtype == y_pred.dtype and tensor.device == y_pred.device:  # as `.to` would give it, without the call
        return tensor
    return tensor.to(device=y_pred.device, dtype=y_pred.dtype, non_blocking=True)


def cached_logits(y_pred: Any, from_logits: bool) -> tuple[Any, bool]:
    """Keras 2.10+ softmax/sigmoid outputs carry `_keras_logits`; Keras then uses them directly."""
    logits = getattr(y_pred, "_keras_logits", None)
    return (logits, True) if isinstance(logits, torch.Tensor) else (y_pred, from_logits)


def check_batch(y_true: Any, y_pred: Any, fn_name: str) -> None:
    true_shape, pred_shape = tuple(y_true.shape), tuple(y_pred.shape)
    if true_shape and pred_shape and true_shape[0] != pred_shape[0]:
        raise ValueError(
            f"{fn_name}: y_true has batch size {true_shape[0]} (shape {true_shape}) but y_pred has "
            f"batch size {pred_shape[0]} (shape {pred_shape}). Pass labels and predictions for the same samples."
        )


def align_ranks(y_true: torch.Tensor, y_pred: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Keras squeezes a trailing size-1 axis when ranks differ by one; a (N,) target against (N, 1)
    predictions is expanded instead (what Keras's fit does with 1-D targets), keeping per-sample values."""
    if y_pred.ndim - y_true.ndim == 1 and y_pred.shape[-1] == 1:
        y_true = y_true.unsqueeze(-1)
    elif y_true.ndim - y_pred.ndim == 1 and y_true.shape[-1] == 1:
        y_true = y_true.squeeze(-1)
    return y_true, y_pred


def check_same_shape(y_true: torch.Tensor, y_pred: torch.Tensor, fn_name: str) -> None:
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"{fn_name}: y_true shape {tuple(y_true.shape)} differs from y_pred shape {tuple(y_pred.shape)}. "
            "Labels must have one value per prediction."
        )


def check_sparse_labels(labels: torch.Tensor, y_pred: torch.Tensor, axis: int = -1, ignore_class: Optional[int] = None,
                        fn_name: str = "sparse_categorical_crossentropy", check_values: bool = True) -> None:
    """Integer labels must have shape y_pred.shape without the class axis (optionally with a trailing 1).

    Value checks (integral, inside [0, classes)) run only on host tensors, so device tensors never sync.
    """
    if y_pred.ndim == 0:
        raise ValueError(f"{fn_name}: y_pred must have a class axis; got a scalar.")
    axis = axis % y_pred.ndim
    num_classes = y_pred.shape[axis]
    expected = tuple(y_pred.shape[:axis] + y_pred.shape[axis + 1:])
    shape = tuple(labels.shape)
    if shape not in (expected, expected + (1,)):
        if shape == tuple(y_pred.shape) and num_classes > 1:
            raise ValueError(
                f"{fn_name} got labels of shape {shape}, the same shape as y_pred: these look like one-hot labels. "
                "Use CategoricalCrossentropy / 'categorical_crossentropy' (and CategoricalAccuracy) for one-hot "
                "labels, or pass integer class indices (e.g. labels.argmax(-1))."
            )
        raise ValueError(
            f"{fn_name} expects integer class labels of shape {expected} or {expected + (1,)} for y_pred of "
            f"shape {tuple(y_pred.shape)}; got labels of shape {shape}."
        )
    if labels.is_complex():
        raise ValueError(f"{fn_name}: labels must be integer class indices, got dtype {labels.dtype}.")
    if not check_values or labels.device.type != "cpu" or labels.numel() == 0:
        return
    if labels.is_floating_point():
        fractional = labels != torch.floor(labels)
        if bool(fractional.any()):
            raise ValueError(
                f"{fn_name}: labels must be integer class indices, found the value {labels[fractional][0].item()}. "
                "For soft or one-hot targets use CategoricalCrossentropy."
            )
    values = labels.to(torch.int64)
    if ignore_class is not None:
        values = values[values != ignore_class]
    if values.numel():
        low, high = int(values.min()), int(values.max())
        if low < 0 or high >= num_classes:
            raise ValueError(
                f"{fn_name}: label {low if low < 0 else high} is outside [0, {num_classes}) for y_pred with "
                f"{num_classes} classes (shape {tuple(y_pred.shape)}). Check the number of output units, or "
                "shift 1-based labels to 0-based."
            )


def check_categorical_labels(y_true: torch.Tensor, y_pred: torch.Tensor,
                             fn_name: str = "categorical_crossentropy") -> None:
    """One-hot labels must have y_pred's shape; integer-index-shaped labels get a pointer to the sparse variant."""
    if y_true.shape == y_pred.shape:
        return
    sparse_shapes = (tuple(y_pred.shape[:-1]), tuple(y_pred.shape[:-1]) + (1,))
    if tuple(y_true.shape) in sparse_shapes and y_pred.ndim and y_pred.shape[-1] > 1:
        raise ValueError(
            f"{fn_name} got labels of shape {tuple(y_true.shape)} for y_pred of shape {tuple(y_pred.shape)}: these "
            "look like integer class indices. Use the sparse variant (SparseCategoricalCrossentropy / "
            "'sparse_categorical_crossentropy', SparseCategoricalAccuracy), or one-hot encode the labels."
        )
    raise ValueError(f"{fn_name}: y_true shape {tuple(y_true.shape)} must equal y_pred shape {tuple(y_pred.shape)}.")


def regression_inputs(y_true: Any, y_pred: Any, fn_name: str) -> tuple[torch.Tensor, torch.Tensor]:
    y_pred = as_predictions(y_pred)
    y_true = targets_like(y_true, y_pred)
    check_batch(y_true, y_pred, fn_name)
    y_true, y_pred = align_ranks(y_true, y_pred)
    if y_true.shape == y_pred.shape:  # the usual case, without broadcast_shapes' Python reference code
        return y_true, y_pred
    try:
        torch.broadcast_shapes(y_true.shape, y_pred.shape)
    except RuntimeError:
        raise ValueError(
            f"{fn_name}: y_true shape {tuple(y_true.shape)} and y_pred shape {tuple(y_pred.shape)} are not compatible."
        ) from None
    return y_true, y_pred
