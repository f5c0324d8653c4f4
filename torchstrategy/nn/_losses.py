"""`tf.nn` losses on torch tensors, unreduced per element or per example as TF returns them: l2_loss, the
cross-entropies, log_poisson_loss and ctc_loss (TF's signatures; `name` is accepted and unused)."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy._tensor_convert import to_tensor


def _tensor(value: Any) -> torch.Tensor:
    return to_tensor(value, op="tf.nn")


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
