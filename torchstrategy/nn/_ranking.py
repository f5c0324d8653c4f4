"""`tf.nn` ranking helpers on torch tensors: top_k (TF's TopKV2 values/indices), in_top_k and zero_fraction."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.dtypes import as_dtype


class TopKV2(NamedTuple):
    """top_k's result: the k largest values along the last axis and their indices."""
    values: torch.Tensor
    indices: torch.Tensor


def top_k(input: Any, k: Any = 1, sorted: bool = True, index_type: Any = torch.int32,  # noqa: A002
          name: Optional[str] = None) -> TopKV2:
    """The k largest entries along the last axis (ties go to the lower index)."""
    x = to_tensor(input, op="tf.nn.top_k")
    k = int(k.item() if isinstance(k, torch.Tensor) else k)
    if x.dim() < 1 or not 0 <= k <= x.shape[-1]:
        raise ValueError(f"tf.nn.top_k: k must be in [0, {x.shape[-1] if x.dim() else 0}] (the last axis), "
                         f"got {k}.")
    order = torch.sort(x, dim=-1, descending=True, stable=True).indices[..., :k]
    if not sorted:
        order = torch.sort(order, dim=-1).values
    return TopKV2(torch.gather(x, -1, order), order.to(as_dtype(index_type)))


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
