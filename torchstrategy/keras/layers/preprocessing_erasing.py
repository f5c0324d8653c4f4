"""Keras 3's RandomErasing: in training, each image is, with a probability drawn from `factor`, given a
random rectangle (area fraction drawn from `scale`) filled with a value or with Gaussian noise."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.preprocessing_protocol import AugmentationLayer, factor_pair


class RandomErasing(AugmentationLayer):
    """Erases a random box of each image with probability in `factor` (a number p: [0, p]); the box's sides are
    sqrt(u) times the image's, u drawn per side from `scale`; it is filled with `fill_value` (a number or one per
    channel) or, when None, Gaussian noise times value_range[1], clipped to `value_range`. Inference: identity.

    >>> RandomErasing(factor=(1.0, 1.0), fill_value=0, seed=1)(torch.full((1, 8, 8, 1), 9.0)).min().item()
    0.0
    """

    def __init__(self, factor: Any = 1.0, scale: Any = (0.02, 0.33), fill_value: Any = None,
                 value_range: Sequence[float] = (0, 255), seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor_pair(factor, "factor")
        self.scale = factor_pair(scale, "scale")
        if fill_value is not None and not (isinstance(fill_value, (int, float)) or
                                           isinstance(fill_value, (tuple, list)) and len(fill_value) == 3):
            raise ValueError("The `fill_value` argument should be a number (or a list of three numbers) "
                             f"Received: fill_value={fill_value}")
        self.fill_value, self.value_range = fill_value, value_range

    def _fill(self, shape: Sequence[int], device: torch.device, dtype: torch.dtype, seed: Any) -> torch.Tensor:
        if self.fill_value is None:
            fill = self._normal(shape, device, seed) * self.value_range[1]
        else:
            value = torch.as_tensor(self.fill_value, dtype=torch.float32, device=device)
            if value.dim() and self.data_format == "channels_first":  # one value per channel, on axis 1
                value = value.reshape(-1, 1, 1)
            fill = torch.ones(shape, device=device) * value
        return fill.clamp(self.value_range[0], self.value_range[1]).to(dtype)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Optional[dict]:
        """{"apply_erasing": (batch,) bool, "batch_masks": bool masks shaped like the images (batched),
        "fill_value": values shaped like the images}, as Keras draws them; None outside training."""
        if not training:
            return None
        images = self._images_of(data)
        batch, height, width = self._batch_hw(data)
        device = images.device
        sides = torch.sqrt(self._uniform((batch, 2), self.scale[0], self.scale[1], device, seed))

        def bounds(length: int, ratio: torch.Tensor) -> tuple:
            crop = ratio * length
            start = self._uniform((batch,), 0.0, 1.0, device, seed) * (length - crop)
            return start, start + crop

        x0, x1 = bounds(width, sides[:, 0])
        y0, y1 = bounds(height, sides[:, 1])
        ys = torch.arange(height, dtype=torch.float32, device=device).reshape(1, height, 1)
        xs = torch.arange(width, dtype=torch.float32, device=device).reshape(1, 1, width)
        inside = ((xs >= x0.reshape(-1, 1, 1)) & (xs < x1.reshape(-1, 1, 1)) &
                  (ys >= y0.reshape(-1, 1, 1)) & (ys < y1.reshape(-1, 1, 1)))
        channel_axis = 1 if self.data_format == "channels_first" else -1
        channels = images.shape[-3 if self.data_format == "channels_first" else -1]
        masks = inside.unsqueeze(channel_axis)
        masks = masks.expand(-1, channels, -1, -1) if channel_axis == 1 else masks.expand(-1, -1, -1, channels)
        probability = self._uniform((batch,), self.factor[0], self.factor[1], device, seed)
        apply = self._uniform((batch,), 0.0, 1.0, device, seed) < probability
        shape = (batch,) + tuple(images.shape[-3:])
        fill = self._fill(shape, device, self._compute_torch_dtype, seed)
        return {"apply_erasing": apply, "batch_masks": masks, "fill_value": fill}

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> torch.Tensor:
        """Where `batch_masks` is set in an image chosen by `apply_erasing`, the pixel becomes `fill_value`."""
        x = backend.to_tensor(images).to(self._compute_torch_dtype)
        if not training or transformation is None:
            return x
        unbatched = x.dim() == 3
        x = x.unsqueeze(0) if unbatched else x
        masks = backend.to_tensor(transformation["batch_masks"]).to(torch.bool).to(x.device)
        fill = backend.to_tensor(transformation["fill_value"]).to(x.dtype).to(x.device)
        apply = backend.to_tensor(transformation["apply_erasing"]).to(torch.bool).to(x.device)
        erased = torch.where(masks, fill, x)
        out = torch.where(apply.reshape(-1, 1, 1, 1), erased, x)
        return out[0] if unbatched else out

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale, "fill_value": self.fill_value,
                "value_range": self.value_range, "seed": self.seed}
