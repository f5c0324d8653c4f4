"""Keras's adaptive pooling layers AdaptiveAverage/MaxPooling1D/2D/3D: pool any input size to a fixed
`output_size`, bin i covering [floor(i * L / out), ceil((i + 1) * L / out)) of each spatial axis."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras.layers.base import InputSpec, Layer
from torchstrategy.keras.layers.core import _normalize_data_format

_AVG = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
_MAX = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}
_SHAPE_WORDS = {1: "tuple of 1 integer", 2: "(height, width) tuple", 3: "(depth, height, width) tuple"}


class _AdaptivePooling(Layer):
    _RANK = 2
    _FNS = _AVG

    def __init__(self, output_size: Union[int, Sequence[int]], data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        rank = self._RANK
        if isinstance(output_size, int) and not isinstance(output_size, bool):
            output_size = (output_size,) * rank
        elif isinstance(output_size, (tuple, list)):
            if len(output_size) != rank:
                raise ValueError(f"For {rank}D input, `output_size` tuple must have length {rank}. "
                                 f"Received: {output_size}")
            output_size = tuple(output_size)
        else:
            raise TypeError(f"`output_size` must be an integer or {_SHAPE_WORDS[rank]}. Received: {output_size} "
                            f"of type {type(output_size)}")
        super().__init__(**kwargs)
        self.output_size = output_size
        self.data_format = _normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs.movedim(-1, 1) if self.data_format == "channels_last" else inputs
        y = self._FNS[self._RANK](x, self.output_size)
        if isinstance(y, tuple):  # max pooling returns (values, indices) when asked; keep the values
            y = y[0]
        return y.movedim(1, -1) if self.data_format == "channels_last" else y

    def compute_output_shape(self, input_shape: Any) -> Any:
        if self.data_format == "channels_last":
            return (input_shape[0], *self.output_size, input_shape[-1])
        return (input_shape[0], input_shape[1], *self.output_size)

    def get_config(self) -> dict:
        return {**super().get_config(), "output_size": self.output_size, "data_format": self.data_format}


class AdaptiveAveragePooling1D(_AdaptivePooling):
    """Averages (batch, steps, channels) into `output_size` steps.

    >>> AdaptiveAveragePooling1D(2)(torch.arange(6.0).reshape(1, 6, 1)).flatten().tolist()
    [1.0, 4.0]
    """

    _RANK, _FNS = 1, _AVG


class AdaptiveAveragePooling2D(_AdaptivePooling):
    """Averages each image into an `output_size` (height, width) grid."""

    _RANK, _FNS = 2, _AVG


class AdaptiveAveragePooling3D(_AdaptivePooling):
    """Averages each volume into an `output_size` (depth, height, width) grid."""

    _RANK, _FNS = 3, _AVG


class AdaptiveMaxPooling1D(_AdaptivePooling):
    """Takes the maximum of each of `output_size` bins of the steps axis."""

    _RANK, _FNS = 1, _MAX


class AdaptiveMaxPooling2D(_AdaptivePooling):
    """Takes the maximum over each cell of an `output_size` (height, width) grid."""

    _RANK, _FNS = 2, _MAX


class AdaptiveMaxPooling3D(_AdaptivePooling):
    """Takes the maximum over each cell of an `output_size` (depth, height, width) grid."""

    _RANK, _FNS = 3, _MAX
