"""keras.ops.numpy's reductions and scans: sum, prod, mean, var, std, max, min, any, all, argmax, argmin,
cumsum, cumprod, count_nonzero, median, quantile and average (int inputs keep their dtype, as Keras 3)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras.ops._core import _axes, _float, _keep_int, _t


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Sum over `axis` (all by default); int inputs keep their dtype, bools sum as int32."""
    tensor = _t(x)
    axes = _axes(axis)
    result = tensor.sum() if axes is None and not keepdims else torch.sum(
        tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), keepdim=keepdims)
    return _keep_int(result, tensor)


def prod(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    result = tensor
    if axis is None:
        result = tensor.prod()
        if keepdims:
            result = result.reshape((1,) * tensor.dim())
    else:
        for a in sorted((axis if isinstance(axis, (list, tuple)) else [axis]), key=lambda a: -(a % tensor.dim())):
            result = result.prod(dim=a, keepdim=keepdims)
    result = _keep_int(result, tensor)
    return result if dtype is None else result.to(as_dtype(dtype))


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Mean over `axis` (all by default); int and bool inputs give floatx."""
    tensor = _float(x)
    axes = _axes(axis)
    if axes is None:
        axes = tuple(range(tensor.dim()))
    return torch.mean(tensor, dim=axes, keepdim=keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Population variance (ddof 0)."""
    tensor = _float(x)
    axes = _axes(axis)
    return torch.var(tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), correction=0,
                     keepdim=keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Population standard deviation (ddof 0)."""
    return torch.sqrt(var(x, axis, keepdims))


def _extreme(tensor: torch.Tensor, axis: Any, keepdims: bool, fn: Any, initial: Any) -> torch.Tensor:
    axes = _axes(axis)
    if axes is None:
        axes = tuple(range(tensor.dim()))
    if tensor.dim() == 0:
        result = tensor
    else:
        result = fn(tensor, dim=axes, keepdim=keepdims)
    if initial is not None:
        result = torch.maximum(result, torch.tensor(initial, dtype=result.dtype)) if fn is torch.amax else \
            torch.minimum(result, torch.tensor(initial, dtype=result.dtype))
    return result


def max(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> torch.Tensor:
    return _extreme(_t(x), axis, keepdims, torch.amax, initial)


def min(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> torch.Tensor:
    return _extreme(_t(x), axis, keepdims, torch.amin, initial)


def amax(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """The largest entries over `axis` (all axes when None)."""
    return _extreme(_t(x), axis, keepdims, torch.amax, None)


def amin(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """The smallest entries over `axis` (all axes when None)."""
    return _extreme(_t(x), axis, keepdims, torch.amin, None)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _t(x).to(torch.bool)
    axes = _axes(axis)
    return torch.any(tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), keepdim=keepdims) \
        if tensor.dim() else tensor


def all(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _t(x).to(torch.bool)
    axes = _axes(axis)
    return torch.all(tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), keepdim=keepdims) \
        if tensor.dim() else tensor


def argmax(x: Any, axis: Optional[int] = None, keepdims: bool = False) -> torch.Tensor:
    """Index of the largest value (over the flattened input when axis is None), int32 (Keras 3)."""
    tensor = _t(x)
    return torch.argmax(tensor, dim=axis, keepdim=keepdims if axis is not None else False).to(torch.int32)


def argmin(x: Any, axis: Optional[int] = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _t(x)
    return torch.argmin(tensor, dim=axis, keepdim=keepdims if axis is not None else False).to(torch.int32)


def cumsum(x: Any, axis: Optional[int] = None, dtype: Any = None) -> torch.Tensor:
    """Running sum along `axis` (the flattened input when None); int inputs keep their dtype."""
    tensor = _t(x)
    source = tensor.reshape(-1) if axis is None else tensor
    result = _keep_int(torch.cumsum(source, dim=0 if axis is None else axis), tensor)
    return result if dtype is None else result.to(as_dtype(dtype))


def cumprod(x: Any, axis: Optional[int] = None, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    source = tensor.reshape(-1) if axis is None else tensor
    result = _keep_int(torch.cumprod(source, dim=0 if axis is None else axis), tensor)
    return result if dtype is None else result.to(as_dtype(dtype))


def count_nonzero(x: Any, axis: Any = None) -> torch.Tensor:
    """Number of non-zero entries, int32."""
    tensor = _t(x)
    return torch.count_nonzero(tensor, dim=_axes(axis)).to(torch.int32)


def median(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """The median (the mean of the two middle values for even counts, as NumPy)."""
    tensor = _float(x)
    return torch.quantile(tensor.reshape(-1) if axis is None else tensor, 0.5,
                          dim=None if axis is None else axis, keepdim=keepdims and axis is not None)


def quantile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False) -> torch.Tensor:
    tensor = _float(x)
    return torch.quantile(tensor, torch.as_tensor(q, dtype=tensor.dtype), dim=axis, keepdim=keepdims,
                          interpolation=method)


def average(x: Any, axis: Any = None, weights: Any = None) -> torch.Tensor:
    tensor = _float(x)
    if weights is None:
        return mean(tensor, axis)
    w = _t(weights).to(tensor.dtype)
    if axis is not None and w.dim() == 1 and tensor.dim() > 1:
        w = w.reshape([-1 if d == axis % tensor.dim() else 1 for d in range(tensor.dim())])
    return (tensor * w).sum(dim=axis) / (w * torch.ones_like(tensor)).sum(dim=axis)
