"""keras.ops.math: logsumexp and the top-k ops (top_k, and in_top_k with Keras 3's argument order: targets
first), int32 indices as in Keras 3; erf and rsqrt are made with the other float-only ops in _elementwise."""
from __future__ import annotations

from typing import Any

import torch

from torchstrategy.keras.ops._core import _axes, _float, _t


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _float(x)
    axes = _axes(axis)
    return torch.logsumexp(tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), keepdim=keepdims)


def top_k(x: Any, k: int, sorted: bool = True) -> tuple:
    """(values, indices) of the k largest entries of the last axis; indices are int32."""
    values, indices = torch.topk(_t(x), k, dim=-1, largest=True, sorted=True)
    return values, indices.to(torch.int32)


def in_top_k(targets: Any, predictions: Any, k: int) -> torch.Tensor:
    """Whether each target's score is among the row's k largest (Keras 3 argument order: targets first)."""
    scores = _t(predictions)
    labels = _t(targets).to(torch.int64)
    target_scores = scores.gather(1, labels.unsqueeze(1))
    return (scores > target_scores).sum(dim=1) < k
