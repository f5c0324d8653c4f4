"""`keras.ops.image`: resize, colour-space conversions, pad/crop, patches, Gaussian blur, Sobel edges and SSIM
on batches (or single images) in channels_last by default; the geometric warps are not provided yet."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F

from torchstrategy import image as tf_image
from torchstrategy.keras.ops._core import _float, _t


def _fmt(data_format: Optional[str]) -> str:
    if data_format is None:
        from torchstrategy.keras import backend

        data_format = backend.image_data_format()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first'; got {data_format!r}.")
    return data_format


def _last(images: torch.Tensor, data_format: Optional[str]) -> torch.Tensor:
    """Images as channels_last."""
    return images.movedim(-3, -1) if _fmt(data_format) == "channels_first" else images


def _back(images: torch.Tensor, data_format: Optional[str]) -> torch.Tensor:
    return images.movedim(-1, -3) if _fmt(data_format) == "channels_first" else images


def _check_rank(images: torch.Tensor, op: str) -> None:
    if images.ndim not in (3, 4):
        raise ValueError(f"Invalid images rank: expected rank 3 (single image) or rank 4 (batch of images). "
                         f"Received input with shape: images.shape={tuple(images.shape)}")


def resize(images: Any, size: Sequence[int], interpolation: str = "bilinear", antialias: bool = False,
           crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False, fill_mode: str = "constant",
           fill_value: float = 0.0, data_format: Optional[str] = None) -> torch.Tensor:
    """Resizes to `size` (height, width) with TF's half-pixel sampling ('bilinear', 'nearest', 'bicubic',
    'area'); `crop_to_aspect_ratio` / `pad_to_aspect_ratio` first crop or pad to the target aspect ratio."""
    tensor = _last(_t(images), data_format)
    _check_rank(tensor, "resize")
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers. Received: size={size}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
    if antialias:
        raise NotImplementedError("keras.ops.image.resize(antialias=True) is not supported yet.")
    height, width = int(size[0]), int(size[1])
    in_h, in_w = tensor.shape[-3], tensor.shape[-2]
    if crop_to_aspect_ratio:  # Keras's integer arithmetic (truncating casts), centred
        crop_h = max(min(in_h, int(in_w * height / width)), 1)
        crop_w = max(min(in_w, int(in_h * width / height)), 1)
        top, left = (in_h - crop_h) // 2, (in_w - crop_w) // 2
        tensor = tensor[..., top:top + crop_h, left:left + crop_w, :]
    elif pad_to_aspect_ratio:  # the same margin on both sides, as Keras
        if fill_mode != "constant":
            raise NotImplementedError(f"pad_to_aspect_ratio with fill_mode={fill_mode!r} is not supported; "
                                      "use 'constant'.")
        top = (max(in_h, int(in_w * height / width)) - in_h) // 2
        left = (max(in_w, int(in_h * width / height)) - in_w) // 2
        tensor = F.pad(tensor, (0, 0, left, left, top, top), value=fill_value)
    out = tf_image.resize(tensor, [height, width], method=interpolation)
    if interpolation != "nearest" and not tensor.is_floating_point():
        out = out.to(torch.float32)
    return _back(out, data_format)


def rgb_to_grayscale(images: Any, data_format: Optional[str] = None) -> torch.Tensor:
    """Luma 0.2989 R + 0.587 G + 0.114 B, keeping a channel axis of size 1."""
    tensor = _last(_float(images), data_format)
    weights = torch.tensor([0.2989, 0.5870, 0.1140], dtype=tensor.dtype, device=tensor.device)
    return _back((tensor * weights).sum(dim=-1, keepdim=True), data_format)


def rgb_to_hsv(images: Any, data_format: Optional[str] = None) -> torch.Tensor:
    """RGB in [0, 1] to HSV (each in [0, 1])."""
    tensor = _last(_float(images), data_format)
    r, g, b = tensor.unbind(-1)
    value = tensor.amax(dim=-1)
    delta = value - tensor.amin(dim=-1)
    safe = torch.where(delta > 0, delta, torch.ones_like(delta))
    saturation = torch.where(value > 0, delta / torch.where(value > 0, value, torch.ones_like(value)),
                             torch.zeros_like(value))
    hue = torch.where(value == r, (g - b) / safe, torch.where(value == g, 2.0 + (b - r) / safe, 4.0 + (r - g) / safe))
    hue = torch.where(delta > 0, torch.remainder(hue / 6.0, 1.0), torch.zeros_like(hue))
    return _back(torch.stack([hue, saturation, value], dim=-1), data_format)


def hsv_to_rgb(images: Any, data_format: Optional[str] = None) -> torch.Tensor:
    """HSV (each in [0, 1]) to RGB."""
    tensor = _last(_float(images), data_format)
    h, s, v = tensor.unbind(-1)
    dh = torch.remainder(h, 1.0) * 6.0
    r = (dh - 3.0).abs() - 1.0
    g = 2.0 - (dh - 2.0).abs()
    b = 2.0 - (dh - 4.0).abs()
    rgb = torch.stack([r, g, b], dim=-1).clamp(0.0, 1.0)
    out = ((rgb - 1.0) * s.unsqueeze(-1) + 1.0) * v.unsqueeze(-1)
    return _back(out, data_format)


def _box(size: int, start: Optional[int], end: Optional[int], target: Optional[int], what: str) -> tuple[int, int]:
    """(before, after) amounts from two of: before, after, target size."""
    given = sum(v is not None for v in (start, end, target))
    if given != 2:
        raise ValueError(f"Must specify exactly two of {what} offsets and the target size. Received: "
                         f"{(start, end, target)}")
    if target is None:
        return int(start), int(end)
    if start is None:
        return abs(int(target) - size) - int(end), int(end)
    return int(start), abs(int(target) - size) - int(start)


def pad_images(images: Any, top_padding: Optional[int] = None, left_padding: Optional[int] = None,
               bottom_padding: Optional[int] = None, right_padding: Optional[int] = None,
               target_height: Optional[int] = None, target_width: Optional[int] = None,
               data_format: Optional[str] = None) -> torch.Tensor:
    """Pads with zeros: two of (top, bottom, target_height) and two of (left, right, target_width)."""
    tensor = _last(_t(images), data_format)
    _check_rank(tensor, "pad_images")
    top, bottom = _box(tensor.shape[-3], top_padding, bottom_padding, target_height, "top/bottom")
    left, right = _box(tensor.shape[-2], left_padding, right_padding, target_width, "left/right")
    if min(top, bottom, left, right) < 0:
        raise ValueError("The target size is smaller than the image: padding would be negative.")
    return _back(F.pad(tensor, (0, 0, left, right, top, bottom)), data_format)


def crop_images(images: Any, top_cropping: Optional[int] = None, left_cropping: Optional[int] = None,
                bottom_cropping: Optional[int] = None, right_cropping: Optional[int] = None,
                target_height: Optional[int] = None, target_width: Optional[int] = None,
                data_format: Optional[str] = None) -> torch.Tensor:
    """Crops: two of (top, bottom, target_height) and two of (left, right, target_width)."""
    tensor = _last(_t(images), data_format)
    _check_rank(tensor, "crop_images")
    height, width = tensor.shape[-3], tensor.shape[-2]
    top, bottom = _box(height, top_cropping, bottom_cropping, target_height, "top/bottom")
    left, right = _box(width, left_cropping, right_cropping, target_width, "left/right")
    if min(top, bottom, left, right) < 0 or top + bottom >= height or left + right >= width:
        raise ValueError("The cropping leaves no pixels, or is negative; check the cropping and target sizes.")
    return _back(tensor[..., top:height - bottom, left:width - right, :], data_format)


def extract_patches(images: Any, size: Any, strides: Any = None, dilation_rate: Any = 1, padding: str = "valid",
                    data_format: Optional[str] = None) -> torch.Tensor:
    """Patches of `size` (h, w) every `strides` as (..., rows, cols, h * w * channels) (channels_last order)."""
    tensor = _last(_float(images), data_format)
    single = tensor.ndim == 3
    batch = tensor.unsqueeze(0) if single else tensor
    ph, pw = (size, size) if isinstance(size, int) else tuple(size)
    sh, sw = (ph, pw) if strides is None else ((strides, strides) if isinstance(strides, int) else tuple(strides))
    dh, dw = (dilation_rate, dilation_rate) if isinstance(dilation_rate, int) else tuple(dilation_rate)
    x = batch.movedim(-1, 1)
    if padding.lower() == "same":
        def pads(n: int, k: int, s: int, d: int) -> tuple[int, int]:
            eff = (k - 1) * d + 1
            total = max((-(-n // s) - 1) * s + eff - n, 0)
            return total // 2, total - total // 2
        top, bottom = pads(x.shape[2], ph, sh, dh)
        left, right = pads(x.shape[3], pw, sw, dw)
        x = F.pad(x, (left, right, top, bottom))
    channels = x.shape[1]
    columns = F.unfold(x, (ph, pw), dilation=(dh, dw), stride=(sh, sw))  # (N, C*ph*pw, L), C slowest
    rows = (x.shape[2] - (ph - 1) * dh - 1) // sh + 1
    cols = (x.shape[3] - (pw - 1) * dw - 1) // sw + 1
    patches = columns.reshape(x.shape[0], channels, ph * pw, rows, cols).permute(0, 3, 4, 2, 1)
    out = patches.reshape(x.shape[0], rows, cols, ph * pw * channels)
    out = out[0] if single else out
    return out.movedim(-1, -3) if _fmt(data_format) == "channels_first" else out


def _gaussian_kernel(size: int, sigma: float, dtype: torch.dtype) -> torch.Tensor:
    x = torch.arange(size, dtype=dtype) - (size - 1) / 2.0
    kernel = torch.exp(-0.5 * (x / sigma) ** 2)
    return kernel / kernel.sum()


def gaussian_blur(images: Any, kernel_size: Any = (3, 3), sigma: Any = (1.0, 1.0),
                  data_format: Optional[str] = None) -> torch.Tensor:
    """Gaussian blur per channel with zero 'same' padding; the kernel is built as Keras builds it (the outer
    product of the (kernel_size[1], sigma[1]) and (kernel_size[0], sigma[0]) windows, laid out as
    kernel_size[0] x kernel_size[1])."""
    tensor = _last(_float(images), data_format)
    single = tensor.ndim == 3
    x = (tensor.unsqueeze(0) if single else tensor).movedim(-1, 1)
    k0, k1 = (kernel_size, kernel_size) if isinstance(kernel_size, int) else (int(v) for v in kernel_size)
    s0, s1 = (sigma, sigma) if isinstance(sigma, (int, float)) else (float(v) for v in sigma)
    kernel = torch.outer(_gaussian_kernel(k1, s1, x.dtype), _gaussian_kernel(k0, s0, x.dtype)).reshape(k0, k1)
    channels = x.shape[1]
    weight = kernel.reshape(1, 1, k0, k1).repeat(channels, 1, 1, 1)
    x = F.pad(x, ((k1 - 1) // 2, k1 // 2, (k0 - 1) // 2, k0 // 2))
    out = F.conv2d(x, weight, groups=channels).movedim(1, -1)
    return _back(out[0] if single else out, data_format)


def sobel_edges(images: Any, data_format: Optional[str] = None) -> torch.Tensor:
    """Sobel gradients (dy, dx) of each channel, stacked on a new last axis, reflect-padded as TF's
    `tf.image.sobel_edges`."""
    tensor = _last(_float(images), data_format)
    single = tensor.ndim == 3
    x = (tensor.unsqueeze(0) if single else tensor).movedim(-1, 1)
    channels = x.shape[1]
    ky = torch.tensor([[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]], dtype=x.dtype)
    kernels = torch.stack([ky, ky.T]).unsqueeze(1).repeat(channels, 1, 1, 1)  # (2C, 1, 3, 3)
    padded = F.pad(x, (1, 1, 1, 1), mode="reflect")
    out = F.conv2d(padded, kernels, groups=channels)
    n, _, h, w = out.shape
    out = out.reshape(n, channels, 2, h, w).permute(0, 3, 4, 1, 2)
    out = out[0] if single else out
    return out.movedim(-2, -4) if _fmt(data_format) == "channels_first" else out


def ssim(image1: Any, image2: Any, max_val: float = 1.0, filter_size: int = 11, filter_sigma: float = 1.5,
         k1: float = 0.01, k2: float = 0.03, data_format: Optional[str] = None) -> torch.Tensor:
    """Structural similarity per image (mean over pixels and channels) with a Gaussian window, 'valid'
    filtering, as `tf.image.ssim`."""
    a = _last(_float(image1), data_format)
    b = _last(_float(image2), data_format).to(a.dtype)
    single = a.ndim == 3
    x, y = ((t.unsqueeze(0) if single else t).movedim(-1, 1) for t in (a, b))
    channels = x.shape[1]
    g = _gaussian_kernel(filter_size, filter_sigma, x.dtype)
    window = torch.outer(g, g).reshape(1, 1, filter_size, filter_size).repeat(channels, 1, 1, 1)

    def blur(t: torch.Tensor) -> torch.Tensor:
        return F.conv2d(t, window, groups=channels)

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mu_x, mu_y = blur(x), blur(y)
    sigma_xx = blur(x * x) - mu_x.square()
    sigma_yy = blur(y * y) - mu_y.square()
    sigma_xy = blur(x * y) - mu_x * mu_y
    luminance = (2 * mu_x * mu_y + c1) / (mu_x.square() + mu_y.square() + c1)
    contrast = (2 * sigma_xy + c2) / (sigma_xx + sigma_yy + c2)
    out = (luminance * contrast).mean(dim=(1, 2, 3))
    return out[0] if single else out


def _not_yet(name: str) -> Any:
    def unsupported(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"keras.ops.image.{name} is not provided by torchstrategy yet.")

    unsupported.__name__ = name
    unsupported.__doc__ = f"keras.ops.image.{name}: not provided yet (raises NotImplementedError)."
    return unsupported


def affine_transform(images: Any, transform: Any, interpolation: str = "bilinear", fill_mode: str = "constant",
                     fill_value: float = 0, data_format: Optional[str] = None) -> torch.Tensor:
    """Not provided yet: raises NotImplementedError."""
    return _not_yet("affine_transform")()


def elastic_transform(images: Any, alpha: float = 20.0, sigma: float = 5.0, interpolation: str = "bilinear",
                      fill_mode: str = "reflect", fill_value: float = 0.0, seed: Any = None,
                      data_format: Optional[str] = None) -> torch.Tensor:
    """Not provided yet: raises NotImplementedError."""
    return _not_yet("elastic_transform")()


def extract_patches_3d(volumes: Any, size: Any, strides: Any = None, dilation_rate: Any = 1, padding: str = "valid",
                       data_format: Optional[str] = None) -> torch.Tensor:
    """Not provided yet: raises NotImplementedError."""
    return _not_yet("extract_patches_3d")()


def map_coordinates(inputs: Any, coordinates: Any, order: int, fill_mode: str = "constant", fill_value: float = 0
                    ) -> torch.Tensor:
    """Not provided yet: raises NotImplementedError."""
    return _not_yet("map_coordinates")()


def perspective_transform(images: Any, start_points: Any, end_points: Any, interpolation: str = "bilinear",
                          fill_value: float = 0, data_format: Optional[str] = None) -> torch.Tensor:
    """Not provided yet: raises NotImplementedError."""
    return _not_yet("perspective_transform")()


def scale_and_translate(images: Any, output_shape: Any, scale: Any, translation: Any, spatial_dims: Any, method: str,
                        antialias: bool = True) -> torch.Tensor:
    """Not provided yet: raises NotImplementedError."""
    return _not_yet("scale_and_translate")()
