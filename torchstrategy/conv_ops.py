"""TF's raw convolution ops at the top level: tf.conv (N-d, any number of batch dimensions) and
tf.conv2d_backprop_filter_v2 / conv2d_backprop_input_v2 (the two gradients of conv2d, by autograd through ours)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.nn import conv2d, convolution


def _padding(padding: Any, explicit_paddings: Any, op: str) -> Any:
    if padding != "EXPLICIT":
        return padding
    flat = [int(v) for v in explicit_paddings]
    if not flat or len(flat) % 2:
        raise ValueError(f"{op}: padding='EXPLICIT' needs explicit_paddings, two ints per dimension; got {flat}.")
    return [flat[i:i + 2] for i in range(0, len(flat), 2)]


def _backprop(input: Any, filter: Any, out_backprop: Any, strides: Any, padding: Any,  # noqa: A002
              explicit_paddings: Any, data_format: str, dilations: Any, wrt: str, op: str) -> torch.Tensor:
    x = to_tensor(input, op=op).detach()
    w = to_tensor(filter, op=op).detach()
    grad = to_tensor(out_backprop, op=op)
    (x if wrt == "input" else w).requires_grad_(True)
    with torch.enable_grad():
        y = conv2d(x, w, strides, _padding(padding, explicit_paddings, op), data_format, dilations)
        if tuple(y.shape) != tuple(grad.shape):
            raise ValueError(f"{op}: out_backprop has shape {tuple(grad.shape)}, the convolution gives "
                             f"{tuple(y.shape)}.")
        (result,) = torch.autograd.grad(y, x if wrt == "input" else w, grad.to(y.dtype))
    return result


def conv2d_backprop_filter_v2(input: Any, filter: Any, out_backprop: Any, strides: Any, padding: Any,  # noqa: A002
                              use_cudnn_on_gpu: bool = True, explicit_paddings: Any = [],  # noqa: B006
                              data_format: str = "NHWC", dilations: Any = [1, 1, 1, 1],  # noqa: B006
                              name: Optional[str] = None) -> torch.Tensor:
    """The gradient of conv2d(input, filter) with respect to the filter, given the output's gradient (the
    filter's values are not used, only its shape)."""
    return _backprop(input, filter, out_backprop, strides, padding, explicit_paddings, data_format,
                     list(dilations), "filter", "tf.conv2d_backprop_filter_v2")


def conv2d_backprop_input_v2(input: Any, filter: Any, out_backprop: Any, strides: Any, padding: Any,  # noqa: A002
                             use_cudnn_on_gpu: bool = True, explicit_paddings: Any = [],  # noqa: B006
                             data_format: str = "NHWC", dilations: Any = [1, 1, 1, 1],  # noqa: B006
                             name: Optional[str] = None) -> torch.Tensor:
    """The gradient of conv2d(input, filter) with respect to the input, given the output's gradient (the input's
    values are not used, only its shape)."""
    return _backprop(input, filter, out_backprop, strides, padding, explicit_paddings, data_format,
                     list(dilations), "input", "tf.conv2d_backprop_input_v2")


def conv(input: Any, filter: Any, strides: Any, padding: str,  # noqa: A002
         explicit_paddings: Any = [],  # noqa: B006 (TF's list defaults; never mutated)
         data_format: str = "CHANNELS_LAST", dilations: Any = [], batch_dims: int = 1, groups: int = 1,
         name: Optional[str] = None) -> torch.Tensor:
    """N-d convolution with `batch_dims` leading batch dimensions; strides/dilations list every dimension of one
    example (batch and channel entries 1), data_format 'CHANNELS_LAST' or 'CHANNELS_FIRST'."""
    op = "tf.conv"
    x = to_tensor(input, op=op)
    w = to_tensor(filter, op=op)
    n = w.dim() - 2
    if data_format not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
        raise ValueError(f"{op}: data_format must be 'CHANNELS_LAST' or 'CHANNELS_FIRST', got {data_format!r}.")
    if x.dim() != n + 1 + int(batch_dims):
        raise ValueError(f"{op}: input needs {int(batch_dims)} batch dimensions, {n} spatial and 1 channel; got "
                         f"shape {tuple(x.shape)}.")
    if x.shape[-1 if data_format == "CHANNELS_LAST" else int(batch_dims)] != w.shape[-2] * int(groups):
        raise ValueError(f"{op}: input channels must equal filter in-channels ({w.shape[-2]}) times groups "
                         f"({groups}).")
    lead = x.shape[:int(batch_dims)]
    flat = x.reshape((-1,) + tuple(x.shape[int(batch_dims):]))
    last = data_format == "CHANNELS_LAST"
    spatial = (lambda v: list(v)[1:-1] if last else list(v)[2:])
    dims = spatial(dilations) if len(dilations) else None
    fmt = None if last else "NC" + "DHW"[3 - n:]
    out = convolution(flat, w, strides=spatial(strides), padding=_padding(padding, explicit_paddings, op),
                      data_format=fmt, dilations=dims)
    return out.reshape(tuple(lead) + tuple(out.shape[1:]))
