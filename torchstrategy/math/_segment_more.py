"""tf.math's segment max/min/mean/prod (sorted ids) and unsorted_segment max/min/mean/prod/sqrt_n, with TF's
fill for empty segments (sorted: 0, or 1 for prod; unsorted max/min: the dtype's lowest/highest finite value)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import require, to_tensor

__all__ = ["segment_max", "segment_min", "segment_mean", "segment_prod", "unsorted_segment_max",
           "unsorted_segment_min", "unsorted_segment_mean", "unsorted_segment_prod", "unsorted_segment_sqrt_n"]


def _extreme(dtype: torch.dtype, low: bool) -> float:
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.min if low else info.max


def _ids(segment_ids: Any, data: torch.Tensor, op: str) -> torch.Tensor:
    ids = to_tensor(segment_ids, op=op)
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"{op}: segment_ids must be an int32 or int64 tensor, got {ids.dtype}.")
    if tuple(ids.shape) != tuple(data.shape[: ids.dim()]):
        raise ValueError(f"{op}: segment_ids of shape {tuple(ids.shape)} must match the leading dims of data, "
                         f"{tuple(data.shape)}.")
    return ids


def _sorted_count(ids: torch.Tensor, op: str) -> int:
    if ids.dim() != 1:
        raise ValueError(f"{op}: segment_ids must be 1-D, got shape {tuple(ids.shape)}.")
    if ids.numel() and (bool((ids[1:] < ids[:-1]).any()) or int(ids.min()) < 0):
        raise ValueError(f"{op}: segment_ids must be sorted and non-negative; use the unsorted_segment_* op "
                         "for unsorted ids.")
    return int(ids.max()) + 1 if ids.numel() else 0


def _reduce(data: torch.Tensor, ids: torch.Tensor, num: int, how: str, fill: float) -> tuple:
    """(out, counts): rows of data scattered by id with `how` ('sum', 'prod', 'amax', 'amin'); ids outside
    [0, num) are dropped; segments no row reaches hold `fill`."""
    tail = tuple(data.shape[ids.dim():])
    flat = ids.reshape(-1).to(torch.int64).to(data.device)
    rows = data.reshape((flat.numel(),) + tail)
    keep = (flat >= 0) & (flat < num)
    flat, rows = flat[keep], rows[keep]
    index = flat.reshape((-1,) + (1,) * len(tail)).expand_as(rows)
    out = torch.full((num,) + tail, fill, dtype=data.dtype, device=data.device)
    out = out.scatter_reduce(0, index, rows, reduce=how, include_self=False)
    counts = torch.zeros(num, dtype=torch.int64, device=data.device).index_add_(0, flat, torch.ones_like(flat))
    return out, counts.reshape((num,) + (1,) * len(tail))


def _num_segments(num_segments: Any, ids: torch.Tensor, op: str) -> int:
    num = int(num_segments.item() if isinstance(num_segments, torch.Tensor) else num_segments)
    if num < 0:
        raise ValueError(f"{op}: num_segments must be >= 0, got {num}.")
    if ids.numel() and int(ids.max()) >= num:
        raise ValueError(f"{op}: segment id {int(ids.max())} is out of range [0, {num}).")
    return num


def _sorted(data: Any, segment_ids: Any, op: str, how: str, fill: float) -> tuple:
    tensor = require(to_tensor(data, op=op), "numeric", op)
    ids = _ids(segment_ids, tensor, op)
    return _reduce(tensor, ids, _sorted_count(ids, op), how, fill)


def _unsorted(data: Any, segment_ids: Any, num_segments: Any, op: str, how: str, fill: Any) -> tuple:
    tensor = require(to_tensor(data, op=op), "numeric", op)
    ids = _ids(segment_ids, tensor, op)
    num = _num_segments(num_segments, ids, op)
    if callable(fill):
        fill = fill(tensor.dtype)
    return _reduce(tensor, ids, num, how, fill)


def _no_complex(tensor: torch.Tensor, op: str) -> None:
    if tensor.is_complex():
        raise TypeError(f"{op} does not take complex tensors (they have no order).")


def segment_max(data: Any, segment_ids: Any, name: Optional[str] = None) -> torch.Tensor:
    """The max of rows sharing a (sorted) segment id; ids with no rows give 0, as TF.

    >>> segment_max([1, 5, 3, 2], [0, 0, 2, 2]).tolist()
    [5, 0, 3]
    """
    out, _ = _sorted(data, segment_ids, "tf.math.segment_max", "amax", 0)
    _no_complex(out, "tf.math.segment_max")
    return out


def segment_min(data: Any, segment_ids: Any, name: Optional[str] = None) -> torch.Tensor:
    """The min of rows sharing a (sorted) segment id; ids with no rows give 0, as TF."""
    out, _ = _sorted(data, segment_ids, "tf.math.segment_min", "amin", 0)
    _no_complex(out, "tf.math.segment_min")
    return out


def segment_prod(data: Any, segment_ids: Any, name: Optional[str] = None) -> torch.Tensor:
    """The product of rows sharing a (sorted) segment id; ids with no rows give 1, as TF."""
    out, _ = _sorted(data, segment_ids, "tf.math.segment_prod", "prod", 1)
    return out


def _mean(total: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    if total.is_floating_point() or total.is_complex():
        return total / counts.clamp(min=1).to(total.dtype)
    return torch.div(total, counts.clamp(min=1).to(total.dtype), rounding_mode="trunc")


def segment_mean(data: Any, segment_ids: Any, name: Optional[str] = None) -> torch.Tensor:
    """The mean of rows sharing a (sorted) segment id; ids with no rows give 0 (ints divide truncating)."""
    total, counts = _sorted(data, segment_ids, "tf.math.segment_mean", "sum", 0)
    return _mean(total, counts)


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None
                         ) -> torch.Tensor:
    """The max of entries by id into `num_segments` rows; empty segments hold the dtype's lowest value
    (the most negative finite float, not -inf), negative ids are dropped, as TF."""
    out, _ = _unsorted(data, segment_ids, num_segments, "tf.math.unsorted_segment_max", "amax",
                       lambda dtype: _extreme(dtype, low=True))
    return out


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None
                         ) -> torch.Tensor:
    """The min of entries by id into `num_segments` rows; empty segments hold the dtype's highest value
    (the largest finite float), negative ids are dropped, as TF."""
    out, _ = _unsorted(data, segment_ids, num_segments, "tf.math.unsorted_segment_min", "amin",
                       lambda dtype: _extreme(dtype, low=False))
    return out


def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None
                          ) -> torch.Tensor:
    """The product of entries by id into `num_segments` rows; empty segments hold 1."""
    out, _ = _unsorted(data, segment_ids, num_segments, "tf.math.unsorted_segment_prod", "prod", 1)
    return out


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None
                          ) -> torch.Tensor:
    """The mean of entries by id into `num_segments` rows; empty segments hold 0."""
    total, counts = _unsorted(data, segment_ids, num_segments, "tf.math.unsorted_segment_mean", "sum", 0)
    return _mean(total, counts)


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None
                            ) -> torch.Tensor:
    """The sum of entries by id divided by sqrt(count) (float inputs only); empty segments hold 0."""
    op = "tf.math.unsorted_segment_sqrt_n"
    require(to_tensor(data, op=op), "float", op)
    total, counts = _unsorted(data, segment_ids, num_segments, op, "sum", 0)
    return total / torch.sqrt(counts.clamp(min=1).to(total.dtype))
