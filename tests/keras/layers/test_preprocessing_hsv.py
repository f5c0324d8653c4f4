"""RandomSaturation against Keras 3.15 outputs frozen in keras_layers_reference.json; the HSV conversions
against Python's colorsys; RandomHue's shift of ±factor/2; inference identity, configs, bad factors."""
from __future__ import annotations

import colorsys

import numpy as np
import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers
from torchstrategy.keras.layers.preprocessing_hsv import hsv_to_rgb, rgb_to_hsv

RGB = np.random.default_rng(0).uniform(size=(50, 3)).astype(np.float32)


@pytest.mark.parametrize("case_id", cases_of("RandomSaturation"))
def test_saturation_matches_keras(case_id):
    check_case(case_id)


def test_hsv_conversions_match_colorsys():
    ours = rgb_to_hsv(torch.from_numpy(RGB)).numpy()
    np.testing.assert_allclose(ours, [colorsys.rgb_to_hsv(*row) for row in RGB], atol=1e-6)
    np.testing.assert_allclose(hsv_to_rgb(torch.from_numpy(ours)).numpy(), RGB, atol=1e-6)


def test_hue_shifts_by_half_the_factor():
    images = torch.from_numpy(RGB.reshape(50, 1, 1, 3) * 255)
    out = layers.RandomHue((0.4, 0.4), seed=1)(images, training=True)
    before = np.array([colorsys.rgb_to_hsv(*row)[0] for row in RGB])
    after = np.array([colorsys.rgb_to_hsv(*row)[0] for row in out.reshape(50, 3).numpy() / 255])
    shift = np.mod(after - before + 0.5, 1.0) - 0.5
    np.testing.assert_allclose(np.abs(shift), 0.2, atol=1e-4)
    assert (shift > 0).any() and (shift < 0).any()
    assert torch.equal(layers.RandomHue(0.4)(images, training=False), images)


def test_config_and_errors():
    layer = layers.RandomSaturation((0.2, 0.6), value_range=(0, 1), seed=2)
    config = layer.get_config()
    assert config["factor"] == (0.2, 0.6) and config["value_range"] == [0, 1]
    assert layers.RandomSaturation.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="factor"):
        layers.RandomHue(1.5)
    with pytest.raises(ValueError, match="factor"):
        layers.RandomSaturation("a")
