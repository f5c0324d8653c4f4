"""`tf.nn.fractional_max_pool` / `fractional_avg_pool` on NHWC torch tensors: random pooling regions whose sizes
are floor(ratio) or ceil(ratio) (TF's random or pseudo-random sequences), returned with the row/column sequences."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor


def _ratios(pooling_ratio: Any, op: str) -> tuple:
    values = [float(pooling_ratio)] if isinstance(pooling_ratio, (int, float)) else [float(r) for r in pooling_ratio]
    if len(values) == 1:
        values = [1.0, values[0], values[0], 1.0]
    elif len(values) == 2:
        values = [1.0, values[0], values[1], 1.0]
    if len(values) != 4 or values[0] != 1.0 or values[3] != 1.0:
        raise ValueError(f"{op}: pooling_ratio must be a number, 2 numbers (rows, cols) or 4 with batch and channel "
                         f"ratios 1.0, got {pooling_ratio!r}.")
    if values[1] < 1.0 or values[2] < 1.0:
        raise ValueError(f"{op}: pooling ratios must be >= 1.0, got {pooling_ratio!r}.")
    return values[1], values[2]


def _sequence(length: int, out: int, pseudo_random: bool, gen: Optional[torch.Generator]) -> list:
    """Cumulative region starts [0, ..., length] of `out` regions of size length // out or one more."""
    k = length // out
    if pseudo_random:
        alpha = length / out
        u_max = min((k + 2) / alpha - 1, (length + 1 - k) / alpha - (out - 1))
        u = float(torch.rand((), generator=gen, dtype=torch.float64)) * u_max
        points = [1] + [int(math.ceil(alpha * (i + u))) for i in range(1, out)] + [length + 1]
        diff = [points[i + 1] - points[i] for i in range(out)]
    else:
        diff = [k + 1 if i < length % out else k for i in range(out)]
        order = torch.randperm(out, generator=gen).tolist()
        diff = [diff[i] for i in order]
    starts = [0]
    for step in diff:
        starts.append(starts[-1] + step)
    return starts


def _fractional(value: Any, pooling_ratio: Any, pseudo_random: bool, overlapping: bool, seed: int, kind: str,
                op: str) -> tuple:
    x = to_tensor(value, op=op)
    if x.dim() != 4:
        raise ValueError(f"{op}: value must be 4-D [batch, height, width, channels], got shape {tuple(x.shape)}.")
    row_ratio, col_ratio = _ratios(pooling_ratio, op)
    height, width = int(x.shape[1]), int(x.shape[2])
    out_h, out_w = int(math.floor(height / row_ratio)), int(math.floor(width / col_ratio))
    if out_h < 1 or out_w < 1:
        raise ValueError(f"{op}: pooling_ratio {pooling_ratio!r} leaves no output for input {height}x{width}; "
                         "use a smaller ratio.")
    gen = None if int(seed) == 0 else torch.Generator().manual_seed(int(seed) % (2**63))
    rows = _sequence(height, out_h, pseudo_random, gen)
    cols = _sequence(width, out_w, pseudo_random, gen)
    extra = 1 if overlapping else 0
    out = torch.empty((x.shape[0], out_h, out_w, x.shape[3]), dtype=x.dtype, device=x.device)
    for i in range(out_h):
        r0, r1 = rows[i], min(rows[i + 1] + extra, height)
        for j in range(out_w):
            c0, c1 = cols[j], min(cols[j + 1] + extra, width)
            patch = x[:, r0:r1, c0:c1, :]
            if kind == "MAX":
                out[:, i, j, :] = patch.amax(dim=(1, 2))
            else:
                out[:, i, j, :] = patch.mean(dim=(1, 2)) if x.is_floating_point() else torch.div(
                    patch.sum(dim=(1, 2)), (r1 - r0) * (c1 - c0), rounding_mode="trunc")
    as_seq = (lambda s: torch.tensor(s, dtype=torch.int64, device=x.device))
    return out, as_seq(rows), as_seq(cols)


def fractional_max_pool(value: Any, pooling_ratio: Any, pseudo_random: bool = False, overlapping: bool = False,
                        seed: int = 0, name: Optional[str] = None) -> tuple:
    """(output, row_pooling_sequence, col_pooling_sequence): the max of each random region of an NHWC `value`;
    output rows/cols are floor(size / ratio). seed=0 draws fresh regions; another seed fixes them. With
    `overlapping` each region also takes the next region's first row and column."""
    return _fractional(value, pooling_ratio, pseudo_random, overlapping, seed, "MAX", "tf.nn.fractional_max_pool")


def fractional_avg_pool(value: Any, pooling_ratio: Any, pseudo_random: bool = False, overlapping: bool = False,
                        seed: int = 0, name: Optional[str] = None) -> tuple:
    """As `fractional_max_pool`, with the mean of each region."""
    return _fractional(value, pooling_ratio, pseudo_random, overlapping, seed, "AVG", "tf.nn.fractional_avg_pool")
