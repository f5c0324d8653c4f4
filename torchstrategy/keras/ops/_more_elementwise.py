"""keras.ops.numpy's further element-wise ops: inverse hyperbolics, arctan2, bitwise ops, cbrt/exp2/erfc/erfinv,
angle/real/imag/conj, gcd/lcm, fmax/fmin/fmod, hypot, logaddexp, ldexp, nextafter, sign tests, sinc, isin,
allclose, casts that view or saturate, and the window functions (bartlett, blackman, hamming, hanning, kaiser)."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras.ops._core import _float, _pair, _t


def _floats(x1: Any, x2: Any) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = _float(x1), _float(x2)
    common = torch.promote_types(a.dtype, b.dtype)
    return a.to(common), b.to(common)


def _common(x1: Any, x2: Any) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = _t(x1), _t(x2)
    common = torch.promote_types(a.dtype, b.dtype)
    return a.to(common), b.to(common)


def arccosh(x: Any) -> torch.Tensor:
    return torch.acosh(_float(x))


def arcsinh(x: Any) -> torch.Tensor:
    return torch.asinh(_float(x))


def arctanh(x: Any) -> torch.Tensor:
    return torch.atanh(_float(x))


def arctan2(x1: Any, x2: Any) -> torch.Tensor:
    """The angle of (x2, x1), in (-pi, pi]."""
    return torch.atan2(*_floats(x1, x2))


def cbrt(x: Any) -> torch.Tensor:
    tensor = _float(x)
    return torch.sign(tensor) * tensor.abs().pow(1.0 / 3.0)


def exp2(x: Any) -> torch.Tensor:
    return torch.exp2(_float(x))


def erfc(x: Any) -> torch.Tensor:
    return torch.erfc(_float(x))


def erfinv(x: Any) -> torch.Tensor:
    return torch.erfinv(_float(x))


def fabs(x: Any) -> torch.Tensor:
    return _float(x).abs()


def deg2rad(x: Any) -> torch.Tensor:
    return torch.deg2rad(_float(x))


def rad2deg(x: Any) -> torch.Tensor:
    return torch.rad2deg(_float(x))


def i0(x: Any) -> torch.Tensor:
    """The modified Bessel function of the first kind, order 0."""
    return torch.special.i0(_float(x))


def sinc(x: Any) -> torch.Tensor:
    """sin(pi x) / (pi x), 1 at 0."""
    return torch.sinc(_float(x))


def angle(x: Any) -> torch.Tensor:
    """The argument of complex `x` (0 or pi for reals)."""
    tensor = _t(x)
    return torch.angle(tensor if tensor.is_complex() else _float(tensor))


def real(x: Any) -> torch.Tensor:
    tensor = _t(x)
    return tensor.real if tensor.is_complex() else tensor


def imag(x: Any) -> torch.Tensor:
    tensor = _t(x)
    return tensor.imag if tensor.is_complex() else torch.zeros_like(tensor)


def conj(x: Any) -> torch.Tensor:
    tensor = _t(x)
    return tensor.conj().resolve_conj() if tensor.is_complex() else tensor


conjugate = conj


def isreal(x: Any) -> torch.Tensor:
    tensor = _t(x)
    return tensor.imag == 0 if tensor.is_complex() else torch.ones_like(tensor, dtype=torch.bool)


def isneginf(x: Any) -> torch.Tensor:
    return torch.isneginf(_t(x))


def isposinf(x: Any) -> torch.Tensor:
    return torch.isposinf(_t(x))


def signbit(x: Any) -> torch.Tensor:
    tensor = _t(x)
    return torch.signbit(tensor) if tensor.dtype != torch.bool else torch.zeros_like(tensor)


def fmax(x1: Any, x2: Any) -> torch.Tensor:
    """Element-wise maximum that ignores NaNs (NaN only where both are NaN)."""
    return torch.fmax(*_common(x1, x2))


def fmin(x1: Any, x2: Any) -> torch.Tensor:
    """Element-wise minimum that ignores NaNs."""
    return torch.fmin(*_common(x1, x2))


def fmod(x1: Any, x2: Any) -> torch.Tensor:
    """Remainder with the dividend's sign (C's fmod)."""
    a, b = _pair(x1, x2)
    return torch.fmod(a, b)


def gcd(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _t(x1), _t(x2)
    return torch.gcd(a, b.to(a.dtype))


def lcm(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _t(x1), _t(x2)
    return torch.lcm(a, b.to(a.dtype))


def heaviside(x1: Any, x2: Any) -> torch.Tensor:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    a, b = _floats(x1, x2)
    return torch.heaviside(a, b)


def hypot(x1: Any, x2: Any) -> torch.Tensor:
    return torch.hypot(*_floats(x1, x2))


def logaddexp(x1: Any, x2: Any) -> torch.Tensor:
    return torch.logaddexp(*_floats(x1, x2))


def logaddexp2(x1: Any, x2: Any) -> torch.Tensor:
    return torch.logaddexp2(*_floats(x1, x2))


def ldexp(x1: Any, x2: Any) -> torch.Tensor:
    """x1 * 2**x2 (x2 integers)."""
    a, b = _float(x1), _t(x2)
    if b.is_floating_point():
        raise TypeError(f"ldexp exponent must be an integer tensor; got dtype {b.dtype}.")
    return torch.ldexp(a, b)


def nextafter(x1: Any, x2: Any) -> torch.Tensor:
    return torch.nextafter(*_floats(x1, x2))


def _ints(x: Any, y: Any) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = _t(x), _t(y)
    if a.is_floating_point() or b.is_floating_point():
        raise TypeError(f"Bitwise ops need integer or bool tensors; got {a.dtype} and {b.dtype}.")
    common = torch.promote_types(a.dtype, b.dtype)
    return a.to(common), b.to(common)


def bitwise_and(x: Any, y: Any) -> torch.Tensor:
    return torch.bitwise_and(*_ints(x, y))


def bitwise_or(x: Any, y: Any) -> torch.Tensor:
    return torch.bitwise_or(*_ints(x, y))


def bitwise_xor(x: Any, y: Any) -> torch.Tensor:
    return torch.bitwise_xor(*_ints(x, y))


def bitwise_invert(x: Any) -> torch.Tensor:
    return torch.bitwise_not(_t(x))


bitwise_not = bitwise_invert


def bitwise_left_shift(x: Any, y: Any) -> torch.Tensor:
    return torch.bitwise_left_shift(*_ints(x, y))


def bitwise_right_shift(x: Any, y: Any) -> torch.Tensor:
    return torch.bitwise_right_shift(*_ints(x, y))


left_shift = bitwise_left_shift
right_shift = bitwise_right_shift


def allclose(x1: Any, x2: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> torch.Tensor:
    """Whether every |x1 - x2| <= atol + rtol * |x2| (a bool tensor)."""
    a, b = _floats(x1, x2)
    return torch.tensor(bool(torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def isin(x1: Any, x2: Any, assume_unique: bool = False, invert: bool = False) -> torch.Tensor:
    """Whether each element of x1 is in x2 (or not, with `invert`)."""
    a, b = _t(x1), _t(x2)
    return torch.isin(a, b.to(a.dtype), assume_unique=assume_unique, invert=invert)


def saturate_cast(x: Any, dtype: Any) -> torch.Tensor:
    """`x` cast to `dtype`, clipped first to that dtype's range (no wrap-around)."""
    target = as_dtype(dtype)
    tensor = _t(x)
    if not target.is_floating_point and target != torch.bool:
        info = torch.iinfo(target)
        if tensor.is_floating_point():
            tensor = torch.nan_to_num(tensor).clamp(max(info.min, -3.4e38), min(info.max, 3.4e38))
            return tensor.to(torch.float64).clamp(info.min, info.max).to(target)
        return tensor.clamp(info.min, info.max).to(target)
    if target.is_floating_point and tensor.is_floating_point():
        info = torch.finfo(target)
        return tensor.clamp(info.min, info.max).to(target)
    return tensor.to(target)


def view(x: Any, dtype: Any = None) -> torch.Tensor:
    """The same bytes read as `dtype` (the last axis rescales when item sizes differ)."""
    tensor = _t(x)
    return tensor if dtype is None else tensor.view(as_dtype(dtype))


def view_as_complex(x: Any) -> torch.Tensor:
    """A (..., 2) real tensor read as complex numbers."""
    return torch.view_as_complex(_float(x).contiguous())


def view_as_real(x: Any) -> torch.Tensor:
    """A complex tensor as (..., 2) real and imaginary parts."""
    return torch.view_as_real(_t(x))


# ----- window functions (NumPy's definitions, floatx) ----------------------------------------------------------


def _window_length(x: Any) -> int:
    return int(_t(x).item()) if not isinstance(x, (int, np.integer)) else int(x)


def _window(values: np.ndarray) -> torch.Tensor:
    from torchstrategy.keras.ops._core import _floatx

    return torch.as_tensor(values).to(_floatx())


def bartlett(x: Any) -> torch.Tensor:
    """The Bartlett (triangular) window of length `x`."""
    return _window(np.bartlett(_window_length(x)))


def blackman(x: Any) -> torch.Tensor:
    """The Blackman window of length `x`."""
    return _window(np.blackman(_window_length(x)))


def hamming(x: Any) -> torch.Tensor:
    """The Hamming window of length `x`."""
    return _window(np.hamming(_window_length(x)))


def hanning(x: Any) -> torch.Tensor:
    """The Hann window of length `x`."""
    return _window(np.hanning(_window_length(x)))


def kaiser(x: Any, beta: float) -> torch.Tensor:
    """The Kaiser window of length `x` with shape parameter `beta`."""
    return _window(np.kaiser(_window_length(x), float(beta)))

