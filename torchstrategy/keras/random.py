"""`keras.random`: sampling functions (normal, uniform, randint, truncated_normal, categorical, dropout,
shuffle, gamma, binomial, beta) and `SeedGenerator`, with Keras's seed rules on torch's generators."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras import backend


class SeedGenerator:
    """A random-number state for `seed=`: each draw advances it, so successive calls differ, while the same
    initial `seed` gives the same sequence. Without `seed`, one is drawn from torch's global generator
    (`keras.utils.set_random_seed` makes it repeatable).

    >>> g1, g2 = SeedGenerator(1), SeedGenerator(1)
    >>> bool((normal((3,), seed=g1) == normal((3,), seed=g2)).all())
    True
    """

    def __init__(self, seed: Optional[int] = None, name: Optional[str] = None, **kwargs: Any) -> None:
        backend_name = kwargs.pop("backend", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        if backend_name not in (None, "torch"):
            raise NotImplementedError(f"SeedGenerator(backend={backend_name!r}): only this package's torch backend "
                                      "is available.")
        if seed is None:
            seed = int(torch.randint(1, 10**9, (), dtype=torch.int64))
        elif not isinstance(seed, (int, np.integer)):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        self._initial_seed = int(seed)
        self.name = name or "seed_generator"
        self.state = torch.tensor([int(seed), 0], dtype=torch.int64)

    def next(self, ordered: bool = True) -> torch.Tensor:
        """The current state (a pair of int64), then advances the counter."""
        current = self.state.clone()
        self.state[1] += 1
        return current

    def get_config(self) -> dict:
        return {"seed": self._initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> "SeedGenerator":
        return cls(**config)


SeedLike = Union[None, int, SeedGenerator, Sequence[int], torch.Tensor]


def _generator(seed: SeedLike, op: str) -> Optional[torch.Generator]:
    """None: torch's global generator; an int (or a pair): the same numbers every call; a SeedGenerator:
    its next state."""
    if seed is None:
        return None
    if isinstance(seed, SeedGenerator):
        first, second = (int(v) for v in seed.next())
    elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        first, second = int(seed), 0
    elif isinstance(seed, (torch.Tensor, np.ndarray, list, tuple)) and np.size(np.asarray(seed)) == 2:
        first, second = (int(v) for v in np.asarray(seed).reshape(-1))
    else:
        raise ValueError(f"{op}: argument `seed` must be None, an integer or a keras.random.SeedGenerator. "
                         f"Received: seed={seed!r}")
    return torch.Generator().manual_seed((first * 1_000_003 + second) % (2**63))


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (torch.Tensor, np.ndarray)):
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(size) for size in shape)


def _float(dtype: Any, op: str) -> torch.dtype:
    resolved = as_dtype(backend.floatx() if dtype is None else dtype)
    if not resolved.is_floating_point:
        raise ValueError(f"`keras.random.{op}` requires a floating point `dtype`. Received: dtype={dtype}")
    return resolved


def normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None, seed: SeedLike = None
           ) -> torch.Tensor:
    """Normal samples of `shape` (floatx by default)."""
    out = torch.randn(_shape(shape), generator=_generator(seed, "normal"), dtype=torch.float64)
    return (out * stddev + mean).to(_float(dtype, "normal"))


def uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None, seed: SeedLike = None
            ) -> torch.Tensor:
    """Uniform samples in [minval, maxval); `dtype` must be a float type."""
    resolved = _float(dtype, "uniform")
    out = torch.rand(_shape(shape), generator=_generator(seed, "uniform"), dtype=torch.float64)
    return (out * (maxval - minval) + minval).to(resolved)


def randint(shape: Any, minval: int, maxval: int, dtype: Any = "int32", seed: SeedLike = None) -> torch.Tensor:
    """Integers uniform in [minval, maxval)."""
    resolved = as_dtype(dtype)
    if resolved.is_floating_point or resolved == torch.bool:
        raise ValueError(f"`keras.random.randint` requires an integer `dtype`. Received: dtype={dtype}")
    out = torch.randint(int(minval), int(maxval), _shape(shape), generator=_generator(seed, "randint"),
                        dtype=torch.int64)
    return out.to(resolved)


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: SeedLike = None) -> torch.Tensor:
    """Normal samples redrawn until within two standard deviations of the mean."""
    resolved = _float(dtype, "truncated_normal")
    generator = _generator(seed, "truncated_normal")
    out = torch.randn(_shape(shape), generator=generator, dtype=torch.float64)
    outside = out.abs() > 2.0
    while bool(outside.any()):
        out[outside] = torch.randn(int(outside.sum()), generator=generator, dtype=torch.float64)
        outside = out.abs() > 2.0
    return (out * stddev + mean).to(resolved)


def categorical(logits: Any, num_samples: int, dtype: Any = "int32", seed: SeedLike = None) -> torch.Tensor:
    """`num_samples` class indices per row of `logits` (batch, classes), drawn with replacement."""
    logits = backend.to_tensor(logits)
    if logits.ndim != 2:
        raise ValueError(f"`logits` should be a 2-D tensor with shape [batch_size, num_classes]. "
                         f"Received: logits={tuple(logits.shape)}")
    probs = torch.softmax(logits.detach().to(torch.float64).cpu(), dim=-1)
    out = torch.multinomial(probs, int(num_samples), replacement=True, generator=_generator(seed, "categorical"))
    return out.to(as_dtype(dtype)).to(logits.device)


def dropout(inputs: Any, rate: float, noise_shape: Any = None, seed: SeedLike = None) -> torch.Tensor:
    """Zeroes each entry with probability `rate` and scales the others by 1 / (1 - rate); `noise_shape`
    broadcasts one keep/drop decision over axes of size 1 (None entries take the input's size)."""
    inputs = backend.to_tensor(inputs)
    shape = tuple(inputs.shape)
    if noise_shape is not None:
        shape = tuple(dim if wanted is None else int(wanted) for wanted, dim in zip(noise_shape, inputs.shape))
    keep = torch.rand(shape, generator=_generator(seed, "dropout"), dtype=torch.float64) >= rate
    keep = keep.to(inputs.device)
    scale = 1.0 / (1.0 - rate) if rate < 1.0 else 0.0
    return torch.where(keep, inputs * scale, torch.zeros_like(inputs))


def shuffle(x: Any, axis: int = 0, seed: SeedLike = None) -> torch.Tensor:
    """`x` with its slices along `axis` in a random order."""
    x = backend.to_tensor(x)
    order = torch.randperm(x.shape[axis], generator=_generator(seed, "shuffle")).to(x.device)
    return x.index_select(axis, order)


def gamma(shape: Any, alpha: Any, dtype: Any = None, seed: SeedLike = None) -> torch.Tensor:
    """Gamma(alpha, 1) samples of `shape`."""
    resolved = _float(dtype, "gamma")
    concentration = torch.broadcast_to(torch.as_tensor(alpha, dtype=torch.float64), _shape(shape)).contiguous()
    return torch._standard_gamma(concentration, generator=_generator(seed, "gamma")).to(resolved)


def binomial(shape: Any, counts: Any, probabilities: Any, dtype: Any = None, seed: SeedLike = None
             ) -> torch.Tensor:
    """Binomial(counts, probabilities) samples of `shape` (floatx by default, as Keras)."""
    resolved = _float(dtype, "binomial")
    size = _shape(shape)
    count = torch.broadcast_to(torch.as_tensor(counts, dtype=torch.float64), size).contiguous()
    prob = torch.broadcast_to(torch.as_tensor(probabilities, dtype=torch.float64), size).contiguous()
    return torch.binomial(count, prob, generator=_generator(seed, "binomial")).to(resolved)


def beta(shape: Any, alpha: Any, beta: Any, dtype: Any = None, seed: SeedLike = None) -> torch.Tensor:
    """Beta(alpha, beta) samples of `shape`, as X / (X + Y) with X ~ Gamma(alpha), Y ~ Gamma(beta)."""
    resolved = _float(dtype, "beta")
    size = _shape(shape)
    generator = _generator(seed, "beta")
    a = torch.broadcast_to(torch.as_tensor(alpha, dtype=torch.float64), size).contiguous()
    b = torch.broadcast_to(torch.as_tensor(beta, dtype=torch.float64), size).contiguous()
    x = torch._standard_gamma(a, generator=generator)
    y = torch._standard_gamma(b, generator=generator)
    return (x / (x + y)).to(resolved)


__all__ = ["SeedGenerator", "beta", "binomial", "categorical", "dropout", "gamma", "normal", "randint", "shuffle",
           "truncated_normal", "uniform"]
