"""tf.image colour spaces and adjustments against TF 2.21 (tests/image/image_reference.json)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.image._reference import close, pattern, ref, rgb


def test_hsv_round_trip_matches_tensorflow():
    close(tf.image.rgb_to_hsv(torch.from_numpy(rgb())), ref("rgb_to_hsv"))
    hsv = pattern((2, 3, 4, 3), 1.0)
    hsv[0, 0, 0] = [1.0, 0.5, 0.5]
    close(tf.image.hsv_to_rgb(hsv), ref("hsv_to_rgb"))
    close(tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(rgb())), rgb(), atol=1e-6)


@pytest.mark.parametrize("name", ["rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb"])
def test_linear_colour_spaces_match_tensorflow(name):
    close(getattr(tf.image, name)(rgb()), ref(name), atol=1e-6)


def test_adjustments_match_tensorflow():
    image = rgb()
    close(tf.image.adjust_hue(image, 0.2), ref("adjust_hue"), atol=2e-6)
    close(tf.image.adjust_hue(image, -0.45), ref("adjust_hue_neg"), atol=2e-6)
    close(tf.image.adjust_saturation(image, 1.7), ref("adjust_saturation"), atol=2e-6)
    close(tf.image.adjust_gamma(image, 2.2, 0.9), ref("adjust_gamma"), atol=1e-6)
    pixels = (image * 255).astype(np.uint8)
    hue8 = tf.image.adjust_hue(pixels, 0.3)
    assert hue8.dtype == torch.uint8
    assert np.abs(hue8.numpy().astype(int) - ref("adjust_hue_uint8")).max() <= 1
    saturated = tf.image.adjust_saturation(pixels, 0.4).numpy().astype(int)
    assert np.abs(saturated - ref("adjust_saturation_uint8")).max() <= 1
    close(tf.image.adjust_gamma(pixels, 0.5), ref("adjust_gamma_uint8"), atol=0)


def test_grayscale_to_rgb_and_bad_input():
    gray = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
    assert tf.image.grayscale_to_rgb(gray).numpy().tolist() == np.repeat(gray, 3, -1).tolist()
    with pytest.raises(ValueError, match="3 channels"):
        tf.image.rgb_to_hsv(np.zeros((2, 2, 4), np.float32))
    with pytest.raises(TypeError, match="floating point"):
        tf.image.rgb_to_hsv(np.zeros((2, 2, 3), np.uint8))
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        tf.image.adjust_hue(rgb(), 1.5)
    with pytest.raises(ValueError, match="non-negative"):
        tf.image.adjust_gamma(rgb(), -1.0)


def test_per_image_standardization_of_uint8_matches_tensorflow():
    standardized = tf.image.per_image_standardization((rgb() * 255).astype(np.uint8))
    assert standardized.dtype == torch.float32
    close(standardized, ref("per_image_standardization"), atol=1e-6)
