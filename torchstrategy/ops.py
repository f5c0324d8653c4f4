"""The basic tf tensor functions (constant, convert_to_tensor, cast, reshape, stack, concat, ...), all
returning plain torch tensors; tf.math and the other array ops live in math/ and array_ops.py."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype

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


def _refuse_layout(op: str, layout: Any) -> None:
    if layout is not None:
        raise NotImplementedError(f"tf.{op}(layout=...) (a DTensor layout) is not supported by torchstrategy; "
                                  "place tensors with a tf.distribute strategy or keras.distribution instead.")


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


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """`value` as a tensor; `dtype_hint` is the preferred dtype for Python values when `dtype` is None."""
    if isinstance(value, torch.Tensor):
        return value if dtype is None else value.to(_dtype(dtype))
    if dtype is None and dtype_hint is not None:
        try:
            return constant(value, dtype_hint)
        except (TypeError, ValueError, RuntimeError):
            pass  # TF: a hint the value does not fit is ignored
    return constant(value, dtype)


def cast(x: Any, dtype: Any, name: Optional[str] = None) -> torch.Tensor:
    return convert_to_tensor(x).to(_dtype(dtype))


def reshape(tensor: Any, shape: Any, name: Optional[str] = None) -> torch.Tensor:
    """`tensor` with a new shape (-1 infers one dimension)."""
    return convert_to_tensor(tensor).reshape(tuple(shape))


def shape(x: Any) -> torch.Size:
    return convert_to_tensor(x).shape


def zeros(shape: Any, dtype: Any = torch.float32, name: Optional[str] = None, layout: Any = None) -> torch.Tensor:
    """A tensor of zeros (`layout`, a DTensor layout, is not supported)."""
    _refuse_layout("zeros", layout)
    return torch.zeros(tuple(shape) if not isinstance(shape, int) else (shape,), dtype=_dtype(dtype))


def ones(shape: Any, dtype: Any = torch.float32, name: Optional[str] = None, layout: Any = None) -> torch.Tensor:
    """A tensor of ones (`layout`, a DTensor layout, is not supported)."""
    _refuse_layout("ones", layout)
    return torch.ones(tuple(shape) if not isinstance(shape, int) else (shape,), dtype=_dtype(dtype))


def stack(values: Any, axis: int = 0, name: str = "stack") -> torch.Tensor:
    """Stacks same-shaped tensors along a new axis."""
    return torch.stack([convert_to_tensor(v) for v in values], dim=axis)


def concat(values: Any, axis: int, name: str = "concat") -> torch.Tensor:
    """Joins tensors along an existing axis."""
    return torch.cat([convert_to_tensor(v) for v in values], dim=axis)


def expand_dims(input: Any, axis: int, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """`input` with a size-1 axis inserted at `axis`."""
    return convert_to_tensor(input).unsqueeze(axis)


def squeeze(input: Any, axis: Any = None, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """`input` without its size-1 axes (only those in `axis` when given)."""
    x = convert_to_tensor(input)
    return x.squeeze() if axis is None else x.squeeze(axis)


def one_hot(indices: Any, depth: int, on_value: Any = None, off_value: Any = None, axis: Optional[int] = None,
            dtype: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """One-hot rows of `depth` (on_value 1, off_value 0 by default; an index outside [0, depth) gives an
    all-off row, as TF); the new axis goes last unless `axis` says otherwise. The dtype is `dtype`, else
    on_value's/off_value's, else float32."""
    on = None if on_value is None else convert_to_tensor(on_value)
    off = None if off_value is None else convert_to_tensor(off_value)
    if dtype is None:
        dtype = on.dtype if on is not None else off.dtype if off is not None else torch.float32
    dtype = _dtype(dtype)
    on = torch.ones((), dtype=dtype) if on is None else on.to(dtype)
    off = torch.zeros((), dtype=dtype) if off is None else off.to(dtype)
    index = convert_to_tensor(indices).long()
    hot = torch.nn.functional.one_hot(index.clamp(0, max(int(depth) - 1, 0)), int(depth)).bool()
    hot &= ((index >= 0) & (index < int(depth))).unsqueeze(-1)
    out = torch.where(hot, on.to(hot.device), off.to(hot.device))
    return out if axis is None or axis == -1 else out.movedim(-1, axis)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range") -> torch.Tensor:  # noqa: A001
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


def print(*inputs: Any, **kwargs: Any) -> None:  # noqa: A001  (tf.print)
    """Prints the inputs (tensors as nested lists)."""
    import builtins

    builtins.print(*[v.tolist() if isinstance(v, torch.Tensor) else v for v in inputs], **kwargs)
