"""keras.ops.core: tensor conversion with Keras 3's dtype rules (convert_to_tensor, cast, shape, dtype...)
and the conversion helpers the other keras.ops modules share (weak Python scalars, floatx promotion, axes)."""
from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype

_INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _floatx() -> torch.dtype:
    from torchstrategy.keras import backend

    return as_dtype(backend.floatx())


def convert_to_tensor(x: Any, dtype: Any = None, sparse: Optional[bool] = None, ragged: Optional[bool] = None
                      ) -> torch.Tensor:
    """`x` as a torch tensor with Keras's rules: Python floats become floatx, Python ints int32, NumPy arrays
    keep their dtype.

    >>> convert_to_tensor([1, 2]).dtype
    torch.int32
    """
    if isinstance(x, torch.Tensor):
        tensor = x
    elif isinstance(x, (np.ndarray, np.generic)):
        array = np.asarray(x)
        tensor = torch.from_numpy(np.ascontiguousarray(array).copy())
    elif isinstance(x, (list, tuple)) and builtins.any(isinstance(item, torch.Tensor) for item in x):
        tensor = torch.stack([convert_to_tensor(item) for item in x])
    else:
        array = np.asarray(x)
        if array.dtype.kind in "OSU":
            raise TypeError(f"keras.ops.convert_to_tensor: cannot convert {x!r} to a numeric tensor.")
        if array.dtype.kind == "f":
            tensor = torch.as_tensor(array, dtype=_floatx())
        elif array.dtype.kind in "iu":
            fits = array.size == 0 or (array.min() >= -2 ** 31 and array.max() < 2 ** 31)
            tensor = torch.as_tensor(array, dtype=torch.int32 if fits else torch.int64)
        else:
            tensor = torch.as_tensor(array)
    return tensor if dtype is None else tensor.to(as_dtype(dtype))


_t = convert_to_tensor


def _pair(x: Any, y: Any) -> tuple[Any, Any]:
    """Two operands; a Python number stays a number so torch gives it the tensor's dtype (Keras's weak types)."""
    if isinstance(x, (int, float, bool)) and not isinstance(y, (int, float, bool)):
        return x, _t(y)
    if isinstance(y, (int, float, bool)) and not isinstance(x, (int, float, bool)):
        return _t(x), y
    return _t(x), _t(y)


def _float(x: Any) -> torch.Tensor:
    """Ints and bools become floatx before float-only ops (ops.sqrt(int) is float32 in Keras)."""
    tensor = _t(x)
    return tensor if tensor.dtype.is_floating_point or tensor.dtype.is_complex else tensor.to(_floatx())


def _axes(axis: Any) -> Any:
    if axis is None:
        return None
    return tuple(axis) if isinstance(axis, (list, tuple)) else int(axis)


def _keep_int(result: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    # torch widens int32 sums/products to int64; Keras keeps the input's int dtype (bools sum as int32).
    if source.dtype is torch.bool:
        return result.to(torch.int32)
    if source.dtype in _INT_DTYPES:
        return result.to(source.dtype)
    return result


def _shape(shape: Any) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def _joined(xs: Sequence[Any]) -> list:
    tensors = [_t(x) for x in xs]
    common = tensors[0].dtype
    for t in tensors[1:]:
        common = torch.promote_types(common, t.dtype)
    return [t.to(common) for t in tensors]


# ----- tensor facts -------------------------------------------------------------------------------------------


def cast(x: Any, dtype: Any) -> torch.Tensor:
    """`x` converted to `dtype`."""
    return _t(x).to(as_dtype(dtype))


def convert_to_numpy(x: Any) -> np.ndarray:
    tensor = _t(x)
    return tensor.detach().cpu().numpy()


def is_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def dtype(x: Any) -> str:
    """The dtype name of `x`, e.g. 'float32'."""
    return str(_t(x).dtype).replace("torch.", "")


def shape(x: Any) -> tuple:
    """The shape as a tuple of ints (Keras 3 gives a tuple, not a tensor)."""
    return tuple(int(d) for d in _t(x).shape)


def ndim(x: Any) -> int:
    return _t(x).dim()


def size(x: Any) -> int:
    return _t(x).numel()


def stop_gradient(variable: Any) -> torch.Tensor:
    return _t(variable).detach()


def slice(inputs: Any, start_indices: Any, shape: Any) -> torch.Tensor:
    tensor = _t(inputs)
    index = tuple(builtins.slice(int(s), int(s) + int(n)) for s, n in zip(start_indices, shape))
    return tensor[index]
