"""`keras.applications.vgg16`: VGG16 with Keras's layer names; 'caffe' preprocessing."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras import layers
from torchstrategy.keras.applications import _common, imagenet_utils


def build_vgg(convs_per_block: tuple, family: str, *, include_top: bool, weights: Any, input_tensor: Any,
              input_shape: Any, pooling: Optional[str], classes: int, classifier_activation: Any, name: str) -> Any:
    """Five blocks of 3x3 relu convs (64, 128, 256, 512, 512 filters) each closed by 2x2 max pooling, then
    the flatten + two 4096 fc layers head."""

    def body(image: Any) -> Any:
        x = image
        for block, (filters, count) in enumerate(zip((64, 128, 256, 512, 512), convs_per_block), start=1):
            for conv in range(1, count + 1):
                x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                                  name=f"block{block}_conv{conv}")(x)
            x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
        return x

    def head(x: Any) -> Any:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        _common.check_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)

    files = (f"{family}_weights_tf_dim_ordering_tf_kernels.h5", f"{family}_weights_tf_dim_ordering_tf_kernels_notop.h5")
    return _common.standard(body, include_top=include_top, weights=weights, input_tensor=input_tensor,
                            input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, name=name, default_size=224, min_size=32,
                            files=files, origin_dir=f"{family}/", head=head, pool_names=(None, None))


def VGG16(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
          pooling: Optional[str] = None, classes: int = 1000, classifier_activation: Any = "softmax",
          name: str = "vgg16") -> Any:
    """VGG16 (Keras's layer names; `weights='imagenet'` reads Keras's file from ~/.keras/models)."""
    return build_vgg((2, 2, 3, 3, 3), "vgg16", include_top=include_top, weights=weights, input_tensor=input_tensor,
                     input_shape=input_shape, pooling=pooling, classes=classes,
                     classifier_activation=classifier_activation, name=name)


def preprocess_input(x: Any, data_format: Optional[str] = None) -> Any:
    """'caffe' preprocessing (RGB->BGR, minus the ImageNet BGR means)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds: Any, top: int = 5) -> list:
    """See imagenet_utils.decode_predictions."""
    return imagenet_utils.decode_predictions(preds, top=top)
