"""keras.utils.bounding_boxes (convert_format, clip_to_image_size, crop, pad, compute_iou) against TF 2.21 /
Keras 3.15 results frozen in keras_bounding_boxes_reference.json by
tools/tf_reference/keras_bounding_boxes_reference.py."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

bb = tf.keras.utils.bounding_boxes
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_bounding_boxes_reference.json")))
B = np.asarray(REF["B"], dtype="float32")
B2 = np.asarray(REF["B2"], dtype="float32")


def close(got, want):
    np.testing.assert_allclose(torch.as_tensor(got).numpy(), np.asarray(want, dtype="float32"), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("pair", sorted(REF["convert"]))
def test_convert_format(pair):
    source, target = pair.split(">")
    close(bb.convert_format(B, source, target, height=100, width=80), REF["convert"][pair])


def test_clip_crop_pad():
    clipped = bb.clip_to_image_size({"boxes": torch.from_numpy(B), "labels": torch.tensor([[1, 2, 3]])},
                                    height=64, width=40)
    close(clipped["boxes"], REF["clip"]["boxes"])
    assert clipped["labels"].tolist() == REF["clip"]["labels"]
    rel = bb.clip_to_image_size({"boxes": torch.from_numpy(B / 50.0), "labels": torch.tensor([[1, 2, 3]])},
                                bounding_box_format="rel_xyxy")
    close(rel["boxes"], REF["clip_rel"]["boxes"])
    assert rel["labels"].tolist() == REF["clip_rel"]["labels"]
    close(bb.crop(B, 10, 5, 40, 30), REF["crop"])
    close(bb.pad(B, 3, 7), REF["pad"])


def test_compute_iou():
    close(bb.compute_iou(B[0], B2[0], "xyxy"), REF["iou"])
    close(bb.compute_iou(B, B2, "yxyx", use_masking=True, mask_val=-7), REF["iou_batched_masked"])
    close(bb.compute_iou(B[0] / 200.0, B2[0] / 200.0, "rel_center_xywh", image_shape=(100, 80, 3)), REF["iou_rel"])


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return {"raises": type(info.value).__name__, "message": str(info.value)}


def test_errors_match_keras():
    errors = REF["errors"]
    assert _message(lambda: bb.convert_format(B[..., :3], "xyxy", "yxyx")) == errors["last_dim"]
    assert _message(lambda: bb.convert_format(B, "xyxy", "cxcy")) == errors["format"]
    assert _message(lambda: bb.convert_format(B, "xyxy", "rel_xyxy")) == errors["rel_needs_size"]
    assert _message(lambda: bb.clip_to_image_size({"boxes": B})) == errors["clip_needs_size"]
    assert _message(lambda: bb.compute_iou(B[0, 0], B2[0], "xyxy")) == errors["iou_rank"]
    assert _message(lambda: bb.compute_iou(B[0], B2[0], "rel_xyxy")) == errors["iou_rel"]
