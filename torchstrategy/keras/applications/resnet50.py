"""`keras.applications.resnet50`: Keras's older module name for ResNet50 and its preprocessing
(the same objects as keras.applications.resnet)."""
from __future__ import annotations

from torchstrategy.keras.applications.resnet import ResNet50, decode_predictions, preprocess_input

__all__ = ["ResNet50", "decode_predictions", "preprocess_input"]
