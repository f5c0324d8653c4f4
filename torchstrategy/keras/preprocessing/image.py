"""`keras.preprocessing.image` (also in `keras.utils`): PIL-based load_img / save_img, the array <-> PIL
image conversions, and smart_resize (centred aspect-ratio crop + tf.image.resize), as in Keras 3."""
from __future__ import annotations

import io
import os
import pathlib
from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy import image as tf_image
from torchstrategy.keras.dataset_utils import _crop_box, _import_pil

_PIL_FILTERS = {"nearest": "NEAREST", "bilinear": "BILINEAR", "bicubic": "BICUBIC", "hamming": "HAMMING",
                "box": "BOX", "lanczos": "LANCZOS"}


def _check_data_format(data_format: Optional[str]) -> str:
    data_format = "channels_last" if data_format is None else str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got {data_format!r}.")
    return data_format


def load_img(path: Any, color_mode: str = "rgb", target_size: Optional[Sequence[int]] = None,
             interpolation: str = "nearest", keep_aspect_ratio: bool = False) -> Any:
    """Loads an image file (path or io.BytesIO) as a PIL image, resized with PIL to `target_size` (height, width).

    >>> img = load_img("cat.png", target_size=(64, 64))  # doctest: +SKIP
    """
    pil = _import_pil()
    if isinstance(path, io.BytesIO):
        img = pil.open(path)
    elif isinstance(path, (str, bytes, os.PathLike)):
        with open(pathlib.Path(os.fsdecode(path)).resolve(), "rb") as handle:
            img = pil.open(io.BytesIO(handle.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path).__name__}.")
    if color_mode == "grayscale":
        if img.mode not in ("L", "I;16", "I"):
            img = img.convert("L")
    elif color_mode in ("rgb", "rgba"):
        if img.mode != color_mode.upper():
            img = img.convert(color_mode.upper())
    else:
        raise ValueError(f'color_mode must be "grayscale", "rgb", or "rgba", got {color_mode!r}.')
    if target_size is None:
        return img
    size = (int(target_size[1]), int(target_size[0]))  # PIL takes (width, height)
    if img.size == size:
        return img
    if interpolation not in _PIL_FILTERS:
        raise ValueError(f"Invalid interpolation method {interpolation!r}. Supported methods are "
                         f"{', '.join(_PIL_FILTERS)}.")
    resample = getattr(pil, _PIL_FILTERS[interpolation])
    if not keep_aspect_ratio:
        return img.resize(size, resample)
    width, height = img.size
    crop_height = min(height, (width * size[1]) // size[0])  # Keras floors here (integer division)
    crop_width = min(width, (height * size[0]) // size[1])
    top, left = (height - crop_height) // 2, (width - crop_width) // 2
    return img.resize(size, resample, box=(left, top, left + crop_width, top + crop_height))


def img_to_array(img: Any, data_format: Optional[str] = None, dtype: Any = None) -> np.ndarray:
    """A PIL image (or array) as a rank-3 float32 NumPy array (a grayscale image gets a channel axis)."""
    data_format = _check_data_format(data_format)
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 2:
        return x.reshape((1,) + x.shape if data_format == "channels_first" else x.shape + (1,))
    if x.ndim != 3:
        raise ValueError(f"Unsupported image shape: {x.shape}; expected (height, width) or (height, width, channels).")
    return x.transpose(2, 0, 1) if data_format == "channels_first" else x


def array_to_img(x: Any, data_format: Optional[str] = None, scale: bool = True, dtype: Any = None) -> Any:
    """A rank-3 array as a PIL image; `scale` stretches the values to 0..255 first (min -> 0, max -> 255)."""
    pil = _import_pil()
    data_format = _check_data_format(data_format)
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    x = np.array(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x /= top
        x *= 255
    channels = x.shape[2]
    if channels in (3, 4):
        return pil.fromarray(x.astype("uint8"), "RGB" if channels == 3 else "RGBA")
    if channels == 1:
        if np.max(x) > 255:  # 32-bit integer grayscale (PIL mode "I")
            return pil.fromarray(x[:, :, 0].astype("int32"), "I")
        return pil.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}; an image has 1, 3 or 4 channels.")


def save_img(path: Any, x: Any, data_format: Optional[str] = None, file_format: Optional[str] = None,
             scale: bool = True, **kwargs: Any) -> None:
    """Saves a rank-3 array as an image file (JPEG drops an alpha channel, as Keras does)."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and (file_format == "jpg" or file_format == "jpeg"
                               or str(path).lower().endswith((".jpg", ".jpeg"))):
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def smart_resize(x: Any, size: Sequence[int], interpolation: str = "bilinear",
                 data_format: str = "channels_last", **kwargs: Any) -> torch.Tensor:
    """Resizes image(s) to `size` without distortion: the largest centred crop of the target aspect
    ratio, then tf.image.resize. Takes (H, W, C) or (N, H, W, C) (channels_first: (C, H, W) / (N, C, H, W)).

    >>> smart_resize(np.zeros((40, 20, 3)), (10, 10)).shape
    torch.Size([10, 10, 3])
    """
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers, but got: {size}.")
    data_format = _check_data_format(data_format)
    images = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))
    if images.dim() not in (3, 4):
        raise ValueError(f"Expected an image array with shape (height, width, channels) or (batch_size, height, "
                         f"width, channels), but got input with incorrect rank, of shape {tuple(images.shape)}.")
    if data_format == "channels_first":
        images = images.movedim(-3, -1)
    height, width = images.shape[-3], images.shape[-2]
    top, left, crop_height, crop_width = _crop_box(height, width, int(size[0]), int(size[1]))
    cropped = images[..., top:top + crop_height, left:left + crop_width, :]
    if not cropped.is_floating_point() and interpolation != "nearest":
        cropped = cropped.to(torch.float32)
    out = tf_image.resize(cropped, [int(size[0]), int(size[1])], method=interpolation)
    return out.movedim(-1, -3) if data_format == "channels_first" else out


# The legacy augmentation API lives in its own modules (they use the helpers above, so they load last).
from torchstrategy.keras.preprocessing.image_generator import ImageDataGenerator  # noqa: E402,F401
from torchstrategy.keras.preprocessing.image_iterators import (  # noqa: E402,F401
    DirectoryIterator,
    Iterator,
    NumpyArrayIterator,
)
from torchstrategy.keras.preprocessing.image_transforms import (  # noqa: E402,F401
    apply_affine_transform,
    apply_brightness_shift,
    apply_channel_shift,
    random_brightness,
    random_channel_shift,
    random_rotation,
    random_shear,
    random_shift,
    random_zoom,
)
