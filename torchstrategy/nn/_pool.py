"""`tf.nn` pooling on torch tensors: avg_pool/max_pool (1-3 D), pool and max_pool_with_argmax, with TF's
SAME padding (max ignores padded cells, average divides by the cells inside the input)."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import torch
import torch.nn.functional as F

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.nn import _layout as L

_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_SUM_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _pool(x: torch.Tensor, n: int, kind: str, ksize: Any, strides: Any, padding: Any, data_format: Optional[str],
          dilations: Any, op: str) -> torch.Tensor:
    last = L.channels_last(data_format, n, op)
    L.check_rank(x, n, op)
    kernel = L.per_dim(ksize, n, last, op, "ksize")
    stride = L.per_dim(strides, n, last, op, "strides")
    dilation = L.per_dim(dilations, n, last, op, "dilations")
    amounts = L.pad_amounts(padding, L.spatial_sizes(x, n, last), kernel, stride, dilation, last, op)
    xc = L.to_channels_first(x, last)
    if kind == "MAX":
        lowest = -float("inf") if x.is_floating_point() else torch.iinfo(x.dtype).min
        source = xc if x.is_floating_point() else xc.to(torch.float64)
        out = _MAX[n](L.pad_spatial(source, amounts, lowest), kernel, stride, dilation=dilation)
        out = out.to(x.dtype)
    elif kind == "AVG":
        if not x.is_floating_point():
            raise TypeError(f"{op}: average pooling needs a floating-point input, got {x.dtype}.")
        channels = xc.shape[1]
        ones = torch.ones((channels, 1, *kernel), dtype=x.dtype, device=x.device)
        total = _SUM_CONV[n](L.pad_spatial(xc, amounts), ones, stride=stride, dilation=dilation, groups=channels)
        mask = L.pad_spatial(torch.ones((1, 1, *xc.shape[2:]), dtype=x.dtype, device=x.device), amounts)
        count = _SUM_CONV[n](mask, ones[:1], stride=stride, dilation=dilation)
        out = total / count
    else:
        raise ValueError(f"{op}: pooling_type must be 'AVG' or 'MAX', got {kind!r}.")
    return L.from_channels_first(out, last)


def _rank_of(x: torch.Tensor, data_format: Optional[str], op: str) -> int:
    n = x.dim() - 2
    if n not in (1, 2, 3):
        raise ValueError(f"{op}: input must have rank 3, 4 or 5 (batch, 1-3 spatial, channels), got shape "
                         f"{tuple(x.shape)}.")
    if data_format is not None and not data_format.startswith("N"):
        raise ValueError(f"{op}: data_format must start with 'N' (batch first), got {data_format!r}.")
    return n


def avg_pool(input: Any, ksize: Any, strides: Any, padding: Any, data_format: Optional[str] = None,  # noqa: A002
             name: Optional[str] = None) -> torch.Tensor:
    """Average pooling of rank 1, 2 or 3 (from the input's rank)."""
    x = to_tensor(input, op="tf.nn.avg_pool")
    return _pool(x, _rank_of(x, data_format, "tf.nn.avg_pool"), "AVG", ksize, strides, padding, data_format,
                 None, "tf.nn.avg_pool")


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: Optional[str] = None) -> torch.Tensor:
    """Average pooling over [batch, width, channels]."""
    return _pool(to_tensor(input, op="tf.nn.avg_pool1d"), 1, "AVG", ksize, strides, padding, data_format, None,
                 "tf.nn.avg_pool1d")


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
               name: Optional[str] = None) -> torch.Tensor:
    """Average pooling over [batch, h, w, channels]."""
    return _pool(to_tensor(input, op="tf.nn.avg_pool2d"), 2, "AVG", ksize, strides, padding, data_format, None,
                 "tf.nn.avg_pool2d")


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NDHWC",  # noqa: A002
               name: Optional[str] = None) -> torch.Tensor:
    """Average pooling over [batch, d, h, w, channels]."""
    return _pool(to_tensor(input, op="tf.nn.avg_pool3d"), 3, "AVG", ksize, strides, padding, data_format, None,
                 "tf.nn.avg_pool3d")


def max_pool(input: Any, ksize: Any, strides: Any, padding: Any, data_format: Optional[str] = None,  # noqa: A002
             name: Optional[str] = None) -> torch.Tensor:
    """Max pooling of rank 1, 2 or 3 (from the input's rank)."""
    x = to_tensor(input, op="tf.nn.max_pool")
    return _pool(x, _rank_of(x, data_format, "tf.nn.max_pool"), "MAX", ksize, strides, padding, data_format,
                 None, "tf.nn.max_pool")


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: Optional[str] = None) -> torch.Tensor:
    """Max pooling over [batch, width, channels]."""
    return _pool(to_tensor(input, op="tf.nn.max_pool1d"), 1, "MAX", ksize, strides, padding, data_format, None,
                 "tf.nn.max_pool1d")


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
               name: Optional[str] = None) -> torch.Tensor:
    """Max pooling over [batch, h, w, channels]."""
    return _pool(to_tensor(input, op="tf.nn.max_pool2d"), 2, "MAX", ksize, strides, padding, data_format, None,
                 "tf.nn.max_pool2d")


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NDHWC",  # noqa: A002
               name: Optional[str] = None) -> torch.Tensor:
    """Max pooling over [batch, d, h, w, channels]."""
    return _pool(to_tensor(input, op="tf.nn.max_pool3d"), 3, "MAX", ksize, strides, padding, data_format, None,
                 "tf.nn.max_pool3d")


def pool(input: Any, window_shape: Any, pooling_type: str, strides: Any = None,  # noqa: A002
         padding: str = "VALID", data_format: Optional[str] = None, dilations: Any = None,
         name: Optional[str] = None) -> torch.Tensor:
    """'AVG' or 'MAX' pooling with a window of len(window_shape) dimensions, optionally dilated."""
    x = to_tensor(input, op="tf.nn.pool")
    n = len(list(window_shape))
    if x.dim() != n + 2:
        raise ValueError(f"tf.nn.pool: a {n}-D window needs an input of rank {n + 2}, got shape {tuple(x.shape)}.")
    stride = L.per_dim(strides, n, True, "tf.nn.pool", "strides")
    dilation = L.per_dim(dilations, n, True, "tf.nn.pool", "dilations")
    if any(s != 1 for s in stride) and any(d != 1 for d in dilation):
        raise ValueError("tf.nn.pool: strides and dilations cannot both exceed 1 (TF's rule).")
    if isinstance(padding, str) and padding.upper() == "SAME" and any(d != 1 for d in dilation):
        raise ValueError("tf.nn.pool: 'SAME' padding with dilations above 1 is not supported (as in TF); use "
                         "'VALID'.")
    return _pool(x, n, pooling_type, list(window_shape), stride, padding, data_format, dilation, "tf.nn.pool")


class MaxPoolWithArgmax(NamedTuple):
    """max_pool_with_argmax's result: the pooled values and each one's flattened input index."""
    output: torch.Tensor
    argmax: torch.Tensor


def max_pool_with_argmax(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
                         output_dtype: Any = torch.int64, include_batch_in_index: bool = False,
                         name: Optional[str] = None) -> MaxPoolWithArgmax:
    """2-D max pooling (NHWC only) with TF's flat argmax: (y * width + x) * channels + c, plus
    batch * height * width * channels when include_batch_in_index."""
    op = "tf.nn.max_pool_with_argmax"
    if data_format != "NHWC":
        raise ValueError(f"{op}: only data_format='NHWC' is supported (as in TF), got {data_format!r}.")
    x = to_tensor(input, op=op)
    L.check_rank(x, 2, op)
    kernel = L.per_dim(ksize, 2, True, op, "ksize")
    stride = L.per_dim(strides, 2, True, op, "strides")
    if not isinstance(padding, str):
        raise ValueError(f"{op}: padding must be 'SAME' or 'VALID', got {padding!r}.")
    batch, height, width, channels = x.shape
    (top, bottom), (left, right) = L.pad_amounts(padding, [height, width], kernel, stride, [1, 1], True, op)
    source = x.movedim(-1, 1)
    source = source if source.is_floating_point() else source.to(torch.float64)
    padded = L.pad_spatial(source, [(top, bottom), (left, right)], -float("inf"))
    values, index = F.max_pool2d(padded, kernel, stride, return_indices=True)
    padded_width = width + left + right
    row, col = index // padded_width - top, index % padded_width - left
    chan = torch.arange(channels, device=x.device).reshape(1, channels, 1, 1)
    flat = (row * width + col) * channels + chan
    if include_batch_in_index:
        flat = flat + torch.arange(batch, device=x.device).reshape(batch, 1, 1, 1) * (height * width * channels)
    return MaxPoolWithArgmax(values.movedim(1, -1).to(x.dtype), flat.movedim(1, -1).to(as_dtype(output_dtype)))
