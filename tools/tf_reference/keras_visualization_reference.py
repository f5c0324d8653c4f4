"""Freezes keras.visualization's drawn masks and error messages (run under the TF reference env, TF 2.21 /
Keras 3.15, no matplotlib or OpenCV installed there):
/work/tf-venv/bin/python tools/tf_reference/keras_visualization_reference.py -> tests/keras/keras_visualization_reference.json"""
import json
import os

import keras
import numpy as np

rng = np.random.default_rng(3)
IMAGES = rng.uniform(0, 255, size=(2, 4, 5, 3)).astype("float32")
MASKS = rng.integers(-1, 4, size=(2, 4, 5, 1)).astype("int32")
v = keras.visualization


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


def arr(x):
    a = np.asarray(x)
    return {"value": a.tolist(), "dtype": str(a.dtype), "type": type(x).__module__.split(".")[0]}


out = {"keras_version": keras.__version__, "images": IMAGES.tolist(), "masks": MASKS.tolist(), "masks_cases": {}}
for key, kwargs in {"default": {}, "classes4": {"num_classes": 4},
                    "mapping": {"num_classes": 3, "color_mapping": {0: (255, 0, 0), 1: (0, 255, 0), 2: (0, 0, 9)}},
                    "alpha": {"num_classes": 5, "alpha": 0.3, "ignore_index": 2},
                    "no_blend": {"num_classes": 4, "blend": False}}.items():
    out["masks_cases"][key] = arr(v.draw_segmentation_masks(IMAGES, MASKS, **kwargs))
out["channels_first"] = arr(v.draw_segmentation_masks(IMAGES.transpose(0, 3, 1, 2), MASKS.transpose(0, 3, 1, 2),
                                                      num_classes=4, data_format="channels_first"))
out["errors"] = {
    "masks_3d": raises(lambda: v.draw_segmentation_masks(IMAGES[0], MASKS[0])),
    "masks_float": raises(lambda: v.draw_segmentation_masks(IMAGES, MASKS.astype("float32"))),
    "boxes_no_cv2": raises(lambda: v.draw_bounding_boxes(IMAGES, {"boxes": np.zeros((2, 1, 4)),
                                                                  "labels": np.zeros((2, 1))}, "xyxy")),
    "gallery_no_matplotlib": raises(lambda: v.plot_image_gallery(IMAGES)),
    "box_gallery_no_matplotlib": raises(lambda: v.plot_bounding_box_gallery(IMAGES, "xyxy")),
    "mask_gallery_no_matplotlib": raises(lambda: v.plot_segmentation_mask_gallery(IMAGES, 4, y_true=MASKS)),
    "mask_gallery_3d": raises(lambda: v.plot_segmentation_mask_gallery(IMAGES[0], 4)),
}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_visualization_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
