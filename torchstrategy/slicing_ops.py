"""TF's strided slicing and block rearrangement ops: tf.strided_slice (with its bit masks), tf.space_to_batch_nd /
tf.space_to_batch, tf.batch_to_space and tf.required_space_to_batch_paddings."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import int_list, to_tensor
from torchstrategy.errors import InvalidArgumentError

__all__ = ["strided_slice", "space_to_batch_nd", "space_to_batch", "batch_to_space",
           "required_space_to_batch_paddings"]


def _bit(mask: int, index: int) -> bool:
    return bool((int(mask) >> index) & 1)


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0, end_mask: int = 0,
                  ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0, var: Any = None,
                  name: Optional[str] = None) -> torch.Tensor:
    """input_[begin:end:strides] with TF's masks: bit i of begin_mask/end_mask ignores begin[i]/end[i],
    ellipsis_mask marks `...`, new_axis_mask inserts an axis, shrink_axis_mask takes the single index begin[i].

    >>> strided_slice([[1, 2, 3], [4, 5, 6]], [0, 2], [2, 0], [1, -1]).tolist()
    [[3, 2], [6, 5]]
    """
    tensor = to_tensor(input_, op="tf.strided_slice")
    starts, stops = int_list(begin, "tf.strided_slice begin"), int_list(end, "tf.strided_slice end")
    steps = [1] * len(starts) if strides is None else int_list(strides, "tf.strided_slice strides")
    if not len(starts) == len(stops) == len(steps):
        raise ValueError(f"tf.strided_slice: begin, end and strides must have one length, got {len(starts)}, "
                         f"{len(stops)}, {len(steps)}.")
    if 0 in steps:
        raise InvalidArgumentError(None, None, "tf.strided_slice: strides must be non-zero.")
    consuming = sum(1 for i in range(len(starts)) if not _bit(ellipsis_mask, i) and not _bit(new_axis_mask, i))
    out, dim = tensor, 0
    for i, (start, stop, step) in enumerate(zip(starts, stops, steps)):
        if _bit(ellipsis_mask, i):
            dim += tensor.dim() - consuming
            continue
        if _bit(new_axis_mask, i):
            out = out.unsqueeze(dim)
            dim += 1
            continue
        size = out.shape[dim]
        if _bit(shrink_axis_mask, i):
            index = start + size if start < 0 else start
            if not 0 <= index < size:
                raise InvalidArgumentError(None, None, f"tf.strided_slice: index {start} is out of bounds for an axis of size "
                                           f"{size}.")
            out = out.select(dim, index)
            continue
        window = slice(None if _bit(begin_mask, i) else start, None if _bit(end_mask, i) else stop, step)
        picked = torch.arange(*window.indices(size), device=out.device)
        out = out.index_select(dim, picked)
        dim += 1
    return out


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Pads the M spatial axes after the batch axis, cuts them into blocks of `block_shape`, and moves the
    block offsets into the batch axis: [batch, *spatial, *rest] -> [batch * prod(block), *spatial/block, *rest]."""
    tensor = to_tensor(input, op="tf.space_to_batch_nd")
    blocks = int_list(block_shape, "tf.space_to_batch_nd block_shape")
    pads = to_tensor(paddings, op="tf.space_to_batch_nd").reshape(-1, 2).tolist()
    m = len(blocks)
    if len(pads) != m or tensor.dim() < m + 1:
        raise InvalidArgumentError(None, None, f"tf.space_to_batch_nd: need {m} padding pairs and an input of rank > {m}, got "
                                   f"{pads} and shape {list(tensor.shape)}.")
    flat = [amount for before, after in reversed(pads) for amount in (before, after)]
    rest = tensor.dim() - 1 - m
    padded = torch.nn.functional.pad(tensor, [0, 0] * rest + flat) if any(flat) else tensor
    batch, spatial, tail = padded.shape[0], list(padded.shape[1:1 + m]), list(padded.shape[1 + m:])
    for size, block in zip(spatial, blocks):
        if size % block:
            raise InvalidArgumentError(None, None, f"tf.space_to_batch_nd: padded spatial size {size} is not divisible by the "
                                       f"block size {block}.")
    shape = [batch]
    for size, block in zip(spatial, blocks):
        shape += [size // block, block]
    out = padded.reshape(shape + tail)
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        list(range(1 + 2 * m, 1 + 2 * m + len(tail)))
    out = out.permute(order)
    return out.reshape([batch * int(np.prod(blocks))] + [s // b for s, b in zip(spatial, blocks)] + tail)


def space_to_batch(input: Any, block_shape: Any, paddings: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Same as tf.space_to_batch_nd."""
    return space_to_batch_nd(input, block_shape, paddings)


def batch_to_space(input: Any, block_shape: Any, crops: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The inverse of space_to_batch_nd: block offsets leave the batch axis for the spatial axes, then `crops`
    [[start, end], ...] trims them."""
    tensor = to_tensor(input, op="tf.batch_to_space")
    blocks = int_list(block_shape, "tf.batch_to_space block_shape")
    trims = to_tensor(crops, op="tf.batch_to_space").reshape(-1, 2).tolist()
    m, total = len(blocks), int(np.prod(blocks))
    if len(trims) != m or tensor.shape[0] % total:
        raise InvalidArgumentError(None, None, f"tf.batch_to_space: the batch {tensor.shape[0]} must divide by prod(block_shape) "
                                   f"= {total}, with {m} crop pairs (got {trims}).")
    batch = tensor.shape[0] // total
    spatial, tail = list(tensor.shape[1:1 + m]), list(tensor.shape[1 + m:])
    out = tensor.reshape(blocks + [batch] + spatial + tail)
    order = [m]
    for i in range(m):
        order += [m + 1 + i, i]
    order += list(range(2 * m + 1, 2 * m + 1 + len(tail)))
    out = out.permute(order).reshape([batch] + [s * b for s, b in zip(spatial, blocks)] + tail)
    index = [slice(None)] + [slice(start, out.shape[1 + i] - end) for i, (start, end) in enumerate(trims)]
    return out[tuple(index)]


def required_space_to_batch_paddings(input_shape: Any, block_shape: Any, base_paddings: Any = None,
                                     name: Optional[str] = None) -> tuple:
    """(paddings, crops): the least padding (beyond base_paddings) that makes input_shape divisible by
    block_shape, and the crops that undo the extra part."""
    shape = np.array(int_list(input_shape, "input_shape"), dtype=np.int64)
    blocks = np.array(int_list(block_shape, "block_shape"), dtype=np.int64)
    base = np.zeros((len(blocks), 2), np.int64) if base_paddings is None else \
        np.asarray(to_tensor(base_paddings, op="tf.required_space_to_batch_paddings").tolist(), np.int64)
    full = shape + base[:, 0] + base[:, 1]
    extra = (blocks - full % blocks) % blocks
    paddings = np.stack([base[:, 0], base[:, 1] + extra], axis=1)
    crops = np.stack([np.zeros_like(extra), extra], axis=1)
    return torch.from_numpy(paddings.astype(np.int32)), torch.from_numpy(crops.astype(np.int32))
