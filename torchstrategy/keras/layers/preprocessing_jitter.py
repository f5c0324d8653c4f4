"""Keras 3's RandomColorJitter: RandomBrightness, RandomContrast, RandomSaturation and RandomHue applied in
that order (each only when its factor is given), in training only."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.core import _normalize_data_format
from torchstrategy.keras.layers.preprocessing_hsv import RandomHue, RandomSaturation
from torchstrategy.keras.layers.preprocessing_image import RandomBrightness, RandomContrast


class RandomColorJitter(Layer):
    """Random brightness, contrast, saturation and hue changes in one layer (Keras's order).

    >>> RandomColorJitter(brightness_factor=0.2, hue_factor=0.1)(torch.rand(2, 4, 4, 3) * 255).shape
    torch.Size([2, 4, 4, 3])
    """

    def __init__(self, value_range: Sequence[float] = (0, 255), brightness_factor: Any = None,
                 contrast_factor: Any = None, saturation_factor: Any = None, hue_factor: Any = None,
                 seed: Optional[int] = None, data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value_range, self.seed = value_range, seed
        self.data_format = _normalize_data_format(data_format)
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        stages = []
        if brightness_factor is not None:
            stages.append(RandomBrightness(brightness_factor, value_range=value_range, seed=seed))
        if contrast_factor is not None:
            stages.append(RandomContrast(contrast_factor, value_range=value_range, seed=seed))
        if saturation_factor is not None:
            stages.append(RandomSaturation(saturation_factor, value_range=value_range, seed=seed))
        if hue_factor is not None:
            stages.append(RandomHue(hue_factor, value_range=value_range, seed=seed))
        self.stages = stages
        self.built = True

    def call(self, data: Any, training: bool = True) -> torch.Tensor:
        images = backend.to_tensor(data).to(self._compute_torch_dtype)
        if not training:
            return images
        channels_first = self.data_format == "channels_first"
        x = images.movedim(-3, -1) if channels_first else images
        for stage in self.stages:
            x = stage(x, training=True)
        return x.movedim(-1, -3) if channels_first else x

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range, "brightness_factor": self.brightness_factor,
                "contrast_factor": self.contrast_factor, "saturation_factor": self.saturation_factor,
                "hue_factor": self.hue_factor, "seed": self.seed, "data_format": self.data_format}
