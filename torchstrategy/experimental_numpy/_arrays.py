"""How tf.experimental.numpy turns its inputs (torch tensors, NumPy arrays, Python values, nested lists) into
torch tensors: one dtype per call from TF's `result_type`, tensors kept on their device and in autograd."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.experimental_numpy import _dtypes


def _has_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    return isinstance(value, (list, tuple)) and any(_has_tensor(item) for item in value)


def _device(values: Sequence) -> Optional[torch.device]:
    for value in values:
        if isinstance(value, torch.Tensor):
            return value.device
        if isinstance(value, (list, tuple)):
            found = _device(value)
            if found is not None:
                return found
    return None


def _has_strings(value: Any) -> bool:
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "OSU"
    return isinstance(value, (list, tuple)) and any(_has_strings(item) for item in value)


def _refuse_strings(value: Any, op: str) -> None:
    if _has_strings(value):
        raise TypeError(f"tnp.{op}: got strings ({value!r}); tf.experimental.numpy computes on numbers here "
                        "(string tensors belong to tf.strings).")


def _from_numpy(array: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.bfloat16:
        return torch.from_numpy(np.array(array, dtype=np.float32, copy=True)).to(torch.bfloat16)
    return torch.from_numpy(np.array(array, dtype=_dtypes.numpy_dtype(dtype), copy=True))


def _convert(value: Any, dtype: torch.dtype, device: Optional[torch.device], op: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        out = value if value.dtype == dtype else value.to(dtype)
        return out if device is None or out.device == device else out.to(device)
    if isinstance(value, (list, tuple)) and _has_tensor(value):
        items = [_convert(item, dtype, device, op) for item in value]
        shapes = {tuple(item.shape) for item in items}
        if len(shapes) > 1:
            raise ValueError(f"tnp.{op}: the nested sequence is ragged (shapes {sorted(shapes)}); every item "
                             "must have one shape.")
        return torch.stack(items) if items else torch.zeros(0, dtype=dtype, device=device)
    _refuse_strings(value, op)
    try:
        array = np.asarray(value)
    except ValueError as error:
        raise ValueError(f"tnp.{op}: cannot make an array of {value!r} ({error}).") from None
    if array.dtype.kind in "OSU":
        raise TypeError(f"tnp.{op}: cannot convert {value!r} to a numeric array; pass numbers (strings belong to "
                        "tf.strings).")
    if array.dtype.kind == "c" and not dtype.is_complex:
        array = array.real
    tensor = _from_numpy(array, dtype)
    return tensor if device is None else tensor.to(device)


def asarray(value: Any, dtype: Any = None, op: str = "asarray") -> torch.Tensor:
    """`value` as a torch tensor: tensors pass through (cast when `dtype` differs), anything else takes `dtype`
    or TF's result_type of its items (Python ints int64, floats float64 or float32 under prefer_float32)."""
    target = None if dtype is None else _dtypes.torch_dtype(dtype)
    if isinstance(value, torch.Tensor):
        return value if target is None or value.dtype == target else value.to(target)
    if target is None:
        _refuse_strings(value, op)
        if isinstance(value, (np.ndarray, np.generic)):
            target = _dtypes.torch_dtype(value.dtype)
        else:
            target = _dtypes.result_type(value) if not _is_empty(value) else torch.float64
    return _convert(value, target, _device([value]), op)


def _is_empty(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(_is_empty(item) for item in value)


def promote(*values: Any, op: str = "op") -> list:
    """The inputs as tensors of one dtype (TF's result_type of them), on the first tensor's device."""
    for value in values:
        if not isinstance(value, torch.Tensor):
            _refuse_strings(value, op)
    dtype = _dtypes.result_type(*[v if not _is_empty(v) else np.zeros(0) for v in values])
    device = _device(values)
    return [_convert(value, dtype, device, op) for value in values]


def promote_to(dtype: torch.dtype, *values: Any, op: str = "op") -> list:
    """The inputs as tensors of `dtype`, on the first tensor's device."""
    device = _device(values)
    return [_convert(value, dtype, device, op) for value in values]


def to_float(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` as TF's tnp feeds a float-only op: float and complex dtypes kept, the rest float64."""
    return tensor if _dtypes.is_inexact(tensor.dtype) else tensor.to(_dtypes.default_float())


def axis_tuple(axis: Any, ndim: int, op: str) -> Optional[tuple]:
    """An `axis` argument (None, int, sequence, tensor) as a tuple of non-negative dims (None: all)."""
    if axis is None:
        return None
    if isinstance(axis, (torch.Tensor, np.ndarray)):
        axis = axis.tolist()
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    out = []
    for item in axes:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
            raise TypeError(f"tnp.{op}: axis must be an int or a tuple of ints, got {axis!r}.")
        index = int(item)
        if not -max(ndim, 1) <= index < max(ndim, 1):
            raise ValueError(f"tnp.{op}: axis {index} is out of bounds for an array of dimension {ndim}.")
        out.append(index % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"tnp.{op}: repeated axis in {axis!r}.")
    return tuple(out)


def one_axis(axis: Any, ndim: int, op: str) -> int:
    """A single `axis` argument as a non-negative dim."""
    axes = axis_tuple(axis, ndim, op)
    if axes is None or len(axes) != 1:
        raise TypeError(f"tnp.{op}: axis must be one int, got {axis!r}.")
    return axes[0]


def shape_tuple(shape: Any, op: str) -> tuple:
    """A shape argument (int, sequence, tensor) as a tuple of ints."""
    if isinstance(shape, (torch.Tensor, np.ndarray)):
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        dims = tuple(int(size) for size in shape)
    except (TypeError, ValueError):
        raise TypeError(f"tnp.{op}: shape must be an int or a sequence of ints, got {shape!r}.") from None
    return dims
