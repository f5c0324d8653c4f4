"""`tf.nn` grayscale morphology on torch tensors: dilation2d (max of input + filter over each window) and
erosion2d (its dual), NHWC with TF's SAME/VALID arithmetic, strides and rates."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.nn import _layout as L


def _dilate(x: torch.Tensor, w: torch.Tensor, strides: Any, padding: Any, data_format: str, dilations: Any,
            op: str) -> torch.Tensor:
    if data_format != "NHWC":
        raise ValueError(f"{op}: data_format must be 'NHWC', got {data_format!r}.")
    L.check_rank(x, 2, op)
    if w.dim() != 3 or w.shape[2] != x.shape[3]:
        raise ValueError(f"{op}: filters must be [height, width, {x.shape[3]}], got {tuple(w.shape)}.")
    if not isinstance(padding, str):
        raise ValueError(f"{op}: padding must be 'SAME' or 'VALID', got {padding!r}.")
    stride = L.per_dim(strides, 2, True, op, "strides")
    rate = L.per_dim(dilations, 2, True, op, "dilations")
    kernel = list(w.shape[:2])
    amounts = L.pad_amounts(padding, list(x.shape[1:3]), kernel, stride, rate, True, op)
    xc = L.pad_spatial(x.permute(0, 3, 1, 2), amounts, -float("inf"))
    batch, channels = xc.shape[:2]
    patches = F.unfold(xc, kernel, dilation=rate, stride=stride)  # [b, c*kh*kw, positions]
    out_h = (xc.shape[2] - (kernel[0] - 1) * rate[0] - 1) // stride[0] + 1
    out_w = (xc.shape[3] - (kernel[1] - 1) * rate[1] - 1) // stride[1] + 1
    patches = patches.reshape(batch, channels, kernel[0] * kernel[1], out_h, out_w)
    weights = w.permute(2, 0, 1).reshape(1, channels, kernel[0] * kernel[1], 1, 1)
    return (patches + weights).amax(dim=2).permute(0, 2, 3, 1)


def dilation2d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str, dilations: Any,  # noqa: A002
               name: Optional[str] = None) -> torch.Tensor:
    """out[b, y, x, c] = max over the window of input + filters[dy, dx, c] (filters are [h, w, channels])."""
    x = to_tensor(input, op="tf.nn.dilation2d")
    w = to_tensor(filters, hint=x.dtype, op="tf.nn.dilation2d").to(x.dtype)
    return _dilate(x, w, strides, padding, data_format, dilations, "tf.nn.dilation2d")


def erosion2d(value: Any, filters: Any, strides: Any, padding: Any, data_format: str, dilations: Any,
              name: Optional[str] = None) -> torch.Tensor:
    """out[b, y, x, c] = min over the window of value - filters (TF: -dilation2d(-value, flipped filters))."""
    x = to_tensor(value, op="tf.nn.erosion2d")
    w = to_tensor(filters, hint=x.dtype, op="tf.nn.erosion2d").to(x.dtype)
    return -_dilate(-x, torch.flip(w, dims=[0, 1]), strides, padding, data_format, dilations, "tf.nn.erosion2d")
