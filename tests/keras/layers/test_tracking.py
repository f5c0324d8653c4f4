"""keras/layers/tracking.py: nested layers depth first and each once, weights in Keras's order each once."""
from __future__ import annotations

import torch

from torchstrategy import keras
from torchstrategy.keras.layers import tracking
from torchstrategy.keras.layers.base import Layer


class _Block(Layer):
    def __init__(self, shared, **kwargs):
        super().__init__(**kwargs)
        self.first, self.shared = keras.layers.Dense(2, name="first"), shared

    def call(self, x):
        return self.shared(self.first(x))


def test_layers_depth_first_once_and_weights_trainable_then_not_per_layer():
    shared = keras.layers.Dense(2, name="shared")
    outer = _Block(shared, name="outer")
    outer.again = shared  # the same layer reached twice is listed once
    norm = keras.layers.BatchNormalization(name="norm")
    outer.norm = norm
    x = torch.ones(3, 2)
    norm(outer(x))
    assert [layer.name for layer in tracking.nested_layers(outer, True, Layer)] == ["outer", "first", "shared", "norm"]
    assert [layer.name for layer in tracking.nested_layers(outer, False, Layer)] == ["first", "shared", "norm"]
    order = tracking.collect_weights(tracking.nested_layers(outer, True, Layer), (True, False))
    expected = [outer.first.kernel, outer.first.bias, shared.kernel, shared.bias, norm.gamma, norm.beta,
                norm.moving_mean, norm.moving_variance]
    assert [id(w) for w in order] == [id(w) for w in expected] == [id(w) for w in outer.weights]
    norm.trainable = False
    assert [id(w) for w in tracking.own_weights(norm, True)] == []
    assert len(tracking.own_weights(norm, False)) == 4 and len(tracking.own_weights(norm, None)) == 4
