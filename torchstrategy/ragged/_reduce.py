"""Reductions of RaggedTensors (what tf.reduce_sum/mean/max/min/prod/any/all do given one): along a ragged
axis each row reduces its own items; empty rows give the identity (0, 1, the dtype's lowest/highest, NaN mean)."""
from __future__ import annotations

import builtins
from typing import Any

import torch

from torchstrategy.ragged._tensor import RaggedTensor

_SCATTER = {"sum": "sum", "prod": "prod", "max": "amax", "min": "amin", "any": "amax", "all": "amin"}


def _identity(op: str, dtype: torch.dtype) -> Any:
    if op in ("sum", "any"):
        return 0
    if op in ("prod", "all"):
        return 1
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.min if op == "max" else info.max  # TF fills an empty row's max with the lowest finite value


def _segment(values: torch.Tensor, ids: torch.Tensor, count: int, op: str) -> torch.Tensor:
    """values grouped by ids (0 <= id < count) along axis 0, each group reduced by `op`."""
    is_bool = values.dtype == torch.bool
    data = values.to(torch.uint8) if is_bool else values
    out = torch.full((count,) + tuple(data.shape[1:]), _identity(op, data.dtype), dtype=data.dtype,
                     device=data.device)
    index = ids.to(data.device).reshape((-1,) + (1,) * (data.dim() - 1)).expand_as(data)
    out = out.scatter_reduce(0, index, data, reduce=_SCATTER[op], include_self=True)
    return out.bool() if is_bool else out


def _dense(tensor: torch.Tensor, op: str, axis: int) -> torch.Tensor:
    if tensor.shape[axis] == 0:
        shape = tensor.shape[:axis] + tensor.shape[axis + 1:]
        return torch.full(shape, _identity(op, tensor.dtype), dtype=tensor.dtype, device=tensor.device)
    moved = tensor.movedim(axis, 0)
    return _segment(moved, torch.zeros(moved.shape[0], dtype=torch.int64), 1, op)[0]


def _columns(rt: RaggedTensor, op: str) -> torch.Tensor:
    """Axis 0 of a ragged_rank-1 RaggedTensor: item j of every row that has one."""
    if isinstance(rt.values, RaggedTensor):
        raise NotImplementedError("Reducing axis 0 of a RaggedTensor with ragged_rank > 1 is not supported here.")
    lengths = rt.row_lengths()
    width = int(lengths.max()) if lengths.numel() else 0
    rowids = rt.value_rowids()
    column = torch.arange(int(rt.values.shape[0])) - rt.row_splits[rowids]
    return _segment(rt.values, column, width, op)


def _one_axis(value: Any, op: str, axis: int) -> Any:
    if not isinstance(value, RaggedTensor):
        return _dense(value, op, axis)
    if axis == 0:
        return _columns(value, op)
    if axis >= 2:
        return value.with_values(_one_axis(value.values, op, axis - 1))
    # axis 1: each outer row reduces over its own rows
    if not isinstance(value.values, RaggedTensor):
        return _segment(value.values, value.value_rowids(), value.nrows_int(), op)
    rows = [_columns(value.values.slice_rows(int(value.row_splits[i]), int(value.row_splits[i + 1])), op)
            for i in builtins.range(value.nrows_int())]
    flat = torch.cat(rows) if rows else value.flat_values[:0]
    return RaggedTensor.from_row_lengths(flat, [int(r.shape[0]) for r in rows], validate=False)


def _axes(axis: Any, rank: int) -> list:
    if axis is None:
        return list(builtins.range(rank))
    items = list(axis.reshape(-1).tolist()) if isinstance(axis, torch.Tensor) else (
        list(axis) if isinstance(axis, (list, tuple)) else [axis])
    out = []
    for a in items:
        a = int(a)
        if not -rank <= a < rank:
            raise ValueError(f"axis {a} is out of range for a RaggedTensor of rank {rank}.")
        out.append(a % rank)
    return sorted(set(out), reverse=True)


def _reduce(rt: RaggedTensor, op: str, axis: Any) -> Any:
    axes = _axes(axis, rt.ndim)
    if len(axes) == rt.ndim:
        return _dense(rt.flat_values.reshape(-1), op, 0)
    value: Any = rt
    for a in axes:  # highest first, so lower axis numbers stay valid
        value = _one_axis(value, op, a)
    return value


def reduce(rt: RaggedTensor, op: str, axis: Any = None, keepdims: bool = False) -> Any:
    """`op` ('sum', 'prod', 'mean', 'max', 'min', 'any', 'all') of `rt` over `axis` (all axes when None):
    a tensor, or a RaggedTensor while a ragged dimension remains. Means of ints are float64, as TF gives.

    >>> reduce(RaggedTensor.from_row_lengths([1, 2, 3], [2, 1]), "sum", axis=1).tolist()
    [3, 3]
    """
    if op not in _SCATTER and op != "mean":
        raise ValueError(f"Unknown ragged reduction {op!r}.")
    if op == "mean":
        flat = rt.flat_values
        floats = flat if flat.is_floating_point() else flat.to(torch.float64)
        total = _reduce(rt.with_flat_values(floats), "sum", axis)
        count = _reduce(rt.with_flat_values(torch.ones_like(floats)), "sum", axis)
        if isinstance(total, RaggedTensor):
            result: Any = total.with_flat_values(total.flat_values / count.flat_values)
        else:
            result = total / count
    else:
        result = _reduce(rt, op, axis)
    if keepdims:
        if isinstance(result, RaggedTensor):
            raise NotImplementedError("keepdims=True for a reduction that leaves a ragged dimension is not "
                                      "supported here.")
        for a in sorted(_axes(axis, rt.ndim)):
            result = result.unsqueeze(a)
    return result
