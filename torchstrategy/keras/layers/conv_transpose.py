"""Keras transposed convolutions (Conv1D/2D/3DTranspose) and the
resampling layers that go with them in decoders (UpSampling1D/2D, Cropping1D/2D)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras import activations, initializers, regularizers
from torchstrategy.keras.layers.base import InputSpec, Layer, _shape_str
from torchstrategy.keras.layers.conv import (
    Conv2D, _check_kernel_fits, _from_channels_first, _pad_spatial, _to_channels_first,
)
from torchstrategy.keras.layers.core import (
    _normalize_data_format, _normalize_padding, _normalize_tuple, _record_activity, _require_defined,
    _require_rank,
)

_CONV_TRANSPOSE_FNS = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _normalize_pairs(value: Any, rank: int, name: str) -> tuple[tuple[int, int], ...]:
    """Keras's cropping forms: an int, `rank` symmetric ints, or `rank` (before, after) pairs."""
    if isinstance(value, int):
        value = (value,) * rank
    try:
        items = list(value)
        pairs = tuple((int(v), int(v)) if isinstance(v, int) else tuple(int(e) for e in v) for v in items)
    except (TypeError, ValueError):
        pairs = ()
    if rank == 1 and len(pairs) == 2 and all(isinstance(v, int) for v in items):
        pairs = (tuple(items),)  # 1-D: (before, after)
    if len(pairs) != rank or any(len(p) != 2 or min(p) < 0 for p in pairs):
        forms = ("an int or a tuple of 2 non-negative ints (before, after)" if rank == 1 else
                 "an int, a tuple of 2 ints (symmetric_height, symmetric_width), or a tuple of 2 tuples of "
                 "2 non-negative ints ((top, bottom), (left, right))")
        raise ValueError(f"`{name}` must be {forms}. Received: {name}={value!r}")
    return pairs


def _transpose_output_size(size: int, kernel: int, stride: int, padding: str, output_padding: Optional[int],
                           dilation: int) -> int:
    """Keras's output length of a transposed convolution (TF padding rules)."""
    effective = (kernel - 1) * dilation + 1
    if padding == "valid":
        extra = max(effective, stride) - effective if output_padding is None else output_padding
        return (size - 1) * stride + effective + extra
    if output_padding is None:
        return size * stride
    return (size - 1) * stride + effective % 2 + output_padding


class _ConvTranspose(Layer):
    """N-D transposed convolution with a Keras kernel of shape (*kernel_size, filters, in_channels)."""

    _RANK = 2

    def __init__(
        self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = 1,
        padding: str = "valid", output_padding: Union[None, int, Sequence[int]] = None,
        data_format: Optional[str] = None, dilation_rate: Union[int, Sequence[int]] = 1, activation: Any = None,
        use_bias: bool = True, kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
        kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        rank, kind = self._RANK, type(self).__name__
        if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
            raise ValueError(f"{kind}: `filters` must be a positive integer, got {filters!r}.")
        self.filters = filters
        self.kernel_size = _normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = _normalize_tuple(strides, rank, "strides")
        self.dilation_rate = _normalize_tuple(dilation_rate, rank, "dilation_rate")
        if output_padding is None:
            self.output_padding: Optional[tuple[int, ...]] = None
        else:
            values = (output_padding,) * rank if isinstance(output_padding, int) else tuple(output_padding)
            if len(values) != rank or not all(isinstance(v, int) and v >= 0 for v in values):
                raise ValueError(f"{kind}: `output_padding` must be None, a non-negative int or a tuple of {rank} "
                                 f"non-negative ints. Received: output_padding={output_padding!r}")
            for axis, (extra, stride) in enumerate(zip(values, self.strides)):
                if extra >= stride:
                    raise ValueError(
                        f"{kind}: each `output_padding` value must be strictly less than the matching `strides` "
                        f"value; at axis {axis} output_padding is {extra} but strides is {stride}. Received "
                        f"output_padding={values}, strides={self.strides}. Lower output_padding or raise strides.")
            self.output_padding = values
            for axis, extra in enumerate(values):
                effective = (self.kernel_size[axis] - 1) * self.dilation_rate[axis] + 1
                if str(padding).lower() == "same" and extra == 0 and effective % 2 == 0:
                    # Output (in - 1) * stride: a 'same' conv of that size has in - 1 positions, so TF fails.
                    raise ValueError(
                        f"{kind}: padding='same' with an even kernel size ({self.kernel_size[axis]} at axis {axis}) "
                        f"and output_padding=0 asks for an output of (input - 1) * stride, which is not the "
                        f"transpose of any 'same' convolution (TensorFlow rejects it when called). Use "
                        f"output_padding >= 1 or None there, or an odd kernel size.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"{kind}: strides > 1 are not supported together with dilation_rate > 1 (as in Keras). "
                             f"Received strides={self.strides}, dilation_rate={self.dilation_rate}.")
        self.padding = _normalize_padding(padding)
        self.data_format = _normalize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(ndim=rank + 2)

    def _channel_axis(self) -> int:
        return -1 if self.data_format == "channels_last" else 1

    def build(self, input_shape: Any) -> None:
        rank = self._RANK
        layout = "(batch, *spatial, channels)" if self.data_format == "channels_last" else "(batch, channels, *spatial)"
        _require_rank(self, input_shape, rank + 2, layout)
        channels = _require_defined(self, input_shape, self._channel_axis(), "channel")
        self.kernel = self.add_weight("kernel", shape=self.kernel_size + (self.filters, channels),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None
        self.input_spec = InputSpec(ndim=rank + 2, axes={self._channel_axis(): channels})
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        rank = self._RANK
        x = _to_channels_first(inputs, self.data_format)
        # Keras (*k, filters, in) -> torch's (in, filters, *k); neither flips the kernel.
        weight = self.kernel.permute((rank + 1, rank) + tuple(range(rank)))
        full = _CONV_TRANSPOSE_FNS[rank](x, weight, None, self.strides, 0, 0, 1, self.dilation_rate)
        # TF derives the crop from the requested output size O: the forward 'same' conv from O would pad
        # `total // 2` before; positions past the full result (output_padding, stride > kernel) stay zero.
        pads: list[int] = []
        for axis in reversed(range(rank)):  # F.pad lists the last axis first
            size, full_size = int(x.shape[2 + axis]), int(full.shape[2 + axis])
            extra = None if self.output_padding is None else self.output_padding[axis]
            out = _transpose_output_size(size, self.kernel_size[axis], self.strides[axis], self.padding, extra,
                                         self.dilation_rate[axis])
            effective = (self.kernel_size[axis] - 1) * self.dilation_rate[axis] + 1
            before = 0 if self.padding == "valid" else max((size - 1) * self.strides[axis] + effective - out, 0) // 2
            pads += [-before, out - (full_size - before)]
        y = F.pad(full, pads) if any(pads) else full
        if self.bias is not None:
            y = y + self.bias.reshape((1, -1) + (1,) * rank)
        outputs = self.activation(_from_channels_first(y, self.data_format))
        _record_activity(self, outputs)
        return outputs

    def get_config(self) -> dict:
        return {
            **super().get_config(), "filters": self.filters, "kernel_size": list(self.kernel_size),
            "strides": list(self.strides), "padding": self.padding,
            "output_padding": None if self.output_padding is None else list(self.output_padding),
            "data_format": self.data_format, "dilation_rate": list(self.dilation_rate),
            "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": self.kernel_constraint, "bias_constraint": self.bias_constraint,
        }


class Conv1DTranspose(_ConvTranspose):
    """1-D transposed convolution over (batch, steps, channels); kernel (k, filters, in)."""

    _RANK = 1


class Conv2DTranspose(_ConvTranspose):
    """2-D transposed convolution ("deconvolution"); kernel (kh, kw, filters, in) as Keras stores it.

    >>> Conv2DTranspose(4, 3, strides=2, padding="same")(torch.ones(1, 5, 5, 3)).shape
    torch.Size([1, 10, 10, 4])
    """

    _RANK = 2

    def __init__(
        self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = (1, 1),
        padding: str = "valid", output_padding: Union[None, int, Sequence[int]] = None, data_format: Optional[str] = None,
        dilation_rate: Union[int, Sequence[int]] = (1, 1), activation: Any = None, use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
        bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
        bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, output_padding, data_format, dilation_rate, activation, use_bias,
            kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
            kernel_constraint, bias_constraint, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """3-D transposed convolution; kernel (k1, k2, k3, filters, in)."""

    _RANK = 3

    def __init__(
        self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = (1, 1, 1),
        padding: str = "valid", data_format: Optional[str] = None, output_padding: Union[None, int, Sequence[int]] = None,
        dilation_rate: Union[int, Sequence[int]] = (1, 1, 1), activation: Any = None, use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
        bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
        bias_constraint: Any = None, **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, output_padding, data_format, dilation_rate, activation, use_bias,
            kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
            kernel_constraint, bias_constraint, **kwargs)


Convolution2DTranspose, Convolution3DTranspose = Conv2DTranspose, Conv3DTranspose


class UpSampling1D(Layer):
    """Repeats each step `size` times along the time axis of (batch, steps, features)."""

    def __init__(self, size: int = 2, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size = _normalize_tuple(size, 1, "size")[0]
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs.repeat_interleave(self.size, dim=1)

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size}


class UpSampling2D(Layer):
    """Scales height and width by integer `size` factors: 'nearest' repeats rows/columns, 'bilinear'
    interpolates with TF's half-pixel centres (no antialiasing), as `keras.layers.UpSampling2D`."""

    _INTERPOLATIONS = ("nearest", "bilinear")

    def __init__(self, size: Union[int, Sequence[int]] = (2, 2), data_format: Optional[str] = None,
                 interpolation: str = "nearest", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size = _normalize_tuple(size, 2, "size")
        self.data_format = _normalize_data_format(data_format)
        self.interpolation = str(interpolation).lower()
        if self.interpolation not in self._INTERPOLATIONS:
            raise ValueError(f"UpSampling2D: `interpolation` must be one of {list(self._INTERPOLATIONS)} here "
                             f"(TF's bicubic/lanczos kernels are not reproduced). Received: "
                             f"interpolation={interpolation!r}")
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = _to_channels_first(inputs, self.data_format)
        if self.interpolation == "nearest":
            y = x.repeat_interleave(self.size[0], dim=2).repeat_interleave(self.size[1], dim=3)
        else:
            size = (int(x.shape[2]) * self.size[0], int(x.shape[3]) * self.size[1])
            y = F.interpolate(x, size=size, mode="bilinear", align_corners=False)
        return _from_channels_first(y, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "size": list(self.size), "data_format": self.data_format,
                "interpolation": self.interpolation}


def _check_crop(layer: Layer, input_shape: Any, axes: Sequence[int], pairs: Sequence[tuple[int, int]]) -> None:
    for axis, (before, after) in zip(axes, pairs):
        size = input_shape[axis]
        if size is not None and before + after >= size:
            raise ValueError(
                f"Layer '{layer.name}' ({type(layer).__name__}): cropping {before} + {after} leaves nothing of axis "
                f"{axis} (size {size}) of input shape {_shape_str(input_shape)}; each axis's cropping must sum to "
                f"less than its size. Received cropping={tuple(pairs)}.")


class Cropping1D(Layer):
    """Removes `cropping = (before, after)` steps from the time axis of (batch, steps, features)."""

    def __init__(self, cropping: Union[int, Sequence[int]] = (1, 1), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cropping = _normalize_pairs(cropping, 1, "cropping")[0]
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape: Any) -> None:
        _require_rank(self, input_shape, 3, "(batch, steps, features)")
        _check_crop(self, input_shape, [1], [self.cropping])
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _check_crop(self, tuple(inputs.shape), [1], [self.cropping])
        before, after = self.cropping
        return inputs[:, before:int(inputs.shape[1]) - after]

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": list(self.cropping)}


class Cropping2D(Layer):
    """Removes rows/columns: `cropping` is an int, (sym_h, sym_w), or ((top, bottom), (left, right))."""

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cropping = _normalize_pairs(cropping, 2, "cropping")
        self.data_format = _normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=4)

    def _axes(self) -> list[int]:
        return [1, 2] if self.data_format == "channels_last" else [2, 3]

    def build(self, input_shape: Any) -> None:
        _require_rank(self, input_shape, 4, "(batch, height, width, channels)" if self.data_format == "channels_last"
                      else "(batch, channels, height, width)")
        _check_crop(self, input_shape, self._axes(), self.cropping)
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        shape = tuple(inputs.shape)
        _check_crop(self, shape, self._axes(), self.cropping)
        (top, bottom), (left, right) = self.cropping
        h, w = self._axes()
        return inputs.narrow(h, top, shape[h] - top - bottom).narrow(w, left, shape[w] - left - right)

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": [list(p) for p in self.cropping], "data_format": self.data_format}
