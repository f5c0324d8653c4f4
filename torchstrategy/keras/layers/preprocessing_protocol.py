"""Keras 3's image-preprocessing protocol for the augmentation layers built on it: a call draws one
`get_random_transformation` and hands it to transform_images / _labels / _bounding_boxes / _segmentation_masks."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.core import _normalize_data_format


def factor_pair(factor: Any, name: str, bounds: tuple = (0, 1), layer: str = "") -> tuple:
    """Keras's _set_factor: a pair is sorted (rejected only when wholly outside `bounds`); a number f gives
    (max(-|f|, low), |f|) and must lie in `bounds`."""
    message = (f"{layer + ': ' if layer else ''}The `{name}` argument should be a number (or a list of two numbers) "
               f"in the range [{bounds[0]}, {bounds[1]}]. Received: {name}={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or any(isinstance(f, bool) or not isinstance(f, (int, float)) for f in factor):
            raise ValueError(message)
        if factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        low, high = sorted(factor)
        return low, high
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not bounds[0] <= factor <= bounds[1]:
        raise ValueError(message)
    return max(-abs(factor), bounds[0]), abs(factor)


def rescale(images: torch.Tensor, source: Sequence[float], target: Sequence[float]) -> torch.Tensor:
    """Maps values from the `source` range to the `target` range linearly (Keras's _transform_value_range)."""
    if source[0] == target[0] and source[1] == target[1]:
        return images
    unit = (images - source[0]) / (source[1] - source[0])
    return unit * (target[1] - target[0]) + target[0]


def _as_tensor(value: Any) -> Any:
    """A tensor of `value`, or `value` itself when it is a ragged list (one entry per image)."""
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "shape") for v in value):
        if len({tuple(v.shape) for v in value}) > 1:
            return value
        return torch.stack([backend.to_tensor(v) for v in value])
    try:
        return backend.to_tensor(value)
    except (ValueError, TypeError, RuntimeError):
        return value


class AugmentationLayer(Layer):
    """Base of the Keras 3 augmentation layers here. A call takes images (batch, H, W, C) or (H, W, C) (channels
    first with data_format='channels_first') or a dict with "images" and optional "labels", "bounding_boxes",
    "segmentation_masks"; it draws one transformation (None outside training) and applies it to each entry.
    Subclasses give `get_random_transformation` and `_augment` (channels-last batches, transformation given)."""

    def __init__(self, seed: Optional[int] = None, data_format: Optional[str] = None,
                 bounding_box_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed = seed
        self.data_format = _normalize_data_format(data_format)
        self.bounding_box_format = bounding_box_format
        self._generators: dict = {}
        self.built = True

    # ----- random draws ------------------------------------------------------------------------------
    def _generator(self, device: torch.device, seed: Any = None) -> Optional[torch.Generator]:
        if isinstance(seed, torch.Generator):
            return seed
        if seed is not None:
            return torch.Generator(device=device).manual_seed(int(seed))
        if self.seed is None:
            return None
        if device not in self._generators:  # one stream per device, advancing call after call
            self._generators[device] = torch.Generator(device=device).manual_seed(int(self.seed))
        return self._generators[device]

    def _uniform(self, shape: Sequence[int], low: float, high: float, device: torch.device,
                 seed: Any = None) -> torch.Tensor:
        draw = torch.rand(tuple(shape), generator=self._generator(device, seed), device=device)
        return low + (high - low) * draw

    def _normal(self, shape: Sequence[int], device: torch.device, seed: Any = None) -> torch.Tensor:
        return torch.randn(tuple(shape), generator=self._generator(device, seed), device=device)

    # ----- layout ------------------------------------------------------------------------------------
    def _images_of(self, data: Any) -> torch.Tensor:
        images = backend.to_tensor(data["images"] if isinstance(data, dict) else data)
        if images.dim() not in (3, 4):
            raise ValueError("Expected image tensor to have rank 3 (single image) or 4 (batch of images). "
                             f"Received: data.shape={tuple(images.shape)}")
        return images

    def _batch_hw(self, data: Any) -> tuple[int, int, int]:
        """(batch, height, width) of the images in `data`; an unbatched image counts as a batch of 1."""
        images = self._images_of(data)
        batch = 1 if images.dim() == 3 else images.shape[0]
        h_axis = -2 if self.data_format == "channels_first" else -3
        return batch, images.shape[h_axis], images.shape[h_axis + 1]

    def _to_nhwc(self, images: Any) -> tuple[torch.Tensor, bool]:
        x = backend.to_tensor(images)
        unbatched = x.dim() == 3
        x = x.unsqueeze(0) if unbatched else x
        if x.dim() != 4:
            raise ValueError(f"Layer '{self.name}' expects rank 3 or 4 images, got shape {tuple(x.shape)}.")
        x = x.to(self._compute_torch_dtype)
        return (x.movedim(1, -1) if self.data_format == "channels_first" else x), unbatched

    def _from_nhwc(self, x: torch.Tensor, unbatched: bool) -> torch.Tensor:
        x = x.movedim(-1, 1) if self.data_format == "channels_first" else x
        return x[0] if unbatched else x

    # ----- Keras's protocol --------------------------------------------------------------------------
    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        """The random draw of one call (a dict of tensors, or None when nothing is to change)."""
        return None

    def _augment(self, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        """Applies `transformation` to channels-last float images (batch, H, W, C)."""
        raise NotImplementedError

    def transform_images(self, images: Any, transformation: Any, training: bool = True) -> torch.Tensor:
        """Applies `transformation` (as get_random_transformation draws it) to images; identity when not training
        or when the transformation is None, cast to the compute dtype either way."""
        x, unbatched = self._to_nhwc(images)
        if training and transformation is not None:
            x = self._augment(x, transformation)
        return self._from_nhwc(x, unbatched)

    def transform_labels(self, labels: Any, transformation: Any, training: bool = True) -> Any:
        """Labels pass through unchanged unless the layer mixes them."""
        return labels

    def transform_bounding_boxes(self, bounding_boxes: Any, transformation: Any,
                                 training: bool = True) -> Any:
        """Boxes pass through unchanged unless the layer moves pixels (then it must say so)."""
        return bounding_boxes

    def transform_segmentation_masks(self, segmentation_masks: Any, transformation: Any,
                                     training: bool = True) -> Any:
        """Masks pass through unchanged unless the layer moves pixels."""
        return segmentation_masks

    def call(self, data: Any, training: bool = True) -> Any:
        transformation = self.get_random_transformation(data, training=training)
        if not isinstance(data, dict):
            self._images_of(data)  # checks the rank
            return self.transform_images(data, transformation, training=training)
        out = dict(data)
        unbatched = self._images_of(data).dim() == 3
        out["images"] = self.transform_images(data["images"], transformation, training=training)
        if "labels" in data:
            labels = backend.to_tensor(data["labels"])
            labels = self.transform_labels(labels.unsqueeze(0) if unbatched else labels, transformation,
                                           training=training)
            out["labels"] = labels[0] if unbatched else labels
        if "bounding_boxes" in data:
            if not self.bounding_box_format:
                raise ValueError("You passed an input with a 'bounding_boxes' key, but you didn't specify a bounding "
                                 f"box format. Pass a `bounding_box_format` argument to your {type(self).__name__} "
                                 "layer, e.g. `bounding_box_format='xyxy'`.")
            boxes = {k: _as_tensor(v) for k, v in dict(data["bounding_boxes"]).items()}
            if unbatched:
                boxes = {k: (v.unsqueeze(0) if k in ("boxes", "labels") else v) for k, v in boxes.items()}
            boxes = self.transform_bounding_boxes(boxes, transformation, training=training)
            if unbatched:
                boxes = {k: (v[0] if k in ("boxes", "labels") else v) for k, v in boxes.items()}
            out["bounding_boxes"] = boxes
        if "segmentation_masks" in data:
            out["segmentation_masks"] = self.transform_segmentation_masks(data["segmentation_masks"],
                                                                          transformation, training=training)
        return out

    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs  # labels and boxes keep their dtype; images are cast in transform_images

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        config = {**super().get_config(), "data_format": self.data_format}
        if self.bounding_box_format is not None:
            config["bounding_box_format"] = self.bounding_box_format
        return config
