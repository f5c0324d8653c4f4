"""tf.math's comparisons and logic: greater/less/equal (bool tensors; equal and not_equal also compare
strings), logical_and/or/xor/not on bool tensors, and the is_nan / is_inf / is_finite tests."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.math._elementwise import _binary, _unary
from torchstrategy._tensor_convert import (
    byte_strings,
    match_dtypes,
    require,
    to_tensor,
)


def _compare(fn: Any, tf_name: str) -> Any:
    def op(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
        tx, ty = _binary(x, y, tf_name)
        return fn(tx, ty)

    op.__name__ = tf_name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = f"`{tf_name}` element-wise, a bool tensor; both inputs need one dtype."
    return op


greater = _compare(torch.gt, "tf.math.greater")
greater_equal = _compare(torch.ge, "tf.math.greater_equal")
less = _compare(torch.lt, "tf.math.less")
less_equal = _compare(torch.le, "tf.math.less_equal")
_tensor_equal = _compare(torch.eq, "tf.math.equal")
_tensor_not_equal = _compare(torch.ne, "tf.math.not_equal")


def _is_string(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SU" or (value.dtype == object and value.size > 0 and
                                            isinstance(value.reshape(-1)[0], (str, bytes)))
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, (str, bytes)) for v in value)


def _string_compare(x: Any, y: Any, op: str) -> torch.Tensor:
    left, right = np.broadcast_arrays(byte_strings(x, op), byte_strings(y, op))
    same = np.array([a == b for a, b in zip(left.reshape(-1), right.reshape(-1))], dtype=bool)
    return torch.from_numpy(same.reshape(left.shape))


def equal(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x == y element-wise, a bool tensor; both inputs need one dtype. Strings (object arrays of bytes,
    str or bytes) compare with strings, as tf.equal on tf.string tensors.

    >>> equal([1, 2], 2).tolist()
    [False, True]
    """
    if _is_string(x) or _is_string(y):
        return _string_compare(x, y, "tf.math.equal")
    return _tensor_equal(x, y)


def not_equal(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x != y element-wise (strings compare with strings, as in `equal`)."""
    if _is_string(x) or _is_string(y):
        return ~_string_compare(x, y, "tf.math.not_equal")
    return _tensor_not_equal(x, y)


def _logical(fn: Any, tf_name: str) -> Any:
    def op(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
        tx, ty = match_dtypes([to_tensor(x, torch.bool, tf_name) if not isinstance(x, torch.Tensor) else x,
                               y if isinstance(y, torch.Tensor) else to_tensor(y, torch.bool, tf_name)], tf_name)
        return fn(require(tx, "bool", tf_name), require(ty, "bool", tf_name))

    op.__name__ = tf_name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = f"`{tf_name}` element-wise on bool tensors (other dtypes are refused, as in TF)."
    return op


logical_and = _logical(torch.logical_and, "tf.math.logical_and")
logical_or = _logical(torch.logical_or, "tf.math.logical_or")
_logical_xor = _logical(torch.logical_xor, "tf.math.logical_xor")


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> torch.Tensor:
    """`tf.math.logical_xor` element-wise on bool tensors (other dtypes are refused, as in TF)."""
    return _logical_xor(x, y)


def logical_not(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """NOT x on a bool tensor."""
    tensor = x if isinstance(x, torch.Tensor) else to_tensor(x, torch.bool, "tf.math.logical_not")
    return torch.logical_not(require(tensor, "bool", "tf.math.logical_not"))


def is_nan(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """True where x is NaN (float inputs only)."""
    return torch.isnan(_unary(x, "real", "tf.math.is_nan"))


def is_inf(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """True where x is +-inf (float inputs only)."""
    return torch.isinf(_unary(x, "real", "tf.math.is_inf"))


def is_finite(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """True where x is neither NaN nor inf (float inputs only)."""
    return torch.isfinite(_unary(x, "real", "tf.math.is_finite"))
