"""Freezes keras.utils.bounding_boxes (convert_format, clip_to_image_size, crop, pad, compute_iou) (run under the
TF reference env, TF 2.21 / Keras 3.15): /work/tf-venv/bin/python
tools/tf_reference/keras_bounding_boxes_reference.py -> tests/keras/keras_bounding_boxes_reference.json"""
import json
import os

import numpy as np
import tensorflow as tf

bb = tf.keras.utils.bounding_boxes
FORMATS = ("xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy", "rel_yxyx", "rel_xywh",
           "rel_center_xywh")
B = np.array([[[10.0, 20.0, 50.0, 60.0], [0.0, 5.0, 30.0, 15.0], [-5.0, 70.0, 20.0, 110.0]]], dtype="float32")
B2 = np.array([[[12.0, 18.0, 40.0, 66.0], [-1.0, -1.0, -1.0, -1.0]]], dtype="float32")


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


out = {"tf_version": tf.__version__, "B": B.tolist(), "B2": B2.tolist(), "convert": {}}
for source in FORMATS:
    for target in FORMATS:
        out["convert"][f"{source}>{target}"] = np.asarray(
            bb.convert_format(B, source, target, height=100, width=80)).tolist()
clipped = bb.clip_to_image_size({"boxes": tf.constant(B), "labels": tf.constant([[1, 2, 3]])}, height=64,
                                width=40)
out["clip"] = {"boxes": np.asarray(clipped["boxes"]).tolist(), "labels": np.asarray(clipped["labels"]).tolist()}
rel = bb.clip_to_image_size({"boxes": tf.constant(B / 50.0), "labels": tf.constant([[1, 2, 3]])},
                            bounding_box_format="rel_xyxy")
out["clip_rel"] = {"boxes": np.asarray(rel["boxes"]).tolist(), "labels": np.asarray(rel["labels"]).tolist()}
out["crop"] = np.asarray(bb.crop(tf.constant(B), 10, 5, 40, 30)).tolist()
out["pad"] = np.asarray(bb.pad(tf.constant(B), 3, 7)).tolist()
out["iou"] = np.asarray(bb.compute_iou(B[0], B2[0], "xyxy")).tolist()
out["iou_batched_masked"] = np.asarray(bb.compute_iou(B, B2, "yxyx", use_masking=True, mask_val=-7)).tolist()
out["iou_rel"] = np.asarray(bb.compute_iou(B[0] / 200.0, B2[0] / 200.0, "rel_center_xywh",
                                           image_shape=(100, 80, 3))).tolist()
out["errors"] = {"last_dim": raises(lambda: bb.convert_format(B[..., :3], "xyxy", "yxyx")),
                 "format": raises(lambda: bb.convert_format(B, "xyxy", "cxcy")),
                 "rel_needs_size": raises(lambda: bb.convert_format(B, "xyxy", "rel_xyxy")),
                 "clip_needs_size": raises(lambda: bb.clip_to_image_size({"boxes": tf.constant(B)})),
                 "iou_rank": raises(lambda: bb.compute_iou(B[0, 0], B2[0], "xyxy")),
                 "iou_rel": raises(lambda: bb.compute_iou(B[0], B2[0], "rel_xyxy"))}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_bounding_boxes_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
