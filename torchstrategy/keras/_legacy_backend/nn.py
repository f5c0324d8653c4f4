"""The legacy backend's neural-net functions: activations (K.relu with alpha/max_value/threshold, the Keras 2
hard_sigmoid...), softmax, bias_add, in_top_k and the element-wise / per-sample cross-entropies (target first)."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy import math as math_ops
from torchstrategy import nn as tf_nn
from torchstrategy._tensor_convert import to_tensor as _tf_tensor
from torchstrategy.keras._legacy_backend.settings import _config, _t, image_data_format


# ----- activations --------------------------------------------------------------------------------------------


def sigmoid(x: Any) -> torch.Tensor:
    return math_ops.sigmoid(x)


def softsign(x: Any) -> torch.Tensor:
    """x / (1 + |x|)."""
    return F.softsign(_t(x, "softsign"))


def hard_sigmoid(x: Any) -> torch.Tensor:
    """clip(0.2 * x + 0.5, 0, 1) (the Keras 2 legacy slope)."""
    return (_t(x, "hard_sigmoid") * 0.2 + 0.5).clamp(0.0, 1.0)


def elu(x: Any, alpha: float = 1.0) -> torch.Tensor:
    return F.elu(_t(x, "elu"), alpha=alpha)


def relu(x: Any, alpha: float = 0.0, max_value: Optional[float] = None, threshold: float = 0.0) -> torch.Tensor:
    """max(x, 0) with Keras's extras: `alpha` slope below `threshold`, clipped at `max_value`.

    >>> relu(torch.tensor([-2.0, 1.0, 8.0]), alpha=0.1, max_value=6.0)
    tensor([-0.2000,  1.0000,  6.0000])
    """
    tensor = _t(x, "relu")
    negative_part = F.relu(threshold - tensor) if alpha != 0.0 else None
    out = tensor * (tensor > threshold).to(tensor.dtype) if threshold != 0 else F.relu(tensor)
    if max_value is not None:
        out = out.clamp(0, max_value)
    if negative_part is not None:
        out = out - alpha * negative_part
    return out


def softmax(x: Any, axis: Any = -1) -> torch.Tensor:
    """Softmax over `axis` (an int or a list of axes); rank-1 inputs are refused, as in Keras."""
    tensor = _t(x, "softmax")
    if tensor.dim() <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input of shape {tuple(tensor.shape)}.")
    if isinstance(axis, int):
        return torch.softmax(tensor, dim=axis)
    axes = tuple(axis)
    shifted = torch.exp(tensor - tensor.amax(dim=axes, keepdim=True))
    return shifted / shifted.sum(dim=axes, keepdim=True)


def in_top_k(predictions: Any, targets: Any, k: int) -> torch.Tensor:
    """For each row, whether the target's score is among the k largest (ties count as in, as TF)."""
    scores = _t(predictions, "in_top_k")
    labels = _t(targets, "in_top_k").to(torch.int64).to(scores.device)
    target_scores = scores.gather(1, labels.unsqueeze(1))
    above = (scores > target_scores).sum(dim=1)
    return (above < k) & torch.isfinite(target_scores.squeeze(1))


def bias_add(x: Any, bias: Any, data_format: Optional[str] = None) -> torch.Tensor:
    """x + bias, on the channel axis given by `data_format` (default image_data_format())."""
    tensor, b = _t(x, "bias_add"), _t(bias, "bias_add")
    data_format = image_data_format() if data_format is None else data_format
    if data_format == "channels_first" and tensor.dim() > 2 and b.dim() == 1:
        return tensor + b.reshape((1, -1) + (1,) * (tensor.dim() - 2))
    return tensor + b


# ----- cross-entropies (element-wise / per-sample, the legacy argument order: target first) -------------------


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> torch.Tensor:
    """Element-wise binary cross-entropy (no mean over the last axis, unlike keras.losses)."""
    output_t = _t(output, "binary_crossentropy")
    target_t = _tf_tensor(target, output_t.dtype, "keras.backend.binary_crossentropy").to(output_t.dtype)
    if from_logits:
        return tf_nn.sigmoid_cross_entropy_with_logits(target_t, output_t)
    eps = _config().epsilon()
    probs = output_t.clamp(eps, 1.0 - eps)
    return -(target_t * torch.log(probs + eps) + (1 - target_t) * torch.log(1 - probs + eps))


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> torch.Tensor:
    """Cross-entropy of one-hot/soft `target` against `output` (probabilities, renormalized and clipped)."""
    output_t = _t(output, "categorical_crossentropy")
    target_t = _tf_tensor(target, output_t.dtype, "keras.backend.categorical_crossentropy").to(output_t.dtype)
    if tuple(target_t.shape) != tuple(output_t.shape):
        raise ValueError(f"keras.backend.categorical_crossentropy: target shape {tuple(target_t.shape)} and output "
                         f"shape {tuple(output_t.shape)} must be equal.")
    if from_logits:
        return tf_nn.softmax_cross_entropy_with_logits(target_t, output_t, axis=axis)
    eps = _config().epsilon()
    probs = (output_t / output_t.sum(dim=axis, keepdim=True)).clamp(eps, 1.0 - eps)
    return -(target_t * torch.log(probs)).sum(dim=axis)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1,
                                    ignore_class: Optional[int] = None) -> torch.Tensor:
    """Cross-entropy of integer `target` against `output` (probabilities, clipped to [eps, 1-eps], then
    log-softmaxed, as Keras does); shape output.shape without `axis`."""
    from torchstrategy.keras.losses import (
        sparse_categorical_crossentropy as _keras_sparse_ce,
    )

    output_t = _t(output, "sparse_categorical_crossentropy")
    return _keras_sparse_ce(target, output_t, from_logits=from_logits, axis=axis, ignore_class=ignore_class)


def binary_focal_crossentropy(target: Any, output: Any, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False) -> torch.Tensor:
    """Element-wise binary cross-entropy scaled by the focal factor (1 - p_t) ** gamma, p_t being the
    probability given to the true side; `apply_class_balancing` also weights positives by alpha and
    negatives by 1 - alpha."""
    output_t = _t(output, "binary_focal_crossentropy")
    target_t = _tf_tensor(target, output_t.dtype, "keras.backend.binary_focal_crossentropy").to(output_t.dtype)
    probs = torch.sigmoid(output_t) if from_logits else output_t
    p_t = target_t * probs + (1 - target_t) * (1 - probs)
    focal = torch.pow(1.0 - p_t, gamma) * binary_crossentropy(target_t, output_t, from_logits=from_logits)
    if apply_class_balancing:
        focal = (target_t * alpha + (1 - target_t) * (1 - alpha)) * focal
    return focal


def categorical_focal_crossentropy(target: Any, output: Any, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, axis: int = -1) -> torch.Tensor:
    """Per-sample focal cross-entropy: sum over `axis` of alpha * (1 - p) ** gamma * -target * log(p), with
    p the renormalized probabilities clipped to [epsilon, 1 - epsilon] (softmax first when from_logits)."""
    output_t = _t(output, "categorical_focal_crossentropy")
    target_t = _tf_tensor(target, output_t.dtype, "keras.backend.categorical_focal_crossentropy").to(output_t.dtype)
    if tuple(target_t.shape) != tuple(output_t.shape):
        raise ValueError(f"keras.backend.categorical_focal_crossentropy: target shape {tuple(target_t.shape)} and "
                         f"output shape {tuple(output_t.shape)} must be equal.")
    if from_logits:
        output_t = torch.softmax(output_t, dim=axis)
    eps = _config().epsilon()
    probs = (output_t / output_t.sum(dim=axis, keepdim=True)).clamp(eps, 1.0 - eps)
    weighted = torch.pow(1.0 - probs, gamma) * alpha * (-target_t * torch.log(probs))
    return weighted.sum(dim=axis)
