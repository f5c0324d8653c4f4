"""Keras 3's MaxNumBoundingBoxes: cuts or pads the bounding boxes (and their labels) of each image to a fixed
count so they batch; the images pass through."""
from __future__ import annotations

from typing import Any

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.preprocessing_protocol import AugmentationLayer


def _fixed_count(values: Any, count: int, fill: int, width: int) -> torch.Tensor:
    """(batch, n[, 4]) -> (batch, count[, 4]); a list of per-image arrays of different lengths is accepted."""
    if isinstance(values, (list, tuple)) and values and not isinstance(values[0], (int, float)):
        rows = [backend.to_tensor(v) for v in values]
        if rows[0].dim() == (2 if width else 1):  # one image per entry: ragged batch
            return torch.stack([_fixed_count(r.unsqueeze(0), count, fill, width)[0] for r in rows])
    tensor = backend.to_tensor(values)
    tensor = tensor[:, :count]
    missing = count - tensor.shape[1]
    if missing > 0:
        pad_shape = (tensor.shape[0], missing) + ((width,) if width else ())
        tensor = torch.cat([tensor, torch.full(pad_shape, fill, dtype=tensor.dtype, device=tensor.device)], dim=1)
    return tensor


class MaxNumBoundingBoxes(AugmentationLayer):
    """Gives every image exactly `max_number` boxes: extra boxes are dropped, missing ones are added as boxes
    and labels equal to `fill_value`. Called on {"images", "bounding_boxes": {"boxes", "labels"}} (a
    `bounding_box_format` is required, as Keras); images, labels and masks pass through.

    >>> out = MaxNumBoundingBoxes(3, bounding_box_format="xyxy")(
    ...     {"images": torch.zeros(1, 4, 4, 3), "bounding_boxes": {"boxes": torch.ones(1, 1, 4),
    ...                                                           "labels": torch.ones(1, 1)}})
    >>> out["bounding_boxes"]["labels"].tolist()
    [[1.0, -1.0, -1.0]]
    """

    def __init__(self, max_number: int, fill_value: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_number, self.fill_value = int(max_number), int(fill_value)

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> Any:
        """Images are returned as they are."""
        return backend.to_tensor(images)

    def transform_labels(self, labels: Any, transformation: Any = None, training: bool = True) -> Any:
        """Labels are returned as they are."""
        return labels

    def transform_segmentation_masks(self, segmentation_masks: Any, transformation: Any = None,
                                     training: bool = True) -> Any:
        """Masks are returned as they are."""
        return segmentation_masks

    def transform_bounding_boxes(self, bounding_boxes: Any, transformation: Any,
                                 training: bool = True) -> dict:
        """{"boxes": (batch, n, 4), "labels": (batch, n)} -> the same with n = max_number."""
        extra = set(bounding_boxes) - {"boxes", "labels"}
        if extra:
            raise KeyError(f"There are unsupported keys in `bounding_boxes`: {sorted(extra)}. Only `boxes` and "
                           "`labels` are supported.")
        out = dict(bounding_boxes)
        out["boxes"] = _fixed_count(bounding_boxes["boxes"], self.max_number, self.fill_value, 4)
        out["labels"] = _fixed_count(bounding_boxes["labels"], self.max_number, self.fill_value, 0)
        return out

    def compute_output_shape(self, input_shape: Any) -> Any:
        if isinstance(input_shape, dict) and "bounding_boxes" in input_shape:
            shapes = dict(input_shape)
            boxes = dict(shapes["bounding_boxes"])
            boxes["boxes"] = tuple(boxes["boxes"][:1]) + (self.max_number,) + tuple(boxes["boxes"][2:])
            boxes["labels"] = tuple(boxes["labels"][:1]) + (self.max_number,)
            shapes["bounding_boxes"] = boxes
            return shapes
        return input_shape

    def get_config(self) -> dict:
        config = super().get_config()
        return {**config, "max_number": self.max_number, "fill_value": self.fill_value}
