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


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False,
                     name: Optional[str] = None) -> torch.Tensor:
    """exp(log_input) - targets * log_input, plus (when compute_full_loss) Stirling's approximation of
    log(targets!) for targets above 1."""
    log_input = _tensor(log_input)
    targets = to_tensor(targets, hint=log_input.dtype, op="tf.nn.log_poisson_loss").to(log_input.dtype)
    if targets.shape != log_input.shape:
        raise ValueError(f"tf.nn.log_poisson_loss: targets {tuple(targets.shape)} and log_input "
                         f"{tuple(log_input.shape)} must have the same shape.")
    loss = torch.exp(log_input) - log_input * targets
    if compute_full_loss:
        safe = torch.where(targets > 1, targets, torch.ones_like(targets))
        stirling = safe * torch.log(safe) - safe + 0.5 * torch.log(2 * math.pi * safe)
        loss = loss + torch.where(targets > 1, stirling, torch.zeros_like(stirling))
    return loss


def weighted_cross_entropy_with_logits(labels: Any, logits: Any, pos_weight: Any,
                                       name: Optional[str] = None) -> torch.Tensor:
    """Sigmoid cross entropy with the positive term weighted by pos_weight (no reduction)."""
    logits = _tensor(logits)
    labels = to_tensor(labels, hint=logits.dtype, op="tf.nn.weighted_cross_entropy_with_logits").to(logits.dtype)
    if labels.shape != logits.shape:
        raise ValueError(f"tf.nn.weighted_cross_entropy_with_logits: labels {tuple(labels.shape)} and logits "
                         f"{tuple(logits.shape)} must have the same shape.")
    pos = to_tensor(pos_weight, hint=logits.dtype).to(logits.dtype)
    log_weight = 1 + (pos - 1) * labels
    return (1 - labels) * logits + log_weight * (torch.log1p(torch.exp(-logits.abs())) + F.relu(-logits))


def ctc_loss(labels: Any, logits: Any, label_length: Any, logit_length: Any, logits_time_major: bool = True,
             unique: Any = None, blank_index: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """Per-example CTC negative log-likelihood of dense int labels [batch, max_label] against unnormalised
    logits ([time, batch, classes] when logits_time_major); the blank is class 0 unless blank_index says
    otherwise (negative values count from the number of classes, -1 being the last class)."""
    op = "tf.nn.ctc_loss"
    if unique is not None:
        raise NotImplementedError(f"{op}: `unique` (precomputed ctc_unique_labels) is not supported; pass None.")
    if type(labels).__name__ == "SparseTensor":
        raise NotImplementedError(f"{op}: SparseTensor labels are not supported; pass dense labels with "
                                  "label_length.")
    x = _tensor(logits)
    if x.dim() != 3:
        raise ValueError(f"{op}: logits must be 3-D, got shape {tuple(x.shape)}.")
    if not logits_time_major:
        x = x.transpose(0, 1)
    classes = x.shape[-1]
    blank = 0 if blank_index is None else int(blank_index)
    if blank < 0:
        blank += classes
    if not 0 <= blank < classes:
        raise ValueError(f"{op}: blank_index {blank_index} is out of range for {classes} classes.")
    targets = to_tensor(labels, op=op).long()
    if targets.dim() != 2 or targets.shape[0] != x.shape[1]:
        raise ValueError(f"{op}: labels must be [batch, max_label_length] with batch {x.shape[1]}, got shape "
                         f"{tuple(targets.shape)}.")
    label_len = to_tensor(label_length, op=op).long().reshape(-1)
    logit_len = to_tensor(logit_length, op=op).long().reshape(-1)
    log_probs = torch.log_softmax(x.float() if x.dtype in (torch.float16, torch.bfloat16) else x, dim=-1)
    loss = F.ctc_loss(log_probs, targets, logit_len, label_len, blank=blank, reduction="none",
                      zero_infinity=False)
    return loss.to(x.dtype)
