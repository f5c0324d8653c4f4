"""Keras pooling layers: Max/Average pooling in 1-3 D with TensorFlow 'valid'/'same' windows
(same-average counts only real elements), and the global average/max pooling layers."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy._machinery import cpu_kernels as _cpu_kernels
from torchstrategy.keras import activations
from torchstrategy.keras.layers.base import InputSpec, Layer
from torchstrategy.keras.layers.conv import (
    _from_channels_first, _pad_spatial, _same_padding, _spatial_axes, _to_channels_first,
)
from torchstrategy.keras.layers.core import _normalize_data_format, _normalize_padding, _normalize_tuple, _require_rank

_MAX_FNS = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVG_FNS = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


class _Pooling(Layer):
    """Windowed max/average over the spatial axes of (batch, *spatial, channels) inputs."""

    _RANK = 2
    _MODE = "max"

    def __init__(
        self, pool_size: Union[int, Sequence[int]] = 2, strides: Union[None, int, Sequence[int]] = None,
        padding: str = "valid", data_format: Optional[str] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        rank = self._RANK
        self.pool_size = _normalize_tuple(pool_size, rank, "pool_size")
        self.strides = self.pool_size if strides is None else _normalize_tuple(strides, rank, "strides")
        self.padding = _normalize_padding(padding)
        self.data_format = _normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def build(self, input_shape: Any) -> None:
        layout = "(batch, *spatial, channels)" if self.data_format == "channels_last" else "(batch, channels, *spatial)"
        _require_rank(self, input_shape, self._RANK + 2, layout)
        self.built = True

    def call(self, inputs: torch.Tensor, _relu: bool = False) -> torch.Tensor:
        # _relu: layers/fusion.py asks a max pool for relu(pool(x)), which the C kernel does in one pass.
        fast = self._max_pool_kernel(inputs, relu=_relu)
        if fast is not None:
            return fast
        x = _to_channels_first(inputs, self.data_format)
        rank = self._RANK
        if self.padding == "valid":
            pads = [(0, 0)] * rank
        else:
            pads = [_same_padding(int(x.shape[2 + i]), self.pool_size[i], self.strides[i]) for i in range(rank)]
        if self._MODE == "max":
            # Padded positions must never win the max: the op's own padding is -inf, and so is F.pad's.
            x, padding = _pad_spatial(x, pads, value=float("-inf"))
            y = _MAX_FNS[rank](x, self.pool_size, self.strides, padding)
        else:
            y = self._average(x, pads)
        y = _from_channels_first(y, self.data_format)
        return activations.relu(y) if _relu else y

    def _max_pool_kernel(self, inputs: torch.Tensor, relu: bool) -> Optional[torch.Tensor]:
        """`[relu](max_pool(inputs))` from the C kernel (exactly torch's numbers) where it applies: 2-D,
        channels_last, windows equal to strides, and no padding ('same' only where the windows tile the
        input); None otherwise."""
        if self._MODE != "max" or self._RANK != 2 or self.data_format != "channels_last":
            return None
        if tuple(self.strides) != tuple(self.pool_size):
            return None
        if self.padding != "valid" and any(int(inputs.shape[1 + i]) % self.pool_size[i] for i in range(2)):
            return None
        return _cpu_kernels.max_pool_nhwc(inputs, tuple(self.pool_size), relu=relu)

    def _average(self, x: torch.Tensor, pads: list[tuple[int, int]]) -> torch.Tensor:
        pool = _AVG_FNS[self._RANK]
        padded, padding = _pad_spatial(x, pads)
        if padding == 0 and any(before != after for before, after in pads):
            # Asymmetric 'same': mean over padded windows divided by the fraction of real elements.
            ones = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype, device=x.device)
            real_fraction = pool(_pad_spatial(ones, pads)[0], self.pool_size, self.strides)
            return pool(padded, self.pool_size, self.strides) / real_fraction
        return pool(padded, self.pool_size, self.strides, padding, count_include_pad=False)

    def get_config(self) -> dict:
        return {**super().get_config(), "pool_size": list(self.pool_size), "strides": list(self.strides),
                "padding": self.padding, "data_format": self.data_format}


class MaxPooling1D(_Pooling):
    """Max over windows of `pool_size` steps of (batch, steps, channels)."""

    _RANK, _MODE = 1, "max"

    def __init__(self, pool_size: Union[int, Sequence[int]] = 2, strides: Any = None,
                 padding: str = "valid", data_format: Optional[str] = None, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class AveragePooling1D(_Pooling):
    """Average over windows of `pool_size` steps; 'same' windows average only real elements."""

    _RANK, _MODE = 1, "avg"

    def __init__(self, pool_size: Union[int, Sequence[int]], strides: Any = None,
                 padding: str = "valid", data_format: Optional[str] = None, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class MaxPooling2D(_Pooling):
    """Max over (ph, pw) windows of (batch, height, width, channels).

    >>> MaxPooling2D()(torch.ones(1, 4, 4, 3)).shape
    torch.Size([1, 2, 2, 3])
    """

    _RANK, _MODE = 2, "max"

    def __init__(self, pool_size: Union[int, Sequence[int]] = (2, 2), strides: Any = None,
                 padding: str = "valid", data_format: Optional[str] = None, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class AveragePooling2D(_Pooling):
    """Average over (ph, pw) windows; 'same' windows average only the real (unpadded) elements."""

    _RANK, _MODE = 2, "avg"

    def __init__(self, pool_size: Union[int, Sequence[int]], strides: Any = None,
                 padding: str = "valid", data_format: Optional[str] = None, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class MaxPooling3D(_Pooling):
    """Max over 3-D windows of (batch, d1, d2, d3, channels)."""

    _RANK, _MODE = 3, "max"

    def __init__(self, pool_size: Union[int, Sequence[int]] = (2, 2, 2), strides: Any = None,
                 padding: str = "valid", data_format: Optional[str] = None, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class AveragePooling3D(_Pooling):
    """Average over 3-D windows of (batch, d1, d2, d3, channels)."""

    _RANK, _MODE = 3, "avg"

    def __init__(self, pool_size: Union[int, Sequence[int]], strides: Any = None,
                 padding: str = "valid", data_format: Optional[str] = None, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class _GlobalPooling(Layer):
    """Mean or max over all spatial axes; `keepdims=True` keeps them with size 1."""

    _RANK = 2
    _MODE = "avg"

    def __init__(self, data_format: Optional[str] = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = _normalize_data_format(data_format)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=self._RANK + 2)

    def build(self, input_shape: Any) -> None:
        layout = "(batch, *spatial, channels)" if self.data_format == "channels_last" else "(batch, channels, *spatial)"
        _require_rank(self, input_shape, self._RANK + 2, layout)
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return self._pool(inputs, None)

    def _pool(self, inputs: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
        axes = _spatial_axes(self._RANK, self.data_format)
        if self._MODE == "max":
            return inputs.amax(dim=axes, keepdim=self.keepdims)
        if mask is not None:  # (batch, steps) mask, True = real step: average over real steps only
            channel_axis = -1 if self.data_format == "channels_last" else 1
            weights = mask.to(inputs.dtype).unsqueeze(channel_axis)
            total = (inputs * weights).sum(dim=axes, keepdim=self.keepdims)
            return total / weights.sum(dim=axes, keepdim=self.keepdims)
        return inputs.mean(dim=axes, keepdim=self.keepdims)

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over steps of (batch, steps, channels); a (batch, steps) mask excludes padded steps."""

    _RANK, _MODE = 1, "avg"

    def call(self, inputs: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        return self._pool(inputs, mask)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None  # Keras 3: the mask is used up by the average


class GlobalMaxPooling1D(_GlobalPooling):
    """Max over steps of (batch, steps, channels)."""

    _RANK, _MODE = 1, "max"


class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over height and width: (batch, H, W, C) -> (batch, C)."""

    _RANK, _MODE = 2, "avg"


class GlobalMaxPooling2D(_GlobalPooling):
    """Max over height and width: (batch, H, W, C) -> (batch, C)."""

    _RANK, _MODE = 2, "max"


class GlobalAveragePooling3D(_GlobalPooling):
    """Mean over the three spatial axes."""

    _RANK, _MODE = 3, "avg"


class GlobalMaxPooling3D(_GlobalPooling):
    """Max over the three spatial axes."""

    _RANK, _MODE = 3, "max"


# Keras's short aliases.
MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D
