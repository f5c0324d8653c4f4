"""Writes tests/image/image_reference.json: TF 2.21's tf.image numbers for the colour, quality, gradient, box and
patch ops (run with /work/tf-venv; not part of the test suite). Inputs come from `pattern`, rebuilt by the tests."""
import json
import os

import numpy as np
import tensorflow as tf


def pattern(shape, k=0.0):
    size = int(np.prod(shape))
    return ((np.sin(np.arange(size) * 0.731 + k) + 1.0) / 2.0).reshape(shape).astype(np.float32)


out = {}
rgb = pattern((2, 3, 4, 3))
rgb[0, 0, 0] = [0.5, 0.5, 0.5]  # grey: hue and saturation 0
rgb[0, 0, 1] = [0.0, 0.0, 0.0]
out["rgb_to_hsv"] = tf.image.rgb_to_hsv(rgb).numpy()
hsv = pattern((2, 3, 4, 3), 1.0)
hsv[0, 0, 0] = [1.0, 0.5, 0.5]  # hue 1.0
out["hsv_to_rgb"] = tf.image.hsv_to_rgb(hsv).numpy()
out["rgb_to_yiq"] = tf.image.rgb_to_yiq(rgb).numpy()
out["yiq_to_rgb"] = tf.image.yiq_to_rgb(rgb).numpy()
out["rgb_to_yuv"] = tf.image.rgb_to_yuv(rgb).numpy()
out["yuv_to_rgb"] = tf.image.yuv_to_rgb(rgb).numpy()
out["adjust_hue"] = tf.image.adjust_hue(rgb, 0.2).numpy()
out["adjust_hue_neg"] = tf.image.adjust_hue(rgb, -0.45).numpy()
out["adjust_saturation"] = tf.image.adjust_saturation(rgb, 1.7).numpy()
rgb8 = (rgb * 255).astype(np.uint8)
out["adjust_hue_uint8"] = tf.image.adjust_hue(rgb8, 0.3).numpy()
out["adjust_saturation_uint8"] = tf.image.adjust_saturation(rgb8, 0.4).numpy()
out["adjust_gamma"] = tf.image.adjust_gamma(rgb, 2.2, 0.9).numpy()
out["adjust_gamma_uint8"] = tf.image.adjust_gamma(rgb8, 0.5).numpy()
a, b = pattern((2, 16, 16, 3)), pattern((2, 16, 16, 3), 0.3)
out["psnr"] = tf.image.psnr(a, b, 1.0).numpy()
out["psnr_uint8"] = tf.image.psnr((a * 255).astype(np.uint8), (b * 255).astype(np.uint8), 255).numpy()
out["ssim"] = tf.image.ssim(a, b, 1.0).numpy()
out["ssim_small_filter"] = tf.image.ssim(a, b, 2.0, filter_size=5, filter_sigma=0.8, k1=0.02, k2=0.05).numpy()
out["ssim_uint8"] = tf.image.ssim((a * 255).astype(np.uint8), (b * 255).astype(np.uint8), 255).numpy()
out["ssim_map"] = tf.image.ssim(a[0], b[0], 1.0, filter_size=7, return_index_map=True).numpy()
big_a, big_b = pattern((1, 37, 41, 2)), pattern((1, 37, 41, 2), 0.2)
out["ssim_multiscale"] = tf.image.ssim_multiscale(big_a, big_b, 1.0, power_factors=(0.3, 0.3, 0.4),
                                                  filter_size=3).numpy()
out["sobel_edges"] = tf.image.sobel_edges(tf.constant(pattern((1, 5, 6, 2)))).numpy()
dy, dx = tf.image.image_gradients(tf.constant(pattern((1, 4, 5, 2))))
out["image_gradients_dy"], out["image_gradients_dx"] = dy.numpy(), dx.numpy()
out["total_variation"] = tf.image.total_variation(tf.constant(pattern((2, 4, 5, 3)))).numpy()
out["total_variation_single"] = tf.image.total_variation(tf.constant(pattern((4, 5, 3)))).numpy()

boxes = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                  [0, 100, 1, 101], [1, 1, 0, 0]], np.float32)
scores = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.8], np.float32)
out["nms"] = tf.image.non_max_suppression(boxes, scores, 5, 0.5).numpy()
out["nms_threshold"] = tf.image.non_max_suppression(boxes, scores, 10, 0.5, score_threshold=0.55).numpy()
idx, sc = tf.image.non_max_suppression_with_scores(boxes, scores, 6, 1.0, soft_nms_sigma=0.5)
out["nms_soft_indices"], out["nms_soft_scores"] = idx.numpy(), sc.numpy()
idx, valid = tf.image.non_max_suppression_padded(boxes, scores, 6, 0.5, pad_to_max_output_size=True)
out["nms_padded_indices"], out["nms_padded_valid"] = idx.numpy(), valid.numpy()
overlaps = pattern((5, 5), 2.0)
out["nms_overlaps"] = tf.image.non_max_suppression_overlaps(overlaps, scores[:5], 4, 0.6).numpy()
cboxes = pattern((2, 6, 1, 4), 0.5)
cboxes = np.concatenate([cboxes[..., :2] * 0.5, cboxes[..., :2] * 0.5 + 0.3 + cboxes[..., 2:] * 0.4], -1)
cscores = pattern((2, 6, 3), 0.7)
res = tf.image.combined_non_max_suppression(cboxes, cscores, 3, 5, iou_threshold=0.3, score_threshold=0.2)
for key, value in zip(("boxes", "scores", "classes", "valid"), res):
    out["combined_nms_" + key] = value.numpy()
res = tf.image.combined_non_max_suppression(cboxes * 1.5 - 0.2, cscores, 2, 10, iou_threshold=0.5, pad_per_class=True,
                                            clip_boxes=False)
for key, value in zip(("boxes", "scores", "classes", "valid"), res):
    out["combined_nms_pad_" + key] = value.numpy()

image = pattern((2, 6, 7, 2))
crop_boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.5, 0.0, 0.2, 1.2], [-0.2, 0.3, 0.4, 0.6]], np.float32)
out["crop_and_resize"] = tf.image.crop_and_resize(image, crop_boxes, [1, 0, 1], [4, 3]).numpy()
out["crop_and_resize_nearest"] = tf.image.crop_and_resize(image, crop_boxes, [0, 1, 1], [3, 5], method="nearest",
                                                          extrapolation_value=-1.0).numpy()
out["crop_and_resize_1x1"] = tf.image.crop_and_resize(image, crop_boxes, [0, 1, 0], [1, 1]).numpy()
canvas = pattern((1, 8, 10, 3)) * 0.1
draw_boxes = np.array([[[0.1, 0.1, 0.6, 0.5], [0.3, 0.4, 0.9, 0.95], [0.0, 0.0, 1.0, 1.0]]], np.float32)
colors = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]], np.float32)
out["draw_bounding_boxes"] = tf.image.draw_bounding_boxes(canvas, draw_boxes, colors).numpy()
patches_in = pattern((1, 7, 8, 2))
out["extract_patches_valid"] = tf.image.extract_patches(patches_in, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1],
                                                        "VALID").numpy()
out["extract_patches_same_rates"] = tf.image.extract_patches(patches_in, [1, 2, 3, 1], [1, 3, 2, 1], [1, 2, 1, 1],
                                                             "SAME").numpy()
out["resize_with_pad"] = tf.image.resize_with_pad(tf.constant(pattern((5, 8, 1))), 6, 6).numpy()
out["per_image_standardization"] = tf.image.per_image_standardization(rgb8).numpy()


def short(array):
    return np.vectorize(lambda v: float(f"{v:.9g}"), otypes=[object])(array).tolist() if array.size else []


def encode(value):
    value = np.asarray(value)
    return short(value) if value.dtype.kind == "f" else value.tolist()


path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "image", "image_reference.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as handle:
    json.dump({"_source": f"TF {tf.__version__}, tools/tf_reference/image_reference.py",
               **{key: encode(value) for key, value in out.items()}}, handle)
print("wrote", path, os.path.getsize(path))
