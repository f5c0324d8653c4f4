"""TF's top-level initializers (tf.random_normal_initializer, tf.random_uniform_initializer, tf.zeros_initializer,
tf.ones_initializer, tf.constant_initializer): callables `init(shape, dtype=tf.float32)` with get_config."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype

__all__ = ["random_normal_initializer", "random_uniform_initializer", "zeros_initializer", "ones_initializer",
           "constant_initializer"]


class _Initializer:
    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Any:
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _generator(seed: Optional[int]) -> Optional[torch.Generator]:
    """A generator for a seeded initializer (the same numbers on every call, as TF's seeded initializers give)."""
    if seed is None:
        return None
    generator = torch.Generator()
    generator.manual_seed(int(seed))
    return generator


def _float(dtype: Any, who: str) -> torch.dtype:
    target = as_dtype(dtype)
    if not target.is_floating_point:
        raise ValueError(f"{who} draws floats; got dtype {target}. Use a float dtype.")
    return target


class random_normal_initializer(_Initializer):  # noqa: N801  (TF's name)
    """Normal values of `mean` and `stddev`; a `seed` makes every call give the same numbers."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Optional[int] = None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        target = _float(dtype, "tf.random_normal_initializer")
        values = torch.randn(tuple(shape), generator=_generator(self.seed), dtype=torch.float32)
        return (values * float(self.stddev) + float(self.mean)).to(target)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class random_uniform_initializer(_Initializer):  # noqa: N801
    """Uniform values in [minval, maxval); a `seed` makes every call give the same numbers."""

    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Optional[int] = None) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        target = as_dtype(dtype)
        if not target.is_floating_point:  # TF draws integers in [minval, maxval) for int dtypes
            return torch.randint(int(self.minval), int(self.maxval), tuple(shape), generator=_generator(self.seed),
                                 dtype=target)
        values = torch.rand(tuple(shape), generator=_generator(self.seed), dtype=torch.float32)
        return (values * (float(self.maxval) - float(self.minval)) + float(self.minval)).to(target)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class zeros_initializer(_Initializer):  # noqa: N801
    """Zeros of the requested shape and dtype (float32 by default)."""

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        return torch.zeros(tuple(shape), dtype=as_dtype(dtype))


class ones_initializer(_Initializer):  # noqa: N801
    """Ones of the requested shape and dtype (float32 by default)."""

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        return torch.ones(tuple(shape), dtype=as_dtype(dtype))


class constant_initializer(_Initializer):  # noqa: N801
    """`value` (a scalar, or an array of exactly the requested shape's size) as a tensor of the requested shape."""

    def __init__(self, value: Any = 0, support_partition: bool = False) -> None:
        if support_partition:
            raise NotImplementedError("tf.constant_initializer: support_partition=True (partitioned variables) is "
                                      "not supported.")
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        array = np.asarray(self.value.detach().cpu() if isinstance(self.value, torch.Tensor) else self.value)
        size = int(np.prod(tuple(shape)))
        if array.size == 1:
            array = np.full(tuple(shape), array.reshape(()).item())
        elif array.size != size:
            raise TypeError(f"tf.constant_initializer: value has {array.size} elements but shape {list(shape)} "
                            f"needs {size}.")
        return torch.as_tensor(array.reshape(tuple(shape))).to(as_dtype(dtype))

    def get_config(self) -> dict:
        return {"value": self.value, "support_partition": self.support_partition}
