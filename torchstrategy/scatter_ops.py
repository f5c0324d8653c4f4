"""TF's index-driven ops: tf.tensor_scatter_nd_add/sub/min/max, tf.scatter_nd, tf.dynamic_partition,
tf.dynamic_stitch, tf.unique(_with_counts), tf.searchsorted, tf.histogram_fixed_width(_bins), tf.sequence_mask."""
from __future__ import annotations

import builtins
import collections
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import int_list, match_dtypes, to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError

__all__ = ["tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
           "scatter_nd", "dynamic_partition", "dynamic_stitch", "unique", "unique_with_counts", "searchsorted",
           "histogram_fixed_width", "histogram_fixed_width_bins", "sequence_mask"]

Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _coords(indices: Any, shape: tuple, op: str) -> tuple:
    """(flat row indices into the first `depth` axes, depth) after checking every index is inside `shape`."""
    index = to_tensor(indices, op=op)
    if index.is_floating_point() or index.dtype == torch.bool:
        raise TypeError(f"{op}: indices must be integers, got {index.dtype}.")
    index = index.to(torch.int64)
    depth = index.shape[-1] if index.dim() else 0
    if depth > len(shape):
        raise InvalidArgumentError(None, None, f"{op}: index depth {depth} exceeds the rank {len(shape)} of the tensor.")
    coords = index.reshape(-1, depth)
    bounds = torch.tensor(shape[:depth], dtype=torch.int64)
    if coords.numel() and bool(((coords < 0) | (coords >= bounds)).any()):
        bad = coords[((coords < 0) | (coords >= bounds)).any(dim=1)][0].tolist()
        raise InvalidArgumentError(None, None, f"{op}: index {bad} is out of bounds for shape {list(shape)}.")
    strides = [int(np.prod(shape[i + 1:depth])) for i in range(depth)]
    flat = (coords * torch.tensor(strides, dtype=torch.int64)).sum(dim=1) if depth else coords.new_zeros(1)
    return flat, depth, tuple(index.shape[:-1])


def _scatter(tensor: Any, indices: Any, updates: Any, mode: str, op: str) -> torch.Tensor:
    values, new = match_dtypes([tensor, updates], op)
    shape = tuple(values.shape)
    flat, depth, batch = _coords(indices, shape, op)
    slice_shape = shape[depth:]
    if tuple(new.shape) != batch + slice_shape:
        raise InvalidArgumentError(None, None, f"{op}: updates have shape {list(new.shape)} but indices and the tensor need "
                                   f"{list(batch + slice_shape)}.")
    rows = values.reshape((-1,) + slice_shape).clone()
    updates_rows = new.reshape((-1,) + slice_shape).to(rows.device)
    target = flat.to(rows.device).reshape((-1,) + (1,) * len(slice_shape)).expand_as(updates_rows)
    if mode == "add":
        rows.scatter_add_(0, target, updates_rows)
    elif mode == "sub":
        rows.scatter_add_(0, target, -updates_rows)
    else:
        rows.scatter_reduce_(0, target, updates_rows, reduce="amin" if mode == "min" else "amax", include_self=True)
    return rows.reshape(shape)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, bad_indices_policy: str = "",
                          name: Optional[str] = None) -> torch.Tensor:
    """A copy of `tensor` with `updates` added at `indices` (repeated indices add up).

    >>> tensor_scatter_nd_add([1, 2, 3], [[0], [0]], [5, 5]).tolist()
    [11, 2, 3]
    """
    return _scatter(tensor, indices, updates, "add", "tf.tensor_scatter_nd_add")


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, bad_indices_policy: str = "",
                          name: Optional[str] = None) -> torch.Tensor:
    """A copy of `tensor` with `updates` subtracted at `indices`."""
    return _scatter(tensor, indices, updates, "sub", "tf.tensor_scatter_nd_sub")


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any, bad_indices_policy: str = "",
                          name: Optional[str] = None) -> torch.Tensor:
    """A copy of `tensor` holding min(tensor, update) at `indices`."""
    return _scatter(tensor, indices, updates, "min", "tf.tensor_scatter_nd_min")


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any, bad_indices_policy: str = "",
                          name: Optional[str] = None) -> torch.Tensor:
    """A copy of `tensor` holding max(tensor, update) at `indices`."""
    return _scatter(tensor, indices, updates, "max", "tf.tensor_scatter_nd_max")


def scatter_nd(indices: Any, updates: Any, shape: Any, bad_indices_policy: str = "",
               name: Optional[str] = None) -> torch.Tensor:
    """Zeros of `shape` with `updates` summed in at `indices`.

    >>> scatter_nd([[1], [3]], [9, 10], [5]).tolist()
    [0, 9, 0, 10, 0]
    """
    new = to_tensor(updates, op="tf.scatter_nd")
    zeros = torch.zeros(int_list(shape, "tf.scatter_nd shape"), dtype=new.dtype)
    return _scatter(zeros, indices, new, "add", "tf.scatter_nd")


def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: Optional[str] = None) -> list:
    """`num_partitions` tensors: data[partitions == i] for each i (partitions covers data's leading axes)."""
    values = to_tensor(data, op="tf.dynamic_partition")
    parts = to_tensor(partitions, op="tf.dynamic_partition").to(torch.int64)
    if tuple(values.shape[:parts.dim()]) != tuple(parts.shape):
        raise InvalidArgumentError(None, None, f"tf.dynamic_partition: partitions shape {list(parts.shape)} must be a prefix "
                                   f"of data shape {list(values.shape)}.")
    if parts.numel() and (int(parts.min()) < 0 or int(parts.max()) >= num_partitions):
        raise InvalidArgumentError(None, None, f"tf.dynamic_partition: partition ids must lie in [0, {num_partitions}).")
    rows = values.reshape((-1,) + tuple(values.shape[parts.dim():]))
    flat = parts.reshape(-1)
    return [rows[flat == i] for i in builtins.range(int(num_partitions))]


def dynamic_stitch(indices: Any, data: Any, name: Optional[str] = None) -> torch.Tensor:
    """Merges data[i] into one tensor at the positions indices[i] (later writes win).

    >>> dynamic_stitch([[0, 2], [1]], [[10, 30], [20]]).tolist()
    [10, 20, 30]
    """
    index_list = [to_tensor(i, op="tf.dynamic_stitch").to(torch.int64) for i in indices]
    data_list = match_dtypes(list(data), "tf.dynamic_stitch")
    if len(index_list) != len(data_list):
        raise ValueError(f"tf.dynamic_stitch: {len(index_list)} index tensors for {len(data_list)} data tensors.")
    slice_shape = tuple(data_list[0].shape[index_list[0].dim():])
    size = builtins.max((int(i.max()) + 1 for i in index_list if i.numel()), default=0)
    out = torch.zeros((size,) + slice_shape, dtype=data_list[0].dtype)
    for index, values in zip(index_list, data_list):
        out[index.reshape(-1)] = values.reshape((-1,) + slice_shape)
    return out


def _unique(x: Any, out_idx: Any, op: str) -> tuple:
    tensor = to_tensor(x, op=op)
    if tensor.dim() != 1:
        raise InvalidArgumentError(None, None, f"{op}: x must be a vector, got shape {list(tensor.shape)}.")
    values = tensor.tolist()
    first: dict = {}
    idx = [first.setdefault(v, len(first)) for v in values]
    counts = [0] * len(first)
    for i in idx:
        counts[i] += 1
    dtype = as_dtype(out_idx)
    y = torch.tensor(list(first), dtype=tensor.dtype) if first else tensor[:0]
    return y, torch.tensor(idx, dtype=dtype), torch.tensor(counts, dtype=dtype)


def unique(x: Any, out_idx: Any = torch.int32, name: Optional[str] = None) -> Unique:
    """(y, idx): the distinct values of the vector x in order of first appearance, and x's position in y.

    >>> unique([1, 1, 3, 2, 3]).y.tolist()
    [1, 3, 2]
    """
    y, idx, _ = _unique(x, out_idx, "tf.unique")
    return Unique(y, idx)


def unique_with_counts(x: Any, out_idx: Any = torch.int32, name: Optional[str] = None) -> UniqueWithCounts:
    """(y, idx, count): as `unique`, plus how often each distinct value occurs."""
    return UniqueWithCounts(*_unique(x, out_idx, "tf.unique_with_counts"))


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = torch.int32,
                 name: Optional[str] = None) -> torch.Tensor:
    """Where each value would go in the sorted innermost rows of `sorted_sequence` (side 'left' or 'right').

    >>> searchsorted([1, 3, 5], [0, 3, 6]).tolist()
    [0, 1, 3]
    """
    if side not in ("left", "right"):
        raise ValueError(f"tf.searchsorted: side must be 'left' or 'right', got {side!r}.")
    seq, vals = match_dtypes([sorted_sequence, values], "tf.searchsorted")
    if seq.dim() != vals.dim() or tuple(seq.shape[:-1]) != tuple(vals.shape[:-1]):
        raise InvalidArgumentError(None, None, f"tf.searchsorted: sorted_sequence {list(seq.shape)} and values "
                                   f"{list(vals.shape)} must agree on all but the last axis.")
    out = torch.searchsorted(seq.contiguous(), vals.contiguous(), right=side == "right")
    return out.to(as_dtype(out_type))


def histogram_fixed_width_bins(values: Any, value_range: Any, nbins: int = 100, dtype: Any = torch.int32,
                               name: Optional[str] = None) -> torch.Tensor:
    """The bin of each value among `nbins` equal bins over value_range; values outside go to the end bins."""
    vals, bounds = match_dtypes([values, value_range], "tf.histogram_fixed_width_bins")
    low, high = bounds.to(torch.float64).tolist()
    if not high > low:
        raise InvalidArgumentError(None, None, f"tf.histogram_fixed_width: value_range must be increasing, got {[low, high]}.")
    scaled = (vals.to(torch.float64) - low) / (high - low)
    return torch.clamp(torch.floor(scaled * nbins), 0, nbins - 1).to(as_dtype(dtype))


def histogram_fixed_width(values: Any, value_range: Any, nbins: int = 100, dtype: Any = torch.int32,
                          name: Optional[str] = None) -> torch.Tensor:
    """How many values fall in each of `nbins` equal bins over value_range (outside values count in the end bins).

    >>> histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0], nbins=5).tolist()
    [2, 1, 1, 0, 2]
    """
    bins = histogram_fixed_width_bins(values, value_range, nbins, torch.int64)
    return torch.bincount(bins.reshape(-1), minlength=int(nbins)).to(as_dtype(dtype))


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = torch.bool, name: Optional[str] = None) -> torch.Tensor:
    """mask[..., j] = j < lengths[...], over maxlen positions (max(lengths) by default).

    >>> sequence_mask([1, 3], 4).int().tolist()
    [[1, 0, 0, 0], [1, 1, 1, 0]]
    """
    lens = to_tensor(lengths, op="tf.sequence_mask")
    if lens.is_floating_point() or lens.dtype == torch.bool:
        raise TypeError(f"tf.sequence_mask: lengths must be integers, got {lens.dtype}.")
    size = int(lens.max()) if maxlen is None and lens.numel() else int(0 if maxlen is None else maxlen)
    mask = torch.arange(size, device=lens.device) < lens.unsqueeze(-1)
    return mask.to(as_dtype(dtype))
