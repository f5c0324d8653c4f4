"""Keras convolution layers (Conv1D, Conv2D, Conv3D) on F.convNd with Keras kernels (HWIO) and
TensorFlow 'same' padding; also the padding/layout helpers the pooling layers reuse."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy._machinery import cpu_kernels as _cpu_kernels
from torchstrategy.keras import activations, initializers, regularizers
from torchstrategy.keras.layers.base import InputSpec, Layer, _shape_str
from torchstrategy.keras.layers.core import (
    _normalize_data_format, _normalize_padding, _normalize_tuple, _record_activity, _require_defined,
    _require_rank,
)

_CONV_FNS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _same_padding(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TensorFlow 'same': output ceil(size / stride); the odd pad element goes after (bottom/right)."""
    effective = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def _to_channels_first(inputs: torch.Tensor, data_format: str) -> torch.Tensor:
    """(N, *spatial, C) -> (N, C, *spatial) as a view; PyTorch reads it as channels_last memory."""
    return inputs.movedim(-1, 1) if data_format == "channels_last" else inputs


def _from_channels_first(outputs: torch.Tensor, data_format: str) -> torch.Tensor:
    return outputs.movedim(1, -1) if data_format == "channels_last" else outputs


def _pad_spatial(
    x: torch.Tensor, pads: Sequence[tuple[int, int]], value: float = 0.0
) -> tuple[torch.Tensor, Union[int, tuple[int, ...]]]:
    """Symmetric pads go to the op's own `padding` argument (no copy); asymmetric ones use F.pad.

    `x` is channels-first; returns (possibly padded x, padding for the op).
    """
    if all(before == after for before, after in pads):
        return x, tuple(before for before, _ in pads)
    flat: list[int] = []
    for before, after in reversed(pads):  # F.pad lists the last axis first
        flat += [before, after]
    return F.pad(x, flat, value=value), 0


def _check_kernel_fits(layer: Layer, input_shape: tuple, kernel_shape: tuple) -> None:
    """With padding='valid' an input smaller than the (dilated) kernel has no output: say so at build,
    naming the sizes (TF raises here too, "Computed output size would be zero or negative")."""
    if layer.padding != "valid":
        return
    axes = _spatial_axes(layer._RANK, layer.data_format)
    for axis, kernel, dilation in zip(axes, layer.kernel_size, layer.dilation_rate):
        size, span = input_shape[axis], (kernel - 1) * dilation + 1
        if size is not None and size < span:
            raise ValueError(
                f"Layer '{layer.name}' ({type(layer).__name__}): its kernel is larger than its input, so the output "
                f"would be empty. Input shape {_shape_str(input_shape)}, kernel shape {tuple(kernel_shape)} "
                f"(kernel_size={layer.kernel_size}, dilation_rate={layer.dilation_rate}, strides={layer.strides}, "
                f"padding='valid'); spatial size {size} < {span}. Use padding='same', a smaller kernel_size, "
                f"or a larger input.")


def _spatial_axes(rank: int, data_format: str) -> list[int]:
    return list(range(1, rank + 1)) if data_format == "channels_last" else list(range(2, rank + 2))


class _Conv(Layer):
    """N-D convolution with a Keras kernel of shape (*kernel_size, in_channels // groups, filters)."""

    _RANK = 2

    def __init__(
        self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = 1,
        padding: str = "valid", data_format: Optional[str] = None, dilation_rate: Union[int, Sequence[int]] = 1,
        groups: int = 1, activation: Any = None, use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros", kernel_regularizer: Any = None, bias_regularizer: Any = None,
        activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        rank = self._RANK
        if not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"{type(self).__name__}: `filters` must be a positive integer, got {filters!r}.")
        if not isinstance(groups, int) or groups <= 0 or filters % groups:
            raise ValueError(f"{type(self).__name__}: `groups` must be a positive integer dividing filters "
                             f"({filters}), got groups={groups!r}.")
        self.filters, self.groups = filters, groups
        self.kernel_size = _normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = _normalize_tuple(strides, rank, "strides")
        self.dilation_rate = _normalize_tuple(dilation_rate, rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"{type(self).__name__}: strides > 1 are not supported together with "
                             f"dilation_rate > 1 (as in Keras). Received strides={self.strides}, "
                             f"dilation_rate={self.dilation_rate}.")
        self.padding = _normalize_padding(padding, ("valid", "same", "causal") if rank == 1 else ("valid", "same"))
        self.data_format = _normalize_data_format(data_format)
        if self.padding == "causal" and self.data_format != "channels_last":
            raise ValueError("Causal padding is only supported with data_format='channels_last'.")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(ndim=rank + 2)
        # Kernel axes (*spatial, in, out) -> torch's (out, in, *spatial).
        self._kernel_perm = (rank + 1, rank) + tuple(range(rank))

    def _channel_axis(self) -> int:
        return -1 if self.data_format == "channels_last" else 1

    def build(self, input_shape: Any) -> None:
        rank = self._RANK
        layout = "(batch, *spatial, channels)" if self.data_format == "channels_last" else "(batch, channels, *spatial)"
        _require_rank(self, input_shape, rank + 2, layout)
        channels = _require_defined(self, input_shape, self._channel_axis(), "channel")
        if channels % self.groups:
            raise ValueError(f"Layer '{self.name}': the number of input channels ({channels}) must be divisible "
                             f"by groups ({self.groups}). Received input shape {input_shape}.")
        kernel_shape = self.kernel_size + (channels // self.groups, self.filters)
        _check_kernel_fits(self, input_shape, kernel_shape)
        self.kernel = self.add_weight("kernel", shape=kernel_shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None
        self.input_spec = InputSpec(ndim=rank + 2, axes={self._channel_axis(): channels})
        self.built = True

    def _torch_weight(self) -> torch.Tensor:
        return self.kernel.permute(self._kernel_perm)

    def _torch_groups(self) -> int:
        return self.groups

    def _padding_for(self, x: torch.Tensor) -> list[tuple[int, int]]:
        rank = self._RANK
        if self.padding == "valid":
            return [(0, 0)] * rank
        if self.padding == "causal":
            return [((self.kernel_size[0] - 1) * self.dilation_rate[0], 0)]
        return [_same_padding(int(x.shape[2 + i]), self.kernel_size[i], self.strides[i], self.dilation_rate[i])
                for i in range(rank)]

    def convolution_op(self, inputs: Any, kernel: Any) -> torch.Tensor:
        """Keras 3's BaseConv.convolution_op: `inputs` convolved with the given Keras-layout `kernel`
        (*kernel_size, in_channels // groups, filters) under this layer's strides, padding, dilation and
        data_format; no bias, no activation. Subclasses override it (weight standardisation) and call()
        uses it whenever it is overridden."""
        if self.padding == "causal":  # Keras 3 hands 'causal' to ops.conv here, which rejects it
            raise ValueError("convolution_op: `padding` must be one of 'SAME' or 'VALID'. Received: padding=CAUSAL "
                             "(a causal Conv1D pads in call(); pad the inputs on the left yourself).")
        from torchstrategy.keras import backend

        x = _to_channels_first(backend.to_tensor(inputs), self.data_format)
        kernel = backend.to_tensor(kernel).to(x.dtype)
        x, padding = _pad_spatial(x, self._padding_for(x))
        y = _CONV_FNS[self._RANK](x, kernel.permute(self._kernel_perm), None, self.strides, padding,
                                  self.dilation_rate, self.groups)
        return _from_channels_first(y, self.data_format)

    def call(self, inputs: torch.Tensor, _defer_activation: bool = False, _fused_pool: Any = None) -> torch.Tensor:
        # _defer_activation: the model applies the ReLU itself after a max pooling (keras/layers/fusion.py);
        # _fused_pool: that pooling layer, for the fused convolution + ReLU + pooling kernel (fusion.py too)
        if _fused_pool is not None:
            fused = _cpu_kernels.conv_relu_max_pool_nhwc(inputs, self.kernel, self.bias)
            if fused is not None:
                return fused
            return _fused_pool.call(self.call(inputs, _defer_activation=True), _relu=True)
        # a subclass's convolution_op (weight standardisation) is used as in Keras 3; a causal Conv1D never calls it
        if type(self).convolution_op is not _Conv.convolution_op and self.padding != "causal":
            outputs = self._overridden_convolution(inputs)
        else:
            x = _to_channels_first(inputs, self.data_format)
            x, padding = _pad_spatial(x, self._padding_for(x))
            y = _CONV_FNS[self._RANK](x, self._torch_weight(), self.bias, self.strides, padding, self.dilation_rate,
                                      self._torch_groups())
            outputs = _from_channels_first(y, self.data_format)
        if _defer_activation:
            return outputs
        outputs = self.activation(outputs)
        _record_activity(self, outputs)
        return outputs

    def _overridden_convolution(self, inputs: torch.Tensor) -> torch.Tensor:
        """call()'s path through a subclass's convolution_op(inputs, self.kernel), then the bias (Keras 3's order)."""
        outputs = self.convolution_op(inputs, self.kernel)
        if self.bias is not None:
            shape = [1] * outputs.dim()
            shape[self._channel_axis()] = self.filters
            outputs = outputs + self.bias.reshape(shape)
        return outputs

    def get_config(self) -> dict:
        return {
            **super().get_config(), "filters": self.filters, "kernel_size": list(self.kernel_size),
            "strides": list(self.strides), "padding": self.padding, "data_format": self.data_format,
            "dilation_rate": list(self.dilation_rate), "groups": self.groups,
            "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": self.kernel_constraint, "bias_constraint": self.bias_constraint,
        }


class Conv1D(_Conv):
    """1-D convolution over (batch, steps, channels); kernel (kernel_size, in, filters).
    `padding` may also be 'causal' (left-padded, output[t] sees inputs up to t)."""

    _RANK = 1


class Conv2D(_Conv):
    """2-D convolution over (batch, height, width, channels); kernel HWIO (kh, kw, in/groups, filters).

    >>> Conv2D(8, 3, strides=2, padding="same")(torch.ones(1, 5, 5, 3)).shape
    torch.Size([1, 3, 3, 8])
    """

    _RANK = 2

    def __init__(
        self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = (1, 1),
        padding: str = "valid", data_format: Optional[str] = None,
        dilation_rate: Union[int, Sequence[int]] = (1, 1), groups: int = 1, activation: Any = None,
        use_bias: bool = True, kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
        kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation, use_bias,
            kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
            kernel_constraint, bias_constraint, **kwargs)


class Conv3D(_Conv):
    """3-D convolution over (batch, d1, d2, d3, channels); kernel (k1, k2, k3, in/groups, filters)."""

    _RANK = 3

    def __init__(
        self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = (1, 1, 1),
        padding: str = "valid", data_format: Optional[str] = None,
        dilation_rate: Union[int, Sequence[int]] = (1, 1, 1), groups: int = 1, activation: Any = None,
        use_bias: bool = True, kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
        kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation, use_bias,
            kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
            kernel_constraint, bias_constraint, **kwargs)


Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D


class ZeroPadding2D(Layer):
    """Adds rows/columns of zeros: `padding` is an int, (sym_h, sym_w), or ((top, bottom), (left, right))."""

    def __init__(self, padding: Any = (1, 1), data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(padding, int):
            padding = ((padding, padding), (padding, padding))
        elif len(padding) == 2 and all(isinstance(p, int) for p in padding):
            padding = ((padding[0], padding[0]), (padding[1], padding[1]))
        try:
            pairs = tuple(tuple(int(v) for v in pair) for pair in padding)
        except TypeError:
            pairs = ()
        if len(pairs) != 2 or any(len(pair) != 2 or min(pair) < 0 for pair in pairs):
            raise ValueError(f"ZeroPadding2D: `padding` must be an int, a tuple of 2 ints, or a tuple of 2 tuples of "
                             f"2 non-negative ints. Received: padding={padding!r}")
        self.padding = pairs
        self.data_format = _normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        (top, bottom), (left, right) = self.padding
        if self.data_format == "channels_last":
            return F.pad(inputs, (0, 0, left, right, top, bottom))
        return F.pad(inputs, (left, right, top, bottom))

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": [list(p) for p in self.padding], "data_format": self.data_format}
