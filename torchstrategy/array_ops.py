"""The top-level tf array ops (where, fill, gather, split, pad, sort, matmul, einsum, eye, linspace, ...)
with TF 2.21's argument names and dtype rules, on torch tensors."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import (
    dims,
    int_list,
    match_dtypes,
    refuse_layout,
    require,
    to_tensor,
)
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError

__all__ = [
    "where", "fill", "zeros_like", "ones_like", "tile", "gather", "gather_nd", "transpose", "matmul", "einsum",
    "split", "unstack", "boolean_mask", "pad", "sort", "argsort", "size", "rank", "identity", "stop_gradient",
    "linspace", "eye", "reverse", "broadcast_to", "tensor_scatter_nd_update",
]


def where(condition: Any, x: Any = None, y: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """With x and y: x where `condition` holds, else y (broadcast; x and y share a dtype). Alone: the
    int64 coordinates [n, rank] of the true entries.

    >>> where([True, False]).tolist()
    [[0]]
    """
    cond = condition if isinstance(condition, torch.Tensor) else to_tensor(condition, torch.bool, "tf.where")
    if (x is None) != (y is None):
        raise ValueError("tf.where needs both x and y, or neither.")
    if x is None:
        return torch.nonzero(cond if cond.dtype == torch.bool else cond != 0).to(torch.int64)
    require(cond, "bool", "tf.where")
    tx, ty = match_dtypes([x, y], "tf.where")
    return torch.where(cond.to(tx.device), tx, ty)


def fill(dims: Any, value: Any, name: Optional[str] = None, layout: Any = None) -> torch.Tensor:  # noqa: A002
    """A tensor of shape `dims` filled with `value` (its dtype: 3 -> int32, 3.0 -> float32)."""
    refuse_layout("fill", layout)
    scalar = to_tensor(value, op="tf.fill")
    if scalar.dim() != 0:
        raise ValueError(f"tf.fill: value must be a scalar, got shape {tuple(scalar.shape)}.")
    return torch.full(int_list(dims, "tf.fill dims"), scalar.item(), dtype=scalar.dtype)


def zeros_like(input: Any, dtype: Any = None, name: Optional[str] = None, layout: Any = None) -> torch.Tensor:  # noqa: A002
    """Zeros with `input`'s shape and dtype (or `dtype`)."""
    refuse_layout("zeros_like", layout)
    tensor = to_tensor(input, op="tf.zeros_like")
    return torch.zeros_like(tensor, dtype=None if dtype is None else as_dtype(dtype))


def ones_like(input: Any, dtype: Any = None, name: Optional[str] = None, layout: Any = None) -> torch.Tensor:  # noqa: A002
    """Ones with `input`'s shape and dtype (or `dtype`)."""
    refuse_layout("ones_like", layout)
    tensor = to_tensor(input, op="tf.ones_like")
    return torch.ones_like(tensor, dtype=None if dtype is None else as_dtype(dtype))


def tile(input: Any, multiples: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """`input` repeated `multiples[i]` times along axis i (one multiple per axis, as TF requires)."""
    tensor = to_tensor(input, op="tf.tile")
    reps = int_list(multiples, "tf.tile multiples")
    if len(reps) != tensor.dim():
        raise ValueError(f"tf.tile: multiples has {len(reps)} entries but the input has rank {tensor.dim()}; "
                         "give one multiple per axis.")
    return tensor.repeat(*reps) if reps else tensor.clone()


def _indices(indices: Any, op: str) -> torch.Tensor:
    tensor = to_tensor(indices, op=op)
    if tensor.is_floating_point() or tensor.dtype == torch.bool:
        raise TypeError(f"{op}: indices must be integers, got {tensor.dtype}.")
    return tensor.to(torch.int64)


def gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None, batch_dims: int = 0,
           name: Optional[str] = None) -> torch.Tensor:
    """Slices of `params` along `axis` picked by `indices`; output shape is
    params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:].

    >>> gather([[1, 2], [3, 4]], [1, 0], axis=1).tolist()
    [[2, 1], [4, 3]]
    """
    tensor = to_tensor(params, op="tf.gather")
    index = _indices(indices, "tf.gather")
    batch_dims = batch_dims % (index.dim() + 1) if batch_dims < 0 else batch_dims
    axis = batch_dims if axis is None else dims(axis, tensor.dim())[0] % tensor.dim()
    size = tensor.shape[axis]
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= size):
        raise InvalidArgumentError(None, None, f"tf.gather: indices must lie in [0, {size}) for axis {axis}, got "
                                   f"{int(index.min())}..{int(index.max())}.")
    if batch_dims == 0:
        out = torch.index_select(tensor, axis, index.reshape(-1).to(tensor.device))
        shape = tuple(tensor.shape[:axis]) + tuple(index.shape) + tuple(tensor.shape[axis + 1:])
        return out.reshape(shape)
    # Batched gather: loop over the shared leading batch dims.
    flat_params = tensor.reshape((-1,) + tuple(tensor.shape[batch_dims:]))
    flat_index = index.reshape((-1,) + tuple(index.shape[batch_dims:]))
    parts = [gather(p, i, axis=axis - batch_dims) for p, i in zip(flat_params, flat_index)]
    return torch.stack(parts).reshape(tuple(tensor.shape[:batch_dims]) + tuple(parts[0].shape))


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: Optional[str] = None,
              bad_indices_policy: str = "") -> torch.Tensor:
    """Slices of `params` at the coordinates in the last axis of `indices`.

    >>> gather_nd([[1, 2], [3, 4]], [[1, 0]]).tolist()
    [3]
    """
    if bad_indices_policy not in ("", "DEFAULT", "ERROR"):
        raise NotImplementedError(f"tf.gather_nd(bad_indices_policy={bad_indices_policy!r}) is not supported: "
                                  "out-of-range indices raise an error here ('' / 'ERROR').")
    tensor = to_tensor(params, op="tf.gather_nd")
    index = _indices(indices, "tf.gather_nd")
    if batch_dims:
        flat_params = tensor.reshape((-1,) + tuple(tensor.shape[batch_dims:]))
        flat_index = index.reshape((-1,) + tuple(index.shape[batch_dims:]))
        parts = [gather_nd(p, i) for p, i in zip(flat_params, flat_index)]
        return torch.stack(parts).reshape(tuple(index.shape[:batch_dims]) + tuple(parts[0].shape))
    depth = index.shape[-1]
    if depth > tensor.dim():
        raise ValueError(f"tf.gather_nd: index depth {depth} exceeds the params rank {tensor.dim()}.")
    index = index.to(tensor.device)
    bounds = torch.tensor(tensor.shape[:depth], dtype=torch.int64, device=tensor.device)
    if index.numel() and bool(((index < 0) | (index >= bounds)).any()):
        raise InvalidArgumentError(None, None, f"tf.gather_nd: an index is outside params of shape {tuple(tensor.shape)}.")
    coords = index.reshape(-1, depth)
    picked = tensor[tuple(coords[:, i] for i in builtins.range(depth))]
    return picked.reshape(tuple(index.shape[:-1]) + tuple(tensor.shape[depth:]))


def transpose(a: Any, perm: Any = None, conjugate: bool = False, name: str = "transpose") -> torch.Tensor:
    """`a` with its axes permuted by `perm` (reversed when None)."""
    tensor = to_tensor(a, op="tf.transpose")
    order = list(builtins.range(tensor.dim()))[::-1] if perm is None else int_list(perm, "tf.transpose perm")
    if sorted(o % builtins.max(tensor.dim(), 1) for o in order) != list(builtins.range(tensor.dim())):
        raise ValueError(f"tf.transpose: perm {order} is not a permutation of the {tensor.dim()} axes.")
    out = tensor.permute(*order)
    return out.conj() if conjugate else out


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False, adjoint_a: bool = False,
           adjoint_b: bool = False, a_is_sparse: bool = False, b_is_sparse: bool = False,
           output_type: Any = None, grad_a: bool = False, grad_b: bool = False, name: Optional[str] = None
           ) -> torch.Tensor:
    """The matrix product of the last two axes (batched over the others); a and b share a dtype.

    >>> matmul([[1, 2]], [[3], [4]]).tolist()
    [[11]]
    """
    ta, tb = match_dtypes([a, b], "tf.linalg.matmul")
    require(ta, "numeric", "tf.linalg.matmul")
    if ta.dim() < 2 or tb.dim() < 2:
        raise ValueError(f"tf.linalg.matmul needs inputs of rank >= 2, got shapes {tuple(ta.shape)} and "
                         f"{tuple(tb.shape)}; use tf.linalg.matvec or tf.tensordot for vectors.")
    if transpose_a or adjoint_a:
        ta = ta.transpose(-1, -2).conj() if adjoint_a else ta.transpose(-1, -2)
    if transpose_b or adjoint_b:
        tb = tb.transpose(-1, -2).conj() if adjoint_b else tb.transpose(-1, -2)
    if ta.shape[-1] != tb.shape[-2]:
        raise InvalidArgumentError(None, None, f"tf.linalg.matmul: inner dimensions differ ({tuple(ta.shape)} @ "
                                   f"{tuple(tb.shape)}).")
    out = torch.matmul(ta, tb)
    return out if output_type is None else out.to(as_dtype(output_type))


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> torch.Tensor:
    """`torch.einsum` with TF's signature; all inputs share a dtype.

    >>> einsum("ij,kj->ik", [[1.0, 2.0]], [[1.0, 2.0]]).tolist()
    [[5.0]]
    """
    if not isinstance(equation, str):
        raise TypeError(f"tf.einsum: the first argument is the equation string, got {equation!r}.")
    tensors = match_dtypes(list(inputs), "tf.einsum")
    return torch.einsum(equation, *tensors)


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: Optional[int] = None,
          name: str = "split") -> list:
    """`value` cut along `axis` into `num_or_size_splits` equal parts, or parts of the given sizes
    (one size may be -1 for the rest)."""
    tensor = to_tensor(value, op="tf.split")
    axis = dims(axis, tensor.dim())[0]
    length = tensor.shape[axis]
    if isinstance(num_or_size_splits, (int, np.integer)) or (
            isinstance(num_or_size_splits, torch.Tensor) and num_or_size_splits.dim() == 0):
        parts = int(num_or_size_splits)
        if parts <= 0 or length % parts:
            raise InvalidArgumentError(None, None, f"tf.split: cannot split an axis of size {length} into {parts} equal parts.")
        return list(torch.split(tensor, length // parts, dim=axis))
    sizes = int_list(num_or_size_splits, "tf.split sizes")
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = length - (sum(sizes) + 1)
    if sum(sizes) != length or builtins.min(sizes, default=0) < 0:
        raise InvalidArgumentError(None, None, f"tf.split: sizes {sizes} do not add up to the axis size {length}.")
    return list(torch.split(tensor, sizes, dim=axis))


def unstack(value: Any, num: Optional[int] = None, axis: int = 0, name: str = "unstack") -> list:
    """The slices of `value` along `axis`, as a list."""
    tensor = to_tensor(value, op="tf.unstack")
    axis = dims(axis, tensor.dim())[0]
    if num is not None and int(num) != tensor.shape[axis]:
        raise ValueError(f"tf.unstack: num={num} but axis {axis} has size {tensor.shape[axis]}.")
    return list(torch.unbind(tensor, dim=axis))


def boolean_mask(tensor: Any, mask: Any, axis: Optional[int] = None, name: str = "boolean_mask") -> torch.Tensor:
    """The entries of `tensor` where `mask` (covering the axes from `axis`) is true, flattened over those axes."""
    values = to_tensor(tensor, op="tf.boolean_mask")
    keep = mask if isinstance(mask, torch.Tensor) else to_tensor(mask, torch.bool, "tf.boolean_mask")
    require(keep, "bool", "tf.boolean_mask")
    start = 0 if axis is None else int(axis) % values.dim()
    if tuple(values.shape[start:start + keep.dim()]) != tuple(keep.shape):
        raise ValueError(f"tf.boolean_mask: mask shape {tuple(keep.shape)} does not match tensor shape "
                         f"{tuple(values.shape)} at axis {start}.")
    moved = values.reshape(tuple(values.shape[:start]) + (-1,) + tuple(values.shape[start + keep.dim():]))
    return moved.index_select(start, torch.nonzero(keep.reshape(-1)).reshape(-1))


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0, name: Optional[str] = None
        ) -> torch.Tensor:
    """`tensor` padded by paddings[i] = [before, after] on axis i; mode CONSTANT, REFLECT or SYMMETRIC."""
    values = to_tensor(tensor, op="tf.pad")
    pads = to_tensor(paddings, op="tf.pad").tolist()
    if len(pads) != values.dim() or any(len(p) != 2 for p in pads):
        raise ValueError(f"tf.pad: paddings must have shape [{values.dim()}, 2], got {pads}.")
    mode = mode.upper()
    if mode == "CONSTANT":
        fill_value = to_tensor(constant_values, values.dtype, "tf.pad").item()
        out = torch.full([s + b + a for s, (b, a) in zip(values.shape, pads)], fill_value, dtype=values.dtype,
                         device=values.device)
        out[tuple(slice(b, b + s) for s, (b, _) in zip(values.shape, pads))] = values
        return out
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"tf.pad: mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}.")
    array = values.detach().cpu().numpy()
    out = np.pad(array, pads, mode="reflect" if mode == "REFLECT" else "symmetric")
    return torch.from_numpy(np.ascontiguousarray(out)).to(values.device)


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: Optional[str] = None) -> torch.Tensor:
    """`values` sorted along `axis`; direction ASCENDING or DESCENDING."""
    tensor = to_tensor(values, op="tf.sort")
    return torch.sort(tensor, dim=axis, descending=_descending(direction), stable=True).values


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: Optional[str] = None) -> torch.Tensor:
    """The int32 indices that sort `values` along `axis` (ties keep their order)."""
    tensor = to_tensor(values, op="tf.argsort")
    return torch.sort(tensor, dim=axis, descending=_descending(direction), stable=True).indices.to(torch.int32)


def _descending(direction: str) -> bool:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}.")
    return direction == "DESCENDING"


def size(input: Any, out_type: Any = None, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The number of elements, as a scalar int32 tensor (or `out_type`)."""
    dtype = torch.int32 if out_type is None else as_dtype(out_type)
    return torch.tensor(_shape_of(input, "tf.size").numel(), dtype=dtype)


def rank(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The number of axes, as a scalar int32 tensor."""
    return torch.tensor(len(_shape_of(input, "tf.rank")), dtype=torch.int32)


def _shape_of(value: Any, op: str) -> torch.Size:
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU":
        return torch.Size(value.shape)  # a tf.string tensor
    return to_tensor(value, op=op).shape


def identity(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """`input` as a tensor; gradients flow through unchanged."""
    tensor = to_tensor(input, op="tf.identity")
    return tensor.clone() if tensor.requires_grad else tensor


def stop_gradient(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """`input` with gradients blocked (the tensor is detached from the autograd graph)."""
    return to_tensor(input, op="tf.stop_gradient").detach()


def linspace(start: Any, stop: Any, num: int, name: Optional[str] = None, axis: int = 0) -> torch.Tensor:
    """`num` evenly spaced values from start to stop inclusive; float32 for Python floats, float64 for
    Python ints (TF computes those in double)."""
    first, last = match_dtypes([start, stop], "tf.linspace")
    dtype = first.dtype if first.is_floating_point() else torch.float64
    if first.dim() or last.dim():
        steps = torch.linspace(0, 1, int(num), dtype=torch.float64)
        shape = (int(num),) + (1,) * builtins.max(first.dim(), last.dim())
        out = first.to(torch.float64) + steps.reshape(shape) * (last.to(torch.float64) - first.to(torch.float64))
        return torch.movedim(out.to(dtype), 0, axis)
    return torch.linspace(float(first), float(last), int(num), dtype=torch.float64).to(dtype)


def eye(num_rows: int, num_columns: Optional[int] = None, batch_shape: Any = None, dtype: Any = torch.float32,
        name: Optional[str] = None) -> torch.Tensor:
    """An identity matrix [num_rows, num_columns], repeated over `batch_shape`."""
    matrix = torch.eye(int(num_rows), int(num_rows if num_columns is None else num_columns), dtype=as_dtype(dtype))
    if batch_shape is None:
        return matrix
    batch = int_list(batch_shape, "tf.eye batch_shape")
    return matrix.expand(*batch, *matrix.shape).clone()


def reverse(tensor: Any, axis: Any, name: Optional[str] = None) -> torch.Tensor:
    """`tensor` reversed along each axis in `axis`."""
    values = to_tensor(tensor, op="tf.reverse")
    return values.flip(dims(axis, values.dim()))


def broadcast_to(input: Any, shape: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """`input` broadcast to `shape` (a copy, like TF's eager result)."""
    return to_tensor(input, op="tf.broadcast_to").expand(*int_list(shape, "tf.broadcast_to shape")).clone()


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: Optional[str] = None) -> torch.Tensor:
    """A copy of `tensor` with the slices at `indices` (last axis = coordinates) replaced by `updates`."""
    values, new = match_dtypes([tensor, updates], "tf.tensor_scatter_nd_update")
    index = _indices(indices, "tf.tensor_scatter_nd_update")
    out = values.clone()
    depth = index.shape[-1]
    coords = index.reshape(-1, depth)
    out[tuple(coords[:, i] for i in builtins.range(depth))] = new.reshape((coords.shape[0],) +
                                                                           tuple(values.shape[depth:]))
    return out

