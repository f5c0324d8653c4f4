"""Keras 3.15 layers with no implementation here yet: each takes Keras's exact arguments and raises
NotImplementedError naming the layer and what to use instead, so a script fails at once and says why."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras.layers.base import Layer


class _NotProvided(Layer):
    _instead = "write the transformation as a Lambda layer or a tf.data map function"

    def _refuse(self) -> None:
        raise NotImplementedError(f"keras.layers.{type(self).__name__} is not implemented in torchstrategy yet. "
                                  f"Instead, {self._instead}.")


class ContrastLimitedAdaptiveHistogramEqualization(_NotProvided):
    """Keras's CLAHE (not provided: raises NotImplementedError)."""

    def __init__(self, value_range: Any = (0, 255), clip_limit: float = 4.0, tile_grid_size: Any = (8, 8),
                 data_format: Optional[str] = None, **kwargs: Any) -> None:
        self._refuse()


class MaxNumBoundingBoxes(_NotProvided):
    """Keras's bounding-box padding layer (not provided: raises NotImplementedError)."""

    _instead = "pad the boxes to a fixed count with tf.pad in a tf.data map function"

    def __init__(self, max_number: int, fill_value: int = -1, **kwargs: Any) -> None:
        self._refuse()
