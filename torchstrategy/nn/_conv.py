"""`tf.nn` convolutions on torch tensors: conv1d/2d/3d, convolution, the transposed convolutions, depthwise,
separable and atrous conv2d and bias_add, with TF's layouts (NHWC input, HWIO filters) and SAME arithmetic."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.nn import _layout as L

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _inputs(input: Any, filters: Any, op: str) -> tuple:  # noqa: A002
    x = to_tensor(input, op=op)
    w = to_tensor(filters, hint=x.dtype, op=op)
    if w.dtype != x.dtype:
        raise TypeError(f"{op}: input is {x.dtype} but filters are {w.dtype}; pass both in one dtype.")
    return x, w


def _conv(x: torch.Tensor, w: torch.Tensor, n: int, strides: Any, padding: Any, data_format: Optional[str],
          dilations: Any, op: str) -> torch.Tensor:
    last = L.channels_last(data_format, n, op)
    L.check_rank(x, n, op)
    L.check_rank(w, n, op, "filters")
    stride = L.per_dim(strides, n, last, op, "strides")
    dilation = L.per_dim(dilations, n, last, op, "dilations")
    channels = x.shape[-1] if last else x.shape[1]
    if channels % w.shape[-2]:
        raise ValueError(f"{op}: input depth {channels} is not a multiple of the filters' input depth "
                         f"{w.shape[-2]} (filters are [{', '.join(['spatial'] * n)}, in, out]).")
    amounts = L.pad_amounts(padding, L.spatial_sizes(x, n, last), w.shape[:n], stride, dilation, last, op)
    xc = L.pad_spatial(L.to_channels_first(x, last), amounts)
    weight = w.permute(n + 1, n, *range(n))
    out = _CONV[n](xc, weight, stride=stride, dilation=dilation, groups=channels // w.shape[-2])
    return L.from_channels_first(out, last)


def conv1d(input: Any, filters: Any, stride: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
           dilations: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """1-D convolution of [batch, width, in] by [width, in, out] filters."""
    x, w = _inputs(input, filters, "tf.nn.conv1d")
    return _conv(x, w, 1, stride, padding, data_format, dilations, "tf.nn.conv1d")


def conv2d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
           dilations: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """2-D convolution of [batch, h, w, in] by [h, w, in, out] filters."""
    x, w = _inputs(input, filters, "tf.nn.conv2d")
    return _conv(x, w, 2, strides, padding, data_format, dilations, "tf.nn.conv2d")


def conv3d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NDHWC",  # noqa: A002
           dilations: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """3-D convolution of [batch, d, h, w, in] by [d, h, w, in, out] filters."""
    x, w = _inputs(input, filters, "tf.nn.conv3d")
    return _conv(x, w, 3, strides, padding, data_format, dilations, "tf.nn.conv3d")


def _spatial_rank(x: torch.Tensor, data_format: Optional[str], op: str) -> int:
    if data_format is not None and not data_format.startswith("N"):
        raise ValueError(f"{op}: data_format must start with 'N' (batch first), got {data_format!r}.")
    n = x.dim() - 2
    if n not in (1, 2, 3):
        raise ValueError(f"{op}: input must have rank 3, 4 or 5 (batch, 1-3 spatial, channels), got shape "
                         f"{tuple(x.shape)}.")
    return n


def convolution(input: Any, filters: Any, strides: Any = None, padding: str = "VALID",  # noqa: A002
                data_format: Optional[str] = None, dilations: Any = None,
                name: Optional[str] = None) -> torch.Tensor:
    """N-D convolution (N = 1, 2 or 3, from the input's rank)."""
    x, w = _inputs(input, filters, "tf.nn.convolution")
    n = _spatial_rank(x, data_format, "tf.nn.convolution")
    return _conv(x, w, n, strides, padding, data_format, dilations, "tf.nn.convolution")


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str, name: Optional[str] = None) -> torch.Tensor:
    """2-D convolution with holes: conv2d at stride 1 with dilation `rate`."""
    if int(rate) < 1:
        raise ValueError(f"tf.nn.atrous_conv2d: rate must be at least 1, got {rate}.")
    x, w = _inputs(value, filters, "tf.nn.atrous_conv2d")
    return _conv(x, w, 2, 1, padding, "NHWC", int(rate), "tf.nn.atrous_conv2d")


def _conv_transpose(x: torch.Tensor, w: torch.Tensor, n: int, output_shape: Any, strides: Any, padding: Any,
                    data_format: Optional[str], dilations: Any, op: str) -> torch.Tensor:
    last = L.channels_last(data_format, n, op)
    L.check_rank(x, n, op)
    L.check_rank(w, n, op, "filters")
    shape = [int(v) for v in (output_shape.tolist() if isinstance(output_shape, torch.Tensor) else output_shape)]
    if len(shape) == n:
        channels = w.shape[-2]
        shape = [x.shape[0], *shape, channels] if last else [x.shape[0], channels, *shape]
    if len(shape) != n + 2:
        raise ValueError(f"{op}: output_shape must list {n + 2} (or {n} spatial) sizes, got {output_shape!r}.")
    stride = L.per_dim(strides, n, last, op, "strides")
    dilation = L.per_dim(dilations, n, last, op, "dilations")
    out_sizes = shape[1:1 + n] if last else shape[2:]
    out_channels = shape[-1] if last else shape[1]
    in_channels = x.shape[-1] if last else x.shape[1]
    if w.shape[-1] != in_channels or w.shape[-2] != out_channels:
        raise ValueError(f"{op}: filters must be [{', '.join(['spatial'] * n)}, output depth {out_channels}, "
                         f"input depth {in_channels}], got {tuple(w.shape)}.")
    amounts = L.pad_amounts(padding, out_sizes, w.shape[:n], stride, dilation, last, op)
    for i, (size, k, s, d, (before, after)) in enumerate(zip(out_sizes, w.shape[:n], stride, dilation, amounts)):
        expect = (size + before + after - (k - 1) * d - 1) // s + 1
        got = L.spatial_sizes(x, n, last)[i]
        if got != expect:
            raise ValueError(f"{op}: output_shape {shape} with this padding and stride needs an input of spatial "
                             f"size {expect} along dimension {i}, got {got}.")
    weight = w.permute(n + 1, n, *range(n))
    full = _CONV_T[n](L.to_channels_first(x, last), weight, stride=stride, dilation=dilation)
    index = [slice(None), slice(None)]
    grow = []
    for size, (before, _), have in zip(out_sizes, amounts, full.shape[2:]):
        index.append(slice(before, min(before + size, have)))
        grow.append(max(before + size - have, 0))
    out = full[tuple(index)]
    if any(grow):
        out = L.pad_spatial(out, [(0, g) for g in grow])
    return L.from_channels_first(out, last)


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,  # noqa: A002
                     padding: str = "SAME", data_format: str = "NWC", dilations: Any = None,
                     name: Optional[str] = None) -> torch.Tensor:
    """Transpose (gradient) of conv1d; filters are [width, out, in]."""
    x, w = _inputs(input, filters, "tf.nn.conv1d_transpose")
    return _conv_transpose(x, w, 1, output_shape, strides, padding, data_format, dilations,
                           "tf.nn.conv1d_transpose")


def conv2d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,  # noqa: A002
                     padding: str = "SAME", data_format: str = "NHWC", dilations: Any = None,
                     name: Optional[str] = None) -> torch.Tensor:
    """Transpose (gradient) of conv2d; filters are [h, w, out, in]."""
    x, w = _inputs(input, filters, "tf.nn.conv2d_transpose")
    return _conv_transpose(x, w, 2, output_shape, strides, padding, data_format, dilations,
                           "tf.nn.conv2d_transpose")


def conv3d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,  # noqa: A002
                     padding: str = "SAME", data_format: str = "NDHWC", dilations: Any = None,
                     name: Optional[str] = None) -> torch.Tensor:
    """Transpose (gradient) of conv3d; filters are [d, h, w, out, in]."""
    x, w = _inputs(input, filters, "tf.nn.conv3d_transpose")
    return _conv_transpose(x, w, 3, output_shape, strides, padding, data_format, dilations,
                           "tf.nn.conv3d_transpose")


def conv_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,  # noqa: A002
                   padding: str = "SAME", data_format: Optional[str] = None, dilations: Any = None,
                   name: Optional[str] = None) -> torch.Tensor:
    """Transposed convolution of rank 1, 2 or 3 (from the input's rank)."""
    x, w = _inputs(input, filters, "tf.nn.conv_transpose")
    n = _spatial_rank(x, data_format, "tf.nn.conv_transpose")
    return _conv_transpose(x, w, n, output_shape, strides, padding, data_format, dilations,
                           "tf.nn.conv_transpose")


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any,  # noqa: A002
                     data_format: Optional[str] = None, dilations: Any = None,
                     name: Optional[str] = None) -> torch.Tensor:
    """Per-channel conv2d: [h, w, in, multiplier] filters give in * multiplier output channels."""
    op = "tf.nn.depthwise_conv2d"
    x, w = _inputs(input, filter, op)
    L.check_rank(w, 2, op, "filter")
    last = L.channels_last(data_format, 2, op)
    channels = x.shape[-1] if last else x.shape[1]
    if w.shape[2] != channels:
        raise ValueError(f"{op}: filter's input depth {w.shape[2]} differs from the input's {channels}.")
    grouped = w.reshape(w.shape[0], w.shape[1], 1, channels * w.shape[3])
    return _conv(x, grouped, 2, strides, padding, data_format, dilations, op)


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,  # noqa: A002
                     padding: Any, data_format: Optional[str] = None, dilations: Any = None,
                     name: Optional[str] = None) -> torch.Tensor:
    """depthwise_conv2d followed by a 1x1 conv2d with `pointwise_filter` [1, 1, in * multiplier, out]."""
    depth = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations)
    point = to_tensor(pointwise_filter, hint=depth.dtype, op="tf.nn.separable_conv2d")
    if tuple(point.shape[:2]) != (1, 1):
        raise ValueError(f"tf.nn.separable_conv2d: pointwise_filter must be [1, 1, in, out], got "
                         f"{tuple(point.shape)}.")
    return _conv(depth, point, 2, 1, "VALID", data_format, None, "tf.nn.separable_conv2d")


def bias_add(value: Any, bias: Any, data_format: Optional[str] = None, name: Optional[str] = None) -> torch.Tensor:
    """value + bias along the channel dimension (the last one, or dimension 1 for 'NC...' formats)."""
    x = to_tensor(value, op="tf.nn.bias_add")
    b = to_tensor(bias, hint=x.dtype, op="tf.nn.bias_add")
    if b.dim() != 1:
        raise ValueError(f"tf.nn.bias_add: bias must be 1-D, got shape {tuple(b.shape)}.")
    if data_format is not None and not (data_format.startswith("N") and data_format[-1] == "C"
                                        or data_format.startswith("NC")):
        raise ValueError(f"tf.nn.bias_add: data_format must be 'N...C' or 'NC...', got {data_format!r}.")
    first = data_format is not None and data_format.startswith("NC") and x.dim() > 2
    axis = 1 if first else -1
    if x.dim() < 2 or x.shape[axis] != b.shape[0]:
        raise ValueError(f"tf.nn.bias_add: bias of size {b.shape[0]} does not match the channel dimension of "
                         f"value's shape {tuple(x.shape)}.")
    return x + (b.reshape(-1, *([1] * (x.dim() - 2))) if first else b)


def atrous_conv2d_transpose(value: Any, filters: Any, output_shape: Any, rate: int, padding: str,
                            name: Optional[str] = None) -> torch.Tensor:
    """Transpose of atrous_conv2d: conv2d_transpose at stride 1 with dilation `rate`; filters [h, w, out, in]."""
    if int(rate) < 1:
        raise ValueError(f"tf.nn.atrous_conv2d_transpose: rate must be at least 1, got {rate}.")
    x, w = _inputs(value, filters, "tf.nn.atrous_conv2d_transpose")
    return _conv_transpose(x, w, 2, output_shape, 1, padding, "NHWC", int(rate), "tf.nn.atrous_conv2d_transpose")


def _depthwise_vjp(x: torch.Tensor, w: torch.Tensor, grad: torch.Tensor, wrt: torch.Tensor, strides: Any,
                   padding: Any, data_format: str, dilations: Any) -> torch.Tensor:
    with torch.enable_grad():
        out = depthwise_conv2d(x, w, strides, padding, data_format, dilations)
        if out.shape != grad.shape:
            raise ValueError(f"out_backprop has shape {tuple(grad.shape)} but the convolution gives "
                             f"{tuple(out.shape)}.")
        return torch.autograd.grad(out, wrt, grad_outputs=grad, create_graph=True)[0]


def depthwise_conv2d_backprop_input(input_sizes: Any, filter: Any, out_backprop: Any, strides: Any,  # noqa: A002
                                    padding: Any, data_format: str = "NHWC", dilations: Any = [1, 1, 1, 1],
                                    name: Optional[str] = None) -> torch.Tensor:
    """Gradient of depthwise_conv2d with respect to an input of shape input_sizes, given out_backprop."""
    grad = to_tensor(out_backprop, op="tf.nn.depthwise_conv2d_backprop_input")
    w = to_tensor(filter, hint=grad.dtype, op="tf.nn.depthwise_conv2d_backprop_input")
    sizes = [int(v) for v in (input_sizes.tolist() if isinstance(input_sizes, torch.Tensor) else input_sizes)]
    x = torch.zeros(sizes, dtype=grad.dtype, device=grad.device, requires_grad=True)
    return _depthwise_vjp(x, w, grad, x, strides, padding, data_format, dilations)


def depthwise_conv2d_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any, strides: Any,  # noqa: A002
                                     padding: Any, data_format: str = "NHWC", dilations: Any = [1, 1, 1, 1],
                                     name: Optional[str] = None) -> torch.Tensor:
    """Gradient of depthwise_conv2d with respect to a filter of shape filter_sizes, given out_backprop."""
    x = to_tensor(input, op="tf.nn.depthwise_conv2d_backprop_filter")
    grad = to_tensor(out_backprop, hint=x.dtype, op="tf.nn.depthwise_conv2d_backprop_filter")
    sizes = [int(v) for v in (filter_sizes.tolist() if isinstance(filter_sizes, torch.Tensor) else filter_sizes)]
    w = torch.zeros(sizes, dtype=x.dtype, device=x.device, requires_grad=True)
    return _depthwise_vjp(x, w, grad, w, strides, padding, data_format, dilations)
