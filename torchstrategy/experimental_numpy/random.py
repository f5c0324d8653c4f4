"""`tf.experimental.numpy.random`: NumPy's global-state sampling functions (rand, randn, uniform, randint, poisson,
...) on torch's global generator, which `seed` (tf.random.set_seed) seeds; floats are float64 as in TF."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy.experimental_numpy import _dtypes
from torchstrategy.experimental_numpy._arrays import asarray, promote_to, shape_tuple
from torchstrategy.random import set_seed

__all__ = ["seed", "rand", "randn", "random", "standard_normal", "uniform", "randint", "poisson"]


def seed(s: Any) -> None:
    """Seeds the generators tnp.random draws from (the same as tf.random.set_seed(s))."""
    try:
        value = int(s)
    except (TypeError, ValueError):
        raise ValueError(f"tnp.random.seed: only integers are supported, got {s!r}.") from None
    set_seed(value)


def _size(size: Any, op: str) -> tuple:
    return () if size is None else shape_tuple(size, op)


def standard_normal(size: Any = None) -> torch.Tensor:
    """Samples (float64) from the standard normal distribution, of shape `size` (a scalar when None)."""
    return torch.randn(_size(size, "random.standard_normal"), dtype=_dtypes.default_float())


def randn(*args: Any) -> torch.Tensor:
    """Standard normal samples (float64) of shape `args`."""
    return standard_normal(size=args)


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None) -> torch.Tensor:
    """Samples (float64) from [low, high); `size` defaults to the broadcast shape of low and high."""
    dtype = _dtypes.default_float()
    bottom, top = promote_to(dtype, asarray(low, dtype), asarray(high, dtype), op="random.uniform")
    shape = torch.broadcast_shapes(bottom.shape, top.shape) if size is None else _size(size, "random.uniform")
    unit = torch.rand(shape, dtype=dtype, device=bottom.device)
    return bottom + (top - bottom) * unit


def random(size: Any = None) -> torch.Tensor:
    """Samples (float64) from [0, 1) of shape `size`."""
    return uniform(0.0, 1.0, size)


def rand(*size: Any) -> torch.Tensor:
    """Samples (float64) from [0, 1) of shape `size` (the dimensions as separate arguments)."""
    return uniform(0.0, 1.0, size)


def randint(low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64) -> torch.Tensor:
    """Integers from [low, high) (from [0, low) without high), int64 or int32 as `dtype` says."""
    target = _dtypes.torch_dtype(dtype)
    if target not in (torch.int32, torch.int64):
        raise ValueError(f"tnp.random.randint: dtype must be int32 or int64 (or convertible), got {dtype!r}.")
    bottom, top = (0, int(low)) if high is None else (int(low), int(high))
    if top <= bottom:
        raise ValueError(f"tnp.random.randint: low >= high ({bottom} >= {top}); pass a non-empty range.")
    return torch.randint(bottom, top, _size(size, "random.randint"), dtype=target)


def poisson(lam: Any = 1.0, size: Any = None) -> torch.Tensor:
    """Poisson samples (int64) with rate `lam`, of shape `size` (followed by lam's shape, as in TF)."""
    rate = asarray(lam, _dtypes.default_float(), op="random.poisson")
    if bool((rate < 0).any()):
        raise ValueError("tnp.random.poisson: lam must be non-negative.")
    shape = _size(size, "random.poisson") + tuple(rate.shape)
    return torch.poisson(torch.broadcast_to(rate, shape).contiguous()).to(torch.int64)
