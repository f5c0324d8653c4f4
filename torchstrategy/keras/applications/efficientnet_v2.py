"""`keras.applications.efficientnet_v2`: EfficientNetV2 B0-B3, S, M, L (fused and plain MBConv blocks,
built-in preprocessing) with Keras's layer names; `preprocess_input` passes input through."""
from __future__ import annotations

import math
from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils
from torchstrategy.keras.applications.efficientnet import CONV_KERNEL_INITIALIZER, DENSE_KERNEL_INITIALIZER

_B = ((3, 1, 32, 16, 1, 0, 1, 1), (3, 2, 16, 32, 4, 0, 2, 1), (3, 2, 32, 48, 4, 0, 2, 1), (3, 3, 48, 96, 4, 0.25, 2, 0),
      (3, 5, 96, 112, 6, 0.25, 1, 0), (3, 8, 112, 192, 6, 0.25, 2, 0))
# kernel, repeats, filters in, filters out, expand ratio, se ratio, strides, fused (1) or not (0)
BLOCKS = {
    "efficientnetv2-s": ((3, 2, 24, 24, 1, 0, 1, 1), (3, 4, 24, 48, 4, 0, 2, 1), (3, 4, 48, 64, 4, 0, 2, 1),
                         (3, 6, 64, 128, 4, 0.25, 2, 0), (3, 9, 128, 160, 6, 0.25, 1, 0),
                         (3, 15, 160, 256, 6, 0.25, 2, 0)),
    "efficientnetv2-m": ((3, 3, 24, 24, 1, 0, 1, 1), (3, 5, 24, 48, 4, 0, 2, 1), (3, 5, 48, 80, 4, 0, 2, 1),
                         (3, 7, 80, 160, 4, 0.25, 2, 0), (3, 14, 160, 176, 6, 0.25, 1, 0),
                         (3, 18, 176, 304, 6, 0.25, 2, 0), (3, 5, 304, 512, 6, 0.25, 1, 0)),
    "efficientnetv2-l": ((3, 4, 32, 32, 1, 0, 1, 1), (3, 7, 32, 64, 4, 0, 2, 1), (3, 7, 64, 96, 4, 0, 2, 1),
                         (3, 10, 96, 192, 4, 0.25, 2, 0), (3, 19, 192, 224, 6, 0.25, 1, 0),
                         (3, 25, 224, 384, 6, 0.25, 2, 0), (3, 7, 384, 640, 6, 0.25, 1, 0)),
    "efficientnetv2-b0": _B, "efficientnetv2-b1": _B, "efficientnetv2-b2": _B, "efficientnetv2-b3": _B,
}


def _round_filters(filters: float, width: float, divisor: int = 8) -> int:
    filters *= width
    return int(max(divisor, int(filters + divisor / 2) // divisor * divisor))


def _conv(x: Any, filters: int, kernel: int, strides: int, name: str, activation: Optional[str] = None) -> Any:
    return layers.Conv2D(filters, kernel, strides=strides, kernel_initializer=CONV_KERNEL_INITIALIZER, padding="same",
                         use_bias=activation is not None, activation=activation, name=name)(x)


def _bn_act(x: Any, name: str, activation: Optional[str], act_name: Optional[str] = None) -> Any:
    x = layers.BatchNormalization(axis=3, momentum=0.9, name=f"{name}bn" if act_name is None else name)(x)
    return x if activation is None else layers.Activation(activation, name=act_name or f"{name}activation")(x)


def _squeeze_excite(x: Any, filters: int, input_filters: int, se_ratio: float, activation: str, name: str) -> Any:
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = layers.Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
    se = _conv(se, max(1, int(input_filters * se_ratio)), 1, 1, f"{name}se_reduce", activation)
    se = _conv(se, filters, 1, 1, f"{name}se_expand", "sigmoid")
    return layers.multiply([x, se], name=f"{name}se_excite")


def _block(inputs: Any, fused: int, input_filters: int, output_filters: int, expand_ratio: int, kernel_size: int,
           strides: int, se_ratio: float, activation: str, survival_probability: float, name: str) -> Any:
    filters = input_filters * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.Conv2D(filters, kernel_size=kernel_size if fused else 1, strides=strides if fused else 1,
                          kernel_initializer=CONV_KERNEL_INITIALIZER, padding="same", use_bias=False,
                          name=f"{name}expand_conv")(x)
        x = _bn_act(x, f"{name}expand_bn", activation, f"{name}expand_activation")
    if not fused:
        x = layers.DepthwiseConv2D(kernel_size=kernel_size, strides=strides, depthwise_initializer=CONV_KERNEL_INITIALIZER,
                                   padding="same", use_bias=False, name=f"{name}dwconv2")(x)
        x = _bn_act(x, name, activation)
    if 0 < se_ratio <= 1:
        x = _squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
    one = not fused or expand_ratio != 1
    x = layers.Conv2D(output_filters, kernel_size=1 if one else kernel_size, strides=1 if one else strides,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, padding="same", use_bias=False,
                      name=f"{name}project_conv")(x)
    x = layers.BatchNormalization(axis=3, momentum=0.9, name=f"{name}project_bn")(x)
    if fused and expand_ratio == 1:
        x = layers.Activation(activation=activation, name=f"{name}project_activation")(x)
    if strides == 1 and input_filters == output_filters:
        if survival_probability:
            x = layers.Dropout(survival_probability, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def _efficientnet_v2(width: float, depth: float, default_size: int, arch: str, *, include_top: bool, weights: Any,
                     input_tensor: Any, input_shape: Any, pooling: Optional[str], classes: int,
                     classifier_activation: Any, include_preprocessing: bool, name: str, dropout_rate: float = 0.2,
                     drop_connect_rate: float = 0.2, activation: str = "swish") -> Any:
    blocks = BLOCKS[name] if name in BLOCKS else BLOCKS[arch]
    _common.check_weights(weights, include_top, classes)
    shape = _common.input_shape_for(input_shape, default_size, 32, include_top, weights)
    image = _common.image_input(input_tensor, shape)
    x = image
    if include_preprocessing:
        if name.split("-")[-1].startswith("b") and shape[2] == 3:
            x = layers.Rescaling(scale=1.0 / 255)(x)
            x = layers.Normalization(mean=[0.485, 0.456, 0.406], variance=[0.229 ** 2, 0.224 ** 2, 0.225 ** 2],
                                     axis=3)(x)
        else:
            x = layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)
    x = layers.Conv2D(_round_filters(blocks[0][2], width), kernel_size=3, strides=2,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, padding="same", use_bias=False, name="stem_conv")(x)
    x = _bn_act(x, "stem_bn", activation, "stem_activation")
    total = float(sum(spec[1] for spec in blocks))
    b = 0
    for i, (kernel, repeats, f_in, f_out, expand, se_ratio, strides, fused) in enumerate(blocks):
        f_in, f_out = _round_filters(f_in, width), _round_filters(f_out, width)
        for j in range(int(math.ceil(depth * repeats))):
            if j > 0:
                strides, f_in = 1, f_out
            x = _block(x, fused, f_in, f_out, expand, kernel, strides, se_ratio, activation,
                       drop_connect_rate * b / total, f"block{i + 1}{chr(j + 97)}_")
            b += 1
    x = layers.Conv2D(_round_filters(1280, width), kernel_size=1, strides=1, kernel_initializer=CONV_KERNEL_INITIALIZER,
                      padding="same", use_bias=False, name="top_conv")(x)
    x = _bn_act(x, "top_bn", activation, "top_activation")
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        _common.check_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, kernel_initializer=DENSE_KERNEL_INITIALIZER,
                         bias_initializer="zeros", name="predictions")(x)
    else:
        x = _common.pool(x, pooling, "avg_pool", "max_pool")
    file_name = name + (".h5" if include_top else "_notop.h5")
    return _common.finish(_common.model_inputs(input_tensor, image), x, name, weights, file_name,
                          _common.BASE_URL + "efficientnet_v2/" + file_name)


def _make(width: float, depth: float, size: int, default_name: str, arch: str) -> Any:
    def EfficientNetV2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                       input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                       classifier_activation: Any = "softmax", include_preprocessing: bool = True,
                       name: str = default_name) -> Any:
        return _efficientnet_v2(width, depth, size, default_name, include_top=include_top, weights=weights,
                                input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                                classifier_activation=classifier_activation,
                                include_preprocessing=include_preprocessing, name=name)

    EfficientNetV2.__name__ = EfficientNetV2.__qualname__ = arch
    EfficientNetV2.__doc__ = (f"{arch} (Keras's layer names; `weights='imagenet'` reads Keras's file "
                              f"'{default_name}.h5' / '{default_name}_notop.h5' from ~/.keras/models).")
    return EfficientNetV2


EfficientNetV2B0 = _make(1.0, 1.0, 224, "efficientnetv2-b0", "EfficientNetV2B0")
EfficientNetV2B1 = _make(1.0, 1.1, 240, "efficientnetv2-b1", "EfficientNetV2B1")
EfficientNetV2B2 = _make(1.1, 1.2, 260, "efficientnetv2-b2", "EfficientNetV2B2")
EfficientNetV2B3 = _make(1.2, 1.4, 300, "efficientnetv2-b3", "EfficientNetV2B3")
EfficientNetV2S = _make(1.0, 1.0, 384, "efficientnetv2-s", "EfficientNetV2S")
EfficientNetV2M = _make(1.0, 1.0, 480, "efficientnetv2-m", "EfficientNetV2M")
EfficientNetV2L = _make(1.0, 1.0, 480, "efficientnetv2-l", "EfficientNetV2L")


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """A placeholder kept for API consistency: EfficientNetV2 preprocesses inside the model, so `x` is returned."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
