"""keras.ops.numpy's further reductions and array ops: the nan* reductions, percentile, ptp, argpartition,
bincount, histogram, digitize, searchsorted, diff, trapezoid, corrcoef, correlate, inner, kron, vander, select,
unravel_index, splits and stacks, diagflat, flips and rot90, meshgrid, empty, geomspace and logspace."""
from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras.ops._core import _float, _floatx, _joined, _keep_int, _shape, _t


# ----- NaN-ignoring reductions ---------------------------------------------------------------------------------


def _dims(tensor: torch.Tensor, axis: Any) -> tuple:
    if axis is None:
        return tuple(range(tensor.ndim))
    return tuple(a % tensor.ndim for a in (axis if isinstance(axis, (list, tuple)) else (axis,)))


def nansum(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _t(x)
    return _keep_int(torch.nansum(tensor, dim=_dims(tensor, axis), keepdim=keepdims), tensor)


def nanprod(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _t(x)
    filled = torch.where(torch.isnan(tensor), torch.ones_like(tensor), tensor) if tensor.is_floating_point() \
        else tensor
    dims = _dims(tensor, axis)
    out = filled
    for dim in sorted(dims, reverse=True):
        out = out.prod(dim=dim, keepdim=keepdims)
    return _keep_int(out, tensor)


def nanmean(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _float(x)
    return torch.nanmean(tensor, dim=_dims(tensor, axis), keepdim=keepdims)


def nanvar(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _float(x)
    dims = _dims(tensor, axis)
    mean = torch.nanmean(tensor, dim=dims, keepdim=True)
    return torch.nanmean((tensor - mean).square(), dim=dims, keepdim=keepdims)


def nanstd(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return nanvar(x, axis, keepdims).sqrt()


def _nan_extreme(x: Any, axis: Any, keepdims: bool, largest: bool) -> torch.Tensor:
    tensor = _t(x)
    if not tensor.is_floating_point():
        return tensor.amax(dim=_dims(tensor, axis), keepdim=keepdims) if largest else \
            tensor.amin(dim=_dims(tensor, axis), keepdim=keepdims)
    fill = float("-inf") if largest else float("inf")
    nan = torch.isnan(tensor)
    filled = torch.where(nan, torch.full_like(tensor, fill), tensor)
    dims = _dims(tensor, axis)
    out = filled.amax(dim=dims, keepdim=keepdims) if largest else filled.amin(dim=dims, keepdim=keepdims)
    all_nan = nan.all(dim=dims, keepdim=keepdims) if dims else nan
    return torch.where(all_nan, torch.full_like(out, float("nan")), out)


def nanmax(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return _nan_extreme(x, axis, keepdims, largest=True)


def nanmin(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return _nan_extreme(x, axis, keepdims, largest=False)


def _nan_arg(x: Any, axis: Any, keepdims: bool, largest: bool) -> torch.Tensor:
    tensor = _t(x)
    if tensor.is_floating_point():
        fill = float("-inf") if largest else float("inf")
        tensor = torch.where(torch.isnan(tensor), torch.full_like(tensor, fill), tensor)
    if axis is None:
        out = (tensor.reshape(-1).argmax() if largest else tensor.reshape(-1).argmin())
        return out.reshape((1,) * tensor.ndim if keepdims else ()).to(torch.int32)
    out = tensor.argmax(dim=axis, keepdim=keepdims) if largest else tensor.argmin(dim=axis, keepdim=keepdims)
    return out.to(torch.int32)


def nanargmax(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return _nan_arg(x, axis, keepdims, largest=True)


def nanargmin(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return _nan_arg(x, axis, keepdims, largest=False)


def nancumsum(x: Any, axis: Any = None, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x) if dtype is None else _t(x).to(as_dtype(dtype))
    if tensor.is_floating_point():
        tensor = torch.nan_to_num(tensor, nan=0.0, posinf=float("inf"), neginf=float("-inf"))
    tensor = tensor.reshape(-1) if axis is None else tensor
    return _keep_int(torch.cumsum(tensor, dim=0 if axis is None else axis), tensor)


def nancumprod(x: Any, axis: Any = None, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x) if dtype is None else _t(x).to(as_dtype(dtype))
    if tensor.is_floating_point():
        tensor = torch.where(torch.isnan(tensor), torch.ones_like(tensor), tensor)
    tensor = tensor.reshape(-1) if axis is None else tensor
    return _keep_int(torch.cumprod(tensor, dim=0 if axis is None else axis), tensor)


def _quantile(tensor: torch.Tensor, q: Any, axis: Any, method: str, keepdims: bool, nan: bool) -> torch.Tensor:
    qs = torch.as_tensor(q, dtype=torch.float64) / 100.0 if not nan else torch.as_tensor(q, dtype=torch.float64)
    values = tensor.to(torch.float64)
    fn = torch.nanquantile if nan else torch.quantile
    if axis is None or isinstance(axis, int):
        out = fn(values, qs, dim=axis, keepdim=keepdims, interpolation=method)
    else:
        dims = _dims(values, axis)
        rest = [d for d in range(values.ndim) if d not in dims]
        moved = values.permute(rest + list(dims)).reshape([values.shape[d] for d in rest] + [-1])
        out = fn(moved, qs, dim=-1, interpolation=method)
        if keepdims:
            shape = [1 if d in dims else values.shape[d] for d in range(values.ndim)]
            out = out.reshape(tuple(qs.shape) + tuple(shape))
    return out.to(tensor.dtype if tensor.is_floating_point() else _floatx())


def percentile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False) -> torch.Tensor:
    """The q-th percentiles (0-100) along `axis`."""
    return _quantile(_t(x), q, axis, method, keepdims, nan=False)


def nanpercentile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False
                  ) -> torch.Tensor:
    """`percentile` ignoring NaNs."""
    qs = torch.as_tensor(q, dtype=torch.float64) / 100.0
    return _quantile(_t(x), qs, axis, method, keepdims, nan=True)


def nanquantile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False) -> torch.Tensor:
    """`quantile` ignoring NaNs."""
    return _quantile(_t(x), q, axis, method, keepdims, nan=True)


def nanmedian(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)


def ptp(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """max - min along `axis`."""
    tensor = _t(x)
    dims = _dims(tensor, axis)
    return tensor.amax(dim=dims, keepdim=keepdims) - tensor.amin(dim=dims, keepdim=keepdims)


# ----- counting, searching, differences -------------------------------------------------------------------------


def argpartition(x: Any, kth: int, axis: int = -1) -> torch.Tensor:
    """Indices that put the kth element in its sorted place along `axis` (here: a full stable argsort, one
    valid partition)."""
    return torch.argsort(_t(x), dim=axis, stable=True).to(torch.int32)


def bincount(x: Any, weights: Any = None, minlength: int = 0, sparse: bool = False) -> torch.Tensor:
    """Counts of each non-negative integer (per row for 2-D input), optionally weighted."""
    if sparse:
        raise NotImplementedError("bincount(sparse=True) is not supported; leave sparse=False.")
    values = _t(x).to(torch.int64)
    w = None if weights is None else _t(weights)
    length = builtins.max(int(minlength), int(values.max()) + 1 if values.numel() else 0)
    if values.ndim == 1:
        out = torch.bincount(values, weights=w, minlength=length)
    else:
        out = torch.stack([torch.bincount(row, weights=None if w is None else w[i], minlength=length)
                           for i, row in enumerate(values)])
    if w is None:
        return out.to(torch.int32)
    return out.to(w.dtype if w.is_floating_point() else torch.int32)


def histogram(x: Any, bins: int = 10, range: Optional[Sequence[float]] = None) -> tuple:
    """(counts, bin edges) of 1-D `x` over `bins` equal bins (the last bin includes its right edge)."""
    values = _float(x)
    if values.ndim != 1:
        raise ValueError(f"Input tensor must be 1-dimensional. Received: input.shape={tuple(values.shape)}")
    low, high = (float(values.min()), float(values.max())) if range is None else (float(range[0]), float(range[1]))
    counts, edges = np.histogram(values.detach().cpu().numpy(), bins=int(bins), range=(low, high))
    return torch.as_tensor(counts, dtype=torch.int32), torch.as_tensor(edges, dtype=values.dtype)


def digitize(x: Any, bins: Any) -> torch.Tensor:
    """Index of the bin each value falls in (NumPy's digitize with increasing bins)."""
    return torch.bucketize(_t(x), _t(bins).to(_t(x).dtype), right=True).to(torch.int32)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left") -> torch.Tensor:
    if side not in ("left", "right"):
        raise ValueError(f"`side` must be either 'left' or 'right'. Received: side={side}")
    seq = _t(sorted_sequence)
    if seq.ndim != 1:
        raise ValueError(f"`searchsorted` only supports 1-D sorted sequences. Received: "
                         f"sorted_sequence.shape={tuple(seq.shape)}")
    return torch.searchsorted(seq, _t(values).to(seq.dtype), right=side == "right").to(torch.int32)


def diff(a: Any, n: int = 1, axis: int = -1) -> torch.Tensor:
    return torch.diff(_t(a), n=n, dim=axis)


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> torch.Tensor:
    """The trapezoidal-rule integral of y along `axis` (sample points `x`, else spacing `dx`)."""
    values = _float(y)
    if x is None:
        return torch.trapezoid(values, dx=dx, dim=axis)
    return torch.trapezoid(values, _float(x).to(values.dtype), dim=axis)


def corrcoef(x: Any) -> torch.Tensor:
    """Pearson correlation coefficients of the rows of `x`."""
    return torch.corrcoef(_float(x))


def correlate(x1: Any, x2: Any, mode: str = "valid") -> torch.Tensor:
    """Cross-correlation of two 1-D sequences (NumPy's `correlate`, modes 'valid', 'same', 'full')."""
    if mode not in ("valid", "same", "full"):
        raise ValueError(f"mode must be either 'full', 'same', or 'valid'. Received: mode={mode}")
    a, v = _float(x1), _float(x2)
    common = torch.promote_types(a.dtype, v.dtype)
    a, v = a.to(common), v.to(common)
    out = np.correlate(a.detach().cpu().numpy(), v.detach().cpu().numpy(), mode=mode)
    return torch.as_tensor(out, dtype=common)


def inner(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _joined([x1, x2])
    return torch.inner(a, b)


def kron(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _joined([x1, x2])
    return torch.kron(a, b)


def vander(x: Any, N: Optional[int] = None, increasing: bool = False) -> torch.Tensor:
    return torch.vander(_t(x), N=N, increasing=increasing)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> torch.Tensor:
    """choicelist[i] where condlist[i] is first true, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist and choicelist must have the same length. Received: "
                         f"len(condlist)={len(condlist)}, len(choicelist)={len(choicelist)}")
    choices = _joined(list(choicelist))
    out = torch.broadcast_to(_t(default).to(choices[0].dtype), choices[0].shape).clone()
    for cond, choice in reversed(list(zip(condlist, choices))):
        out = torch.where(_t(cond).bool(), choice, out)
    return out


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple:
    """The coordinates in an array of `shape` of each flat index."""
    flat = _t(indices)
    return tuple(torch.unravel_index(flat.to(torch.int64), tuple(int(s) for s in shape)))


# ----- splitting, stacking, flipping, grids -----------------------------------------------------------------------


def array_split(x: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Like `split`, but sections may differ in size by one (the first ones larger)."""
    tensor = _t(x)
    if isinstance(indices_or_sections, int):
        return list(torch.tensor_split(tensor, indices_or_sections, dim=axis))
    return list(torch.tensor_split(tensor, [int(i) for i in indices_or_sections], dim=axis))


def _split(x: Any, indices_or_sections: Any, axis: int, name: str) -> list:
    tensor = _t(x)
    if isinstance(indices_or_sections, int) and tensor.shape[axis] % indices_or_sections:
        raise ValueError(f"{name}: array split does not result in an equal division.")
    return array_split(tensor, indices_or_sections, axis)


def hsplit(x: Any, indices_or_sections: Any) -> list:
    return _split(x, indices_or_sections, 1 if _t(x).ndim > 1 else 0, "hsplit")


def vsplit(x: Any, indices_or_sections: Any) -> list:
    return _split(x, indices_or_sections, 0, "vsplit")


def dsplit(x: Any, indices_or_sections: Any) -> list:
    return _split(x, indices_or_sections, 2, "dsplit")


def dstack(xs: Sequence[Any]) -> torch.Tensor:
    return torch.dstack(_joined(xs))


def diagflat(x: Any, k: int = 0) -> torch.Tensor:
    return torch.diagflat(_t(x), offset=k)


def fliplr(x: Any) -> torch.Tensor:
    return torch.fliplr(_t(x))


def flipud(x: Any) -> torch.Tensor:
    return torch.flipud(_t(x))


def rot90(array: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> torch.Tensor:
    return torch.rot90(_t(array), k=k, dims=list(axes))


def meshgrid(*x: Any, indexing: str = "xy") -> list:
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for `indexing` are 'xy' and 'ij'. Received: indexing={indexing}")
    return list(torch.meshgrid(*_joined(x), indexing=indexing))


def empty(shape: Any, dtype: Any = None) -> torch.Tensor:
    return torch.empty(_shape(shape), dtype=_floatx() if dtype is None else as_dtype(dtype))


def empty_like(x: Any, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    return torch.empty_like(tensor, dtype=tensor.dtype if dtype is None else as_dtype(dtype))


def _spaced(values: np.ndarray, dtype: Any, axis: int) -> torch.Tensor:
    out = torch.as_tensor(values)
    out = out.to(_floatx() if dtype is None else as_dtype(dtype))
    return torch.movedim(out, 0, axis) if axis else out


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0
              ) -> torch.Tensor:
    """`num` numbers spaced evenly on a log scale from start to stop."""
    values = np.geomspace(np.asarray(_t(start)), np.asarray(_t(stop)), num=num, endpoint=endpoint)
    return _spaced(values, dtype, axis)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10, dtype: Any = None,
             axis: int = 0) -> torch.Tensor:
    """base ** linspace(start, stop, num)."""
    values = np.logspace(np.asarray(_t(start)), np.asarray(_t(stop)), num=num, endpoint=endpoint, base=base)
    return _spaced(values, dtype, axis)



def cdist(x: Any, y: Any) -> torch.Tensor:
    """Euclidean distances between the rows of x and the rows of y (batched over leading axes)."""
    a, b = _float(x), _float(y)
    return torch.cdist(a, b.to(a.dtype))


def _groups(side: str) -> list:
    groups, current = [], None
    for token in side.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            current = []
        elif token == ")":
            groups.append(current)
            current = None
        elif current is not None:
            current.append(token)
        else:
            groups.append([token])
    return groups


def rearrange(tensor: Any, pattern: str, **axes_lengths: int) -> torch.Tensor:
    """einops-style reordering, e.g. 'b h w c -> b (h w) c' or 'b (h w) c -> b h w c' with h=..."""
    source = _t(tensor)
    if "->" not in pattern:
        raise ValueError(f"rearrange pattern must contain '->'; got {pattern!r}.")
    left, right = (_groups(side) for side in pattern.split("->"))
    if len(left) != source.ndim:
        raise ValueError(f"rearrange: the pattern's left side has {len(left)} axes but the tensor has {source.ndim}.")
    sizes = dict(axes_lengths)
    for group, dim in zip(left, source.shape):
        unknown = [name for name in group if name not in sizes]
        known = int(np.prod([sizes[name] for name in group if name in sizes])) if len(group) > 1 else 1
        if len(group) == 1 and unknown:
            sizes[group[0]] = int(dim)
        elif len(unknown) == 1:
            sizes[unknown[0]] = int(dim) // known
        elif unknown:
            raise ValueError(f"rearrange: cannot infer the sizes of {unknown}; pass them as keyword arguments.")
    flat_left = [name for group in left for name in group]
    flat_right = [name for group in right for name in group]
    if sorted(flat_left) != sorted(flat_right):
        raise ValueError(f"rearrange: both sides must name the same axes; got {flat_left} and {flat_right}.")
    expanded = source.reshape([sizes[name] for name in flat_left])
    moved = expanded.permute([flat_left.index(name) for name in flat_right])
    return moved.reshape([int(np.prod([sizes[name] for name in group])) for group in right])
