"""tf.image NMS variants, crop_and_resize and draw_bounding_boxes against TF 2.21."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.image._reference import close, pattern, ref

BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                  [0, 100, 1, 101], [1, 1, 0, 0]], np.float32)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.8], np.float32)


def test_non_max_suppression_matches_tensorflow():
    selected = tf.image.non_max_suppression(torch.from_numpy(BOXES), SCORES, 5, 0.5)
    assert selected.dtype == torch.int32 and selected.tolist() == ref("nms").tolist()
    assert tf.image.non_max_suppression(BOXES, SCORES, 10, 0.5, score_threshold=0.55).tolist() == \
        ref("nms_threshold").tolist()
    indices, scores = tf.image.non_max_suppression_with_scores(BOXES, SCORES, 6, 1.0, soft_nms_sigma=0.5)
    assert indices.tolist() == ref("nms_soft_indices").tolist()
    close(scores, ref("nms_soft_scores"), atol=1e-6)
    indices, valid = tf.image.non_max_suppression_padded(BOXES, SCORES, 6, 0.5, pad_to_max_output_size=True)
    assert indices.tolist() == ref("nms_padded_indices").tolist() and int(valid) == int(ref("nms_padded_valid"))
    with pytest.raises(ValueError, match=r"iou_threshold must be in \[0, 1\]"):
        tf.image.non_max_suppression(BOXES, SCORES, 5, 1.5)
    with pytest.raises(ValueError, match="scores must have shape"):
        tf.image.non_max_suppression(BOXES, SCORES[:3], 5)
    overlaps = pattern((5, 5), 2.0)
    assert tf.image.non_max_suppression_overlaps(overlaps, SCORES[:5], 4, 0.6).tolist() == ref("nms_overlaps").tolist()


def test_combined_non_max_suppression_matches_tensorflow():
    boxes = pattern((2, 6, 1, 4), 0.5)
    boxes = np.concatenate([boxes[..., :2] * 0.5, boxes[..., :2] * 0.5 + 0.3 + boxes[..., 2:] * 0.4], -1)
    scores = pattern((2, 6, 3), 0.7)
    result = tf.image.combined_non_max_suppression(boxes, scores, 3, 5, iou_threshold=0.3, score_threshold=0.2)
    for key, value in zip(("boxes", "scores", "classes", "valid"), result):
        close(value, ref("combined_nms_" + key), atol=1e-6)
    result = tf.image.combined_non_max_suppression(boxes * 1.5 - 0.2, scores, 2, 10, iou_threshold=0.5,
                                                   pad_per_class=True, clip_boxes=False)
    for key, value in zip(("boxes", "scores", "classes", "valid"), result):
        close(value, ref("combined_nms_pad_" + key), atol=1e-6)


def test_crop_and_resize_matches_tensorflow():
    image = pattern((2, 6, 7, 2))
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.5, 0.0, 0.2, 1.2], [-0.2, 0.3, 0.4, 0.6]], np.float32)
    close(tf.image.crop_and_resize(image, boxes, [1, 0, 1], [4, 3]), ref("crop_and_resize"), atol=1e-6)
    close(tf.image.crop_and_resize(image, boxes, [0, 1, 1], [3, 5], method="nearest", extrapolation_value=-1.0),
          ref("crop_and_resize_nearest"), atol=1e-6)
    close(tf.image.crop_and_resize(image, boxes, [0, 1, 0], [1, 1]), ref("crop_and_resize_1x1"), atol=1e-6)
    with pytest.raises(ValueError, match="box_indices"):
        tf.image.crop_and_resize(image, boxes, [0, 5, 0], [2, 2])


def test_draw_bounding_boxes_matches_tensorflow():
    canvas = pattern((1, 8, 10, 3)) * 0.1
    boxes = np.array([[[0.1, 0.1, 0.6, 0.5], [0.3, 0.4, 0.9, 0.95], [0.0, 0.0, 1.0, 1.0]]], np.float32)
    colors = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]], np.float32)
    close(tf.image.draw_bounding_boxes(canvas, boxes, colors), ref("draw_bounding_boxes"), atol=1e-7)
