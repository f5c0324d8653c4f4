"""`tf.nn`: the loss-scaling helpers for custom distributed loops, and the few activation and
cross-entropy functions scripts call directly (TF's signatures; `name` is accepted and unused)."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy.tape import compute_average_loss, scale_regularization_loss

__all__ = [
    "compute_average_loss", "scale_regularization_loss", "relu", "relu6", "sigmoid", "tanh", "softmax",
    "log_softmax", "gelu", "silu", "swish", "softplus", "l2_loss", "sparse_softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
]


def _tensor(value: Any) -> torch.Tensor:
    return value if isinstance(value, torch.Tensor) else torch.as_tensor(value)


def relu(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """max(features, 0)."""
    return F.relu(_tensor(features))


def relu6(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """min(max(features, 0), 6)."""
    return F.relu6(_tensor(features))


def sigmoid(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """1 / (1 + exp(-x))."""
    return torch.sigmoid(_tensor(x))


def tanh(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Hyperbolic tangent."""
    return torch.tanh(_tensor(x))


def softplus(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """log(exp(features) + 1)."""
    return F.softplus(_tensor(features))


def silu(features: Any, beta: float = 1.0) -> torch.Tensor:
    """features * sigmoid(beta * features)."""
    features = _tensor(features)
    if beta == 1.0:
        return F.silu(features)
    return features * torch.sigmoid(beta * features)


swish = silu


def softmax(logits: Any, axis: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """Softmax over `axis` (the last one when None)."""
    return torch.softmax(_tensor(logits), dim=-1 if axis is None else axis)


def log_softmax(logits: Any, axis: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """Log-softmax over `axis` (the last one when None)."""
    return torch.log_softmax(_tensor(logits), dim=-1 if axis is None else axis)


def gelu(features: Any, approximate: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """Gaussian error linear unit (tanh approximation when `approximate`)."""
    return F.gelu(_tensor(features), approximate="tanh" if approximate else "none")


def l2_loss(t: Any, name: Optional[str] = None) -> torch.Tensor:
    """sum(t ** 2) / 2, as tf.nn.l2_loss."""
    t = _tensor(t)
    return (t * t).sum() / 2


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: torch.Tensor,
                                             name: Optional[str] = None) -> torch.Tensor:
    """Per-example cross entropy of integer labels against logits (no reduction)."""
    labels = torch.as_tensor(labels, device=logits.device).long()
    return -torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def softmax_cross_entropy_with_logits(labels: Any, logits: torch.Tensor, axis: int = -1,
                                      name: Optional[str] = None) -> torch.Tensor:
    """Per-example cross entropy of label distributions against logits (no reduction)."""
    labels = torch.as_tensor(labels, dtype=logits.dtype, device=logits.device)
    return -(labels * torch.log_softmax(logits, dim=axis)).sum(dim=axis)


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None,
                                      name: Optional[str] = None) -> torch.Tensor:
    """Element-wise logistic loss (no reduction)."""
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits needs both labels and logits.")
    logits = _tensor(logits)
    labels = torch.as_tensor(labels, dtype=logits.dtype, device=logits.device)
    return F.binary_cross_entropy_with_logits(logits, labels, reduction="none")
