"""`tf.math.special`: Bessel functions (torch.special's), and Dawson's integral, the exponential integral Ei, the
Fresnel integrals and Spence's function computed here in float64 by series, continued fractions and
Rybicki's formula (Dawson's integral to about 3e-7 relative)."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import require, to_tensor
from torchstrategy.math._special import bessel_i0, bessel_i0e, bessel_i1, bessel_i1e  # noqa: F401

__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_j0", "bessel_j1", "bessel_k0",
           "bessel_k0e", "bessel_k1", "bessel_k1e", "bessel_y0", "bessel_y1", "dawsn", "expint", "fresnel_cos",
           "fresnel_sin", "spence"]

_EULER = 0.5772156649015329


def _float(x: Any, op: str) -> torch.Tensor:
    return require(to_tensor(x, op=op), "float", op)


def _wide(fn: Any, x: Any, op: str) -> torch.Tensor:
    """fn on float64 (for accuracy), back in x's dtype."""
    t = _float(x, op)
    return fn(t.to(torch.float64)).to(t.dtype)


def _below_zero(fn: Any, fill: float) -> Any:
    """fn for x >= 0 and `fill` below 0 (TF's K and Y functions give +inf / -inf there, not NaN)."""
    return lambda t: torch.where(t < 0, torch.full_like(t, fill), fn(t))


def bessel_j0(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Bessel function of the first kind, order 0."""
    return _wide(torch.special.bessel_j0, x, "tf.math.special.bessel_j0")


def bessel_j1(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Bessel function of the first kind, order 1."""
    return _wide(torch.special.bessel_j1, x, "tf.math.special.bessel_j1")


def bessel_y0(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Bessel function of the second kind, order 0."""
    return _wide(_below_zero(torch.special.bessel_y0, -math.inf), x, "tf.math.special.bessel_y0")


def bessel_y1(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Bessel function of the second kind, order 1."""
    return _wide(_below_zero(torch.special.bessel_y1, -math.inf), x, "tf.math.special.bessel_y1")


def bessel_k0(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Modified Bessel function of the second kind, order 0."""
    return _wide(_below_zero(torch.special.modified_bessel_k0, math.inf), x, "tf.math.special.bessel_k0")


def bessel_k1(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Modified Bessel function of the second kind, order 1."""
    return _wide(_below_zero(torch.special.modified_bessel_k1, math.inf), x, "tf.math.special.bessel_k1")


def bessel_k0e(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """exp(x) * bessel_k0(x)."""
    return _wide(_below_zero(torch.special.scaled_modified_bessel_k0, math.inf), x, "tf.math.special.bessel_k0e")


def bessel_k1e(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """exp(x) * bessel_k1(x)."""
    return _wide(_below_zero(torch.special.scaled_modified_bessel_k1, math.inf), x, "tf.math.special.bessel_k1e")


def _dawson(x: torch.Tensor) -> torch.Tensor:
    """Rybicki's sampling formula (h = 0.4, six terms each side), a Taylor series near 0."""
    ax = x.abs()
    h = 0.4
    n0 = 2 * torch.round(0.5 * ax / h)
    xp = ax - n0 * h
    e1 = torch.exp(2 * xp * h)
    e2 = e1 * e1
    d1 = n0 + 1
    d2 = d1 - 2
    total = torch.zeros_like(x)
    factor = torch.exp(-xp * xp)
    for i in range(6):
        c = math.exp(-((2 * i + 1) * h) ** 2)
        total = total + c * (e1 / d1 + 1 / (d2 * e1))
        d1, d2, e1 = d1 + 2, d2 - 2, e1 * e2
    big = 0.5641895835477563 * torch.sign(x) * factor * total
    x2 = x * x
    small = x * (1 - 2.0 / 3 * x2 * (1 - 0.4 * x2 * (1 - 2.0 / 7 * x2)))
    return torch.where(ax < 0.2, small, big)


def dawsn(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Dawson's integral exp(-x^2) * integral_0^x exp(t^2) dt."""
    return _wide(_dawson, x, "tf.math.special.dawsn")


def _power_sum(x: torch.Tensor, steps: int) -> torch.Tensor:
    """sum_k x^k / (k k!) for k >= 1."""
    term = torch.ones_like(x)
    total = torch.zeros_like(x)
    for k in range(1, steps):
        term = term * x / k
        total = total + term / k
    return total


def _ei(x: torch.Tensor) -> torch.Tensor:
    safe = torch.where(x > 0, x, torch.ones_like(x))
    series = _EULER + torch.log(safe) + _power_sum(torch.where(safe <= 60, safe, torch.zeros_like(x)), 250)
    # Past 60 the asymptotic expansion e^x / x * sum k! / x^k is accurate to double precision.
    far = torch.exp(safe) / safe * sum(math.factorial(k) / safe ** k for k in range(12))
    out = torch.where(safe > 60, far, series)
    out = torch.where(x == 0, torch.full_like(x, -math.inf), out)
    return torch.where(x < 0, torch.full_like(x, math.nan), out)


def expint(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The exponential integral Ei(x) for x >= 0 (-inf at 0; NaN below 0, as TF gives)."""
    return _wide(_ei, x, "tf.math.special.expint")


def _fresnel(x: torch.Tensor) -> tuple:
    """(C(x), S(x)): power series for |x| < 1.8, the complex continued fraction of erfc beyond (as in Numerical
    Recipes' frenel)."""
    ax = x.abs()
    t2 = (math.pi / 2) * ax * ax
    # Series: C = sum (-1)^n (pi/2)^{2n} x^{4n+1} / ((2n)! (4n+1)), S likewise with odd powers.
    c_sum, s_sum = torch.zeros_like(x), torch.zeros_like(x)
    term = ax.clone()
    for n in range(40):
        k = 2 * n
        c_sum = c_sum + term / (2 * k + 1)
        term = term * t2 / (k + 1)
        s_sum = s_sum + term / (2 * k + 3)
        term = -term * t2 / (k + 2)
    # Continued fraction for large |x|.
    big_x = torch.where(ax < 1.8, torch.full_like(ax, 2.0), ax)
    tt = (math.pi / 2) * big_x * big_x
    b = torch.complex(torch.ones_like(big_x), -math.pi * big_x * big_x)
    cc = torch.full_like(b, 1e300)
    d = 1 / b
    h = d
    n = -1
    for k in range(2, 200):
        n += 2
        a = -float(n * (n + 1))
        b = b + 4
        d = 1 / (a * d + b)
        cc = b + a / cc
        h = h * cc * d
    h = h * torch.complex(big_x, -big_x)
    cs = torch.complex(torch.full_like(big_x, 0.5), torch.full_like(big_x, 0.5)) * (
        1 - torch.complex(torch.cos(tt), torch.sin(tt)) * h)
    big_c, big_s = cs.real, cs.imag
    c = torch.where(ax < 1.8, c_sum, big_c)
    s = torch.where(ax < 1.8, s_sum, big_s)
    return torch.sign(x) * c, torch.sign(x) * s


def fresnel_cos(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The Fresnel cosine integral C(x) = integral_0^x cos(pi t^2 / 2) dt."""
    return _wide(lambda t: _fresnel(t)[0], x, "tf.math.special.fresnel_cos")


def fresnel_sin(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The Fresnel sine integral S(x) = integral_0^x sin(pi t^2 / 2) dt."""
    return _wide(lambda t: _fresnel(t)[1], x, "tf.math.special.fresnel_sin")


def _li2_series(z: torch.Tensor, steps: int = 80) -> torch.Tensor:
    """sum_k z^k / k^2, for |z| <= 1/2."""
    term = torch.ones_like(z)
    total = torch.zeros_like(z)
    for k in range(1, steps):
        term = term * z
        total = total + term / (k * k)
    return total


def _spence(x: torch.Tensor) -> torch.Tensor:
    """Li2(1 - x) by the series and its reflection/inversion identities."""
    pi2_6 = math.pi ** 2 / 6
    inv = x > 2
    y = torch.where(inv, 1 / torch.where(inv, x, torch.ones_like(x)), x)  # now y in [0, 2]
    z = 1 - y  # in [-1, 1]
    low = z < -0.5  # y in (1.5, 2]: Li2(z) = -Li2(z / (z - 1)) - ln^2(1 - z) / 2
    high = z > 0.5  # y in [0, 0.5): Li2(z) = pi^2/6 - ln z ln(1 - z) - Li2(1 - z)
    zl = torch.where(low, z / (z - 1), torch.zeros_like(z))
    val_low = -_li2_series(zl) - 0.5 * torch.log1p(-torch.where(low, z, torch.zeros_like(z))) ** 2
    yh = torch.where(high, y, torch.full_like(y, 0.5))
    val_high = pi2_6 - torch.log(1 - yh) * torch.log(yh) - _li2_series(yh)
    val_high = torch.where(y == 0, torch.full_like(y, pi2_6), val_high)
    val_mid = _li2_series(torch.where(low | high, torch.zeros_like(z), z))
    val = torch.where(low, val_low, torch.where(high, val_high, val_mid))
    val = torch.where(inv, -val - 0.5 * torch.log(torch.where(inv, x, torch.ones_like(x))) ** 2, val)
    return torch.where(x < 0, torch.full_like(x, math.nan), val)


def spence(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Spence's function integral_1^x log(t) / (1 - t) dt, i.e. dilog(1 - x) (NaN below 0)."""
    return _wide(_spence, x, "tf.math.special.spence")
