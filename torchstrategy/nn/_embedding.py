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
