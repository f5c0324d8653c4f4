"""The legacy backend's tensor math: element-wise functions (TF's tf.math ones and Keras's sqrt, pow, clip),
the reductions (K.mean, K.sum, K.std...; booleans average as floatx) and the products dot and batch_dot."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import torch

from torchstrategy import array_ops
from torchstrategy import math as math_ops
from torchstrategy.keras._legacy_backend.settings import _floatx_dtype, _t


# ----- element-wise math --------------------------------------------------------------------------------------

def _unary(op: Any) -> Any:
    def fn(x: Any) -> torch.Tensor:
        return op(x)

    fn.__name__ = fn.__qualname__ = op.__name__
    fn.__doc__ = f"Element-wise {op.__name__} (the legacy backend's `{op.__name__}(x)`)."
    return fn


def _binary(op: Any) -> Any:
    def fn(x: Any, y: Any) -> torch.Tensor:
        return op(x, y)

    fn.__name__ = fn.__qualname__ = op.__name__
    fn.__doc__ = f"Element-wise {op.__name__} (the legacy backend's `{op.__name__}(x, y)`)."
    return fn


abs = _unary(math_ops.abs)
exp = _unary(math_ops.exp)
log = _unary(math_ops.log)
square = _unary(math_ops.square)
sign = _unary(math_ops.sign)
round = _unary(math_ops.round)
sin = _unary(math_ops.sin)
cos = _unary(math_ops.cos)
tanh = _unary(math_ops.tanh)
softplus = _unary(math_ops.softplus)
maximum = _binary(math_ops.maximum)
minimum = _binary(math_ops.minimum)
equal = _binary(math_ops.equal)
not_equal = _binary(math_ops.not_equal)
greater = _binary(math_ops.greater)
greater_equal = _binary(math_ops.greater_equal)
less = _binary(math_ops.less)
less_equal = _binary(math_ops.less_equal)


def pow(x: Any, a: Any) -> torch.Tensor:
    """x ** a (a takes x's dtype)."""
    return math_ops.pow(x, a)


def sqrt(x: Any) -> torch.Tensor:
    """sqrt(max(x, 0)): negatives give 0, not NaN (Keras clamps first)."""
    tensor = _t(x, "sqrt")
    return math_ops.sqrt(tensor.clamp_min(0))


def clip(x: Any, min_value: Any, max_value: Any) -> torch.Tensor:
    """Clips into [min_value, max_value]; None means unbounded and max < min is raised to min (Keras)."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and max_value < min_value:
        max_value = min_value
    tensor = _t(x, "clip")
    lo = -np.inf if min_value is None else min_value
    hi = np.inf if max_value is None else max_value
    if not tensor.dtype.is_floating_point:
        return tensor.clamp(None if min_value is None else lo, None if max_value is None else hi)
    return math_ops.clip_by_value(tensor, lo, hi)


def l2_normalize(x: Any, axis: Any = None) -> torch.Tensor:
    """x / sqrt(max(sum(x**2, axis), 1e-12))."""
    return math_ops.l2_normalize(x, axis=axis)


# ----- reductions ---------------------------------------------------------------------------------------------


def _bool_to_floatx(x: Any, op: str) -> torch.Tensor:
    tensor = _t(x, op)
    return tensor.to(_floatx_dtype()) if tensor.dtype is torch.bool else tensor


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return math_ops.reduce_sum(x, axis, keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return math_ops.reduce_prod(x, axis, keepdims)


def max(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return math_ops.reduce_max(x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return math_ops.reduce_min(x, axis, keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Mean over `axis` (all axes by default); booleans are averaged as floatx; ints stay ints (TF)."""
    return math_ops.reduce_mean(_bool_to_floatx(x, "mean"), axis, keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Population variance (ddof 0) over `axis`."""
    return math_ops.reduce_variance(_bool_to_floatx(x, "var"), axis, keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Population standard deviation (ddof 0) over `axis`."""
    return math_ops.reduce_std(_bool_to_floatx(x, "std"), axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Logical OR over `axis` of `x` cast to bool."""
    return math_ops.reduce_any(_t(x, "any").to(torch.bool), axis, keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Logical AND over `axis` of `x` cast to bool."""
    return math_ops.reduce_all(_t(x, "all").to(torch.bool), axis, keepdims)


def argmax(x: Any, axis: int = -1) -> torch.Tensor:
    """Index of the largest value along `axis` (last by default), int64."""
    return math_ops.argmax(x, axis)


def argmin(x: Any, axis: int = -1) -> torch.Tensor:
    return math_ops.argmin(x, axis)


def cumsum(x: Any, axis: int = 0) -> torch.Tensor:
    return math_ops.cumsum(x, axis=axis)


def cumprod(x: Any, axis: int = 0) -> torch.Tensor:
    return math_ops.cumprod(x, axis=axis)


# ----- linear algebra -----------------------------------------------------------------------------------------


def dot(x: Any, y: Any) -> torch.Tensor:
    """Keras's dot: matmul for rank <= 2; for higher ranks it contracts x's last axis with y's
    second-to-last, giving shape x.shape[:-1] + y.shape[:-2] + y.shape[-1:]."""
    a, b = _t(x, "dot"), _t(y, "dot")
    if a.dim() > 2 or b.dim() > 2:
        return torch.tensordot(a, b, dims=([a.dim() - 1], [b.dim() - 2 if b.dim() >= 2 else 0]))
    return array_ops.matmul(a, b)


def batch_dot(x: Any, y: Any, axes: Any = None) -> torch.Tensor:
    """Per-sample dot product over `axes` (default: x's last with y's last (rank 2) or second-to-last).

    >>> batch_dot(torch.ones(32, 20), torch.ones(32, 20), axes=1).shape
    torch.Size([32, 1])
    """
    a, b = _t(x, "batch_dot"), _t(y, "batch_dot")
    if a.dim() < 2 or b.dim() < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}.")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"Cannot do batch_dot on inputs with different batch sizes: {tuple(a.shape)} and "
                         f"{tuple(b.shape)}.")
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [a.dim() - 1, b.dim() - 1 if b.dim() == 2 else b.dim() - 2]
    if builtins.any(isinstance(ax, (list, tuple)) for ax in axes):
        raise ValueError(f"Multiple target dimensions are not supported. Expected: None, int, (int, int). "
                         f"Provided: {axes}")
    a0, a1 = [ax + (n if ax < 0 else 0) for ax, n in zip(axes, (a.dim(), b.dim()))]
    if 0 in (a0, a1):
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not batched, add a dummy "
                         "batch dimension with K.expand_dims(x, 0).")
    if a.shape[a0] != b.shape[a1]:
        raise ValueError(f"Cannot do batch_dot on inputs with shapes {tuple(a.shape)} and {tuple(b.shape)} with "
                         f"axes={[a0, a1]}: x.shape[{a0}] != y.shape[{a1}] ({a.shape[a0]} != {b.shape[a1]}).")
    a_free = [d for d in range(1, a.dim()) if d != a0]
    b_free = [d for d in range(1, b.dim()) if d != a1]
    a_moved = a.permute([0] + a_free + [a0]).reshape(a.shape[0], -1, a.shape[a0])
    b_moved = b.permute([0, a1] + b_free).reshape(b.shape[0], b.shape[a1], -1)
    out = torch.bmm(a_moved, b_moved)
    out_shape = [a.shape[0]] + [a.shape[d] for d in a_free] + [b.shape[d] for d in b_free]
    if len(out_shape) == 1:  # both rank 2: Keras keeps a trailing axis of size 1
        out_shape.append(1)
    return out.reshape(out_shape)
