"""tf.image's random augmentations beyond flips/brightness/contrast: random_crop, random_hue, random_saturation,
random_jpeg_quality (with adjust_jpeg_quality), and the stateless_random_* family, fixed by a seed pair."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import random as tf_random
from torchstrategy.image import color
from torchstrategy.image.core import (_as_tensor, _batched, _generator, _unbatch, adjust_brightness, adjust_contrast,
                                      convert_image_dtype)
from torchstrategy.image.jpeg import decode_jpeg, encode_jpeg


def _uniform(low: float, high: float, seed: Optional[int], shape: tuple = ()) -> torch.Tensor:
    return low + (high - low) * torch.rand(shape, generator=_generator(seed))


def _stateless(low: float, high: float, seed: Any, shape: tuple = ()) -> torch.Tensor:
    return tf_random.stateless_uniform(list(shape), seed, minval=low, maxval=high, dtype=torch.float32)


def _check_hue(max_delta: float, op: str) -> None:
    if not 0.0 <= float(max_delta) <= 0.5:
        raise ValueError(f"tf.image.{op}: max_delta must be in the interval [0, 0.5], got {max_delta!r}.")


def _check_range(lower: float, upper: float, op: str) -> None:
    if float(upper) <= float(lower):
        raise ValueError(f"tf.image.{op}: upper must be > lower, got lower={lower!r}, upper={upper!r}.")
    if float(lower) < 0:
        raise ValueError(f"tf.image.{op}: lower must be non-negative, got {lower!r}.")


def _check_quality(low: int, high: int, op: str) -> None:
    if not 0 <= int(low) < int(high) <= 100:
        raise ValueError(f"tf.image.{op}: need 0 <= min_jpeg_quality < max_jpeg_quality <= 100, got "
                         f"{low!r} and {high!r}.")


def adjust_jpeg_quality(image: Any, jpeg_quality: int, dct_method: str = "",
                        name: Optional[str] = None) -> torch.Tensor:
    """Encodes each image as JPEG at `jpeg_quality` (0-100) and decodes it again (Pillow's libjpeg), keeping
    the dtype (floats are taken as [0, 1])."""
    if not 0 <= int(jpeg_quality) <= 100:
        raise ValueError(f"tf.image.adjust_jpeg_quality: jpeg_quality must be in [0, 100], got {jpeg_quality!r}.")
    batch, single = _batched(image, "adjust_jpeg_quality")
    if batch.shape[-1] not in (1, 3):
        raise ValueError(f"tf.image.adjust_jpeg_quality needs 1 or 3 channels, got {batch.shape[-1]}.")
    pixels = convert_image_dtype(batch, torch.uint8, saturate=True)
    coded = torch.stack([decode_jpeg(encode_jpeg(picture, quality=int(jpeg_quality)), channels=batch.shape[-1])
                         for picture in pixels])
    return _unbatch(convert_image_dtype(coded, batch.dtype), single)


def _crop(value: Any, size: Any, draw: Any, op: str) -> torch.Tensor:
    tensor = _as_tensor(value)
    sizes = [int(s) for s in (size.tolist() if isinstance(size, (torch.Tensor, np.ndarray)) else size)]
    if len(sizes) != tensor.dim():
        raise ValueError(f"tf.image.{op}: size needs one entry per axis of value ({tensor.dim()}), got {sizes}.")
    if any(s > d or s < 0 for s, d in zip(sizes, tensor.shape)):
        raise ValueError(f"tf.image.{op}: need 0 <= size <= value.shape, got size {sizes} for shape "
                         f"{list(tensor.shape)}.")
    limits = torch.tensor([d - s + 1 for s, d in zip(sizes, tensor.shape)], dtype=torch.float64)
    offsets = torch.floor(draw(len(sizes)).to(torch.float64) * limits).long().minimum(limits.long() - 1).tolist()
    index = tuple(slice(o, o + s) for o, s in zip(offsets, sizes))
    return tensor[index]


def random_crop(value: Any, size: Any, seed: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """A random `size`-shaped slice of `value` (any rank), the offset uniform over the valid positions."""
    return _crop(value, size, lambda n: torch.rand(n, generator=_generator(seed)), "random_crop")


def stateless_random_crop(value: Any, size: Any, seed: Any, name: Optional[str] = None) -> torch.Tensor:
    """random_crop fixed by the seed pair."""
    return _crop(value, size, lambda n: _stateless(0.0, 1.0, seed, (n,)), "stateless_random_crop")


def random_hue(image: Any, max_delta: float, seed: Optional[int] = None) -> torch.Tensor:
    """adjust_hue by one delta drawn from [-max_delta, max_delta] (max_delta in [0, 0.5])."""
    _check_hue(max_delta, "random_hue")
    return color.adjust_hue(image, float(_uniform(-max_delta, max_delta, seed)))


def stateless_random_hue(image: Any, max_delta: float, seed: Any) -> torch.Tensor:
    """random_hue fixed by the seed pair."""
    _check_hue(max_delta, "stateless_random_hue")
    return color.adjust_hue(image, float(_stateless(-max_delta, max_delta, seed)))


def random_saturation(image: Any, lower: float, upper: float, seed: Optional[int] = None) -> torch.Tensor:
    """adjust_saturation by one factor drawn from [lower, upper)."""
    _check_range(lower, upper, "random_saturation")
    return color.adjust_saturation(image, float(_uniform(lower, upper, seed)))


def stateless_random_saturation(image: Any, lower: float, upper: float, seed: Any = None) -> torch.Tensor:
    """random_saturation fixed by the seed pair."""
    _check_range(lower, upper, "stateless_random_saturation")
    if seed is None:
        raise ValueError("tf.image.stateless_random_saturation needs a seed pair, e.g. seed=(1, 2).")
    return color.adjust_saturation(image, float(_stateless(lower, upper, seed)))


def stateless_random_brightness(image: Any, max_delta: float, seed: Any) -> torch.Tensor:
    """adjust_brightness by one delta from [-max_delta, max_delta), fixed by the seed pair."""
    if float(max_delta) < 0:
        raise ValueError(f"tf.image.stateless_random_brightness: max_delta must be non-negative, got {max_delta!r}.")
    return adjust_brightness(image, float(_stateless(-max_delta, max_delta, seed)))


def stateless_random_contrast(image: Any, lower: float, upper: float, seed: Any) -> torch.Tensor:
    """adjust_contrast by one factor from [lower, upper), fixed by the seed pair."""
    _check_range(lower, upper, "stateless_random_contrast")
    return adjust_contrast(image, float(_stateless(lower, upper, seed)))


def _stateless_flip(image: Any, seed: Any, axis: int, op: str) -> torch.Tensor:
    batch, single = _batched(image, op)
    flips = _stateless(0.0, 1.0, seed, (batch.shape[0],)) < 0.5  # each image on its own
    flips = flips.reshape(-1, 1, 1, 1).to(batch.device)
    return _unbatch(torch.where(flips, batch.flip(axis), batch), single)


def stateless_random_flip_left_right(image: Any, seed: Any) -> torch.Tensor:
    """Flips each image left-right with probability 1/2, fixed by the seed pair."""
    return _stateless_flip(image, seed, 2, "stateless_random_flip_left_right")


def stateless_random_flip_up_down(image: Any, seed: Any) -> torch.Tensor:
    """Flips each image upside down with probability 1/2, fixed by the seed pair."""
    return _stateless_flip(image, seed, 1, "stateless_random_flip_up_down")


def random_jpeg_quality(image: Any, min_jpeg_quality: int, max_jpeg_quality: int,
                        seed: Optional[int] = None) -> torch.Tensor:
    """adjust_jpeg_quality at a quality drawn from [min_jpeg_quality, max_jpeg_quality)."""
    _check_quality(min_jpeg_quality, max_jpeg_quality, "random_jpeg_quality")
    quality = int(torch.randint(int(min_jpeg_quality), int(max_jpeg_quality), (), generator=_generator(seed)))
    return adjust_jpeg_quality(image, quality)


def stateless_random_jpeg_quality(image: Any, min_jpeg_quality: int, max_jpeg_quality: int, seed: Any) -> torch.Tensor:
    """random_jpeg_quality fixed by the seed pair."""
    _check_quality(min_jpeg_quality, max_jpeg_quality, "stateless_random_jpeg_quality")
    quality = tf_random.stateless_uniform([], seed, minval=int(min_jpeg_quality), maxval=int(max_jpeg_quality),
                                          dtype=torch.int32)
    return adjust_jpeg_quality(image, int(quality))
