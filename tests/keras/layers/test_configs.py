"""Every layer: `from_config(get_config())` rebuilds an equivalent layer (same config, same outputs
with the same weights), default names follow Keras, and the package exports every layer."""
from __future__ import annotations

import re

import pytest
import torch

from torchstrategy.keras import layers

IMAGE = (2, 6, 6, 3)
CASES = [
    (lambda: layers.Dense(4, activation="relu", kernel_regularizer="l2"), (2, 3)),
    (lambda: layers.Activation("tanh"), (2, 3)),
    (lambda: layers.Dropout(0.3, noise_shape=(None, 1), seed=2), (2, 3)),
    (lambda: layers.Flatten(), IMAGE),
    (lambda: layers.Reshape((9, -1)), IMAGE),
    (lambda: layers.Permute((3, 1, 2)), IMAGE),
    (lambda: layers.ReLU(max_value=6.0, negative_slope=0.1), (2, 3)),
    (lambda: layers.LeakyReLU(0.2), (2, 3)),
    (lambda: layers.ELU(0.5), (2, 3)),
    (lambda: layers.Softmax(axis=1), (2, 3)),
    (lambda: layers.Embedding(10, 3, mask_zero=True), (2, 3)),
    (lambda: layers.Conv1D(4, 3, padding="causal", dilation_rate=2), (2, 7, 3)),
    (lambda: layers.Conv2D(4, (3, 2), strides=2, padding="same", groups=1, use_bias=False), IMAGE),
    (lambda: layers.Conv3D(2, 2), (1, 3, 3, 3, 2)),
    (lambda: layers.MaxPooling2D(3, 2, "same"), IMAGE),
    (lambda: layers.AveragePooling1D(2, padding="same"), (2, 5, 3)),
    (lambda: layers.GlobalAveragePooling2D(keepdims=True), IMAGE),
    (lambda: layers.GlobalMaxPooling1D(), (2, 5, 3)),
    (lambda: layers.BatchNormalization(momentum=0.9, epsilon=1e-5, center=False), IMAGE),
    (lambda: layers.LayerNormalization(axis=[1, 2]), IMAGE),
    (lambda: layers.Rescaling(0.5, offset=1.0), IMAGE),
    (lambda: layers.Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 9.0]), IMAGE),
    (lambda: layers.Resizing(4, 5), IMAGE),
]


@pytest.mark.parametrize("make,shape", CASES, ids=lambda v: "" if isinstance(v, tuple) else None)
def test_config_round_trip(make, shape):
    layer = make()
    x = torch.randint(0, 9, shape).float() if isinstance(layer, layers.Embedding) else torch.randn(shape)
    out = layer(x)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    clone(x)
    clone.set_weights(layer.get_weights())
    torch.testing.assert_close(clone(x), out)


@pytest.mark.parametrize("merge", [layers.Add, layers.Concatenate, layers.Dot])
def test_merge_config_round_trip(merge):
    layer = merge(axes=1) if merge is layers.Dot else merge()
    xs = [torch.randn(2, 3), torch.randn(2, 3)]
    clone = merge.from_config(layer.get_config())
    torch.testing.assert_close(clone(xs), layer(xs))


@pytest.mark.parametrize("cls,prefix", [(layers.Conv2D, "conv2d"), (layers.MaxPooling2D, "max_pooling2d"),
                                        (layers.BatchNormalization, "batch_normalization"),
                                        (layers.GlobalAveragePooling2D, "global_average_pooling2d"),
                                        (layers.ReLU, "re_lu"), (layers.Conv1D, "conv1d")])
def test_default_names_follow_keras(cls, prefix):
    layer = cls(2, 3) if cls in (layers.Conv2D, layers.Conv1D) else cls()
    assert re.fullmatch(prefix + r"(_\d+)?", layer.name), layer.name


def test_package_exports_every_layer():
    for name in layers.__all__:
        assert hasattr(layers, name), name
    assert layers.Layer is not None and layers.InputSpec is not None
    assert layers.MaxPool2D is layers.MaxPooling2D and layers.Convolution2D is layers.Conv2D
