"""`keras.applications.xception`: Xception (depthwise-separable convs with residual links) with
Keras's layer names; 'tf' preprocessing."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils


def _bn(x: Any, name: Optional[str] = None) -> Any:
    return layers.BatchNormalization(axis=-1, name=name)(x)


def _sep(x: Any, filters: int, name: str) -> Any:
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return _bn(x, f"{name}_bn")


def _residual(x: Any, filters: int) -> Any:
    residual = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    return _bn(residual)


def _body(image: Any) -> Any:
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(image)
    x = _bn(x, "block1_conv1_bn")
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = _bn(x, "block1_conv2_bn")
    x = layers.Activation("relu", name="block1_conv2_act")(x)
    # entry flow: blocks 2-4 (block 2 starts without the relu)
    for block, filters in ((2, 128), (3, 256), (4, 728)):
        residual = _residual(x, filters)
        if block != 2:
            x = layers.Activation("relu", name=f"block{block}_sepconv1_act")(x)
        x = _sep(x, filters, f"block{block}_sepconv1")
        x = layers.Activation("relu", name=f"block{block}_sepconv2_act")(x)
        x = _sep(x, filters, f"block{block}_sepconv2")
        x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
        x = layers.add([x, residual])
    # middle flow: blocks 5-12
    for block in range(5, 13):
        residual = x
        for conv in (1, 2, 3):
            x = layers.Activation("relu", name=f"block{block}_sepconv{conv}_act")(x)
            x = _sep(x, 728, f"block{block}_sepconv{conv}")
        x = layers.add([x, residual])
    # exit flow
    residual = _residual(x, 1024)
    x = layers.Activation("relu", name="block13_sepconv1_act")(x)
    x = _sep(x, 728, "block13_sepconv1")
    x = layers.Activation("relu", name="block13_sepconv2_act")(x)
    x = _sep(x, 1024, "block13_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name="block13_pool")(x)
    x = layers.add([x, residual])
    x = _sep(x, 1536, "block14_sepconv1")
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = _sep(x, 2048, "block14_sepconv2")
    return layers.Activation("relu", name="block14_sepconv2_act")(x)


def Xception(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
             pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
             name: str = "xception") -> Any:
    """Xception (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    files = ("xception_weights_tf_dim_ordering_tf_kernels.h5", "xception_weights_tf_dim_ordering_tf_kernels_notop.h5")
    return _common.standard(_body, include_top=include_top, weights=weights, input_tensor=input_tensor,
                            input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, name=name, default_size=299, min_size=71,
                            files=files, origin_dir="xception/", pool_names=(None, None),
                            head=lambda x: _common.dense_head(x, classes, classifier_activation, weights))


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'tf' preprocessing (pixels to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
