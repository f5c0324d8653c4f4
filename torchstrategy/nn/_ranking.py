"""`tf.nn` ranking helpers on torch tensors: in_top_k and zero_fraction (tf.nn.top_k is tf.math.top_k, as in
TF)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor


def in_top_k(targets: Any, predictions: Any, k: Any, name: Optional[str] = None) -> torch.Tensor:
    """Whether each row's target class is among its k highest predictions (fewer than k strictly higher;
    False when the target's prediction is not finite)."""
    p = to_tensor(predictions, op="tf.nn.in_top_k")
    t = to_tensor(targets, op="tf.nn.in_top_k").long()
    if p.dim() != 2 or t.dim() != 1 or t.shape[0] != p.shape[0]:
        raise ValueError(f"tf.nn.in_top_k: predictions must be [batch, classes] and targets [batch], got "
                         f"{tuple(p.shape)} and {tuple(t.shape)}.")
    valid = (t >= 0) & (t < p.shape[1])
    target = p.gather(1, t.clamp(0, p.shape[1] - 1).unsqueeze(1))
    higher = (p > target).sum(dim=1)
    return valid & torch.isfinite(target.squeeze(1)) & (higher < int(k))


def zero_fraction(value: Any, name: Optional[str] = None) -> torch.Tensor:
    """The fraction of zero entries, as a float32 scalar."""
    x = to_tensor(value, op="tf.nn.zero_fraction")
    return (x == 0).to(torch.float32).mean() if x.numel() else torch.tensor(float("nan"))
