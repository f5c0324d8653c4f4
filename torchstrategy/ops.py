"""The handful of tf tensor functions training scripts call (constant, cast, reduce_*, dtypes),
all returning plain torch tensors."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype

Tensor = torch.Tensor
newaxis = None


def _dtype(dtype: Any) -> Optional[torch.dtype]:
    return None if dtype is None else as_dtype(dtype)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """A tensor from a Python value or array; floats default to float32 as in TF."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64 and dtype is None:
        dtype = torch.float64
    tensor = torch.as_tensor(value, dtype=_dtype(dtype))
    if dtype is None and tensor.dtype == torch.float64 and not isinstance(value, (np.ndarray, torch.Tensor)):
        tensor = tensor.to(torch.float32)
    if dtype is None and tensor.dtype == torch.int64 and not isinstance(value, (np.ndarray, torch.Tensor)):
        tensor = tensor.to(torch.int32)
    return tensor.reshape(shape) if shape is not None else tensor


def convert_to_tensor(value: Any, dtype: Any = None, name: Optional[str] = None) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value if dtype is None else value.to(_dtype(dtype))
    return constant(value, dtype)


def cast(x: Any, dtype: Any, name: Optional[str] = None) -> torch.Tensor:
    return convert_to_tensor(x).to(_dtype(dtype))


def _reduce(fn: Any, x: Any, axis: Any, keepdims: bool) -> torch.Tensor:
    x = convert_to_tensor(x)
    if axis is None:
        return fn(x)
    dims = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return fn(x, dim=dims, keepdim=keepdims)


def reduce_sum(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return _reduce(torch.sum, x, axis, keepdims)


def reduce_mean(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return _reduce(torch.mean, x, axis, keepdims)


def reduce_max(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return _reduce(torch.amax, x, axis, keepdims)


def reduce_min(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return _reduce(torch.amin, x, axis, keepdims)


def argmax(x: Any, axis: int = 0) -> torch.Tensor:
    return torch.argmax(convert_to_tensor(x), dim=axis)


def reshape(x: Any, shape: Any) -> torch.Tensor:
    return convert_to_tensor(x).reshape(tuple(shape))


def shape(x: Any) -> torch.Size:
    return convert_to_tensor(x).shape


def zeros(shape: Any, dtype: Any = torch.float32) -> torch.Tensor:
    return torch.zeros(tuple(shape) if not isinstance(shape, int) else (shape,), dtype=_dtype(dtype))


def ones(shape: Any, dtype: Any = torch.float32) -> torch.Tensor:
    return torch.ones(tuple(shape) if not isinstance(shape, int) else (shape,), dtype=_dtype(dtype))


def stack(values: Any, axis: int = 0) -> torch.Tensor:
    return torch.stack([convert_to_tensor(v) for v in values], dim=axis)


def concat(values: Any, axis: int) -> torch.Tensor:
    return torch.cat([convert_to_tensor(v) for v in values], dim=axis)


def equal(x: Any, y: Any) -> torch.Tensor:
    return torch.eq(convert_to_tensor(x), convert_to_tensor(y))


def expand_dims(x: Any, axis: int) -> torch.Tensor:
    return convert_to_tensor(x).unsqueeze(axis)


def squeeze(x: Any, axis: Any = None) -> torch.Tensor:
    x = convert_to_tensor(x)
    return x.squeeze() if axis is None else x.squeeze(axis)


def one_hot(indices: Any, depth: int, dtype: Any = torch.float32) -> torch.Tensor:
    return torch.nn.functional.one_hot(convert_to_tensor(indices).long(), depth).to(_dtype(dtype))


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None) -> torch.Tensor:  # noqa: A001
    if limit is None:
        start, limit = 0, start
    return torch.arange(start, limit, delta, dtype=_dtype(dtype))


def print(*values: Any, **kwargs: Any) -> None:  # noqa: A001  (tf.print)
    import builtins

    builtins.print(*[v.tolist() if isinstance(v, torch.Tensor) else v for v in values], **kwargs)
