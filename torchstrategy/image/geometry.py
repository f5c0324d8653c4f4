"""tf.image's geometric ops beyond crops and resizes: rot90, transpose, resize_with_pad, extract_patches (TF's patch
layout: [batch, rows, cols, size_rows * size_cols * depth]) and the 3-D tf.extract_volume_patches."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy.image.core import _as_tensor, _batched, _unbatch, pad_to_bounding_box, resize


def rot90(image: Any, k: int = 1, name: Optional[str] = None) -> torch.Tensor:
    """Rotates an image (or each image of a batch) by k quarter turns counter-clockwise."""
    batch, single = _batched(image, "rot90")
    return _unbatch(torch.rot90(batch, int(k) % 4, dims=(1, 2)), single)


def transpose(image: Any, name: Optional[str] = None) -> torch.Tensor:
    """Swaps height and width of an image (or of each image of a batch)."""
    batch, single = _batched(image, "transpose")
    return _unbatch(batch.transpose(1, 2), single)


def resize_with_pad(image: Any, target_height: int, target_width: int, method: str = "bilinear",
                    antialias: bool = False) -> torch.Tensor:
    """Resizes keeping the aspect ratio so the image fits target_height x target_width, then pads it evenly
    with zeros to exactly that size."""
    batch, single = _batched(image, "resize_with_pad")
    if target_height <= 0 or target_width <= 0:
        raise ValueError(f"tf.image.resize_with_pad: target sizes must be positive, got "
                         f"{target_height}x{target_width}.")
    height, width = batch.shape[1], batch.shape[2]
    ratio = max(width / target_width, height / target_height)
    new_height, new_width = height / ratio, width / ratio
    resized = resize(batch, [int(math.floor(new_height)), int(math.floor(new_width))], method=method,
                     antialias=antialias)
    top = max(0, int(math.floor((target_height - new_height) / 2)))
    left = max(0, int(math.floor((target_width - new_width) / 2)))
    return _unbatch(pad_to_bounding_box(resized, top, left, target_height, target_width), single)


def _quad(value: Any, what: str) -> tuple[int, int]:
    values = [int(v) for v in value]
    if len(values) != 4 or values[0] != 1 or values[3] != 1:
        raise ValueError(f"tf.image.extract_patches: {what} must be [1, rows, cols, 1], got {values}.")
    return values[1], values[2]


def extract_patches(images: Any, sizes: Any, strides: Any, rates: Any, padding: str,
                    name: Optional[str] = None) -> torch.Tensor:
    """Patches of size sizes[1] x sizes[2] every strides[1:3] pixels, sampling every rates[1:3]-th pixel, each
    flattened (rows, then cols, then depth) into the last axis; padding 'VALID' or 'SAME' (zeros)."""
    tensor = _as_tensor(images)
    if tensor.dim() != 4:
        raise ValueError(f"tf.image.extract_patches needs images [batch, h, w, depth], got {tuple(tensor.shape)}.")
    padding = padding.upper() if isinstance(padding, str) else padding
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"tf.image.extract_patches: padding must be 'VALID' or 'SAME', got {padding!r}.")
    (size_h, size_w), (stride_h, stride_w), (rate_h, rate_w) = (_quad(sizes, "sizes"), _quad(strides, "strides"),
                                                                _quad(rates, "rates"))
    batch, height, width, depth = tensor.shape
    span_h, span_w = (size_h - 1) * rate_h + 1, (size_w - 1) * rate_w + 1
    nchw = tensor.permute(0, 3, 1, 2)
    if padding == "SAME":
        out_h, out_w = -(-height // stride_h), -(-width // stride_w)
        pad_h = max((out_h - 1) * stride_h + span_h - height, 0)
        pad_w = max((out_w - 1) * stride_w + span_w - width, 0)
        nchw = F.pad(nchw, (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2))
    else:
        out_h = (height - span_h) // stride_h + 1 if height >= span_h else 0
        out_w = (width - span_w) // stride_w + 1 if width >= span_w else 0
    if out_h == 0 or out_w == 0:
        return tensor.new_zeros(batch, out_h, out_w, size_h * size_w * depth)
    work = nchw if nchw.is_floating_point() else nchw.to(torch.float64)
    columns = F.unfold(work, (size_h, size_w), dilation=(rate_h, rate_w), stride=(stride_h, stride_w))
    # unfold gives [batch, depth * size_h * size_w, rows * cols]; TF orders each patch (size_h, size_w, depth)
    patches = columns.reshape(batch, depth, size_h * size_w, out_h, out_w).permute(0, 3, 4, 2, 1)
    return patches.reshape(batch, out_h, out_w, size_h * size_w * depth).to(tensor.dtype)


def extract_volume_patches(input: Any, ksizes: Any, strides: Any, padding: str,  # noqa: A002
                           name: Optional[str] = None) -> torch.Tensor:
    """tf.extract_volume_patches: 3-D patches of [batch, planes, rows, cols, depth] (ksizes/strides
    [1, p, r, c, 1]), each flattened (planes, rows, cols, then depth) into the last axis; padding 'VALID' or
    'SAME' (zeros, the extra one after)."""
    op = "tf.extract_volume_patches"
    tensor = _as_tensor(input)
    if tensor.dim() != 5:
        raise ValueError(f"{op} needs input [batch, planes, rows, cols, depth], got {tuple(tensor.shape)}.")
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"{op}: padding must be 'VALID' or 'SAME', got {padding!r}.")
    sizes, steps = [int(v) for v in ksizes], [int(v) for v in strides]
    if len(sizes) != 5 or len(steps) != 5 or sizes[0] != 1 or sizes[4] != 1 or steps[0] != 1 or steps[4] != 1:
        raise ValueError(f"{op}: ksizes and strides must be [1, p, r, c, 1], got {ksizes} and {strides}.")
    pads, outs = [], []
    for n, k, s in zip(tensor.shape[1:4], sizes[1:4], steps[1:4]):
        if padding == "SAME":
            out = -(-n // s)
            total = max((out - 1) * s + k - n, 0)
            pads.append((total // 2, total - total // 2))
        else:
            out = (n - k) // s + 1 if n >= k else 0
            pads.append((0, 0))
        outs.append(out)
    flat = [0, 0] + [amount for pair in reversed(pads) for amount in pair]
    work = F.pad(tensor, flat) if any(flat) else tensor
    if 0 in outs:
        return tensor.new_zeros(tensor.shape[0], *outs, sizes[1] * sizes[2] * sizes[3] * tensor.shape[4])
    for axis in range(3):
        work = work.unfold(1 + axis, sizes[1 + axis], steps[1 + axis])
    # [batch, op, or, oc, depth, kp, kr, kc] -> patches ordered (kp, kr, kc, depth)
    patches = work.permute(0, 1, 2, 3, 5, 6, 7, 4)
    return patches.reshape(tensor.shape[0], *outs, -1)
