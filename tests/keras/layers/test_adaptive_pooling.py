"""AdaptiveAverage/MaxPooling1D/2D/3D against Keras 3.15 outputs frozen in keras_layers_reference.json (uneven
bins, channels_first); output shapes, configs and bad output sizes."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers

NAMES = [f"Adaptive{kind}Pooling{rank}D" for kind in ("Average", "Max") for rank in (1, 2, 3)]


@pytest.mark.parametrize("case_id", cases_of(*NAMES))
def test_matches_keras(case_id):
    check_case(case_id)


def test_output_shapes_and_config():
    layer = layers.AdaptiveMaxPooling2D((2, 3), data_format="channels_first")
    assert layer.compute_output_shape((None, 4, 9, 9)) == (None, 4, 2, 3)
    assert layer(torch.ones(1, 4, 9, 9)).shape == (1, 4, 2, 3)
    assert layers.AdaptiveAveragePooling3D(2).compute_output_shape((None, 5, 5, 5, 3)) == (None, 2, 2, 2, 3)
    config = layer.get_config()
    assert config["output_size"] == (2, 3)
    assert layers.AdaptiveMaxPooling2D.from_config(config).get_config() == config


def test_bad_output_sizes():
    with pytest.raises(ValueError, match="length 1"):
        layers.AdaptiveAveragePooling1D((2, 2))
    with pytest.raises(TypeError, match=r"\(height, width\) tuple"):
        layers.AdaptiveMaxPooling2D("2")
    with pytest.raises(ValueError, match="expected ndim=5"):
        layers.AdaptiveMaxPooling3D(2)(torch.ones(1, 4, 4, 1))
