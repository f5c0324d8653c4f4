"""Shared argument handling for tf.nn's spatial ops: data formats, per-dimension strides and dilations, and
TF's padding ('SAME', 'VALID' or an explicit list) turned into per-side amounts."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F

_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def channels_last(data_format: Optional[str], n: int, op: str) -> bool:
    """True for TF's channels-last format of rank n (the default), False for channels-first; else ValueError."""
    if data_format is None:
        return True
    last, first = _FORMATS[n]
    if data_format == last or (n == 1 and data_format == "NHWC"):
        return True
    if data_format == first or (n == 1 and data_format == "NCHW"):
        return False
    raise ValueError(f"{op}: data_format must be {last!r} or {first!r} for a {n}-D spatial input, "
                     f"got {data_format!r}.")


def check_rank(x: torch.Tensor, n: int, op: str, what: str = "input") -> None:
    """ValueError unless x has a batch, n spatial and a channel dimension."""
    if x.dim() != n + 2:
        raise ValueError(f"{op}: {what} must have rank {n + 2} (batch, {n} spatial, channels), got shape "
                         f"{tuple(x.shape)}.")


def per_dim(value: Any, n: int, last: bool, op: str, what: str) -> list:
    """An int or a list of n (spatial) or n + 2 (full, batch and channel 1) values as n spatial ints."""
    if value is None:
        return [1] * n
    if isinstance(value, int):
        return [value] * n
    values = [int(v) for v in (value.tolist() if isinstance(value, torch.Tensor) else value)]
    if len(values) == 1:
        return values * n
    if len(values) == n:
        return values
    if len(values) == n + 2:
        outer = (values[0], values[-1]) if last else (values[0], values[1])
        if outer != (1, 1):
            raise ValueError(f"{op}: {what} along the batch and channel dimensions must be 1, got {values}.")
        return values[1:-1] if last else values[2:]
    raise ValueError(f"{op}: {what} must be an int or a list of {n} or {n + 2} ints, got {value!r}.")


def pad_amounts(padding: Any, sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                dilations: Sequence[int], last: bool, op: str) -> list:
    """[(before, after)] per spatial dimension for TF's 'SAME' / 'VALID' / explicit padding."""
    n = len(sizes)
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * n
        if mode == "SAME":
            out = []
            for size, k, s, d in zip(sizes, kernel, strides, dilations):
                want = -(-size // s)
                total = max((want - 1) * s + (k - 1) * d + 1 - size, 0)
                out.append((total // 2, total - total // 2))
            return out
        raise ValueError(f"{op}: padding must be 'SAME', 'VALID' or a list of [before, after] pairs, "
                         f"got {padding!r}.")
    pairs = [[int(v) for v in pair] for pair in padding]
    if len(pairs) != n + 2 or any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"{op}: explicit padding must hold {n + 2} [before, after] pairs (one per dimension), "
                         f"got {padding!r}.")
    outer = (pairs[0], pairs[-1]) if last else (pairs[0], pairs[1])
    if any(v != 0 for pair in outer for v in pair):
        raise ValueError(f"{op}: explicit padding of the batch and channel dimensions must be 0, got {padding!r}.")
    spatial = pairs[1:-1] if last else pairs[2:]
    return [tuple(pair) for pair in spatial]


def to_channels_first(x: torch.Tensor, last: bool) -> torch.Tensor:
    """NC... view of a channels-last tensor (unchanged when already channels-first)."""
    return x.movedim(-1, 1) if last else x


def from_channels_first(x: torch.Tensor, last: bool) -> torch.Tensor:
    """Back to the caller's layout."""
    return x.movedim(1, -1) if last else x


def pad_spatial(x: torch.Tensor, amounts: Sequence[tuple], value: float = 0.0) -> torch.Tensor:
    """Pads the spatial dimensions of an NC... tensor by the per-side amounts."""
    flat = []
    for before, after in reversed(list(amounts)):
        flat += [before, after]
    if not any(flat):
        return x
    return F.pad(x, flat, value=value)


def spatial_sizes(x: torch.Tensor, n: int, last: bool) -> list:
    """The n spatial sizes of a batched tensor in the given layout."""
    return list(x.shape[1:1 + n]) if last else list(x.shape[2:])
