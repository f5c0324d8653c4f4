"""tf.image's further codecs on Pillow: decode_bmp, decode_gif (all frames), decode_webp, is_jpeg,
extract_jpeg_shape and decode_and_crop_jpeg (the PNG/JPEG basics live in core)."""
from __future__ import annotations

import io
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.image.core import _contents, _decode, _pillow


def _magic(contents: Any, op: str) -> bytes:
    return _contents(contents, op)


def is_jpeg(contents: Any, name: Optional[str] = None) -> torch.Tensor:
    """Whether the bytes start with JPEG's signature (FF D8 FF), as a bool tensor."""
    return torch.tensor(_magic(contents, "is_jpeg")[:3] == b"\xff\xd8\xff")


def decode_bmp(contents: Any, channels: int = 0, name: Optional[str] = None) -> torch.Tensor:
    """Decodes BMP bytes to an HWC uint8 tensor (channels 0 = as stored, 1, 3 or 4)."""
    data = _magic(contents, "decode_bmp")
    if data[:2] != b"BM":
        raise ValueError("tf.io.decode_bmp: the contents are not a BMP file (no 'BM' signature).")
    return _decode(data, channels, "decode_bmp")


def decode_webp(contents: Any, channels: int = 0, dtype: Any = torch.uint8, name: Optional[str] = None) -> torch.Tensor:
    """Decodes WebP bytes to an HWC uint8 tensor."""
    data = _magic(contents, "decode_webp")
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise ValueError("tf.io.decode_webp: the contents are not a WebP file.")
    return _decode(data, channels, "decode_webp", dtype)


def decode_gif(contents: Any, name: Optional[str] = None) -> torch.Tensor:
    """Decodes every frame of a GIF to a uint8 tensor [frames, height, width, 3]."""
    Image = _pillow()
    data = _magic(contents, "decode_gif")
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        raise ValueError("tf.io.decode_gif: the contents are not a GIF file.")
    picture = Image.open(io.BytesIO(data))
    frames = []
    for index in range(getattr(picture, "n_frames", 1)):
        picture.seek(index)
        frames.append(np.asarray(picture.convert("RGB"), dtype=np.uint8))
    return torch.from_numpy(np.stack(frames))


def extract_jpeg_shape(contents: Any, output_type: Any = torch.int32, name: Optional[str] = None) -> torch.Tensor:
    """[height, width, channels] of a JPEG, read from its header without decoding the pixels."""
    Image = _pillow()
    data = _magic(contents, "extract_jpeg_shape")
    if data[:3] != b"\xff\xd8\xff":
        raise ValueError("tf.io.extract_jpeg_shape: the contents are not a JPEG file.")
    picture = Image.open(io.BytesIO(data))
    return torch.tensor([picture.height, picture.width, len(picture.getbands())], dtype=as_dtype(output_type))


def decode_and_crop_jpeg(contents: Any, crop_window: Any, channels: int = 0, ratio: int = 1,
                         fancy_upscaling: bool = True, try_recover_truncated: bool = False,
                         acceptable_fraction: float = 1, dct_method: str = "",
                         name: Optional[str] = None) -> torch.Tensor:
    """Decodes a JPEG and returns the crop_window [y, x, height, width] of it."""
    if ratio != 1 or try_recover_truncated or dct_method:
        raise NotImplementedError("tf.image.decode_and_crop_jpeg: ratio, try_recover_truncated and dct_method are "
                                  "supported at their defaults only.")
    window = [int(v) for v in (crop_window.tolist() if isinstance(crop_window, (torch.Tensor, np.ndarray))
                               else crop_window)]
    image = _decode(contents, channels, "decode_and_crop_jpeg")
    if len(window) != 4:
        raise ValueError(f"tf.image.decode_and_crop_jpeg: crop_window must be [y, x, height, width], got {window}.")
    y, x, height, width = window
    if y < 0 or x < 0 or height <= 0 or width <= 0 or y + height > image.shape[0] or x + width > image.shape[1]:
        raise ValueError(f"tf.image.decode_and_crop_jpeg: crop window {window} is not inside the "
                         f"{image.shape[0]}x{image.shape[1]} image.")
    return image[y:y + height, x:x + width]
