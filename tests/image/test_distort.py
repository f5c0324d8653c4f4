"""tf.image.extract_glimpse against TF 2.21 (noise='zero'; values noted from /work/tf-venv) and
sample_distorted_bounding_box's constraints (its draws are torch's, not TF's)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

IMAGE = np.arange(6 * 7, dtype=np.float32).reshape(1, 6, 7, 1)
# (offsets, centered, normalized) -> TF 2.21's 3 x 4 glimpse
TF_GLIMPSES = [
    (([0.0, 0.0],), True, True, [[8, 9, 10, 11], [15, 16, 17, 18], [22, 23, 24, 25]]),
    (([0.3, -0.55],), True, True, [[14, 15, 16, 17], [21, 22, 23, 24], [28, 29, 30, 31]]),
    (([1.5, 2.5],), False, False, [[9, 10, 11, 12], [16, 17, 18, 19], [23, 24, 25, 26]]),
    (([0.2, 0.9],), False, True, [[13, 0, 0, 0], [20, 0, 0, 0], [27, 0, 0, 0]]),
    (([-2.4, 1.6],), True, False, [[5, 6, 0, 0], [12, 13, 0, 0], [19, 20, 0, 0]]),
]


@pytest.mark.parametrize("offsets, centered, normalized, expected", TF_GLIMPSES)
def test_extract_glimpse_matches_tensorflow(offsets, centered, normalized, expected):
    glimpse = tf.image.extract_glimpse(IMAGE, [3, 4], list(offsets), centered=centered, normalized=normalized,
                                       noise="zero")
    assert glimpse[0, :, :, 0].tolist() == expected


def test_extract_glimpse_noise_stays_within_the_image_range():
    glimpse = tf.image.extract_glimpse(IMAGE, [3, 4], [[0.2, 0.9]], centered=False, normalized=True)
    outside = glimpse[0, :, 1:, 0]
    assert float(outside.min()) >= 0 and float(outside.max()) <= 41 and float(outside.std()) > 0


def test_sampled_boxes_respect_aspect_area_and_cover():
    boxes = torch.tensor([[[0.1, 0.2, 0.5, 0.6]]])
    for seed in range(1, 30):
        begin, size, box = tf.image.sample_distorted_bounding_box([60, 80, 3], boxes, seed=seed,
                                                                   min_object_covered=0.5,
                                                                   aspect_ratio_range=(0.5, 2.0),
                                                                   area_range=(0.1, 0.6))
        (y, x, zero), (h, w, minus_one) = begin.tolist(), size.tolist()
        assert zero == 0 and minus_one == -1 and y >= 0 and x >= 0 and y + h <= 60 and x + w <= 80
        if (h, w) == (60, 80):
            continue  # every attempt failed: the whole image, as TF
        assert 0.1 * 4800 <= h * w <= 0.6 * 4800 and 0.5 - 0.05 <= w / h <= 2.0 + 0.05
        object_box = (16, 6, 48, 30)  # x0, y0, x1, y1 in pixels (int(coord * size))
        inter = max(0, min(x + w, object_box[2]) - max(x, object_box[0])) * \
            max(0, min(y + h, object_box[3]) - max(y, object_box[1]))
        assert inter / ((object_box[2] - object_box[0]) * (object_box[3] - object_box[1])) >= 0.5
        np.testing.assert_allclose(box[0, 0].numpy(), [y / 60, x / 80, (y + h) / 60, (x + w) / 80], rtol=1e-6)
    first = tf.image.stateless_sample_distorted_bounding_box([60, 80, 3], boxes, seed=(1, 2))
    assert all(torch.equal(a, b) for a, b in zip(first, tf.image.stateless_sample_distorted_bounding_box(
        [60, 80, 3], boxes, seed=(1, 2))))
    with pytest.raises(ValueError, match="use_image_if_no_bounding_boxes"):
        tf.image.sample_distorted_bounding_box([60, 80, 3], np.zeros((1, 0, 4), np.float32))
    begin, size, _ = tf.image.sample_distorted_bounding_box([60, 80, 3], np.zeros((1, 0, 4), np.float32), seed=3,
                                                            use_image_if_no_bounding_boxes=True)
    assert size.tolist()[2] == -1
