"""`keras.applications.resnet`: ResNet50/101/152 (v1: post-activation bottleneck blocks) with Keras's
layer names, plus the shared ResNet builder and residual stacks that resnet_v2 uses."""
from __future__ import annotations

from typing import Any, Callable, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils

_EPS = 1.001e-5


def _file(weights_name: str) -> tuple:
    return (f"{weights_name}_weights_tf_dim_ordering_tf_kernels.h5",
            f"{weights_name}_weights_tf_dim_ordering_tf_kernels_notop.h5")


def build_resnet(stack_fn: Callable[[Any], Any], preact: bool, use_bias: bool, weights_name: str, *,
                 include_top: bool, weights: Any, input_tensor: Any, input_shape: Any, pooling: Optional[str],
                 classes: int, classifier_activation: Any, name: str) -> Any:
    """The ResNet stem, `stack_fn`'s residual stages and the head (v2 when `preact`)."""

    def body(image: Any) -> Any:
        x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(image)
        x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
        if not preact:
            x = layers.BatchNormalization(axis=3, epsilon=_EPS, name="conv1_bn")(x)
            x = layers.Activation("relu", name="conv1_relu")(x)
        x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
        x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
        x = stack_fn(x)
        if preact:
            x = layers.BatchNormalization(axis=3, epsilon=_EPS, name="post_bn")(x)
            x = layers.Activation("relu", name="post_relu")(x)
        return x

    return _common.standard(body, include_top=include_top, weights=weights, input_tensor=input_tensor,
                            input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, name=name, default_size=224, min_size=32,
                            files=_file(weights_name), origin_dir="resnet/")


def block_v1(x: Any, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = True,
             name: str = "") -> Any:
    """Bottleneck block: 1x1, kxk, 1x1 (x4) convs, each with batch norm, added to the shortcut, then relu."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="same", name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_v1(x: Any, filters: int, blocks: int, stride1: int = 2, name: str = "") -> Any:
    """`blocks` v1 blocks; the first has the conv shortcut and stride `stride1`."""
    x = block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def block_v2(x: Any, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = False,
             name: str = "") -> Any:
    """Pre-activation bottleneck block (ResNetV2): batch norm and relu before the convs."""
    preact = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPS, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_v2(x: Any, filters: int, blocks: int, stride1: int = 2, name: str = "") -> Any:
    """`blocks` v2 blocks; the first has the conv shortcut, the last stride `stride1`."""
    x = block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = block_v2(x, filters, name=f"{name}_block{i}")
    return block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _v1_stages(blocks: tuple) -> Callable[[Any], Any]:
    def stack_fn(x: Any) -> Any:
        for index, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks)):
            x = stack_v1(x, filters, count, stride1=1 if index == 0 else 2, name=f"conv{index + 2}")
        return x

    return stack_fn


def ResNet50(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
             pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
             name: str = "resnet50") -> Any:
    """ResNet50 (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    return build_resnet(_v1_stages((3, 4, 6, 3)), False, True, "resnet50", include_top=include_top,
                        weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                        classes=classes, classifier_activation=classifier_activation, name=name)


def ResNet101(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
              pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
              name: str = "resnet101") -> Any:
    """ResNet101 (see ResNet50)."""
    return build_resnet(_v1_stages((3, 4, 23, 3)), False, True, "resnet101", include_top=include_top,
                        weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                        classes=classes, classifier_activation=classifier_activation, name=name)


def ResNet152(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
              pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
              name: str = "resnet152") -> Any:
    """ResNet152 (see ResNet50)."""
    return build_resnet(_v1_stages((3, 8, 36, 3)), False, True, "resnet152", include_top=include_top,
                        weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                        classes=classes, classifier_activation=classifier_activation, name=name)


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'caffe' preprocessing (RGB->BGR, minus the ImageNet BGR means)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
