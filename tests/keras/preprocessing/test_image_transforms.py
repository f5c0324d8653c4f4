"""keras.preprocessing.image's legacy transforms (apply_affine_transform's NumPy resampling, channel and
brightness shifts, random_*) against Keras 3.15 / SciPy outputs frozen in keras_imggen_reference.json."""
from __future__ import annotations

import numpy as np
import pytest

from torchstrategy import keras
from torchstrategy.keras.preprocessing import image_transforms as T

from tests.keras.preprocessing._imggen_reference import REFERENCE

IMG = keras.preprocessing.image


@pytest.mark.parametrize("case", REFERENCE["affine"], ids=lambda c: f"{c['fill_mode']}-o{c['order']}")
def test_apply_affine_transform_matches_keras(case):
    # TF 2.21 / Keras 3.15 with SciPy 1.17 (scipy.ndimage.affine_transform) produced case["y"].
    x = np.asarray(case["x"], np.float32)
    out = IMG.apply_affine_transform(x, **case["params"], **case["axes"], fill_mode=case["fill_mode"],
                                     cval=case.get("cval", -1.5), order=case["order"])
    assert out.shape == x.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, np.asarray(case["y"]), rtol=1e-5, atol=1e-4)


def test_identity_returns_input_and_fill_modes_cover_all_four():
    x = np.arange(12.0).reshape(1, 3, 4)
    assert IMG.apply_affine_transform(x) is x
    assert {c["fill_mode"] for c in REFERENCE["affine"]} == {"nearest", "reflect", "wrap", "constant"}
    # As in Keras (its matrix is built in (x, y) order and swapped): tx moves columns, ty moves rows.
    shifted = IMG.apply_affine_transform(x, tx=1, fill_mode="constant", cval=-1.0)
    np.testing.assert_array_equal(shifted[0, :, :3], x[0, :, 1:])
    np.testing.assert_array_equal(shifted[0, :, 3], -1.0)
    shifted = IMG.apply_affine_transform(x, ty=-1, fill_mode="nearest")
    np.testing.assert_array_equal(shifted[0, 1:], x[0, :2])
    np.testing.assert_array_equal(shifted[0, 0], x[0, 0])


def test_apply_affine_transform_bad_arguments():
    x = np.zeros((3, 4, 4))
    with pytest.raises(ValueError, match="distinct"):
        IMG.apply_affine_transform(x, theta=5, row_axis=1, col_axis=1)
    with pytest.raises(ValueError, match="first and last"):
        IMG.apply_affine_transform(x, theta=5, row_axis=0, col_axis=2, channel_axis=1)
    with pytest.raises(ValueError, match="rank 3"):
        IMG.apply_affine_transform(np.zeros((4, 4)), theta=5)
    with pytest.raises(ValueError, match="fill_mode"):
        IMG.apply_affine_transform(x, theta=5, fill_mode="mirror")
    with pytest.raises(NotImplementedError, match="order"):
        IMG.apply_affine_transform(x, theta=5, order=3)


@pytest.mark.parametrize("name", ["random_rotation", "random_shift", "random_shear", "random_zoom",
                                  "random_channel_shift", "apply_channel_shift"])
def test_random_helpers_match_keras_with_the_same_numpy_seed(name):
    ref = REFERENCE["random_helpers"]
    x = np.asarray(ref["x"], np.float32)
    calls = {
        "random_rotation": lambda: IMG.random_rotation(x, 40),
        "random_shift": lambda: IMG.random_shift(x, 0.2, 0.3, fill_mode="reflect"),
        "random_shear": lambda: IMG.random_shear(x, 25, fill_mode="wrap"),
        "random_zoom": lambda: IMG.random_zoom(x, (0.7, 1.3), fill_mode="constant", cval=7.0),
        "random_channel_shift": lambda: IMG.random_channel_shift(x, 30.0),
        "apply_channel_shift": lambda: IMG.apply_channel_shift(x, -50.0, channel_axis=0),
    }
    np.random.seed(11)
    np.testing.assert_allclose(calls[name](), np.asarray(ref[name]), rtol=1e-5, atol=1e-3)


def test_brightness_matches_keras():
    pytest.importorskip("PIL")
    ref = REFERENCE["random_helpers"]
    hwc = np.transpose(np.asarray(ref["x"], np.float32), (1, 2, 0))
    np.random.seed(11)
    np.testing.assert_allclose(IMG.random_brightness(hwc, (0.5, 1.5)), np.asarray(ref["random_brightness"]))
    np.testing.assert_allclose(IMG.apply_brightness_shift(hwc * 2 - 100, 1.3, scale=False),
                               np.asarray(ref["apply_brightness_shift_noscale"]), rtol=1e-5, atol=1e-3)
    with pytest.raises(ValueError, match="two floats"):
        IMG.random_brightness(hwc, (0.5,))
    with pytest.raises(ValueError, match="two floats"):
        IMG.random_zoom(hwc, (0.5,))


def test_reflect_and_wrap_extend_like_scipy_past_several_periods():
    # Far outside the image: reflect repeats with period 2n, SciPy's legacy 'wrap' with period n - 1.
    coords = np.array([-7.0, -1.0, -0.5, 4.0, 9.5])
    np.testing.assert_allclose(T._map_coordinates(coords, 3, "reflect"), [0.0, 0.0, -0.5, 1.0, 1.5])
    np.testing.assert_allclose(T._map_coordinates(coords, 3, "wrap"), [1.0, 1.0, 1.5, 0.0, 1.5])
