"""tf.experimental.numpy's dtypes and dtype rules: NumPy's scalar types as the dtype names, TF's
`result_type` (NumPy's promotion, Python scalars weak, `prefer_float32`) and the torch <-> NumPy dtype map."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import torch

from torchstrategy import _context

# TF's tnp names its dtypes with NumPy's scalar types (tnp.float32 is np.float32), so NumPy code reads the same.
bool_ = np.bool_
complex64, complex128 = np.complex64, np.complex128
complex_ = np.complex128
float16, float32, float64 = np.float16, np.float32, np.float64
float_ = np.float64
inexact = np.inexact
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
int_ = np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
object_ = np.object_
string_ = np.bytes_
unicode_ = np.str_
iinfo = np.iinfo
issubdtype = np.issubdtype

_TO_TORCH = {
    np.dtype(np.bool_): torch.bool, np.dtype(np.int8): torch.int8, np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64, np.dtype(np.uint8): torch.uint8,
    np.dtype(np.uint16): torch.uint16, np.dtype(np.uint32): torch.uint32, np.dtype(np.uint64): torch.uint64,
    np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
    np.dtype(np.complex64): torch.complex64, np.dtype(np.complex128): torch.complex128,
}
_TO_NUMPY = {value: key for key, value in _TO_TORCH.items()}
_STATE_KEY = "tnp_prefer_float32"


def prefer_float32() -> bool:
    """True once `experimental_enable_numpy_behavior(prefer_float32=True)` ran: Python floats are float32."""
    return bool(_context.config_setting(_STATE_KEY))


def set_prefer_float32(value: bool) -> None:
    """Sets whether tnp treats Python floats (and complexes) as float32 (complex64) rather than float64."""
    _context.set_config_setting(_STATE_KEY, bool(value))


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    """The NumPy dtype of a torch dtype (bfloat16 has none: it is refused with what to do)."""
    try:
        return _TO_NUMPY[dtype]
    except KeyError:
        raise TypeError(f"tf.experimental.numpy has no NumPy dtype for {dtype}; cast to float32 first "
                        "(tnp.asarray(x, tnp.float32)).") from None


def torch_dtype(dtype: Any) -> torch.dtype:
    """A dtype spelling (tnp.float32, np.dtype, 'int32', float, torch.float32) as a torch dtype; Python's
    `int`/`float`/`complex` read as NumPy does (int64, float64, complex128)."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is builtins.bool:
        return torch.bool
    if isinstance(dtype, str) and dtype == "bfloat16":
        return torch.bfloat16
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"tf.experimental.numpy: {dtype!r} is not a dtype; pass one such as tnp.float32, "
                        "'int64' or float.") from None
    try:
        return _TO_TORCH[resolved]
    except KeyError:
        raise TypeError(f"tf.experimental.numpy does not support dtype {resolved} on torch; use a numeric dtype "
                        "(bool, int8-64, uint8-64, float16-64, complex64/128).") from None


def _flatten(values: Any) -> list:
    out = []
    for value in values:
        if isinstance(value, (list, tuple)):
            out.extend(_flatten(value))
        else:
            out.append(value)
    return out


def _operand(value: Any) -> Any:
    """One input to NumPy's result_type as TF gives it: tensors by dtype (strong), Python scalars by value
    (weak; float32/complex64 under prefer_float32), dtype spellings as dtypes."""
    if isinstance(value, torch.Tensor):
        return numpy_dtype(value.dtype) if value.dtype != torch.bfloat16 else np.dtype(np.float16)
    if isinstance(value, torch.dtype):
        return numpy_dtype(value) if value != torch.bfloat16 else np.dtype(np.float16)
    if isinstance(value, builtins.float) and prefer_float32():
        return np.float32(value)
    if isinstance(value, builtins.complex) and prefer_float32():
        return np.complex64(value)
    return value


def _has_bfloat16(values: list) -> tuple:
    bf16 = any((isinstance(v, torch.Tensor) and v.dtype == torch.bfloat16) or v is torch.bfloat16 for v in values)
    f16 = any((isinstance(v, torch.Tensor) and v.dtype == torch.float16) or v is torch.float16
              or (isinstance(v, (np.ndarray, np.generic)) and v.dtype == np.float16) for v in values)
    return bf16, f16


def result_type(*arrays_and_dtypes: Any) -> torch.dtype:
    """The dtype NumPy's promotion gives these arrays, values and dtypes, as TF's tnp computes it: tensors and
    NumPy arrays count by dtype, Python scalars (and the items of Python lists) by kind only, and nothing at
    all gives float64. Returned as a torch dtype (tnp results are torch tensors).

    >>> result_type(torch.ones(2, dtype=torch.int8), 2.5)
    torch.float64
    """
    items = _flatten(arrays_and_dtypes)
    if not items:
        return torch.float64
    operands = [_operand(item) for item in items]
    try:
        found = np.result_type(*operands)
    except (TypeError, ValueError) as error:
        raise TypeError(f"tf.experimental.numpy: no common dtype for {items!r} ({error}).") from None
    bf16, f16 = _has_bfloat16(items)
    if bf16 and found == np.float16:
        return torch.float32 if f16 else torch.bfloat16
    return torch_dtype(found)


def promote_types(type1: Any, type2: Any) -> Any:
    """The smallest dtype both dtypes convert to safely (NumPy's promote_types), as a NumPy dtype."""
    return np.promote_types(_as_numpy(type1), _as_numpy(type2))


def _as_numpy(dtype: Any) -> np.dtype:
    return numpy_dtype(dtype) if isinstance(dtype, torch.dtype) else np.dtype(dtype)


def finfo(dtype: Any) -> np.finfo:
    """NumPy's float limits (eps, max, tiny, ...) of a float dtype, or of an array's dtype."""
    if isinstance(dtype, torch.Tensor):
        dtype = dtype.dtype
    if dtype is torch.bfloat16:
        raise TypeError("tnp.finfo: bfloat16 has no NumPy finfo here; use torch.finfo(torch.bfloat16).")
    return np.finfo(_as_numpy(dtype))


def is_inexact(dtype: torch.dtype) -> bool:
    """True for float and complex torch dtypes."""
    return dtype.is_floating_point or dtype.is_complex


def default_float() -> torch.dtype:
    """The dtype TF's tnp gives a non-float input of a float op (`result_type(float)`): float64."""
    return torch.float64
