"""Freezes Keras 3 numbers for the audio and augmentation layers of issue 22 point 3 into
tests/keras/layers/keras_augment_reference.json: deterministic layers are called on a fixed input; random ones
get a transformation written by hand through `transform_images(images, transformation)`. Each case keeps the
constructor kwargs, the input, the transformation, Keras's output and its get_config.
Run under /work/tf-venv (TF 2.21, Keras 3.15); STFTSpectrogram's window needs SciPy, which that venv lacks, so
install it beside it first:

    /work/tf-venv/bin/python -m pip install --no-deps --target /tmp/scipy_site scipy
    PYTHONPATH=/tmp/scipy_site /work/tf-venv/bin/python tools/tf_reference/keras_augment_reference.py
"""
from __future__ import annotations

import json
import os

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "layers", "keras_augment_reference.json")


def pattern(shape, offset=0.0):
    """Deterministic values in [-1, 1]: sin of the flat index."""
    n = int(np.prod(shape))
    return np.sin(np.arange(n, dtype=np.float64) * 0.731 + 0.37 + offset).reshape(shape).astype(np.float32)


def unit(shape, offset=0.0):
    return (pattern(shape, offset) + 1.0) / 2.0


def pixels(shape, offset=0.0):
    return np.round(127.5 + 127.5 * pattern(shape, offset) ** 3).astype(np.float32)


def box_masks(shape, boxes, channels_first=False):
    """Boolean masks (batch, H, W, C) (or channels first) set inside (x0, x1, y0, y1) per image."""
    n = shape[0]
    h, w, c = (shape[2], shape[3], shape[1]) if channels_first else (shape[1], shape[2], shape[3])
    masks = np.zeros((n, h, w, c), bool)
    for i, (x0, x1, y0, y1) in enumerate(boxes):
        masks[i, y0:y1, x0:x1, :] = True
    return masks.transpose(0, 3, 1, 2) if channels_first else masks


def corners(height, width):
    return np.array([[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]], np.float32)


def perspective_points(batch, height, width, jitters):
    start = np.repeat(corners(height, width)[None], batch, axis=0)
    return start, (start + start * np.array(jitters, np.float32)).astype(np.float32)


JITTER_A = [[0.1, 0.05], [-0.2, 0.1], [0.15, -0.1], [-0.05, -0.2]]
JITTER_B = [[-0.1, 0.2], [0.05, -0.15], [-0.2, 0.05], [0.1, 0.1]]
START, END = perspective_points(2, 6, 7, [JITTER_A, JITTER_B])
START_CF, END_CF = perspective_points(1, 5, 6, [JITTER_B])
AUGMIX_CHAINS = [[{"layer_name": "auto_contrast", "transformation": None}],
                 [{"layer_name": "equalization", "transformation": None}],
                 [{"layer_name": "equalization", "transformation": None},
                  {"layer_name": "auto_contrast", "transformation": None}]]

# (case id, class, kwargs, input, call kwargs or None, transformation for transform_images or None)
CASES = [
    ("stft_log", "STFTSpectrogram", {"frame_length": 16, "frame_step": 4, "fft_length": 32},
     pattern((2, 64, 1)), {}, None),
    ("stft_magnitude_same_hamming", "STFTSpectrogram", {"mode": "magnitude", "frame_length": 10, "frame_step": 3,
                                                        "window": "hamming", "periodic": True, "padding": "same"},
     pattern((1, 50, 2)), {}, None),
    ("stft_psd_spectrum", "STFTSpectrogram", {"mode": "psd", "frame_length": 12, "fft_length": 16,
                                              "scaling": "spectrum"}, pattern((2, 40, 1)), {}, None),
    ("stft_real_no_window", "STFTSpectrogram", {"mode": "real", "frame_length": 8, "window": None,
                                                "scaling": None}, pattern((1, 30, 1)), {}, None),
    ("stft_imag_same", "STFTSpectrogram", {"mode": "imag", "frame_length": 8, "frame_step": 5, "padding": "same"},
     pattern((1, 33, 1)), {}, None),
    ("stft_angle_expand", "STFTSpectrogram", {"mode": "angle", "frame_length": 8, "expand_dims": True},
     pattern((1, 24, 2)), {}, None),
    ("stft_cf_expand", "STFTSpectrogram", {"mode": "stft", "frame_length": 8, "frame_step": 4,
                                           "data_format": "channels_first", "expand_dims": True},
     pattern((1, 2, 32)), {}, None),
    ("stft_cf_log", "STFTSpectrogram", {"frame_length": 8, "frame_step": 2, "data_format": "channels_first"},
     pattern((2, 2, 20)), {}, None),
    ("mel_small", "MelSpectrogram", {"fft_length": 64, "sequence_stride": 16, "num_mel_bins": 10,
                                     "sampling_rate": 8000}, pattern((2, 200)), {}, None),
    ("mel_no_db_hamming", "MelSpectrogram", {"fft_length": 64, "sequence_stride": 20, "sequence_length": 48,
                                             "window": "hamming", "num_mel_bins": 6, "power_to_db": False,
                                             "mag_exp": 1.0, "sampling_rate": 4000}, pattern((1, 300)), {}, None),
    ("mel_unbatched_db", "MelSpectrogram", {"fft_length": 128, "sequence_stride": 32, "num_mel_bins": 12,
                                            "min_freq": 100.0, "max_freq": 3000, "top_db": 20.0, "ref_power": 0.5},
     pattern((256,)), {}, None),
    ("erasing", "RandomErasing", {"value_range": (0, 1)}, unit((3, 5, 6, 2)), None,
     {"apply_erasing": np.array([True, False, True]),
      "batch_masks": box_masks((3, 5, 6, 2), [(1, 4, 0, 2), (0, 6, 0, 5), (2, 3, 1, 5)]),
      "fill_value": unit((3, 5, 6, 2), offset=4.0)}),
    ("erasing_cf", "RandomErasing", {"value_range": (0, 1), "data_format": "channels_first", "fill_value": 0.25},
     unit((2, 2, 4, 5)), None,
     {"apply_erasing": np.array([True, True]),
      "batch_masks": box_masks((2, 2, 4, 5), [(1, 3, 1, 3), (0, 2, 2, 4)], channels_first=True),
      "fill_value": np.full((2, 2, 4, 5), 0.25, np.float32)}),
    ("shear_reflect", "RandomShear", {"x_factor": 0.3, "y_factor": 0.3}, unit((2, 6, 7, 2)), None,
     {"shear_factor": np.array([[0.2, -0.1], [-0.25, 0.15]], np.float32)}),
    ("shear_constant_nearest", "RandomShear", {"x_factor": 0.5, "fill_mode": "constant", "fill_value": 0.5,
                                               "interpolation": "nearest"}, unit((1, 5, 6, 1)), None,
     {"shear_factor": np.array([[0.45, 0.0]], np.float32)}),
    ("shear_wrap_cf", "RandomShear", {"y_factor": 0.4, "fill_mode": "wrap", "data_format": "channels_first"},
     unit((1, 2, 5, 6)), None, {"shear_factor": np.array([[0.0, -0.35]], np.float32)}),
    ("shear_nearest_fill", "RandomShear", {"x_factor": 0.4, "y_factor": 0.4, "fill_mode": "nearest"},
     unit((1, 6, 6, 1)), None, {"shear_factor": np.array([[-0.3, 0.2]], np.float32)}),
    ("perspective", "RandomPerspective", {"scale": 0.5}, unit((2, 6, 7, 2)), None,
     {"apply_perspective": np.array([True, True]), "start_points": START, "end_points": END}),
    ("perspective_nearest_skip", "RandomPerspective", {"scale": 0.5, "interpolation": "nearest",
                                                       "fill_value": 0.3}, unit((2, 6, 7, 1)), None,
     {"apply_perspective": np.array([False, True]), "start_points": START, "end_points": END}),
    ("perspective_cf", "RandomPerspective", {"data_format": "channels_first"}, unit((1, 2, 5, 6)), None,
     {"apply_perspective": np.array([True]), "start_points": START_CF, "end_points": END_CF}),
    ("clahe_default", "ContrastLimitedAdaptiveHistogramEqualization", {}, pixels((1, 16, 16, 3)), {}, None),
    ("clahe_uneven_tiles", "ContrastLimitedAdaptiveHistogramEqualization", {"tile_grid_size": (2, 3),
                                                                            "clip_limit": 2.0},
     pixels((2, 7, 10, 1)), {}, None),
    ("clahe_no_clip_range", "ContrastLimitedAdaptiveHistogramEqualization", {"value_range": (0, 1),
                                                                             "clip_limit": 0,
                                                                             "tile_grid_size": (3, 3)},
     unit((1, 9, 9, 2)), {}, None),
    ("clahe_cf", "ContrastLimitedAdaptiveHistogramEqualization", {"tile_grid_size": (2, 2),
                                                                  "data_format": "channels_first"},
     pixels((1, 2, 6, 8)), {}, None),
    ("rand_augment_tone", "RandAugment", {"value_range": (0, 1)}, unit((2, 5, 6, 3)), None,
     {"layer_idxes": np.array([9, 10])}),
    # channels_first picks equalization only: Keras 3.15's AutoContrast takes its min/max over axes (1, 2) even
    # for channels_first images (over channels and rows), where ours takes them over rows and columns
    ("rand_augment_tone_cf", "RandAugment", {"num_ops": 3, "data_format": "channels_first"},
     pixels((1, 3, 5, 5)), None, {"layer_idxes": np.array([10, 10, 10])}),
    ("aug_mix_tone", "AugMix", {"value_range": (0, 1)}, unit((2, 5, 6, 3)), None,
     {"chain_mixing_weights": np.array([0.2, 0.5, 0.3], np.float32), "weight_sample": np.float32(0.4),
      "chain_transforms": AUGMIX_CHAINS}),
]

BOX_CASES = [  # MaxNumBoundingBoxes on {"images", "bounding_boxes"}
    ("max_boxes_pad", {"max_number": 5, "bounding_box_format": "xyxy"}, 3),
    ("max_boxes_cut", {"max_number": 2, "fill_value": -3, "bounding_box_format": "xyxy"}, 4),
]


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    array = np.asarray(keras.ops.convert_to_numpy(value))
    return array.tolist()


def jsonable(config):
    return json.loads(json.dumps(config, default=lambda o: repr(o)))


def keras_transformation(layer, images, transformation):
    """The hand-written transformation, completed with what Keras's own draw adds (input_shape, sub-draws)."""
    if transformation is None:
        return None
    drawn = layer.get_random_transformation(images, training=True) or {}
    full = dict(drawn)
    full.update({k: (v if k == "chain_transforms" else tf.constant(v)) for k, v in transformation.items()})
    return full


def run_case(case_id, class_name, kwargs, inputs, call_kwargs, transformation):
    layer = getattr(keras.layers, class_name)(**kwargs)
    if transformation is None:
        output = layer(inputs, **call_kwargs)
    else:
        layer.build(inputs.shape)
        output = layer.transform_images(tf.constant(inputs), keras_transformation(layer, inputs, transformation))
    return {"class": class_name, "kwargs": kwargs, "call_kwargs": call_kwargs, "input": inputs.tolist(),
            "transformation": plain(transformation), "output": plain(output), "config": jsonable(layer.get_config())}


def run_box_case(kwargs, count):
    layer = keras.layers.MaxNumBoundingBoxes(**kwargs)
    boxes = (np.arange(2 * count * 4, dtype=np.float32).reshape(2, count, 4) % 7)
    labels = np.arange(2 * count, dtype=np.int32).reshape(2, count) % 5
    data = {"images": unit((2, 4, 4, 3)), "bounding_boxes": {"boxes": boxes, "labels": labels}}
    output = layer(data)
    return {"class": "MaxNumBoundingBoxes", "kwargs": kwargs, "input": plain(data),
            "output": plain(output["bounding_boxes"]), "config": jsonable(layer.get_config())}


def main() -> None:
    data = {"keras_version": keras.__version__, "tensorflow_version": tf.__version__, "cases": {}}
    for case in CASES:
        data["cases"][case[0]] = run_case(*case)
    for case_id, kwargs, count in BOX_CASES:
        data["cases"][case_id] = run_box_case(kwargs, count)
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, separators=(",", ":"))
    os.replace(tmp, OUT)
    print(f"wrote {len(data['cases'])} cases to {OUT}")


if __name__ == "__main__":
    main()
