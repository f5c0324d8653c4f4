"""`keras.applications.inception_resnet_v2`: InceptionResNetV2 with Keras's layer names and layer
creation order, and the `CustomScaleLayer` (x + scale * residual) it uses; 'tf' preprocessing."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils


class CustomScaleLayer(layers.Layer):
    """`inputs[0] + inputs[1] * scale`: the scaled residual sum of an Inception-ResNet block."""

    def __init__(self, scale: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs: Any) -> Any:
        return inputs[0] + inputs[1] * self.scale

    def get_config(self) -> dict:
        return dict(super().get_config(), scale=self.scale)


def conv2d_bn(x: Any, filters: int, kernel_size: Any, strides: int = 1, padding: str = "same",
              activation: Optional[str] = "relu", use_bias: bool = False, name: Optional[str] = None) -> Any:
    """Conv, then batch norm without scale (when there is no bias), then the activation."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=3, scale=False, name=None if name is None else f"{name}_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else f"{name}_ac")(x)
    return x


_BRANCHES = {  # per block type: branches as lists of (filters, kernel)
    "block35": [[(32, 1)], [(32, 1), (32, 3)], [(32, 1), (48, 3), (64, 3)]],
    "block17": [[(192, 1)], [(128, 1), (160, (1, 7)), (192, (7, 1))]],
    "block8": [[(192, 1)], [(192, 1), (224, (1, 3)), (256, (3, 1))]],
}


def inception_resnet_block(x: Any, scale: float, block_type: str, block_idx: int, activation: Optional[str] = "relu") -> Any:
    """One residual Inception block ('block35', 'block17' or 'block8')."""
    if block_type not in _BRANCHES:
        raise ValueError(f'Unknown Inception-ResNet block type. Expects "block35", "block17" or "block8", but got: '
                         f"{block_type}")
    branches = []
    for branch in _BRANCHES[block_type]:
        y = x
        for filters, kernel in branch:
            y = conv2d_bn(y, filters, kernel)
        branches.append(y)
    block_name = f"{block_type}_{block_idx}"
    mixed = layers.Concatenate(axis=3, name=f"{block_name}_mixed")(branches)
    up = conv2d_bn(mixed, x.shape[3], 1, activation=None, use_bias=True, name=f"{block_name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{block_name}_ac")(x)
    return x


def _body(image: Any) -> Any:
    x = conv2d_bn(image, 32, 3, strides=2, padding="valid")
    x = conv2d_bn(x, 32, 3, padding="valid")
    x = conv2d_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = conv2d_bn(x, 80, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    b0 = conv2d_bn(x, 96, 1)
    b1 = conv2d_bn(conv2d_bn(x, 48, 1), 64, 5)
    b2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1), 96, 3), 96, 3)
    pool = conv2d_bn(layers.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1)
    x = layers.Concatenate(axis=3, name="mixed_5b")([b0, b1, b2, pool])
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    b0 = conv2d_bn(x, 384, 3, strides=2, padding="valid")
    b1 = conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 256, 3), 384, 3, strides=2, padding="valid")
    pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = layers.Concatenate(axis=3, name="mixed_6a")([b0, b1, pool])
    for block_idx in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    b0 = conv2d_bn(conv2d_bn(x, 256, 1), 384, 3, strides=2, padding="valid")
    b1 = conv2d_bn(conv2d_bn(x, 256, 1), 288, 3, strides=2, padding="valid")
    b2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 288, 3), 320, 3, strides=2, padding="valid")
    pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = layers.Concatenate(axis=3, name="mixed_7a")([b0, b1, b2, pool])
    for block_idx in range(1, 10):
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=block_idx)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8", block_idx=10)
    return conv2d_bn(x, 1536, 1, name="conv_7b")


def InceptionResNetV2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                      input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                      classifier_activation: Any = "softmax", name: str = "inception_resnet_v2") -> Any:
    """InceptionResNetV2 (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    files = ("inception_resnet_v2_weights_tf_dim_ordering_tf_kernels.h5",
             "inception_resnet_v2_weights_tf_dim_ordering_tf_kernels_notop.h5")
    return _common.standard(_body, include_top=include_top, weights=weights, input_tensor=input_tensor,
                            input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, name=name, default_size=299, min_size=75,
                            files=files, origin_dir="inception_resnet_v2/", pool_names=(None, None),
                            head=lambda x: _common.dense_head(x, classes, classifier_activation, weights))


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'tf' preprocessing (pixels to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
