"""TF's eager conversion and dtype rules for op inputs (torch tensors, NumPy arrays, Python values),
shared by tf.math, the array ops, tf.linalg and tf.random: no silent promotion, Python floats -> float32."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.errors import InvalidArgumentError

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
COMPLEX = (torch.complex64, torch.complex128)
UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


class DTypeError(InvalidArgumentError, TypeError):
    """An op got a dtype TF refuses (mixed dtypes, an int where a float is needed). It is both a
    `TypeError` and `tf.errors.InvalidArgumentError`, since TF raises either depending on the op."""

    def __init__(self, message: str) -> None:  # raised by our ops with a message only (no node_def or op)
        super().__init__(None, None, message)

    def __reduce__(self) -> Any:
        return (type(self), (self.message,))


def is_typed(value: Any) -> bool:
    """True for values that carry their own dtype (tensors, NumPy arrays and NumPy scalars)."""
    return isinstance(value, (torch.Tensor, np.ndarray, np.generic))


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _numpy_to_tensor(array: np.ndarray, op: str) -> torch.Tensor:
    if array.dtype.kind in "OSU":
        raise TypeError(f"{op}: got a string array ({array.dtype}); string values need tf.strings ops, "
                        "or convert them first with tf.strings.to_number.")
    return torch.from_numpy(np.array(array, copy=True))


def to_tensor(value: Any, hint: Optional[torch.dtype] = None, op: str = "op") -> torch.Tensor:
    """`value` as a torch tensor the way TF converts op inputs.

    Tensors and NumPy values keep their dtype; an object with TF's `__tf_tensor__` (tf.IndexedSlices) gives
    that tensor. Python values take `hint` (the dtype of the op's other
    tensor inputs) when given, and refuse it when TF would (2.5 as int32, 1 as bool); without a hint
    Python floats become float32 and ints int32 (int64 when they do not fit), as `tf.constant` does.

    >>> to_tensor(1.5).dtype
    torch.float32
    """
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        return _numpy_to_tensor(np.asarray(value), op)
    tensor_like = getattr(type(value), "__tf_tensor__", None)  # TF's conversion protocol (tf.IndexedSlices, ...)
    if tensor_like is not None:
        return tensor_like(value)
    if isinstance(value, (list, tuple)) and any(isinstance(item, torch.Tensor) for item in value):
        items = [to_tensor(item, hint, op) for item in value]
        return torch.stack(match_dtypes(items, op))
    array = np.asarray(value)
    if array.dtype.kind in "OSU":
        raise TypeError(f"{op}: cannot convert {value!r} to a numeric tensor; pass numbers (strings belong "
                        "to tf.strings ops).")
    if hint is not None:
        return _with_hint(array, hint, value, op)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    elif array.dtype.kind == "i" and (not array.size or (-(2**31) <= array.min() and array.max() < 2**31)):
        array = array.astype(np.int32)
    return torch.from_numpy(np.array(array, copy=True))


def _with_hint(array: np.ndarray, hint: torch.dtype, value: Any, op: str) -> torch.Tensor:
    kind = array.dtype.kind
    refused = (
        (hint == torch.bool and kind != "b")
        or (hint != torch.bool and kind == "b")
        or (not hint.is_floating_point and not hint.is_complex and kind in "fc")
        or (hint in UNSIGNED and kind == "i" and array.size and array.min() < 0)
    )
    if refused:
        raise DTypeError(f"{op}: cannot convert {value!r} to a {_dtype_name(hint)} tensor to match the op's "
                         f"other input; TF does not promote dtypes, so use tf.cast(...) on one of them.")
    return torch.from_numpy(np.array(array, copy=True)).to(hint)


def match_dtypes(values: list, op: str) -> list:
    """Converts op inputs that must share one dtype: the first typed input fixes it, Python values follow it,
    and two typed inputs of different dtypes are refused as TF refuses them."""
    anchor = next((value for value in values if is_typed(value)), None)
    if anchor is None:
        first = to_tensor(values[0], op=op)
        tensors = [first] + [to_tensor(value, first.dtype, op) for value in values[1:]]
    else:
        anchor_tensor = to_tensor(anchor, op=op)
        dtype = anchor_tensor.dtype
        device = next((v.device for v in values if isinstance(v, torch.Tensor)), anchor_tensor.device)
        # Python and NumPy values join the first torch input's device (a GPU tensor + 1 works as in TF).
        tensors = [to_tensor(value, None if is_typed(value) else dtype, op).to(device)
                   if not isinstance(value, torch.Tensor) else value for value in values]
    dtypes = {tensor.dtype for tensor in tensors}
    if len(dtypes) > 1:
        names = " and ".join(_dtype_name(tensor.dtype) for tensor in tensors)
        raise DTypeError(f"{op}: inputs have different dtypes ({names}); TF does not promote dtypes, "
                         "so cast one with tf.cast(x, dtype) first.")
    return tensors


def require(tensor: torch.Tensor, allowed: str, op: str) -> torch.Tensor:
    """Refuses dtypes an op does not take: allowed is 'float' (floats and complex), 'real' (floats only),
    'bool', 'numeric' (anything but bool) or 'signed' (numeric, not unsigned)."""
    dtype = tensor.dtype
    ok = {
        "float": dtype in FLOATS or dtype in COMPLEX,
        "real": dtype in FLOATS,
        "bool": dtype == torch.bool,
        "numeric": dtype != torch.bool,
        "signed": dtype != torch.bool and dtype not in UNSIGNED,
    }[allowed]
    if not ok:
        advice = {"float": "cast it first, e.g. tf.cast(x, tf.float32)", "real": "cast it to a float dtype first",
                  "bool": "compare it first, e.g. tf.not_equal(x, 0)", "numeric": "cast it first, e.g. tf.cast(x, "
                  "tf.int32)", "signed": "cast it to a signed dtype first"}[allowed]
        raise DTypeError(f"{op} does not take {_dtype_name(dtype)} tensors; {advice}.")
    return tensor


def refuse_layout(op: str, layout: Any) -> None:
    """Raises NotImplementedError when a creation op `tf.<op>` is given a DTensor `layout` (only None is honoured)."""
    if layout is not None:
        raise NotImplementedError(f"tf.{op}(layout=...) (a DTensor layout) is not supported by torchstrategy; "
                                  "place tensors with a tf.distribute strategy or keras.distribution instead.")


def dims(axis: Any, rank: int) -> Optional[tuple]:
    """TF's `axis` argument (None, an int, a list or a tensor) as a tuple of dims, None meaning all."""
    if axis is None:
        return None
    if isinstance(axis, (torch.Tensor, np.ndarray)):
        axis = axis.tolist()
    axes = tuple(int(a) for a in axis) if isinstance(axis, (list, tuple)) else (int(axis),)
    for a in axes:
        if not -max(rank, 1) <= a < max(rank, 1):
            raise InvalidArgumentError(None, None, f"axis {a} is out of range for a tensor of rank {rank}: "
                                       f"use -{rank} <= axis < {rank}.")
    return axes


def int_list(value: Any, what: str) -> list:
    """A shape-like argument (list, tuple, tensor, array or int) as a list of Python ints."""
    if isinstance(value, (torch.Tensor, np.ndarray)):
        value = value.tolist()
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    try:
        return [int(item) for item in value]
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a list of ints, got {value!r}.") from None


def as_bytes(item: Any, op: str) -> bytes:
    """One string item (str, bytes, NumPy bytes) as bytes; anything else is refused, naming `op`."""
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, np.bytes_):
        return bytes(item)
    raise TypeError(f"{op} takes strings (str or bytes), got {item!r} of type {type(item).__name__}; turn "
                    "numbers into strings with tf.strings.as_string first.")


def byte_strings(value: Any, op: str) -> np.ndarray:
    """`value` as an object array of bytes, keeping its shape; numbers are refused."""
    if isinstance(value, torch.Tensor):
        raise TypeError(f"{op} takes strings, got a {value.dtype} tensor; convert numbers with "
                        "tf.strings.as_string first.")
    array = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if array.dtype.kind not in "OSU":
        raise TypeError(f"{op} takes strings, got a {array.dtype} array; convert numbers with "
                        "tf.strings.as_string first.")
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = as_bytes(item, op)
    return out
