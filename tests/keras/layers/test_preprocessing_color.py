"""AutoContrast, Solarization, RandomInvert, RandomGrayscale, RandomPosterization, RandomColorDegeneration,
RandomSharpness, Equalization against Keras 3.15 outputs frozen in keras_layers_reference.json (factors fixed so Keras's draw
is certain); inference identity, probabilities, configs and bad factors."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers

NAMES = ("AutoContrast", "Solarization", "RandomInvert", "RandomGrayscale", "RandomPosterization",
         "RandomColorDegeneration", "RandomSharpness", "Equalization", "RandomGaussianBlur")


@pytest.mark.parametrize("case_id", cases_of(*NAMES))
def test_matches_keras(case_id):
    check_case(case_id, atol=2e-5)


@pytest.mark.parametrize("layer", [
    layers.Solarization(0.5, 0.5), layers.RandomInvert(), layers.RandomGrayscale(1.0),
    layers.RandomPosterization(2), layers.RandomColorDegeneration(0.5), layers.RandomSharpness(0.5),
    layers.RandomGaussianBlur(), layers.Equalization(),
])
def test_identity_at_inference(layer):
    images = torch.rand(2, 4, 4, 3) * 255
    assert torch.equal(layer(images, training=False), images)


@pytest.mark.parametrize("layer", [layers.RandomGrayscale(1.0), layers.Equalization()])
def test_a_direct_call_applies_the_layer_as_keras(layer):
    """Keras 3.15: a call with no `training` runs with the call's default (True) outside a model."""
    images = torch.rand(2, 4, 4, 3) * 255
    assert torch.equal(layer(images), layer(images, training=True))
    assert not torch.equal(layer(images), images)


def test_probabilities():
    images = torch.rand(400, 2, 2, 3) * 255
    inverted = layers.RandomInvert(factor=(0.3, 0.3), seed=1)(images, training=True)
    share = float((inverted != images).flatten(1).any(1).float().mean())
    assert abs(share - 0.3) < 0.08
    gray = layers.RandomGrayscale(0.25, seed=2)(images, training=True)
    share = float((gray[..., 0] == gray[..., 1]).flatten(1).all(1).float().mean())
    assert abs(share - 0.25) < 0.08


@pytest.mark.parametrize("make,message", [
    (lambda: layers.RandomGrayscale(1.5), "between 0 and 1"),
    (lambda: layers.RandomInvert(factor=2.0), "factor"),
    (lambda: layers.RandomPosterization(9), r"\[1, 8\]"),
    (lambda: layers.Solarization(addition_factor=1.5), "addition_factor"),
    (lambda: layers.AutoContrast(value_range=(0,)), "value_range"),
    (lambda: layers.RandomSharpness(0.5)(torch.ones(2, 3)), "rank 3 or 4"),
    (lambda: layers.RandomGaussianBlur(kernel_size=4), "odd number"),
])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_config_round_trip():
    for layer in (layers.Equalization(bins=64), layers.AutoContrast((0, 1)), layers.Solarization(0.1, 0.2, seed=3),
                  layers.RandomPosterization((2, 5)), layers.RandomSharpness(0.4, data_format="channels_first")):
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config
