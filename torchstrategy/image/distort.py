"""tf.image's sampled crops and glimpses: sample_distorted_bounding_box (and its stateless form), following TF's
kernel (aspect ratio, area range, object cover, attempts), and extract_glimpse (TF 2's offsets and noise)."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import random as tf_random
from torchstrategy.image.core import _as_tensor, _generator


def _round(value: float) -> int:
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def _random_crop(width: int, height: int, min_area_fraction: float, max_area_fraction: float, aspect: float,
                 draw: Any) -> Optional[tuple]:
    """One candidate crop (x, y, w, h) of `aspect` with its area in the fractions' range, or None."""
    if max_area_fraction <= 0 or aspect <= 0 or width <= 0 or height <= 0 or min_area_fraction > max_area_fraction:
        return None
    min_area, max_area = min_area_fraction * width * height, max_area_fraction * width * height
    crop_height = _round(math.sqrt(min_area / aspect))
    max_height = _round(math.sqrt(max_area / aspect))
    if _round(max_height * aspect) > width:
        max_height = int((width + 0.5 - 1e-7) / aspect)
        if _round(max_height * aspect) > width:
            max_height -= 1
    max_height = min(max_height, height)
    crop_height = min(crop_height, max_height)
    if crop_height < max_height:
        crop_height += int(draw() * (max_height - crop_height + 1))
    crop_width = _round(crop_height * aspect)
    if crop_width * crop_height < min_area:
        crop_height += 1
        crop_width = _round(crop_height * aspect)
    area = crop_width * crop_height
    if area < min_area or area > max_area or crop_width > width or crop_height > height or min(crop_width,
                                                                                                 crop_height) <= 0:
        return None
    y = int(draw() * (height - crop_height)) if crop_height < height else 0
    x = int(draw() * (width - crop_width)) if crop_width < width else 0
    return x, y, crop_width, crop_height


def _covers(crop: tuple, boxes: list, fraction: float) -> bool:
    x, y, w, h = crop
    for bx0, by0, bx1, by1 in boxes:
        area = (bx1 - bx0) * (by1 - by0)
        if area <= 0:
            continue
        inter = max(0, min(x + w, bx1) - max(x, bx0)) * max(0, min(y + h, by1) - max(y, by0))
        if inter / area >= fraction:
            return True
    return False


def _sample(image_size: Any, bounding_boxes: Any, draw: Any, min_object_covered: Any, aspect_ratio_range: Any,
            area_range: Any, max_attempts: Any, use_image_if_no_bounding_boxes: Any) -> tuple:
    size = [int(v) for v in np.asarray(image_size.tolist() if isinstance(image_size, torch.Tensor) else image_size)]
    if len(size) != 3:
        raise ValueError(f"tf.image.sample_distorted_bounding_box: image_size must be [height, width, channels], "
                         f"got {size}.")
    height, width = size[0], size[1]
    boxes = np.asarray(bounding_boxes.tolist() if isinstance(bounding_boxes, torch.Tensor) else bounding_boxes,
                       dtype=np.float32).reshape(-1, 4)
    if ((boxes < 0) | (boxes > 1)).any():
        raise ValueError("tf.image.sample_distorted_bounding_box: all bounding box coordinates must be in [0.0, 1.0].")
    pixel_boxes = [(int(b[1] * width), int(b[0] * height), int(b[3] * width), int(b[2] * height)) for b in boxes]
    if not pixel_boxes:
        if not use_image_if_no_bounding_boxes:
            raise ValueError("tf.image.sample_distorted_bounding_box: no bounding boxes provided as input; pass "
                             "use_image_if_no_bounding_boxes=True to sample from the whole image.")
        pixel_boxes = [(0, 0, width, height)]
    low_aspect, high_aspect = (0.75, 1.33) if aspect_ratio_range is None else (float(v) for v in aspect_ratio_range)
    low_area, high_area = (0.05, 1.0) if area_range is None else (float(v) for v in area_range)
    attempts = 100 if max_attempts is None else int(max_attempts)
    if not (0 < low_aspect <= high_aspect and 0 < low_area <= high_area <= 1 and attempts >= 1):
        raise ValueError("tf.image.sample_distorted_bounding_box: need 0 < aspect_ratio_range[0] <= [1], "
                         "0 < area_range[0] <= area_range[1] <= 1 and max_attempts >= 1.")
    crop = (0, 0, width, height)
    for _ in range(attempts):
        aspect = draw() * (high_aspect - low_aspect) + low_aspect
        candidate = _random_crop(width, height, low_area, high_area, aspect, draw)
        if candidate is not None and _covers(candidate, pixel_boxes, float(min_object_covered)):
            crop = candidate
            break
    x, y, w, h = crop
    begin = torch.tensor([y, x, 0], dtype=torch.int32)
    extent = torch.tensor([h, w, -1], dtype=torch.int32)
    box = torch.tensor([[[y / height, x / width, (y + h) / height, (x + w) / width]]], dtype=torch.float32)
    return begin, extent, box


def sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any, seed: int = 0, min_object_covered: Any = 0.1,
                                  aspect_ratio_range: Any = None, area_range: Any = None, max_attempts: Any = None,
                                  use_image_if_no_bounding_boxes: Any = None, name: Optional[str] = None) -> tuple:
    """A random crop (begin, size, bbox) for tf.slice: aspect ratio from `aspect_ratio_range` (0.75-1.33), area
    fraction from `area_range` (0.05-1), covering at least `min_object_covered` of one of `bounding_boxes`
    ([batch, N, 4] normalized); the whole image after `max_attempts` (100) failures. seed=0: unseeded."""
    generator = _generator(seed if seed else None)
    return _sample(image_size, bounding_boxes, lambda: float(torch.rand((), generator=generator)), min_object_covered,
                   aspect_ratio_range, area_range, max_attempts, use_image_if_no_bounding_boxes)


def stateless_sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any, seed: Any,
                                            min_object_covered: Any = 0.1, aspect_ratio_range: Any = None,
                                            area_range: Any = None, max_attempts: Any = None,
                                            use_image_if_no_bounding_boxes: Any = None,
                                            name: Optional[str] = None) -> tuple:
    """sample_distorted_bounding_box fixed by the seed pair."""
    stream = iter(tf_random.stateless_uniform([1 + 3 * (100 if max_attempts is None else int(max_attempts))], seed)
                  .tolist())
    return _sample(image_size, bounding_boxes, lambda: next(stream), min_object_covered, aspect_ratio_range,
                   area_range, max_attempts, use_image_if_no_bounding_boxes)


def extract_glimpse(input: Any, size: Any, offsets: Any, centered: bool = True, normalized: bool = True,
                    noise: str = "uniform", name: Optional[str] = None) -> torch.Tensor:
    """Windows of `size` [h, w] from each image of [batch, H, W, C] at `offsets` [batch, 2] (y, x): normalized and
    centered offsets in [-1, 1] place the window's centre ((0, 0) is the image centre); otherwise the offset is
    the window's top-left corner (from the image centre when centered, in pixels unless normalized), truncated.
    Pixels outside the image are 'uniform' noise (between the image channel's min and max), 'gaussian' (its mean
    and std) or 'zero'."""
    if noise not in ("uniform", "gaussian", "zero", ""):
        raise ValueError(f"tf.image.extract_glimpse: noise must be 'uniform', 'gaussian' or 'zero', got {noise!r}.")
    images = _as_tensor(input).to(torch.float32)
    if images.dim() != 4:
        raise ValueError(f"tf.image.extract_glimpse needs input [batch, h, w, c], got {tuple(images.shape)}.")
    glimpse_h, glimpse_w = (int(v) for v in np.asarray(size.tolist() if isinstance(size, torch.Tensor) else size))
    points = np.asarray(offsets.tolist() if isinstance(offsets, torch.Tensor) else offsets, np.float32).reshape(-1, 2)
    batch, height, width, channels = images.shape
    if len(points) != batch:
        raise ValueError(f"tf.image.extract_glimpse: offsets must be [batch, 2] = [{batch}, 2], got {points.shape}.")
    device = images.device
    out = torch.zeros(batch, glimpse_h, glimpse_w, channels, device=device)
    for b, (y, x) in enumerate(points.astype(np.float64)):
        if normalized:
            y, x = y * height, x * width
            if centered:
                y, x = y / 2 + height / 2 - glimpse_h / 2, x / 2 + width / 2 - glimpse_w / 2
        elif centered:
            y, x = y + height / 2, x + width / 2
        top, left = int(y), int(x)  # truncation toward zero, as TF
        image = images[b]
        if noise == "uniform":
            low, high = image.amin(dim=(0, 1)), image.amax(dim=(0, 1))
            fill = low + (high - low) * torch.rand(glimpse_h, glimpse_w, channels, device=device)
        elif noise == "gaussian":
            fill = image.mean(dim=(0, 1)) + image.std(dim=(0, 1)) * torch.randn(glimpse_h, glimpse_w, channels,
                                                                                device=device)
        else:
            fill = torch.zeros(glimpse_h, glimpse_w, channels, device=device)
        rows, cols = torch.arange(glimpse_h, device=device) + top, torch.arange(glimpse_w, device=device) + left
        inside = ((rows >= 0) & (rows < height))[:, None] & ((cols >= 0) & (cols < width))[None, :]
        picked = image[rows.clamp(0, height - 1)][:, cols.clamp(0, width - 1)]
        out[b] = torch.where(inside[..., None], picked, fill)
    return out
