"""`keras.applications.mobilenet_v2`: MobileNetV2 (inverted residual blocks, width `alpha`) with
Keras's layer names; 'tf' preprocessing."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils

_SIZES = (96, 128, 160, 192, 224)
# (filters, stride, expansion) of blocks 0..16
_BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6), (64, 1, 6),
           (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6), (320, 1, 6))


def make_divisible(value: float, divisor: int, min_value: Optional[int] = None) -> int:
    """`value` rounded to a multiple of `divisor`, never below `min_value` nor 10% below `value`."""
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)(x)


def _inverted_res_block(inputs: Any, expansion: int, stride: int, alpha: float, filters: int, block_id: int) -> Any:
    in_channels = inputs.shape[-1]
    pointwise_filters = make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                          name=f"{prefix}expand")(x)
        x = _bn(x, f"{prefix}expand_BN")
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=_common.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid", name=f"{prefix}depthwise")(x)
    x = _bn(x, f"{prefix}depthwise_BN")
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
                      name=f"{prefix}project")(x)
    x = _bn(x, f"{prefix}project_BN")
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def MobileNetV2(input_shape: Any = None, alpha: float = 1.0, include_top: bool = True, weights: Any = "imagenet",
                input_tensor: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: Optional[str] = None) -> Any:
    """MobileNetV2 (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    _common.check_weights(weights, include_top, classes)
    size_from = input_shape if input_shape is not None else (
        input_tensor.shape[1:] if input_tensor is not None and hasattr(input_tensor, "shape") else None)
    default_size = 224
    if size_from is not None and size_from[0] == size_from[1] and size_from[0] in _SIZES:
        default_size = size_from[0]
    shape = _common.input_shape_for(input_shape, default_size, 32, include_top, weights)
    rows = shape[0]
    if weights == "imagenet":
        if alpha not in (0.35, 0.5, 0.75, 1.0, 1.3, 1.4):
            raise ValueError(f"If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, "
                             f"`1.0`, `1.3` or `1.4` only; Received `alpha={alpha}`")
        if shape[0] != shape[1] or rows not in _SIZES:
            rows = 224
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in [96, 128, 160, 192, 224]. "
                          "Weights for input shape (224, 224) will be loaded as the default.", stacklevel=2)
    image = _common.image_input(input_tensor, shape)
    x = layers.Conv2D(make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="Conv1")(image)
    x = _bn(x, "bn_Conv1")
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion, block_id=block_id)
    last = make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn(x, "Conv_1_bn")
    x = layers.ReLU(6.0, name="out_relu")(x)
    if include_top:
        x = _common.dense_head(x, classes, classifier_activation, weights, pool_name=None)
    else:
        x = _common.pool(x, pooling)
    file_name = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{'' if include_top else '_no_top'}.h5"
    return _common.finish(_common.model_inputs(input_tensor, image), x, name or f"mobilenetv2_{alpha:0.2f}_{rows}",
                          weights, file_name, _common.BASE_URL + "mobilenet_v2/" + file_name)


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'tf' preprocessing (pixels to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
