"""`tf.nn.isotonic_regression` on torch tensors: the closest (least-squares) monotone sequence along an axis by
pool-adjacent-violators, with TF's int32 segment ids; gradients flow through the block means."""
from __future__ import annotations

from typing import Any

import torch

from torchstrategy._tensor_convert import to_tensor


def _segments(row: list) -> list:
    """Block ids of the non-increasing least-squares fit of one row (pool adjacent violators)."""
    blocks: list = []  # [sum, count]
    for value in row:
        blocks.append([value, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] <= blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    ids: list = []
    for index, (_, count) in enumerate(blocks):
        ids += [index] * count
    return ids


def isotonic_regression(inputs: Any, decreasing: bool = True, axis: int = -1) -> tuple:
    """(fitted values, int32 segment ids) of the monotone (non-increasing when `decreasing`) least-squares
    fit along `axis`."""
    x = to_tensor(inputs, op="tf.nn.isotonic_regression")
    if not x.is_floating_point():
        x = x.to(torch.float32)
    if x.dim() == 0:
        raise ValueError("tf.nn.isotonic_regression: inputs must have rank at least 1.")
    moved = x.movedim(axis, -1)
    if moved.shape[-1] == 0 or moved.numel() == 0:
        return x, torch.zeros(x.shape, dtype=torch.int32, device=x.device)
    rows = moved.reshape(-1, moved.shape[-1])
    signed = rows if decreasing else -rows
    ids = torch.tensor([_segments(r) for r in signed.detach().double().tolist()], dtype=torch.int64,
                       device=x.device).reshape(rows.shape)
    sums = torch.zeros_like(rows).scatter_add(1, ids, rows)
    counts = torch.zeros_like(rows).scatter_add(1, ids, torch.ones_like(rows))
    fitted = (sums / counts.clamp(min=1)).gather(1, ids)
    shape = moved.shape
    return fitted.reshape(shape).movedim(-1, axis), ids.reshape(shape).movedim(-1, axis).to(torch.int32)
