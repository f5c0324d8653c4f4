"""tf.io.decode_jpeg / encode_jpeg against TF 2.21 (jpeg_reference.json, from tools/tf_reference/jpeg_reference.py):
decoded pixels for channels and ratio, encoded bytes for every encode option, and the options refused."""
from __future__ import annotations

import base64
import json
import os

import numpy as np
import pytest

import torchstrategy as tf

with open(os.path.join(os.path.dirname(__file__), "jpeg_reference.json")) as _handle:
    REF = json.load(_handle)
RGB = base64.b64decode(REF["rgb_jpeg"])
GRAY = base64.b64decode(REF["gray_jpeg"])
IMAGE = np.asarray(REF["image"], np.uint8)


@pytest.mark.parametrize("ratio", [1, 2, 4, 8])
@pytest.mark.parametrize("channels, key", [(0, "rgb"), (3, "rgb"), (1, "gray1")])
def test_decode_equals_tfs_accurate_idct_with_channels_and_ratio(ratio, channels, key):
    decoded = tf.io.decode_jpeg(RGB, channels=channels, ratio=ratio, dct_method="INTEGER_ACCURATE")
    np.testing.assert_array_equal(decoded.numpy(), np.asarray(REF["decoded"][f"{key}_ratio{ratio}"], np.uint8))


def test_decode_of_a_gray_jpeg_as_stored_and_as_rgb():
    np.testing.assert_array_equal(tf.image.decode_jpeg(GRAY).numpy(), REF["decoded"]["gray_as_stored"])
    np.testing.assert_array_equal(tf.image.decode_jpeg(GRAY, channels=3).numpy(), REF["decoded"]["gray_as_rgb"])


def test_default_dct_method_is_within_a_few_levels_of_tfs_fast_idct():
    # TF's '' is its fast IDCT; Pillow has the accurate one only (TF 2.21: at most 3 levels apart here).
    decoded = tf.io.decode_jpeg(RGB).numpy().astype(int)
    assert decoded.shape == (20, 27, 3)
    assert np.abs(decoded - np.asarray(REF["decoded"]["rgb_ratio1"])).max() <= 3


def test_recovery_options_are_no_ops_on_complete_data():
    decoded = tf.io.decode_jpeg(RGB, try_recover_truncated=True, acceptable_fraction=0.5,
                                dct_method="INTEGER_ACCURATE")
    np.testing.assert_array_equal(decoded.numpy(), REF["decoded"]["rgb_ratio1"])


def test_truncated_jpeg_is_refused_and_recovery_is_not_implemented():
    truncated = RGB[:-30]
    with pytest.raises(ValueError, match="truncated"):
        tf.io.decode_jpeg(truncated)
    for options in ({"try_recover_truncated": True}, {"acceptable_fraction": 0.1}):
        with pytest.raises(NotImplementedError, match="try_recover_truncated=True or acceptable_fraction<1"):
            tf.io.decode_jpeg(truncated, **options)


@pytest.mark.parametrize("options, error, match", [
    ({"channels": 4}, ValueError, "channels must be 0"),
    ({"channels": 2}, ValueError, "channels must be 0"),
    ({"ratio": 3}, ValueError, "ratio must be 1, 2, 4 or 8"),
    ({"dct_method": "X"}, ValueError, "dct_method must be one of"),
    ({"dct_method": "INTEGER_FAST"}, NotImplementedError, "INTEGER_FAST"),
    ({"fancy_upscaling": False}, NotImplementedError, "fancy_upscaling"),
    ({"acceptable_fraction": 2}, ValueError, "acceptable_fraction"),
])
def test_decode_options_refused_name_themselves(options, error, match):
    with pytest.raises(error, match=match):
        tf.io.decode_jpeg(RGB, **options)


@pytest.mark.parametrize("key", sorted(REF["encoded"]))
def test_encode_bytes_equal_tfs_for_every_option(key):
    case = REF["encoded"][key]
    image = IMAGE[..., :1] if case.get("channel0_only") else IMAGE
    assert tf.io.encode_jpeg(image, **case["options"]) == base64.b64decode(case["bytes"])


@pytest.mark.parametrize("image, options, match", [
    (IMAGE, {"format": "grayscale"}, "format 'grayscale' expects 1 channels"),
    (IMAGE[..., :1], {"format": "rgb"}, "format 'rgb' expects 3 channels"),
    (IMAGE, {"format": "x"}, "format must be"),
    (IMAGE, {"quality": 101}, "quality must be in"),
    (IMAGE, {"density_unit": "mm"}, "density_unit"),
    (IMAGE, {"x_density": 70000}, "x_density"),
    (IMAGE.astype(np.float32), {}, "uint8"),
])
def test_encode_refuses_what_tf_refuses(image, options, match):
    with pytest.raises(ValueError, match=match):
        tf.io.encode_jpeg(image, **options)
