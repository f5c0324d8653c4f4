"""keras.ops.numpy's shape and indexing ops: reshape, transpose, expand/squeeze, joining and splitting,
tiling, padding, take, sorting, triangles and diagonals, nonzero."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
import torch
import torch.nn.functional as F

from torchstrategy.keras.ops._core import _joined, _keep_int, _shape, _t


def reshape(x: Any, newshape: Any) -> torch.Tensor:
    return _t(x).reshape(_shape(newshape))


def transpose(x: Any, axes: Any = None) -> torch.Tensor:
    """All axes reversed, or permuted by `axes`."""
    tensor = _t(x)
    return tensor.permute(tuple(range(tensor.dim()))[::-1] if axes is None else tuple(axes))


def swapaxes(x: Any, axis1: int, axis2: int) -> torch.Tensor:
    return torch.swapaxes(_t(x), axis1, axis2)


def moveaxis(x: Any, source: Any, destination: Any) -> torch.Tensor:
    return torch.movedim(_t(x), source, destination)


def expand_dims(x: Any, axis: Any) -> torch.Tensor:
    tensor = _t(x)
    for a in sorted(axis if isinstance(axis, (list, tuple)) else [axis]):
        tensor = tensor.unsqueeze(a)
    return tensor


def squeeze(x: Any, axis: Any = None) -> torch.Tensor:
    """Removes size-1 axes (all of them, or those in `axis`; a non-1 axis is an error)."""
    tensor = _t(x)
    if axis is None:
        return tensor.squeeze()
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    for a in axes:
        if tensor.shape[a] != 1:
            raise ValueError(f"keras.ops.squeeze: axis {a} has size {tensor.shape[a]}, not 1.")
    return tensor.squeeze(tuple(axes))


def ravel(x: Any) -> torch.Tensor:
    return _t(x).reshape(-1)


# ----- joining and splitting ----------------------------------------------------------------------------------


def concatenate(xs: Sequence[Any], axis: int = 0) -> torch.Tensor:
    """Joins along an existing axis (axis 0 by default, as NumPy)."""
    return torch.cat(_joined(xs), dim=axis)


def append(x1: Any, x2: Any, axis: Optional[int] = None) -> torch.Tensor:
    """x2 appended to x1 along `axis` (both flattened when None)."""
    if axis is None:
        return concatenate([ravel(x1), ravel(x2)])
    return concatenate([x1, x2], axis)


def stack(x: Sequence[Any], axis: int = 0) -> torch.Tensor:
    return torch.stack(_joined(x), dim=axis)


def hstack(xs: Sequence[Any]) -> torch.Tensor:
    return torch.hstack(_joined(xs))


def vstack(xs: Sequence[Any]) -> torch.Tensor:
    return torch.vstack(_joined(xs))


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """NumPy's split: an int is a count of equal parts, a list gives the cut points."""
    tensor = _t(x)
    if isinstance(indices_or_sections, int):
        if tensor.shape[axis] % indices_or_sections:
            raise ValueError(f"keras.ops.split: axis {axis} of size {tensor.shape[axis]} does not divide into "
                             f"{indices_or_sections} equal parts.")
        return list(torch.tensor_split(tensor, indices_or_sections, dim=axis))
    return list(torch.tensor_split(tensor, list(indices_or_sections), dim=axis))


def unstack(x: Any, num: Optional[int] = None, axis: int = 0) -> list:
    return list(torch.unbind(_t(x), dim=axis))


def tile(x: Any, repeats: Any) -> torch.Tensor:
    return torch.tile(_t(x), tuple(repeats) if isinstance(repeats, (list, tuple)) else (repeats,))


def repeat(x: Any, repeats: Any, axis: Optional[int] = None) -> torch.Tensor:
    """np.repeat: each element repeated (the flattened input when axis is None)."""
    tensor = _t(x)
    reps = repeats if isinstance(repeats, int) else _t(repeats).to(torch.int64)
    return torch.repeat_interleave(tensor.reshape(-1) if axis is None else tensor, reps,
                                   dim=0 if axis is None else axis)


def flip(x: Any, axis: Any = None) -> torch.Tensor:
    tensor = _t(x)
    axes = tuple(range(tensor.dim())) if axis is None else (axis if isinstance(axis, (list, tuple)) else (axis,))
    return torch.flip(tensor, dims=tuple(axes))


def roll(x: Any, shift: Any, axis: Any = None) -> torch.Tensor:
    tensor = _t(x)
    if axis is None:
        return torch.roll(tensor.reshape(-1), shift).reshape(tensor.shape)
    return torch.roll(tensor, shift, dims=axis)


def broadcast_to(x: Any, shape: Any) -> torch.Tensor:
    return torch.broadcast_to(_t(x), _shape(shape)).clone()


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = None) -> torch.Tensor:
    """np.pad with `pad_width` as ((before, after), ...) per axis; modes constant, reflect, symmetric, edge."""
    tensor = _t(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (tensor.dim(), 2))
    if mode == "constant":
        flat = [int(v) for pair in widths[::-1] for v in pair]
        return F.pad(tensor, flat, value=0 if constant_values is None else constant_values)
    numpy_mode = {"reflect": "reflect", "symmetric": "symmetric", "edge": "edge"}.get(mode)
    if numpy_mode is None:
        raise ValueError(f"keras.ops.pad: unknown mode {mode!r}; use 'constant', 'reflect', 'symmetric' or 'edge'.")
    padded = np.pad(tensor.detach().cpu().numpy(), widths, mode=numpy_mode)
    return torch.from_numpy(padded).to(tensor.device)


# ----- indexing and sorting -----------------------------------------------------------------------------------


def take(x: Any, indices: Any, axis: Optional[int] = None) -> torch.Tensor:
    """Entries at `indices` along `axis` (the flattened input when None); negative indices count from the end."""
    tensor = _t(x)
    idx = _t(indices).to(torch.int64)
    source = tensor.reshape(-1) if axis is None else tensor
    dim = 0 if axis is None else axis % tensor.dim()
    idx = torch.where(idx < 0, idx + source.shape[dim], idx)
    out = torch.index_select(source, dim, idx.reshape(-1))
    return out.reshape(source.shape[:dim] + idx.shape + source.shape[dim + 1:])


def take_along_axis(x: Any, indices: Any, axis: Optional[int] = None) -> torch.Tensor:
    tensor = _t(x)
    idx = _t(indices).to(torch.int64)
    if axis is None:
        return torch.take_along_dim(tensor.reshape(-1), idx.reshape(-1))
    return torch.take_along_dim(tensor, idx, dim=axis)


def sort(x: Any, axis: int = -1) -> torch.Tensor:
    return torch.sort(_t(x), dim=axis).values


def argsort(x: Any, axis: int = -1) -> torch.Tensor:
    """Stable ascending order indices, int32."""
    return torch.argsort(_t(x), dim=axis, stable=True).to(torch.int32)


def unique(x: Any, sorted: bool = True, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Optional[int] = None, size: Optional[int] = None,
           fill_value: Any = None) -> Any:
    """The sorted unique values (with inverse indices / counts when asked); `return_index` is not supported."""
    if return_index:
        raise NotImplementedError("keras.ops.unique(return_index=True) is not supported by torchstrategy.")
    return torch.unique(_t(x), sorted=True, return_inverse=return_inverse, return_counts=return_counts, dim=axis)


def tril(x: Any, k: int = 0) -> torch.Tensor:
    return torch.tril(_t(x), diagonal=k)


def triu(x: Any, k: int = 0) -> torch.Tensor:
    return torch.triu(_t(x), diagonal=k)


def diag(x: Any, k: int = 0) -> torch.Tensor:
    return torch.diag(_t(x), diagonal=k)


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> torch.Tensor:
    return torch.diagonal(_t(x), offset=offset, dim1=axis1, dim2=axis2)


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> torch.Tensor:
    tensor = _t(x)
    return _keep_int(torch.diagonal(tensor, offset=offset, dim1=axis1, dim2=axis2).sum(-1), tensor)


def nonzero(x: Any) -> tuple:
    return tuple(t.to(torch.int32) for t in torch.nonzero(_t(x), as_tuple=True))
