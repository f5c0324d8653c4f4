"""Keras 3's batch-mixing augmentations, in training only: MixUp (each image and label blended with another of
the batch by a Beta(alpha, alpha) weight) and CutMix (a random box pasted from another image, labels mixed
by the box's area)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.core import _normalize_data_format


class MixUp(Layer):
    """In training, `w * x + (1 - w) * x[perm]` with w ~ Beta(alpha, alpha) per sample and a random
    permutation of the batch; `{"images": x, "labels": y}` mixes the labels with the same weights.

    >>> MixUp()(torch.ones(4, 2, 2, 3), training=True).shape
    torch.Size([4, 2, 2, 3])
    """

    def __init__(self, alpha: float = 0.2, data_format: Optional[str] = None, seed: Optional[int] = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alpha, self.seed = alpha, seed
        self.data_format = _normalize_data_format(data_format)
        self._generator = torch.Generator().manual_seed(int(seed)) if seed is not None else None
        self.built = True

    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs

    def call(self, data: Any, training: bool = True) -> Any:
        parts = dict(data) if isinstance(data, dict) else {"images": data}
        images = backend.to_tensor(parts["images"]).to(self._compute_torch_dtype)
        if not training:
            return data if isinstance(data, dict) else images
        batch = images.shape[0] if images.dim() == 4 else 1
        order = torch.randperm(batch, generator=self._generator)
        beta = torch.distributions.Beta(torch.tensor(float(self.alpha)), torch.tensor(float(self.alpha)))
        if self._generator is not None:  # a seeded draw: Beta from two seeded Gammas
            g1 = torch._standard_gamma(torch.full((batch,), float(self.alpha)), generator=self._generator)
            g2 = torch._standard_gamma(torch.full((batch,), float(self.alpha)), generator=self._generator)
            weight = g1 / (g1 + g2)
        else:
            weight = beta.sample((batch,))
        w = weight.to(images.dtype).reshape((-1,) + (1,) * (images.dim() - 1))
        mixed = w * images + (1.0 - w) * images[order] if images.dim() == 4 else images
        if not isinstance(data, dict):
            return mixed
        parts["images"] = mixed
        if parts.get("labels") is not None:
            labels = backend.to_tensor(parts["labels"]).to(self._compute_torch_dtype)
            lw = weight.to(labels.dtype).reshape(-1, 1)
            parts["labels"] = lw * labels + (1.0 - lw) * labels[order]
        return parts

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha, "seed": self.seed, "data_format": self.data_format}


class CutMix(Layer):
    """In training, pastes into each image a box of another image of the batch (box area fraction 1 - w,
    w ~ Beta(a, a) with a drawn from `factor`); `{"images", "labels"}` mixes labels by the kept area.

    >>> CutMix()(torch.ones(4, 6, 6, 3), training=True).shape
    torch.Size([4, 6, 6, 3])
    """

    def __init__(self, factor: Any = 1.0, seed: Optional[int] = None, data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        values = list(factor) if isinstance(factor, (tuple, list)) else [0, factor]
        if len(values) != 2 or any(not 0 <= v <= 1 for v in values):
            raise ValueError("CutMix: the `factor` argument should be a number (or a list of two numbers) in the "
                             f"range [0, 1]. Received: factor={factor}")
        low, high = sorted(values)
        self.factor, self.seed = (low, high), seed
        self.data_format = _normalize_data_format(data_format)
        self._generator = torch.Generator().manual_seed(int(seed)) if seed is not None else None
        self.built = True

    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs

    def _rand(self, *shape: int) -> torch.Tensor:
        return torch.rand(shape, generator=self._generator)

    def call(self, data: Any, training: bool = True) -> Any:
        parts = dict(data) if isinstance(data, dict) else {"images": data}
        images = backend.to_tensor(parts["images"]).to(self._compute_torch_dtype)
        if not training or images.dim() != 4:
            return data if isinstance(data, dict) else images
        n = images.shape[0]
        h_axis, w_axis = (2, 3) if self.data_format == "channels_first" else (1, 2)
        height, width = images.shape[h_axis], images.shape[w_axis]
        alpha = float(self.factor[0] + (self.factor[1] - self.factor[0]) * self._rand(1)) + 1e-6
        g1 = torch._standard_gamma(torch.full((n,), alpha), generator=self._generator)
        g2 = torch._standard_gamma(torch.full((n,), alpha), generator=self._generator)
        ratio = torch.sqrt(1.0 - g1 / (g1 + g2))

        def bounds(length: int) -> tuple:
            crop = ratio * length
            start = self._rand(n) * (length - crop)
            return start, start + crop

        x0, x1 = bounds(width)
        y0, y1 = bounds(height)
        ys = torch.arange(height, dtype=torch.float32).reshape(1, height, 1)
        xs = torch.arange(width, dtype=torch.float32).reshape(1, 1, width)
        box = ((xs >= x0.reshape(-1, 1, 1)) & (xs < x1.reshape(-1, 1, 1)) &
               (ys >= y0.reshape(-1, 1, 1)) & (ys < y1.reshape(-1, 1, 1)))
        box = box.unsqueeze(1 if self.data_format == "channels_first" else -1).to(images.device)
        order = torch.randperm(n, generator=self._generator).to(images.device)
        mixed = torch.where(box, images[order], images)
        if not isinstance(data, dict):
            return mixed
        parts["images"] = mixed
        if parts.get("labels") is not None:
            labels = backend.to_tensor(parts["labels"]).to(self._compute_torch_dtype)
            weight = (1.0 - (x1 - x0) * (y1 - y0) / (width * height)).to(labels.dtype).reshape(-1, 1)
            parts["labels"] = weight * labels + (1.0 - weight) * labels[order]
        return parts

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "seed": self.seed, "data_format": self.data_format}
