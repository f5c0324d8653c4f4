"""tf.math's special functions and safe element-wise variants: erf family, gamma family, zeta, Bessel,
expm1/rint, softmax family, x*log(y)-style ops, the *_no_nan ops, nextafter and complex parts."""
from __future__ import annotations

import math as _pymath
from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import DTypeError, match_dtypes, require, to_tensor

__all__ = ["erf", "erfc", "erfinv", "erfcinv", "ndtri", "lgamma", "digamma", "polygamma", "igamma", "igammac",
           "betainc", "lbeta", "zeta", "bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "expm1", "rint",
           "softmax", "log_softmax", "log_sigmoid", "softsign", "xdivy", "xlogy", "xlog1py", "multiply_no_nan",
           "reciprocal_no_nan", "nextafter", "angle", "conj", "real", "imag"]


def _real(x: Any, op: str) -> torch.Tensor:
    return require(to_tensor(x, op=op), "real", op)


def _real_pair(x: Any, y: Any, op: str) -> tuple:
    tx, ty = match_dtypes([x, y], op)
    require(tx, "real", op)
    return torch.broadcast_tensors(tx, ty)


def erf(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The Gauss error function, element-wise (float inputs only)."""
    return torch.special.erf(_real(x, "tf.math.erf"))


def erfc(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """1 - erf(x), computed without cancellation for large x."""
    return torch.special.erfc(_real(x, "tf.math.erfc"))


def erfinv(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The inverse of erf on (-1, 1) (+-inf at +-1, NaN outside)."""
    return torch.special.erfinv(_real(x, "tf.math.erfinv"))


def ndtri(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The standard normal quantile function (inverse CDF) on (0, 1)."""
    return torch.special.ndtri(_real(x, "tf.math.ndtri"))


def erfcinv(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The inverse of erfc on (0, 2), as -ndtri(x / 2) / sqrt(2) (accurate near 0, unlike erfinv(1 - x))."""
    tensor = _real(x, "tf.math.erfcinv")
    return -torch.special.ndtri(tensor * 0.5) * (1.0 / _pymath.sqrt(2.0))


def lgamma(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """log|Gamma(x)| element-wise."""
    return torch.special.gammaln(_real(x, "tf.math.lgamma"))


def digamma(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The derivative of lgamma (psi), element-wise."""
    return torch.special.digamma(_real(x, "tf.math.digamma"))


def polygamma(a: Any, x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The a-th derivative of digamma, with `a` a float tensor of whole numbers >= 0 (NaN elsewhere, as TF).
    For a >= 1 it is (-1)^(a+1) * a! * zeta(a + 1, x)."""
    ta, tx = _real_pair(a, x, "tf.math.polygamma")
    whole = (ta >= 0) & (ta == torch.floor(ta))
    safe_a = torch.where(whole, ta, torch.ones_like(ta))
    order = torch.where(safe_a == 0, torch.ones_like(safe_a), safe_a)
    sign = torch.where(torch.remainder(order, 2) == 1, torch.ones_like(order), -torch.ones_like(order))
    higher = sign * torch.exp(torch.special.gammaln(order + 1)) * torch.special.zeta(order + 1, tx)
    out = torch.where(safe_a == 0, torch.special.digamma(tx), higher)
    return torch.where(whole, out, torch.full_like(out, float("nan")))


def igamma(a: Any, x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The regularized lower incomplete gamma function P(a, x)."""
    ta, tx = _real_pair(a, x, "tf.math.igamma")
    return torch.special.gammainc(ta, tx)


def igammac(a: Any, x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    ta, tx = _real_pair(a, x, "tf.math.igammac")
    return torch.special.gammaincc(ta, tx)


def _betainc_cf(a: torch.Tensor, b: torch.Tensor, x: torch.Tensor, steps: int = 300) -> torch.Tensor:
    """The continued fraction of I_x(a, b) (modified Lentz), valid for x < (a + 1) / (a + b + 2)."""
    tiny = torch.finfo(x.dtype).tiny * 1e3
    c = torch.ones_like(x)
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = torch.where(d.abs() < tiny, torch.full_like(d, tiny), d)
    d = 1.0 / d
    f = d
    for m in range(1, steps + 1):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = torch.where(d.abs() < tiny, torch.full_like(d, tiny), d)
            c = 1.0 + numerator / c
            c = torch.where(c.abs() < tiny, torch.full_like(c, tiny), c)
            d = 1.0 / d
            f = f * d * c
    return f


def betainc(a: Any, b: Any, x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The regularized incomplete beta function I_x(a, b) (a, b > 0, x in [0, 1]; NaN elsewhere), evaluated
    by a continued fraction in float64 and returned in the input dtype."""
    ta, tb, tx = match_dtypes([a, b, x], "tf.math.betainc")
    require(ta, "real", "tf.math.betainc")
    ta, tb, tx = torch.broadcast_tensors(ta, tb, tx)
    dtype = ta.dtype
    a64, b64, x64 = ta.double(), tb.double(), tx.double()
    valid = (a64 > 0) & (b64 > 0) & (x64 >= 0) & (x64 <= 1)
    a64 = torch.where(valid, a64, torch.ones_like(a64))
    b64 = torch.where(valid, b64, torch.ones_like(b64))
    xs = torch.where(valid, x64, torch.full_like(x64, 0.5)).clamp(1e-300, 1 - 1e-16)
    flip = xs > (a64 + 1) / (a64 + b64 + 2)
    pa, pb, px = torch.where(flip, b64, a64), torch.where(flip, a64, b64), torch.where(flip, 1 - xs, xs)
    log_front = (pa * torch.log(px) + pb * torch.log1p(-px) - torch.special.gammaln(pa) - torch.special.gammaln(pb)
                 + torch.special.gammaln(pa + pb))
    part = torch.exp(log_front) * _betainc_cf(pa, pb, px) / pa
    out = torch.where(flip, 1 - part, part)
    out = torch.where(x64 == 0, torch.zeros_like(out), torch.where(x64 == 1, torch.ones_like(out), out))
    return torch.where(valid, out, torch.full_like(out, float("nan"))).to(dtype)


def lbeta(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """log|Beta(x)| over the last axis: sum(lgamma(x), -1) - lgamma(sum(x, -1)); an empty last axis gives 0."""
    tensor = _real(x, "tf.math.lbeta")
    if tensor.dim() == 0:
        raise ValueError("tf.math.lbeta needs a tensor of rank >= 1 (it reduces the last axis).")
    return torch.special.gammaln(tensor).sum(-1) - torch.special.gammaln(tensor.sum(-1))


def zeta(x: Any, q: Any, name: Optional[str] = None) -> torch.Tensor:
    """The Hurwitz zeta function sum_n (n + q) ** -x."""
    tx, tq = _real_pair(x, q, "tf.math.zeta")
    return torch.special.zeta(tx, tq)


def bessel_i0(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The modified Bessel function of the first kind, order 0."""
    return torch.special.i0(_real(x, "tf.math.bessel_i0"))


def bessel_i0e(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """exp(-|x|) * bessel_i0(x), which does not overflow."""
    return torch.special.i0e(_real(x, "tf.math.bessel_i0e"))


def bessel_i1(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The modified Bessel function of the first kind, order 1."""
    return torch.special.i1(_real(x, "tf.math.bessel_i1"))


def bessel_i1e(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """exp(-|x|) * bessel_i1(x), which does not overflow."""
    return torch.special.i1e(_real(x, "tf.math.bessel_i1e"))


def expm1(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """exp(x) - 1, accurate near 0 (float or complex inputs)."""
    return torch.expm1(require(to_tensor(x, op="tf.math.expm1"), "float", "tf.math.expm1"))


def rint(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Rounds to the nearest integer, halves to even (float inputs only, as TF)."""
    return torch.round(_real(x, "tf.math.rint"))


def _logits(logits: Any, axis: Any, op: str) -> tuple:
    tensor = _real(logits, op)
    dim = -1 if axis is None else int(axis)
    if tensor.dim() == 0 or not -tensor.dim() <= dim < tensor.dim():
        raise ValueError(f"{op}: axis {dim} is out of range for logits of shape {tuple(tensor.shape)}.")
    return tensor, dim


def softmax(logits: Any, axis: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """exp(logits) / sum(exp(logits)) along `axis` (the last axis when None)."""
    tensor, dim = _logits(logits, axis, "tf.math.softmax")
    return torch.softmax(tensor, dim=dim)


def log_softmax(logits: Any, axis: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """logits - log(sum(exp(logits))) along `axis` (the last axis when None)."""
    tensor, dim = _logits(logits, axis, "tf.math.log_softmax")
    return torch.log_softmax(tensor, dim=dim)


def log_sigmoid(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """log(1 / (1 + exp(-x))) = -softplus(-x), stable for large |x|."""
    return torch.nn.functional.logsigmoid(_real(x, "tf.math.log_sigmoid"))


def softsign(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """features / (|features| + 1)."""
    tensor = _real(features, "tf.math.softsign")
    return tensor / (tensor.abs() + 1)


def _x_zero_safe(x: Any, y: Any, op: str, fill: float) -> tuple:
    tx, ty = match_dtypes([x, y], op)
    require(tx, "float", op)
    tx, ty = torch.broadcast_tensors(tx, ty)
    zero = tx == 0
    return tx, torch.where(zero, torch.full_like(ty, fill), ty), zero


def xdivy(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y, but 0 wherever x == 0 (even where y is 0)."""
    tx, ty, zero = _x_zero_safe(x, y, "tf.math.xdivy", 1.0)
    return torch.where(zero, torch.zeros_like(tx), tx / ty)


def xlogy(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x * log(y), but 0 wherever x == 0 (even where y is 0)."""
    tx, ty, zero = _x_zero_safe(x, y, "tf.math.xlogy", 1.0)
    return torch.where(zero, torch.zeros_like(tx), tx * torch.log(ty))


def xlog1py(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x * log1p(y), but 0 wherever x == 0 (even where y is -1)."""
    tx, ty, zero = _x_zero_safe(x, y, "tf.math.xlog1py", 0.0)
    return torch.where(zero, torch.zeros_like(tx), tx * torch.log1p(ty))


def multiply_no_nan(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x * y, but 0 wherever y == 0, even where x is inf or NaN (float inputs only)."""
    ty, tx, zero = _x_zero_safe(y, x, "tf.math.multiply_no_nan", 0.0)
    return torch.where(zero, torch.zeros_like(tx), tx * ty)


def reciprocal_no_nan(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """1 / x, but 0 wherever x == 0 (float or complex inputs)."""
    tensor = require(to_tensor(x, op="tf.math.reciprocal_no_nan"), "float", "tf.math.reciprocal_no_nan")
    zero = tensor == 0
    safe = torch.where(zero, torch.ones_like(tensor), tensor)
    return torch.where(zero, torch.zeros_like(tensor), 1 / safe)


def nextafter(x1: Any, x2: Any, name: Optional[str] = None) -> torch.Tensor:
    """The next representable float after x1 in the direction of x2 (float32 or float64 only, as TF)."""
    t1, t2 = match_dtypes([x1, x2], "tf.math.nextafter")
    if t1.dtype not in (torch.float32, torch.float64):
        raise DTypeError(f"tf.math.nextafter takes float32 or float64 tensors, got {t1.dtype}; cast them first.")
    return torch.nextafter(t1, t2)


def angle(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The argument of each complex entry (atan2(imag, real)); for real input, pi where negative else 0."""
    tensor = require(to_tensor(input, op="tf.math.angle"), "float", "tf.math.angle")
    if tensor.is_complex():
        return torch.angle(tensor)
    return torch.where(tensor < 0, torch.full_like(tensor, _pymath.pi), torch.zeros_like(tensor))


def conj(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The complex conjugate; real numeric input comes back unchanged (strings and bools are refused)."""
    tensor = require(to_tensor(x, op="tf.math.conj"), "numeric", "tf.math.conj")
    return torch.conj_physical(tensor) if tensor.is_complex() else tensor


def real(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The real part of each complex entry; real numeric input comes back unchanged."""
    tensor = require(to_tensor(input, op="tf.math.real"), "numeric", "tf.math.real")
    return torch.real(tensor).clone() if tensor.is_complex() else tensor


def imag(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The imaginary part of each complex entry; real input gives zeros of its dtype."""
    tensor = require(to_tensor(input, op="tf.math.imag"), "numeric", "tf.math.imag")
    return torch.imag(tensor).clone() if tensor.is_complex() else torch.zeros_like(tensor)
