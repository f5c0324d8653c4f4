"""Pipeline: layers run in order with the training flag handed on; config round trip; bad configs."""
from __future__ import annotations

import pytest
import torch

from torchstrategy.keras import layers


def test_runs_in_order_and_hands_training_on():
    pipeline = layers.Pipeline([layers.Rescaling(2.0), layers.Rescaling(1.0, offset=-1.0),
                                layers.GaussianNoise(1.0)])
    x = torch.ones(3, 2)
    assert pipeline(x, training=False).tolist() == [[1.0, 1.0]] * 3
    assert not torch.equal(pipeline(x), torch.ones(3, 2))  # Keras's Pipeline defaults to training=True
    assert [type(layer).__name__ for layer in pipeline.layers] == ["Rescaling", "Rescaling", "GaussianNoise"]


def test_config_round_trip_and_errors():
    pipeline = layers.Pipeline([layers.Rescaling(3.0), layers.Identity()], name="prep")
    config = pipeline.get_config()
    assert config["name"] == "prep" and [e["class_name"] for e in config["layers"]] == ["Rescaling", "Identity"]
    clone = layers.Pipeline.from_config(config)
    assert clone(torch.ones(2)).tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="`layers` key"):
        layers.Pipeline.from_config({"name": "x"})
