"""Small numeric conventions shared by the Keras layer: float type, fuzz factor, conversion.
Mirrors `keras.backend` (floatx, epsilon, clear_session) for what scripts actually call."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy import _context

_FLOATX = "float32"
_EPSILON = 1e-7

_DTYPES = {
    "float16": torch.float16, "half": torch.float16, "bfloat16": torch.bfloat16,
    "float32": torch.float32, "float": torch.float32, "float64": torch.float64, "double": torch.float64,
    "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "bool": torch.bool,
}


def floatx() -> str:
    """The default float type name ('float32'), as `keras.backend.floatx()`."""
    return _FLOATX


def epsilon() -> float:
    """The fuzz factor Keras uses in losses and metrics (1e-7)."""
    return _EPSILON


def clear_session() -> None:
    """Resets default layer names, as `keras.backend.clear_session()` does."""
    _context._reset_names()


def to_torch_dtype(dtype: Any) -> torch.dtype:
    """Maps 'float32', np.float32, torch.float32 ... to a torch dtype."""
    if dtype is None:
        return _DTYPES[_FLOATX]
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        if dtype not in _DTYPES:
            raise ValueError(f"Unknown dtype {dtype!r}. Valid names: {sorted(_DTYPES)}")
        return _DTYPES[dtype]
    return torch.from_numpy(np.zeros((), dtype=np.dtype(dtype))).dtype


def to_tensor(value: Any, dtype: Any = None) -> torch.Tensor:
    """Converts NumPy arrays, Python numbers and lists to torch tensors (no copy when possible)."""
    if isinstance(value, torch.Tensor):
        return value if dtype is None else value.to(to_torch_dtype(dtype))
    if isinstance(value, np.ndarray):
        if not value.flags.writeable or not value.flags.c_contiguous:
            value = np.ascontiguousarray(value).copy()
        tensor = torch.from_numpy(value)
    else:
        tensor = torch.as_tensor(value)
    return tensor if dtype is None else tensor.to(to_torch_dtype(dtype))
