"""`tf.nn` block rearrangements on torch tensors (space_to_depth, depth_to_space, space_to_batch, in TF's block
order) and with_space_to_batch, which runs an op dilated through space_to_batch."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch
import torch.nn.functional as F

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.slicing_ops import batch_to_space, required_space_to_batch_paddings, space_to_batch_nd


def _nhwc(x: torch.Tensor, data_format: str, op: str) -> bool:
    if x.dim() != 4:
        raise ValueError(f"{op}: input must have rank 4, got shape {tuple(x.shape)}.")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{op}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}.")
    return data_format == "NHWC"


def _block(block_size: Any, op: str) -> int:
    size = int(block_size)
    if size < 2:
        raise ValueError(f"{op}: block_size must be at least 2, got {block_size}.")
    return size


def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC",  # noqa: A002
                   name: Optional[str] = None) -> torch.Tensor:
    """Moves block_size x block_size spatial blocks into depth: [b, h, w, c] -> [b, h/bs, w/bs, bs*bs*c]."""
    op = "tf.nn.space_to_depth"
    x = to_tensor(input, op=op)
    last = _nhwc(x, data_format, op)
    bs = _block(block_size, op)
    x = x if last else x.permute(0, 2, 3, 1)
    b, h, w, c = x.shape
    if h % bs or w % bs:
        raise ValueError(f"{op}: height {h} and width {w} must be multiples of block_size {bs}.")
    out = x.reshape(b, h // bs, bs, w // bs, bs, c).permute(0, 1, 3, 2, 4, 5).reshape(b, h // bs, w // bs, -1)
    return out if last else out.permute(0, 3, 1, 2)


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC",  # noqa: A002
                   name: Optional[str] = None) -> torch.Tensor:
    """Inverse of space_to_depth: [b, h, w, bs*bs*c] -> [b, h*bs, w*bs, c]."""
    op = "tf.nn.depth_to_space"
    x = to_tensor(input, op=op)
    last = _nhwc(x, data_format, op)
    bs = _block(block_size, op)
    x = x if last else x.permute(0, 2, 3, 1)
    b, h, w, c = x.shape
    if c % (bs * bs):
        raise ValueError(f"{op}: depth {c} must be a multiple of block_size squared ({bs * bs}).")
    out = x.reshape(b, h, w, bs, bs, c // (bs * bs)).permute(0, 1, 3, 2, 4, 5).reshape(b, h * bs, w * bs, -1)
    return out if last else out.permute(0, 3, 1, 2)


def space_to_batch(input: Any, block_shape: Any, paddings: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Zero-pads the M spatial dimensions after the batch, then moves blocks of `block_shape` into the batch
    (TF's space_to_batch_nd: output batch index = block offset * batch + input batch)."""
    op = "tf.nn.space_to_batch"
    x = to_tensor(input, op=op)
    blocks = [int(v) for v in (block_shape.tolist() if isinstance(block_shape, torch.Tensor) else block_shape)]
    pads = [[int(v) for v in pair] for pair in (paddings.tolist() if isinstance(paddings, torch.Tensor)
                                                else paddings)]
    m = len(blocks)
    if len(pads) != m or any(len(pair) != 2 for pair in pads) or x.dim() < m + 1:
        raise ValueError(f"{op}: block_shape {blocks} needs paddings of {m} [before, after] pairs and an input "
                         f"of rank at least {m + 1}; got paddings {pads} and shape {tuple(x.shape)}.")
    if any(b < 1 for b in blocks) or any(v < 0 for pair in pads for v in pair):
        raise ValueError(f"{op}: block_shape must be positive and paddings non-negative.")
    flat = []
    for pair in reversed(pads):
        flat += pair
    rest = x.dim() - 1 - m
    padded = F.pad(x, [0, 0] * rest + flat) if any(flat) else x
    sizes = padded.shape[1:1 + m]
    for size, block in zip(sizes, blocks):
        if size % block:
            raise ValueError(f"{op}: padded spatial size {size} is not a multiple of its block {block}.")
    batch = padded.shape[0]
    shape = [batch]
    for size, block in zip(sizes, blocks):
        shape += [size // block, block]
    tail = list(padded.shape[1 + m:])
    split = padded.reshape(*shape, *tail)
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    order += list(range(1 + 2 * m, 1 + 2 * m + rest))
    out_shape = [batch * int(torch.tensor(blocks).prod())] + [s // b for s, b in zip(sizes, blocks)] + tail
    return split.permute(*order).reshape(out_shape)


def _fill_gaps(values: list, fill: Any, spatial_dims: list) -> list:
    """Per dimension 1..max(spatial_dims): the value given for a spatial dimension, `fill` for the others."""
    given = dict(zip(spatial_dims, values))
    return [given.get(dim, fill) for dim in range(1, max(spatial_dims) + 1)]


def with_space_to_batch(input: Any, dilation_rate: Any, padding: str, op: Any, filter_shape: Any = None,  # noqa: A002
                        spatial_dims: Any = None, data_format: Optional[str] = None) -> Any:
    """op(input, num_spatial_dims, padding) run at `dilation_rate`: with rates above 1 the input goes through
    space_to_batch (SAME padding from `filter_shape`), `op` runs with 'VALID' padding and batch_to_space brings the
    result back, as TF does for dilated convolution and pooling."""
    name = "tf.nn.with_space_to_batch"
    x = to_tensor(input, op=name)
    rates = [int(v) for v in (dilation_rate.tolist() if isinstance(dilation_rate, torch.Tensor)
                              else np.atleast_1d(dilation_rate).tolist())]
    n = len(rates)
    if n < 1 or any(r < 1 for r in rates):
        raise ValueError(f"{name}: dilation_rate must hold positive ints, one per spatial dimension; got {rates}.")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{name}: padding must be 'SAME' or 'VALID', got {padding!r}.")
    if spatial_dims is None:
        first = 2 if data_format is not None and data_format.startswith("NC") else 1
        dims = list(range(first, first + n))
    else:
        dims = [int(d) for d in spatial_dims]
        if len(dims) != n or dims != sorted(set(dims)) or dims[0] < 1:
            raise ValueError(f"{name}: spatial_dims must be {n} increasing dimensions >= 1, got {spatial_dims!r}.")
    if all(r == 1 for r in rates):
        return op(x, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError(f"{name}: filter_shape must be given for SAME padding with dilation_rate {rates}.")
        extra = [(int(k) - 1) * r for k, r in zip(list(filter_shape), rates)]
        base = [[e // 2, e - e // 2] for e in extra]
    else:
        base = [[0, 0] for _ in rates]
    spatial = [int(x.shape[d]) for d in dims]
    pads, crops = required_space_to_batch_paddings(spatial, rates, base)
    blocks = _fill_gaps(rates, 1, dims)
    pads = _fill_gaps(pads.tolist(), [0, 0], dims)
    crops = _fill_gaps(crops.tolist(), [0, 0], dims)
    result = op(space_to_batch_nd(x, blocks, pads), n, "VALID")
    return batch_to_space(result, blocks, crops)
