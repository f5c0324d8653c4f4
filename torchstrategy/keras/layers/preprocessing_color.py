"""Keras 3's color augmentation layers: AutoContrast, Solarization, RandomInvert, RandomGrayscale,
RandomPosterization, RandomColorDegeneration, RandomSharpness, RandomGaussianBlur (random ones act only in training), Equalization."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.core import _normalize_data_format

_GRAY = (0.2989, 0.5870, 0.1140)  # TF's rgb_to_grayscale weights


def _value_range(layer: str, value_range: Any) -> list:
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(f"{layer}: the `value_range` argument should be a list of two numbers. "
                         f"Received: value_range={value_range}")
    return sorted(value_range)


def _factor(layer: str, factor: Any, bounds: tuple) -> tuple:
    """Keras's _set_factor: a pair is sorted; a number f gives (max(-|f|, low), |f|)."""
    message = (f"{layer}: the `factor` argument should be a number (or a list of two numbers) in the range "
               f"[{bounds[0]}, {bounds[1]}]. Received: factor={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        low, high = sorted(factor)
        return low, high
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if not bounds[0] <= factor <= bounds[1]:
            raise ValueError(message)
        return max(-abs(factor), bounds[0]), abs(factor)
    raise ValueError(message)


def _rescale(images: torch.Tensor, source: Sequence[float], target: Sequence[float]) -> torch.Tensor:
    if source[0] == target[0] and source[1] == target[1]:
        return images
    unit = (images - source[0]) / (source[1] - source[0])
    return unit * (target[1] - target[0]) + target[0]


class _ColorLayer(Layer):
    """Batches 3-D images, moves channels last, draws per-image uniforms from a seeded stream."""

    def __init__(self, seed: Optional[int] = None, data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed = seed
        self.data_format = _normalize_data_format(data_format)
        self._generators: dict = {}
        self.built = True

    def _uniform(self, count: int, low: float, high: float, device: torch.device) -> torch.Tensor:
        generator = None
        if self.seed is not None:
            if device not in self._generators:
                self._generators[device] = torch.Generator(device=device).manual_seed(int(self.seed))
            generator = self._generators[device]
        return low + (high - low) * torch.rand((count,), generator=generator, device=device)

    def call(self, data: Any, training: bool = True) -> torch.Tensor:
        images = backend.to_tensor(data)
        if images.dim() not in (3, 4):
            raise ValueError(f"{type(self).__name__} expects rank 3 or 4 images, got shape {tuple(images.shape)}.")
        unbatched = images.dim() == 3
        x = images.unsqueeze(0) if unbatched else images
        x = x.to(self._compute_torch_dtype)
        if self.data_format == "channels_first":
            x = x.movedim(1, -1)
        x = self._transform(x, bool(training))
        if self.data_format == "channels_first":
            x = x.movedim(-1, 1)
        return x[0] if unbatched else x

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        raise NotImplementedError

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "seed": self.seed, "data_format": self.data_format}


def _grayscale(images: torch.Tensor) -> torch.Tensor:
    weights = torch.tensor(_GRAY, dtype=images.dtype, device=images.device)
    return (images * weights).sum(-1, keepdim=True)


class AutoContrast(_ColorLayer):
    """Stretches each image channel so its minimum maps to the bottom and its maximum to the top of
    `value_range` (always, in training and inference)."""

    def __init__(self, value_range: Sequence[float] = (0, 255), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value_range = _value_range("AutoContrast", value_range)

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        original = images
        x = _rescale(images, self.value_range, (0, 255))
        low = x.amin(dim=(1, 2), keepdim=True)
        high = x.amax(dim=(1, 2), keepdim=True)
        scale = torch.full_like(high, 255.0) / (high - low)  # a true division: 255.0 / t is 255 * (1 / t) in torch
        out = (x * scale - low * scale).clamp(0.0, 255.0)
        out = _rescale(out, (0, 255), self.value_range)
        return torch.where(torch.isnan(out), original, out)

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("seed")
        return {**config, "value_range": self.value_range}


class Solarization(_ColorLayer):
    """In training, adds a random `addition` then inverts (255 - x) every value at or above a random threshold,
    on the 0..255 scale of `value_range`."""

    def __init__(self, addition_factor: Any = 0.0, threshold_factor: Any = 0.0, value_range: Sequence[float] = (0, 255),
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, **kwargs)
        self.addition_factor = self._unit_pair("addition_factor", addition_factor)
        self.threshold_factor = self._unit_pair("threshold_factor", threshold_factor)
        self.value_range = _value_range("Solarization", value_range)

    @staticmethod
    def _unit_pair(name: str, factor: Any) -> tuple:
        values = list(factor) if isinstance(factor, (tuple, list)) else [0, factor]
        if len(values) != 2 or any(not 0 <= v <= 1 for v in values):
            raise ValueError(f"Solarization: the `{name}` argument should be a number (or a list of two numbers) in "
                             f"the range [0.0, 1.0]. Received: {name}={factor}")
        low, high = sorted(values)
        return low, high

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n = images.shape[0]
        # as Keras: the lower end is not scaled by 255, the upper end is
        additions = self._uniform(n, self.addition_factor[0], self.addition_factor[1] * 255, images.device)
        thresholds = self._uniform(n, self.threshold_factor[0], self.threshold_factor[1] * 255, images.device)
        shape = (n, 1, 1, 1)
        x = _rescale(images, self.value_range, (0, 255))
        x = (x + additions.reshape(shape).to(x.dtype)).clamp(0, 255)
        x = torch.where(x < thresholds.reshape(shape).to(x.dtype), x, 255 - x)
        return _rescale(x, (0, 255), self.value_range)

    def get_config(self) -> dict:
        config = super().get_config()
        return {**config, "addition_factor": self.addition_factor, "threshold_factor": self.threshold_factor,
                "value_range": self.value_range}


class RandomInvert(_ColorLayer):
    """In training, replaces each image by `value_range[1] - x` with a probability drawn from `factor`."""

    def __init__(self, factor: Any = 1.0, value_range: Sequence[float] = (0, 255), seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomInvert", factor, (0, 1))
        self.value_range = value_range

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n = images.shape[0]
        probability = self._uniform(n, self.factor[0], self.factor[1], images.device)
        invert = self._uniform(n, 0.0, 1.0, images.device) < probability
        return torch.where(invert.reshape(n, 1, 1, 1), self.value_range[1] - images, images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomGrayscale(_ColorLayer):
    """In training, turns each RGB image to grayscale (TF's weights, kept as 3 equal channels) with
    probability `factor`."""

    def __init__(self, factor: float = 0.5, data_format: Optional[str] = None, seed: Optional[int] = None,
                 **kwargs: Any) -> None:
        if factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n = images.shape[0]
        apply = (self._uniform(n, 0.0, 1.0, images.device) < self.factor).reshape(n, 1, 1, 1)
        return torch.where(apply, _grayscale(images).expand_as(images), images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor}


class RandomPosterization(_ColorLayer):
    """In training, keeps only the top `bits` bits of each 8-bit value (bits drawn from `factor` in [1, 8])."""

    def __init__(self, factor: Any, value_range: Sequence[float] = (0, 255), data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomPosterization", factor, (1, 8))
        self.value_range = _value_range("RandomPosterization", value_range)

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n = images.shape[0]
        if self.factor[0] != self.factor[1]:
            low, high = int(self.factor[0]), int(self.factor[1])
            bits = low + torch.floor(self._uniform(n, 0.0, 1.0, images.device) * (high - low)).long()
        else:
            bits = torch.full((n,), int(self.factor[0]), dtype=torch.long, device=images.device)
        shift = (8 - bits).reshape(n, 1, 1, 1)
        x = _rescale(images, self.value_range, (0, 255)).to(torch.uint8).long()
        x = ((x >> shift) << shift).to(images.dtype)
        return _rescale(x, (0, 255), self.value_range)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomColorDegeneration(_ColorLayer):
    """In training, blends each image toward its grayscale version by a factor drawn from `factor`."""

    def __init__(self, factor: Any, value_range: Sequence[float] = (0, 255), data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomColorDegeneration", factor, (-1, 1))
        self.value_range = _value_range("RandomColorDegeneration", value_range)

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n = images.shape[0]
        factor = self._uniform(n, self.factor[0], self.factor[1], images.device).reshape(n, 1, 1, 1).to(images.dtype)
        out = images + factor * (_grayscale(images) - images)
        return out.clamp(self.value_range[0], self.value_range[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomSharpness(_ColorLayer):
    """In training, blends each image with a smoothed copy (3x3 kernel, centre 5/13, rest 1/13):
    `x + (1 - 2f) * (smooth - x)` with f drawn from `factor`; 0.5 keeps the image."""

    def __init__(self, factor: Any, value_range: Sequence[float] = (0, 255), data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomSharpness", factor, (0, 1))
        self.value_range = _value_range("RandomSharpness", value_range)

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n, channels = images.shape[0], images.shape[-1]
        sharpness = 2 * self._uniform(n, self.factor[0], self.factor[1], images.device)
        a, b = 1.0 / 13.0, 5.0 / 13.0
        kernel = torch.tensor([[a, a, a], [a, b, a], [a, a, a]], dtype=images.dtype, device=images.device)
        x = images.movedim(-1, 1)
        smooth = F.conv2d(F.pad(x, (1, 1, 1, 1)), kernel.expand(channels, 1, 3, 3), groups=channels).movedim(1, -1)
        out = images + (1.0 - sharpness.reshape(n, 1, 1, 1).to(images.dtype)) * (smooth - images)
        return out.clamp(self.value_range[0], self.value_range[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class Equalization(_ColorLayer):
    """Histogram equalization of each channel (its histogram taken over the whole batch, `bins` bins on the
    0..255 scale of `value_range`), applied in training calls as Keras 3 does."""

    def __init__(self, value_range: Sequence[float] = (0, 255), bins: int = 256, data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        self.bins = bins
        self.value_range = _value_range("Equalization", value_range)

    def _equalize(self, channel: torch.Tensor) -> torch.Tensor:
        x = _rescale(channel, self.value_range, (0, 255))
        bins = self.bins
        indices = ((x.float() * (bins - 1)) / 255.0).to(torch.int32).clamp(0, bins - 1)
        hist = torch.bincount(indices.reshape(-1).long(), minlength=bins)
        if int((hist != 0).sum()) <= 1:
            return channel
        cdf = hist.cumsum(0).to(torch.float64)
        cdf_min = cdf[torch.nonzero(cdf)[0][0]]
        denominator = cdf[-1] - cdf_min
        denominator = torch.where(denominator == 0, torch.ones_like(denominator), denominator)
        table = torch.round((cdf - cdf_min) * 255 / denominator).clamp(0, 255).to(x.dtype)
        lookup = ((x / 255.0) * (bins - 1)).clamp(0, bins - 1).to(torch.int64)
        return _rescale(table[lookup], (0, 255), self.value_range)

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        return torch.stack([self._equalize(images[..., i]) for i in range(images.shape[-1])], dim=-1)

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("seed")
        return {**config, "bins": self.bins, "value_range": self.value_range}


def _odd_pair(value: Any) -> tuple:
    message = f"kernel_size must be an odd number. Received: kernel_size={value}"
    pair = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2 or any(not isinstance(v, (int, float)) or v % 2 == 0 for v in pair):
        raise ValueError(message)
    return pair


class RandomGaussianBlur(_ColorLayer):
    """In training, blurs each image with probability drawn from `factor` by a Gaussian kernel of `kernel_size`
    ('same' zero padding) whose sigma (one per axis, shared by the batch) is drawn from `sigma`."""

    def __init__(self, factor: Any = 1.0, kernel_size: Any = 3, sigma: Any = 1.0, value_range: Sequence[float] = (0, 255),
                 data_format: Optional[str] = None, seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor("RandomGaussianBlur", factor, (0, 1))
        self.kernel_size = _odd_pair(kernel_size)
        self.sigma = _factor("RandomGaussianBlur", sigma, (0, 1))
        self.value_range = value_range

    @staticmethod
    def _kernel1d(size: int, sigma: torch.Tensor) -> torch.Tensor:
        x = torch.arange(size, dtype=sigma.dtype) - (size - 1) / 2
        k = torch.exp(-0.5 * (x / sigma) ** 2)
        return k / k.sum()

    def _transform(self, images: torch.Tensor, training: bool) -> torch.Tensor:
        if not training:
            return images
        n, channels = images.shape[0], images.shape[-1]
        probability = self._uniform(n, self.factor[0], self.factor[1], images.device)
        apply = self._uniform(n, 0.0, 1.0, images.device) < probability
        sigma = self._uniform(2, self.sigma[0], self.sigma[1], images.device).to(images.dtype) + 1e-6
        kx = self._kernel1d(int(self.kernel_size[0]), sigma[0].cpu())
        ky = self._kernel1d(int(self.kernel_size[1]), sigma[1].cpu())
        kernel = torch.outer(ky, kx).reshape(int(self.kernel_size[0]), int(self.kernel_size[1])).to(images.device)
        kh, kw = kernel.shape
        x = images.movedim(-1, 1)
        top, left = (kh - 1) // 2, (kw - 1) // 2
        x = F.pad(x, (left, kw - 1 - left, top, kh - 1 - top))
        blurred = F.conv2d(x, kernel.expand(channels, 1, kh, kw), groups=channels).movedim(1, -1)
        out = torch.where(apply.reshape(n, 1, 1, 1), blurred, images)
        return out.clamp(self.value_range[0], self.value_range[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "kernel_size": self.kernel_size, "sigma": self.sigma,
                "value_range": self.value_range}
