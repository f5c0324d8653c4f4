"""Keras's depthwise and separable convolutions in 1-D and 2-D: DepthwiseConv1D/2D (kernel (*k, in,
depth_multiplier)) and SeparableConv1D/2D (that, then a pointwise kernel (*1, in * depth_multiplier, filters))."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch

from torchstrategy.keras import initializers, regularizers
from torchstrategy.keras.layers.base import InputSpec
from torchstrategy.keras.layers.conv import (
    _CONV_FNS, Conv1D, Conv2D, _Conv, _check_kernel_fits, _from_channels_first, _pad_spatial, _to_channels_first,
)
from torchstrategy.keras.layers.core import _record_activity, _require_defined, _require_rank

_DEPTHWISE_RENAMES = (("kernel_initializer", "depthwise_initializer"), ("kernel_regularizer", "depthwise_regularizer"),
                      ("kernel_constraint", "depthwise_constraint"))
_LAYOUTS = {1: ("(batch, steps, channels)", "(batch, channels, steps)"),
            2: ("(batch, height, width, channels)", "(batch, channels, height, width)")}


def _check_multiplier(owner: str, depth_multiplier: Any) -> None:
    if not isinstance(depth_multiplier, int) or isinstance(depth_multiplier, bool) or depth_multiplier <= 0:
        raise ValueError(f"Invalid value for argument `depth_multiplier` of {owner}. Expected a strictly positive "
                         f"value. Received depth_multiplier={depth_multiplier!r}.")


def _depthwise_weight(kernel: torch.Tensor) -> torch.Tensor:
    # (*k, in, m) -> torch's (in * m, 1, *k); output channel c * m + j reads input channel c, as TF
    *spatial, channels, multiplier = kernel.shape
    rank = len(spatial)
    return kernel.reshape(*spatial, channels * multiplier).permute(rank, *range(rank)).unsqueeze(1)


def _build(layer: Any, input_shape: Any, pointwise: bool) -> None:
    """Adds the depthwise kernel, for a separable layer the pointwise kernel, and the bias (Keras's order)."""
    rank = layer._RANK
    _require_rank(layer, input_shape, rank + 2, _LAYOUTS[rank][layer.data_format != "channels_last"])
    channels = _require_defined(layer, input_shape, layer._channel_axis(), "channel")
    _check_kernel_fits(layer, input_shape, layer.kernel_size + (channels, layer.depth_multiplier))
    layer.depthwise_kernel = layer.add_weight(
        "depthwise_kernel", shape=layer.kernel_size + (channels, layer.depth_multiplier),
        initializer=layer.kernel_initializer, regularizer=layer.kernel_regularizer, constraint=layer.kernel_constraint)
    if pointwise:
        layer.pointwise_kernel = layer.add_weight(
            "pointwise_kernel", shape=(1,) * rank + (channels * layer.depth_multiplier, layer.filters),
            initializer=layer.pointwise_initializer, regularizer=layer.pointwise_regularizer,
            constraint=layer.pointwise_constraint)
    width = layer.filters if pointwise else channels * layer.depth_multiplier
    layer.bias = layer.add_weight(
        "bias", shape=(width,), initializer=layer.bias_initializer, regularizer=layer.bias_regularizer,
        constraint=layer.bias_constraint) if layer.use_bias else None
    layer.input_spec = InputSpec(ndim=rank + 2, axes={layer._channel_axis(): channels})
    layer.built = True


def _config(config: dict, drop: tuple) -> dict:
    for name in drop:
        config.pop(name)
    for old, new in _DEPTHWISE_RENAMES:
        config[new] = config.pop(old)
    return config


class _Pointwise:
    """The pointwise half of a separable layer: its arguments, call and config (composed into the layers)."""

    @staticmethod
    def init(layer: Any, pointwise_initializer: Any, pointwise_regularizer: Any, pointwise_constraint: Any) -> None:
        layer.pointwise_initializer = initializers.get(pointwise_initializer)
        layer.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        layer.pointwise_constraint = pointwise_constraint

    @staticmethod
    def call(layer: Any, inputs: torch.Tensor) -> torch.Tensor:
        rank, conv = layer._RANK, _CONV_FNS[layer._RANK]
        x = _to_channels_first(inputs, layer.data_format)
        x, padding = _pad_spatial(x, layer._padding_for(x))
        channels = int(layer.depthwise_kernel.shape[rank])
        y = conv(x, _depthwise_weight(layer.depthwise_kernel), None, layer.strides, padding, layer.dilation_rate,
                 channels)
        y = conv(y, layer.pointwise_kernel.permute(rank + 1, rank, *range(rank)), layer.bias)
        outputs = layer.activation(_from_channels_first(y, layer.data_format))
        _record_activity(layer, outputs)
        return outputs

    @staticmethod
    def config(layer: Any, config: dict) -> dict:
        return {**_config(config, ("groups",)), "depth_multiplier": layer.depth_multiplier,
                "pointwise_initializer": initializers.serialize(layer.pointwise_initializer),
                "pointwise_regularizer": regularizers.serialize(layer.pointwise_regularizer),
                "pointwise_constraint": layer.pointwise_constraint}


class _Depthwise:
    """DepthwiseConv1D/2D's build, torch weight and groups, and config, written once: both class bodies take
    these functions as their methods (Conv1D and Conv2D share _Conv.get_config, so no super() is needed)."""

    def build(self: Any, input_shape: Any) -> None:
        _build(self, input_shape, pointwise=False)

    def torch_weight(self: Any) -> torch.Tensor:
        return _depthwise_weight(self.depthwise_kernel)

    def torch_groups(self: Any) -> int:
        return int(self.depthwise_kernel.shape[self._RANK])  # the input channels: one group each

    def get_config(self: Any) -> dict:
        return {**_config(_Conv.get_config(self), ("filters", "groups")), "depth_multiplier": self.depth_multiplier}


class DepthwiseConv1D(Conv1D):
    """Per-channel 1-D convolution over (batch, steps, channels): each input channel gets `depth_multiplier`
    filters of its own.

    >>> DepthwiseConv1D(3, depth_multiplier=2)(torch.ones(1, 5, 4)).shape
    torch.Size([1, 3, 8])
    """

    def __init__(
        self, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = 1, padding: str = "valid",
        depth_multiplier: int = 1, data_format: Optional[str] = None, dilation_rate: Union[int, Sequence[int]] = 1,
        activation: Any = None, use_bias: bool = True, depthwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros", depthwise_regularizer: Any = None, bias_regularizer: Any = None,
        activity_regularizer: Any = None, depthwise_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        _check_multiplier("DepthwiseConv1D", depth_multiplier)
        super().__init__(1, kernel_size, strides, padding, data_format, dilation_rate, 1, activation, use_bias,
                         depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)
        self.depth_multiplier = depth_multiplier

    build, _torch_weight, _torch_groups, get_config = (
        _Depthwise.build, _Depthwise.torch_weight, _Depthwise.torch_groups, _Depthwise.get_config)


class DepthwiseConv2D(Conv2D):
    """Per-channel 2-D convolution; kernel `depthwise_kernel` (kh, kw, in, depth_multiplier), output
    channel c * depth_multiplier + m comes from input channel c (TensorFlow's order).

    >>> DepthwiseConv2D(3, depth_multiplier=2)(torch.ones(1, 5, 5, 4)).shape
    torch.Size([1, 3, 3, 8])
    """

    def __init__(
        self, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = (1, 1),
        padding: str = "valid", depth_multiplier: int = 1, data_format: Optional[str] = None,
        dilation_rate: Union[int, Sequence[int]] = (1, 1),
        activation: Any = None, use_bias: bool = True, depthwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros", depthwise_regularizer: Any = None, bias_regularizer: Any = None,
        activity_regularizer: Any = None, depthwise_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        _check_multiplier("DepthwiseConv2D", depth_multiplier)
        super().__init__(
            1, kernel_size, strides, padding, data_format, dilation_rate, 1, activation, use_bias,
            depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer, activity_regularizer,
            depthwise_constraint, bias_constraint, **kwargs)
        self.depth_multiplier = depth_multiplier

    build, _torch_weight, _torch_groups, get_config = (
        _Depthwise.build, _Depthwise.torch_weight, _Depthwise.torch_groups, _Depthwise.get_config)


class SeparableConv1D(Conv1D):
    """Depthwise 1-D convolution followed by a pointwise (size 1) convolution to `filters` channels.

    >>> SeparableConv1D(6, 3)(torch.ones(1, 5, 4)).shape
    torch.Size([1, 3, 6])
    """

    def __init__(
        self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = 1,
        padding: str = "valid", data_format: Optional[str] = None, dilation_rate: Union[int, Sequence[int]] = 1,
        depth_multiplier: int = 1, activation: Any = None, use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform", pointwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros", depthwise_regularizer: Any = None, pointwise_regularizer: Any = None,
        bias_regularizer: Any = None, activity_regularizer: Any = None, depthwise_constraint: Any = None,
        pointwise_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        _check_multiplier("SeparableConv1D", depth_multiplier)
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, 1, activation, use_bias,
                         depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)
        self.depth_multiplier = depth_multiplier
        _Pointwise.init(self, pointwise_initializer, pointwise_regularizer, pointwise_constraint)

    def build(self, input_shape: Any) -> None:
        _build(self, input_shape, pointwise=True)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return _Pointwise.call(self, inputs)

    def get_config(self) -> dict:
        return _Pointwise.config(self, super().get_config())


class SeparableConv2D(Conv2D):
    """Depthwise 2-D convolution (depth_multiplier outputs per input channel) followed by a 1x1 pointwise
    convolution; weights depthwise_kernel (kh, kw, in, depth_multiplier), pointwise_kernel
    (1, 1, in * depth_multiplier, filters), bias (filters,).

    >>> SeparableConv2D(6, 3)(torch.ones(1, 5, 5, 4)).shape
    torch.Size([1, 3, 3, 6])
    """

    def __init__(
        self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = (1, 1),
        padding: str = "valid", data_format: Optional[str] = None, dilation_rate: Union[int, Sequence[int]] = (1, 1),
        depth_multiplier: int = 1, activation: Any = None, use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform", pointwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros", depthwise_regularizer: Any = None, pointwise_regularizer: Any = None,
        bias_regularizer: Any = None, activity_regularizer: Any = None, depthwise_constraint: Any = None,
        pointwise_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        _check_multiplier("SeparableConv2D", depth_multiplier)
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate, 1, activation, use_bias,
            depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer, activity_regularizer,
            depthwise_constraint, bias_constraint, **kwargs)
        self.depth_multiplier = depth_multiplier
        _Pointwise.init(self, pointwise_initializer, pointwise_regularizer, pointwise_constraint)

    def build(self, input_shape: Any) -> None:
        _build(self, input_shape, pointwise=True)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return _Pointwise.call(self, inputs)

    def get_config(self) -> dict:
        return _Pointwise.config(self, super().get_config())


SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D
