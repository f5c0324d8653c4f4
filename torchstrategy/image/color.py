"""tf.image's colour spaces and colour adjustments: RGB <-> HSV / YIQ / YUV, grayscale_to_rgb, and adjust_hue,
adjust_saturation and adjust_gamma (integer images converted to [0, 1] floats and back, as TF)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.image.core import _as_tensor, convert_image_dtype

# TF's YIQ / YUV matrices (images @ kernel, the channel axis last)
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1.0, 1.0, 1.0], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1.0, 1.0, 1.0], [0.0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0.0]]


def _rgb(images: Any, op: str, floating: bool = True) -> torch.Tensor:
    tensor = _as_tensor(images)
    if tensor.dim() < 1 or tensor.shape[-1] != 3:
        raise ValueError(f"tf.image.{op}: the last axis must hold 3 channels, got shape {tuple(tensor.shape)}.")
    if floating and not tensor.is_floating_point():
        raise TypeError(f"tf.image.{op} needs a floating point image, got {tensor.dtype}; convert it first with "
                        "tf.image.convert_image_dtype(image, tf.float32).")
    return tensor


def _as_float(tensor: torch.Tensor) -> torch.Tensor:
    return tensor if tensor.is_floating_point() else convert_image_dtype(tensor, torch.float32)


def _back(result: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return result.to(like.dtype) if like.is_floating_point() else convert_image_dtype(result, like.dtype, saturate=True)


def rgb_to_hsv(images: Any, name: Optional[str] = None) -> torch.Tensor:
    """RGB in [0, 1] to HSV in [0, 1] (hue 0 for greys, saturation 0 for black)."""
    x = _rgb(images, "rgb_to_hsv")
    r, g, b = x.unbind(-1)
    value = torch.maximum(torch.maximum(r, g), b)
    spread = value - torch.minimum(torch.minimum(r, g), b)
    saturation = torch.where(value > 0, spread / torch.where(value > 0, value, torch.ones_like(value)),
                             torch.zeros_like(value))
    norm = 1.0 / (6.0 * torch.where(spread > 0, spread, torch.ones_like(spread)))
    hue = torch.where(r == value, norm * (g - b),
                      torch.where(g == value, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0))
    hue = torch.where(spread > 0, hue, torch.zeros_like(hue))
    hue = torch.where(hue < 0, hue + 1.0, hue)
    return torch.stack([hue, saturation, value], dim=-1)


def hsv_to_rgb(images: Any, name: Optional[str] = None) -> torch.Tensor:
    """HSV in [0, 1] to RGB in [0, 1] (a hue of exactly 1 is red, as 0)."""
    x = _rgb(images, "hsv_to_rgb")
    h, s, v = x.unbind(-1)
    chroma = s * v
    low = v - chroma
    sector = h * 6.0
    fraction = chroma * (1.0 - torch.abs(torch.remainder(sector, 2.0) - 1.0))
    index = torch.floor(sector)
    index = torch.where(index == 6, torch.zeros_like(index), index)  # hue 1.0 wraps to the red sector
    zero = torch.zeros_like(h)
    table = {0: (chroma, fraction, zero), 1: (fraction, chroma, zero), 2: (zero, chroma, fraction),
             3: (zero, fraction, chroma), 4: (fraction, zero, chroma), 5: (chroma, zero, fraction)}
    channels = []
    for channel in range(3):
        out = zero
        for sector_index, values in table.items():
            out = torch.where(index == sector_index, values[channel], out)
        channels.append(out + low)
    return torch.stack(channels, dim=-1)


def _linear(images: Any, kernel: list, op: str) -> torch.Tensor:
    x = _rgb(images, op)
    return x @ torch.tensor(kernel, dtype=x.dtype, device=x.device)


def rgb_to_yiq(images: Any) -> torch.Tensor:
    """RGB to YIQ (TF's matrix)."""
    return _linear(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images: Any) -> torch.Tensor:
    """YIQ to RGB (TF's matrix)."""
    return _linear(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images: Any) -> torch.Tensor:
    """RGB to YUV (TF's matrix)."""
    return _linear(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images: Any) -> torch.Tensor:
    """YUV to RGB (TF's matrix)."""
    return _linear(images, _YUV_TO_RGB, "yuv_to_rgb")


def grayscale_to_rgb(images: Any, name: Optional[str] = None) -> torch.Tensor:
    """Repeats a single-channel image's channel three times."""
    tensor = _as_tensor(images)
    if tensor.dim() < 2 or tensor.shape[-1] != 1:
        raise ValueError(f"tf.image.grayscale_to_rgb: the last axis must have size 1, got shape {tuple(tensor.shape)}.")
    return tensor.repeat_interleave(3, dim=-1)


def adjust_hue(image: Any, delta: float, name: Optional[str] = None) -> torch.Tensor:
    """Rotates the hue by `delta` (in [-1, 1], a full turn being 1)."""
    if not -1.0 <= float(delta) <= 1.0:
        raise ValueError(f"tf.image.adjust_hue: delta must be in [-1, 1], got {delta!r}.")
    tensor = _rgb(image, "adjust_hue", floating=False)
    hsv = rgb_to_hsv(_as_float(tensor))
    hue = torch.remainder(hsv[..., 0] + float(delta), 1.0)
    return _back(hsv_to_rgb(torch.stack([hue, hsv[..., 1], hsv[..., 2]], dim=-1)), tensor)


def adjust_saturation(image: Any, saturation_factor: float, name: Optional[str] = None) -> torch.Tensor:
    """Multiplies the saturation by `saturation_factor` (clipped to [0, 1])."""
    if float(saturation_factor) < 0:
        raise ValueError(f"tf.image.adjust_saturation: saturation_factor must be >= 0, got {saturation_factor!r}.")
    tensor = _rgb(image, "adjust_saturation", floating=False)
    hsv = rgb_to_hsv(_as_float(tensor))
    saturation = torch.clamp(hsv[..., 1] * float(saturation_factor), 0.0, 1.0)
    return _back(hsv_to_rgb(torch.stack([hsv[..., 0], saturation, hsv[..., 2]], dim=-1)), tensor)


def adjust_gamma(image: Any, gamma: float = 1, gain: float = 1) -> torch.Tensor:
    """`gain * image ** gamma` on [0, 1] values (integer images are converted and converted back)."""
    if float(gamma) < 0:
        raise ValueError(f"tf.image.adjust_gamma: gamma must be non-negative, got {gamma!r}.")
    tensor = _as_tensor(image)
    result = float(gain) * _as_float(tensor) ** float(gamma)
    return _back(result, tensor)
