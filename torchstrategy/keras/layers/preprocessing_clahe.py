"""Keras 3's ContrastLimitedAdaptiveHistogramEqualization (CLAHE): per-tile clipped histograms, their
equalizing maps bilinearly blended between tile centres; applied in training and inference alike."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.preprocessing_protocol import AugmentationLayer, rescale


def _symmetric_pad(images: torch.Tensor, pad_h: int, pad_w: int) -> torch.Tensor:
    """Pads (batch, H, W, C) at the bottom/right by mirroring with the edge repeated (NumPy's 'symmetric')."""
    def indices(size: int, pad: int) -> torch.Tensor:
        index = torch.arange(size + pad)
        period = 2 * size
        mod = torch.remainder(index, period)
        return torch.where(mod < size, mod, period - 1 - mod)

    h, w = images.shape[1], images.shape[2]
    out = images.index_select(1, indices(h, pad_h).to(images.device)) if pad_h else images
    return out.index_select(2, indices(w, pad_w).to(images.device)) if pad_w else out


def clahe(images: torch.Tensor, clip_limit: float, grid: tuple[int, int]) -> torch.Tensor:
    """CLAHE of channels-last float images on the 0..255 scale, as Keras 3.15 computes it."""
    n, height, width, channels = images.shape
    grid_h, grid_w = grid
    tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
    padded = _symmetric_pad(images, tile_h * grid_h - height, tile_w * grid_w - width)
    tiles = padded.reshape(n, grid_h, tile_h, grid_w, tile_w, channels).permute(0, 1, 3, 5, 2, 4)
    values = tiles.reshape(n, grid_h, grid_w, channels, tile_h * tile_w).to(torch.int32).clamp(0, 255).long()
    hists = torch.zeros(n, grid_h, grid_w, channels, 256, dtype=torch.float32, device=images.device)
    hists.scatter_add_(-1, values, torch.ones_like(values, dtype=torch.float32))
    if clip_limit > 0:
        limit = clip_limit * (tile_h * tile_w) / 256.0
        clipped = hists.clamp(0, limit)
        hists = clipped + (hists - clipped).sum(-1, keepdim=True) / 256.0
    cdf = hists.cumsum(-1)
    cdf_min = cdf.amin(-1, keepdim=True)
    denominator = float(tile_h * tile_w) - cdf_min
    denominator = torch.where(denominator == 0, torch.ones_like(denominator), denominator)
    maps = ((cdf - cdf_min) * 255.0 / denominator).clamp(0, 255)
    maps = torch.cat([maps[:, :1], maps, maps[:, -1:]], dim=1)  # edge tiles repeated around the grid
    maps = torch.cat([maps[:, :, :1], maps, maps[:, :, -1:]], dim=2)

    def axis(length: int, tile: int, count: int) -> tuple:
        position = (torch.arange(length, dtype=torch.float32, device=images.device) - tile / 2.0) / tile + 1.0
        low = torch.floor(position)
        weight = position - low
        return low.clamp(0, count + 1).long(), (low + 1).clamp(0, count + 1).long(), weight

    y0, y1, wy = axis(tile_h * grid_h, tile_h, grid_h)
    x0, x1, wx = axis(tile_w * grid_w, tile_w, grid_w)
    pixels = padded.clamp(0, 255).to(torch.int32).long()  # (n, H', W', C)
    batch = torch.arange(n, device=images.device).reshape(n, 1, 1, 1)
    channel = torch.arange(channels, device=images.device).reshape(1, 1, 1, channels)

    def lookup(ty: torch.Tensor, tx: torch.Tensor) -> torch.Tensor:
        return maps[batch, ty.reshape(1, -1, 1, 1), tx.reshape(1, 1, -1, 1), channel, pixels]

    wy, wx = wy.reshape(1, -1, 1, 1), wx.reshape(1, 1, -1, 1)
    top = lookup(y0, x0) * (1.0 - wx) + lookup(y0, x1) * wx
    bottom = lookup(y1, x0) * (1.0 - wx) + lookup(y1, x1) * wx
    return (top * (1.0 - wy) + bottom * wy)[:, :height, :width, :]


class ContrastLimitedAdaptiveHistogramEqualization(AugmentationLayer):
    """Equalizes each channel's histogram tile by tile on a `tile_grid_size` grid, each tile's histogram
    clipped at `clip_limit` times the mean bin count (the excess spread evenly), values on the 0..255 scale of
    `value_range`. Deterministic: the same in training and inference.

    >>> ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(2, 2))(torch.rand(1, 8, 8, 1) * 255).shape
    torch.Size([1, 8, 8, 1])
    """

    def __init__(self, value_range: Sequence[float] = (0, 255), clip_limit: float = 4.0,
                 tile_grid_size: Any = (8, 8), data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        if not isinstance(tile_grid_size, (tuple, list)) or len(tile_grid_size) != 2 or \
                any(int(t) < 1 for t in tile_grid_size):
            raise ValueError(f"`tile_grid_size` must be two positive integers (rows, columns) of tiles. "
                             f"Received: tile_grid_size={tile_grid_size}")
        self.value_range, self.clip_limit, self.tile_grid_size = value_range, clip_limit, tile_grid_size

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> torch.Tensor:
        """CLAHE of the images (training or not, as Keras); integer images keep their dtype."""
        raw = backend.to_tensor(images)
        x, unbatched = self._to_nhwc(raw)
        dtype = x.dtype if raw.is_floating_point() else raw.dtype
        x = rescale(x.to(torch.float32), self.value_range, (0, 255))
        x = clahe(x, float(self.clip_limit), (int(self.tile_grid_size[0]), int(self.tile_grid_size[1])))
        x = rescale(x, (0, 255), self.value_range).to(dtype)
        return self._from_nhwc(x, unbatched)

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("seed", None)
        return {**config, "value_range": self.value_range, "clip_limit": self.clip_limit,
                "tile_grid_size": self.tile_grid_size}
