"""TF's norm clipping: tf.clip_by_norm and tf.clip_by_global_norm (tf.clip_by_value lives with tf.math),
computed in the tensors' own dtype as TF does."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import dims, require, to_tensor
from torchstrategy.errors import InvalidArgumentError

__all__ = ["clip_by_norm", "clip_by_global_norm", "global_norm"]


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """`t` scaled so that its L2 norm (over `axes`, all by default) is at most `clip_norm`.

    >>> clip_by_norm(torch.tensor([3.0, 4.0]), 1.0).tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    tensor = require(to_tensor(t, op="tf.clip_by_norm"), "float", "tf.clip_by_norm")
    limit = to_tensor(clip_norm, tensor.dtype, "tf.clip_by_norm").to(tensor.device)
    axes_tuple = dims(axes, tensor.dim())
    squares = (tensor * tensor).sum(dim=axes_tuple, keepdim=True) if axes_tuple is not None else \
        (tensor * tensor).sum().reshape([1] * tensor.dim())
    # as TF: divide only where the norm exceeds clip_norm (no 0/0 for a zero tensor)
    norm = torch.sqrt(torch.where(squares > 0, squares, torch.ones_like(squares)))
    norm = torch.where(squares > 0, norm, torch.zeros_like(norm))
    return tensor * limit / torch.maximum(norm, limit)


def global_norm(t_list: Any, name: Optional[str] = None) -> torch.Tensor:
    """sqrt(sum of the squared L2 norms of every tensor in `t_list`); None entries are skipped."""
    tensors = [to_tensor(t, op="tf.linalg.global_norm") for t in t_list if t is not None]
    if not tensors:
        return torch.tensor(0.0)
    return torch.sqrt(sum((t.to(torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else t.dtype) ** 2).sum()
                          for t in tensors)).to(tensors[0].dtype)


def clip_by_global_norm(t_list: Any, clip_norm: Any, use_norm: Any = None, name: Optional[str] = None) -> tuple:
    """(the tensors each scaled by clip_norm / max(global_norm, clip_norm), the global norm before clipping);
    None entries stay None. A non-finite global norm makes every entry NaN, as in TF.

    >>> clipped, norm = clip_by_global_norm([torch.tensor([3.0]), torch.tensor([4.0])], 1.0)
    >>> float(norm), clipped[0].tolist()
    (5.0, [0.6000000238418579])
    """
    if isinstance(t_list, torch.Tensor) or not hasattr(t_list, "__iter__"):
        raise TypeError("tf.clip_by_global_norm: t_list must be a sequence of tensors, got "
                        f"{type(t_list).__name__}; wrap a single tensor in a list.")
    items = list(t_list)
    norm = global_norm(items) if use_norm is None else to_tensor(use_norm, op="tf.clip_by_global_norm")
    limit = float(to_tensor(clip_norm, op="tf.clip_by_global_norm"))
    if limit < 0:
        raise InvalidArgumentError(None, None, f"tf.clip_by_global_norm: clip_norm must be >= 0, got {limit}.")
    value = float(norm)
    scale = limit / max(value, limit) if value == value and value != float("inf") else float("nan")
    clipped = [None if t is None else to_tensor(t, op="tf.clip_by_global_norm") * scale for t in items]
    return clipped, norm
