"""`keras.applications.efficientnet`: EfficientNetB0-B7 (MBConv blocks with squeeze-excite, built-in
rescaling and normalization) with Keras's layer names; `preprocess_input` passes input through."""
from __future__ import annotations

import math
from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils

BASE_URL = "https://storage.googleapis.com/keras-applications/"
CONV_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                           "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                            "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]
# kernel, repeats, filters in, filters out, expand ratio, strides (all: id_skip, se_ratio 0.25)
_BLOCKS = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
           (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1))


def _block(inputs: Any, activation: str, drop_rate: float, name: str, filters_in: int, filters_out: int,
           kernel_size: int, strides: int, expand_ratio: int, se_ratio: float = 0.25) -> Any:
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False, kernel_initializer=CONV_KERNEL_INITIALIZER,
                          name=f"{name}expand_conv")(x)
        x = layers.BatchNormalization(axis=3, name=f"{name}expand_bn")(x)
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    if strides == 2:
        x = layers.ZeroPadding2D(padding=_common.correct_pad(x, kernel_size), name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, padding="valid" if strides == 2 else "same",
                               use_bias=False, depthwise_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}dwconv")(x)
    x = layers.BatchNormalization(axis=3, name=f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        filters_se = max(1, int(filters_in * se_ratio))
        se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
        se = layers.Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
        se = layers.Conv2D(filters_se, 1, padding="same", activation=activation,
                           kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}se_reduce")(se)
        se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=CONV_KERNEL_INITIALIZER,
                           name=f"{name}se_expand")(se)
        x = layers.multiply([x, se], name=f"{name}se_excite")
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False, kernel_initializer=CONV_KERNEL_INITIALIZER,
                      name=f"{name}project_conv")(x)
    x = layers.BatchNormalization(axis=3, name=f"{name}project_bn")(x)
    if strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def _efficientnet(width: float, depth: float, default_size: int, dropout_rate: float, weights_name: str, *,
                  include_top: bool, weights: Any, input_tensor: Any, input_shape: Any, pooling: Optional[str],
                  classes: int, classifier_activation: Any, name: str, drop_connect_rate: float = 0.2,
                  activation: str = "swish") -> Any:
    def round_filters(filters: float, divisor: int = 8) -> int:
        filters *= width
        rounded = max(divisor, int(filters + divisor / 2) // divisor * divisor)
        return int(rounded + divisor if rounded < 0.9 * filters else rounded)

    def round_repeats(repeats: int) -> int:
        return int(math.ceil(depth * repeats))

    def body(image: Any) -> Any:
        x = layers.Rescaling(1.0 / 255.0)(image)
        x = layers.Normalization(axis=3)(x)
        if weights == "imagenet":
            x = layers.Rescaling([1.0 / math.sqrt(stddev) for stddev in IMAGENET_STDDEV_RGB])(x)
        x = layers.ZeroPadding2D(padding=_common.correct_pad(x, 3), name="stem_conv_pad")(x)
        x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                          kernel_initializer=CONV_KERNEL_INITIALIZER, name="stem_conv")(x)
        x = layers.BatchNormalization(axis=3, name="stem_bn")(x)
        x = layers.Activation(activation, name="stem_activation")(x)
        total = float(sum(round_repeats(spec[1]) for spec in _BLOCKS))
        b = 0
        for i, (kernel, repeats, f_in, f_out, expand, strides) in enumerate(_BLOCKS):
            f_in, f_out = round_filters(f_in), round_filters(f_out)
            for j in range(round_repeats(repeats)):
                if j > 0:
                    strides, f_in = 1, f_out
                x = _block(x, activation, drop_connect_rate * b / total, f"block{i + 1}{chr(j + 97)}_", f_in, f_out,
                           kernel, strides, expand)
                b += 1
        x = layers.Conv2D(round_filters(1280), 1, padding="same", use_bias=False,
                          kernel_initializer=CONV_KERNEL_INITIALIZER, name="top_conv")(x)
        x = layers.BatchNormalization(axis=3, name="top_bn")(x)
        return layers.Activation(activation, name="top_activation")(x)

    def head(x: Any) -> Any:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        _common.check_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, kernel_initializer=DENSE_KERNEL_INITIALIZER,
                            name="predictions")(x)

    _common.check_weights(weights, include_top, classes)
    shape = _common.input_shape_for(input_shape, default_size, 32, include_top, weights)
    image = _common.image_input(input_tensor, shape)
    x = body(image)
    x = head(x) if include_top else _common.pool(x, pooling, "avg_pool", "max_pool")
    file_name = name + (".h5" if include_top else "_notop.h5")
    return _common.finish(_common.model_inputs(input_tensor, image), x, name, weights, file_name, BASE_URL + file_name)


def _make(width: float, depth: float, size: int, dropout: float, default_name: str) -> Any:
    def EfficientNet(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                     input_shape: Any = None, pooling: Optional[str] = None, classes: int = 1000,
                     classifier_activation: Any = "softmax", name: str = default_name) -> Any:
        return _efficientnet(width, depth, size, dropout, default_name, include_top=include_top, weights=weights,
                             input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                             classifier_activation=classifier_activation, name=name)

    arch = default_name.replace("efficientnetb", "EfficientNetB")
    EfficientNet.__name__ = EfficientNet.__qualname__ = arch
    EfficientNet.__doc__ = (f"{arch} (Keras's layer names; `weights='imagenet'` reads Keras's file "
                            f"'{default_name}.h5' / '{default_name}_notop.h5' from ~/.keras/models).")
    return EfficientNet


EfficientNetB0 = _make(1.0, 1.0, 224, 0.2, "efficientnetb0")
EfficientNetB1 = _make(1.0, 1.1, 240, 0.2, "efficientnetb1")
EfficientNetB2 = _make(1.1, 1.2, 260, 0.3, "efficientnetb2")
EfficientNetB3 = _make(1.2, 1.4, 300, 0.3, "efficientnetb3")
EfficientNetB4 = _make(1.4, 1.8, 380, 0.4, "efficientnetb4")
EfficientNetB5 = _make(1.6, 2.2, 456, 0.4, "efficientnetb5")
EfficientNetB6 = _make(1.8, 2.6, 528, 0.5, "efficientnetb6")
EfficientNetB7 = _make(2.0, 3.1, 600, 0.5, "efficientnetb7")


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """A placeholder kept for API consistency: EfficientNet rescales inside the model, so `x` is returned."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
