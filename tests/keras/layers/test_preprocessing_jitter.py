"""RandomColorJitter: the stages it runs match the single layers' effects (brightness shift, saturation scale
against colorsys), identity outside training, config."""
from __future__ import annotations

import colorsys

import numpy as np
import torch

from torchstrategy.keras import layers


def test_identity_outside_training_and_stages():
    images = torch.rand(2, 3, 3, 3) * 255
    layer = layers.RandomColorJitter(brightness_factor=0.2, contrast_factor=0.3, saturation_factor=0.5,
                                     hue_factor=0.1)
    assert torch.equal(layer(images, training=False), images)
    assert [type(s).__name__ for s in layer.stages] == ["RandomBrightness", "RandomContrast", "RandomSaturation",
                                                        "RandomHue"]
    assert layer(images).shape == images.shape


def test_saturation_stage_scales_saturation():
    rgb = np.random.default_rng(1).uniform(0.1, 0.9, size=(20, 3)).astype(np.float32)
    images = torch.from_numpy(rgb.reshape(20, 1, 1, 3))
    out = layers.RandomColorJitter(value_range=(0, 1), saturation_factor=(0.25, 0.25))(images, training=True)
    before = np.array([colorsys.rgb_to_hsv(*p)[1] for p in rgb])
    after = np.array([colorsys.rgb_to_hsv(*p)[1] for p in out.reshape(20, 3).numpy()])
    np.testing.assert_allclose(after, before * (0.25 / 0.75), rtol=1e-4, atol=1e-6)


def test_brightness_stage_and_config():
    images = torch.full((3, 2, 2, 3), 100.0)
    out = layers.RandomColorJitter(brightness_factor=(0.1, 0.1))(images, training=True)
    np.testing.assert_allclose(out.numpy(), 100.0 + 0.1 * 255, rtol=1e-6)
    layer = layers.RandomColorJitter(value_range=(0, 1), hue_factor=0.2, seed=4)
    config = layer.get_config()
    assert config["hue_factor"] == 0.2 and config["brightness_factor"] is None
    assert layers.RandomColorJitter.from_config(config).get_config() == config
