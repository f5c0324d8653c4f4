"""tf.experimental.numpy's reductions and orderings: sum/prod/mean/std/var, amax/amin, all/any, argmax/argmin,
cumsum/cumprod, the nan-ignoring ones, ptp, average, count_nonzero, sort/argsort -- with TF's dtype rules."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import torch

from torchstrategy.experimental_numpy import _dtypes
from torchstrategy.experimental_numpy._arrays import asarray, axis_tuple, one_axis, promote_to

__all__ = ["sum", "prod", "mean", "std", "var", "amax", "amin", "max", "min", "all", "any", "argmax", "argmin",
           "count_nonzero", "cumsum", "cumprod", "nansum", "nanprod", "nanmean", "ptp", "average", "sort", "argsort"]

_WIDE_INT = {torch.uint8: torch.uint64, torch.uint16: torch.uint64, torch.uint32: torch.uint64}


def _refuse_out(out: Any, op: str) -> None:
    if out is not None:
        raise NotImplementedError(f"tnp.{op}(out=...) is not supported: arrays are immutable here, as in TF; "
                                  "use the returned array.")


def _dims(value: torch.Tensor, axis: Any, op: str) -> Optional[tuple]:
    axes = axis_tuple(axis, value.dim(), op)
    if axes is not None and value.dim() == 0:
        return None
    return axes


def _reduce(fn: Any, value: torch.Tensor, axis: Any, keepdims: Any, op: str) -> torch.Tensor:
    """fn(value, dim=..., keepdim=...) over `axis` (all dims when None)."""
    axes = _dims(value, axis, op)
    keep = bool(keepdims)
    if axes is None:
        out = fn(value.reshape(-1), dim=0)
        return out.reshape((1,) * value.dim()) if keep else out
    return fn(value, dim=axes, keepdim=keep)


def _widened(value: torch.Tensor) -> torch.Tensor:
    """Integers and bools narrower than 64 bits as int64 (uint64 when unsigned), as NumPy's sum widens them."""
    if value.dtype == torch.bool or (not _dtypes.is_inexact(value.dtype) and value.dtype not in _WIDE_INT
                                     and value.dtype != torch.uint64):
        return value.to(torch.int64)
    return value.to(_WIDE_INT[value.dtype]) if value.dtype in _WIDE_INT else value


def _prepared(a: Any, dtype: Any, op: str) -> torch.Tensor:
    value = asarray(a, dtype, op=op)
    return _widened(value) if dtype is None else value


def _sum(value: torch.Tensor, dim: Any, keepdim: bool = False) -> torch.Tensor:
    if value.dtype == torch.uint64:  # torch has no uint64 sum kernel: int64 wraps the same way, bit for bit
        return torch.sum(value.to(torch.int64), dim=dim, keepdim=keepdim, dtype=torch.int64).to(torch.uint64)
    return torch.sum(value, dim=dim, keepdim=keepdim, dtype=value.dtype)


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: Any = None) -> torch.Tensor:  # noqa: A001
    """The sum over `axis` (all axes when None); bools and narrow integers sum as int64 (NumPy's rule)."""
    value = _prepared(a, dtype, "sum")
    if value.dtype == torch.bool:
        return _reduce(torch.any, value, axis, keepdims, "sum")
    return _reduce(_sum, value, axis, keepdims, "sum")


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: Any = None) -> torch.Tensor:
    """The product over `axis`; bools and narrow integers multiply as int64."""
    value = _prepared(a, dtype, "prod")
    if value.dtype == torch.bool:
        return _reduce(torch.all, value, axis, keepdims, "prod")
    return _reduce(_product, value, axis, keepdims, "prod")


def _product(value: torch.Tensor, dim: Any, keepdim: bool = False) -> torch.Tensor:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = value.to(torch.int64) if value.dtype == torch.uint64 else value  # no uint64 kernel; int64 wraps alike
    for d in sorted(dims, reverse=True):
        out = torch.prod(out, dim=d, keepdim=keepdim, dtype=out.dtype)
    return out.to(value.dtype)


def _floated(a: Any, dtype: Any, op: str) -> torch.Tensor:
    value = asarray(a, dtype, op=op)
    return value if _dtypes.is_inexact(value.dtype) else value.to(_dtypes.default_float())


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = None) -> torch.Tensor:
    """The mean over `axis`; bools and integers average in float64."""
    _refuse_out(out, "mean")
    return _reduce(torch.mean, _floated(a, dtype, "mean"), axis, keepdims, "mean")


def _variance(value: torch.Tensor, axis: Any, ddof: int, keepdims: Any, op: str) -> torch.Tensor:
    axes = _dims(value, axis, op)
    flat = value.reshape(-1) if axes is None else value
    dims = 0 if axes is None else axes
    centered = flat - torch.mean(flat, dim=dims, keepdim=True)
    squares = (centered * centered.conj()).real if centered.is_complex() else centered * centered
    count = flat.numel() // builtins.max(1, torch.mean(flat, dim=dims, keepdim=True).numel())
    out = torch.sum(squares, dim=dims, keepdim=bool(keepdims) and axes is not None) / builtins.max(count - ddof, 0)
    if bool(keepdims) and axes is None:
        out = out.reshape((1,) * value.dim())
    return out


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: Any = None) -> torch.Tensor:
    """The variance over `axis` with `ddof` delta degrees of freedom (complex input gives its real dtype)."""
    _refuse_out(out, "var")
    value = _floated(a, None if dtype is None else _dtypes.result_type(asarray(a, op="var"), dtype), "var")
    return _variance(value, axis, int(ddof), keepdims, "var")


def std(a: Any, axis: Any = None, keepdims: Any = None) -> torch.Tensor:
    """The standard deviation over `axis` (population: ddof 0)."""
    return torch.sqrt(_variance(_floated(a, None, "std"), axis, 0, keepdims, "std"))


def _extreme(a: Any, axis: Any, keepdims: Any, op: str, fn: Any, logical: Any) -> torch.Tensor:
    value = asarray(a, op=op)
    if value.is_complex():
        raise TypeError(f"tnp.{op} does not order complex values.")
    if value.numel() == 0 and axis is None:
        raise ValueError(f"tnp.{op}: zero-size array has no {op[-3:]} (pass an array with values).")
    if value.dtype == torch.bool:
        return _reduce(logical, value, axis, keepdims, op)
    return _reduce(fn, value, axis, keepdims, op)


def amax(a: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> torch.Tensor:
    """The maximum over `axis` (NaN wins; bools: any)."""
    _refuse_out(out, "amax")
    return _extreme(a, axis, keepdims, "amax", torch.amax, torch.any)


def amin(a: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> torch.Tensor:
    """The minimum over `axis` (NaN wins; bools: all)."""
    _refuse_out(out, "amin")
    return _extreme(a, axis, keepdims, "amin", torch.amin, torch.all)


def max(a: Any, axis: Any = None, keepdims: Any = None) -> torch.Tensor:  # noqa: A001
    """The maximum over `axis` (the same as tnp.amax)."""
    return _extreme(a, axis, keepdims, "max", torch.amax, torch.any)


def min(a: Any, axis: Any = None, keepdims: Any = None) -> torch.Tensor:  # noqa: A001
    """The minimum over `axis` (the same as tnp.amin)."""
    return _extreme(a, axis, keepdims, "min", torch.amin, torch.all)


def all(a: Any, axis: Any = None, keepdims: Any = None) -> torch.Tensor:  # noqa: A001
    """True where every value over `axis` is true (non-zero)."""
    return _reduce(torch.all, asarray(a, op="all") != 0, axis, keepdims, "all")


def any(a: Any, axis: Any = None, keepdims: Any = None) -> torch.Tensor:  # noqa: A001
    """True where some value over `axis` is true (non-zero)."""
    return _reduce(torch.any, asarray(a, op="any") != 0, axis, keepdims, "any")


def _arg(a: Any, axis: Any, op: str, fn: Any) -> torch.Tensor:
    value = asarray(a, op=op)
    if value.is_complex():
        raise TypeError(f"tnp.{op} does not order complex values.")
    if value.numel() == 0:
        raise ValueError(f"tnp.{op}: attempt to get {op} of an empty sequence.")
    if value.dtype == torch.bool:
        value = value.to(torch.int8)
    if axis is None:
        return fn(value.reshape(-1))
    return fn(value, dim=one_axis(axis, value.dim(), op))


def argmax(a: Any, axis: Any = None) -> torch.Tensor:
    """The index (int64) of the first maximum, over the flattened array or along `axis`; NaN wins."""
    return _arg(a, axis, "argmax", torch.argmax)


def argmin(a: Any, axis: Any = None) -> torch.Tensor:
    """The index (int64) of the first minimum, over the flattened array or along `axis`; NaN wins."""
    return _arg(a, axis, "argmin", _argmin)


def _argmin(value: torch.Tensor, dim: Optional[int] = None) -> torch.Tensor:
    if value.is_floating_point():  # torch.argmin does not let NaN win as NumPy does
        nan = torch.isnan(value)
        if bool(nan.any()):
            return torch.argmax(nan.to(torch.int8), dim=dim) if dim is not None else torch.argmax(nan.to(torch.int8))
    return torch.argmin(value, dim=dim) if dim is not None else torch.argmin(value)


def count_nonzero(a: Any, axis: Any = None) -> torch.Tensor:
    """The number (int64) of non-zero values over `axis`."""
    value = asarray(a, op="count_nonzero") != 0
    return _reduce(torch.sum, value.to(torch.int64), axis, False, "count_nonzero")


def _cumulative(a: Any, axis: Any, dtype: Any, op: str, fn: Any) -> torch.Tensor:
    value = asarray(a, dtype, op=op)
    if dtype is None and not _dtypes.is_inexact(value.dtype):
        value = value.to(_dtypes.torch_dtype(_dtypes.promote_types(_dtypes.numpy_dtype(value.dtype), int)))
    if axis is None:
        return fn(value.reshape(-1), dim=0, dtype=value.dtype)
    return fn(value, dim=one_axis(axis, value.dim(), op), dtype=value.dtype)


def cumsum(a: Any, axis: Any = None, dtype: Any = None) -> torch.Tensor:
    """Running sums along `axis` (of the flattened array when None); integers widen to int64 (TF's rule)."""
    return _cumulative(a, axis, dtype, "cumsum", torch.cumsum)


def cumprod(a: Any, axis: Any = None, dtype: Any = None) -> torch.Tensor:
    """Running products along `axis` (of the flattened array when None); integers widen to int64."""
    return _cumulative(a, axis, dtype, "cumprod", torch.cumprod)


def _nan_input(a: Any, dtype: Any, op: str) -> torch.Tensor:
    value = asarray(a, dtype, op=op)
    if value.is_complex():
        raise TypeError(f"tnp.{op} does not take complex input here.")
    return value


def nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> torch.Tensor:
    """The sum over `axis` with NaNs counted as zero."""
    value = _nan_input(a, dtype, "nansum")
    if value.is_floating_point():
        value = torch.where(torch.isnan(value), torch.zeros_like(value), value)
    return sum(value, axis=axis, dtype=dtype, keepdims=keepdims)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> torch.Tensor:
    """The product over `axis` with NaNs counted as one."""
    value = _nan_input(a, dtype, "nanprod")
    if value.is_floating_point():
        value = torch.where(torch.isnan(value), torch.ones_like(value), value)
    return prod(value, axis=axis, dtype=dtype, keepdims=keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, keepdims: Any = None) -> torch.Tensor:
    """The mean over `axis` of the values that are not NaN (NaN where all are)."""
    value = _nan_input(a, dtype, "nanmean")
    value = value if _dtypes.is_inexact(value.dtype) else value.to(_dtypes.default_float())
    keep = ~torch.isnan(value)
    total = _reduce(torch.sum, torch.where(keep, value, torch.zeros_like(value)), axis, keepdims, "nanmean")
    count = _reduce(torch.sum, keep.to(value.dtype), axis, keepdims, "nanmean")
    return total / count


def ptp(a: Any, axis: Any = None, keepdims: Any = None) -> torch.Tensor:
    """max - min over `axis` (peak to peak)."""
    value = asarray(a, op="ptp")
    if value.dtype == torch.bool:
        raise TypeError("tnp.ptp does not take bool input (max - min of bools is undefined).")
    return amax(value, axis=axis, keepdims=keepdims) - amin(value, axis=axis, keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False) -> Any:
    """The (weighted) mean over `axis` (one int, or all axes); with returned=True also the sum of weights."""
    if axis is not None and not isinstance(axis, int):
        raise ValueError(f"tnp.average: axis must be an integer, got {axis!r}.")
    value = asarray(a, op="average")
    if weights is None:
        if not _dtypes.is_inexact(value.dtype):
            value = value.to(_dtypes.result_type(value, torch.float64))
        avg = mean(value, axis=axis)
        count = value.numel() if axis is None else value.shape[one_axis(axis, value.dim(), "average")]
        total = torch.tensor(count, dtype=value.dtype, device=value.device)
    else:
        extra = () if _dtypes.is_inexact(value.dtype) else (torch.float64,)
        target = _dtypes.result_type(value, weights, *extra)
        value, w = promote_to(target, value, weights, op="average")
        if axis is None or w.dim() == value.dim():
            if w.shape != value.shape:
                raise ValueError(f"tnp.average: weights of shape {tuple(w.shape)} differ from a's "
                                 f"{tuple(value.shape)}; pass 1-D weights along `axis` or weights of a's shape.")
            total = torch.sum(w) if axis is None else torch.sum(w, dim=axis)
            avg = (torch.sum(value * w) if axis is None else torch.sum(value * w, dim=axis)) / total
        else:
            dim = one_axis(axis, value.dim(), "average")
            if w.dim() != 1 or w.shape[0] != value.shape[dim]:
                raise ValueError(f"tnp.average: 1-D weights must have length {value.shape[dim]} (a's axis {axis}), "
                                 f"got shape {tuple(w.shape)}.")
            total = torch.sum(w)
            avg = torch.tensordot(value, w, dims=([dim], [0])) / total
    if returned:
        return avg, torch.broadcast_to(total.to(avg.dtype), avg.shape).clone()
    return avg


def _sortable(a: Any, kind: Any, order: Any, op: str) -> torch.Tensor:
    if order is not None:
        raise NotImplementedError(f"tnp.{op}(order=...) (sorting by fields) is not supported: arrays here have no "
                                  "structured dtypes.")
    if kind not in ("quicksort", "stable", "mergesort", "heapsort", None):
        raise ValueError(f"tnp.{op}: unknown kind {kind!r}; use 'quicksort', 'stable', 'mergesort' or 'heapsort'.")
    value = asarray(a, op=op)
    if value.is_complex():
        raise TypeError(f"tnp.{op} does not order complex values here.")
    return value


def sort(a: Any, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> torch.Tensor:
    """The values sorted along `axis` (the flattened array when None); NaNs last."""
    value = _sortable(a, kind, order, "sort")
    if value.dim() == 0 and axis is not None:
        raise ValueError("tnp.sort: cannot sort a 0-d array along an axis; pass axis=None or tnp.atleast_1d(a).")
    if axis is None:
        value, axis = value.reshape(-1), 0
    dim = one_axis(axis, value.dim(), "sort")
    return torch.sort(value, dim=dim, stable=True).values


def argsort(a: Any, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> torch.Tensor:
    """The indices (int64) that sort `a` along `axis` (ties in their original order)."""
    value = _sortable(a, kind, order, "argsort")
    if axis is None or value.dim() == 0:
        value, axis = value.reshape(-1), 0
    dim = one_axis(axis, value.dim(), "argsort")
    return torch.sort(value, dim=dim, stable=True).indices
