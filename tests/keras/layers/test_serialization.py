"""keras.layers.serialize / deserialize: Keras's dictionary form, round trips of built-in and custom layers."""
from __future__ import annotations

import pytest

from torchstrategy.keras import layers


def test_round_trip_builtin_layers():
    for layer in (layers.Dense(3, activation="relu"), layers.GroupNormalization(groups=2),
                  layers.Hashing(5, salt=3), layers.RNN(layers.GRUCell(2))):
        entry = layers.serialize(layer)
        assert set(entry) == {"module", "class_name", "config", "registered_name"}
        assert entry["class_name"] == type(layer).__name__
        clone = layers.deserialize(entry)
        assert type(clone) is type(layer)
        assert clone.get_config().keys() == layer.get_config().keys()


def test_custom_objects_and_errors():
    class Mine(layers.Layer):
        pass

    entry = layers.serialize(Mine(name="mine"))
    assert isinstance(layers.deserialize(entry, custom_objects={"Mine": Mine}), Mine)
    with pytest.raises(ValueError, match="custom_objects"):
        layers.deserialize(entry)
    with pytest.raises(ValueError, match="class_name"):
        layers.deserialize("Dense")
