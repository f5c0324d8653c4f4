"""`tf.nn`: the loss-scaling helpers for custom distributed loops, and the few activation and
cross-entropy functions scripts call directly."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from torchstrategy.tape import compute_average_loss, scale_regularization_loss

__all__ = [
    "compute_average_loss", "scale_regularization_loss", "relu", "relu6", "sigmoid", "tanh", "softmax",
    "log_softmax", "gelu", "silu", "swish", "softplus", "l2_loss", "sparse_softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
]

relu = F.relu
relu6 = F.relu6
sigmoid = torch.sigmoid
tanh = torch.tanh
softplus = F.softplus
silu = F.silu
swish = F.silu


def softmax(logits: torch.Tensor, axis: int = -1) -> torch.Tensor:
    return torch.softmax(logits, dim=axis)


def log_softmax(logits: torch.Tensor, axis: int = -1) -> torch.Tensor:
    return torch.log_softmax(logits, dim=axis)


def gelu(features: torch.Tensor, approximate: bool = False) -> torch.Tensor:
    return F.gelu(features, approximate="tanh" if approximate else "none")


def l2_loss(t: torch.Tensor) -> torch.Tensor:
    """sum(t ** 2) / 2, as tf.nn.l2_loss."""
    return (t * t).sum() / 2


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: torch.Tensor) -> torch.Tensor:
    """Per-example cross entropy of integer labels against logits (no reduction)."""
    labels = torch.as_tensor(labels, device=logits.device).long()
    return -torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def softmax_cross_entropy_with_logits(labels: Any, logits: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """Per-example cross entropy of label distributions against logits (no reduction)."""
    labels = torch.as_tensor(labels, dtype=logits.dtype, device=logits.device)
    return -(labels * torch.log_softmax(logits, dim=axis)).sum(dim=axis)


def sigmoid_cross_entropy_with_logits(labels: Any, logits: torch.Tensor) -> torch.Tensor:
    """Element-wise logistic loss (no reduction)."""
    labels = torch.as_tensor(labels, dtype=logits.dtype, device=logits.device)
    return F.binary_cross_entropy_with_logits(logits, labels, reduction="none")
