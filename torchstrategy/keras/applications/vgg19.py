"""`keras.applications.vgg19`: VGG19 with Keras's layer names; 'caffe' preprocessing."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras.applications import imagenet_utils
from torchstrategy.keras.applications.vgg16 import build_vgg


def VGG19(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
          pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
          name: str = "vgg19") -> Any:
    """VGG19 (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    return build_vgg((2, 2, 4, 4, 4), "vgg19", include_top=include_top, weights=weights, input_tensor=input_tensor,
                     input_shape=input_shape, pooling=pooling, classes=classes,
                     classifier_activation=classifier_activation, name=name)


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'caffe' preprocessing (RGB->BGR, minus the ImageNet BGR means)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
