"""Tests of torchstrategy.image (tf.image): resize methods, crops/pads, colour ops, dtype conversion and
PNG/JPEG coding, against values frozen from TF 2.21."""

import numpy as np
import pytest
import torch

from torchstrategy import image

SMALL = (torch.arange(12, dtype=torch.float32) ** 1.5).reshape(1, 3, 4, 1)
U8 = torch.from_numpy(((np.arange(72) * 37) % 256).astype(np.uint8).reshape(2, 3, 4, 3))

# TF 2.21 outputs (tf.image on SMALL and U8, channel 0 of the first image; floats rounded to 4 decimals)
RESIZE_BILINEAR_2X3 = [
    [2.2575, 4.6703, 8.0719],
    [19.6497, 25.2182, 31.2254]]
RESIZE_BILINEAR_5X7 = [
    [0.0, 0.3571, 0.9286, 1.9142, 2.9976, 4.3505, 5.1962],
    [3.2, 3.8686, 4.9384, 6.324, 7.7865, 9.4722, 10.5258],
    [8.0, 9.1358, 10.9532, 12.9386, 14.97, 17.1548, 18.5203],
    [16.7765, 18.1678, 20.3939, 22.7623, 25.17, 27.7102, 29.2978],
    [22.6274, 24.1891, 26.6877, 29.3114, 31.9699, 34.7471, 36.4829]]
RESIZE_NEAREST_2X3 = [
    [0.0, 2.8284, 5.1962],
    [22.6274, 31.6228, 36.4829]]
RESIZE_NEAREST_5X7 = [
    [0.0, 0.0, 1.0, 2.8284, 2.8284, 5.1962, 5.1962],
    [0.0, 0.0, 1.0, 2.8284, 2.8284, 5.1962, 5.1962],
    [8.0, 8.0, 11.1803, 14.6969, 14.6969, 18.5203, 18.5203],
    [22.6274, 22.6274, 27.0, 31.6228, 31.6228, 36.4829, 36.4829],
    [22.6274, 22.6274, 27.0, 31.6228, 31.6228, 36.4829, 36.4829]]
RESIZE_BICUBIC_2X3 = [
    [1.3329, 3.5708, 7.0558],
    [20.4561, 26.4142, 32.879]]
RESIZE_BICUBIC_5X7 = [
    [-0.6704, -0.4166, 0.1412, 0.9927, 2.0862, 3.5722, 4.3687],
    [2.0181, 2.5808, 3.716, 4.9819, 6.4384, 8.3044, 9.2946],
    [7.7481, 8.8272, 10.9289, 12.8985, 14.9775, 17.4986, 18.8231],
    [17.528, 18.9093, 21.5854, 24.0237, 26.5487, 29.5574, 31.1331],
    [23.3786, 24.9016, 27.8489, 30.5182, 33.2685, 36.5262, 38.2307]]
RESIZE_AREA_2X3 = [
    [3.0984, 5.589, 8.9243],
    [18.7454, 23.8538, 29.3667]]
RESIZE_AREA_5X7 = [
    [0.0, 0.25, 1.0, 1.9142, 2.8284, 4.6042, 5.1961],
    [2.6667, 3.0984, 4.3934, 5.589, 6.7846, 8.9243, 9.6375],
    [8.0, 8.7951, 11.1803, 12.9386, 14.6969, 17.5644, 18.5202],
    [17.7516, 18.7454, 21.7268, 23.8538, 25.9808, 29.3667, 30.4953],
    [22.6274, 23.7206, 27.0, 29.3114, 31.6228, 35.2679, 36.4828]]
CONTRAST_U8 = [
    [0, 105, 255, 47],
    [236, 0, 178, 0],
    [120, 255, 62, 251]]
BRIGHT_U8 = [
    [51, 162, 255, 128],
    [239, 94, 205, 60],
    [171, 255, 137, 248]]
GRAY_U8 = [
    [30, 141, 72, 107],
    [189, 73, 184, 39],
    [150, 81, 116, 198]]
STD_U8 = [
    [-1.5226, -0.0422, 1.4381, -0.4957],
    [0.9847, -0.9491, 0.5312, -1.4026],
    [0.0778, 1.5581, -0.3756, 1.1047]]
RWCP = [
    [0, 0, 111, 222, 77, 0],
    [0, 188, 43, 154, 9, 0]]


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic", "area"])
@pytest.mark.parametrize("size", [(2, 3), (5, 7)])
def test_resize_matches_tf(method, size):
    expected = globals()[f"RESIZE_{method.upper()}_{size[0]}X{size[1]}"]
    out = image.resize(SMALL, size, method=method)
    assert out.shape == (1, *size, 1) and out.dtype == torch.float32
    # tolerance: float32 rounding only (TF 2.21 and these weights agree to ~1e-5 relative)
    np.testing.assert_allclose(out[0, ..., 0].numpy(), expected, atol=1e-3)


def test_resize_dtypes_shapes_and_aspect_ratio():
    assert image.resize(U8, (5, 2), method="nearest").dtype == torch.uint8  # TF: nearest keeps the dtype
    assert image.resize(U8, (5, 2)).dtype == torch.float32
    single = image.resize(U8[0], (6, 8), method=image.ResizeMethod.AREA)
    assert single.shape == (6, 8, 3)
    torch.testing.assert_close(single, image.resize(U8, (6, 8), method="area")[0])
    x = torch.zeros(2, 5, 7, 3)
    # TF 2.21 shapes with preserve_aspect_ratio=True
    assert image.resize(x, (4, 4), preserve_aspect_ratio=True).shape == (2, 3, 4, 3)
    assert image.resize(x, (9, 20), preserve_aspect_ratio=True).shape == (2, 9, 13, 3)
    assert image.resize(torch.zeros(1, 7, 3, 1), (10, 10), preserve_aspect_ratio=True).shape == (1, 10, 4, 1)
    constant = image.resize(torch.full((1, 4, 5, 2), 3.0), (7, 3), method="bicubic")
    torch.testing.assert_close(constant, torch.full((1, 7, 3, 2), 3.0))  # weights sum to one
    with pytest.raises(ValueError, match="lanczos3"):
        image.resize(x, (2, 2), method="lanczos3")
    with pytest.raises(ValueError, match="size"):
        image.resize(x, (2, 0))


def test_flips_and_random_flips():
    assert torch.equal(image.flip_left_right(U8), U8.flip(2))
    assert torch.equal(image.flip_up_down(U8[0]), U8[0].flip(0))
    batch = torch.rand(300, 2, 3, 1)
    flipped = image.random_flip_left_right(batch, seed=4)
    changed = ~(flipped == batch).flatten(1).all(1)
    assert bool(((flipped == batch) | (flipped == batch.flip(2))).all())
    assert 0.38 < changed.float().mean() < 0.62  # each image on its own draw
    assert torch.equal(flipped, image.random_flip_left_right(batch, seed=4))
    up_down = image.random_flip_up_down(batch, seed=5)
    assert bool(((up_down == batch) | (up_down == batch.flip(1))).all())


def test_crops_and_pads():
    x = torch.zeros(9, 13, 1)
    # TF 2.21 shapes of central_crop
    for fraction, shape in [(0.5, (5, 7, 1)), (0.3, (3, 5, 1)), (0.9, (9, 13, 1)), (1.0, (9, 13, 1)),
                            (0.75, (7, 11, 1))]:
        assert image.central_crop(x, fraction).shape == shape
    grid = torch.arange(35).reshape(5, 7, 1)
    assert torch.equal(image.central_crop(grid, 0.5), grid[1:4, 1:6])
    assert torch.equal(image.crop_to_bounding_box(grid, 1, 2, 3, 4), grid[1:4, 2:6])
    padded = image.pad_to_bounding_box(torch.ones(2, 2, 1), 1, 2, 4, 5)
    assert padded[..., 0].tolist() == [[0, 0, 0, 0, 0], [0, 0, 1, 1, 0], [0, 0, 1, 1, 0], [0, 0, 0, 0, 0]]  # TF 2.21
    assert image.resize_with_crop_or_pad(U8, 2, 6)[0, ..., 0].tolist() == RWCP
    with pytest.raises(ValueError, match="does not fit"):
        image.crop_to_bounding_box(grid, 3, 0, 3, 2)
    with pytest.raises(ValueError, match="does not fit"):
        image.pad_to_bounding_box(grid, 0, 0, 4, 7)
    with pytest.raises(ValueError, match="central_fraction"):
        image.central_crop(grid, 0.0)


def test_colour_ops_match_tf_on_uint8():
    contrast = image.adjust_contrast(U8, 1.7)
    assert contrast.dtype == torch.uint8 and contrast[0, ..., 0].tolist() == CONTRAST_U8
    assert image.adjust_brightness(U8, 0.2)[0, ..., 0].tolist() == BRIGHT_U8
    gray = image.rgb_to_grayscale(U8)
    assert gray.shape == (2, 3, 4, 1) and gray[0, ..., 0].tolist() == GRAY_U8
    std = image.per_image_standardization(U8)
    assert std.dtype == torch.float32
    np.testing.assert_allclose(std[0, ..., 0].numpy(), STD_U8, atol=1e-4)
    flat = image.per_image_standardization(torch.ones(2, 2, 1))
    assert torch.equal(flat, torch.zeros(2, 2, 1))  # stddev floored at 1/sqrt(N)


def test_float_colour_ops_and_random_ones():
    x = torch.rand(2, 3, 4, 3)
    mean = x.mean(dim=(1, 2), keepdim=True)
    torch.testing.assert_close(image.adjust_contrast(x, 0.5), (x - mean) * 0.5 + mean)
    torch.testing.assert_close(image.adjust_brightness(x, -0.25), x - 0.25)
    delta = image.random_brightness(x, 0.3, seed=1) - x
    assert torch.allclose(delta, delta.flatten()[0].expand_as(delta)) and abs(float(delta.flatten()[0])) <= 0.3
    factors = []
    for seed in range(40):
        out = image.random_contrast(x, 0.2, 0.6, seed=seed)
        factors.append(float(((out - mean) / (x - mean)).median()))
    assert min(factors) >= 0.2 - 1e-4 and max(factors) <= 0.6 + 1e-4 and max(factors) - min(factors) > 0.2
    with pytest.raises(ValueError, match="lower"):
        image.random_contrast(x, 0.5, 0.5)


def test_convert_image_dtype_matches_tf():
    floats = torch.tensor([-0.1, 0, 0.2, 0.5, 0.999, 1.0, 1.2])
    # TF 2.21: float -> int scales by MAX + 0.5 and casts (wrapping without saturate)
    assert image.convert_image_dtype(floats, torch.uint8).tolist() == [231, 0, 51, 127, 255, 255, 50]
    assert image.convert_image_dtype(floats, torch.uint8, saturate=True).tolist() == [0, 0, 51, 127, 255, 255, 255]
    assert image.convert_image_dtype(floats, "int16", saturate=True).tolist() == [-3276, 0, 6553, 16383, 32734,
                                                                                  32767, 32767]
    ints = torch.tensor([0, 1, 128, 255], dtype=torch.uint8)
    torch.testing.assert_close(image.convert_image_dtype(ints, torch.float32), ints.float() / 255)
    assert image.convert_image_dtype(ints, torch.int32).tolist() == [0, 8388608, 1073741824, 2139095040]  # TF 2.21
    big = torch.tensor([0, 2 ** 24, 2 ** 31 - 1], dtype=torch.int32)
    assert image.convert_image_dtype(big, torch.uint8).tolist() == [0, 2, 255]  # TF 2.21


def test_png_round_trip_and_channels():
    picture = U8[0]
    encoded = image.encode_png(picture)
    assert encoded[:8] == b"\x89PNG\r\n\x1a\n"
    assert torch.equal(image.decode_png(encoded), picture)
    wrapped = np.empty((), dtype=object)
    wrapped[()] = encoded  # a scalar string as tf.data yields it
    assert torch.equal(image.decode_png(wrapped), picture)
    rgba = image.decode_png(encoded, channels=4)
    assert rgba.shape == (3, 4, 4) and torch.all(rgba[..., 3] == 255) and torch.equal(rgba[..., :3], picture)
    assert image.decode_png(encoded, channels=1).shape == (3, 4, 1)
    deep = torch.tensor([[[0], [65535]], [[300], [7]]], dtype=torch.int32).to(torch.uint16)
    back = image.decode_png(image.encode_png(deep), dtype=torch.uint16)
    assert back.dtype == torch.uint16 and back[..., 0].to(torch.int32).tolist() == [[0, 65535], [300, 7]]
    gray = image.decode_png(image.encode_png(picture[..., :1]))
    assert gray.shape == (3, 4, 1) and torch.equal(gray, picture[..., :1])
    with pytest.raises(ValueError, match="not a decodable image"):
        image.decode_png(b"not a png")
    with pytest.raises(ValueError, match="uint8"):
        image.encode_png(picture.float())


def test_jpeg_round_trip_is_close():
    smooth = torch.from_numpy(np.tile(np.linspace(0, 255, 32, dtype=np.uint8)[None, :, None], (16, 1, 3)).copy())
    decoded = image.decode_jpeg(image.encode_jpeg(smooth, quality=95))
    assert decoded.shape == smooth.shape and decoded.dtype == torch.uint8
    assert (decoded.int() - smooth.int()).abs().max() <= 8
    as_float = image.decode_image(image.encode_png(U8[0]), dtype=torch.float32)
    torch.testing.assert_close(as_float, U8[0].float() / 255)
