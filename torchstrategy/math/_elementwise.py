"""tf.math's element-wise arithmetic with TF 2.21's eager dtype rules (both inputs one dtype, float-only ops
refuse ints): +, -, *, /, //, %, pow, the unary functions, rounding, clipping, add_n, l2_normalize."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import (
    DTypeError,
    dims,
    match_dtypes,
    require,
    to_tensor,
)


def _binary(x: Any, y: Any, op: str) -> tuple[torch.Tensor, torch.Tensor]:
    tx, ty = match_dtypes([x, y], op)
    return tx, ty


def _unary(x: Any, allowed: str, op: str) -> torch.Tensor:
    return require(to_tensor(x, op=op), allowed, op)


# ----- element-wise arithmetic --------------------------------------------------------------------------------


def add(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x + y; both must have one dtype (Python values take the other input's dtype).

    >>> add([1, 2], 3).tolist()
    [4, 5]
    """
    tx, ty = _binary(x, y, "tf.math.add")
    return tx + ty


def subtract(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x - y with one dtype."""
    tx, ty = _binary(x, y, "tf.math.subtract")
    return tx - ty


def multiply(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x * y with one dtype."""
    tx, ty = _binary(x, y, "tf.math.multiply")
    return tx * ty


def truediv(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y; integers are divided as floats (int8/int16/uint8 -> float32, int32/int64 -> float64, as TF).

    >>> truediv(7, 2).dtype
    torch.float64
    """
    tx, ty = _binary(x, y, "tf.math.truediv")
    require(tx, "numeric", "tf.math.truediv")
    if not (tx.is_floating_point() or tx.is_complex()):
        wide = tx.dtype in (torch.int32, torch.int64, torch.uint32, torch.uint64)
        target = torch.float64 if wide else torch.float32
        tx, ty = tx.to(target), ty.to(target)
    return tx / ty


def divide(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y, which is `truediv` (integers give floats)."""
    return truediv(x, y)


def floordiv(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """floor(x / y), keeping the dtype (ints stay ints)."""
    tx, ty = _binary(x, y, "tf.math.floordiv")
    require(tx, "numeric", "tf.math.floordiv")
    return torch.div(tx, ty, rounding_mode="floor")


def floormod(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x - floor(x / y) * y: the remainder has the sign of y, as Python's `%`."""
    tx, ty = _binary(x, y, "tf.math.floormod")
    require(tx, "numeric", "tf.math.floormod")
    return torch.remainder(tx, ty)


mod = floormod


def pow(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A001  (tf.math.pow)
    """x ** y with one dtype; integers to negative integer powers are refused as in TF."""
    tx, ty = _binary(x, y, "tf.math.pow")
    if not (tx.is_floating_point() or tx.is_complex()) and tx.dtype != torch.bool and bool((ty < 0).any()):
        raise DTypeError("tf.math.pow: integers to negative integer powers are not allowed; cast x to a float "
                         "dtype first.")
    return torch.pow(tx, ty)


def negative(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """-x (signed dtypes only)."""
    return -_unary(x, "signed", "tf.math.negative")


def abs(x: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A001  (tf.math.abs)
    """|x|, keeping the dtype."""
    return torch.abs(_unary(x, "numeric", "tf.math.abs"))


def sign(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """-1, 0 or 1 by the sign of x, keeping the dtype."""
    return torch.sign(_unary(x, "numeric", "tf.math.sign"))


def square(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """x * x, keeping the dtype."""
    tensor = _unary(x, "numeric", "tf.math.square")
    return tensor * tensor


def squared_difference(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """(x - y) ** 2 with one dtype."""
    tx, ty = _binary(x, y, "tf.math.squared_difference")
    return (tx - ty) * (tx - ty)


def _float_unary(fn: Any, tf_name: str) -> Any:
    def op(x: Any, name: Optional[str] = None) -> torch.Tensor:
        return fn(_unary(x, "float", tf_name))

    op.__name__ = tf_name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = f"`{tf_name}` element-wise; float (or complex) inputs only, ints are refused as in TF."
    return op


sqrt = _float_unary(torch.sqrt, "tf.math.sqrt")
rsqrt = _float_unary(torch.rsqrt, "tf.math.rsqrt")
exp = _float_unary(torch.exp, "tf.math.exp")
log = _float_unary(torch.log, "tf.math.log")
log1p = _float_unary(torch.log1p, "tf.math.log1p")
sigmoid = _float_unary(torch.sigmoid, "tf.math.sigmoid")
tanh = _float_unary(torch.tanh, "tf.math.tanh")
_softplus = _float_unary(torch.nn.functional.softplus, "tf.math.softplus")


def softplus(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """`tf.math.softplus`: log(exp(features) + 1); float inputs only, as in TF."""
    return _softplus(features)
reciprocal = _float_unary(torch.reciprocal, "tf.math.reciprocal")
sin = _float_unary(torch.sin, "tf.math.sin")
cos = _float_unary(torch.cos, "tf.math.cos")
floor = _float_unary(torch.floor, "tf.math.floor")
ceil = _float_unary(torch.ceil, "tf.math.ceil")


def round(x: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A001  (tf.math.round)
    """Rounds half to even (0.5 -> 0, 1.5 -> 2) as TF does; integer tensors come back unchanged."""
    tensor = _unary(x, "numeric", "tf.math.round")
    return torch.round(tensor) if tensor.is_floating_point() else tensor


def maximum(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise max with one dtype."""
    tx, ty = _binary(x, y, "tf.math.maximum")
    return torch.maximum(tx, ty)


def minimum(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise min with one dtype."""
    tx, ty = _binary(x, y, "tf.math.minimum")
    return torch.minimum(tx, ty)


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: Optional[str] = None) -> torch.Tensor:
    """t clipped into [clip_value_min, clip_value_max]; the bounds take t's dtype.

    >>> clip_by_value([1, 5, 9], 2, 6).tolist()
    [2, 5, 6]
    """
    tensor, low, high = match_dtypes([t, clip_value_min, clip_value_max], "tf.clip_by_value")
    return torch.minimum(torch.maximum(tensor, low), high)


def divide_no_nan(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y, but 0 wherever y == 0 (integers divide as floats, as in `truediv`)."""
    quotient = truediv(x, y)
    _, ty = _binary(x, y, "tf.math.divide_no_nan")
    return torch.where(ty == 0, torch.zeros_like(quotient), quotient)


def add_n(inputs: Any, name: Optional[str] = None) -> torch.Tensor:
    """The element-wise sum of a list of same-shape, same-dtype tensors."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("tf.math.add_n needs a non-empty list of tensors.")
    tensors = match_dtypes(list(inputs), "tf.math.add_n")
    if len({tuple(tensor.shape) for tensor in tensors}) > 1:
        raise ValueError(f"tf.math.add_n: all inputs need one shape, got {[tuple(t.shape) for t in tensors]}.")
    total = tensors[0].clone()
    for tensor in tensors[1:]:
        total = total + tensor
    return total


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: Optional[str] = None,
                 dim: Any = None) -> torch.Tensor:
    """x / sqrt(max(sum(x ** 2, axis), epsilon)) (float inputs only).

    >>> l2_normalize([3.0, 4.0]).tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    tensor = _unary(x, "float", "tf.math.l2_normalize")
    axis = dim if axis is None else axis
    axes = dims(axis, tensor.dim())
    squares = (tensor * tensor).sum(dim=axes, keepdim=True) if axes else (tensor * tensor).sum()
    eps = torch.tensor(epsilon, dtype=squares.dtype, device=squares.device)
    return tensor * torch.rsqrt(torch.maximum(squares, eps))
