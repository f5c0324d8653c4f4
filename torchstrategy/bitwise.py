"""`tf.bitwise`: and/or/xor/invert and shifts on integer tensors of one dtype (TF refuses floats and bools)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import DTypeError, match_dtypes, to_tensor

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _ints(values: list, op: str) -> list:
    tensors = match_dtypes(values, op)
    if tensors[0].is_floating_point() or tensors[0].is_complex() or tensors[0].dtype == torch.bool:
        raise DTypeError(f"{op} takes integer tensors, got {tensors[0].dtype}; cast with tf.cast(x, tf.int32).")
    return tensors


def bitwise_and(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x & y element-wise."""
    a, b = _ints([x, y], "tf.bitwise.bitwise_and")
    return a & b


def bitwise_or(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x | y element-wise."""
    a, b = _ints([x, y], "tf.bitwise.bitwise_or")
    return a | b


def bitwise_xor(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x ^ y element-wise."""
    a, b = _ints([x, y], "tf.bitwise.bitwise_xor")
    return a ^ b


def invert(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """~x element-wise (all bits flipped).

    >>> invert(torch.tensor([0], dtype=torch.uint8)).tolist()
    [255]
    """
    (a,) = _ints([to_tensor(x, op="tf.bitwise.invert")], "tf.bitwise.invert")
    return ~a


def left_shift(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x << y element-wise."""
    a, b = _ints([x, y], "tf.bitwise.left_shift")
    return torch.bitwise_left_shift(a, b)


def right_shift(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x >> y element-wise (arithmetic for signed integers)."""
    a, b = _ints([x, y], "tf.bitwise.right_shift")
    return torch.bitwise_right_shift(a, b)
