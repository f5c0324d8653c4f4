"""`keras.applications.nasnet`: NASNetMobile / NASNetLarge (NASNet-A normal and reduction cells) with
Keras's layer names and creation order; 'tf' preprocessing."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils


def _bn(x: Any, name: Optional[str]) -> Any:
    return layers.BatchNormalization(axis=-1, momentum=0.9997, epsilon=1e-3, name=name)(x)


def _conv1x1(x: Any, filters: int, name: str) -> Any:
    return layers.Conv2D(filters, (1, 1), strides=(1, 1), padding="same", use_bias=False, name=name,
                         kernel_initializer="he_normal")(x)


def _separable_block(ip: Any, filters: int, kernel_size: tuple = (3, 3), strides: tuple = (1, 1),
                     block_id: str = "") -> Any:
    x = layers.Activation("relu")(ip)
    if strides == (2, 2):
        x = layers.ZeroPadding2D(padding=_common.correct_pad(x, kernel_size), name=f"separable_conv_1_pad_{block_id}")(x)
    x = layers.SeparableConv2D(filters, kernel_size, strides=strides, name=f"separable_conv_1_{block_id}",
                               padding="valid" if strides == (2, 2) else "same", use_bias=False)(x)
    x = _bn(x, f"separable_conv_1_bn_{block_id}")
    x = layers.Activation("relu")(x)
    x = layers.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}", padding="same",
                               use_bias=False)(x)
    return _bn(x, f"separable_conv_2_bn_{block_id}")


def _adjust_block(p: Any, ip: Any, filters: int, block_id: str) -> Any:
    if p is None:
        return ip
    if p.shape[-2] != ip.shape[-2]:
        p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
        p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = _conv1x1(p1, filters // 2, f"adjust_conv_1_{block_id}")
        p2 = layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
        p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
        p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = _conv1x1(p2, filters // 2, f"adjust_conv_2_{block_id}")
        p = layers.concatenate([p1, p2], axis=-1)
        return _bn(p, f"adjust_bn_{block_id}")
    if p.shape[-1] != filters:
        p = layers.Activation("relu")(p)
        p = _conv1x1(p, filters, f"adjust_conv_projection_{block_id}")
        return _bn(p, f"adjust_bn_{block_id}")
    return p


def _normal_cell(ip: Any, p: Any, filters: int, block_id: str) -> tuple:
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _bn(_conv1x1(h, filters, f"normal_conv_1_{block_id}"), f"normal_bn_1_{block_id}")
    x1 = layers.add([_separable_block(h, filters, (5, 5), block_id=f"normal_left1_{block_id}"),
                     _separable_block(p, filters, block_id=f"normal_right1_{block_id}")], name=f"normal_add_1_{block_id}")
    x2 = layers.add([_separable_block(p, filters, (5, 5), block_id=f"normal_left2_{block_id}"),
                     _separable_block(p, filters, (3, 3), block_id=f"normal_right2_{block_id}")],
                    name=f"normal_add_2_{block_id}")
    x3 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"normal_left3_{block_id}")(h)
    x3 = layers.add([x3, p], name=f"normal_add_3_{block_id}")
    x4_1 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"normal_left4_{block_id}")(p)
    x4_2 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"normal_right4_{block_id}")(p)
    x4 = layers.add([x4_1, x4_2], name=f"normal_add_4_{block_id}")
    x5 = _separable_block(h, filters, block_id=f"normal_left5_{block_id}")
    x5 = layers.add([x5, h], name=f"normal_add_5_{block_id}")
    return layers.concatenate([p, x1, x2, x3, x4, x5], axis=-1, name=f"normal_concat_{block_id}"), ip


def _reduction_cell(ip: Any, p: Any, filters: int, block_id: str) -> tuple:
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _bn(_conv1x1(h, filters, f"reduction_conv_1_{block_id}"), f"reduction_bn_1_{block_id}")
    h3 = layers.ZeroPadding2D(padding=_common.correct_pad(h, 3), name=f"reduction_pad_1_{block_id}")(h)
    x1 = layers.add([_separable_block(h, filters, (5, 5), strides=(2, 2), block_id=f"reduction_left1_{block_id}"),
                     _separable_block(p, filters, (7, 7), strides=(2, 2), block_id=f"reduction_right1_{block_id}")],
                    name=f"reduction_add_1_{block_id}")
    x2_1 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_left2_{block_id}")(h3)
    x2_2 = _separable_block(p, filters, (7, 7), strides=(2, 2), block_id=f"reduction_right2_{block_id}")
    x2 = layers.add([x2_1, x2_2], name=f"reduction_add_2_{block_id}")
    x3_1 = layers.AveragePooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_left3_{block_id}")(h3)
    x3_2 = _separable_block(p, filters, (5, 5), strides=(2, 2), block_id=f"reduction_right3_{block_id}")
    x3 = layers.add([x3_1, x3_2], name=f"reduction_add3_{block_id}")
    x4 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"reduction_left4_{block_id}")(x1)
    x4 = layers.add([x2, x4])
    x5_1 = _separable_block(x1, filters, (3, 3), block_id=f"reduction_left4_{block_id}")
    x5_2 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_right5_{block_id}")(h3)
    x5 = layers.add([x5_1, x5_2], name=f"reduction_add4_{block_id}")
    return layers.concatenate([x2, x3, x4, x5], axis=-1, name=f"reduction_concat_{block_id}"), ip


def _nasnet(input_shape: Any, penultimate_filters: int, num_blocks: int, stem_block_filters: int,
            skip_reduction: bool, filter_multiplier: int, include_top: bool, weights: Any, input_tensor: Any,
            pooling: Optional[str], classes: int, default_size: int, classifier_activation: Any, name: str,
            files: tuple) -> Any:
    _common.check_weights(weights, include_top, classes)
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError(f"When specifying the input shape of a NASNet and loading `ImageNet` weights, the input_shape "
                         f"argument must be static (no None entries). Got: `input_shape={input_shape}`.")
    shape = _common.input_shape_for(input_shape, default_size, 32, include_top, weights)
    image = _common.image_input(input_tensor, shape)
    filters = penultimate_filters // 24
    x = layers.Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid", use_bias=False, name="stem_conv1",
                      kernel_initializer="he_normal")(image)
    x = _bn(x, "stem_bn1")
    x, p = _reduction_cell(x, None, filters // filter_multiplier ** 2, "stem_1")
    x, p = _reduction_cell(x, p, filters // filter_multiplier, "stem_2")
    for stage in range(3):
        width = filters * filter_multiplier ** stage
        if stage:
            x, p0 = _reduction_cell(x, p, width, f"reduce_{stage * num_blocks}")
            p = p if skip_reduction else p0
        for i in range(num_blocks):
            x, p = _normal_cell(x, p, width, f"{stage * num_blocks + i + (1 if stage else 0)}")
    x = layers.Activation("relu")(x)
    if include_top:
        x = _common.dense_head(x, classes, classifier_activation, weights, pool_name=None)
    else:
        x = _common.pool(x, pooling)
    file_name = files[0] if include_top else files[1]
    return _common.finish(_common.model_inputs(input_tensor, image), x, name, weights, file_name,
                          _common.BASE_URL + "nasnet/" + ("NASNet-" + file_name[7:].replace("_", "-")))


def NASNetMobile(input_shape: Any = None, include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                 pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
                 name: str = "nasnet_mobile") -> Any:
    """NASNetMobile (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    if not include_top and input_shape is None:
        input_shape = (224, 224, 3)
    return _nasnet(input_shape, 1056, 4, 32, False, 2, include_top, weights, input_tensor, pooling, classes, 224,
                   classifier_activation, name, ("nasnet_mobile.h5", "nasnet_mobile_no_top.h5"))


def NASNetLarge(input_shape: Any = None, include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
                name: str = "nasnet_large") -> Any:
    """NASNetLarge (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    return _nasnet(input_shape, 4032, 6, 96, True, 2, include_top, weights, input_tensor, pooling, classes, 331,
                   classifier_activation, name, ("nasnet_large.h5", "nasnet_large_no_top.h5"))


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'tf' preprocessing (pixels to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
