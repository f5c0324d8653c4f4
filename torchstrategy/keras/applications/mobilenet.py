"""`keras.applications.mobilenet`: MobileNet (v1: depthwise-separable conv blocks, width `alpha`,
`depth_multiplier`) with Keras's layer names; 'tf' preprocessing."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils

_SIZES = (128, 160, 192, 224)
# (pointwise filters, strides) of depthwise blocks 1..13
_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1),
           (512, 1), (1024, 2), (1024, 1))


def _depthwise_block(x: Any, filters: int, alpha: float, depth_multiplier: int, strides: int, block_id: int) -> Any:
    if strides != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if strides == 1 else "valid", depth_multiplier=depth_multiplier,
                               strides=(strides, strides), use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False, strides=(1, 1),
                      name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape: Any = None, alpha: float = 1.0, depth_multiplier: int = 1, dropout: float = 0.001,
              include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
              name: Optional[str] = None) -> Any:
    """MobileNet (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    _common.check_weights(weights, include_top, classes)
    default_size = 224
    if input_shape is not None and input_shape[0] == input_shape[1] and input_shape[0] in _SIZES:
        default_size = input_shape[0]
    shape = _common.input_shape_for(input_shape, default_size, 32, include_top, weights)
    rows = shape[0]
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError(f"If imagenet weights are being loaded, depth multiplier must be 1.  Received "
                             f"depth_multiplier={depth_multiplier}")
        if alpha not in (0.25, 0.5, 0.75, 1.0):
            raise ValueError(f"If imagenet weights are being loaded, alpha can be one of`0.25`, `0.50`, `0.75` or "
                             f"`1.0` only.  Received alpha={alpha}")
        if shape[0] != shape[1] or rows not in _SIZES:
            rows = 224
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in [128, 160, 192, 224]. "
                          "Weights for input shape (224, 224) will be loaded as the default.", stacklevel=2)
    image = _common.image_input(input_tensor, shape)
    x = layers.Conv2D(int(32 * alpha), (3, 3), padding="same", use_bias=False, strides=(2, 2), name="conv1")(image)
    x = layers.BatchNormalization(axis=-1, name="conv1_bn")(x)
    x = layers.ReLU(6.0, name="conv1_relu")(x)
    for block_id, (filters, strides) in enumerate(_BLOCKS, start=1):
        x = _depthwise_block(x, filters, alpha, depth_multiplier, strides, block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        _common.check_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.pool(x, pooling)
    alpha_text = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0"}.get(alpha, "2_5")
    file_name = f"mobilenet_{alpha_text}_{rows}_tf{'' if include_top else '_no_top'}.h5"
    return _common.finish(_common.model_inputs(input_tensor, image), x, name or f"mobilenet_{alpha:0.2f}_{rows}",
                          weights, file_name, _common.BASE_URL + "mobilenet/" + file_name)


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'tf' preprocessing (pixels to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
