"""Rescaling, Normalization (given stats and adapt) and Resizing against NumPy references
(TensorFlow's half-pixel bilinear/nearest rules written out in the test)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchstrategy.keras import layers

RNG = np.random.default_rng(5)


def test_rescaling_uint8_images():
    x = RNG.integers(0, 256, size=(2, 4, 4, 3), dtype=np.uint8)
    out = layers.Rescaling(1.0 / 127.5, offset=-1.0)(torch.tensor(x))
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), x.astype(np.float64) / 127.5 - 1.0, rtol=1e-6, atol=1e-6)
    assert layers.Rescaling(2.0, 1.0).get_config()["scale"] == 2.0


def test_normalization_with_given_stats_and_invert():
    x = RNG.normal(size=(5, 3)).astype(np.float32)
    mean, var = np.array([1.0, 2.0, 3.0]), np.array([4.0, 0.25, 0.0])
    out = layers.Normalization(mean=mean, variance=var)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out, (x - mean) / np.maximum(np.sqrt(var), 1e-7), rtol=1e-5)
    back = layers.Normalization(mean=mean, variance=var, invert=True)(torch.tensor(out)).numpy()
    np.testing.assert_allclose(back[:, :2], x[:, :2], rtol=1e-5, atol=1e-5)


def test_normalization_adapt_matches_numpy_for_array_and_batches():
    data = RNG.normal(3.0, 2.0, size=(100, 4, 3)).astype(np.float32)
    whole = layers.Normalization()
    whole.adapt(data)
    batched = layers.Normalization()
    batched.adapt([data[i:i + 32] for i in range(0, 100, 32)])
    mean, var = data.astype(np.float64).mean((0, 1)), data.astype(np.float64).var((0, 1))
    for layer in (whole, batched):
        got_mean, got_var, count = layer.get_weights()
        np.testing.assert_allclose(got_mean, mean, rtol=1e-5)
        np.testing.assert_allclose(got_var, var, rtol=1e-5)
        assert int(count) == 400
    out = whole(torch.tensor(data)).numpy()
    np.testing.assert_allclose(out, (data - mean) / np.sqrt(var), rtol=1e-4, atol=1e-5)


def test_normalization_errors():
    with pytest.raises(ValueError, match="both `mean` and `variance`"):
        layers.Normalization(mean=1.0)
    with pytest.raises(ValueError, match="adapt\\(\\) would overwrite"):
        layers.Normalization(mean=0.0, variance=1.0).adapt(np.ones((2, 2)))


def _np_resize(image, out_h, out_w, mode):
    """TF2 tf.image.resize (half_pixel_centers, no antialias) for one (H, W, C) image."""
    in_h, in_w = image.shape[:2]

    def coords(out, size):
        scale = size / out
        centre = (np.arange(out) + 0.5) * scale
        if mode == "nearest":
            return np.minimum(np.floor(centre).astype(int), size - 1)
        src = np.maximum(centre - 0.5, 0.0)
        low = np.floor(src).astype(int)
        return low, np.minimum(low + 1, size - 1), src - low

    if mode == "nearest":
        return image[coords(out_h, in_h)][:, coords(out_w, in_w)]
    (top, bottom, dy), (left, right, dx) = coords(out_h, in_h), coords(out_w, in_w)
    rows = image[top] * (1 - dy)[:, None, None] + image[bottom] * dy[:, None, None]
    return rows[:, left] * (1 - dx)[None, :, None] + rows[:, right] * dx[None, :, None]


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("out_size", [(3, 5), (9, 14), (6, 6)])
def test_resizing_matches_tf_half_pixel_rule(mode, out_size):
    images = RNG.normal(size=(2, 6, 7, 3))
    out = layers.Resizing(*out_size, interpolation=mode, dtype="float64")(torch.tensor(images))
    expected = np.stack([_np_resize(im, *out_size, mode) for im in images])
    # Keras 3.15 interpolates in float32 even for a float64 layer (tf.image.resize computes bilinear in float32;
    # the output is cast back): float32 rounding of the float64 rule. Nearest copies the float64 values.
    assert out.dtype == torch.float64
    if mode == "nearest":
        np.testing.assert_array_equal(out.numpy(), expected)
    else:
        np.testing.assert_allclose(out.numpy(), expected, rtol=2e-6, atol=2e-6)


def test_resizing_crop_to_aspect_ratio_and_unbatched():
    image = RNG.normal(size=(8, 12, 2))
    out = layers.Resizing(4, 4, crop_to_aspect_ratio=True, dtype="float64")(torch.tensor(image)).numpy()
    crop = image[:, 2:10]  # largest centred 8x8 window of an 8x12 image
    np.testing.assert_allclose(out, _np_resize(crop, 4, 4, "bilinear"), rtol=2e-6, atol=2e-6)  # float32 math
    with pytest.raises(ValueError, match="interpolation 'lanczos3' is not supported"):
        layers.Resizing(2, 2, interpolation="lanczos3")
    with pytest.raises(ValueError, match="only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio`"):
        layers.Resizing(2, 2, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    assert math.isclose(out.shape[0], 4)


def test_resizing_pads_to_the_aspect_ratio_and_reads_channels_first():
    # Keras 3.15: pad_to_aspect_ratio pads the short side evenly with fill_value, then resizes
    image = RNG.normal(size=(4, 8, 2))
    out = layers.Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=7.0, interpolation="nearest",
                          dtype="float64")(torch.tensor(image)).numpy()
    padded = np.full((8, 8, 2), 7.0)
    padded[2:6] = image
    np.testing.assert_allclose(out, _np_resize(padded, 4, 4, "nearest"), rtol=2e-6, atol=2e-6)
    first = layers.Resizing(3, 5, data_format="channels_first", dtype="float64")
    batch = RNG.normal(size=(2, 6, 7, 3))
    got = first(torch.tensor(batch.transpose(0, 3, 1, 2))).numpy()
    last = layers.Resizing(3, 5, dtype="float64")(torch.tensor(batch)).numpy()
    np.testing.assert_allclose(got, last.transpose(0, 3, 1, 2), rtol=1e-12)
    assert first.compute_output_shape((None, 3, 6, 7)) == (None, 3, 3, 5)
    config = first.get_config()
    assert (config["data_format"], config["pad_to_aspect_ratio"], config["antialias"]) == ("channels_first", False, False)
def test_resizing_pads_to_aspect_ratio_and_takes_channels_first_as_keras():
    # keras 3.15.1 (TF 2.21): Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=-1) on a 3x5 image pads one row
    # above and below (half the missing size, rounded down), then resizes bilinearly
    from torchstrategy.keras.layers.preprocessing import Resizing

    x = torch.arange(30, dtype=torch.float32).reshape(1, 3, 5, 2)
    padded = Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=-1.0)(x)
    want_first_row = [[-0.8438, -0.7188], [-0.5312, -0.4062], [-0.2188, -0.0938], [0.0938, 0.2188]]
    assert np.allclose(padded[0, 0].numpy(), want_first_row, atol=1e-4)
    assert np.allclose(padded[0, 1].numpy(), [[4.0, 5.0], [6.5, 7.5], [9.0, 10.0], [11.5, 12.5]], atol=1e-4)
    first = Resizing(2, 3, data_format="channels_first")(x.permute(0, 3, 1, 2))
    assert np.allclose(first.numpy(), [[[[3.1667, 6.5, 9.8333], [18.1667, 21.5, 24.8333]],
                                        [[4.1667, 7.5, 10.8333], [19.1667, 22.5, 25.8333]]]], atol=1e-4)
    config = Resizing(2, 3).get_config()
    assert (config["pad_to_aspect_ratio"], config["fill_mode"], config["fill_value"], config["antialias"],
            config["data_format"]) == (False, "constant", 0.0, False, "channels_last")
    with pytest.raises(ValueError, match="only one of"):
        Resizing(2, 3, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    with pytest.raises(ValueError, match="fill_mode"):
        Resizing(2, 3, fill_mode="reflect")
    with pytest.raises(NotImplementedError, match="antialias"):
        Resizing(2, 3, antialias=True)
