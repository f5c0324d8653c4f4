"""`tf.edit_distance`: Levenshtein distances between the sequences (last axis) of two SparseTensors, per position of
their leading axes, optionally divided by the truth's length, as TF computes them."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy.sparse_tensor import SparseTensor, as_sparse


def _groups(sparse: SparseTensor) -> dict:
    """Leading index tuple -> its sequence (values ordered by the last index)."""
    indices = sparse.indices.tolist()
    values = sparse.values.tolist() if isinstance(sparse.values, torch.Tensor) else list(np.asarray(sparse.values))
    out: dict = {}
    for index, value in sorted(zip(indices, values), key=lambda pair: pair[0]):
        out.setdefault(tuple(index[:-1]), []).append(value)
    return out


def _levenshtein(a: list, b: list) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def edit_distance(hypothesis: Any, truth: Any, normalize: bool = True, name: str = "edit_distance") -> torch.Tensor:
    """float32 distances shaped like the leading axes of the inputs (the larger of their dense shapes); with
    `normalize` each is divided by the truth's length (inf where only the hypothesis has a sequence); positions
    neither input mentions are 0."""
    op = "tf.edit_distance"
    hyp, tru = as_sparse(hypothesis, op), as_sparse(truth, op)
    if hyp.indices.shape[1] != tru.indices.shape[1]:
        raise ValueError(f"{op}: hypothesis and truth must have the same rank, got {hyp.indices.shape[1]} and "
                         f"{tru.indices.shape[1]}.")
    if hyp.indices.shape[1] < 1:
        raise ValueError(f"{op}: the inputs need rank >= 1 (sequences along the last axis).")
    shape = [max(a, b) for a, b in zip(hyp.dense_shape.tolist()[:-1], tru.dense_shape.tolist()[:-1])]
    out = torch.zeros(shape, dtype=torch.float32)
    hyp_groups, tru_groups = _groups(hyp), _groups(tru)
    for where in set(hyp_groups) | set(tru_groups):
        a, b = hyp_groups.get(where, []), tru_groups.get(where, [])
        distance = float(_levenshtein(a, b))
        out[where] = (distance / len(b) if b else float("inf")) if normalize else distance
    return out
