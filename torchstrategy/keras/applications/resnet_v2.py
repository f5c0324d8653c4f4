"""`keras.applications.resnet_v2`: ResNet50V2/101V2/152V2 (pre-activation blocks) with Keras's
layer names; 'tf' preprocessing."""
from __future__ import annotations

from typing import Any, Callable, Optional

from torchstrategy.keras.applications import imagenet_utils
from torchstrategy.keras.applications.resnet import build_resnet, stack_v2


def _v2_stages(blocks: tuple) -> Callable[[Any], Any]:
    def stack_fn(x: Any) -> Any:
        for index, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks)):
            x = stack_v2(x, filters, count, stride1=1 if index == 3 else 2, name=f"conv{index + 2}")
        return x

    return stack_fn


def ResNet50V2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
               input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
               classifier_activation: Any = "softmax", name: str = "resnet50v2") -> Any:
    """ResNet50V2 (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    return build_resnet(_v2_stages((3, 4, 6, 3)), True, True, "resnet50v2", include_top=include_top,
                        weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                        classes=classes, classifier_activation=classifier_activation, name=name)


def ResNet101V2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "resnet101v2") -> Any:
    """ResNet101V2 (see ResNet50V2)."""
    return build_resnet(_v2_stages((3, 4, 23, 3)), True, True, "resnet101v2", include_top=include_top,
                        weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                        classes=classes, classifier_activation=classifier_activation, name=name)


def ResNet152V2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "resnet152v2") -> Any:
    """ResNet152V2 (see ResNet50V2)."""
    return build_resnet(_v2_stages((3, 8, 36, 3)), True, True, "resnet152v2", include_top=include_top,
                        weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                        classes=classes, classifier_activation=classifier_activation, name=name)


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'tf' preprocessing (pixels to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
