"""tf.math's segment sums and counts: segment_sum (sorted ids), unsorted_segment_sum (ids into num_segments
rows, negative ids dropped) and bincount (optionally weighted, minlength / maxlength, binary_output)."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import torch

from torchstrategy.math._elementwise import _unary
from torchstrategy._tensor_convert import to_tensor
from torchstrategy.dtypes import as_dtype


def _segment_reduce(data: torch.Tensor, ids: torch.Tensor, num_segments: int, op: str) -> torch.Tensor:
    if tuple(ids.shape) != tuple(data.shape[: ids.dim()]):
        raise ValueError(f"{op}: segment_ids of shape {tuple(ids.shape)} must match the leading dims of data, "
                         f"{tuple(data.shape)}.")
    flat_ids = ids.reshape(-1).to(torch.int64)
    rows = data.reshape((flat_ids.numel(),) + tuple(data.shape[ids.dim():]))
    keep = (flat_ids >= 0) & (flat_ids < num_segments)
    out = torch.zeros((num_segments,) + tuple(data.shape[ids.dim():]), dtype=data.dtype, device=data.device)
    flat_ids = flat_ids.to(data.device)
    keep = keep.to(data.device)
    return out.index_add_(0, flat_ids[keep], rows[keep])


def segment_sum(data: Any, segment_ids: Any, name: Optional[str] = None) -> torch.Tensor:
    """Sums rows of `data` sharing a (sorted) segment id; the output has max(id) + 1 rows.

    >>> segment_sum([1, 2, 3, 4], [0, 0, 2, 2]).tolist()
    [3, 0, 7]
    """
    tensor = _unary(data, "numeric", "tf.math.segment_sum")
    ids = to_tensor(segment_ids, op="tf.math.segment_sum")
    if ids.dim() != 1 or ids.is_floating_point():
        raise ValueError("tf.math.segment_sum: segment_ids must be a 1-D integer tensor.")
    if ids.numel() and (bool((ids[1:] < ids[:-1]).any()) or int(ids.min()) < 0):
        raise ValueError("tf.math.segment_sum: segment_ids must be sorted and non-negative; use "
                         "tf.math.unsorted_segment_sum for unsorted ids.")
    count = int(ids.max()) + 1 if ids.numel() else 0
    return _segment_reduce(tensor, ids, count, "tf.math.segment_sum")


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None
                         ) -> torch.Tensor:
    """Sums entries of `data` into `num_segments` rows by id; negative ids are dropped, as in TF."""
    tensor = _unary(data, "numeric", "tf.math.unsorted_segment_sum")
    ids = to_tensor(segment_ids, op="tf.math.unsorted_segment_sum")
    if ids.is_floating_point():
        raise TypeError("tf.math.unsorted_segment_sum: segment_ids must be integers.")
    if ids.numel() and int(ids.max()) >= int(num_segments):
        raise ValueError(f"tf.math.unsorted_segment_sum: segment id {int(ids.max())} is out of range "
                         f"[0, {int(num_segments)}).")
    return _segment_reduce(tensor, ids, int(num_segments), "tf.math.unsorted_segment_sum")


def bincount(arr: Any, weights: Any = None, minlength: Optional[int] = None, maxlength: Optional[int] = None,
             dtype: Any = torch.int32, name: Optional[str] = None, axis: Any = None,
             binary_output: bool = False) -> torch.Tensor:
    """Counts of each value in the non-negative int tensor `arr` (weighted sums with `weights`).
    The length is max(arr) + 1, at least `minlength` and at most `maxlength`; values past it are dropped.

    >>> bincount([1, 1, 3]).tolist()
    [0, 2, 0, 1]
    """
    values = to_tensor(arr, op="tf.math.bincount")
    if values.is_floating_point() or values.dtype == torch.bool:
        raise TypeError(f"tf.math.bincount needs integer values, got {values.dtype}.")
    if axis not in (None, 0):
        raise NotImplementedError("tf.math.bincount: only axis=None (count over all values) is supported.")
    flat = values.reshape(-1).to(torch.int64)
    if flat.numel() and int(flat.min()) < 0:
        raise ValueError("tf.math.bincount: values must be non-negative.")
    length = int(flat.max()) + 1 if flat.numel() else 0
    if minlength is not None:
        length = builtins.max(length, int(minlength))
    if maxlength is not None:
        length = builtins.min(length, int(maxlength))
    keep = flat < length
    if weights is None:
        out_dtype = as_dtype(dtype)
        counts = torch.zeros(length, dtype=torch.int64, device=flat.device).index_add_(0, flat[keep], torch.ones_like(flat[keep]))
        return (counts > 0).to(out_dtype) if binary_output else counts.to(out_dtype)
    w = to_tensor(weights, op="tf.math.bincount").reshape(-1)
    if w.numel() != flat.numel():
        raise ValueError(f"tf.math.bincount: weights need one entry per value ({flat.numel()}), got {w.numel()}.")
    w = w.to(flat.device)
    return torch.zeros(length, dtype=w.dtype, device=flat.device).index_add_(0, flat[keep], w[keep])
