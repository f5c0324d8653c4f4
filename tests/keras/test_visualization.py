"""keras.visualization against Keras 3.15 (TF 2.21 reference env) results and messages frozen in
keras_visualization_reference.json by tools/tf_reference/keras_visualization_reference.py."""
from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import visualization as v

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_visualization_reference.json")))
IMAGES = np.asarray(REF["images"], dtype="float32")
MASKS = np.asarray(REF["masks"], dtype="int32")
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
HAVE_CV2 = importlib.util.find_spec("cv2") is not None
CASES = {"default": {}, "classes4": {"num_classes": 4},
         "mapping": {"num_classes": 3, "color_mapping": {0: (255, 0, 0), 1: (0, 255, 0), 2: (0, 0, 9)}},
         "alpha": {"num_classes": 5, "alpha": 0.3, "ignore_index": 2},
         "no_blend": {"num_classes": 4, "blend": False}}


def check(got, ref):
    array = got.numpy() if isinstance(got, torch.Tensor) else got
    assert str(array.dtype) == ref["dtype"]
    # Keras returns NumPy when blending and a backend tensor otherwise; ours: NumPy / torch tensor
    assert isinstance(got, np.ndarray) == (ref["type"] == "numpy")
    np.testing.assert_array_equal(array, np.asarray(ref["value"], dtype=ref["dtype"]))


@pytest.mark.parametrize("key", sorted(CASES))
def test_draw_segmentation_masks(key):
    check(v.draw_segmentation_masks(IMAGES, MASKS, **CASES[key]), REF["masks_cases"][key])


def test_draw_segmentation_masks_channels_first_and_torch_inputs():
    got = v.draw_segmentation_masks(torch.from_numpy(IMAGES.transpose(0, 3, 1, 2)),
                                    torch.from_numpy(MASKS.transpose(0, 3, 1, 2)), num_classes=4,
                                    data_format="channels_first")
    check(got, REF["channels_first"])


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return {"raises": type(info.value).__name__, "message": str(info.value)}


def test_errors_match_keras():
    errors = REF["errors"]
    assert _message(lambda: v.draw_segmentation_masks(IMAGES[0], MASKS[0])) == errors["masks_3d"]
    assert _message(lambda: v.draw_segmentation_masks(IMAGES, MASKS.astype("float32"))) == errors["masks_float"]
    assert _message(lambda: v.plot_segmentation_mask_gallery(IMAGES[0], 4)) == errors["mask_gallery_3d"]


@pytest.mark.skipif(HAVE_CV2, reason="OpenCV is installed")
def test_boxes_without_opencv_raise_keras_message():
    boxes = {"boxes": np.zeros((2, 1, 4)), "labels": np.zeros((2, 1))}
    assert _message(lambda: v.draw_bounding_boxes(IMAGES, boxes, "xyxy")) == REF["errors"]["boxes_no_cv2"]


@pytest.mark.skipif(HAVE_MPL, reason="matplotlib is installed")
def test_galleries_without_matplotlib_raise_keras_messages():
    errors = REF["errors"]
    assert _message(lambda: v.plot_image_gallery(IMAGES)) == errors["gallery_no_matplotlib"]
    assert _message(lambda: v.plot_bounding_box_gallery(IMAGES, "xyxy")) == errors["box_gallery_no_matplotlib"]
    assert _message(lambda: v.plot_segmentation_mask_gallery(IMAGES, 4, y_true=MASKS)) == \
        errors["mask_gallery_no_matplotlib"]


def test_reached_through_keras():
    assert tf.keras.visualization.draw_segmentation_masks is v.draw_segmentation_masks
