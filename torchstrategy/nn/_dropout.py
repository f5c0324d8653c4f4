"""`tf.nn.dropout` on torch tensors: TF's rate (the fraction dropped), noise_shape broadcasting, seed through
tf.random.uniform, and kept values scaled by 1 / (1 - rate)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy import random as tf_random
from torchstrategy._tensor_convert import to_tensor


def dropout(x: Any, rate: Any, noise_shape: Any = None, seed: Optional[int] = None,
            name: Optional[str] = None) -> torch.Tensor:
    """Zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate); `noise_shape`
    (broadcastable to x's shape) shares one draw across the dimensions where it is 1."""
    t = to_tensor(x, op="tf.nn.dropout")
    if not t.is_floating_point():
        raise ValueError(f"tf.nn.dropout: x must be a floating-point tensor, got {t.dtype}.")
    r = float(rate.item() if isinstance(rate, torch.Tensor) else rate)
    if not 0 <= r < 1:
        raise ValueError(f"tf.nn.dropout: rate must be a float in the range [0, 1), got {rate}.")
    if r == 0:
        return t
    shape = list(t.shape) if noise_shape is None else [
        int(v) for v in (noise_shape.tolist() if isinstance(noise_shape, torch.Tensor) else noise_shape)]
    try:
        torch.broadcast_shapes(tuple(shape), tuple(t.shape))
    except RuntimeError as error:
        raise ValueError(f"tf.nn.dropout: noise_shape {shape} does not broadcast to x's shape "
                         f"{tuple(t.shape)}.") from error
    draw = tf_random.uniform(shape, dtype=t.dtype, seed=seed).to(t.device)
    keep = draw >= r
    return t * (1.0 / (1.0 - r)) * keep.to(t.dtype)
