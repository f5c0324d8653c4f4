"""The legacy backend's convolutions and pooling (conv1d/2d/3d, conv2d_transpose, depthwise and separable
conv2d, pool2d/3d) and batch_normalization, over tf.nn with Keras 3.15's legacy keras.backend arguments."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy import nn as tf_nn
from torchstrategy.keras._legacy_backend.graph import temporal_padding
from torchstrategy.keras._legacy_backend.settings import _t, image_data_format


def _format(data_format: Optional[str]) -> str:
    data_format = data_format or image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def _padding(padding: str) -> str:
    if padding == "same":
        return "SAME"
    if padding == "valid":
        return "VALID"
    raise ValueError(f"Invalid padding: {padding}")


def _last(x: Any, data_format: str) -> torch.Tensor:
    """Channels-first input moved to channels-last (the layout every op below runs in)."""
    x = _t(x, "conv")
    return x.movedim(1, -1) if data_format == "channels_first" else x


def _back(x: Any, data_format: str) -> torch.Tensor:
    x = torch.as_tensor(x)
    return x.movedim(-1, 1) if data_format == "channels_first" else x


def _tuple(value: Any, rank: int) -> tuple:
    return (int(value),) * rank if isinstance(value, int) else tuple(int(v) for v in value)


def conv1d(x: Any, kernel: Any, strides: Any = 1, padding: str = "valid", data_format: Optional[str] = None,
           dilation_rate: Any = 1) -> torch.Tensor:
    """1-D convolution; 'causal' padding pads the start with dilation_rate * (kernel_size - 1) zeros."""
    data_format = _format(data_format)
    x = _last(x, data_format)
    kernel = _t(kernel, "conv1d")
    if padding == "causal":
        x = temporal_padding(x, (int(dilation_rate) * (kernel.shape[0] - 1), 0))
        padding = "valid"
    out = tf_nn.convolution(x, kernel, strides=_tuple(strides, 1), padding=_padding(padding),
                            dilations=_tuple(dilation_rate, 1))
    return _back(out, data_format)


def conv2d(x: Any, kernel: Any, strides: Sequence[int] = (1, 1), padding: str = "valid",
           data_format: Optional[str] = None, dilation_rate: Sequence[int] = (1, 1)) -> torch.Tensor:
    """2-D convolution with an (h, w, in, out) kernel."""
    data_format = _format(data_format)
    out = tf_nn.convolution(_last(x, data_format), _t(kernel, "conv2d"), strides=_tuple(strides, 2),
                            padding=_padding(padding), dilations=_tuple(dilation_rate, 2))
    return _back(out, data_format)


def conv3d(x: Any, kernel: Any, strides: Sequence[int] = (1, 1, 1), padding: str = "valid",
           data_format: Optional[str] = None, dilation_rate: Sequence[int] = (1, 1, 1)) -> torch.Tensor:
    """3-D convolution with a (d, h, w, in, out) kernel."""
    data_format = _format(data_format)
    out = tf_nn.convolution(_last(x, data_format), _t(kernel, "conv3d"), strides=_tuple(strides, 3),
                            padding=_padding(padding), dilations=_tuple(dilation_rate, 3))
    return _back(out, data_format)


def conv2d_transpose(x: Any, kernel: Any, output_shape: Sequence[Optional[int]], strides: Sequence[int] = (1, 1),
                     padding: str = "valid", data_format: Optional[str] = None,
                     dilation_rate: Sequence[int] = (1, 1)) -> torch.Tensor:
    """Transposed 2-D convolution to `output_shape` (in `data_format`'s layout; a None batch is x's)."""
    data_format = _format(data_format)
    x = _last(x, data_format)
    shape = list(output_shape)
    if data_format == "channels_first":
        shape = [shape[0], shape[2], shape[3], shape[1]]
    if shape[0] is None:
        shape[0] = x.shape[0]
    out = tf_nn.conv2d_transpose(x, _t(kernel, "conv2d_transpose"), [int(s) for s in shape],
                                 strides=(1,) + _tuple(strides, 2) + (1,), padding=_padding(padding),
                                 dilations=_tuple(dilation_rate, 2))
    return _back(out, data_format)


def depthwise_conv2d(x: Any, depthwise_kernel: Any, strides: Sequence[int] = (1, 1), padding: str = "valid",
                     data_format: Optional[str] = None, dilation_rate: Sequence[int] = (1, 1)) -> torch.Tensor:
    """Depthwise 2-D convolution with an (h, w, in, multiplier) kernel."""
    data_format = _format(data_format)
    out = tf_nn.depthwise_conv2d(_last(x, data_format), _t(depthwise_kernel, "depthwise_conv2d"),
                                 strides=(1,) + _tuple(strides, 2) + (1,), padding=_padding(padding),
                                 dilations=_tuple(dilation_rate, 2))
    return _back(out, data_format)


def separable_conv2d(x: Any, depthwise_kernel: Any, pointwise_kernel: Any, strides: Sequence[int] = (1, 1),
                     padding: str = "valid", data_format: Optional[str] = None,
                     dilation_rate: Sequence[int] = (1, 1)) -> torch.Tensor:
    """Depthwise then 1x1 pointwise 2-D convolution."""
    data_format = _format(data_format)
    out = tf_nn.separable_conv2d(_last(x, data_format), _t(depthwise_kernel, "separable_conv2d"),
                                 _t(pointwise_kernel, "separable_conv2d"), strides=(1,) + _tuple(strides, 2) + (1,),
                                 padding=_padding(padding), dilations=_tuple(dilation_rate, 2))
    return _back(out, data_format)


def _pool(x: Any, pool_size: Sequence[int], strides: Sequence[int], padding: str, data_format: Optional[str],
          pool_mode: str, rank: int) -> torch.Tensor:
    data_format = _format(data_format)
    words = {2: "2 integers", 3: "3 integers"}[rank]
    if len(pool_size) != rank:
        raise ValueError(f"`pool_size` must be a tuple of {words}.")
    if len(strides) != rank:
        raise ValueError(f"`strides` must be a tuple of {words}.")
    x = _last(x, data_format)
    ksize, step = (1,) + tuple(pool_size) + (1,), (1,) + tuple(strides) + (1,)
    if pool_mode == "max":
        op = tf_nn.max_pool2d if rank == 2 else tf_nn.max_pool3d
    elif pool_mode == "avg":
        op = tf_nn.avg_pool2d if rank == 2 else tf_nn.avg_pool3d
    else:
        raise ValueError(f"Invalid pooling mode: {str(pool_mode)}")
    return _back(op(x, ksize, step, padding=_padding(padding)), data_format)


def pool2d(x: Any, pool_size: Sequence[int], strides: Sequence[int] = (1, 1), padding: str = "valid",
           data_format: Optional[str] = None, pool_mode: str = "max") -> torch.Tensor:
    """2-D max ('max') or average ('avg') pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


def pool3d(x: Any, pool_size: Sequence[int], strides: Sequence[int] = (1, 1, 1), padding: str = "valid",
           data_format: Optional[str] = None, pool_mode: str = "max") -> torch.Tensor:
    """3-D max ('max') or average ('avg') pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3)


def batch_normalization(x: Any, mean: Any, var: Any, beta: Any, gamma: Any, axis: int = -1,
                        epsilon: float = 1e-3) -> torch.Tensor:
    """(x - mean) / sqrt(var + epsilon) * gamma + beta (tf.nn.batch_normalization; `axis` is not used)."""
    return tf_nn.batch_normalization(_t(x, "batch_normalization"), mean, var, beta, gamma, epsilon)
