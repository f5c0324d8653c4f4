"""`keras.applications.inception_v3`: InceptionV3 with Keras's layer names (mixed0..mixed10) and
layer creation order; 'tf' preprocessing."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils


def conv2d_bn(x: Any, filters: int, rows: int, cols: int, padding: str = "same", strides: tuple = (1, 1),
              name: Optional[str] = None) -> Any:
    """Conv (no bias), batch norm without scale, relu."""
    x = layers.Conv2D(filters, (rows, cols), strides=strides, padding=padding, use_bias=False,
                      name=f"{name}_conv" if name else None)(x)
    x = layers.BatchNormalization(axis=3, scale=False, name=f"{name}_bn" if name else None)(x)
    return layers.Activation("relu", name=name)(x)


def _avg_branch(x: Any, filters: int) -> Any:
    return conv2d_bn(layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x), filters, 1, 1)


def _block_35(x: Any, pool_filters: int, name: str) -> Any:
    b1 = conv2d_bn(x, 64, 1, 1)
    b5 = conv2d_bn(conv2d_bn(x, 48, 1, 1), 64, 5, 5)
    b3 = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    return layers.concatenate([b1, b5, b3, _avg_branch(x, pool_filters)], axis=3, name=name)


def _block_17(x: Any, width: int, name: str) -> Any:
    b1 = conv2d_bn(x, 192, 1, 1)
    b7 = conv2d_bn(conv2d_bn(conv2d_bn(x, width, 1, 1), width, 1, 7), 192, 7, 1)
    d = conv2d_bn(x, width, 1, 1)
    for filters, rows, cols in ((width, 7, 1), (width, 1, 7), (width, 7, 1), (192, 1, 7)):
        d = conv2d_bn(d, filters, rows, cols)
    return layers.concatenate([b1, b7, d, _avg_branch(x, 192)], axis=3, name=name)


def _block_8(x: Any, index: int) -> Any:
    b1 = conv2d_bn(x, 320, 1, 1)
    b3 = conv2d_bn(x, 384, 1, 1)
    b3 = layers.concatenate([conv2d_bn(b3, 384, 1, 3), conv2d_bn(b3, 384, 3, 1)], axis=3, name=f"mixed9_{index}")
    d = conv2d_bn(conv2d_bn(x, 448, 1, 1), 384, 3, 3)
    d = layers.concatenate([conv2d_bn(d, 384, 1, 3), conv2d_bn(d, 384, 3, 1)], axis=3)
    return layers.concatenate([b1, b3, d, _avg_branch(x, 192)], axis=3, name=f"mixed{9 + index}")


def _body(image: Any) -> Any:
    x = conv2d_bn(image, 32, 3, 3, strides=(2, 2), padding="valid")
    x = conv2d_bn(x, 32, 3, 3, padding="valid")
    x = conv2d_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv2d_bn(x, 80, 1, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _block_35(x, 32, "mixed0")
    x = _block_35(x, 64, "mixed1")
    x = _block_35(x, 64, "mixed2")
    b3 = conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    d = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3, strides=(2, 2), padding="valid")
    x = layers.concatenate([b3, d, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=3, name="mixed3")
    x = _block_17(x, 128, "mixed4")
    x = _block_17(x, 160, "mixed5")
    x = _block_17(x, 160, "mixed6")
    x = _block_17(x, 192, "mixed7")
    b3 = conv2d_bn(conv2d_bn(x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
    b7 = conv2d_bn(conv2d_bn(conv2d_bn(x, 192, 1, 1), 192, 1, 7), 192, 7, 1)
    b7 = conv2d_bn(b7, 192, 3, 3, strides=(2, 2), padding="valid")
    x = layers.concatenate([b3, b7, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=3, name="mixed8")
    for index in range(2):
        x = _block_8(x, index)
    return x


def InceptionV3(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "inception_v3") -> Any:
    """InceptionV3 (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    files = ("inception_v3_weights_tf_dim_ordering_tf_kernels.h5",
             "inception_v3_weights_tf_dim_ordering_tf_kernels_notop.h5")
    return _common.standard(_body, include_top=include_top, weights=weights, input_tensor=input_tensor,
                            input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, name=name, default_size=299, min_size=75,
                            files=files, origin_dir="inception_v3/", pool_names=(None, None),
                            head=lambda x: _common.dense_head(x, classes, classifier_activation, weights))


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'tf' preprocessing (pixels to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
