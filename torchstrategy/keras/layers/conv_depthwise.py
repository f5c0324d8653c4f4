"""Keras's 1-D depthwise and separable convolutions: DepthwiseConv1D (kernel (k, in, depth_multiplier)) and
SeparableConv1D (that, then a pointwise kernel (1, in * depth_multiplier, filters)), in TF's channel order."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras import initializers, regularizers
from torchstrategy.keras.layers.base import InputSpec
from torchstrategy.keras.layers.conv import Conv1D, _check_kernel_fits, _from_channels_first, _pad_spatial, \
    _to_channels_first
from torchstrategy.keras.layers.core import _require_defined, _require_rank

_DEPTHWISE_RENAMES = (("kernel_initializer", "depthwise_initializer"), ("kernel_regularizer", "depthwise_regularizer"),
                      ("kernel_constraint", "depthwise_constraint"))


def _check_multiplier(owner: str, depth_multiplier: Any) -> None:
    if not isinstance(depth_multiplier, int) or isinstance(depth_multiplier, bool) or depth_multiplier <= 0:
        raise ValueError(f"Invalid value for argument `depth_multiplier` of {owner}. Expected a strictly positive "
                         f"value. Received depth_multiplier={depth_multiplier!r}.")


def _depthwise_weight(kernel: torch.Tensor) -> torch.Tensor:
    # (k, in, m) -> torch's (in * m, 1, k); output channel c * m + j reads input channel c, as TF
    k, channels, multiplier = kernel.shape
    return kernel.reshape(k, channels * multiplier).permute(1, 0).unsqueeze(1)


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

    def build(self, input_shape: Any) -> None:
        _require_rank(self, input_shape, 3, "(batch, steps, channels)" if self.data_format == "channels_last"
                      else "(batch, channels, steps)")
        channels = _require_defined(self, input_shape, self._channel_axis(), "channel")
        _check_kernel_fits(self, input_shape, self.kernel_size + (channels, self.depth_multiplier))
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = self.add_weight(
            "bias", shape=(channels * self.depth_multiplier,), initializer=self.bias_initializer,
            regularizer=self.bias_regularizer, constraint=self.bias_constraint) if self.use_bias else None
        self.input_spec = InputSpec(ndim=3, axes={self._channel_axis(): channels})
        self.built = True

    def _torch_weight(self) -> torch.Tensor:
        return _depthwise_weight(self.depthwise_kernel)

    def _torch_groups(self) -> int:
        return int(self.depthwise_kernel.shape[1])

    def get_config(self) -> dict:
        config = super().get_config()
        for name in ("filters", "groups"):
            config.pop(name)
        for old, new in _DEPTHWISE_RENAMES:
            config[new] = config.pop(old)
        return {**config, "depth_multiplier": self.depth_multiplier}


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
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape: Any) -> None:
        _require_rank(self, input_shape, 3, "(batch, steps, channels)" if self.data_format == "channels_last"
                      else "(batch, channels, steps)")
        channels = _require_defined(self, input_shape, self._channel_axis(), "channel")
        _check_kernel_fits(self, input_shape, self.kernel_size + (channels, self.depth_multiplier))
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape=(1, channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self.bias = self.add_weight(
            "bias", shape=(self.filters,), initializer=self.bias_initializer, regularizer=self.bias_regularizer,
            constraint=self.bias_constraint) if self.use_bias else None
        self.input_spec = InputSpec(ndim=3, axes={self._channel_axis(): channels})
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = _to_channels_first(inputs, self.data_format)
        x, padding = _pad_spatial(x, self._padding_for(x))
        channels = int(self.depthwise_kernel.shape[1])
        y = F.conv1d(x, _depthwise_weight(self.depthwise_kernel), None, self.strides, padding, self.dilation_rate,
                     channels)
        y = F.conv1d(y, self.pointwise_kernel.permute(2, 1, 0), self.bias)
        return self.activation(_from_channels_first(y, self.data_format))

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("groups")
        for old, new in _DEPTHWISE_RENAMES:
            config[new] = config.pop(old)
        return {**config, "depth_multiplier": self.depth_multiplier,
                "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
                "pointwise_regularizer": regularizers.serialize(self.pointwise_regularizer),
                "pointwise_constraint": self.pointwise_constraint}


SeparableConvolution1D = SeparableConv1D
