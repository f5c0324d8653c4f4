"""tf.sparse's arithmetic: add (sparse + sparse or dense), maximum/minimum, reduce_sum/reduce_max, softmax,
sparse_dense_matmul, the sparse segment reductions, bincount, sampled_addmm and cross (string feature crosses)."""
from __future__ import annotations

import itertools
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._machinery.farmhash import fingerprint64
from torchstrategy._tensor_convert import match_dtypes, to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.sparse_ops import coordinates_of, from_dense, linear_positions, reorder, to_dense
from torchstrategy.sparse_tensor import SparseTensor, as_sparse, is_string_values, make, string_values

__all__ = ["add", "maximum", "minimum", "reduce_sum", "reduce_max", "softmax", "sparse_dense_matmul", "segment_sum",
           "segment_mean", "segment_sqrt_n", "bincount", "sampled_addmm", "cross", "cross_hashed"]


def _numeric(sp: SparseTensor, op: str) -> torch.Tensor:
    if is_string_values(sp.values):
        raise TypeError(f"{op} takes numeric SparseTensors, got strings.")
    return sp.values


def _same_shape(a: SparseTensor, b: SparseTensor, op: str) -> None:
    for d, (x, y) in enumerate(zip(a.shape, b.shape)):
        if x != y:
            raise InvalidArgumentError(None, None, f"{op}: operands' shapes do not match: got {x} and {y} for dimension {d}.")
    if len(a.shape) != len(b.shape):
        raise InvalidArgumentError(None, None, f"{op}: operands' ranks differ ({len(a.shape)} and {len(b.shape)}).")


def _union(a: SparseTensor, b: SparseTensor, op: str) -> tuple:
    """(sorted union of positions, a's values there or None, b's values there or None, present-in-a, present-in-b)."""
    _same_shape(a, b, op)
    va, vb = match_dtypes([_numeric(a, op), _numeric(b, op)], op)
    shape = list(a.shape)
    la, lb = linear_positions(a.indices, shape), linear_positions(b.indices, shape)
    positions = torch.unique(torch.cat([la, lb]))
    in_a = torch.zeros(positions.numel(), dtype=torch.bool)
    in_b = torch.zeros(positions.numel(), dtype=torch.bool)
    full_a = torch.zeros(positions.numel(), dtype=va.dtype)
    full_b = torch.zeros(positions.numel(), dtype=vb.dtype)
    where_a, where_b = torch.searchsorted(positions, la), torch.searchsorted(positions, lb)
    in_a[where_a], in_b[where_b] = True, True
    full_a.index_add_(0, where_a, va)
    full_b.index_add_(0, where_b, vb)
    return positions, full_a, full_b, in_a, in_b, shape


def _positions_to_sparse(positions: torch.Tensor, values: torch.Tensor, shape: list) -> SparseTensor:
    return make(coordinates_of(positions, shape), values, shape)


def add(a: Any, b: Any, threshold: Any = 0) -> Any:
    """a + b: a SparseTensor for two SparseTensors (a summed entry whose magnitude is below `threshold` is
    dropped), a dense tensor when one side is dense."""
    if not isinstance(a, SparseTensor) or not isinstance(b, SparseTensor):
        sparse, dense = (a, b) if isinstance(a, SparseTensor) else (b, a)
        sp = as_sparse(sparse, "tf.sparse.add")
        values, other = match_dtypes([_numeric(sp, "tf.sparse.add"), dense], "tf.sparse.add")
        return other + to_dense(sp, validate_indices=False).to(other.dtype)
    positions, va, vb, in_a, in_b, shape = _union(a, b, "tf.sparse.add")
    total = va + vb
    keep = ~(in_a & in_b) | (torch.abs(total) >= threshold)
    return _positions_to_sparse(positions[keep], total[keep], shape)


def maximum(sp_a: Any, sp_b: Any, name: Optional[str] = None) -> SparseTensor:
    """The elementwise maximum of two SparseTensors of one shape (a missing entry counts as 0)."""
    positions, va, vb, _, _, shape = _union(as_sparse(sp_a, "tf.sparse.maximum"), as_sparse(sp_b, "tf.sparse.maximum"),
                                            "tf.sparse.maximum")
    return _positions_to_sparse(positions, torch.maximum(va, vb), shape)


def minimum(sp_a: Any, sp_b: Any, name: Optional[str] = None) -> SparseTensor:
    """The elementwise minimum of two SparseTensors of one shape (a missing entry counts as 0)."""
    positions, va, vb, _, _, shape = _union(as_sparse(sp_a, "tf.sparse.minimum"), as_sparse(sp_b, "tf.sparse.minimum"),
                                            "tf.sparse.minimum")
    return _positions_to_sparse(positions, torch.minimum(va, vb), shape)


def _reduce(sp_input: Any, axis: Any, keepdims: Any, output_is_sparse: bool, mode: str, op: str) -> Any:
    sp = as_sparse(sp_input, op)
    values = _numeric(sp, op)
    shape = list(sp.shape)
    rank = len(shape)
    axes = sorted({int(a) % rank for a in (range(rank) if axis is None else
                                          (axis if isinstance(axis, (list, tuple)) else [axis]))})
    kept = [d for d in range(rank) if d not in axes]
    out_shape = [1 if d in axes else shape[d] for d in range(rank)] if keepdims else [shape[d] for d in kept]
    groups = linear_positions(sp.indices[:, kept], [shape[d] for d in kept]) if kept else \
        torch.zeros(sp.indices.shape[0], dtype=torch.int64)
    count = int(np.prod([shape[d] for d in kept])) if kept else 1
    if mode == "sum":
        flat = torch.zeros(count, dtype=values.dtype).index_add(0, groups, values)
    else:
        lowest = torch.finfo(values.dtype).min if values.is_floating_point() else torch.iinfo(values.dtype).min
        flat = torch.full((count,), lowest, dtype=values.dtype).scatter_reduce(0, groups, values, "amax")
    present = torch.zeros(count, dtype=torch.bool)
    present[groups] = True
    flat = torch.where(present, flat, torch.zeros_like(flat))
    if output_is_sparse:
        where = present.nonzero().reshape(-1)
        coordinates = coordinates_of(where, [shape[d] for d in kept])
        if keepdims:
            full = torch.zeros((where.numel(), rank), dtype=torch.int64)
            full[:, kept] = coordinates
            coordinates = full
        return make(coordinates, flat[where], out_shape)
    return flat.reshape(out_shape)


def reduce_sum(sp_input: Any, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False,
               name: Optional[str] = None) -> Any:
    """The sum of the entries over `axis` (all when None): a dense tensor, or a SparseTensor of the non-empty
    groups with output_is_sparse."""
    return _reduce(sp_input, axis, keepdims, output_is_sparse, "sum", "tf.sparse.reduce_sum")


def reduce_max(sp_input: Any, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False,
               name: Optional[str] = None) -> Any:
    """The maximum of the entries present over `axis` (the implicit zeros do not count; a group with no entry
    gives 0, as TF)."""
    return _reduce(sp_input, axis, keepdims, output_is_sparse, "max", "tf.sparse.reduce_max")


def softmax(sp_input: Any, name: Optional[str] = None) -> SparseTensor:
    """Softmax over the entries of each innermost row (missing entries take no part); rank >= 2."""
    sp = reorder(as_sparse(sp_input, "tf.sparse.softmax"))
    if len(sp.shape) < 2:
        raise InvalidArgumentError(None, None, f"tf.sparse.softmax: input should have rank >= 2, got shape {list(sp.shape)}.")
    values = _numeric(sp, "tf.sparse.softmax")
    rows = linear_positions(sp.indices[:, :-1], list(sp.shape)[:-1])
    count = int(np.prod(list(sp.shape)[:-1]))
    peak = torch.full((count,), float("-inf"), dtype=values.dtype).scatter_reduce(0, rows, values, "amax")
    exps = torch.exp(values - peak[rows])
    totals = torch.zeros(count, dtype=values.dtype).index_add(0, rows, exps)
    return make(sp.indices, exps / totals[rows], sp.dense_shape)


def sparse_dense_matmul(sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: Optional[str] = None) -> torch.Tensor:
    """sp_a @ b for a rank-2 SparseTensor and a dense matrix of one dtype (or a dense a and a sparse b)."""
    if not isinstance(sp_a, SparseTensor) and isinstance(b, SparseTensor):
        return _dense_sparse(to_tensor(sp_a, op="tf.sparse.sparse_dense_matmul"), b, adjoint_a, adjoint_b)
    sp = as_sparse(sp_a, "tf.sparse.sparse_dense_matmul")
    values, dense = match_dtypes([_numeric(sp, "tf.sparse.sparse_dense_matmul"), b], "tf.sparse.sparse_dense_matmul")
    if len(sp.shape) != 2:
        raise ValueError("tf.sparse.sparse_dense_matmul needs a rank-2 SparseTensor.")
    matrix = torch.zeros(tuple(sp.shape), dtype=values.dtype, device=dense.device)
    if values.numel():
        matrix.index_put_(tuple(sp.indices.t().to(dense.device)), values.to(dense.device), accumulate=True)
    if adjoint_a:
        matrix = matrix.t().conj()
    if adjoint_b:
        dense = dense.t().conj()
    return matrix @ dense


def _dense_sparse(a: torch.Tensor, sp: SparseTensor, adjoint_a: bool, adjoint_b: bool) -> torch.Tensor:
    values, dense = match_dtypes([_numeric(sp, "tf.sparse.sparse_dense_matmul"), a], "tf.sparse.sparse_dense_matmul")
    matrix = torch.zeros(tuple(sp.shape), dtype=values.dtype, device=dense.device)
    if values.numel():
        matrix.index_put_(tuple(sp.indices.t().to(dense.device)), values.to(dense.device), accumulate=True)
    left = dense.t().conj() if adjoint_a else dense
    right = matrix.t().conj() if adjoint_b else matrix
    return left @ right


def _segments(data: Any, indices: Any, segment_ids: Any, num_segments: Any, op: str) -> tuple:
    rows = to_tensor(data, op=op)
    index = to_tensor(indices, op=op).to(torch.int64)
    segments = to_tensor(segment_ids, op=op).to(torch.int64)
    if index.shape != segments.shape or index.dim() != 1:
        raise InvalidArgumentError(None, None, f"{op}: indices and segment_ids must be 1-D of one length, got "
                                   f"{list(index.shape)} and {list(segments.shape)}.")
    if index.numel() and bool(((index < 0) | (index >= rows.shape[0])).any()):
        raise InvalidArgumentError(None, None, f"{op}: indices must be in [0, {rows.shape[0]}).")
    if segments.numel() > 1 and bool((segments[1:] < segments[:-1]).any()):
        raise InvalidArgumentError(None, None, f"{op}: segment_ids must be sorted (non-decreasing).")
    count = int(num_segments) if num_segments is not None else (int(segments.max()) + 1 if segments.numel() else 0)
    picked = rows[index]
    total = torch.zeros((count,) + tuple(rows.shape[1:]), dtype=rows.dtype).index_add(0, segments, picked)
    sizes = torch.zeros(count, dtype=rows.dtype).index_add(0, segments, torch.ones(segments.numel(), dtype=rows.dtype))
    return total, sizes.reshape((count,) + (1,) * (rows.dim() - 1))


def segment_sum(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: Optional[str] = None,
                sparse_gradient: bool = False) -> torch.Tensor:
    """Per segment, the sum of data's rows picked by `indices` (segment_ids sorted)."""
    return _segments(data, indices, segment_ids, num_segments, "tf.sparse.segment_sum")[0]


def segment_mean(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: Optional[str] = None,
                 sparse_gradient: bool = False) -> torch.Tensor:
    """Per segment, the mean of data's rows picked by `indices` (0 for an empty segment)."""
    total, sizes = _segments(data, indices, segment_ids, num_segments, "tf.sparse.segment_mean")
    return total / torch.clamp(sizes, min=1)


def segment_sqrt_n(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: Optional[str] = None,
                   sparse_gradient: bool = False) -> torch.Tensor:
    """Per segment, the sum of data's rows picked by `indices` divided by sqrt(rows in the segment)."""
    total, sizes = _segments(data, indices, segment_ids, num_segments, "tf.sparse.segment_sqrt_n")
    return total / torch.sqrt(torch.clamp(sizes, min=1))


def bincount(values: Any, weights: Any = None, axis: Any = 0, minlength: Any = None, maxlength: Any = None,
             binary_output: bool = False, name: Optional[str] = None) -> SparseTensor:
    """How often each non-negative integer occurs (summing `weights` instead when given), as a SparseTensor of
    the non-zero bins: over all values (axis=0) or per row of a 2-D input (axis=-1)."""
    if isinstance(values, SparseTensor):
        ids, rows = _numeric(values, "tf.sparse.bincount"), values.indices[:, 0] if len(values.shape) > 1 else None
        batch = list(values.shape)[0] if len(values.shape) > 1 else 1
    else:
        dense = to_tensor(values, op="tf.sparse.bincount")
        ids = dense.reshape(-1)
        batch = dense.shape[0] if dense.dim() > 1 else 1
        rows = torch.arange(batch).repeat_interleave(dense.shape[-1]) if dense.dim() > 1 else None
    if ids.is_floating_point() or ids.dtype == torch.bool:
        raise TypeError(f"tf.sparse.bincount counts integers, got {ids.dtype}.")
    if ids.numel() and bool((ids < 0).any()):
        raise InvalidArgumentError(None, None, "tf.sparse.bincount: input values must all be non-negative.")
    ids = ids.to(torch.int64)
    size = max(int(ids.max()) + 1 if ids.numel() else 0, int(minlength or 0))
    if maxlength is not None:
        size = min(size, int(maxlength))
    weight = None if weights is None else to_tensor(weights, op="tf.sparse.bincount").reshape(-1)
    keep = ids < size
    out_dtype = weight.dtype if weight is not None else to_tensor(values.values if isinstance(values, SparseTensor)
                                                                  else values, op="tf.sparse.bincount").dtype
    per_row = axis in (-1, 1) and rows is not None
    groups = (rows * size + ids) if per_row else ids
    count = (batch * size) if per_row else size
    bins = torch.zeros(count, dtype=out_dtype)
    contribution = weight[keep] if weight is not None else torch.ones(int(keep.sum()), dtype=out_dtype)
    bins.index_add_(0, groups[keep], contribution.to(out_dtype))
    if binary_output:
        bins = (bins != 0).to(out_dtype)
    shape = [batch, size] if per_row else [size]
    dense_bins = bins.reshape(shape)
    return from_dense(dense_bins)


def sampled_addmm(indices: Any, values: Any, dense_shape: Any, mat1: Any, mat2: Any, beta: float = 1.0,
                  alpha: float = 1.0, output_type: Any = torch.float32) -> tuple:
    """(indices, beta * values + alpha * (mat1 @ mat2) at indices, dense_shape): the product sampled at the
    sparse positions."""
    index = to_tensor(indices, op="tf.sparse.sampled_addmm")
    product = to_tensor(mat1, op="tf.sparse.sampled_addmm") @ to_tensor(mat2, op="tf.sparse.sampled_addmm")
    picked = product[tuple(index.to(torch.int64).reshape(-1, index.shape[-1]).t())].reshape(index.shape[:-1])
    out = beta * to_tensor(values, op="tf.sparse.sampled_addmm") + alpha * picked
    return index, out.to(as_dtype(output_type)), to_tensor(dense_shape, op="tf.sparse.sampled_addmm")


def _feature_rows(feature: Any, op: str) -> list:
    """The values of each row of a cross input (a SparseTensor or a dense 2-D tensor): bytes, or Python ints."""
    if isinstance(feature, SparseTensor):
        rows = [[] for _ in range(list(feature.shape)[0])]
        values = feature.values if is_string_values(feature.values) else feature.values.tolist()
        for (row, *_), value in zip(feature.indices.tolist(), values):
            rows[row].append(value)
        return rows
    array = np.asarray(feature if not isinstance(feature, torch.Tensor) else feature.cpu().numpy())
    if array.ndim != 2:
        raise ValueError(f"{op}: dense inputs must be 2-D [batch, n], got shape {list(array.shape)}.")
    return [[v.encode() if isinstance(v, str) else v for v in row] for row in array.tolist()]


def _columns(inputs: Any, op: str) -> list:
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"{op} takes a list of SparseTensors and dense 2-D tensors.")
    # non-string features are cast to int64 first, as TF does (1.5 crosses as 1)
    columns = [[[v if isinstance(v, bytes) else int(v) for v in row] for row in _feature_rows(feature, op)]
               for feature in inputs]
    if len({len(c) for c in columns}) != 1:
        raise InvalidArgumentError(None, None, f"{op}: the inputs have different batch sizes {sorted({len(c) for c in columns})}.")
    return columns


def _crossed(columns: list, combine: Any) -> tuple:
    indices, values, width = [], [], 0
    for row in range(len(columns[0])):
        crossed = [combine(parts) for parts in itertools.product(*[c[row] for c in columns])]
        indices.extend([row, i] for i in range(len(crossed)))
        values.extend(crossed)
        width = max(width, len(crossed))
    return torch.tensor(indices, dtype=torch.int64).reshape(-1, 2), values, [len(columns[0]), width]


def cross(inputs: Any, name: Optional[str] = None, separator: Optional[str] = None) -> SparseTensor:
    """The feature crosses of each row: every combination of one value per input, joined by `separator`
    ('_X_'), the last input varying fastest; a SparseTensor of strings [batch, crosses]."""
    joiner = (separator if separator is not None else "_X_").encode()
    index, values, shape = _crossed(_columns(inputs, "tf.sparse.cross"), lambda parts: joiner.join(
        p if isinstance(p, bytes) else str(p).encode() for p in parts))
    return make(index, string_values(values) if values else np.empty(0, dtype=object), shape)


_DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's seed for sparse crosses
_MASK = (1 << 64) - 1
_MUL = 0xC6A4A7935BD1E995


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _fingerprint_cat64(first: int, second: int) -> int:
    """TF's FingerprintCat64: two 64-bit fingerprints combined into one."""
    result = first ^ _MUL
    result ^= (_shift_mix((second * _MUL) & _MASK) * _MUL) & _MASK
    result = (result * _MUL) & _MASK
    result = (_shift_mix(result) * _MUL) & _MASK
    return _shift_mix(result)


def cross_hashed(inputs: Any, num_buckets: int = 0, hash_key: Optional[int] = None,
                 name: Optional[str] = None) -> SparseTensor:
    """The feature crosses of each row hashed to int64 as TF does: the features' fingerprints (FarmHash
    Fingerprint64 of a string, an integer as itself) chained with FingerprintCat64 from `hash_key`, then
    mod `num_buckets` (mod 2**63 - 1 when 0)."""
    if int(num_buckets) < 0:
        raise ValueError(f"tf.sparse.cross_hashed: num_buckets must be >= 0, got {num_buckets}.")
    modulus = int(num_buckets) if int(num_buckets) > 0 else (1 << 63) - 1

    def combine(parts: tuple) -> int:
        out = _DEFAULT_HASH_KEY if hash_key is None else int(hash_key) & _MASK
        for part in parts:
            feature = fingerprint64(part) if isinstance(part, bytes) else int(part) & _MASK
            out = _fingerprint_cat64(out, feature)
        return out % modulus

    index, values, shape = _crossed(_columns(inputs, "tf.sparse.cross_hashed"), combine)
    return make(index, torch.tensor(values, dtype=torch.int64), shape)
