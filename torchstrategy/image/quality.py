"""tf.image's image-quality and gradient measures: psnr, ssim (Gaussian window, VALID), ssim_multiscale,
total_variation, sobel_edges and image_gradients, with TF's conventions."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F

from torchstrategy.image.core import _as_tensor, convert_image_dtype


def _pair(img1: Any, img2: Any, max_val: Any, op: str) -> tuple[torch.Tensor, torch.Tensor, float]:
    a, b = _as_tensor(img1), _as_tensor(img2)
    if a.dtype != b.dtype:
        raise TypeError(f"tf.image.{op}: both images need one dtype, got {a.dtype} and {b.dtype}.")
    if a.dim() < 3:
        raise ValueError(f"tf.image.{op} needs images of shape [..., height, width, channels], got {tuple(a.shape)}.")
    try:
        torch.broadcast_shapes(a.shape, b.shape)
    except RuntimeError:
        raise ValueError(f"tf.image.{op}: the image shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         "broadcast.") from None
    maximum = float(max_val.item() if isinstance(max_val, torch.Tensor) else max_val)
    if not a.is_floating_point():  # integers become [0, 1] floats, and max_val with them, as TF
        maximum = maximum / torch.iinfo(a.dtype).max
    return convert_image_dtype(a, torch.float32), convert_image_dtype(b, torch.float32), maximum


def psnr(a: Any, b: Any, max_val: Any, name: Optional[str] = None) -> torch.Tensor:
    """Peak signal-to-noise ratio per image, in dB: 20 log10(max_val) - 10 log10(MSE over height, width
    and channels)."""
    x, y, maximum = _pair(a, b, max_val, "psnr")
    mse = torch.mean((x - y) ** 2, dim=(-3, -2, -1))
    return 20.0 * math.log10(maximum) - 10.0 / math.log(10.0) * torch.log(mse)


def _gaussian(size: int, sigma: float, channels: int) -> torch.Tensor:
    coords = torch.arange(size, dtype=torch.float32) - (size - 1) / 2.0
    square = coords ** 2 * (-0.5 / sigma ** 2)
    kernel = torch.softmax((square[None, :] + square[:, None]).reshape(-1), 0).reshape(size, size)
    return kernel.expand(channels, 1, size, size)


def _ssim_parts(x: torch.Tensor, y: torch.Tensor, maximum: float, size: int, sigma: float, k1: float,
                k2: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The SSIM map (luminance x contrast-structure) and the cs map, [..., h', w', c] (VALID windows)."""
    x, y = torch.broadcast_tensors(x, y)
    head, (height, width, channels) = x.shape[:-3], x.shape[-3:]
    if height < size or width < size:
        raise ValueError(f"tf.image.ssim: the images ({height}x{width}) must be at least as large as the filter "
                         f"({size}x{size}); pass a smaller filter_size.")
    kernel = _gaussian(size, sigma, channels).to(x.device)

    def reduce(image: torch.Tensor) -> torch.Tensor:
        nchw = image.reshape(-1, height, width, channels).permute(0, 3, 1, 2)
        out = F.conv2d(nchw, kernel, groups=channels).permute(0, 2, 3, 1)
        return out.reshape(*head, *out.shape[1:])

    c1, c2 = (k1 * maximum) ** 2, (k2 * maximum) ** 2
    mean_x, mean_y = reduce(x), reduce(y)
    num0 = mean_x * mean_y * 2.0
    den0 = mean_x ** 2 + mean_y ** 2
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reduce(x * y) * 2.0
    den1 = reduce(x ** 2 + y ** 2)
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance * cs, cs


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
         k2: float = 0.03, return_index_map: bool = False) -> torch.Tensor:
    """Structural similarity per image (mean over the VALID Gaussian windows and the channels); with
    `return_index_map`, the per-window map averaged over channels."""
    x, y, maximum = _pair(img1, img2, max_val, "ssim")
    index, _ = _ssim_parts(x, y, maximum, int(filter_size), float(filter_sigma), float(k1), float(k2))
    if return_index_map:
        return index.mean(dim=-1)
    return index.mean(dim=(-3, -2)).mean(dim=-1)


def _downsample(image: torch.Tensor) -> torch.Tensor:
    head, (height, width, channels) = image.shape[:-3], image.shape[-3:]
    nchw = image.reshape(-1, height, width, channels).permute(0, 3, 1, 2)
    if height % 2 or width % 2:  # TF pads the odd edge symmetrically (repeating it) before pooling
        nchw = torch.cat([nchw, nchw[:, :, -1:, :]], 2) if height % 2 else nchw
        nchw = torch.cat([nchw, nchw[:, :, :, -1:]], 3) if width % 2 else nchw
    out = F.avg_pool2d(nchw, 2).permute(0, 2, 3, 1)
    return out.reshape(*head, *out.shape[1:])


def ssim_multiscale(img1: Any, img2: Any, max_val: Any,
                    power_factors: Sequence[float] = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333),
                    filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
                    k2: float = 0.03) -> torch.Tensor:
    """Multi-scale SSIM: the contrast-structure terms of each scale (halved by 2x2 average pooling) and the
    last scale's SSIM, raised to `power_factors` and multiplied; per image, averaged over channels."""
    x, y, maximum = _pair(img1, img2, max_val, "ssim_multiscale")
    x, y = torch.broadcast_tensors(x, y)
    factors = [float(p) for p in power_factors]
    terms = []
    for scale in range(len(factors)):
        if scale:
            x, y = _downsample(x), _downsample(y)
        index, cs = _ssim_parts(x, y, maximum, int(filter_size), float(filter_sigma), float(k1), float(k2))
        if scale < len(factors) - 1:
            terms.append(torch.relu(cs.mean(dim=(-3, -2))))
        else:
            terms.append(torch.relu(index.mean(dim=(-3, -2))))
    stacked = torch.stack(terms, dim=-1)
    powers = torch.tensor(factors, dtype=stacked.dtype, device=stacked.device)
    return torch.prod(stacked ** powers, dim=-1).mean(dim=-1)


def total_variation(images: Any, name: Optional[str] = None) -> torch.Tensor:
    """The sum of absolute differences between neighbouring pixels (vertically and horizontally), per image
    for a batch, a scalar for one image."""
    tensor = _as_tensor(images)
    if tensor.dim() not in (3, 4):
        raise ValueError(f"tf.image.total_variation: expects an image (h, w, c) or a batch (b, h, w, c), got shape "
                         f"{tuple(tensor.shape)}.")
    axes = (-3, -2, -1)
    vertical = (tensor[..., 1:, :, :] - tensor[..., :-1, :, :]).abs().sum(dim=axes)
    horizontal = (tensor[..., :, 1:, :] - tensor[..., :, :-1, :]).abs().sum(dim=axes)
    return vertical + horizontal


def _batch4(image: Any, op: str) -> torch.Tensor:
    tensor = _as_tensor(image)
    if tensor.dim() != 4:
        raise ValueError(f"tf.image.{op} needs a batch of images [batch, height, width, channels], got shape "
                         f"{tuple(tensor.shape)}.")
    return tensor


def sobel_edges(image: Any) -> torch.Tensor:
    """Sobel filter responses [batch, h, w, channels, 2]: (d/dy, d/dx), the edges reflect-padded."""
    tensor = _batch4(image, "sobel_edges")
    x = tensor if tensor.is_floating_point() else tensor.to(torch.float32)
    dy = torch.tensor([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], dtype=x.dtype, device=x.device)
    kernels = torch.stack([dy, dy.t()])  # [2, 3, 3]
    channels = x.shape[-1]
    nchw = F.pad(x.permute(0, 3, 1, 2), (1, 1, 1, 1), mode="reflect")
    weight = kernels.repeat(channels, 1, 1).unsqueeze(1)  # channel c -> outputs 2c (dy), 2c + 1 (dx)
    out = F.conv2d(nchw, weight, groups=channels)
    batch, _, height, width = out.shape
    return out.reshape(batch, channels, 2, height, width).permute(0, 3, 4, 1, 2)


def image_gradients(image: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward differences (dy, dx) of a batch [batch, h, w, channels]; the last row / column is zero."""
    tensor = _batch4(image, "image_gradients")
    dy = torch.cat([tensor[:, 1:] - tensor[:, :-1], torch.zeros_like(tensor[:, :1])], dim=1)
    dx = torch.cat([tensor[:, :, 1:] - tensor[:, :, :-1], torch.zeros_like(tensor[:, :, :1])], dim=2)
    return dy, dx
