"""DepthwiseConv1D, SeparableConv1D (and the Convolution1DTranspose alias) against Keras 3.15 outputs frozen in
keras_layers_reference.json; weight shapes, configs and bad arguments."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("DepthwiseConv1D", "SeparableConv1D", "Convolution1DTranspose"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_weight_shapes_and_aliases():
    layer = layers.SeparableConv1D(4, 3, depth_multiplier=2)
    layer(torch.ones(1, 6, 3))
    assert [tuple(w.shape) for w in layer.weights] == [(3, 3, 2), (1, 6, 4), (4,)]
    assert layers.SeparableConvolution1D is layers.SeparableConv1D
    assert layers.Convolution1DTranspose is layers.Conv1DTranspose


def test_bad_arguments():
    with pytest.raises(ValueError, match="depth_multiplier"):
        layers.DepthwiseConv1D(3, depth_multiplier=0)
    with pytest.raises(ValueError, match="depth_multiplier"):
        layers.SeparableConv1D(2, 3, depth_multiplier=-1)
    with pytest.raises(ValueError, match="3-D tensor"):
        layers.DepthwiseConv1D(3)(torch.ones(1, 2, 5, 3))


def test_config_round_trip():
    for layer in (layers.DepthwiseConv1D(3, depth_multiplier=2, padding="same"),
                  layers.SeparableConv1D(4, 2, strides=2, depthwise_initializer="ones")):
        config = layer.get_config()
        assert "kernel_initializer" not in config and "depthwise_initializer" in config
        assert type(layer).from_config(config).get_config() == config
