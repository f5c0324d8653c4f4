"""The legacy backend's random functions: random_normal, random_uniform, truncated_normal, random_bernoulli and
dropout, floatx by default; a `seed` makes them repeatable (torch's generator, not TF's stream)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras._legacy_backend.settings import _config, _t


def _generator(seed: Optional[int]) -> Optional[torch.Generator]:
    if seed is None:
        return None
    generator = torch.Generator()
    generator.manual_seed(int(seed))
    return generator


def _shape_tuple(shape: Any) -> tuple:
    return (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)


def random_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                  seed: Optional[int] = None) -> torch.Tensor:
    """Normal samples (floatx by default); `seed` makes them repeatable (torch's stream, not TF's)."""
    out = torch.randn(_shape_tuple(shape), generator=_generator(seed), dtype=torch.float32)
    return (out * stddev + mean).to(as_dtype(_config().floatx() if dtype is None else dtype))


def random_uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
                   seed: Optional[int] = None) -> torch.Tensor:
    """Uniform samples in [minval, maxval) (floatx by default)."""
    out = torch.rand(_shape_tuple(shape), generator=_generator(seed), dtype=torch.float32)
    return (out * (maxval - minval) + minval).to(as_dtype(_config().floatx() if dtype is None else dtype))


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: Optional[int] = None) -> torch.Tensor:
    """Normal samples redrawn beyond two standard deviations."""
    out = torch.empty(_shape_tuple(shape), dtype=torch.float32)
    torch.nn.init.trunc_normal_(out, 0.0, 1.0, -2.0, 2.0, generator=_generator(seed))
    return (out * stddev + mean).to(as_dtype(_config().floatx() if dtype is None else dtype))


def random_bernoulli(shape: Any, p: float = 0.0, dtype: Any = None, seed: Optional[int] = None) -> torch.Tensor:
    """1 with probability p, else 0 (floatx by default)."""
    draws = torch.rand(_shape_tuple(shape), generator=_generator(seed))
    return (draws <= p).to(as_dtype(_config().floatx() if dtype is None else dtype))


def dropout(x: Any, level: float, noise_shape: Any = None, seed: Optional[int] = None) -> torch.Tensor:
    """Zeroes each entry with probability `level` and scales the rest by 1 / (1 - level)."""
    tensor = _t(x, "dropout")
    mask_shape = tuple(tensor.shape) if noise_shape is None else _shape_tuple(noise_shape)
    keep = torch.rand(mask_shape, generator=_generator(seed)).to(tensor.device) >= level
    return tensor * keep.to(tensor.dtype) / (1.0 - level)
