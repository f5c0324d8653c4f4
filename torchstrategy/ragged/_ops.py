"""The tf.ragged functions (constant, range, boolean_mask, map_flat_values, stack, segment-id conversions) and
the ragged forms of the tf ops real code applies to RaggedTensors: reductions along any axis, concat."""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.ragged._tensor import RaggedTensor, _values_of, check_row_splits_dtype


def _depth(value: Any) -> Optional[int]:
    """The nesting depth of the scalars in a Python list (None: no scalar found); ValueError when mixed."""
    if not isinstance(value, (list, tuple)):
        return 0
    depths = {d for d in (_depth(item) for item in value) if d is not None}
    if len(depths) > 1:
        raise ValueError("all scalar values must have the same nesting depth")
    return depths.pop() + 1 if depths else None


def constant(pylist: Any, dtype: Any = None, ragged_rank: Optional[int] = None, inner_shape: Any = None,
             name: Optional[str] = None, row_splits_dtype: Any = torch.int64) -> Any:
    """A RaggedTensor from nested Python lists whose rows may differ in length (a plain tensor for a scalar
    or flat list); ints become int32 (int64 if too big), floats float32, strings bytes, as tf.constant does.

    >>> constant([[1, 2], [3]]).to_list()
    [[1, 2], [3]]
    """
    check_row_splits_dtype(row_splits_dtype, "tf.ragged.constant")
    depth = _depth(pylist)
    if depth is None:  # only empty lists: depth from the nesting itself
        depth, probe = 0, pylist
        while isinstance(probe, (list, tuple)):
            depth, probe = depth + 1, (probe[0] if probe else 0)
    inner_rank = len(inner_shape) if inner_shape is not None else None
    if ragged_rank is None:
        ragged_rank = builtins.max(depth - 1 - (inner_rank or 0), 0)
    if depth <= ragged_rank:
        raise ValueError(f"ragged_rank={ragged_rank} must be less than the nesting depth of pylist ({depth}).")
    if ragged_rank == 0:
        return _dense(pylist, dtype)
    outer = [pylist]
    splits_list = []
    for _ in builtins.range(ragged_rank + 1):
        bounds, rows = [0], []
        for row in outer:
            rows.extend(row)
            bounds.append(len(rows))
        splits_list.append(bounds)
        outer = rows
    # `outer` is now the list of elements below the innermost ragged dimension
    flat = _dense(outer, dtype) if outer else _empty_values(dtype, depth - ragged_rank - 1, inner_shape)
    result: Any = flat
    for bounds in reversed(splits_list[1:]):
        result = RaggedTensor.from_row_splits(result, bounds, validate=False)
    return result


def _dense(value: Any, dtype: Any) -> Any:
    try:
        array = np.array(value, dtype=object if _has_strings(value) else None)
    except ValueError:
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    if array.dtype == object and not _has_strings(value):
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
    if array.dtype.kind in "OSU":
        return _values_of(array, "tf.ragged.constant")
    tensor = to_tensor(array.astype(np.float32) if array.dtype == np.float64 else _int(array), op="tf.ragged.constant")
    return tensor.to(as_dtype(dtype)) if dtype is not None else tensor


def _int(array: np.ndarray) -> np.ndarray:
    if array.dtype.kind == "i" and (not array.size or (-(2**31) <= array.min() and array.max() < 2**31)):
        return array.astype(np.int32)
    return array


def _has_strings(value: Any) -> bool:
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return isinstance(value, (str, bytes))


def _empty_values(dtype: Any, rank: int, inner_shape: Any) -> torch.Tensor:
    shape = (0,) + (tuple(int(d) for d in inner_shape) if inner_shape is not None else (0,) * rank)
    return torch.zeros(shape, dtype=as_dtype(dtype) if dtype is not None else torch.float32)


def range(starts: Any, limits: Any = None, deltas: Any = 1, dtype: Any = None, name: Optional[str] = None,  # noqa: A001
          row_splits_dtype: Any = torch.int64) -> RaggedTensor:
    """Row i is range(starts[i], limits[i], deltas[i]) (a scalar argument applies to every row; with one
    argument, rows are range(0, starts[i]))."""
    check_row_splits_dtype(row_splits_dtype, "tf.ragged.range")
    if limits is None:
        starts, limits = 0, starts
    parts = [to_tensor(v, op="tf.ragged.range") for v in (starts, limits, deltas)]
    kind = as_dtype(dtype) if dtype is not None else (
        torch.float32 if any(p.is_floating_point() for p in parts) else torch.int32)
    if any(p.is_floating_point() for p in parts):
        kind = kind if dtype is not None else builtins.max((p.dtype for p in parts if p.is_floating_point()),
                                                           key=lambda d: torch.finfo(d).bits)
    count = builtins.max(p.numel() if p.dim() else 1 for p in parts)
    if any(p.dim() > 1 or (p.dim() == 1 and p.numel() != count) for p in parts):
        raise InvalidArgumentError(None, None, "tf.ragged.range: starts, limits and deltas must be scalars or 1-D of one length.")
    rows = [p.reshape(-1).expand(count) if p.dim() else p.expand(count) for p in parts]
    pieces = []
    for start, limit, delta in zip(*(r.tolist() for r in rows)):
        if delta == 0:
            raise InvalidArgumentError(None, None, "Requires delta != 0")
        pieces.append(torch.arange(start, limit, delta, dtype=kind) if (limit - start) * delta > 0
                      else torch.zeros(0, dtype=kind))
    values = torch.cat(pieces) if pieces else torch.zeros(0, dtype=kind)
    return RaggedTensor.from_row_lengths(values, [p.numel() for p in pieces], validate=False)


def row_splits_to_segment_ids(splits: Any, name: Optional[str] = None, out_type: Any = None) -> torch.Tensor:
    """The row index of each value for a row_splits vector."""
    rt = RaggedTensor.from_row_splits(torch.zeros(int(np.asarray(splits)[-1])), splits)
    ids = rt.value_rowids()
    return ids.to(as_dtype(out_type)) if out_type is not None else ids


def segment_ids_to_row_splits(segment_ids: Any, num_segments: Any = None, out_type: Any = None,
                              name: Optional[str] = None) -> torch.Tensor:
    """row_splits for sorted segment ids (num_segments rows; default the largest id + 1)."""
    ids = torch.as_tensor(np.asarray(segment_ids), dtype=torch.int64)
    rt = RaggedTensor.from_value_rowids(torch.zeros(ids.numel()), ids, num_segments)
    return rt.row_splits.to(as_dtype(out_type)) if out_type is not None else rt.row_splits


def map_flat_values(op: Callable, *args: Any, **kwargs: Any) -> Any:
    """`op` applied to the flat_values of every RaggedTensor argument (which must share one nested
    partition), the result wrapped back in that partition."""
    partitions: list = []

    def unwrap(value: Any) -> Any:
        if isinstance(value, RaggedTensor):
            partitions.append(value)
            return value.flat_values
        if isinstance(value, (list, tuple)):
            return type(value)(unwrap(v) for v in value)
        if isinstance(value, dict):
            return {k: unwrap(v) for k, v in value.items()}
        return value

    args, kwargs = unwrap(list(args)), unwrap(kwargs)
    if not partitions:
        return op(*args, **kwargs)
    first = partitions[0].nested_row_splits
    for other in partitions[1:]:
        splits = other.nested_row_splits
        if len(splits) != len(first) or not all(torch.equal(a, b) for a, b in zip(splits, first)):
            raise InvalidArgumentError(None, None, "map_flat_values: the RaggedTensor arguments have incompatible row_splits; "
                                       "they must share one row partition.")
    result = op(*args, **kwargs)
    if int(result.shape[0]) != int(partitions[0].flat_values.shape[0]):
        raise ValueError("map_flat_values: op must keep the outer dimension of flat_values (got "
                         f"{int(result.shape[0])} rows for {int(partitions[0].flat_values.shape[0])}).")
    return partitions[0].with_flat_values(result)


def elementwise(fn: Callable) -> Callable:
    """`fn` (an element-wise tf op) made to accept RaggedTensors, as TF's ragged dispatch does: their
    flat_values go through `fn` and the result keeps their row partition (see map_flat_values)."""

    @functools.wraps(fn)
    def dispatching(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, RaggedTensor) for a in args) or any(isinstance(v, RaggedTensor) for v in kwargs.values()):
            return map_flat_values(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    return dispatching


def boolean_mask(data: Any, mask: Any, name: Optional[str] = None) -> Any:
    """Keeps the items of `data` where `mask` is True; a mask of rank k > 1 gives a RaggedTensor of rank
    k (each row keeps its own count)."""
    if isinstance(mask, RaggedTensor):
        if not isinstance(data, RaggedTensor) or len(mask.nested_row_splits) != len(data.nested_row_splits) or \
                not all(torch.equal(a, b) for a, b in zip(mask.nested_row_splits, data.nested_row_splits)):
            raise InvalidArgumentError(None, None, "Inputs must have identical ragged splits")
        keep = _bool(mask.flat_values)
        kept = _masked_rows(mask, keep)
        return kept.with_flat_values(data.flat_values[_index(keep, data.flat_values)])
    keep = _bool(mask)
    if isinstance(data, RaggedTensor):
        if keep.dim() != 1 or keep.numel() != data.nrows_int():
            raise InvalidArgumentError(None, None, f"boolean_mask: a dense mask must be 1-D with one entry per row "
                                       f"({data.nrows_int()}); got shape {tuple(keep.shape)}.")
        rows = [data.slice_rows(i, i + 1) for i in builtins.range(data.nrows_int()) if bool(keep[i])]
        return _concat_rows(rows, data)
    data = _values_of(data, "tf.ragged.boolean_mask")
    if tuple(keep.shape) != tuple(data.shape[:keep.dim()]):
        raise ValueError(f"boolean_mask: mask shape {tuple(keep.shape)} must match the leading dimensions of "
                         f"data {tuple(data.shape)}.")
    if keep.dim() == 1:
        return data[_index(keep, data)]
    flat_mask = keep.reshape(-1)
    flat_data = data.reshape((-1,) + tuple(data.shape[keep.dim():]))
    values = flat_data[_index(flat_mask, flat_data)]
    result: Any = values
    lengths = keep.reshape(-1, keep.shape[-1]).sum(-1)
    result = RaggedTensor.from_row_lengths(result, lengths, validate=False)
    for size in reversed(keep.shape[1:-1]):
        result = RaggedTensor.from_row_lengths(result, [int(size)] * (result.nrows_int() // int(size)), validate=False)
    return result


def _bool(mask: Any) -> torch.Tensor:
    tensor = to_tensor(mask, op="tf.ragged.boolean_mask")
    if tensor.dtype != torch.bool:
        raise TypeError(f"boolean_mask: mask must be bool; got {tensor.dtype}.")
    return tensor


def _index(keep: torch.Tensor, data: Any) -> Any:
    return keep if isinstance(data, torch.Tensor) else keep.cpu().numpy()


def _masked_rows(mask: RaggedTensor, keep: torch.Tensor) -> RaggedTensor:
    """mask's partition with each innermost row counting only its kept entries."""
    ids = RaggedTensor.from_row_splits(keep, mask.nested_row_splits[-1], validate=False).value_rowids()
    inner_rows = mask.nested_row_splits[-1].numel() - 1
    counts = torch.bincount(ids[keep], minlength=inner_rows) if keep.any() else torch.zeros(inner_rows,
                                                                                             dtype=torch.int64)
    splits = list(mask.nested_row_splits[:-1]) + [torch.cat([torch.zeros(1, dtype=torch.int64),
                                                             torch.cumsum(counts, 0)])]
    return RaggedTensor.from_nested_row_splits(torch.zeros(int(splits[-1][-1])), splits, validate=False)


def _concat_rows(parts: list, like: RaggedTensor) -> RaggedTensor:
    """RaggedTensors of one ragged_rank stacked along axis 0."""
    if not parts:
        return like.slice_rows(0, 0)
    values = [p.values for p in parts]
    if isinstance(values[0], RaggedTensor):
        inner = _concat_rows(values, values[0])
    elif isinstance(values[0], torch.Tensor):
        inner = torch.cat(values)
    else:
        inner = np.concatenate(values)
    lengths = torch.cat([p.row_lengths() for p in parts])
    return RaggedTensor.from_row_lengths(inner, lengths, validate=False)


def concat(values: Any, axis: int) -> RaggedTensor:
    """tf.concat with a RaggedTensor among `values`: axis 0 stacks rows; axis 1 joins row i of each."""
    parts = [v if isinstance(v, RaggedTensor) else RaggedTensor.from_tensor(_values_of(v, "tf.concat"))
             for v in values]
    ranks = {p.ragged_rank for p in parts}
    if len(ranks) != 1:
        raise ValueError("tf.concat: RaggedTensors of different ragged_rank cannot be joined.")
    rank = parts[0].ndim
    axis = axis + rank if axis < 0 else axis
    if axis == 0:
        return _concat_rows(parts, parts[0])
    if axis == 1:
        counts = {p.nrows_int() for p in parts}
        if len(counts) != 1:
            raise InvalidArgumentError(None, None, f"tf.concat(axis=1): the RaggedTensors have different row counts "
                                       f"{sorted(counts)}.")
        rows = [part.slice_rows(i, i + 1).values for i in builtins.range(counts.pop()) for part in parts]
        lengths = [builtins.sum(int(part.row_lengths()[i]) for part in parts)
                   for i in builtins.range(parts[0].nrows_int())]
        inner = _concat_rows(rows, rows[0]) if isinstance(rows[0], RaggedTensor) else (
            torch.cat(rows) if isinstance(rows[0], torch.Tensor) else np.concatenate(rows))
        return RaggedTensor.from_row_lengths(inner, lengths, validate=False)
    raise NotImplementedError(f"tf.concat of RaggedTensors along axis {axis} is not supported here; use 0 or 1.")


def stack(values: Any, axis: int = 0, name: Optional[str] = None) -> RaggedTensor:
    """RaggedTensors (or dense tensors) stacked along a new axis 0: one outer row per input."""
    if axis != 0:
        raise NotImplementedError(f"tf.ragged.stack(axis={axis}) is not supported here; use axis=0.")
    parts = [v if isinstance(v, RaggedTensor) else _values_of(v, "tf.ragged.stack") for v in values]
    inner = _concat_rows(parts, parts[0]) if isinstance(parts[0], RaggedTensor) else torch.cat(parts)
    counts = [p.nrows_int() if isinstance(p, RaggedTensor) else int(p.shape[0]) for p in parts]
    return RaggedTensor.from_row_lengths(inner, counts, validate=False)
