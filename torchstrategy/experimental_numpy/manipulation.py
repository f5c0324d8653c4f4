"""tf.experimental.numpy's shape functions: reshape/ravel/transpose/moveaxis/squeeze, joining (concatenate,
stack, h/v/dstack, append) and splitting, tile/repeat/broadcast, flip/rot90/roll, pad, atleast_nd, shape/size."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy.experimental_numpy._arrays import asarray, axis_tuple, one_axis, promote, shape_tuple

__all__ = ["reshape", "ravel", "flatten", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "concatenate", "stack", "hstack", "vstack", "dstack", "append", "split", "hsplit", "vsplit", "dsplit",
           "tile", "repeat", "broadcast_to", "broadcast_arrays", "flip", "fliplr", "flipud", "rot90", "roll", "pad",
           "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size", "isscalar"]


def _order(order: str, op: str) -> None:
    if order not in ("C", "F"):
        raise ValueError(f"tnp.{op}: order must be 'C' or 'F', got {order!r}.")


def reshape(a: Any, newshape: Any, order: str = "C") -> torch.Tensor:
    """`a` with a new shape (one -1 is inferred); order='F' reads and writes in column-major order."""
    _order(order, "reshape")
    value = asarray(a, op="reshape")
    dims = shape_tuple(newshape, "reshape")
    try:
        if order == "F":
            flat = value.permute(tuple(reversed(range(value.dim())))).reshape(-1)
            return flat.reshape(tuple(reversed(_resolved(dims, value.numel())))).permute(
                tuple(reversed(range(len(dims)))))
        return value.reshape(dims)
    except RuntimeError:
        raise ValueError(f"tnp.reshape: cannot reshape an array of size {value.numel()} into shape {dims}.") from None


def _resolved(dims: tuple, count: int) -> tuple:
    if -1 not in dims:
        return dims
    known = int(np.prod([d for d in dims if d != -1])) if len(dims) > 1 else 1
    return tuple(count // max(known, 1) if d == -1 else d for d in dims)


def ravel(a: Any) -> torch.Tensor:
    """`a` flattened to 1-D (row-major)."""
    return asarray(a, op="ravel").reshape(-1)


def flatten(a: Any, order: str = "C") -> torch.Tensor:
    """`a` flattened to 1-D, in row-major ('C') or column-major ('F') order."""
    _order(order, "flatten")
    value = asarray(a, op="flatten")
    return value.reshape(-1) if order == "C" else value.permute(tuple(reversed(range(value.dim())))).reshape(-1)


def transpose(a: Any, axes: Any = None) -> torch.Tensor:
    """`a` with its axes reversed, or permuted as `axes` says."""
    value = asarray(a, op="transpose")
    if axes is None:
        return value.permute(tuple(reversed(range(value.dim()))))
    perm = axis_tuple(axes, value.dim(), "transpose")
    if len(perm) != value.dim():
        raise ValueError(f"tnp.transpose: axes {axes!r} do not match an array of dimension {value.dim()}.")
    return value.permute(*perm)


def swapaxes(a: Any, axis1: int, axis2: int) -> torch.Tensor:
    """`a` with two axes interchanged."""
    value = asarray(a, op="swapaxes")
    return torch.swapaxes(value, one_axis(axis1, value.dim(), "swapaxes"), one_axis(axis2, value.dim(), "swapaxes"))


def moveaxis(a: Any, source: Any, destination: Any) -> torch.Tensor:
    """`a` with the `source` axes moved to `destination` (the others keep their order)."""
    value = asarray(a, op="moveaxis")
    src = axis_tuple(source, value.dim(), "moveaxis")
    dst = axis_tuple(destination, value.dim(), "moveaxis")
    if len(src) != len(dst):
        raise ValueError("tnp.moveaxis: source and destination must have the same number of elements.")
    return torch.movedim(value, src, dst)


def expand_dims(a: Any, axis: Any) -> torch.Tensor:
    """`a` with new length-1 axes at the positions `axis` names (in the result)."""
    value = asarray(a, op="expand_dims")
    wanted = axis_tuple(axis, value.dim() + (len(axis) if isinstance(axis, (list, tuple)) else 1), "expand_dims")
    shape = list(value.shape)
    for index in sorted(wanted):
        shape.insert(index, 1)
    return value.reshape(shape)


def squeeze(a: Any, axis: Any = None) -> torch.Tensor:
    """`a` without its length-1 axes (only those `axis` names, which must have length 1)."""
    value = asarray(a, op="squeeze")
    if axis is None:
        return value.reshape([d for d in value.shape if d != 1])
    axes = axis_tuple(axis, value.dim(), "squeeze")
    for index in axes:
        if value.shape[index] != 1:
            raise ValueError(f"tnp.squeeze: cannot select an axis to squeeze out which has size not equal to one "
                             f"(axis {index} has size {value.shape[index]}).")
    return value.reshape([d for i, d in enumerate(value.shape) if i not in axes])


def _sequence(arys: Any, op: str) -> list:
    if isinstance(arys, torch.Tensor):
        return list(torch.unbind(arys))
    if isinstance(arys, np.ndarray):
        return list(arys)
    if not isinstance(arys, (list, tuple)) or not arys:
        raise ValueError(f"tnp.{op} needs a non-empty sequence of arrays, got {arys!r}.")
    return list(arys)


def concatenate(arys: Any, axis: Any = 0) -> torch.Tensor:
    """The arrays joined along an existing `axis` (flattened first when axis=None), promoted to one dtype."""
    arrays = promote(*_sequence(arys, "concatenate"), op="concatenate")
    if axis is None:
        return torch.cat([a.reshape(-1) for a in arrays])
    if arrays[0].dim() == 0:
        raise ValueError("tnp.concatenate: zero-dimensional arrays cannot be concatenated.")
    dim = one_axis(axis, arrays[0].dim(), "concatenate")
    try:
        return torch.cat(arrays, dim=dim)
    except RuntimeError as error:
        raise ValueError(f"tnp.concatenate: the arrays' shapes {[tuple(a.shape) for a in arrays]} do not match "
                         f"off axis {axis} ({error}).") from None


def stack(arrays: Any, axis: int = 0) -> torch.Tensor:
    """The arrays (all of one shape) joined along a new `axis`, promoted to one dtype."""
    if isinstance(arrays, torch.Tensor):
        return arrays if axis == 0 else torch.movedim(arrays, 0, one_axis(axis, arrays.dim(), "stack"))
    items = promote(*_sequence(arrays, "stack"), op="stack")
    shapes = {tuple(a.shape) for a in items}
    if len(shapes) > 1:
        raise ValueError(f"tnp.stack: all input arrays must have the same shape, got {sorted(shapes)}.")
    return torch.stack(items, dim=one_axis(axis, items[0].dim() + 1, "stack"))


def hstack(tup: Any) -> torch.Tensor:
    """The arrays joined column-wise (along axis 1, or 0 for 1-D arrays)."""
    arrays = promote(*[atleast_1d(a) for a in _sequence(tup, "hstack")], op="hstack")
    return torch.cat(arrays, dim=0 if arrays[0].dim() == 1 else 1)


def vstack(tup: Any) -> torch.Tensor:
    """The arrays joined row-wise (1-D arrays become rows)."""
    return torch.cat(promote(*[atleast_2d(a) for a in _sequence(tup, "vstack")], op="vstack"), dim=0)


def dstack(tup: Any) -> torch.Tensor:
    """The arrays joined depth-wise (along axis 2, after making them at least 3-D)."""
    return torch.cat(promote(*[atleast_3d(a) for a in _sequence(tup, "dstack")], op="dstack"), dim=2)


def append(arr: Any, values: Any, axis: Any = None) -> torch.Tensor:
    """`values` appended to `arr` (both flattened when axis is None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """`ary` cut along `axis` into N equal parts, or at the given indices."""
    value = asarray(ary, op="split")
    dim = one_axis(axis, value.dim(), "split")
    length = value.shape[dim]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or length % sections:
            raise ValueError(f"tnp.split: array split does not result in an equal division ({length} into "
                             f"{sections}).")
        return list(torch.split(value, length // sections, dim=dim))
    bounds = [int(i) for i in np.asarray(indices_or_sections).reshape(-1)]
    edges = [0] + [min(max(b if b >= 0 else b + length, 0), length) for b in bounds] + [length]
    return [value.narrow(dim, start, max(stop - start, 0)) for start, stop in zip(edges[:-1], edges[1:])]


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """`ary` split column-wise (axis 1, or 0 for a 1-D array)."""
    value = asarray(ary, op="hsplit")
    return split(value, indices_or_sections, axis=0 if value.dim() == 1 else 1)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """`ary` split row-wise (axis 0; at least 2-D)."""
    value = asarray(ary, op="vsplit")
    if value.dim() < 2:
        raise ValueError("tnp.vsplit only works on arrays of 2 or more dimensions.")
    return split(value, indices_or_sections, axis=0)


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """`ary` split depth-wise (axis 2; at least 3-D)."""
    value = asarray(ary, op="dsplit")
    if value.dim() < 3:
        raise ValueError("tnp.dsplit only works on arrays of 3 or more dimensions.")
    return split(value, indices_or_sections, axis=2)


def tile(a: Any, reps: Any) -> torch.Tensor:
    """`a` repeated `reps` times along each axis (the shorter of the two is padded with ones on the left)."""
    value = asarray(a, op="tile")
    counts = shape_tuple(reps, "tile")
    if len(counts) < value.dim():
        counts = (1,) * (value.dim() - len(counts)) + counts
    value = value.reshape((1,) * (len(counts) - value.dim()) + tuple(value.shape))
    return value.repeat(*counts) if counts else value.clone()


def repeat(a: Any, repeats: Any, axis: Any = None) -> torch.Tensor:
    """Each value (or slice along `axis`) repeated `repeats` times (one count, or one per item)."""
    value = asarray(a, op="repeat")
    counts = asarray(repeats, op="repeat").to(device=value.device)
    if counts.dim() == 0:
        counts = int(counts)
    if axis is None:
        return torch.repeat_interleave(value.reshape(-1), counts)
    return torch.repeat_interleave(value, counts, dim=one_axis(axis, value.dim(), "repeat"))


def broadcast_to(array: Any, shape: Any) -> torch.Tensor:
    """`array` broadcast to `shape`."""
    value = asarray(array, op="broadcast_to")
    dims = shape_tuple(shape, "broadcast_to")
    try:
        return torch.broadcast_to(value, dims).clone()
    except RuntimeError:
        raise ValueError(f"tnp.broadcast_to: cannot broadcast shape {tuple(value.shape)} to {dims}.") from None


def broadcast_arrays(*args: Any, **kwargs: Any) -> list:
    """The arrays broadcast against each other (each keeps its dtype)."""
    if kwargs.get("subok", False):
        raise NotImplementedError("tnp.broadcast_arrays(subok=True) is not supported (there are no subclasses).")
    arrays = [asarray(a, op="broadcast_arrays") for a in args]
    return [t.clone() for t in torch.broadcast_tensors(*arrays)]


def flip(m: Any, axis: Any = None) -> torch.Tensor:
    """`m` with the order of its values reversed along `axis` (all axes when None)."""
    value = asarray(m, op="flip")
    axes = tuple(range(value.dim())) if axis is None else axis_tuple(axis, value.dim(), "flip")
    return torch.flip(value, axes)


def fliplr(m: Any) -> torch.Tensor:
    """`m` flipped left/right (axis 1; at least 2-D)."""
    value = asarray(m, op="fliplr")
    if value.dim() == 0:
        return value.clone()  # TF gives a scalar back (NumPy refuses it)
    if value.dim() < 2:
        raise ValueError("tnp.fliplr: input must be >= 2-d.")
    return torch.flip(value, (1,))


def flipud(m: Any) -> torch.Tensor:
    """`m` flipped up/down (axis 0; at least 1-D)."""
    value = asarray(m, op="flipud")
    if value.dim() == 0:
        return value.clone()  # TF gives a scalar back (NumPy refuses it)
    return torch.flip(value, (0,))


def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> torch.Tensor:
    """`m` rotated k times by 90 degrees in the plane of `axes` (from the first axis towards the second)."""
    value = asarray(m, op="rot90")
    planes = axis_tuple(axes, value.dim(), "rot90")
    if len(planes) != 2:
        raise ValueError("tnp.rot90: axes must name two different axes.")
    return torch.rot90(value, int(k), planes)


def roll(a: Any, shift: Any, axis: Any = None) -> torch.Tensor:
    """`a` rolled by `shift` along `axis` (of the flattened array when None)."""
    value = asarray(a, op="roll")
    shifts = shape_tuple(shift, "roll")
    if axis is None:
        return torch.roll(value.reshape(-1), sum(shifts)).reshape(value.shape)
    dims = axis_tuple(axis, value.dim(), "roll") if not isinstance(axis, (list, tuple)) else \
        tuple(one_axis(d, value.dim(), "roll") for d in axis)
    if len(shifts) == 1 and len(dims) > 1:
        shifts = shifts * len(dims)
    return torch.roll(value, shifts, dims)


def _pad_widths(pad_width: Any, ndim: int) -> list:
    widths = np.broadcast_to(np.asarray(asarray(pad_width, op="pad").tolist(), dtype=np.int64), (ndim, 2))
    if (widths < 0).any():
        raise ValueError(f"tnp.pad: pad widths must be non-negative, got {np.asarray(pad_width).tolist()}.")
    return widths.tolist()


def _mirror(length: int, before: int, after: int, symmetric: bool) -> torch.Tensor:
    positions = np.arange(-before, length + after)
    if length == 1:
        return torch.zeros(len(positions), dtype=torch.int64)
    period = 2 * length if symmetric else 2 * length - 2
    folded = np.mod(positions, period)
    mirrored = np.where(folded < length, folded, (period - 1 - folded) if symmetric else (period - folded))
    return torch.from_numpy(mirrored.astype(np.int64))


def pad(array: Any, pad_width: Any, mode: Any, **kwargs: Any) -> torch.Tensor:
    """`array` padded by `pad_width` ((before, after) per axis, NumPy's broadcasting) in mode 'constant'
    (constant_values=...), 'reflect' or 'symmetric' (TF's three modes)."""
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError(f"tnp.pad: unsupported padding mode {mode!r}; TF supports 'constant', 'reflect' and "
                         "'symmetric'.")
    unknown = set(kwargs) - {"constant_values"}
    if unknown:
        raise NotImplementedError(f"tnp.pad({', '.join(sorted(unknown))}=...) is not supported (as in TF).")
    value = asarray(array, op="pad")
    widths = _pad_widths(pad_width, value.dim())
    if mode == "constant":
        fill = kwargs.get("constant_values", 0)
        out = torch.full([d + b + a for d, (b, a) in zip(value.shape, widths)], fill, dtype=value.dtype,
                         device=value.device)
        region = tuple(slice(b, b + d) for d, (b, a) in zip(value.shape, widths))
        out[region] = value
        return out
    out = value
    for dim, (before, after) in enumerate(widths):
        index = _mirror(out.shape[dim], before, after, mode == "symmetric").to(out.device)
        out = out.index_select(dim, index)
    return out


def _atleast(n: int, arys: tuple, op: str) -> Any:
    out = []
    for item in arys:
        value = asarray(item, op=op)
        if value.dim() < n:
            shape = tuple(value.shape)
            if n == 3 and value.dim() == 1:
                shape = (1,) + shape + (1,)
            elif n == 3 and value.dim() == 2:
                shape = shape + (1,)
            else:
                shape = (1,) * (n - value.dim()) + shape
            value = value.reshape(shape)
        out.append(value)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    """Each input as an array of at least one dimension (a list when given several)."""
    return _atleast(1, arys, "atleast_1d")


def atleast_2d(*arys: Any) -> Any:
    """Each input as an array of at least two dimensions (1-D arrays become one row)."""
    return _atleast(2, arys, "atleast_2d")


def atleast_3d(*arys: Any) -> Any:
    """Each input as an array of at least three dimensions (N -> 1xNx1, MxN -> MxNx1)."""
    return _atleast(3, arys, "atleast_3d")


def shape(a: Any) -> tuple:
    """The shape of `a` as a tuple of ints."""
    return tuple(asarray(a, op="shape").shape)


def ndim(a: Any) -> int:
    """The number of dimensions of `a`."""
    return asarray(a, op="ndim").dim()


def size(x: Any, axis: Any = None) -> int:
    """The number of elements of `x` (TF does not take `axis`)."""
    if axis is not None:
        raise NotImplementedError("tnp.size(axis=...) is not supported (as in TF); use tnp.shape(x)[axis].")
    if isinstance(x, (int, float, np.integer, np.floating)):
        return 1
    return asarray(x, op="size").numel()


def isscalar(num: Any) -> bool:
    """True for a Python or NumPy scalar and a 0-d array."""
    if isinstance(num, torch.Tensor):
        return num.dim() == 0
    return bool(np.isscalar(num)) or (isinstance(num, np.ndarray) and num.ndim == 0)
