"""tf.experimental.numpy's two-input elementwise functions (add, divide, power, maximum, comparisons, logical and
bitwise ops, gcd, isclose, ...): both inputs promoted to TF's result_type, then NumPy's operation."""
from __future__ import annotations

import math
from typing import Any, Callable

import torch

from torchstrategy.experimental_numpy import _dtypes
from torchstrategy.experimental_numpy import elementwise as _elementwise
from torchstrategy.experimental_numpy._arrays import asarray, promote, promote_to, to_float

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod", "remainder", "divmod",
           "power", "float_power", "maximum", "minimum", "arctan2", "hypot", "heaviside", "nextafter", "logaddexp",
           "logaddexp2", "gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "not_equal", "greater",
           "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_xor", "isclose", "allclose",
           "array_equal"]

_UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)
# TF's true division of integers: the narrow ones (8 and 16 bits) divide in float32, the wide ones in float64.
_NARROW_INTS = (torch.bool, torch.int8, torch.uint8, torch.int16, torch.uint16)


def _binary(name: str, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], doc: str) -> Callable:
    def op(x1: Any, x2: Any) -> torch.Tensor:
        a, b = promote(x1, x2, op=name)
        return fn(a, b)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _no_bool(name: str, fn: Callable) -> Callable:
    def checked(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.dtype == torch.bool:
            raise TypeError(f"tnp.{name} does not take two bool inputs; cast one to an integer dtype first.")
        return fn(a, b)
    return checked


def _no_complex(name: str, fn: Callable) -> Callable:
    def checked(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.is_complex():
            raise TypeError(f"tnp.{name} does not take complex input ({a.dtype}).")
        return fn(a, b)
    return checked


add = _binary("add", lambda a, b: torch.logical_or(a, b) if a.dtype == torch.bool else a + b,
              "x1 + x2, elementwise (logical OR for two bool inputs).")
subtract = _binary("subtract", _no_bool("subtract", lambda a, b: a - b), "x1 - x2, elementwise.")
multiply = _binary("multiply", lambda a, b: torch.logical_and(a, b) if a.dtype == torch.bool else a * b,
                   "x1 * x2, elementwise (logical AND for two bool inputs).")


def _true_divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if not _dtypes.is_inexact(a.dtype):
        target = torch.float32 if a.dtype in _NARROW_INTS and a.dtype != torch.bool else torch.float64
        a, b = a.to(target), b.to(target)
    return a / b


true_divide = _binary("true_divide", _true_divide,
                      "x1 / x2, elementwise; integers divide in float32 (8 and 16 bits) or float64 (TF's rule), "
                      "bools in float64.")
divide = _binary("divide", _true_divide, "x1 / x2, elementwise (the same as tnp.true_divide).")


def _floor_divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dtype == torch.bool:
        raise TypeError("tnp.floor_divide does not take two bool inputs.")
    if a.is_complex():
        raise TypeError("tnp.floor_divide does not take complex input.")
    if a.is_floating_point():
        return torch.floor(a / b)
    safe = torch.where(b == 0, torch.ones_like(b), b)
    return torch.where(b == 0, torch.zeros_like(a), torch.div(a, safe, rounding_mode="floor"))


def _mod(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dtype == torch.bool:
        raise TypeError("tnp.mod does not take two bool inputs.")
    if a.is_complex():
        raise TypeError("tnp.mod does not take complex input.")
    if a.is_floating_point():
        return torch.remainder(a, b)
    safe = torch.where(b == 0, torch.ones_like(b), b)
    return torch.where(b == 0, torch.zeros_like(a), torch.remainder(a, safe))


floor_divide = _binary("floor_divide", _floor_divide, "x1 // x2, elementwise (rounded towards -inf).")
mod = _binary("mod", _mod, "The remainder of x1 / x2 with the divisor's sign, elementwise (NumPy's mod).")
remainder = _binary("remainder", _mod, "The same as tnp.mod.")


def divmod(x1: Any, x2: Any) -> tuple:  # noqa: A001
    """(floor_divide(x1, x2), mod(x1, x2))."""
    return floor_divide(x1, x2), mod(x1, x2)


def _power(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dtype == torch.bool or a.dtype in _UNSIGNED:
        raise TypeError(f"tnp.power does not take {a.dtype} inputs (as in TF); cast them to a signed dtype first.")
    if not _dtypes.is_inexact(a.dtype) and bool((b < 0).any()):
        raise ValueError("tnp.power: integers to negative integer powers are not allowed.")
    return torch.pow(a, b)


power = _binary("power", _power, "x1 ** x2, elementwise.")
float_power = _binary("float_power", _power,
                      "x1 ** x2, elementwise; as in TF it computes in the inputs' common dtype (NumPy uses float64).")


def _extremum(name: str, fn: Callable, logical: Callable) -> Callable:
    def op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.is_complex():
            raise TypeError(f"tnp.{name} does not take complex input.")
        return logical(a, b) if a.dtype == torch.bool else fn(a, b)
    return op


maximum = _binary("maximum", _extremum("maximum", torch.maximum, torch.logical_or),
                  "The larger of x1 and x2, elementwise (NaN wins).")
minimum = _binary("minimum", _extremum("minimum", torch.minimum, torch.logical_and),
                  "The smaller of x1 and x2, elementwise (NaN wins).")


def _float_binary(name: str, fn: Callable, doc: str) -> Callable:
    def op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.is_complex():
            raise TypeError(f"tnp.{name} does not take complex input.")
        return fn(to_float(a), to_float(b))
    return _binary(name, op, doc)


arctan2 = _float_binary("arctan2", torch.atan2,
                        "The angle of the point (x2, x1), elementwise (non-float inputs in float64).")
nextafter = _float_binary("nextafter", torch.nextafter,
                          "The next representable float after x1 towards x2, elementwise.")


def _heaviside(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.where(a < 0, torch.zeros_like(b), torch.where(a > 0, torch.ones_like(b), b))
    return to_float(out)


heaviside = _binary("heaviside", _no_complex("heaviside", _heaviside),
                    "0 where x1 < 0, 1 where x1 > 0, x2 where x1 == 0 (non-float results in float64).")


def hypot(x1: Any, x2: Any) -> torch.Tensor:
    """sqrt(x1**2 + x2**2), elementwise, composed as TF composes it (so its dtypes are TF's)."""
    square = _elementwise.square
    return _elementwise.sqrt(add(square(asarray(x1, op="hypot")), square(asarray(x2, op="hypot"))))



def _log_add_exp(name: str, x1: Any, x2: Any, exp_fn: Callable, scale: float) -> torch.Tensor:
    a, b = promote(x1, x2, op=name)
    if a.is_complex():
        raise TypeError(f"tnp.{name} does not take complex input.")
    a, b = to_float(a), to_float(b)
    biggest = maximum(a, b)
    delta = subtract(a, b)
    tail = _elementwise.log1p(exp_fn(-_elementwise.abs(delta)))
    combined = add(biggest, tail / scale if scale != 1.0 else tail)
    return torch.where(_elementwise.isnan(delta), add(a, b), combined)


def logaddexp(x1: Any, x2: Any) -> torch.Tensor:
    """log(exp(x1) + exp(x2)), elementwise, without overflow."""
    return _log_add_exp("logaddexp", x1, x2, _elementwise.exp, 1.0)


def logaddexp2(x1: Any, x2: Any) -> torch.Tensor:
    """log2(2**x1 + 2**x2), elementwise, without overflow."""
    return _log_add_exp("logaddexp2", x1, x2, _elementwise.exp2, math.log(2.0))


def _integers(name: str, a: torch.Tensor) -> None:
    if _dtypes.is_inexact(a.dtype):
        raise TypeError(f"tnp.{name} takes integers, got {a.dtype}.")


def _gcd(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    _integers("gcd", a)
    if a.dtype == torch.bool:
        raise TypeError("tnp.gcd takes integers, got two bool inputs.")
    return torch.gcd(a, b)


def _lcm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    _integers("lcm", a)
    if a.dtype == torch.bool:
        raise TypeError("tnp.lcm takes integers, got two bool inputs.")
    return torch.abs(torch.lcm(a, b)) if a.dtype not in _UNSIGNED else torch.lcm(a, b)


gcd = _binary("gcd", _gcd, "The greatest common divisor of |x1| and |x2|, elementwise (integers only).")
lcm = _binary("lcm", _lcm, "The lowest common multiple of |x1| and |x2|, elementwise (integers only).")


def _bitwise(name: str, fn: Callable) -> Callable:
    def op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        _integers(name, a)
        return fn(a, b)
    return op


bitwise_and = _binary("bitwise_and", _bitwise("bitwise_and", torch.bitwise_and), "x1 & x2 for integers and bools.")
bitwise_or = _binary("bitwise_or", _bitwise("bitwise_or", torch.bitwise_or), "x1 | x2 for integers and bools.")
bitwise_xor = _binary("bitwise_xor", _bitwise("bitwise_xor", torch.bitwise_xor), "x1 ^ x2 for integers and bools.")


def _ordered(name: str, fn: Callable) -> Callable:
    def op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.is_complex():
            raise TypeError(f"tnp.{name} does not order complex values.")
        return fn(a, b)
    return op


equal = _binary("equal", torch.eq, "x1 == x2, elementwise.")
not_equal = _binary("not_equal", torch.ne, "x1 != x2, elementwise.")
greater = _binary("greater", _ordered("greater", torch.gt), "x1 > x2, elementwise.")
greater_equal = _binary("greater_equal", _ordered("greater_equal", torch.ge), "x1 >= x2, elementwise.")
less = _binary("less", _ordered("less", torch.lt), "x1 < x2, elementwise.")
less_equal = _binary("less_equal", _ordered("less_equal", torch.le), "x1 <= x2, elementwise.")


def _logical(name: str, fn: Callable) -> Callable:
    def op(x1: Any, x2: Any) -> torch.Tensor:
        a, b = promote_to(torch.bool, asarray(x1, op=name) != 0, asarray(x2, op=name) != 0, op=name)
        return fn(a, b)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{name.split('_')[1].upper()} of the inputs taken as truth values, elementwise."
    return op


logical_and = _logical("logical_and", torch.logical_and)
logical_or = _logical("logical_or", torch.logical_or)
logical_xor = _logical("logical_xor", torch.logical_xor)


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> torch.Tensor:
    """|a - b| <= atol + rtol * |b|, elementwise (exact equality for integers); NaNs equal when equal_nan."""
    x, y = promote(a, b, op="isclose")
    if not _dtypes.is_inexact(x.dtype):
        return x == y
    close = torch.abs(x - y) <= atol + rtol * torch.abs(y)
    both_inf = torch.isinf(x) & torch.isinf(y) & (x == y) if not x.is_complex() else x == y
    close = close | both_inf if not x.is_complex() else close
    if equal_nan:
        close = close | (torch.isnan(x) & torch.isnan(y))
    return close


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> torch.Tensor:
    """True when every pair of values is close (see tnp.isclose); a 0-d bool tensor."""
    return torch.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1: Any, a2: Any) -> torch.Tensor:
    """True when both arrays have one shape and equal values; a 0-d bool tensor."""
    x, y = promote(a1, a2, op="array_equal")
    if x.shape != y.shape:
        return torch.tensor(False, device=x.device)
    return torch.all(x == y)
