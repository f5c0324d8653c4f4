"""tf.experimental.numpy's selection and triangle functions: take (clip mode by default, as in TF),
take_along_axis, where, select, compress, nonzero, clip, diagonal, trace, tril/triu and diff."""
from __future__ import annotations

from typing import Any

import torch

from torchstrategy.experimental_numpy import _dtypes
from torchstrategy.experimental_numpy._arrays import asarray, one_axis, promote

__all__ = ["take", "take_along_axis", "where", "select", "compress", "nonzero", "clip", "diagonal", "trace", "tril",
           "triu", "diff"]


def _indices(value: Any, op: str) -> torch.Tensor:
    index = asarray(value, op=op)
    if _dtypes.is_inexact(index.dtype) or index.dtype == torch.bool:
        raise TypeError(f"tnp.{op}: indices must be integers, got {index.dtype}.")
    return index.to(torch.int64)


def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "clip") -> torch.Tensor:
    """Values of `a` at `indices` along `axis` (of the flattened array when None). Out-of-range indices are
    clipped (mode='clip', TF's default) or wrapped ('wrap'); 'raise' refuses them."""
    if out is not None:
        raise NotImplementedError("tnp.take(out=...) is not supported: arrays are immutable here, as in TF.")
    if mode not in ("clip", "wrap", "raise"):
        raise ValueError(f"tnp.take: invalid mode {mode!r}; use 'clip', 'wrap' or 'raise'.")
    value = asarray(a, op="take")
    if axis is None:
        value, dim = value.reshape(-1), 0
    else:
        dim = one_axis(axis, value.dim(), "take")
    index = _indices(indices, "take").to(value.device)
    length = value.shape[dim]
    if mode == "clip":
        index = index.clamp(0, max(length - 1, 0))
    elif mode == "wrap":
        index = torch.remainder(index, length)
    elif bool(((index < -length) | (index >= length)).any()):
        raise IndexError(f"tnp.take: index out of range for axis {dim} of size {length}.")
    else:
        index = torch.remainder(index, length)
    picked = value.index_select(dim, index.reshape(-1))
    shape = value.shape[:dim] + index.shape + value.shape[dim + 1:]
    return picked.reshape(shape)


def take_along_axis(arr: Any, indices: Any, axis: Any) -> torch.Tensor:
    """Values of `arr` at the matching `indices` along `axis` (indices broadcast against arr's other axes)."""
    value = asarray(arr, op="take_along_axis")
    index = _indices(indices, "take_along_axis").to(value.device)
    if axis is None:
        value, dim = value.reshape(-1), 0
        index = index.reshape(-1)
    else:
        dim = one_axis(axis, value.dim(), "take_along_axis")
    if index.dim() != value.dim():
        raise ValueError("tnp.take_along_axis: indices and arr must have the same number of dimensions.")
    index = torch.where(index < 0, index + value.shape[dim], index)
    shape = list(torch.broadcast_shapes(tuple(s if i != dim else 1 for i, s in enumerate(value.shape)),
                                        tuple(s if i != dim else 1 for i, s in enumerate(index.shape))))
    value_shape, index_shape = list(shape), list(shape)
    value_shape[dim], index_shape[dim] = value.shape[dim], index.shape[dim]
    return torch.gather(value.expand(value_shape), dim, index.expand(index_shape))


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """x where `condition`, else y (promoted to one dtype); with only `condition`, its nonzero indices."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("tnp.where: pass both x and y, or neither.")
    mask = asarray(condition, op="where") != 0
    left, right = promote(x, y, op="where")
    return torch.where(mask.to(left.device), left, right)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> torch.Tensor:
    """From the choice of the first true condition, elementwise; `default` where none is true."""
    conditions, choices = list(condlist), list(choicelist)
    if len(conditions) != len(choices):
        raise ValueError("tnp.select: condlist and choicelist must have the same length.")
    if not conditions:
        raise ValueError("tnp.select: condlist must not be empty.")
    values = promote(*choices, default, op="select")
    out = values[-1]
    for condition, choice in zip(reversed(conditions), reversed(values[:-1])):
        mask = asarray(condition, op="select")
        if mask.dtype != torch.bool:
            raise TypeError(f"tnp.select: conditions must be bool arrays, got {mask.dtype}.")
        out = torch.where(mask, choice, out)
    return out


def compress(condition: Any, a: Any, axis: Any = None) -> torch.Tensor:
    """The slices of `a` along `axis` (of the flattened array when None) where `condition` is true; a short
    condition counts as False past its end."""
    mask = asarray(condition, op="compress") != 0
    if mask.dim() != 1:
        raise ValueError("tnp.compress: condition must be a 1-d array.")
    value = asarray(a, op="compress")
    if axis is None or value.dim() == 0:
        value, dim = value.reshape(-1), 0
    else:
        dim = one_axis(axis, value.dim(), "compress")
    length = value.shape[dim]
    if mask.shape[0] > length:
        if bool(mask[length:].any()):
            raise IndexError(f"tnp.compress: condition has a true value past axis {dim}'s length {length}.")
        mask = mask[:length]
    picked = torch.nonzero(mask.to(value.device)).reshape(-1)
    return value.index_select(dim, picked)


def nonzero(a: Any) -> tuple:
    """The indices (int64) of the non-zero values, one array per dimension (a 0-d input counts as 1-D)."""
    value = asarray(a, op="nonzero")
    if value.dim() == 0:
        value = value.reshape(1)
    return tuple(torch.nonzero(value != 0, as_tuple=True))


def clip(a: Any, a_min: Any, a_max: Any) -> torch.Tensor:
    """`a` limited to [a_min, a_max] (one bound may be None); the three are promoted to one dtype."""
    if a_min is None and a_max is None:
        raise ValueError("tnp.clip: at most one of a_min and a_max may be None.")
    if a_min is None:
        value, high = promote(a, a_max, op="clip")
        return torch.minimum(value, high)
    if a_max is None:
        value, low = promote(a, a_min, op="clip")
        return torch.maximum(value, low)
    value, low, high = promote(a, a_min, a_max, op="clip")
    return torch.minimum(torch.maximum(value, low), high)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> torch.Tensor:
    """The `offset` diagonal over axes (axis1, axis2), as the last axis of the result."""
    value = asarray(a, op="diagonal")
    if value.dim() < 2:
        raise ValueError("tnp.diagonal: the array must have at least 2 dimensions.")
    first, second = one_axis(axis1, value.dim(), "diagonal"), one_axis(axis2, value.dim(), "diagonal")
    return torch.diagonal(value, int(offset), first, second)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> torch.Tensor:
    """The sum of the `offset` diagonal over (axis1, axis2); it keeps an integer input's dtype (TF's rule)."""
    value = asarray(a, dtype, op="trace")
    if value.dtype == torch.bool:
        raise TypeError("tnp.trace does not take bool input; pass dtype=... to sum it as numbers.")
    return torch.sum(diagonal(value, offset, axis1, axis2), dim=-1).to(value.dtype)


def _triangle(m: Any, k: int, fn: Any, op: str) -> torch.Tensor:
    value = asarray(m, op=op)
    if value.dim() == 0:
        raise ValueError(f"tnp.{op}: the input must be at least 1-d.")
    if value.dim() == 1:
        value = torch.broadcast_to(value, (value.shape[0], value.shape[0]))
    if value.dtype == torch.bool:
        return fn(value.to(torch.int8), int(k)).to(torch.bool)
    return fn(value, int(k))


def tril(m: Any, k: int = 0) -> torch.Tensor:
    """`m` with the values above the k-th diagonal zeroed (a 1-D m is taken as the rows of a square)."""
    return _triangle(m, k, torch.tril, "tril")


def triu(m: Any, k: int = 0) -> torch.Tensor:
    """`m` with the values below the k-th diagonal zeroed (a 1-D m is taken as the rows of a square)."""
    return _triangle(m, k, torch.triu, "triu")


def diff(a: Any, n: int = 1, axis: int = -1) -> torch.Tensor:
    """The n-th discrete difference along `axis` (for bools: not-equal of neighbours)."""
    value = asarray(a, op="diff")
    if value.dim() == 0:
        raise ValueError("tnp.diff requires input that is at least one dimensional.")
    if n < 0:
        raise ValueError(f"tnp.diff: order must be non-negative, got {n}.")
    dim = one_axis(axis, value.dim(), "diff")
    for _ in range(int(n)):
        length = value.shape[dim]
        upper, lower = value.narrow(dim, 1, max(length - 1, 0)), value.narrow(dim, 0, max(length - 1, 0))
        value = upper != lower if value.dtype == torch.bool else upper - lower
    return value

