"""Keras image preprocessing layers (channels_last): CenterCrop, RandomCrop, RandomFlip, RandomRotation,
RandomZoom, RandomTranslation, RandomContrast, RandomBrightness, with TF's projective-transform sampling."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras.layers.base import Layer

_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_INTERPOLATIONS = ("nearest", "bilinear")
Factor = Union[float, Sequence[float]]


def _as_batch(images: torch.Tensor, layer: Layer) -> tuple[torch.Tensor, bool]:
    if not isinstance(images, torch.Tensor):
        images = torch.as_tensor(images)
    if images.dim() not in (3, 4):
        raise ValueError(f"Layer '{layer.name}' expects (batch, height, width, channels) or (height, width, "
                         f"channels) images, got shape {tuple(images.shape)}.")
    unbatched = images.dim() == 3
    return (images.unsqueeze(0) if unbatched else images), unbatched


def _resize_bilinear(images: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """NHWC bilinear resize with half-pixel centres and no antialiasing (TF2 tf.image.resize)."""
    out = F.interpolate(images.movedim(-1, 1), size=(height, width), mode="bilinear", align_corners=False)
    return out.movedim(1, -1)


def _smart_resize(images: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Keras's smart_resize: the largest centred crop with the target aspect ratio, then a bilinear resize."""
    h, w = images.shape[1], images.shape[2]
    crop_h = max(min(h, int(w * height / width)), 1)
    crop_w = max(min(w, int(h * width / height)), 1)
    top, left = int((h - crop_h) / 2), int((w - crop_w) / 2)
    return _resize_bilinear(images[:, top:top + crop_h, left:left + crop_w, :], height, width)


def _map_coordinates(coords: torch.Tensor, size: int, fill_mode: str) -> torch.Tensor:
    """Where a sampling coordinate outside [0, size - 1] reads from, per TF's fill modes."""
    if fill_mode == "constant":
        return coords  # reads outside the image give fill_value
    if size <= 1:
        return torch.zeros_like(coords)
    if fill_mode == "reflect":  # d c b a | a b c d | d c b a (edge pixel repeated)
        period = 2.0 * size
        low = coords + period * torch.trunc(-coords / period)
        low = torch.where(low < -size, low + period, -low - 1.0)
        high = coords - period * torch.trunc(coords / period)
        high = torch.where(high >= size, period - high - 1.0, high)
        coords = torch.where(coords < 0, low, torch.where(coords > size - 1, high, coords))
    elif fill_mode == "wrap":  # a b c d | a b c d | a b c d
        span = float(size - 1)
        low = coords + size * (torch.trunc(-coords / span) + 1.0)
        high = coords - size * torch.trunc(coords / span)
        coords = torch.where(coords < 0, low, torch.where(coords > size - 1, high, coords))
    return coords.clamp(0.0, size - 1.0)


def _affine_transform(images: torch.Tensor, transforms: torch.Tensor, interpolation: str, fill_mode: str,
                      fill_value: float) -> torch.Tensor:
    """TF's ImageProjectiveTransformV3 on NHWC floats: output pixel (x, y) samples the input at
    ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, one 8-vector per image."""
    n, h, w, c = images.shape
    t = transforms.to(torch.float32).reshape(n, 8, 1)
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32, device=images.device),
                            torch.arange(w, dtype=torch.float32, device=images.device), indexing="ij")
    xs, ys = xs.reshape(1, -1), ys.reshape(1, -1)
    k = t[:, 6] * xs + t[:, 7] * ys + 1.0
    src_x = _map_coordinates((t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / k, w, fill_mode)
    src_y = _map_coordinates((t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / k, h, fill_mode)
    flat = images.reshape(n, h * w, c)
    fill = torch.as_tensor(fill_value, dtype=images.dtype, device=images.device)

    def read(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        inside = (y >= 0) & (y <= h - 1) & (x >= 0) & (x <= w - 1)
        index = (y.clamp(0, h - 1) * w + x.clamp(0, w - 1)).long()
        values = torch.gather(flat, 1, index.unsqueeze(-1).expand(-1, -1, c))
        return torch.where(inside.unsqueeze(-1), values, fill)

    if interpolation == "nearest":
        def round_half_away(v: torch.Tensor) -> torch.Tensor:
            return torch.sign(v) * torch.floor(v.abs() + 0.5)  # std::round, as TF's nearest sampling

        out = read(round_half_away(src_y), round_half_away(src_x))
    else:
        y0, x0 = torch.floor(src_y), torch.floor(src_x)
        y1, x1 = y0 + 1.0, x0 + 1.0
        wx0, wx1 = (x1 - src_x).unsqueeze(-1), (src_x - x0).unsqueeze(-1)
        top = wx0 * read(y0, x0) + wx1 * read(y0, x1)
        bottom = wx0 * read(y1, x0) + wx1 * read(y1, x1)
        out = (y1 - src_y).unsqueeze(-1) * top + (src_y - y0).unsqueeze(-1) * bottom
    return out.reshape(n, h, w, c).to(images.dtype)


def _factor_range(factor: Factor, name: str, layer: str, bounds: tuple[float, float] = (-1.0, 1.0),
                  strict: bool = False) -> tuple:
    """(lower, upper) from a number f (-> (-f, f) clipped to bounds) or a pair, as Keras's _set_factor."""
    message = (f"{layer}: `{name}` must be a number or a pair of numbers in [{bounds[0]}, {bounds[1]}], "
               f"got {factor!r}.")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or any(not isinstance(f, (int, float)) for f in factor):
            raise ValueError(message)
        if strict and any(not bounds[0] <= f <= bounds[1] for f in factor):  # zoom/translation check both
            raise ValueError(message)
        if factor[0] > bounds[1] or factor[1] < bounds[0]:  # Keras's own (loose) check of a pair
            raise ValueError(message)
        lower, upper = sorted(float(f) for f in factor)
        return lower, upper
    if not isinstance(factor, (int, float)) or not bounds[0] <= factor <= bounds[1]:
        raise ValueError(message)
    factor = abs(float(factor))
    return max(-factor, bounds[0]), factor


class _ImageLayer(Layer):
    """Shared parts: inputs cast to the compute dtype, seeded per-device generators, uniform draws."""

    def __init__(self, seed: Optional[int] = None, **kwargs: Any) -> None:
        data_format = kwargs.pop("data_format", None)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__}: only data_format='channels_last' is supported here.")
        super().__init__(**kwargs)
        self.seed = seed
        self._generators: dict = {}

    def _generator(self, device: torch.device) -> Optional[torch.Generator]:
        if self.seed is None:
            return None
        if device not in self._generators:  # one stream per device, advancing call after call
            self._generators[device] = torch.Generator(device=device).manual_seed(int(self.seed))
        return self._generators[device]

    def _uniform(self, shape: Sequence[int], low: float, high: float, device: torch.device) -> torch.Tensor:
        draw = torch.rand(tuple(shape), generator=self._generator(device), device=device, dtype=torch.float32)
        return low + (high - low) * draw

    def _images(self, inputs: Any) -> tuple[torch.Tensor, bool]:
        images, unbatched = _as_batch(inputs, self)
        return images.to(self._compute_torch_dtype), unbatched

    def get_config(self) -> dict:
        return {**super().get_config(), "seed": self.seed}


class CenterCrop(_ImageLayer):
    """Crops the centre (height, width) of each image; a smaller image is first cropped to the target
    aspect ratio and resized up (Keras's smart_resize). Acts the same in training and inference.

    >>> CenterCrop(2, 2)(torch.arange(16.).reshape(4, 4, 1))[..., 0].tolist()
    [[5.0, 6.0], [9.0, 10.0]]
    """

    def __init__(self, height: int, width: int, data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        self.height, self.width = int(height), int(width)
        self.seed = None

    def call(self, data: torch.Tensor, training: bool = True) -> torch.Tensor:
        images, unbatched = self._images(data)
        h, w = images.shape[1], images.shape[2]
        if h >= self.height and w >= self.width:
            top, left = (h - self.height) // 2, (w - self.width) // 2
            out = images[:, top:top + self.height, left:left + self.width, :]
        else:
            out = _smart_resize(images, self.height, self.width)
        return out[0] if unbatched else out

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("seed")
        return {**config, "height": self.height, "width": self.width}


class RandomCrop(_ImageLayer):
    """In training, crops a random (height, width) window (the same for the whole batch, as Keras 3); an
    image not larger on both sides is cropped about its centre and resized. At inference the input is
    returned as it is (Keras 3.15 semantics), cast to the compute dtype."""

    def __init__(self, height: int, width: int, seed: Optional[int] = None, data_format: Optional[str] = None,
                 name: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, name=name, **kwargs)
        self.height, self.width = int(height), int(width)

    def call(self, data: torch.Tensor, training: bool = True) -> torch.Tensor:
        images, unbatched = self._images(data)
        if not training:
            return images[0] if unbatched else images
        h, w = images.shape[1], images.shape[2]
        if h > self.height and w > self.width:
            top = int(self._uniform((), 0.0, float(h - self.height + 1), images.device))
            left = int(self._uniform((), 0.0, float(w - self.width + 1), images.device))
        else:
            crop_h = max(min(h, int(w * self.height / self.width)), 1)
            crop_w = max(min(w, int(h * self.width / self.height)), 1)
            top, left = int((h - crop_h) / 2), int((w - crop_w) / 2)
        out = images[:, top:top + self.height, left:left + self.width, :]
        if out.shape[1] != self.height or out.shape[2] != self.width:
            out = _resize_bilinear(out, self.height, self.width)
        return out[0] if unbatched else out

    def compute_output_shape(self, input_shape: Any, *args: Any, **kwargs: Any) -> tuple:
        """The input shape with height and width replaced by the crop's (Keras 3.15, channels last)."""
        shape = list(input_shape)
        shape[-3], shape[-2] = self.height, self.width
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width}


class RandomFlip(_ImageLayer):
    """In training, flips each image with probability 1/2; mode 'horizontal', 'vertical' or
    'horizontal_and_vertical' (as Keras 3, one draw per image decides both flips). Inference: identity."""

    _MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode: str = "horizontal_and_vertical", seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if mode not in self._MODES:
            raise ValueError(f"RandomFlip: mode must be one of {list(self._MODES)}, got {mode!r}.")
        self.mode = mode

    def _flip(self, images: torch.Tensor, flips: torch.Tensor) -> torch.Tensor:
        """Applies the flips given as one bool per image (the deterministic part, tested exactly)."""
        out = images
        chosen = flips.reshape(-1, 1, 1, 1)
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            out = torch.where(chosen, out.flip(2), out)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            out = torch.where(chosen, out.flip(1), out)
        return out

    def call(self, data: torch.Tensor, training: bool = True) -> torch.Tensor:
        images, unbatched = self._images(data)
        if training:
            images = self._flip(images, self._uniform((images.shape[0],), 0.0, 1.0, images.device) <= 0.5)
        return images[0] if unbatched else images

    def get_config(self) -> dict:
        return {**super().get_config(), "mode": self.mode}


class _AffineLayer(_ImageLayer):
    def __init__(self, fill_mode: str, interpolation: str, seed: Optional[int], fill_value: float,
                 **kwargs: Any) -> None:
        super().__init__(seed=seed, **kwargs)
        kind = type(self).__name__
        if fill_mode not in _FILL_MODES:
            raise ValueError(f"{kind}: fill_mode must be one of {list(_FILL_MODES)}, got {fill_mode!r}.")
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"{kind}: interpolation must be one of {list(_INTERPOLATIONS)}, got {interpolation!r}.")
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, float(fill_value)

    def _transforms(self, images: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def call(self, data: torch.Tensor, training: bool = True) -> torch.Tensor:
        images, unbatched = self._images(data)
        if training:
            images = _affine_transform(images, self._transforms(images), self.interpolation, self.fill_mode,
                                       self.fill_value)
        return images[0] if unbatched else images

    def get_config(self) -> dict:
        return {**super().get_config(), "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                "fill_value": self.fill_value}


def _rotation_transforms(angles_deg: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Transforms that rotate about the image centre by the given angles (Keras's affine matrix)."""
    theta = angles_deg * (math.pi / 180.0)
    cx, cy = 0.5 * (width - 1), 0.5 * (height - 1)
    cos, sin = torch.cos(theta), torch.sin(theta)
    a0, a1, b0, b1 = cos, -sin, sin, cos
    a2 = cx - cx * a0 - cy * a1
    b2 = cy - cx * b0 - cy * b1
    zeros = torch.zeros_like(theta)
    return torch.stack([a0, a1, a2, b0, b1, b2, zeros, zeros], dim=1)


def _zoom_transforms(height_zoom: torch.Tensor, width_zoom: torch.Tensor, height: int, width: int) -> torch.Tensor:
    zeros = torch.zeros_like(height_zoom)
    x_offset = (width - 1.0) / 2.0 * (1.0 - width_zoom)
    y_offset = (height - 1.0) / 2.0 * (1.0 - height_zoom)
    return torch.stack([width_zoom, zeros, x_offset, zeros, height_zoom, y_offset, zeros, zeros], dim=1)


def _translation_transforms(dy: torch.Tensor, dx: torch.Tensor) -> torch.Tensor:
    ones, zeros = torch.ones_like(dx), torch.zeros_like(dx)
    return torch.stack([ones, zeros, -dx, zeros, ones, -dy, zeros, zeros], dim=1)


class RandomRotation(_AffineLayer):
    """In training, rotates each image by an angle drawn from `factor` (fractions of a full turn: 0.1 is up to
    36 degrees, as Keras) about its centre. Inference: identity."""

    def __init__(self, factor: Factor, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: Optional[int] = None, fill_value: float = 0.0, data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format=data_format, **kwargs)
        self.factor = factor
        self._lower, self._upper = _factor_range(factor, "factor", "RandomRotation")

    def _transforms(self, images: torch.Tensor) -> torch.Tensor:
        angles = self._uniform((images.shape[0],), self._lower * 360.0, self._upper * 360.0, images.device)
        return _rotation_transforms(angles, images.shape[1], images.shape[2])

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor}


class RandomZoom(_AffineLayer):
    """In training, zooms each image by 1 + a draw from `height_factor` (negative: zoom in, positive: out),
    the width by `width_factor` (None: the same draw as the height). Inference: identity."""

    def __init__(self, height_factor: Factor, width_factor: Optional[Factor] = None, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: Optional[int] = None, fill_value: float = 0.0,
                 data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format=data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height = _factor_range(height_factor, "height_factor", "RandomZoom", strict=True)
        self._width = None if width_factor is None else _factor_range(width_factor, "width_factor", "RandomZoom",
                                                                       strict=True)
        if self._height[0] <= -1.0 or (self._width is not None and self._width[0] <= -1.0):
            raise ValueError("RandomZoom: zoom factors must be greater than -1 (a zoom of 1 + factor must stay "
                             "positive).")

    def _transforms(self, images: torch.Tensor) -> torch.Tensor:
        n = images.shape[0]
        height_zoom = self._uniform((n,), 1.0 + self._height[0], 1.0 + self._height[1], images.device)
        width_zoom = height_zoom if self._width is None else self._uniform(
            (n,), 1.0 + self._width[0], 1.0 + self._width[1], images.device)
        return _zoom_transforms(height_zoom, width_zoom, images.shape[1], images.shape[2])

    def get_config(self) -> dict:
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor}


class RandomTranslation(_AffineLayer):
    """In training, shifts each image by draws from `height_factor`/`width_factor` (fractions of the height
    and width; positive moves content down/right). Inference: identity."""

    def __init__(self, height_factor: Factor, width_factor: Factor, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: Optional[int] = None, fill_value: float = 0.0,
                 data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format=data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height = _factor_range(height_factor, "height_factor", "RandomTranslation", strict=True)
        self._width = _factor_range(width_factor, "width_factor", "RandomTranslation", strict=True)

    def _transforms(self, images: torch.Tensor) -> torch.Tensor:
        n, h, w = images.shape[0], images.shape[1], images.shape[2]
        dy = self._uniform((n,), *self._height, images.device) * h
        dx = self._uniform((n,), *self._width, images.device) * w
        return _translation_transforms(dy, dx)

    def get_config(self) -> dict:
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor}


def _value_range(value_range: Sequence[float], layer: str) -> tuple[float, float]:
    if len(value_range) != 2 or value_range[0] >= value_range[1]:
        raise ValueError(f"{layer}: value_range must be (low, high) with low < high, got {value_range!r}.")
    return float(value_range[0]), float(value_range[1])


class RandomContrast(_ImageLayer):
    """In training, `(x - mean) * c + mean` per image and channel (mean over height and width), clipped to
    `value_range`. As Keras 3.15, c is drawn from [1 - lower, 1 + upper] where a number f gives
    (lower, upper) = (0, f), so only a pair like (0.2, 0.2) also lowers the contrast. Inference: identity."""

    def __init__(self, factor: Factor, value_range: Sequence[float] = (0, 255), seed: Optional[int] = None,
                 **kwargs: Any) -> None:
        super().__init__(seed=seed, **kwargs)
        self.factor = factor
        self._lower, self._upper = _factor_range(factor, "factor", "RandomContrast", bounds=(0.0, 1.0))
        self.value_range = _value_range(value_range, "RandomContrast")

    def call(self, data: torch.Tensor, training: bool = True) -> torch.Tensor:
        images, unbatched = self._images(data)
        if training:
            factor = self._uniform((images.shape[0], 1, 1, 1), 1.0 - self._lower, 1.0 + self._upper,
                                   images.device).to(images.dtype)
            mean = images.mean(dim=(1, 2), keepdim=True)
            images = ((images - mean) * factor + mean).clamp(*self.value_range)
        return images[0] if unbatched else images

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": list(self.value_range)}


class RandomBrightness(_ImageLayer):
    """In training, adds `d * (high - low)` to each image, d drawn from `factor` (a number f: [-f, f]), then
    clips to `value_range` (low, high). Inference: identity."""

    def __init__(self, factor: Factor, value_range: Sequence[float] = (0, 255), seed: Optional[int] = None,
                 **kwargs: Any) -> None:
        super().__init__(seed=seed, **kwargs)
        self.factor = factor
        self._lower, self._upper = _factor_range(factor, "factor", "RandomBrightness")
        self.value_range = _value_range(value_range, "RandomBrightness")

    def call(self, data: torch.Tensor, training: bool = True) -> torch.Tensor:
        images, unbatched = self._images(data)
        if training:
            delta = self._uniform((images.shape[0], 1, 1, 1), self._lower, self._upper, images.device)
            images = (images + (delta * (self.value_range[1] - self.value_range[0])).to(images.dtype))
            images = images.clamp(*self.value_range)
        return images[0] if unbatched else images

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": list(self.value_range)}
