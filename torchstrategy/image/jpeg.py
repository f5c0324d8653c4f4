"""tf.io/tf.image decode_jpeg and encode_jpeg on Pillow's libjpeg, with TF's options: channels, DCT-domain
downscaling (ratio), the accurate IDCT, and an encoder whose bytes equal TF's for the same options."""
from __future__ import annotations

import io
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.image.core import _as_tensor, _contents, _decode, _pillow

_RATIOS = (1, 2, 4, 8)
_DCT_METHODS = ("", "INTEGER_FAST", "INTEGER_ACCURATE")
_FORMATS = {"": (1, 3), "grayscale": (1,), "rgb": (3,)}
_DENSITY_UNITS = {"in": 1, "cm": 2}  # the JFIF header's codes


def _check_decode_options(channels: int, ratio: int, fancy_upscaling: bool, acceptable_fraction: float,
                          dct_method: str) -> None:
    if channels not in (0, 1, 3):
        raise ValueError(f"tf.io.decode_jpeg: channels must be 0 (as stored), 1 or 3, got {channels!r}.")
    if ratio not in _RATIOS:
        raise ValueError(f"tf.io.decode_jpeg: ratio must be 1, 2, 4 or 8, got {ratio!r}.")
    if dct_method not in _DCT_METHODS:
        raise ValueError(f"tf.io.decode_jpeg: dct_method must be one of {list(_DCT_METHODS)}, got {dct_method!r}.")
    if dct_method == "INTEGER_FAST":
        raise NotImplementedError("tf.io.decode_jpeg: dct_method='INTEGER_FAST' is not available: Pillow's libjpeg "
                                  "decodes with the accurate integer IDCT only. Pass dct_method='INTEGER_ACCURATE' "
                                  "(pixels equal to TF's) or leave it ''.")
    if not fancy_upscaling:
        raise NotImplementedError("tf.io.decode_jpeg: fancy_upscaling=False is not available: Pillow's libjpeg "
                                  "always upsamples chroma smoothly. Leave fancy_upscaling=True.")
    if not 0 <= acceptable_fraction <= 1:
        raise ValueError(f"tf.io.decode_jpeg: acceptable_fraction must be in [0, 1], got {acceptable_fraction!r}.")


def decode_jpeg(contents: Any, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1, dct_method: str = "",
                name: Optional[str] = None) -> torch.Tensor:
    """Decodes JPEG bytes to an HWC uint8 tensor, as tf.io.decode_jpeg.

    `channels` 0 keeps the stored channels, 1 decodes to gray in libjpeg, 3 to RGB. `ratio` (1, 2, 4
    or 8) downscales while decoding, in the DCT domain as TF does, to ceil(height / ratio) x
    ceil(width / ratio). `dct_method='INTEGER_ACCURATE'` gives TF's pixels exactly; '' (TF's default,
    its fast IDCT) is decoded with the accurate IDCT here, which can differ by a few levels;
    'INTEGER_FAST' and `fancy_upscaling=False` raise NotImplementedError. `try_recover_truncated` and
    `acceptable_fraction` only act on truncated data: truncated contents raise ValueError at their
    defaults (as TF does) and NotImplementedError when set, since Pillow fills the missing lines
    differently from TF.
    """
    _check_decode_options(channels, ratio, fancy_upscaling, acceptable_fraction, dct_method)
    Image = _pillow()
    data = _contents(contents, "decode_jpeg")
    try:
        picture = Image.open(io.BytesIO(data))
    except OSError as error:
        raise ValueError(f"tf.io.decode_jpeg: the contents are not a decodable image ({error}).") from None
    if picture.format != "JPEG":  # TF's decoder also reads other formats through decode_image's path
        if ratio != 1:
            raise ValueError(f"tf.io.decode_jpeg: ratio={ratio} needs JPEG contents, got {picture.format}.")
        return _decode(data, channels, "decode_jpeg")
    width, height = picture.size
    # draft() makes libjpeg do the colour conversion to gray and the DCT-domain scaling, as TF's libjpeg does.
    picture.draft("L" if channels == 1 else picture.mode,
                  None if ratio == 1 else (max(1, width // ratio), max(1, height // ratio)))
    wanted = (-(-width // ratio), -(-height // ratio))
    if picture.size != wanted:
        raise NotImplementedError(f"tf.io.decode_jpeg: ratio={ratio} on a {width}x{height} image (smaller than "
                                  "the ratio) is not available here; decode with ratio=1 and resize.")
    try:
        picture.load()
    except OSError as error:
        if "truncated" not in str(error):
            raise ValueError(f"tf.io.decode_jpeg: the contents are not a decodable JPEG ({error}).") from None
        if try_recover_truncated or acceptable_fraction < 1:
            raise NotImplementedError(
                "tf.io.decode_jpeg: the JPEG is truncated; recovering it (try_recover_truncated=True or "
                "acceptable_fraction<1) is not available here because Pillow fills the missing lines "
                "differently from TF. Re-encode or drop the file.") from None
        raise ValueError(f"tf.io.decode_jpeg: the JPEG is truncated ({error}). TF refuses it too unless "
                         "try_recover_truncated=True.") from None
    mode = {1: "L", 3: "RGB"}.get(channels, picture.mode if picture.mode == "L" else "RGB")
    array = np.asarray(picture.convert(mode), dtype=np.uint8)
    return torch.from_numpy((array[..., None] if array.ndim == 2 else array).copy())


def _check_encode_options(tensor: torch.Tensor, format: str, quality: int, density_unit: str,
                          x_density: int, y_density: int) -> None:
    if format not in _FORMATS:
        raise ValueError(f"tf.io.encode_jpeg: format must be '', 'grayscale' or 'rgb', got {format!r}.")
    if tensor.dtype != torch.uint8 or tensor.dim() != 3:
        raise ValueError(f"tf.io.encode_jpeg: expects a uint8 (height, width, channels) image, got "
                         f"{tensor.dtype} of shape {tuple(tensor.shape)}.")
    if tensor.shape[-1] not in _FORMATS[format]:
        wanted = " or ".join(str(c) for c in _FORMATS[format])
        raise ValueError(f"tf.io.encode_jpeg: format {format!r} expects {wanted} channels, got shape "
                         f"{tuple(tensor.shape)}.")
    if not 0 <= quality <= 100:
        raise ValueError(f"tf.io.encode_jpeg: quality must be in [0, 100], got {quality}.")
    if density_unit not in _DENSITY_UNITS:
        raise ValueError(f"tf.io.encode_jpeg: density_unit must be 'in' or 'cm', got {density_unit!r}.")
    for label, value in (("x_density", x_density), ("y_density", y_density)):
        if not 0 <= value <= 0xFFFF:
            raise ValueError(f"tf.io.encode_jpeg: {label} must fit the JFIF header (0..65535), got {value}.")


def encode_jpeg(image: Any, format: str = "", quality: int = 95, progressive: bool = False,
                optimize_size: bool = False, chroma_downsampling: bool = True, density_unit: str = "in",
                x_density: int = 300, y_density: int = 300, xmp_metadata: str = "",
                name: Optional[str] = None) -> bytes:
    """Encodes an HWC uint8 image (1 channel: gray, 3: RGB) as JPEG bytes, as tf.io.encode_jpeg.

    Every option is honoured and the bytes equal TF 2.21's for the same image and options: `quality`
    0-100, `progressive`, `optimize_size` (optimised Huffman tables), `chroma_downsampling` (4:2:0,
    else 4:4:4), the JFIF density (`density_unit` 'in' or 'cm', `x_density`, `y_density`) and an XMP
    packet. `format` 'grayscale' / 'rgb' insists on 1 / 3 channels.
    """
    Image = _pillow()
    tensor = _as_tensor(image)
    quality = int(quality)
    _check_encode_options(tensor, format, quality, density_unit, int(x_density), int(y_density))
    array = tensor.cpu().numpy()
    options: dict = {"quality": quality, "progressive": bool(progressive), "optimize": bool(optimize_size),
                     "subsampling": 2 if chroma_downsampling and array.shape[-1] == 3 else 0, "dpi": (1, 1)}
    if xmp_metadata:
        options["xmp"] = xmp_metadata.encode() if isinstance(xmp_metadata, str) else bytes(xmp_metadata)
    buffer = io.BytesIO()
    Image.fromarray(array[..., 0] if array.shape[-1] == 1 else array).save(buffer, format="JPEG", **options)
    coded = bytearray(buffer.getvalue())
    # Pillow writes a JFIF header in dots per inch; its unit and densities are set to TF's here.
    if coded[2:4] != b"\xff\xe0" or coded[6:11] != b"JFIF\x00":
        raise RuntimeError("tf.io.encode_jpeg: Pillow wrote no JFIF header where expected; this Pillow "
                           "version is not supported for encode_jpeg.")
    coded[13] = _DENSITY_UNITS[density_unit]
    coded[14:18] = int(x_density).to_bytes(2, "big") + int(y_density).to_bytes(2, "big")
    return bytes(coded)


__all__ = ["decode_jpeg", "encode_jpeg"]
