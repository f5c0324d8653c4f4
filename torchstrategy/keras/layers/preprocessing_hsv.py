"""Keras 3's HSV augmentation layers RandomSaturation and RandomHue, on TF's rgb_to_hsv / hsv_to_rgb
conversions (hue in [0, 1), saturation (max - min) / max, value max)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras.layers.preprocessing_color import _ColorLayer, _factor, _rescale, _value_range


def rgb_to_hsv(images: torch.Tensor) -> torch.Tensor:
    """TF's rgb_to_hsv on a channels-last tensor."""
    r, g, b = images.unbind(-1)
    value = torch.maximum(torch.maximum(r, g), b)
    minimum = torch.minimum(torch.minimum(r, g), b)
    spread = value - minimum
    saturation = torch.where(value > 0, spread / torch.where(value > 0, value, torch.ones_like(value)),
                             torch.zeros_like(value))
    norm = 1.0 / (6.0 * torch.where(spread > 0, spread, torch.ones_like(spread)))
    hue = torch.where(r == value, norm * (g - b),
                      torch.where(g == value, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0))
    hue = torch.where(spread > 0, hue, torch.zeros_like(hue))
    hue = torch.where(hue < 0, hue + 1.0, hue)
    return torch.stack([hue, saturation, value], dim=-1)


def hsv_to_rgb(images: torch.Tensor) -> torch.Tensor:
    """TF's hsv_to_rgb on a channels-last tensor."""
    h, s, v = images.unbind(-1)
    c = s * v
    m = v - c
    dh = h * 6.0
    category = torch.floor(dh)
    x = c * (1.0 - torch.abs(torch.remainder(dh, 2.0) - 1.0))
    zero = torch.zeros_like(c)
    table = [(c, x, zero), (x, c, zero), (zero, c, x), (zero, x, c), (x, zero, c), (c, zero, x)]
    r, g, b = zero, zero, zero
    for index, (rr, gg, bb) in enumerate(table):
        hit = category == index
        r, g, b = torch.where(hit, rr, r), torch.where(hit, gg, g), torch.where(hit, bb, b)
    return torch.stack([r + m, g + m, b + m], dim=-1)


class RandomSaturation(_ColorLayer):
    """In training, multiplies each image's HSV saturation by f / (1 - f), f drawn from `factor` in [0, 1]
    (0.5 keeps the image, 0 makes it gray, 1 saturates it fully)."""

    def __init__(self, factor: Any, value_range: Sequence[float] = (0, 255), data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomSaturation", factor, (0, 1))
        self.value_range = _value_range("RandomSaturation", value_range)

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n = images.shape[0]
        f = self._uniform(n, self.factor[0], self.factor[1], images.device)
        f = (f / (1 - f + 1e-7)).to(images.dtype).reshape(n, 1, 1)
        hsv = rgb_to_hsv(images)
        s = (hsv[..., 1] * f).clamp(self.value_range[0], self.value_range[1])
        return hsv_to_rgb(torch.stack([hsv[..., 0], s, hsv[..., 2]], dim=-1))

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomHue(_ColorLayer):
    """In training, shifts each image's hue by ±f/2 (f drawn from `factor` in [0, 1], sign at random),
    wrapping around the colour wheel."""

    def __init__(self, factor: Any, value_range: Sequence[float] = (0, 255), data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomHue", factor, (0, 1))
        self.value_range = value_range

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n = images.shape[0]
        sign = torch.where(self._uniform(n, 0.0, 1.0, images.device) > 0.5, -1.0, 1.0)
        shift = (sign * self._uniform(n, self.factor[0], self.factor[1], images.device) * 0.5)
        x = _rescale(images, self.value_range, (0, 1))
        hsv = rgb_to_hsv(x)
        h = hsv[..., 0] + shift.to(x.dtype).reshape(n, 1, 1)
        h = torch.where(h > 1.0, h - 1.0, h)
        h = torch.where(h < 0.0, h + 1.0, h)
        rgb = hsv_to_rgb(torch.stack([h, hsv[..., 1], hsv[..., 2]], dim=-1)).clamp(0, 1)
        return _rescale(rgb, (0, 1), self.value_range)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
