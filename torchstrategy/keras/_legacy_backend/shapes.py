"""The legacy backend's shape and layout functions: reshape, flatten, expand/squeeze, permutes, joins, tiles and
repeats, reverse, gather, one_hot, arange and K.switch (a branch or an element-wise choice)."""
from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import torch

from torchstrategy import array_ops
from torchstrategy import ops as tf_ops
from torchstrategy.dtypes import as_dtype
from torchstrategy.keras._legacy_backend.settings import _t


def reshape(x: Any, shape: Any) -> torch.Tensor:
    return tf_ops.reshape(x, shape)


def flatten(x: Any) -> torch.Tensor:
    """`x` as a 1-D tensor."""
    return _t(x, "flatten").reshape(-1)


def batch_flatten(x: Any) -> torch.Tensor:
    """`x` as (batch, everything else)."""
    tensor = _t(x, "batch_flatten")
    return tensor.reshape(tensor.shape[0], -1)


def expand_dims(x: Any, axis: int = -1) -> torch.Tensor:
    """Inserts a size-1 axis at `axis` (at the end by default)."""
    return tf_ops.expand_dims(x, axis)


def squeeze(x: Any, axis: int) -> torch.Tensor:
    """Removes the size-1 axis `axis` (required, unlike tf.squeeze)."""
    return tf_ops.squeeze(x, [axis])


def permute_dimensions(x: Any, pattern: Sequence[int]) -> torch.Tensor:
    return array_ops.transpose(x, perm=list(pattern))


def transpose(x: Any) -> torch.Tensor:
    """All axes reversed."""
    return array_ops.transpose(x)


def concatenate(tensors: Sequence[Any], axis: int = -1) -> torch.Tensor:
    """Joins tensors along `axis` (the last by default)."""
    return tf_ops.concat(list(tensors), axis)


def stack(x: Sequence[Any], axis: int = 0) -> torch.Tensor:
    return tf_ops.stack(list(x), axis)


def tile(x: Any, n: Any) -> torch.Tensor:
    """Repeats `x` `n[i]` times along axis i (an int tiles a rank-1 `x`)."""
    return array_ops.tile(x, [n] if isinstance(n, int) else n)


def repeat_elements(x: Any, rep: int, axis: int) -> torch.Tensor:
    """Each slice along `axis` repeated `rep` times in place: [1, 2] -> [1, 1, 2, 2]."""
    return torch.repeat_interleave(_t(x, "repeat_elements"), rep, dim=axis)


def repeat(x: Any, n: int) -> torch.Tensor:
    """(batch, features) -> (batch, n, features)."""
    tensor = _t(x, "repeat")
    if tensor.dim() != 2:
        raise ValueError(f"Expected input `x` to have rank 2. Received: rank(x)={tensor.dim()}")
    return tensor.unsqueeze(1).expand(-1, n, -1).clone()


def reverse(x: Any, axes: Any) -> torch.Tensor:
    return array_ops.reverse(x, [axes] if isinstance(axes, int) else list(axes))


def gather(reference: Any, indices: Any) -> torch.Tensor:
    """Rows of `reference` at `indices` (axis 0)."""
    return array_ops.gather(reference, indices)


def one_hot(indices: Any, num_classes: int) -> torch.Tensor:
    """float32 one-hot vectors on a new last axis (out-of-range indices give all zeros, as TF)."""
    return tf_ops.one_hot(indices, num_classes)


def switch(condition: Any, then_expression: Any, else_expression: Any) -> Any:
    """A scalar condition picks one branch (callables are called lazily); a tensor condition selects
    element-wise, broadcast over the expressions' trailing axes."""
    cond = _t(condition, "switch").to(torch.bool)
    if cond.dim() == 0:
        chosen = then_expression if bool(cond) else else_expression
        return chosen() if callable(chosen) else chosen
    then_value = then_expression() if callable(then_expression) else then_expression
    else_value = else_expression() if callable(else_expression) else else_expression
    then_t, else_t = _t(then_value, "switch"), _t(else_value, "switch")
    if cond.dim() > then_t.dim():
        raise ValueError("Rank of `condition` should be less than or equal to rank of `then_expression` and "
                         f"`else_expression`. ndim(condition)={cond.dim()}, ndim(then_expression)={then_t.dim()}")
    if cond.dim() > 1:  # Keras aligns a rank>1 condition with the leading axes; rank 1 broadcasts as usual
        cond = cond.reshape(tuple(cond.shape) + (1,) * (then_t.dim() - cond.dim()))
    return torch.where(cond.to(then_t.device), then_t, else_t)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = "int32") -> torch.Tensor:
    """`range` as a tensor (int32 by default); a negative `start` without `stop` gives an empty tensor."""
    if stop is None:
        start, stop = 0, builtins.max(start, 0)
    return torch.arange(start, stop, step).to(as_dtype(dtype))
