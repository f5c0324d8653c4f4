"""`tf.nn` ranking helpers on torch tensors: in_top_k, zero_fraction and approx_max_k/approx_min_k (exact
here); tf.nn.top_k is tf.math.top_k, as in TF."""
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


def _exact_k(operand: Any, k: int, dim: int, largest: bool, op: str) -> tuple:
    x = to_tensor(operand, op=op)
    if x.dim() == 0 or not -x.dim() <= dim < x.dim() or not 0 <= int(k) <= x.shape[dim]:
        raise ValueError(f"{op}: k={k} must be in [0, size] along reduction_dimension {dim} of shape "
                         f"{tuple(x.shape)}.")
    order = torch.sort(x, dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, int(k))
    return torch.gather(x, dim, order), order.to(torch.int32)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: Optional[str] = None) -> tuple:
    """(values, int32 indices) of the k largest along reduction_dimension; computed exactly (recall 1, ties
    to the lower index), which meets any recall_target."""
    return _exact_k(operand, k, reduction_dimension, True, "tf.nn.approx_max_k")


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: Optional[str] = None) -> tuple:
    """(values, int32 indices) of the k smallest along reduction_dimension; computed exactly."""
    return _exact_k(operand, k, reduction_dimension, False, "tf.nn.approx_min_k")
