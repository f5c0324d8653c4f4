"""`keras.preprocessing`: the names Keras 3 still keeps there (the `image`, `sequence` and `text` helpers and
the *_dataset_from_* functions, which live in keras/dataset_utils.py)."""
from __future__ import annotations

from torchstrategy.keras.dataset_utils import (  # noqa: F401  (keras.preprocessing.*_dataset_from_*)
    image_dataset_from_directory,
    text_dataset_from_directory,
    timeseries_dataset_from_array,
)
from torchstrategy.keras.preprocessing import image, sequence, text  # noqa: F401

__all__ = ["image", "sequence", "text", "image_dataset_from_directory", "text_dataset_from_directory",
           "timeseries_dataset_from_array"]
