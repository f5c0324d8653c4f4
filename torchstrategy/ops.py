"""The basic tf tensor functions (constant, convert_to_tensor, cast, reshape, stack, concat, ...), all
returning plain torch tensors; tf.math and the other array ops live in math/ and array_ops.py."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.ragged import RaggedTensor
from torchstrategy.ragged import concat as ragged_concat

# The reductions, argmax and equal follow TF's dtype rules; they live with the rest of tf.math.
from torchstrategy.math import (  # noqa: F401
    argmax,
    equal,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_sum,
)

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
    if any(isinstance(v, RaggedTensor) for v in values):  # tf.concat of RaggedTensors: tf.ragged's
        return ragged_concat(values, axis)
    return torch.cat([convert_to_tensor(v) for v in values], dim=axis)


def expand_dims(x: Any, axis: int) -> torch.Tensor:
    return convert_to_tensor(x).unsqueeze(axis)


def squeeze(x: Any, axis: Any = None) -> torch.Tensor:
    x = convert_to_tensor(x)
    return x.squeeze() if axis is None else x.squeeze(axis)


def one_hot(indices: Any, depth: int, dtype: Any = torch.float32) -> torch.Tensor:
    return torch.nn.functional.one_hot(convert_to_tensor(indices).long(), depth).to(_dtype(dtype))


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None) -> torch.Tensor:  # noqa: A001
    """Numbers from start (0 when only one bound is given) up to, not including, limit by delta; the dtype
    follows the arguments as in TF (Python ints -> int32, floats -> float32) unless `dtype` is given."""
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        from torchstrategy._tensor_convert import to_tensor

        bounds = [to_tensor(value, op="tf.range") for value in (start, limit, delta)]
        floats = [b.dtype for b in bounds if b.is_floating_point()]
        dtype = floats[0] if floats else next((b.dtype for b in bounds if b.dtype == torch.int64), torch.int32)
        start, limit, delta = (b.item() for b in bounds)
    return torch.arange(start, limit, delta, dtype=_dtype(dtype))


def print(*values: Any, **kwargs: Any) -> None:  # noqa: A001  (tf.print)
    import builtins

    builtins.print(*[v.tolist() if isinstance(v, torch.Tensor) else v for v in values], **kwargs)
