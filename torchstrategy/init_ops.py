"""TF's top-level initializers (tf.random_normal_initializer, tf.random_uniform_initializer, tf.zeros_initializer,
tf.ones_initializer, tf.constant_initializer): callables `init(shape, dtype=tf.float32)` sharing Keras's kernels."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras import initializers as keras_init

__all__ = ["random_normal_initializer", "random_uniform_initializer", "zeros_initializer", "ones_initializer",
           "constant_initializer"]


class random_normal_initializer(keras_init.RandomNormal):  # noqa: N801  (TF's name)
    """Normal values of `mean` and `stddev`; `seed` makes them repeatable. Call with (shape, dtype=tf.float32)."""

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        return super().__call__(shape, dtype=dtype, **kwargs)


class random_uniform_initializer(keras_init.RandomUniform):  # noqa: N801
    """Uniform values in [minval, maxval); `seed` makes them repeatable."""

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        return super().__call__(shape, dtype=dtype, **kwargs)


class zeros_initializer(keras_init.Zeros):  # noqa: N801
    """Zeros of the requested shape and dtype (float32 by default)."""

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        return torch.zeros(tuple(shape), dtype=as_dtype(dtype))


class ones_initializer(keras_init.Ones):  # noqa: N801
    """Ones of the requested shape and dtype (float32 by default)."""

    def __call__(self, shape: Sequence[int], dtype: Any = torch.float32, **kwargs: Any) -> torch.Tensor:
        return torch.ones(tuple(shape), dtype=as_dtype(dtype))


class constant_initializer(keras_init.Constant):  # noqa: N801
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
