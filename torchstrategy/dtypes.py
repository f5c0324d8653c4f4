"""`tf.dtypes`: the one place that turns dtype spellings (torch dtypes, NumPy dtypes, Python types,
names such as 'float32' or 'half') into torch dtypes, for datasets, layers and tensor helpers."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import torch

float16, bfloat16, float32, float64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
int8, uint8, int16, int32, int64 = torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64
bool = torch.bool  # noqa: A001  (tf.dtypes.bool)
uint16, uint32, uint64 = torch.uint16, torch.uint32, torch.uint64
complex64, complex128 = torch.complex64, torch.complex128
half, double = torch.float16, torch.float64  # TF's aliases
DType = torch.dtype  # tf.DType: dtypes are torch dtypes here (strings: the object dtype below)
# Strings are NumPy object arrays of bytes throughout the project (see torchstrategy/data/_records.py).
string = np.dtype(object)

_DTYPE_NAMES = {"float": torch.float32, "double": torch.float64, "half": torch.float16}


def as_dtype(type_value: Any) -> torch.dtype:
    """Maps torch/NumPy dtypes, Python types and names ('float32', 'int64') to a torch dtype."""
    dtype = type_value
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        found = _DTYPE_NAMES.get(dtype, getattr(torch, dtype, None))
        if isinstance(found, torch.dtype):
            return found
    elif dtype is int:
        return torch.int32
    elif dtype is float:
        return torch.float32
    elif dtype is builtins.bool:
        return torch.bool
    else:
        try:
            return torch.from_numpy(np.zeros(0, dtype=np.dtype(dtype))).dtype
        except (TypeError, ValueError):
            pass
    raise TypeError(f"Unknown dtype {dtype!r}: pass a torch dtype such as torch.float32 or a name like 'int64'.")


# TF's quantized dtypes that torch has (TF's qint16/quint16 have no torch counterpart).
qint8, quint8, qint32 = torch.qint8, torch.quint8, torch.qint32
QUANTIZED_DTYPES = frozenset({qint8, quint8, qint32})

# tf.dtypes.cast / complex / saturate_cast live with the ops; tf.dtypes.experimental holds the narrow floats/ints.
from torchstrategy._machinery.lazy import lazy_namespace  # noqa: E402

__getattr__, _lazy_dir = lazy_namespace(__name__, {
    "cast": "torchstrategy.ops:cast", "complex": "torchstrategy.math:complex",
    "saturate_cast": "torchstrategy.math:saturate_cast", "experimental": "torchstrategy.dtypes_experimental"})


def __dir__() -> list:
    return sorted(set(globals()) | set(_lazy_dir()))
