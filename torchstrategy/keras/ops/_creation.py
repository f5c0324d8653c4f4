"""keras.ops.numpy's array creation: zeros, ones, full, the *_like forms, arange, linspace, eye, tri,
copy and array, floatx by default as in Keras 3."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras.ops._core import _floatx, _shape, _t


def zeros(shape: Any, dtype: Any = None) -> torch.Tensor:
    """Zeros of `shape` (floatx by default)."""
    return torch.zeros(_shape(shape), dtype=_floatx() if dtype is None else as_dtype(dtype))


def ones(shape: Any, dtype: Any = None) -> torch.Tensor:
    return torch.ones(_shape(shape), dtype=_floatx() if dtype is None else as_dtype(dtype))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> torch.Tensor:
    """`shape` filled with `fill_value`, floatx unless `dtype` says otherwise (Keras 3)."""
    return torch.full(_shape(shape), _t(fill_value).item(), dtype=_floatx() if dtype is None else as_dtype(dtype))


def zeros_like(x: Any, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    return torch.zeros_like(tensor, dtype=None if dtype is None else as_dtype(dtype))


def ones_like(x: Any, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    return torch.ones_like(tensor, dtype=None if dtype is None else as_dtype(dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    return torch.full_like(tensor, float(fill_value) if tensor.dtype.is_floating_point else fill_value,
                           dtype=None if dtype is None else as_dtype(dtype))


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> torch.Tensor:
    """Like np.arange (step None: 1); int32 for int arguments, floatx when any is a float."""
    step = 1 if step is None else step
    if stop is None:
        start, stop = 0, start
    is_float = builtins.any(isinstance(v, float) for v in (start, stop, step))
    out_dtype = as_dtype(dtype) if dtype is not None else (_floatx() if is_float else torch.int32)
    return torch.arange(start, stop, step, dtype=torch.float64 if is_float else torch.int64).to(out_dtype)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:
    """`num` evenly spaced values from start to stop (floatx by default)."""
    out_dtype = _floatx() if dtype is None else as_dtype(dtype)
    values = np.linspace(float(start), float(stop), num, endpoint=endpoint, retstep=retstep)
    if retstep:
        return torch.as_tensor(values[0], dtype=out_dtype), values[1]
    return torch.as_tensor(values, dtype=out_dtype)


def eye(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = None) -> torch.Tensor:
    return torch.as_tensor(np.eye(N, M, k), dtype=_floatx() if dtype is None else as_dtype(dtype))


def identity(n: int, dtype: Any = None) -> torch.Tensor:
    return eye(n, dtype=dtype)


def tri(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = None) -> torch.Tensor:
    return torch.as_tensor(np.tri(N, M, k), dtype=_floatx() if dtype is None else as_dtype(dtype))


def copy(x: Any) -> torch.Tensor:
    return _t(x).clone()


def array(x: Any, dtype: Any = None) -> torch.Tensor:
    return _t(x, dtype)
