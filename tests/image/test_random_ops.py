"""tf.image random and stateless-random augmentations: ranges, seeds, shapes and bad arguments (the draws are
torch's, not TF's Philox streams, so they are checked by what they must satisfy, not by TF's values)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.image._reference import pattern

IMAGE = pattern((2, 8, 8, 3))


def test_random_crop_takes_a_slice_of_the_requested_size():
    value = np.arange(5 * 6 * 3).reshape(5, 6, 3)
    crop = tf.image.random_crop(value, [3, 4, 3], seed=1).numpy()
    assert crop.shape == (3, 4, 3)
    offsets = {(int(crop[0, 0, 0]) // 18, (int(crop[0, 0, 0]) % 18) // 3)}
    (row, col), = offsets
    np.testing.assert_array_equal(crop, value[row:row + 3, col:col + 4])
    seen = {tuple(tf.image.random_crop(value, [4, 5, 3]).numpy()[0, 0, :1]) for _ in range(60)}
    assert len(seen) == 4  # every one of the 2 x 2 offsets turns up
    with pytest.raises(ValueError, match="size <= value.shape"):
        tf.image.random_crop(value, [6, 2, 3])


def test_stateless_ops_repeat_for_a_seed_and_change_with_it():
    for op, args in ((tf.image.stateless_random_brightness, (0.3,)), (tf.image.stateless_random_contrast, (0.2, 1.8)),
                     (tf.image.stateless_random_hue, (0.4,)), (tf.image.stateless_random_saturation, (0.1, 3.0)),
                     (tf.image.stateless_random_flip_left_right, ()), (tf.image.stateless_random_flip_up_down, ())):
        first = op(IMAGE, *args, seed=(1, 2))
        assert torch.equal(first, op(IMAGE, *args, seed=(1, 2))), op.__name__
        assert any(not torch.equal(first, op(IMAGE, *args, seed=(s, 7))) for s in range(8)), op.__name__
    crop = tf.image.stateless_random_crop(IMAGE, [2, 4, 4, 3], seed=(3, 4))
    assert crop.shape == (2, 4, 4, 3) and torch.equal(crop, tf.image.stateless_random_crop(IMAGE, [2, 4, 4, 3], (3, 4)))


def test_random_hue_and_saturation_stay_within_their_ranges():
    hsv = tf.image.rgb_to_hsv(IMAGE)
    for seed in range(5):
        shifted = tf.image.rgb_to_hsv(tf.image.random_hue(IMAGE, 0.1, seed=seed))
        turn = torch.remainder(shifted[..., 0] - hsv[..., 0] + 0.5, 1.0) - 0.5
        mask = hsv[..., 1] > 0.05
        assert turn[mask].abs().max() <= 0.1 + 1e-5 and turn[mask].std() < 1e-4  # one delta for all pixels
        factor = tf.image.rgb_to_hsv(tf.image.random_saturation(IMAGE, 0.5, 0.9, seed=seed))[..., 1] / hsv[..., 1]
        assert 0.5 - 1e-4 <= float(factor[mask].mean()) <= 0.9 + 1e-4
    with pytest.raises(ValueError, match=r"\[0, 0.5\]"):
        tf.image.random_hue(IMAGE, 0.6)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_saturation(IMAGE, 0.9, 0.5)
    with pytest.raises(ValueError, match="non-negative"):
        tf.image.stateless_random_contrast(IMAGE, -0.5, 0.5, seed=(1, 1))


def test_jpeg_quality_round_trips_and_loses_more_at_low_quality():
    pixels = (pattern((2, 16, 16, 3), 0.4) * 255).astype(np.uint8)
    good, bad = tf.image.adjust_jpeg_quality(pixels, 95), tf.image.adjust_jpeg_quality(pixels, 5)
    assert good.dtype == torch.uint8 and good.shape == pixels.shape
    error = lambda out: np.abs(out.numpy().astype(int) - pixels).mean()  # noqa: E731
    assert error(good) < error(bad)
    floats = tf.image.random_jpeg_quality(IMAGE, 70, 90, seed=3)
    worst = float((tf.image.adjust_jpeg_quality(IMAGE, 5) - torch.from_numpy(IMAGE)).abs().mean())
    assert floats.dtype == torch.float32 and floats.shape == IMAGE.shape
    assert float((floats - torch.from_numpy(IMAGE)).abs().mean()) < worst
    repeat = tf.image.stateless_random_jpeg_quality(IMAGE, 10, 90, seed=(5, 6))
    assert torch.equal(repeat, tf.image.stateless_random_jpeg_quality(IMAGE, 10, 90, seed=(5, 6)))
    with pytest.raises(ValueError, match="min_jpeg_quality < max_jpeg_quality"):
        tf.image.random_jpeg_quality(IMAGE, 90, 10)
