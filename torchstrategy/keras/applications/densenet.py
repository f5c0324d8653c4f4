"""`keras.applications.densenet`: DenseNet121/169/201 with Keras's layer names; 'torch' preprocessing."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils

_EPS = 1.001e-5


def _bn_relu(x: Any, name: str) -> Any:
    x = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_bn")(x)
    return layers.Activation("relu", name=f"{name}_relu")(x)


def _conv_block(x: Any, growth_rate: int, name: str) -> Any:
    y = _bn_relu(x, f"{name}_0")
    y = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(y)
    y = _bn_relu(y, f"{name}_1")
    y = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(y)
    return layers.Concatenate(axis=3, name=f"{name}_concat")([x, y])


def _transition_block(x: Any, reduction: float, name: str) -> Any:
    x = _bn_relu(x, name)
    x = layers.Conv2D(int(x.shape[3] * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def _densenet(blocks: tuple, family: str, *, include_top: bool, weights: Any, input_tensor: Any, input_shape: Any,
              pooling: Optional[str], classes: int, classifier_activation: Any, name: str) -> Any:
    def body(image: Any) -> Any:
        x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(image)
        x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
        x = _bn_relu(x, "conv1")
        x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
        x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
        for stage, count in enumerate(blocks, start=2):
            for i in range(count):
                x = _conv_block(x, 32, name=f"conv{stage}_block{i + 1}")
            if stage < 5:
                x = _transition_block(x, 0.5, name=f"pool{stage}")
        x = layers.BatchNormalization(axis=3, epsilon=_EPS, name="bn")(x)
        return layers.Activation("relu", name="relu")(x)

    files = (f"{family}_weights_tf_dim_ordering_tf_kernels.h5", f"{family}_weights_tf_dim_ordering_tf_kernels_notop.h5")
    return _common.standard(body, include_top=include_top, weights=weights, input_tensor=input_tensor,
                            input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, name=name, default_size=224, min_size=32,
                            files=files, origin_dir="densenet/")


def DenseNet121(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "densenet121") -> Any:
    """DenseNet121 (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    return _densenet((6, 12, 24, 16), "densenet121", include_top=include_top, weights=weights,
                     input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                     classifier_activation=classifier_activation, name=name)


def DenseNet169(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "densenet169") -> Any:
    """DenseNet169 (see DenseNet121)."""
    return _densenet((6, 12, 32, 32), "densenet169", include_top=include_top, weights=weights,
                     input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                     classifier_activation=classifier_activation, name=name)


def DenseNet201(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "densenet201") -> Any:
    """DenseNet201 (see DenseNet121)."""
    return _densenet((6, 12, 48, 32), "densenet201", include_top=include_top, weights=weights,
                     input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                     classifier_activation=classifier_activation, name=name)


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'torch' preprocessing (pixels to [0, 1], then ImageNet mean/std per channel)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
