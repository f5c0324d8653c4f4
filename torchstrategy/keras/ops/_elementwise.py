"""keras.ops.numpy's element-wise ops: arithmetic, the float-only unary functions (with the activations and
special functions made the same way), rounding, clipping, comparisons, logic, NaN/inf tests and `where`."""
from __future__ import annotations

from typing import Any, Optional

import torch

import torch.nn.functional as F

from torchstrategy.keras.ops._core import _float, _pair, _t


# ----- arithmetic ---------------------------------------------------------------------------------------------


def add(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.add(a, b)


def subtract(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.subtract(a, b)


def multiply(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.multiply(a, b)


def divide(x1: Any, x2: Any) -> torch.Tensor:
    """True division; ints divide as floatx (Keras), not float64 as NumPy."""
    a, b = _pair(x1, x2)
    a = _float(a) if isinstance(a, torch.Tensor) else a
    b = _float(b) if isinstance(b, torch.Tensor) else b
    return torch.true_divide(a, b)


true_divide = divide


def divide_no_nan(x1: Any, x2: Any) -> torch.Tensor:
    """x1 / x2, with 0 where x2 == 0."""
    quotient = divide(x1, x2)
    return torch.where(_t(x2).to(quotient.device) == 0, torch.zeros_like(quotient), quotient)


def floor_divide(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.floor_divide(a, b)


def mod(x1: Any, x2: Any) -> torch.Tensor:
    """Remainder with the divisor's sign (NumPy's mod)."""
    a, b = _pair(x1, x2)
    return torch.remainder(a, b)


def power(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.pow(a, b)


def negative(x: Any) -> torch.Tensor:
    return torch.neg(_t(x))


def abs(x: Any) -> torch.Tensor:
    return torch.abs(_t(x))


absolute = abs


def sign(x: Any) -> torch.Tensor:
    return torch.sign(_t(x))


def square(x: Any) -> torch.Tensor:
    tensor = _t(x)
    return torch.square(tensor.to(torch.int32) if tensor.dtype is torch.bool else tensor)


# ----- float-only unary functions (int and bool inputs give floatx) -------------------------------------------


def _float_op(fn: Any, name: str) -> Any:
    def op(x: Any) -> torch.Tensor:
        return fn(_float(x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Element-wise `{name}`; int and bool inputs give floatx (Keras 3)."
    return op


sqrt = _float_op(torch.sqrt, "sqrt")
rsqrt = _float_op(torch.rsqrt, "rsqrt")
exp = _float_op(torch.exp, "exp")
expm1 = _float_op(torch.expm1, "expm1")
log = _float_op(torch.log, "log")
log1p = _float_op(torch.log1p, "log1p")
log2 = _float_op(torch.log2, "log2")
log10 = _float_op(torch.log10, "log10")
sin = _float_op(torch.sin, "sin")
cos = _float_op(torch.cos, "cos")
tan = _float_op(torch.tan, "tan")
arcsin = _float_op(torch.asin, "arcsin")
arccos = _float_op(torch.acos, "arccos")
arctan = _float_op(torch.atan, "arctan")
sinh = _float_op(torch.sinh, "sinh")
cosh = _float_op(torch.cosh, "cosh")
tanh = _float_op(torch.tanh, "tanh")
erf = _float_op(torch.erf, "erf")
sigmoid = _float_op(torch.sigmoid, "sigmoid")
softplus = _float_op(F.softplus, "softplus")
softsign = _float_op(F.softsign, "softsign")
silu = _float_op(F.silu, "silu")
swish = silu
relu6 = _float_op(F.relu6, "relu6")
log_sigmoid = _float_op(F.logsigmoid, "log_sigmoid")
reciprocal = _float_op(torch.reciprocal, "reciprocal")
ceil = _float_op(torch.ceil, "ceil")
floor = _float_op(torch.floor, "floor")
hard_silu = _float_op(F.hardswish, "hard_silu")
hard_swish = hard_silu
selu = _float_op(F.selu, "selu")


# ----- rounding, clipping, extremes ---------------------------------------------------------------------------


def round(x: Any, decimals: int = 0) -> torch.Tensor:
    """Half to even, as np.round."""
    return torch.round(_t(x), decimals=decimals)


def trunc(x: Any) -> torch.Tensor:
    return torch.trunc(_t(x))


def clip(x: Any, x_min: Any, x_max: Any) -> torch.Tensor:
    """Clips into [x_min, x_max]; bools are clipped as int32."""
    tensor = _t(x)
    if tensor.dtype is torch.bool:
        tensor = tensor.to(torch.int32)
    return torch.clamp(tensor, x_min, x_max)


def maximum(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    a = a if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=b.dtype)
    b = b if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=a.dtype)
    return torch.maximum(a, b)


def minimum(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    a = a if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=b.dtype)
    b = b if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=a.dtype)
    return torch.minimum(a, b)


# ----- comparisons and logic ----------------------------------------------------------------------------------


def _compare(fn: Any, name: str) -> Any:
    def op(x1: Any, x2: Any) -> torch.Tensor:
        a, b = _pair(x1, x2)
        return fn(a, b)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Element-wise `{name}` (broadcasting), a bool tensor."
    return op


equal = _compare(torch.eq, "equal")
not_equal = _compare(torch.ne, "not_equal")
greater = _compare(torch.gt, "greater")
greater_equal = _compare(torch.ge, "greater_equal")
less = _compare(torch.lt, "less")
less_equal = _compare(torch.le, "less_equal")


def logical_and(x1: Any, x2: Any) -> torch.Tensor:
    return torch.logical_and(_t(x1), _t(x2))


def logical_or(x1: Any, x2: Any) -> torch.Tensor:
    return torch.logical_or(_t(x1), _t(x2))


def logical_xor(x1: Any, x2: Any) -> torch.Tensor:
    return torch.logical_xor(_t(x1), _t(x2))


def logical_not(x: Any) -> torch.Tensor:
    return torch.logical_not(_t(x))


def isnan(x: Any) -> torch.Tensor:
    return torch.isnan(_t(x))


def isinf(x: Any) -> torch.Tensor:
    return torch.isinf(_t(x))


def isfinite(x: Any) -> torch.Tensor:
    return torch.isfinite(_t(x))


def isclose(x1: Any, x2: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> torch.Tensor:
    a, b = _t(x1), _t(x2)
    return torch.isclose(a, b.to(a.dtype), rtol=rtol, atol=atol, equal_nan=equal_nan)


def where(condition: Any, x1: Any = None, x2: Any = None) -> Any:
    """Element-wise choice; with only `condition`, the indices of its true entries (a tuple per axis)."""
    cond = _t(condition).to(torch.bool)
    if x1 is None and x2 is None:
        return tuple(torch.nonzero(cond, as_tuple=True))
    if x1 is None or x2 is None:
        raise ValueError("keras.ops.where: give both `x1` and `x2`, or neither.")
    a, b = _pair(x1, x2)
    return torch.where(cond, a, b)


def nan_to_num(x: Any, nan: float = 0.0, posinf: Optional[float] = None, neginf: Optional[float] = None
               ) -> torch.Tensor:
    return torch.nan_to_num(_t(x), nan=nan, posinf=posinf, neginf=neginf)
