"""TF's shape-manipulating top-level ops: tf.repeat, tf.roll, tf.meshgrid, tf.tensordot, tf.ensure_shape,
tf.broadcast_static_shape / broadcast_dynamic_shape, tf.bitcast, tf.slice, tf.reverse_sequence, tf.unravel_index,
tf.identity_n, tf.shape_n, tf.parallel_stack and tf.guarantee_const."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import int_list, match_dtypes, to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError

__all__ = ["repeat", "roll", "meshgrid", "tensordot", "ensure_shape", "broadcast_static_shape",
           "broadcast_dynamic_shape", "bitcast", "slice", "reverse_sequence", "unravel_index", "identity_n",
           "shape_n", "parallel_stack", "guarantee_const", "approx_top_k"]


def repeat(input: Any, repeats: Any, axis: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Each element (along `axis`; of the flattened input when None) repeated `repeats` times.

    >>> repeat([1, 2], [2, 3]).tolist()
    [1, 1, 2, 2, 2]
    """
    tensor = to_tensor(input, op="tf.repeat")
    counts = to_tensor(repeats, op="tf.repeat").to(torch.int64)
    if axis is None:
        tensor, axis = tensor.reshape(-1), 0
    if counts.numel() == 1:
        return torch.repeat_interleave(tensor, int(counts.reshape(())), dim=int(axis))
    if counts.dim() != 1 or counts.shape[0] != tensor.shape[int(axis)]:
        raise InvalidArgumentError(None, None, f"tf.repeat: repeats has {counts.numel()} entries but axis {axis} has size "
                                   f"{tensor.shape[int(axis)]}.")
    return torch.repeat_interleave(tensor, counts, dim=int(axis))


def roll(input: Any, shift: Any, axis: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Elements shifted by `shift` along `axis` (both ints or equal-length lists), wrapping around.

    >>> roll([0, 1, 2, 3, 4], 2, 0).tolist()
    [3, 4, 0, 1, 2]
    """
    tensor = to_tensor(input, op="tf.roll")
    shifts, axes = int_list(shift, "tf.roll shift"), int_list(axis, "tf.roll axis")
    if len(shifts) != len(axes):
        raise InvalidArgumentError(None, None, f"tf.roll: shift {shifts} and axis {axes} must have the same length.")
    return torch.roll(tensor, shifts=shifts, dims=axes)


def meshgrid(*args: Any, **kwargs: Any) -> list:
    """Coordinate grids of the 1-D inputs; indexing='xy' (default, Cartesian) or 'ij' (matrix)."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"tf.meshgrid got unexpected keyword arguments: {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"tf.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}.")
    tensors = match_dtypes(list(args), "tf.meshgrid") if args else []
    return list(torch.meshgrid(*[t.reshape(-1) for t in tensors], indexing=indexing))


def tensordot(a: Any, b: Any, axes: Any, name: Optional[str] = None) -> torch.Tensor:
    """The sum of products over the given axes: an int N (last N of a with first N of b) or [a_axes, b_axes]."""
    ta, tb = match_dtypes([a, b], "tf.tensordot")
    if isinstance(axes, torch.Tensor):
        axes = axes.tolist()
    if isinstance(axes, (int, np.integer)):
        return torch.tensordot(ta, tb, dims=int(axes))
    if len(axes) != 2:
        raise ValueError(f"tf.tensordot: axes must be an int or a pair [a_axes, b_axes], got {axes!r}.")
    first, second = (int_list(x, "tf.tensordot axes") for x in axes)
    return torch.tensordot(ta, tb, dims=(first, second))


def ensure_shape(x: Any, shape: Any, name: Optional[str] = None) -> Any:
    """`x` unchanged when its shape matches `shape` (None dimensions match anything); else InvalidArgumentError."""
    tensor = x if isinstance(x, (torch.Tensor, np.ndarray)) else to_tensor(x, op="tf.ensure_shape")
    dims = getattr(shape, "dims", shape)
    if dims is None or getattr(shape, "rank", 0) is None:  # unknown rank matches every tensor
        return tensor
    wanted = [None if d is None else int(d) for d in dims]
    actual = list(tensor.shape)
    if len(wanted) != len(actual) or any(w is not None and w != a for w, a in zip(wanted, actual)):
        raise InvalidArgumentError(None, None, f"Shape of tensor {actual} is not compatible with expected shape "
                                   f"{['None' if w is None else w for w in wanted]}.".replace("'None'", "None"))
    return tensor


def _broadcast(shape_x: list, shape_y: list) -> list:
    out = []
    for i in builtins.range(1, builtins.max(len(shape_x), len(shape_y)) + 1):
        x = shape_x[-i] if i <= len(shape_x) else 1
        y = shape_y[-i] if i <= len(shape_y) else 1
        if x is None or y is None:
            out.append(y if x == 1 else x if y == 1 else None)
        elif x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {shape_x} and {shape_y}")
    return out[::-1]


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> Any:
    """The broadcast of two TensorShapes, as a TensorShape (ValueError when incompatible)."""
    for shape in (shape_x, shape_y):
        if not isinstance(shape, (list, builtins.tuple)):
            raise TypeError(f"tf.broadcast_static_shape takes tf.TensorShape values, got {shape!r}.")
    if getattr(shape_x, "rank", 0) is None or getattr(shape_y, "rank", 0) is None:
        return type(shape_x)(None)  # unknown rank stays unknown
    return type(shape_x)(_broadcast(list(shape_x), list(shape_y)))


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> torch.Tensor:
    """The broadcast of two shape vectors, as a shape vector of their dtype (int32 by default)."""
    x, y = to_tensor(shape_x, op="tf.broadcast_dynamic_shape"), to_tensor(shape_y, op="tf.broadcast_dynamic_shape")
    try:
        out = _broadcast(x.tolist(), y.tolist())
    except ValueError as error:
        raise InvalidArgumentError(None, None, str(error)) from None
    return torch.tensor(out, dtype=x.dtype)


def bitcast(input: Any, type: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The bytes of `input` read as `type`: same width keeps the shape, a narrower type adds a last axis,
    a wider one consumes the last axis (as TF's bitcast)."""
    tensor = to_tensor(input, op="tf.bitcast").contiguous()
    target = as_dtype(type)
    src, dst = tensor.element_size(), torch.empty((), dtype=target).element_size()
    if src == dst:
        return tensor.view(target)
    if src > dst:
        return tensor.reshape(tuple(tensor.shape) + (1,)).view(target)
    if tensor.dim() == 0 or tensor.shape[-1] != dst // src:
        raise InvalidArgumentError(None, None, f"tf.bitcast: to go from {tensor.dtype} to {target} the last axis must have "
                                   f"size {dst // src}, got shape {list(tensor.shape)}.")
    return tensor.view(target).reshape(tuple(tensor.shape[:-1]))


def slice(input_: Any, begin: Any, size: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A001
    """The block starting at `begin` of `size` (-1: to the end of that axis).

    >>> slice([[1, 2, 3], [4, 5, 6]], [1, 0], [1, 2]).tolist()
    [[4, 5]]
    """
    tensor = to_tensor(input_, op="tf.slice")
    starts, sizes = int_list(begin, "tf.slice begin"), int_list(size, "tf.slice size")
    if len(starts) != tensor.dim() or len(sizes) != tensor.dim():
        raise InvalidArgumentError(None, None, f"tf.slice: begin and size need {tensor.dim()} entries, got {starts}, {sizes}.")
    index = []
    for axis, (start, count) in enumerate(zip(starts, sizes)):
        stop = tensor.shape[axis] if count == -1 else start + count
        if start < 0 or stop > tensor.shape[axis] or stop < start:
            raise InvalidArgumentError(None, None, f"tf.slice: begin {start} size {count} is outside axis {axis} of size "
                                       f"{tensor.shape[axis]}.")
        index.append(builtins.slice(start, stop))
    return tensor[builtins.tuple(index)].clone()


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: Optional[int] = None, batch_axis: Optional[int] = None,  # noqa: A002
                     name: Optional[str] = None) -> torch.Tensor:
    """For each batch entry b, its first seq_lengths[b] elements along seq_axis reversed."""
    tensor = to_tensor(input, op="tf.reverse_sequence")
    lengths = to_tensor(seq_lengths, op="tf.reverse_sequence").tolist()
    seq_axis = int(seq_axis if seq_axis is not None else 1) % tensor.dim()
    batch_axis = int(batch_axis or 0) % tensor.dim()
    if len(lengths) != tensor.shape[batch_axis]:
        raise InvalidArgumentError(None, None, f"tf.reverse_sequence: {len(lengths)} lengths for a batch of "
                                   f"{tensor.shape[batch_axis]}.")
    out = tensor.clone()
    for b, length in enumerate(lengths):
        if not 0 <= length <= tensor.shape[seq_axis]:
            raise InvalidArgumentError(None, None, f"tf.reverse_sequence: seq_lengths[{b}] = {length} is outside "
                                       f"[0, {tensor.shape[seq_axis]}].")
        row = out.select(batch_axis, b)
        axis = seq_axis - (1 if seq_axis > batch_axis else 0)
        part = row.narrow(axis, 0, int(length))
        part.copy_(part.flip(axis))
    return out


def unravel_index(indices: Any, dims: Any, name: Optional[str] = None) -> torch.Tensor:
    """The coordinates of flat `indices` in an array of shape `dims` (one row per dimension).

    >>> unravel_index([1, 5], [2, 3]).tolist()
    [[0, 1], [1, 2]]
    """
    flat = to_tensor(indices, op="tf.unravel_index")
    shape = int_list(dims, "tf.unravel_index dims")
    total = int(np.prod(shape))
    if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= total):
        raise InvalidArgumentError(None, None, f"tf.unravel_index: an index is outside [0, {total}) for dims {shape}.")
    coords = np.unravel_index(flat.cpu().numpy(), shape)
    return torch.from_numpy(np.stack(coords).astype(flat.cpu().numpy().dtype))


def identity_n(input: Any, name: Optional[str] = None) -> list:  # noqa: A002
    """The tensors of `input`, as a list."""
    return [to_tensor(t, op="tf.identity_n") for t in input]


def shape_n(input: Any, out_type: Any = torch.int32, name: Optional[str] = None) -> list:  # noqa: A002
    """The shape of each tensor in `input`, as int32 (or out_type) vectors."""
    return [torch.tensor(list(to_tensor(t, op="tf.shape_n").shape), dtype=as_dtype(out_type)) for t in input]


def parallel_stack(values: Any, name: str = "parallel_stack") -> torch.Tensor:
    """`tf.stack(values, axis=0)` (all values must have one shape)."""
    return torch.stack(match_dtypes(list(values), "tf.parallel_stack"))


def guarantee_const(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """`input` unchanged (a promise to TF's graph optimizer; nothing to do eagerly)."""
    return to_tensor(input, op="tf.guarantee_const")


def approx_top_k(input: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,  # noqa: A002
                 is_max_k: bool = True, reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: Optional[str] = None) -> tuple:
    """(values, int32 indices) of the k largest (or smallest, is_max_k=False) entries along
    reduction_dimension. Exact here, which meets any recall_target."""
    tensor = to_tensor(input, op="tf.approx_top_k")
    if not 0 < float(recall_target) <= 1:
        raise ValueError(f"tf.approx_top_k: recall_target must be in (0, 1], got {recall_target}.")
    values, indices = torch.topk(tensor, int(k), dim=int(reduction_dimension), largest=bool(is_max_k), sorted=True)
    return values, indices.to(torch.int32)
