"""tf.experimental.numpy's array creation: array/asarray, zeros/ones/full/empty (and *_like), eye, arange,
linspace/logspace/geomspace, tri, diag, vander, meshgrid, ix_ -- NumPy's results with TF's dtype rules."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.experimental_numpy import _dtypes
from torchstrategy.experimental_numpy._arrays import asarray as _asarray
from torchstrategy.experimental_numpy._arrays import promote, shape_tuple

__all__ = ["array", "asarray", "asanyarray", "ascontiguousarray", "copy", "empty", "empty_like", "zeros",
           "zeros_like", "ones", "ones_like", "full", "full_like", "eye", "identity", "arange", "linspace",
           "logspace", "geomspace", "tri", "diag", "diagflat", "diag_indices", "vander", "meshgrid", "ix_"]


def _filled(shape: Any, value: Any, dtype: Any, op: str) -> torch.Tensor:
    return torch.full(shape_tuple(shape, op), value, dtype=_dtypes.torch_dtype(dtype))


def array(val: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> torch.Tensor:
    """An array of `val` (a copy unless copy=False lets a tensor of the right dtype through), with at least
    `ndmin` dimensions (ones prepended)."""
    out = _asarray(val, dtype, op="array")
    if copy and out is val:
        out = out.clone()
    if ndmin > 32:
        raise ValueError(f"tnp.array: ndmin bigger than allowable number of dimensions: 32 (got {ndmin}).")
    if out.dim() < ndmin:
        out = out.reshape((1,) * (ndmin - out.dim()) + tuple(out.shape))
    return out


def asarray(a: Any, dtype: Any = None) -> torch.Tensor:
    """`a` as an array (tensors pass through unless `dtype` asks for another dtype)."""
    return _asarray(a, dtype, op="asarray")


def asanyarray(a: Any, dtype: Any = None) -> torch.Tensor:
    """The same as `asarray` (there are no array subclasses to keep)."""
    return _asarray(a, dtype, op="asanyarray")


def ascontiguousarray(a: Any, dtype: Any = None) -> torch.Tensor:
    """`a` as a contiguous array with at least one dimension (NumPy's ascontiguousarray)."""
    return array(a, dtype, copy=False, ndmin=1).contiguous()


def copy(a: Any) -> torch.Tensor:
    """A copy of `a`."""
    return array(a, copy=True)


def empty(shape: Any, dtype: Any = float) -> torch.Tensor:
    """An array of `shape` (zero-filled: torch arrays are never left uninitialised here)."""
    return _filled(shape, 0, dtype, "empty")


def zeros(shape: Any, dtype: Any = float) -> torch.Tensor:
    """An array of zeros (float64 unless `dtype` says otherwise)."""
    return _filled(shape, 0, dtype, "zeros")


def ones(shape: Any, dtype: Any = float) -> torch.Tensor:
    """An array of ones (float64 unless `dtype` says otherwise)."""
    return _filled(shape, 1, dtype, "ones")


def _like(a: Any, dtype: Any, op: str) -> torch.Tensor:
    source = _asarray(a, op=op)
    return source, (source.dtype if dtype is None else _dtypes.torch_dtype(dtype))


def empty_like(a: Any, dtype: Any = None) -> torch.Tensor:
    """Zeros of `a`'s shape and dtype (or `dtype`)."""
    source, target = _like(a, dtype, "empty_like")
    return torch.zeros(source.shape, dtype=target, device=source.device)


def zeros_like(a: Any, dtype: Any = None) -> torch.Tensor:
    """Zeros of `a`'s shape and dtype (or `dtype`)."""
    source, target = _like(a, dtype, "zeros_like")
    return torch.zeros(source.shape, dtype=target, device=source.device)


def ones_like(a: Any, dtype: Any = None) -> torch.Tensor:
    """Ones of `a`'s shape and dtype (or `dtype`)."""
    source, target = _like(a, dtype, "ones_like")
    return torch.ones(source.shape, dtype=target, device=source.device)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> torch.Tensor:
    """`fill_value` (an array broadcast to `shape`, or a scalar) in an array of `shape`."""
    value = _asarray(fill_value, dtype, op="full")
    return torch.broadcast_to(value, shape_tuple(shape, "full")).clone()


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None) -> torch.Tensor:
    """`fill_value` in an array of `a`'s shape and dtype (or `dtype`); a float fill of an int array truncates."""
    if order != "K":
        raise NotImplementedError(f"tnp.full_like(order={order!r}): only order='K' is supported (as in TF).")
    if not subok:
        raise NotImplementedError("tnp.full_like(subok=False): there are no array subclasses here (as in TF).")
    if shape is not None:
        raise NotImplementedError("tnp.full_like(shape=...): overriding the shape is not supported (as in TF).")
    source, target = _like(a, dtype, "full_like")
    value = _asarray(fill_value, op="full_like").to(device=source.device)
    return torch.broadcast_to(value.to(target), source.shape).clone()


def eye(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = float) -> torch.Tensor:  # noqa: N803 (NumPy's names)
    """An N x M array with ones on the k-th diagonal."""
    columns = N if M is None else M
    out = torch.zeros((int(N), int(columns)), dtype=_dtypes.torch_dtype(dtype))
    if -int(N) < int(k) < int(columns):
        out.diagonal(int(k)).fill_(1)
    return out


def identity(n: int, dtype: Any = float) -> torch.Tensor:
    """The n x n identity array."""
    return eye(n, dtype=dtype)


def _scalar(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.item()
    return value


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> torch.Tensor:
    """Evenly spaced values in [start, stop) (or [0, start)); the dtype is TF's result_type of the three."""
    if stop is None:
        start, stop = 0, start
    target = _dtypes.result_type(start, stop, step) if dtype is None else _dtypes.torch_dtype(dtype)
    first, last, delta = _scalar(start), _scalar(stop), _scalar(step)
    if delta == 0:
        raise ValueError("tnp.arange: step must be non-zero.")
    return torch.from_numpy(np.arange(first, last, delta)).to(target)


def _float_pair(start: Any, stop: Any) -> torch.dtype:
    """TF's dtype of linspace/logspace: the result_type of start * 1.0 and stop * 1.0 (NumPy 2's rule)."""
    def floated(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value if _dtypes.is_inexact(value.dtype) else value.to(torch.float64)
        return np.asarray(value) * 1.0 if isinstance(value, (np.ndarray, list, tuple)) else value * 1.0
    return _dtypes.result_type([floated(start), floated(stop)])


def _spaced(start: torch.Tensor, stop: torch.Tensor, num: int, endpoint: bool, axis: int) -> tuple:
    """`num` samples from start to stop (stop included when endpoint), stacked at `axis`; and the step."""
    if num < 0:
        raise ValueError(f"tnp.linspace: number of samples, {num}, must be non-negative.")
    divisions = (num - 1) if endpoint else num
    step = (stop - start) / divisions if divisions > 0 else torch.tensor(float("nan"), dtype=start.dtype)
    steps = torch.arange(num, dtype=start.dtype, device=start.device)
    shape = (num,) + (1,) * start.dim()
    values = start.unsqueeze(0) + steps.reshape(shape) * (step if divisions > 0 else 0)
    if endpoint and num > 1:
        values[-1] = stop
    return torch.movedim(values, 0, axis) if axis != 0 else values, step


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype: Any = float,
             axis: int = 0) -> Any:
    """`num` evenly spaced samples from start to stop. As in TF 2.21 with NumPy 2, the dtype is that of
    start * 1.0 and stop * 1.0 whatever `dtype` says (float64 for Python numbers)."""
    target = _float_pair(start, stop)
    first, last = promote(start, stop, op="linspace")
    first, last = first.to(target), last.to(target)
    first, last = torch.broadcast_tensors(first, last)
    values, step = _spaced(first, last, int(num), bool(endpoint), _axis_for(axis, first.dim() + 1))
    return (values, step) if retstep else values


def _axis_for(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"tnp: axis {axis} is out of bounds for an array of dimension {ndim}.")
    return axis % ndim


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10.0, dtype: Any = None,
             axis: int = 0) -> torch.Tensor:
    """base ** linspace(start, stop, num): samples evenly spaced on a log scale (dtype as linspace's)."""
    exponents = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    return torch.pow(torch.as_tensor(base, dtype=exponents.dtype), exponents)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> torch.Tensor:
    """`num` samples evenly spaced on a log scale from start to stop (a geometric progression); negative
    endpoints flip the sign as NumPy does."""
    if dtype is not None:
        target = _dtypes.torch_dtype(dtype)
    else:
        target = _dtypes.result_type(start, stop, float(num), torch.zeros((), dtype=torch.float64))
    compute = _dtypes.torch_dtype(np.promote_types(_dtypes.numpy_dtype(target), np.float32))
    first, last = (_asarray(v, compute, op="geomspace") for v in (start, stop))
    first, last = torch.broadcast_tensors(first, last)
    if bool((first == 0).any()) or bool((last == 0).any()):
        raise ValueError("tnp.geomspace: geometric sequence cannot include zero.")
    flip = torch.where((first.real < 0) & (last.real < 0), -1.0, 1.0).to(compute)
    low, high = torch.log10(flip * first), torch.log10(flip * last)
    exponents, _ = _spaced(low, high, int(num), bool(endpoint), 0)
    values = flip * torch.pow(torch.as_tensor(10.0, dtype=compute), exponents)
    if axis != 0:
        values = torch.movedim(values, 0, _axis_for(axis, values.dim()))
    return values.to(target)


def tri(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = None) -> torch.Tensor:  # noqa: N803
    """An N x M array with ones at and below the k-th diagonal (float64 unless `dtype` says otherwise)."""
    columns = N if M is None else M
    target = torch.float64 if dtype is None else _dtypes.torch_dtype(dtype)
    return torch.tril(torch.ones((int(N), int(columns)), dtype=target), int(k))


def diag(v: Any, k: int = 0) -> torch.Tensor:
    """The k-th diagonal of a 2-D array, or a 2-D array with a 1-D `v` on its k-th diagonal."""
    value = _asarray(v, op="diag")
    if value.dim() not in (1, 2):
        raise ValueError(f"tnp.diag: input must be 1- or 2-d, got {value.dim()} dimensions.")
    if value.dim() == 2:
        return torch.diagonal(value, int(k))
    return torch.diag(value, int(k))


def diagflat(v: Any, k: int = 0) -> torch.Tensor:
    """A 2-D array with the flattened `v` on its k-th diagonal."""
    return torch.diag(_asarray(v, op="diagflat").reshape(-1), int(k))


def diag_indices(n: int, ndim: int = 2) -> tuple:
    """The `ndim` index arrays (int32, as in TF) that pick the main diagonal of an n x ... x n array."""
    if n < 0:
        raise ValueError(f"tnp.diag_indices: n must be non-negative, got {n}.")
    index = torch.arange(int(n), dtype=torch.int32)
    return tuple(index for _ in range(int(ndim)))


def vander(x: Any, N: Optional[int] = None, increasing: bool = False) -> torch.Tensor:  # noqa: N803
    """The Vandermonde matrix of a 1-D `x`: columns x**(N-1), ..., x**0 (reversed when increasing); it keeps
    `x`'s dtype (TF's rule; NumPy widens ints to int64)."""
    value = _asarray(x, op="vander")
    if value.dim() != 1:
        raise ValueError(f"tnp.vander: x must be a one-dimensional array, got {value.dim()} dimensions.")
    columns = value.shape[0] if N is None else int(N)
    powers = torch.arange(columns, device=value.device)
    if not increasing:
        powers = powers.flip(0)
    if value.dtype == torch.bool:
        value = value.to(torch.int64)
    return torch.pow(value.unsqueeze(1), powers.to(value.dtype))


def meshgrid(*xi: Any, **kwargs: Any) -> list:
    """Coordinate arrays from 1-D coordinate vectors (indexing='xy' or 'ij', sparse=...), promoted to one
    dtype as TF does (NumPy keeps each input's)."""
    unknown = set(kwargs) - {"indexing", "sparse", "copy"}
    if unknown:
        raise TypeError(f"tnp.meshgrid got unexpected keyword arguments {sorted(unknown)}.")
    indexing = kwargs.get("indexing", "xy")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"tnp.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}.")
    if not xi:
        return []
    vectors = [v.reshape(-1) for v in promote(*xi, op="meshgrid")]
    if kwargs.get("sparse", False):
        count = len(vectors)
        out = []
        for index, vector in enumerate(vectors):
            shape = [1] * count
            shape[index] = -1
            if indexing == "xy" and count > 1 and index < 2:
                shape[0], shape[1] = shape[1], shape[0]
            out.append(vector.reshape(shape))
        return out
    return list(torch.meshgrid(*vectors, indexing=indexing))


def ix_(*args: Any) -> tuple:
    """Open-mesh index arrays from 1-D sequences (bool sequences become their nonzero indices)."""
    out = []
    count = len(args)
    for index, arg in enumerate(args):
        value = _asarray(arg, op="ix_") if not (isinstance(arg, (list, tuple)) and not arg) else \
            torch.zeros(0, dtype=torch.int64)
        if value.dim() != 1:
            raise ValueError("tnp.ix_: cross index must be 1 dimensional.")
        if value.dtype == torch.bool:
            value = torch.nonzero(value).reshape(-1)
        elif _dtypes.is_inexact(value.dtype):
            raise TypeError("tnp.ix_: index arrays must be integer or boolean.")
        shape = [1] * count
        shape[index] = -1
        out.append(value.reshape(shape))
    return tuple(out)
