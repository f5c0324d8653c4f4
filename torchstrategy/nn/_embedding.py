"""`tf.nn.embedding_lookup` on torch tensors: rows of one params tensor or of a list of shards split TF 2's
'div' way (contiguous id ranges, the first shards one row longer), with max_norm clipping."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor


def _params(params: Any, op: str) -> torch.Tensor:
    if isinstance(params, (list, tuple)) and params and not isinstance(params[0], (int, float)):
        shards = [to_tensor(p, op=op) for p in params]
        if len(shards) == 1:
            return shards[0]
        total = sum(s.shape[0] for s in shards)
        base, extra = divmod(total, len(shards))
        expect = [base + 1 if i < extra else base for i in range(len(shards))]
        got = [s.shape[0] for s in shards]
        if got != expect:
            raise ValueError(f"{op}: {len(shards)} shards of {total} ids must hold {expect} rows each (TF's "
                             f"'div' split), got {got}.")
        return torch.cat(shards, dim=0)
    return to_tensor(params, op=op)


def embedding_lookup(params: Any, ids: Any, max_norm: Optional[float] = None,
                     name: Optional[str] = None) -> torch.Tensor:
    """params[ids] (shape ids.shape + params.shape[1:]); rows whose L2 norm exceeds max_norm are scaled to it."""
    op = "tf.nn.embedding_lookup"
    table = _params(params, op)
    index = to_tensor(ids, op=op)
    if index.is_floating_point() or index.dtype == torch.bool:
        raise TypeError(f"{op}: ids must be integers, got {index.dtype}.")
    index = index.long()
    if index.numel() and (index.min() < 0 or index.max() >= table.shape[0]):
        raise ValueError(f"{op}: ids must lie in [0, {table.shape[0]}), got values from {int(index.min())} to "
                         f"{int(index.max())}.")
    rows = table[index]
    if max_norm is not None:
        dims = list(range(index.dim(), rows.dim()))
        norm = rows.square().sum(dim=dims, keepdim=True).sqrt() if dims else rows.abs()
        rows = rows * (max_norm / torch.maximum(norm, torch.as_tensor(max_norm, dtype=rows.dtype)))
    return rows


def _sparse_parts(sp: Any, op: str, what: str) -> tuple:
    if type(sp).__name__ not in ("SparseTensor", "SparseTensorValue"):
        raise TypeError(f"{op}: {what} must be a tf.SparseTensor, got {type(sp).__name__}.")
    return sp.indices, to_tensor(sp.values, op=op), sp.dense_shape


def _combine(table: torch.Tensor, ids: torch.Tensor, rows: torch.Tensor, weights: Optional[torch.Tensor],
             combiner: str, count: int, max_norm: Optional[float], op: str) -> torch.Tensor:
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"{op}: combiner must be 'mean', 'sqrtn' or 'sum', got {combiner!r}.")
    emb = embedding_lookup(table, ids, max_norm=max_norm)
    w = torch.ones(ids.shape[0], dtype=emb.dtype, device=emb.device) if weights is None else weights.to(emb.dtype)
    out = torch.zeros((count, *emb.shape[1:]), dtype=emb.dtype, device=emb.device)
    out = out.index_add(0, rows, emb * w.reshape(-1, *([1] * (emb.dim() - 1))))
    if combiner == "sum":
        return out
    norm = w if combiner == "mean" else w.square()
    total = torch.zeros(count, dtype=emb.dtype, device=emb.device).index_add(0, rows, norm)
    total = total if combiner == "mean" else total.sqrt()
    total = torch.where(total == 0, torch.ones_like(total), total)
    return out / total.reshape(-1, *([1] * (emb.dim() - 1)))


def embedding_lookup_sparse(params: Any, sp_ids: Any, sp_weights: Any, combiner: Optional[str] = None,
                            max_norm: Optional[float] = None, name: Optional[str] = None,
                            allow_fast_lookup: bool = False) -> torch.Tensor:
    """Per row of the SparseTensor sp_ids, the embeddings of its ids combined ('mean' by default, 'sqrtn' or
    'sum'), weighted by sp_weights' values when given; one output row per row up to the last non-empty one."""
    op = "tf.nn.embedding_lookup_sparse"
    table = _params(params, op)
    indices, ids, _ = _sparse_parts(sp_ids, op, "sp_ids")
    weights = None
    if sp_weights is not None:
        weights = _sparse_parts(sp_weights, op, "sp_weights")[1]
        if weights.shape != ids.shape:
            raise ValueError(f"{op}: sp_weights must have the same entries as sp_ids.")
    rows = indices[:, 0].long()
    count = int(rows.max()) + 1 if rows.numel() else 0
    return _combine(table, ids.long(), rows, weights, combiner or "mean", count, max_norm, op)


def safe_embedding_lookup_sparse(embedding_weights: Any, sparse_ids: Any, sparse_weights: Any = None,
                                 combiner: str = "mean", default_id: Optional[int] = None,
                                 max_norm: Optional[float] = None, name: Optional[str] = None,
                                 allow_fast_lookup: bool = False) -> torch.Tensor:
    """embedding_lookup_sparse that drops negative ids (and non-positive weights) and returns one row per
    dense row: empty rows get default_id's embedding, or zeros without one."""
    op = "tf.nn.safe_embedding_lookup_sparse"
    table = _params(embedding_weights, op)
    indices, ids, dense_shape = _sparse_parts(sparse_ids, op, "sparse_ids")
    keep = ids >= 0
    weights = None
    if sparse_weights is not None:
        weights = _sparse_parts(sparse_weights, op, "sparse_weights")[1]
        keep = keep & (weights > 0)
        weights = weights[keep]
    rows = indices[:, 0].long()[keep]
    count = int(dense_shape[0])
    out = _combine(table, ids[keep].long(), rows, weights, combiner, count, max_norm, op)
    if default_id is not None:
        empty = torch.ones(count, dtype=torch.bool, device=out.device)
        empty[rows] = False
        fill = embedding_lookup(table, [int(default_id)], max_norm=max_norm)[0]
        out = torch.where(empty.reshape(-1, *([1] * (out.dim() - 1))), fill, out)
    return out
