"""Keras 3's batch-mixing augmentation MixUp: each image (and label, when given a dict) blended with another
of the batch by a Beta(alpha, alpha) weight, in training only."""
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

    def call(self, inputs: Any, training: bool = True) -> Any:
        data = dict(inputs) if isinstance(inputs, dict) else {"images": inputs}
        images = backend.to_tensor(data["images"]).to(self._compute_torch_dtype)
        if not training:
            return inputs if isinstance(inputs, dict) else images
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
        if not isinstance(inputs, dict):
            return mixed
        data["images"] = mixed
        if data.get("labels") is not None:
            labels = backend.to_tensor(data["labels"]).to(self._compute_torch_dtype)
            lw = weight.to(labels.dtype).reshape(-1, 1)
            data["labels"] = lw * labels + (1.0 - lw) * labels[order]
        return data

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha, "seed": self.seed, "data_format": self.data_format}
