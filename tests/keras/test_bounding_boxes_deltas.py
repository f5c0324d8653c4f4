"""keras.utils.bounding_boxes compute_ciou / encode_box_to_deltas / decode_deltas_to_boxes / affine_transform vs Keras
results frozen in keras_last_names_reference.json by tools/tf_reference/keras_last_names_reference.py (TF 2.21).
Module: torchstrategy/keras/bounding_boxes.py (its other functions are in test_bounding_boxes.py)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

BB = tf.keras.utils.bounding_boxes
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_last_names_reference.json")))
B1, B2, ANCH, DELTAS = (torch.tensor(REF[k]) for k in ("BB1", "BB2", "ANCH", "deltas"))
VAR = [0.1, 0.1, 0.2, 0.2]


def _close(got, expected):
    np.testing.assert_allclose(np.asarray(got), np.array(expected), rtol=1e-5, atol=1e-5)


def test_compute_ciou():
    _close(BB.compute_ciou(B1, B2, "xyxy"), REF["ciou"])
    _close(BB.compute_ciou(B1[None], B2[None], "yxyx"), REF["ciou_batched_yxyx"])
    with pytest.raises(ValueError, match="image_shape"):
        BB.compute_ciou(B1, B2, "rel_xyxy")


def test_encode_box_to_deltas():
    _close(BB.encode_box_to_deltas(ANCH, B1, "xyxy", "xyxy"), REF["encode"])
    _close(BB.encode_box_to_deltas(ANCH, B2, "xyxy", "xywh", encoding_format="center_xywh", variance=VAR),
           REF["encode_var_xywh"])
    with pytest.raises(ValueError, match="4 values"):
        BB.encode_box_to_deltas(ANCH, B1, "xyxy", "xyxy", variance=[0.1, 0.2])
    with pytest.raises(ValueError, match="encoding_format"):
        BB.encode_box_to_deltas(ANCH, B1, "xyxy", "xyxy", encoding_format="xyxy")


def test_decode_deltas_to_boxes_and_round_trip():
    _close(BB.decode_deltas_to_boxes(ANCH, DELTAS, "xyxy", "xyxy"), REF["decode"])
    _close(BB.decode_deltas_to_boxes(ANCH, DELTAS[None], "xyxy", "yxyx", encoded_format="center_xywh",
                                     variance=VAR), REF["decode_var_batched"])
    levels = BB.decode_deltas_to_boxes({"P3": ANCH[:2], "P4": ANCH[2:]}, {"P3": DELTAS[:2], "P4": DELTAS[2:]},
                                       "xyxy", "xywh")
    assert sorted(levels) == sorted(REF["decode_dict"])
    for level, boxes in levels.items():
        _close(boxes, REF["decode_dict"][level])
    deltas = BB.encode_box_to_deltas(ANCH, B1, "xyxy", "xyxy", variance=VAR)
    _close(BB.decode_deltas_to_boxes(ANCH, deltas, "xyxy", "xyxy", variance=VAR), B1.numpy())
    with pytest.raises(ValueError, match="encoded_format"):
        BB.decode_deltas_to_boxes(ANCH, DELTAS, "xyxy", "xyxy", encoded_format="yxyx")


def test_affine_transform():
    boxes = torch.tensor(REF["AB"])
    f = np.float32
    got = BB.affine_transform(boxes, np.array([15.0, -30.0], f), np.array([0.1, -0.05], f), np.array([0.0, 0.2], f),
                              np.array([1.0, 1.2], f), np.array([5.0, 0.0], f), np.array([0.0, -10.0], f), 80, 100)
    _close(got, REF["affine"])
    got = BB.affine_transform(boxes, np.array([90.0, 45.0], f), np.zeros(2, f), np.zeros(2, f), np.array([0.5, 2.0], f),
                              np.zeros(2, f), np.zeros(2, f), 64, 64, center_x=np.array([0.2, 0.7], f),
                              center_y=np.array([0.3, 0.6], f))
    _close(got, REF["affine_center"])
    assert REF["affine_format_error"]["raises"] == "NotImplementedError"
    with pytest.raises(NotImplementedError, match="xyxy"):
        BB.affine_transform(boxes, np.zeros(2, f), 0, 0, 1, 0, 0, 8, 8, bounding_box_format="yxyx")
    with pytest.raises(ValueError, match="batch, N, 4"):
        BB.affine_transform(boxes[0], np.zeros(2, f), 0, 0, 1, 0, 0, 8, 8)
