"""tf.image's BMP / GIF / WebP decoders, JPEG sniffing, header shape and decode_and_crop_jpeg (files made by Pillow)."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import torchstrategy as tf

PIXELS = (np.arange(6 * 5 * 3).reshape(6, 5, 3) * 3 % 256).astype(np.uint8)


def encoded(fmt, array=PIXELS, **options):
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format=fmt, **options)
    return buffer.getvalue()


def test_bmp_and_webp_decode_to_the_pixels():
    np.testing.assert_array_equal(tf.image.decode_bmp(encoded("BMP")).numpy(), PIXELS)
    np.testing.assert_array_equal(tf.image.decode_webp(encoded("WEBP", lossless=True)).numpy(), PIXELS)
    with pytest.raises(ValueError, match="not a BMP"):
        tf.image.decode_bmp(encoded("PNG"))


def test_gif_decodes_every_frame():
    frames = [Image.fromarray(np.full((4, 3, 3), value, np.uint8)) for value in (0, 255)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:])
    decoded = tf.image.decode_gif(buffer.getvalue()).numpy()
    assert decoded.shape == (2, 4, 3, 3) and decoded[0].max() == 0 and decoded[1].min() == 255


def test_jpeg_sniffing_shape_and_crop():
    jpeg = encoded("JPEG", quality=95)
    assert bool(tf.image.is_jpeg(jpeg)) and not bool(tf.image.is_jpeg(encoded("PNG")))
    assert tf.image.extract_jpeg_shape(jpeg).tolist() == [6, 5, 3]
    full = tf.image.decode_jpeg(jpeg).numpy()
    crop = tf.image.decode_and_crop_jpeg(jpeg, [1, 2, 3, 2]).numpy()
    np.testing.assert_array_equal(crop, full[1:4, 2:4])
    with pytest.raises(ValueError, match="not inside"):
        tf.image.decode_and_crop_jpeg(jpeg, [4, 0, 3, 2])
