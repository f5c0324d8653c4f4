"""`tf.image` on torch tensors (NHWC batches or single HWC images): resizing as TF2, flips, crops and pads,
brightness/contrast, dtype conversion, grayscale, standardization, and PNG coding through Pillow (JPEG: jpeg.py)."""
from __future__ import annotations

import io
import math
from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype

_METHODS = ("bilinear", "nearest", "bicubic", "area")


class ResizeMethod:
    """The method names `tf.image.resize` takes (`tf.image.ResizeMethod.BILINEAR` is 'bilinear')."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"


def _as_tensor(image: Any) -> torch.Tensor:
    if isinstance(image, torch.Tensor):
        return image
    array = np.asarray(image)
    if not array.flags.writeable or not array.flags.c_contiguous:
        array = np.ascontiguousarray(array).copy()
    return torch.from_numpy(array)


def _batched(image: Any, op: str) -> tuple[torch.Tensor, bool]:
    """The image as NHWC and whether it was a single HWC image."""
    tensor = _as_tensor(image)
    if tensor.dim() not in (3, 4):
        raise ValueError(f"tf.image.{op}: expects an image of shape (height, width, channels) or a batch "
                         f"(batch, height, width, channels), got shape {tuple(tensor.shape)}.")
    return (tensor.unsqueeze(0), True) if tensor.dim() == 3 else (tensor, False)


def _unbatch(tensor: torch.Tensor, single: bool) -> torch.Tensor:
    return tensor[0] if single else tensor


def _max_of(dtype: torch.dtype) -> int:
    return torch.iinfo(dtype).max


# ----- resizing ----------------------------------------------------------------------------
def _bilinear_weights(in_size: int, out_size: int) -> torch.Tensor:
    # TF2 resize_bilinear, half-pixel centres: source = (o + 0.5) * scale - 0.5, taps clamped to the edge
    scale = torch.tensor(in_size / out_size, dtype=torch.float32)
    source = (torch.arange(out_size, dtype=torch.float32) + 0.5) * scale - 0.5
    floor = torch.floor(source)
    lerp = source - floor
    lower = floor.clamp(0, in_size - 1).long()
    upper = torch.ceil(source).clamp(0, in_size - 1).long()
    weights = torch.zeros(out_size, in_size, dtype=torch.float32)
    rows = torch.arange(out_size)
    weights.index_put_((rows, lower), 1.0 - lerp, accumulate=True)
    weights.index_put_((rows, upper), lerp, accumulate=True)
    return weights


def _keys_cubic(x: torch.Tensor) -> torch.Tensor:
    # Keys' cubic convolution kernel with a = -0.5 (TF2's 'bicubic'; torch's own bicubic uses a = -0.75)
    x = x.abs()
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return torch.where(x < 1.0, near, torch.where(x < 2.0, far, torch.zeros_like(x)))


def _bicubic_weights(in_size: int, out_size: int) -> torch.Tensor:
    # TF2 resize_bicubic (half-pixel centres): four taps around the source, the fraction quantised to
    # 1/1024 as TF's coefficient table is, taps outside the image dropped and the others renormalised
    scale = torch.tensor(in_size / out_size, dtype=torch.float32)
    source = (torch.arange(out_size, dtype=torch.float32) + 0.5) * scale - 0.5
    floor = torch.floor(source)
    frac = torch.round((source - floor) * 1024) / 1024
    rows = torch.arange(out_size)
    taps = [(floor + offset, _keys_cubic(frac - offset)) for offset in (-1, 0, 1, 2)]
    taps = [(index, torch.where((index >= 0) & (index <= in_size - 1), weight, torch.zeros_like(weight)))
            for index, weight in taps]
    total = sum(weight for _, weight in taps)
    weights = torch.zeros(out_size, in_size, dtype=torch.float32)
    for index, weight in taps:
        weights.index_put_((rows, index.clamp(0, in_size - 1).long()), weight / total, accumulate=True)
    return weights


def _area_weights(in_size: int, out_size: int) -> torch.Tensor:
    # each output pixel averages the input over its box [o * s, (o + 1) * s), partial pixels weighted
    scale = in_size / out_size
    starts = torch.arange(out_size, dtype=torch.float64).unsqueeze(1) * scale
    pixels = torch.arange(in_size, dtype=torch.float64).unsqueeze(0)
    overlap = (torch.minimum(pixels + 1, starts + scale) - torch.maximum(pixels, starts)).clamp_min(0)
    return (overlap / scale).to(torch.float32)


def _nearest_indices(in_size: int, out_size: int) -> torch.Tensor:
    scale = torch.tensor(in_size / out_size, dtype=torch.float32)
    source = torch.floor((torch.arange(out_size, dtype=torch.float32) + 0.5) * scale)
    return source.clamp(max=in_size - 1).long()


def _check_size(size: Any, op: str) -> tuple[int, int]:
    values = size.tolist() if isinstance(size, (torch.Tensor, np.ndarray)) else list(size)
    if len(values) != 2 or any(int(v) != v or int(v) <= 0 for v in values):
        raise ValueError(f"tf.image.{op}: size must be two positive integers [new_height, new_width], got {size!r}.")
    return int(values[0]), int(values[1])


def resize(images: Any, size: Sequence[int], method: str = ResizeMethod.BILINEAR, preserve_aspect_ratio: bool = False,
           antialias: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """`tf.image.resize` (TF2 semantics: half-pixel centres), without antialiasing.

    method: 'bilinear', 'nearest', 'bicubic' (Keys, a = -0.5, as TF's resize_bicubic) or 'area'. The result
    is float32 except for 'nearest', which keeps the input dtype. Measured against TF 2.21 on 0..255 values:
    nearest is exact, bilinear, bicubic and area agree to 2e-4 (float32 rounding).

    >>> resize(torch.ones(4, 6, 3), [2, 3]).shape
    torch.Size([2, 3, 3])
    """
    method = getattr(method, "value", method)
    if method not in _METHODS:
        raise ValueError(f"tf.image.resize: method {method!r} is not supported here; use one of {list(_METHODS)}.")
    if antialias:
        raise ValueError("tf.image.resize: antialias=True is not supported here; pass antialias=False (the default).")
    batch, single = _batched(images, "resize")
    height, width = _check_size(size, "resize")
    in_h, in_w = batch.shape[1], batch.shape[2]
    if preserve_aspect_ratio:
        factor = min(height / in_h, width / in_w)
        scaled = torch.round(torch.tensor([in_h * factor, in_w * factor], dtype=torch.float32))
        height, width = int(scaled[0]), int(scaled[1])
    if method == "nearest":
        rows, cols = _nearest_indices(in_h, height), _nearest_indices(in_w, width)
        return _unbatch(batch[:, rows][:, :, cols], single)
    weights = {"bilinear": _bilinear_weights, "bicubic": _bicubic_weights, "area": _area_weights}[method]
    x = batch.to(torch.float64 if batch.dtype == torch.float64 else torch.float32)
    w_h, w_w = weights(in_h, height).to(x), weights(in_w, width).to(x)
    out = torch.einsum("oh,nhwc->nowc", w_h, x)
    out = torch.einsum("pw,nowc->nopc", w_w, out)
    return _unbatch(out, single)


# ----- flips -------------------------------------------------------------------------------
def flip_left_right(image: Any) -> torch.Tensor:
    """Mirrors the width axis of an HWC image or an NHWC batch."""
    batch, single = _batched(image, "flip_left_right")
    return _unbatch(batch.flip(2), single)


def flip_up_down(image: Any) -> torch.Tensor:
    """Mirrors the height axis of an HWC image or an NHWC batch."""
    batch, single = _batched(image, "flip_up_down")
    return _unbatch(batch.flip(1), single)


def _generator(seed: Optional[int]) -> Optional[torch.Generator]:
    return None if seed is None else torch.Generator().manual_seed(int(seed))


def _random_flip(image: Any, axis: int, seed: Optional[int], op: str) -> torch.Tensor:
    batch, single = _batched(image, op)
    flips = torch.rand(batch.shape[0], generator=_generator(seed)) < 0.5  # each image on its own, as TF
    out = torch.where(flips.to(batch.device).reshape(-1, 1, 1, 1), batch.flip(axis), batch)
    return _unbatch(out, single)


def random_flip_left_right(image: Any, seed: Optional[int] = None) -> torch.Tensor:
    """Flips each image left-right with probability 1/2."""
    return _random_flip(image, 2, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: Optional[int] = None) -> torch.Tensor:
    """Flips each image upside down with probability 1/2."""
    return _random_flip(image, 1, seed, "random_flip_up_down")


# ----- crops and pads ----------------------------------------------------------------------
def central_crop(image: Any, central_fraction: float) -> torch.Tensor:
    """The central `central_fraction` (0, 1] of each side: start = int((size - size * fraction) / 2)."""
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError(f"tf.image.central_crop: central_fraction must be in (0, 1], got {central_fraction!r}.")
    batch, single = _batched(image, "central_crop")
    if central_fraction == 1.0:
        return _unbatch(batch, single)
    h, w = batch.shape[1], batch.shape[2]
    top, left = int((h - h * central_fraction) / 2), int((w - w * central_fraction) / 2)
    return _unbatch(batch[:, top:h - top, left:w - left], single)


def crop_to_bounding_box(image: Any, offset_height: int, offset_width: int, target_height: int,
                         target_width: int) -> torch.Tensor:
    """The (target_height, target_width) window whose top-left corner is (offset_height, offset_width)."""
    batch, single = _batched(image, "crop_to_bounding_box")
    h, w = batch.shape[1], batch.shape[2]
    if offset_height < 0 or offset_width < 0:
        raise ValueError("tf.image.crop_to_bounding_box: offset_height and offset_width must be >= 0.")
    if target_height <= 0 or target_width <= 0:
        raise ValueError("tf.image.crop_to_bounding_box: target_height and target_width must be > 0.")
    if offset_height + target_height > h or offset_width + target_width > w:
        raise ValueError(f"tf.image.crop_to_bounding_box: the box ({offset_height}+{target_height}, "
                         f"{offset_width}+{target_width}) does not fit in a {h}x{w} image.")
    return _unbatch(batch[:, offset_height:offset_height + target_height,
                          offset_width:offset_width + target_width], single)


def pad_to_bounding_box(image: Any, offset_height: int, offset_width: int, target_height: int,
                        target_width: int) -> torch.Tensor:
    """Zero-pads to (target_height, target_width) with the image's top-left corner at the offsets."""
    batch, single = _batched(image, "pad_to_bounding_box")
    h, w = batch.shape[1], batch.shape[2]
    if offset_height < 0 or offset_width < 0:
        raise ValueError("tf.image.pad_to_bounding_box: offset_height and offset_width must be >= 0.")
    bottom, right = target_height - offset_height - h, target_width - offset_width - w
    if bottom < 0 or right < 0:
        raise ValueError(f"tf.image.pad_to_bounding_box: a {h}x{w} image at offset ({offset_height}, "
                         f"{offset_width}) does not fit in {target_height}x{target_width}.")
    out = torch.nn.functional.pad(batch, (0, 0, offset_width, right, offset_height, bottom))
    return _unbatch(out, single)


def resize_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> torch.Tensor:
    """Centrally crops sides longer than the target and zero-pads shorter ones (extra pixel at the end)."""
    if target_height <= 0 or target_width <= 0:
        raise ValueError("tf.image.resize_with_crop_or_pad: target_height and target_width must be > 0.")
    batch, single = _batched(image, "resize_with_crop_or_pad")
    h, w = batch.shape[1], batch.shape[2]
    crop_top, crop_left = max((h - target_height) // 2, 0), max((w - target_width) // 2, 0)
    batch = batch[:, crop_top:crop_top + min(h, target_height), crop_left:crop_left + min(w, target_width)]
    pad_top, pad_left = max((target_height - h) // 2, 0), max((target_width - w) // 2, 0)
    out = pad_to_bounding_box(batch, pad_top, pad_left, target_height, target_width)
    return _unbatch(out, single)


# ----- dtype and colour ------------------------------------------------------------------------
def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """`tf.image.convert_image_dtype`: integers map [0, MAX] to floats in [0, 1] and back (float -> int
    multiplies by MAX + 0.5 and truncates; saturate=True clips first), integers rescale by bit shifts."""
    tensor = _as_tensor(image)
    target = as_dtype(dtype)
    source = tensor.dtype
    if source == target:
        return tensor
    if source.is_floating_point and target.is_floating_point:
        return tensor.to(target)
    if not source.is_floating_point and not target.is_floating_point:
        in_max, out_max = _max_of(source), _max_of(target)
        if in_max > out_max:
            factor = (in_max + 1) // (out_max + 1)
            return torch.div(tensor, factor, rounding_mode="floor").to(target)
        factor = (out_max + 1) // (in_max + 1)
        return (tensor.to(target) * factor).to(target)
    if source.is_floating_point:  # float -> int
        scaled = tensor.to(torch.float64 if source == torch.float64 else torch.float32) * (_max_of(target) + 0.5)
        if saturate:
            scaled = scaled.clamp(0 if target == torch.uint8 else torch.iinfo(target).min, _max_of(target))
        return scaled.to(target)
    return (tensor.to(target) / _max_of(source)).to(target)  # int -> float


def _as_float_image(image: torch.Tensor) -> torch.Tensor:
    return image if image.is_floating_point() else convert_image_dtype(image, torch.float32)


def adjust_brightness(image: Any, delta: float) -> torch.Tensor:
    """Adds `delta` (in [0, 1] units for integer images, which are converted and converted back)."""
    tensor = _as_tensor(image)
    out = _as_float_image(tensor) + delta
    return out if tensor.is_floating_point() else convert_image_dtype(out, tensor.dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: float) -> torch.Tensor:
    """`(x - mean) * contrast_factor + mean`, the mean per image and channel over height and width."""
    tensor = _as_tensor(images)
    if tensor.dim() < 3:
        raise ValueError(f"tf.image.adjust_contrast: expects images (..., height, width, channels), got shape "
                         f"{tuple(tensor.shape)}.")
    x = _as_float_image(tensor)
    mean = x.mean(dim=(-3, -2), keepdim=True)
    out = (x - mean) * contrast_factor + mean
    return out if tensor.is_floating_point() else convert_image_dtype(out, tensor.dtype, saturate=True)


def random_brightness(image: Any, max_delta: float, seed: Optional[int] = None) -> torch.Tensor:
    """adjust_brightness by one delta drawn from [-max_delta, max_delta) for the whole input, as TF."""
    if max_delta < 0:
        raise ValueError(f"tf.image.random_brightness: max_delta must be >= 0, got {max_delta!r}.")
    delta = float(torch.rand((), generator=_generator(seed)) * 2 * max_delta - max_delta)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: Optional[int] = None) -> torch.Tensor:
    """adjust_contrast by one factor drawn from [lower, upper) for the whole input, as TF."""
    if not 0 <= lower < upper:
        raise ValueError(f"tf.image.random_contrast: need 0 <= lower < upper, got lower={lower!r}, upper={upper!r}.")
    factor = float(lower + (upper - lower) * torch.rand((), generator=_generator(seed)))
    return adjust_contrast(image, factor)


def rgb_to_grayscale(images: Any, name: Optional[str] = None) -> torch.Tensor:
    """Luma with TF's weights (0.2989, 0.5870, 0.1140), keeping a last axis of size 1 and the dtype."""
    tensor = _as_tensor(images)
    if tensor.dim() < 1 or tensor.shape[-1] != 3:
        raise ValueError(f"tf.image.rgb_to_grayscale: the last axis must hold 3 channels, got shape "
                         f"{tuple(tensor.shape)}.")
    x = _as_float_image(tensor)
    weights = torch.tensor([0.2989, 0.5870, 0.1140], dtype=x.dtype, device=x.device)
    gray = (x * weights).sum(dim=-1, keepdim=True)
    return gray if tensor.is_floating_point() else convert_image_dtype(gray, tensor.dtype)


def per_image_standardization(image: Any) -> torch.Tensor:
    """`(x - mean) / max(stddev, 1 / sqrt(N))` per image over its N = H * W * C values; float32 out
    (integers are cast, not rescaled, as TF)."""
    batch, single = _batched(image, "per_image_standardization")
    x = batch if batch.is_floating_point() else batch.to(torch.float32)
    count = x[0].numel()
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    std = x.std(dim=(1, 2, 3), keepdim=True, correction=0)
    return _unbatch((x - mean) / std.clamp_min(1.0 / math.sqrt(count)), single)


# ----- PNG / JPEG ----------------------------------------------------------------------------
def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("tf.image/tf.io PNG and JPEG coding needs Pillow: pip install pillow "
                          "(or torchstrategy[vision]).") from None
    return Image


def _contents(contents: Any, op: str) -> bytes:
    if isinstance(contents, np.ndarray) and contents.ndim == 0:
        contents = contents.item()
    if not isinstance(contents, (bytes, bytearray)):
        raise TypeError(f"tf.io.{op}: contents must be the encoded bytes (e.g. tf.io.read_file(path)), got "
                        f"{type(contents).__name__}.")
    return bytes(contents)


_MODES_BY_CHANNELS = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _decode(contents: Any, channels: int, op: str, dtype: Any = torch.uint8) -> torch.Tensor:
    Image = _pillow()
    if channels not in (0, 1, 2, 3, 4):
        raise ValueError(f"tf.io.{op}: channels must be 0 (as stored), 1, 2, 3 or 4, got {channels!r}.")
    try:
        picture = Image.open(io.BytesIO(_contents(contents, op)))
        picture.load()
    except OSError as error:
        raise ValueError(f"tf.io.{op}: the contents are not a decodable image ({error}).") from None
    target = as_dtype(dtype)
    if target not in (torch.uint8, torch.uint16):
        raise ValueError(f"tf.io.{op}: dtype must be uint8 or uint16, got {dtype!r}.")
    if picture.mode in ("I;16", "I;16B", "I") and target == torch.uint16 and channels in (0, 1):
        array = np.asarray(picture, dtype=np.uint16)[..., None]
        return torch.from_numpy(array.astype(np.int32)).to(torch.uint16)
    if channels == 0:
        mode = picture.mode if picture.mode in _MODES_BY_CHANNELS.values() else (
            "RGBA" if "A" in picture.getbands() else "RGB")
    else:
        mode = _MODES_BY_CHANNELS[channels]
    array = np.asarray(picture.convert(mode), dtype=np.uint8)
    if array.ndim == 2:
        array = array[..., None]
    tensor = torch.from_numpy(array.copy())
    if target == torch.uint16:  # 8-bit data widened as TF does (x * 257)
        tensor = (tensor.to(torch.int32) * 257).to(torch.uint16)
    return tensor


def decode_png(contents: Any, channels: int = 0, dtype: Any = torch.uint8, name: Optional[str] = None) -> torch.Tensor:
    """Decodes PNG bytes to an HWC uint8 (or uint16) tensor; channels=0 keeps the stored channels.

    Colour to gray (channels=1) goes through Pillow's ITU-R 601 luma, which can differ from libpng's (TF)
    by one level."""
    return _decode(contents, channels, "decode_png", dtype)


def encode_png(image: Any, compression: int = -1, name: Optional[str] = None) -> bytes:
    """Encodes an HWC uint8/uint16 image (1-4 channels) as PNG bytes; compression -1 (default) or 0-9."""
    Image = _pillow()
    tensor = _as_tensor(image)
    if tensor.dim() != 3 or tensor.shape[-1] not in _MODES_BY_CHANNELS:
        raise ValueError(f"tf.io.encode_png: expects (height, width, channels) with 1-4 channels, got shape "
                         f"{tuple(tensor.shape)}.")
    if tensor.dtype == torch.uint16:
        if tensor.shape[-1] != 1:
            raise ValueError("tf.io.encode_png: uint16 images can only be encoded with 1 channel here.")
        picture = Image.fromarray(tensor[..., 0].to(torch.int32).numpy().astype(np.uint16))
    elif tensor.dtype == torch.uint8:
        array = tensor.cpu().numpy()
        picture = Image.fromarray(array[..., 0] if array.shape[-1] == 1 else array,
                                  mode=None if array.shape[-1] != 2 else "LA")
    else:
        raise ValueError(f"tf.io.encode_png: image dtype must be uint8 or uint16, got {tensor.dtype}; convert "
                         "with tf.image.convert_image_dtype(image, tf.uint8, saturate=True).")
    buffer = io.BytesIO()
    level = 6 if compression == -1 else int(compression)
    if not 0 <= level <= 9:
        raise ValueError(f"tf.io.encode_png: compression must be -1 or 0..9, got {compression!r}.")
    picture.save(buffer, format="PNG", compress_level=level)
    return buffer.getvalue()


def decode_image(contents: Any, channels: Optional[int] = None, dtype: Any = torch.uint8, name: Optional[str] = None,
                 expand_animations: bool = True) -> torch.Tensor:
    """Decodes PNG, JPEG, GIF or BMP bytes (format sniffed) to an HWC tensor; float dtypes scale to [0, 1]."""
    channels = 0 if channels is None else channels
    target = as_dtype(dtype)
    decoded = _decode(contents, channels, "decode_image", torch.uint8 if target.is_floating_point else target)
    return convert_image_dtype(decoded, target) if target.is_floating_point else decoded


__all__ = [
    "ResizeMethod", "resize", "flip_left_right", "flip_up_down", "random_flip_left_right", "random_flip_up_down",
    "central_crop", "crop_to_bounding_box", "pad_to_bounding_box", "resize_with_crop_or_pad", "convert_image_dtype",
    "adjust_brightness", "adjust_contrast", "random_brightness", "random_contrast", "rgb_to_grayscale",
    "per_image_standardization", "decode_png", "encode_png", "decode_image",
]
