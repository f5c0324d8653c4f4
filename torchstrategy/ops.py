"""The basic tf tensor functions (constant, convert_to_tensor, cast, reshape, stack, concat, ...), all
returning plain torch tensors; tf.math and the other array ops live in math/ and array_ops.py."""
from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import byte_strings, refuse_layout
from torchstrategy.dtypes import as_dtype
from torchstrategy.ragged import DynamicRaggedShape, RaggedTensor
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


def _string_dtype(dtype: Any) -> bool:
    """True when `dtype` names tf.string (the object dtype, 'string', str or bytes)."""
    if isinstance(dtype, np.dtype):
        return dtype.kind in "OSU"
    return isinstance(dtype, str) and dtype == "string" or dtype in (str, bytes)


def _is_strings(value: Any) -> bool:
    """True for a (nested) Python str/bytes value or a NumPy string array: TF makes a tf.string tensor."""
    if isinstance(value, (str, bytes, np.bytes_, np.str_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "OSU"
    if isinstance(value, (list, tuple)) and value:
        return _is_strings(value[0])
    return False


def _string_tensor(value: Any, dtype: Any, shape: Any, op: str) -> np.ndarray:
    """A tf.string tensor (a NumPy object array of bytes, 0-d for a scalar, as tf.data and tf.strings hold them)."""
    if dtype is not None and not _string_dtype(dtype):
        raise TypeError(f"{op}: cannot convert the strings {value!r} to {dtype}; pass numbers, or parse the "
                        "strings with tf.strings.to_number.")
    array = byte_strings(value, op)
    if shape is not None:
        array = _reshaped_strings(array, shape, op)
    return array


def _reshaped_strings(array: np.ndarray, shape: Any, op: str) -> np.ndarray:
    dims = tuple(int(d) for d in (shape if isinstance(shape, (list, tuple)) else [shape]))
    count = int(np.prod(dims)) if dims else 1
    if array.size == count:
        return array.reshape(dims)
    if array.size == 1:
        return np.full(dims, array.reshape(-1)[0], dtype=object)
    raise TypeError(f"{op}: expected {count} elements for shape {list(dims)}, got {array.size}.")


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const") -> Any:
    """A tensor from a Python value or array; floats default to float32 and ints to int32 as in TF; strings
    (str or bytes, nested) give a tf.string tensor, a NumPy object array of bytes.

    >>> constant([b"a", "b"]).tolist()
    [b'a', b'b']
    """
    if _is_strings(value) or _string_dtype(dtype):
        return _string_tensor(value, dtype, shape, "tf.constant")
    if isinstance(value, np.ndarray) and value.dtype == np.float64 and dtype is None:
        dtype = torch.float64
    if dtype is not None and not isinstance(value, (np.ndarray, torch.Tensor)):
        target = _dtype(dtype)
        kind = np.asarray(value).dtype.kind
        if (kind in "fc" and not (target.is_floating_point or target.is_complex)) or (kind == "c" and
                                                                                      not target.is_complex):
            raise TypeError(f"tf.constant: cannot convert {value!r} to a {target} tensor without losing its "
                            "fractional part; round it first or pick a float dtype.")
    tensor = torch.as_tensor(value, dtype=_dtype(dtype))
    if dtype is None and tensor.dtype == torch.float64 and not isinstance(value, (np.ndarray, torch.Tensor)):
        tensor = tensor.to(torch.float32)
    if dtype is None and tensor.dtype == torch.int64 and not isinstance(value, (np.ndarray, torch.Tensor)):
        tensor = tensor.to(torch.int32)
    if shape is None:
        return tensor
    dims = [int(d) for d in (shape if isinstance(shape, (list, tuple, torch.Size)) else [shape])]
    if tensor.numel() == 1 and int(np.prod(dims)) != 1:
        return tensor.reshape(()).expand(*dims).clone()  # TF fills the shape with a scalar value
    if tensor.numel() != int(np.prod(dims)):
        raise TypeError(f"tf.constant: expected {int(np.prod(dims))} elements for shape {dims}, got "
                        f"{tensor.numel()}.")
    return tensor.reshape(dims)


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: Optional[str] = None) -> Any:
    """`value` as a tensor: tensors pass through (cast to `dtype` when given), strings give a tf.string tensor,
    an object with TF's `__tf_tensor__` (tf.IndexedSlices: the dense tensor) gives that tensor, other values
    convert as tf.constant does; `dtype_hint` is the dtype to use when the value allows it."""
    if isinstance(value, torch.Tensor):
        return value if dtype is None else value.to(_dtype(dtype))
    tensor_like = getattr(type(value), "__tf_tensor__", None)  # TF's conversion protocol (tf.IndexedSlices, ...)
    if tensor_like is not None:
        return tensor_like(value, dtype, name)
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU" and (dtype is None or _string_dtype(dtype)):
        if value.dtype == object and all(isinstance(item, bytes) for item in value.reshape(-1)):
            return value  # already a tf.string tensor
        return byte_strings(value, "tf.convert_to_tensor")
    if dtype is None and dtype_hint is not None and not _is_strings(value):
        try:
            return constant(value, dtype_hint)
        except (TypeError, ValueError, RuntimeError):
            pass  # the hint does not fit the value: convert as without it, as TF does
    return constant(value, dtype)


def cast(x: Any, dtype: Any, name: Optional[str] = None) -> torch.Tensor:
    return convert_to_tensor(x).to(_dtype(dtype))


def reshape(tensor: Any, shape: Any, name: Optional[str] = None) -> torch.Tensor:
    """`tensor` with a new shape (-1 infers one dimension)."""
    return convert_to_tensor(tensor).reshape(tuple(shape))


def shape(input: Any, out_type: Any = None, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The shape of `input` as a 1-D int32 tensor (or `out_type`, tf.int32 or tf.int64), as TF returns it; a
    RaggedTensor's as a tf.experimental.DynamicRaggedShape in the same dtype.

    >>> shape([[1, 2, 3]]).tolist()
    [1, 3]
    """
    if isinstance(input, RaggedTensor):  # TF 2.21: a ragged tensor's shape is a DynamicRaggedShape (int32 too)
        return DynamicRaggedShape.from_tensor(input, dtype=torch.int32 if out_type is None else out_type)
    dims = _static_shape(input)
    dtype = torch.int32 if out_type is None else as_dtype(out_type)
    if dtype not in (torch.int32, torch.int64):
        raise TypeError(f"tf.shape: out_type must be tf.int32 or tf.int64, got {out_type!r}.")
    return torch.tensor(dims, dtype=dtype)


def _static_shape(value: Any) -> list:
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return list(value.shape)
    if _is_strings(value):
        return list(byte_strings(value, "tf.shape").shape)
    return list(convert_to_tensor(value).shape)


def zeros(shape: Any, dtype: Any = torch.float32, name: Optional[str] = None, layout: Any = None) -> torch.Tensor:
    """A tensor of zeros (`layout`, a DTensor layout, is not supported)."""
    refuse_layout("zeros", layout)
    return torch.zeros(tuple(shape) if not isinstance(shape, int) else (shape,), dtype=_dtype(dtype))


def ones(shape: Any, dtype: Any = torch.float32, name: Optional[str] = None, layout: Any = None) -> torch.Tensor:
    """A tensor of ones (`layout`, a DTensor layout, is not supported)."""
    refuse_layout("ones", layout)
    return torch.ones(tuple(shape) if not isinstance(shape, int) else (shape,), dtype=_dtype(dtype))


def stack(values: Any, axis: int = 0, name: str = "stack") -> torch.Tensor:
    """Stacks same-shaped tensors along a new axis."""
    return torch.stack([convert_to_tensor(v) for v in values], dim=axis)


def concat(values: Any, axis: int, name: str = "concat") -> torch.Tensor:
    """Joins tensors along an existing axis (RaggedTensors through tf.ragged's concat)."""
    if any(isinstance(v, RaggedTensor) for v in values):
        return ragged_concat(values, axis)
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
    """Prints tensors as TF does (to stderr unless `output_stream` says otherwise): `summarize` first and last
    entries per axis (3; -1 for all), numbers in their shortest form, string tensors quoted; keyword
    arguments sep=' ', end='\n', output_stream (a stream, 'file://path', or a logging function), name."""
    from torchstrategy._machinery.print_format import format_value

    unknown = set(kwargs) - {"output_stream", "summarize", "sep", "end", "name"}
    if unknown:
        raise TypeError(f"tf.print got unexpected keyword arguments: {sorted(unknown)}")
    summarize = kwargs.get("summarize", 3)
    summarize = None if summarize in (None, -1) else int(summarize)
    text = kwargs.get("sep", " ").join(format_value(value, summarize) for value in inputs)
    _emit(text + kwargs.get("end", "\n"), kwargs.get("output_stream", sys.stderr))


def _emit(text: str, stream: Any) -> None:
    if isinstance(stream, str):
        if not stream.startswith("file://"):
            raise ValueError(f"tf.print: output_stream {stream!r} is not a stream; use sys.stdout, sys.stderr, a "
                             "logging function or 'file://path'.")
        with open(stream[len("file://"):], "a", encoding="utf-8") as handle:
            handle.write(text)
        return
    if hasattr(stream, "write"):
        stream.write(text)
        return
    if callable(stream):  # logging.info and friends
        stream(text.rstrip("\n"))
        return
    raise ValueError(f"tf.print: unsupported output_stream {stream!r}.")
