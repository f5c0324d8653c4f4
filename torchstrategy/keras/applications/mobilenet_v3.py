"""`keras.applications.mobilenet_v3`: MobileNetV3Small / MobileNetV3Large (inverted residual blocks
with squeeze-excite and hard-swish, built-in rescaling) with Keras's layer names."""
from __future__ import annotations

import warnings
from typing import Any, Callable, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils
from torchstrategy.keras.applications.mobilenet_v2 import make_divisible

__all__ = ["decode_predictions", "preprocess_input"]  # Keras lists the models at keras.applications only


def _depth(value: float, divisor: int = 8) -> int:
    return make_divisible(value, divisor)


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)(x)


def _relu(x: Any) -> Any:
    return layers.ReLU()(x)


def _hard_sigmoid(x: Any) -> Any:
    return layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)


def _hard_swish(x: Any) -> Any:
    return layers.Activation("hard_swish")(x)


def _se_block(inputs: Any, filters: int, se_ratio: float, prefix: str) -> Any:
    x = layers.GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(inputs)
    x = layers.Conv2D(_depth(filters * se_ratio), kernel_size=1, padding="same", name=f"{prefix}squeeze_excite_conv")(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", name=f"{prefix}squeeze_excite_conv_1")(x)
    x = _hard_sigmoid(x)
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, x])


def _inverted_res_block(x: Any, expansion: float, filters: int, kernel_size: int, stride: int,
                        se_ratio: Optional[float], activation: Callable[[Any], Any], block_id: int) -> Any:
    shortcut = x
    prefix = "expanded_conv_"
    infilters = x.shape[-1]
    if block_id:
        prefix = f"expanded_conv_{block_id}_"
        x = layers.Conv2D(_depth(infilters * expansion), kernel_size=1, padding="same", use_bias=False,
                          name=f"{prefix}expand")(x)
        x = _bn(x, f"{prefix}expand_bn")
        x = activation(x)
    if stride == 2:
        x = layers.ZeroPadding2D(padding=_common.correct_pad(x, kernel_size), name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=stride, padding="same" if stride == 1 else "valid",
                               use_bias=False, name=f"{prefix}depthwise")(x)
    x = _bn(x, f"{prefix}depthwise_bn")
    x = activation(x)
    if se_ratio:
        x = _se_block(x, _depth(infilters * expansion), se_ratio, prefix)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = _bn(x, f"{prefix}project_bn")
    if stride == 1 and infilters == filters:
        x = layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


# per block: (expansion, filters, kernel ('k': the model's kernel), stride, squeeze-excite, activation ('a': the model's))
_SMALL = ((1, 16, 3, 2, True, "relu"), (72.0 / 16, 24, 3, 2, False, "relu"), (88.0 / 24, 24, 3, 1, False, "relu"),
          (4, 40, "k", 2, True, "a"), (6, 40, "k", 1, True, "a"), (6, 40, "k", 1, True, "a"),
          (3, 48, "k", 1, True, "a"), (3, 48, "k", 1, True, "a"), (6, 96, "k", 2, True, "a"),
          (6, 96, "k", 1, True, "a"), (6, 96, "k", 1, True, "a"))
_LARGE = ((1, 16, 3, 1, False, "relu"), (4, 24, 3, 2, False, "relu"), (3, 24, 3, 1, False, "relu"),
          (3, 40, "k", 2, True, "relu"), (3, 40, "k", 1, True, "relu"), (3, 40, "k", 1, True, "relu"),
          (6, 80, 3, 2, False, "a"), (2.5, 80, 3, 1, False, "a"), (2.3, 80, 3, 1, False, "a"),
          (2.3, 80, 3, 1, False, "a"), (6, 112, 3, 1, True, "a"), (6, 112, 3, 1, True, "a"),
          (6, 160, "k", 2, True, "a"), (6, 160, "k", 1, True, "a"), (6, 160, "k", 1, True, "a"))


def _mobilenet_v3(blocks: tuple, last_point_ch: int, model_type: str, input_shape: Any, alpha: float,
                  minimalistic: bool, include_top: bool, weights: Any, input_tensor: Any, classes: int,
                  pooling: Optional[str], dropout_rate: float, classifier_activation: Any,
                  include_preprocessing: bool, name: str) -> Any:
    _common.check_weights(weights, include_top, classes)
    if input_shape is None and input_tensor is not None:
        input_shape = (input_tensor.shape[2], input_tensor.shape[1], 3)
    if input_shape is None:
        input_shape = (None, None, 3)
    rows, cols = input_shape[0], input_shape[1]
    if rows and cols and (rows < 32 or cols < 32):
        raise ValueError(f"Input size must be at least 32x32; Received `input_shape={input_shape}`")
    if weights == "imagenet":
        if (not minimalistic and alpha not in (0.75, 1.0)) or (minimalistic and alpha != 1.0):
            raise ValueError(f"If imagenet weights are being loaded, alpha can be one of `0.75`, `1.0` for non "
                             f"minimalistic or `1.0` for minimalistic only. Received alpha={alpha}")
        if rows != cols or rows != 224:
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not 224. Weights for input shape "
                          "(224, 224) will be loaded as the default.", stacklevel=3)
    image = _common.image_input(input_tensor, tuple(input_shape))
    kernel, activation, se_ratio = (3, _relu, None) if minimalistic else (5, _hard_swish, 0.25)
    x = image
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="conv")(x)
    x = _bn(x, "conv_bn")
    x = activation(x)
    for block_id, (expansion, filters, k, stride, se, act) in enumerate(blocks):
        x = _inverted_res_block(x, expansion, _depth(filters * alpha), kernel if k == "k" else k, stride,
                                se_ratio if se else None, activation if act == "a" else _relu, block_id)
    last_conv_ch = _depth(x.shape[-1] * 6)
    if alpha > 1.0:
        last_point_ch = _depth(last_point_ch * alpha)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False, name="conv_1")(x)
    x = _bn(x, "conv_1_bn")
    x = activation(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True, name="conv_2")(x)
        x = activation(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x)
        x = layers.Flatten()(x)
        _common.check_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.pool(x, pooling, "avg_pool", "max_pool")
    model_name = f"{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
    file_name = f"weights_mobilenet_v3_{model_name}{'' if include_top else '_no_top_v2'}.h5"
    return _common.finish(_common.model_inputs(input_tensor, image), x, name, weights, file_name,
                          _common.BASE_URL + "mobilenet_v3/" + file_name)


def MobileNetV3Small(input_shape: Any = None, alpha: float = 1.0, minimalistic: bool = False, include_top: bool = True,
                     weights: Any = "imagenet", input_tensor: Any = None, classes: int = 1000,
                     pooling: Optional[str] = None, dropout_rate: float = 0.2, classifier_activation: Any = "softmax",
                     include_preprocessing: bool = True, name: str = "MobileNetV3Small") -> Any:
    """MobileNetV3Small (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    return _mobilenet_v3(_SMALL, 1024, "small", input_shape, alpha, minimalistic, include_top, weights, input_tensor,
                         classes, pooling, dropout_rate, classifier_activation, include_preprocessing, name)


def MobileNetV3Large(input_shape: Any = None, alpha: float = 1.0, minimalistic: bool = False, include_top: bool = True,
                     weights: Any = "imagenet", input_tensor: Any = None, classes: int = 1000,
                     pooling: Optional[str] = None, dropout_rate: float = 0.2, classifier_activation: Any = "softmax",
                     include_preprocessing: bool = True, name: str = "MobileNetV3Large") -> Any:
    """MobileNetV3Large (see MobileNetV3Small)."""
    return _mobilenet_v3(_LARGE, 1280, "large", input_shape, alpha, minimalistic, include_top, weights, input_tensor,
                         classes, pooling, dropout_rate, classifier_activation, include_preprocessing, name)


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """A placeholder kept for API consistency: MobileNetV3 rescales inside the model, so `x` is returned."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
