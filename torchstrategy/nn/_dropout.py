"""`tf.nn.dropout` and tf.nn.experimental's stateless_dropout/general_dropout on torch tensors: TF's rate (the
fraction dropped), noise_shape broadcasting, and kept values scaled by 1 / (1 - rate)."""
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
    r, shape = _checked(t, rate, noise_shape, "tf.nn.dropout")
    if r == 0:
        return t
    return _apply(t, r, tf_random.uniform(shape, dtype=t.dtype, seed=seed))


def _checked(t: torch.Tensor, rate: Any, noise_shape: Any, op: str) -> tuple:
    if not t.is_floating_point():
        raise ValueError(f"{op}: x must be a floating-point tensor, got {t.dtype}.")
    r = float(rate.item() if isinstance(rate, torch.Tensor) else rate)
    if not 0 <= r < 1:
        raise ValueError(f"{op}: rate must be a float in the range [0, 1), got {rate}.")
    shape = list(t.shape) if noise_shape is None else [
        int(v) for v in (noise_shape.tolist() if isinstance(noise_shape, torch.Tensor) else noise_shape)]
    try:
        torch.broadcast_shapes(tuple(shape), tuple(t.shape))
    except RuntimeError as error:
        raise ValueError(f"{op}: noise_shape {shape} does not broadcast to x's shape "
                         f"{tuple(t.shape)}.") from error
    return r, shape


def _apply(t: torch.Tensor, r: float, draw: torch.Tensor) -> torch.Tensor:
    keep = torch.as_tensor(draw).to(t.device) >= r
    return t * (1.0 / (1.0 - r)) * keep.to(t.dtype)


def stateless_dropout(x: Any, rate: Any, seed: Any, rng_alg: Any = None, noise_shape: Any = None,
                      name: Optional[str] = None) -> torch.Tensor:
    """dropout whose mask is fixed by the seed pair (drawn with tf.random.stateless_uniform, TF's Philox numbers)."""
    t = to_tensor(x, op="tf.nn.experimental.stateless_dropout")
    r, shape = _checked(t, rate, noise_shape, "tf.nn.experimental.stateless_dropout")
    draw = tf_random.stateless_uniform(shape, seed, dtype=t.dtype, alg=rng_alg or "auto_select")
    return _apply(t, r, draw)


def general_dropout(x: Any, rate: Any, uniform_sampler: Any, noise_shape: Any = None,
                    name: Optional[str] = None) -> torch.Tensor:
    """dropout with the mask drawn by uniform_sampler(shape=..., dtype=...) (values in [0, 1))."""
    t = to_tensor(x, op="tf.nn.experimental.general_dropout")
    r, shape = _checked(t, rate, noise_shape, "tf.nn.experimental.general_dropout")
    return _apply(t, r, uniform_sampler(shape=shape, dtype=t.dtype))
