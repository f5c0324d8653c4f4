"""tf.experimental.numpy's one-input elementwise functions (sin, exp, sqrt, abs, floor, isnan, ...) with TF's
dtype rules: float functions give a non-float input float64 (NumPy picks by width), the rest keep the dtype."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import torch

from torchstrategy.experimental_numpy import _dtypes
from torchstrategy.experimental_numpy._arrays import asarray, to_float

__all__ = ["abs", "absolute", "fabs", "negative", "positive", "sign", "square", "conj", "conjugate", "real", "imag",
           "reciprocal", "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
           "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad",
           "rad2deg", "angle", "sinc", "floor", "ceil", "fix", "around", "round", "signbit", "isnan", "isinf",
           "isfinite", "isneginf", "isposinf", "isreal", "iscomplex", "isrealobj", "iscomplexobj", "logical_not",
           "bitwise_not"]


def _float_op(name: str, fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[Any], torch.Tensor]:
    def op(x: Any) -> torch.Tensor:
        return fn(to_float(asarray(x, op=name)))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"NumPy's `{name}`, elementwise; a bool or integer input is computed in float64 (TF's rule), "
                  "float and complex inputs keep their dtype.")
    return op


def _log_base(base: float) -> Callable[[torch.Tensor], torch.Tensor]:
    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.log(x) / math.log(base)
    return fn


def _real_only(name: str, fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    def checked(x: torch.Tensor) -> torch.Tensor:
        if x.is_complex():
            raise TypeError(f"tnp.{name} does not take complex input ({x.dtype}).")
        return fn(x)
    return checked


sqrt = _float_op("sqrt", torch.sqrt)
cbrt = _float_op("cbrt", _real_only("cbrt", lambda x: torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)))
exp = _float_op("exp", torch.exp)
exp2 = _float_op("exp2", lambda x: torch.pow(torch.as_tensor(2.0, dtype=x.dtype, device=x.device), x))
expm1 = _float_op("expm1", lambda x: torch.expm1(x) if not x.is_complex() else torch.exp(x) - 1)
log = _float_op("log", torch.log)
log2 = _float_op("log2", lambda x: torch.log2(x) if not x.is_complex() else _log_base(2.0)(x))
log10 = _float_op("log10", lambda x: torch.log10(x) if not x.is_complex() else _log_base(10.0)(x))
log1p = _float_op("log1p", lambda x: torch.log1p(x) if not x.is_complex() else torch.log(1 + x))
sin = _float_op("sin", torch.sin)
cos = _float_op("cos", torch.cos)
tan = _float_op("tan", torch.tan)
arcsin = _float_op("arcsin", torch.asin)
arccos = _float_op("arccos", torch.acos)
arctan = _float_op("arctan", torch.atan)
sinh = _float_op("sinh", torch.sinh)
cosh = _float_op("cosh", torch.cosh)
tanh = _float_op("tanh", torch.tanh)
arcsinh = _float_op("arcsinh", torch.asinh)
arccosh = _float_op("arccosh", torch.acosh)
arctanh = _float_op("arctanh", torch.atanh)
deg2rad = _float_op("deg2rad", lambda x: x * (math.pi / 180.0))
floor = _float_op("floor", _real_only("floor", torch.floor))
ceil = _float_op("ceil", _real_only("ceil", torch.ceil))
fix = _float_op("fix", _real_only("fix", torch.trunc))


def _sinc(x: torch.Tensor) -> torch.Tensor:
    scaled = x * math.pi
    safe = torch.where(x == 0, torch.ones_like(scaled), scaled)
    return torch.where(x == 0, torch.ones_like(scaled), torch.sin(safe) / safe)


sinc = _float_op("sinc", _sinc)


def rad2deg(x: Any) -> torch.Tensor:
    """Radians to degrees, elementwise (bool and integer inputs in float64)."""
    return to_float(asarray(x, op="rad2deg")) * (180.0 / math.pi)


def angle(z: Any, deg: bool = False) -> torch.Tensor:
    """The counterclockwise angle of each complex value; for real inputs pi where negative, else 0, as float32
    (TF's result dtype for real input)."""
    value = to_float(asarray(z, op="angle"))
    if value.is_complex():
        out = torch.angle(value)
    else:
        out = torch.where(value < 0, math.pi, 0.0).to(torch.float32)
    return out * (180.0 / math.pi) if deg else out


def _keep_op(name: str, fn: Callable[[torch.Tensor], torch.Tensor], doc: str) -> Callable[[Any], torch.Tensor]:
    def op(x: Any) -> torch.Tensor:
        return fn(asarray(x, op=name))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


_UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def _abs(x: torch.Tensor) -> torch.Tensor:
    return x.clone() if x.dtype == torch.bool or x.dtype in _UNSIGNED else torch.abs(x)


abs = _keep_op("abs", _abs, "The absolute value, elementwise (a complex input gives its real dtype).")  # noqa: A001
absolute = _keep_op("absolute", _abs, "The absolute value, elementwise (the same as tnp.abs).")
fabs = _keep_op("fabs", lambda x: _abs(x) if x.dtype != torch.bool and x.dtype not in _UNSIGNED else to_float(x),
               "The absolute value, elementwise; as in TF it keeps a signed integer input's dtype (bools and "
               "unsigned integers give float64).")


def _negative(x: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.bool:
        raise TypeError("tnp.negative does not take bool input; use tnp.logical_not.")
    return torch.neg(x)


negative = _keep_op("negative", _negative, "-x, elementwise.")
positive = _keep_op("positive", lambda x: x.clone(), "+x, elementwise (a copy; bool kept, as in TF).")


def _sign(x: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.bool:
        raise TypeError("tnp.sign does not take bool input.")
    if x.is_complex():
        return torch.sgn(x)
    out = torch.sign(x)
    return torch.where(torch.isnan(x), x, out) if x.is_floating_point() else out


def sign(x: Any, out: Any = None, where: Any = None, **kwargs: Any) -> torch.Tensor:
    """-1, 0 or 1 by the sign of each value (x / |x| for complex values); NaN stays NaN."""
    if out is not None:
        raise NotImplementedError("tnp.sign(out=...) is not supported: arrays are immutable (as in TF).")
    if where is not None:
        raise NotImplementedError("tnp.sign(where=...) is not supported (as in TF).")
    if kwargs:
        raise NotImplementedError(f"tnp.sign({', '.join(sorted(kwargs))}=...) is not supported (as in TF).")
    return _sign(asarray(x, op="sign"))


def _square(x: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.bool:
        raise TypeError("tnp.square does not take bool input (as in TF); cast it to an integer dtype first.")
    return x * x


square = _keep_op("square", _square, "x * x, elementwise.")
def _conj(x: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.bool:
        raise TypeError("tnp.conj takes numbers, not bools (as in TF).")
    return torch.conj(x).resolve_conj() if x.is_complex() else x.clone()


conj = _keep_op("conj", _conj, "The complex conjugate, elementwise (real inputs unchanged).")
conjugate = _keep_op("conjugate", _conj, "The complex conjugate, elementwise (the same as tnp.conj).")


def real(val: Any) -> torch.Tensor:
    """The real part (a real input unchanged)."""
    value = asarray(val, op="real")
    return torch.real(value) if value.is_complex() else value


def imag(val: Any) -> torch.Tensor:
    """The imaginary part (zeros of the input's dtype for a real input)."""
    value = asarray(val, op="imag")
    return torch.imag(value) if value.is_complex() else torch.zeros_like(value)


def _reciprocal(x: torch.Tensor) -> torch.Tensor:
    if _dtypes.is_inexact(x.dtype):
        return torch.reciprocal(x)
    if x.dtype == torch.bool:
        x = x.to(torch.int8)
    one = torch.ones_like(x)
    return torch.where(x == 0, torch.zeros_like(x), torch.div(one, torch.where(x == 0, one, x), rounding_mode="trunc"))


reciprocal = _keep_op("reciprocal", _reciprocal, "1 / x, elementwise (integer division for integers, as NumPy).")


def around(a: Any, decimals: int = 0) -> torch.Tensor:
    """Values rounded half to even at `decimals` places (negative: tens, hundreds); integer and bool inputs are
    rounded in float64 and keep their dtype."""
    value = asarray(a, op="around")
    if value.is_complex():
        raise TypeError("tnp.around does not take complex input.")
    if value.dtype == torch.bool:
        return value.clone()
    work = value if value.is_floating_point() else value.to(torch.float64)
    factor = 10.0 ** int(decimals)
    out = torch.round(work * factor) / factor
    return out.to(value.dtype)


def round(a: Any, decimals: int = 0) -> torch.Tensor:  # noqa: A001
    """The same as tnp.around."""
    return around(a, decimals)


def signbit(x: Any) -> torch.Tensor:
    """True where the sign bit is set (-0.0 included, as NumPy; TF 2.21 compares with 0); bool gives False."""
    value = asarray(x, op="signbit")
    if value.is_complex():
        raise TypeError("tnp.signbit does not take complex input.")
    if value.dtype == torch.bool:
        return torch.zeros_like(value)
    return torch.signbit(value) if value.is_floating_point() else value < 0


def _float_test(name: str, fn: Callable[[torch.Tensor], torch.Tensor], fill: bool) -> Callable[[Any], torch.Tensor]:
    def op(x: Any) -> torch.Tensor:
        value = asarray(x, op=name)
        if not _dtypes.is_inexact(value.dtype):
            return torch.full(value.shape, fill, dtype=torch.bool, device=value.device)
        return fn(value)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"NumPy's `{name}`, elementwise (a bool array; integers are always finite)."
    return op


isnan = _float_test("isnan", torch.isnan, False)
isinf = _float_test("isinf", torch.isinf, False)
isfinite = _float_test("isfinite", torch.isfinite, True)
isneginf = _float_test("isneginf", lambda x: torch.isneginf(x) if not x.is_complex() else torch.zeros_like(
    x, dtype=torch.bool), False)
isposinf = _float_test("isposinf", lambda x: torch.isposinf(x) if not x.is_complex() else torch.zeros_like(
    x, dtype=torch.bool), False)


def isreal(x: Any) -> torch.Tensor:
    """True where the imaginary part is zero (everywhere for a real input)."""
    value = asarray(x, op="isreal")
    if value.is_complex():
        return torch.imag(value) == 0
    return torch.ones(value.shape, dtype=torch.bool, device=value.device)


def iscomplex(x: Any) -> torch.Tensor:
    """True where the imaginary part is non-zero (nowhere for a real input)."""
    value = asarray(x, op="iscomplex")
    if value.is_complex():
        return torch.imag(value) != 0
    return torch.zeros(value.shape, dtype=torch.bool, device=value.device)


def _is_complex_dtype(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return x.is_complex()
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind == "c"
    return asarray(x, op="iscomplexobj").is_complex()


def iscomplexobj(x: Any) -> bool:
    """True when `x` has a complex dtype (whatever its values)."""
    return _is_complex_dtype(x)


def isrealobj(x: Any) -> bool:
    """True when `x` does not have a complex dtype."""
    return not _is_complex_dtype(x)


def logical_not(x: Any) -> torch.Tensor:
    """NOT of each value taken as a truth value."""
    return torch.logical_not(asarray(x, op="logical_not"))


def bitwise_not(x: Any) -> torch.Tensor:
    """Bitwise NOT of integers (logical NOT of bools)."""
    value = asarray(x, op="bitwise_not")
    if _dtypes.is_inexact(value.dtype):
        raise TypeError(f"tnp.bitwise_not takes integers or bools, got {value.dtype}.")
    return torch.bitwise_not(value)
