"""tf.math's trigonometric and hyperbolic functions (tan, asin, acos, atan, atan2, sinh, cosh, asinh, acosh,
atanh), the C-style divisions (realdiv, truncatediv, truncatemod), complex, scalar_mul and saturate_cast."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import match_dtypes, require, to_tensor
from torchstrategy.dtypes import as_dtype

__all__ = ["tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "realdiv",
           "truncatediv", "truncatemod", "complex", "scalar_mul", "saturate_cast"]


def _float_unary(x: Any, fn: Any, op: str) -> torch.Tensor:
    return fn(require(to_tensor(x, op=op), "float", op))


def tan(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise tangent (float or complex input)."""
    return _float_unary(x, torch.tan, "tf.math.tan")


def asin(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise arcsine (NaN outside [-1, 1])."""
    return _float_unary(x, torch.asin, "tf.math.asin")


def acos(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise arccosine (NaN outside [-1, 1])."""
    return _float_unary(x, torch.acos, "tf.math.acos")


def atan(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise arctangent."""
    return _float_unary(x, torch.atan, "tf.math.atan")


def atan2(y: Any, x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The angle of the point (x, y), element-wise, in [-pi, pi]."""
    ty, tx = match_dtypes([y, x], "tf.math.atan2")
    require(ty, "real", "tf.math.atan2")
    return torch.atan2(ty, tx)


def sinh(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise hyperbolic sine."""
    return _float_unary(x, torch.sinh, "tf.math.sinh")


def cosh(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise hyperbolic cosine."""
    return _float_unary(x, torch.cosh, "tf.math.cosh")


def asinh(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise inverse hyperbolic sine."""
    return _float_unary(x, torch.asinh, "tf.math.asinh")


def acosh(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise inverse hyperbolic cosine (NaN below 1)."""
    return _float_unary(x, torch.acosh, "tf.math.acosh")


def atanh(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise inverse hyperbolic tangent (inf at +-1, NaN outside)."""
    return _float_unary(x, torch.atanh, "tf.math.atanh")


def realdiv(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y for floating (or complex) x and y of one dtype."""
    tx, ty = match_dtypes([x, y], "tf.realdiv")
    require(tx, "float", "tf.realdiv")
    return tx / ty


def truncatediv(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y rounded toward zero (C division); integer division by zero is an error as in TF."""
    tx, ty = match_dtypes([x, y], "tf.truncatediv")
    require(tx, "numeric", "tf.truncatediv")
    if not tx.is_floating_point() and bool((ty == 0).any()):
        raise ZeroDivisionError("tf.truncatediv: integer division by zero.")
    return torch.div(tx, ty, rounding_mode="trunc")


def truncatemod(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """The remainder of truncated division: it has the sign of x (C's fmod)."""
    tx, ty = match_dtypes([x, y], "tf.truncatemod")
    require(tx, "numeric", "tf.truncatemod")
    return torch.fmod(tx, ty)


def complex(real: Any, imag: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A001
    """real + imag * 1j: float32 parts give complex64, float64 parts complex128."""
    tr, ti = match_dtypes([real, imag], "tf.complex")
    if tr.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"tf.complex takes float32 or float64 parts, got {tr.dtype}.")
    return torch.complex(tr, ti)


def scalar_mul(scalar: Any, x: Any, name: Optional[str] = None) -> torch.Tensor:
    """x times the scalar `scalar` (which must be a scalar)."""
    tx = to_tensor(x, op="tf.scalar_mul")
    ts = to_tensor(scalar, tx.dtype if not isinstance(scalar, torch.Tensor) else None, "tf.scalar_mul")
    if ts.numel() != 1:
        raise ValueError(f"tf.scalar_mul: scalar must have one element, got shape {list(ts.shape)}.")
    sx, _ = match_dtypes([tx, ts.reshape(())], "tf.scalar_mul")
    return sx * ts.reshape(()).to(sx.dtype)


def saturate_cast(value: Any, dtype: Any, name: Optional[str] = None) -> torch.Tensor:
    """`value` cast to `dtype`, clamped to the target's range first (no wrap-around)."""
    tensor = to_tensor(value, op="tf.saturate_cast")
    target = as_dtype(dtype)
    if target.is_floating_point:
        info = torch.finfo(target)
    elif target == torch.bool:
        return tensor.to(target)
    else:
        info = torch.iinfo(target)
    if not tensor.is_complex() and tensor.dtype != torch.bool:
        low, high = float(info.min), float(info.max)
        if tensor.is_floating_point():
            tensor = tensor.clamp(low, high)
        else:
            src = torch.iinfo(tensor.dtype)
            tensor = tensor.clamp(int(max(low, src.min)), int(min(high, src.max)))
    return tensor.to(target)
