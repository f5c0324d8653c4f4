"""Writes tests/image/jpeg_reference.json: JPEG files TF 2.21 encoded (with each encode_jpeg option) and
TF's decode_jpeg pixels of them (channels, ratio, INTEGER_ACCURATE). Run with /work/tf-venv; not a test."""
import base64
import json
import os

import numpy as np
import tensorflow as tf


def picture(height, width, seed):
    """A smooth gradient plus noise, so that the codec has real detail to keep and lose."""
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(x * 9) % 256, (y * 12) % 256, ((x + y) * 5) % 256], -1)
    noise = np.random.default_rng(seed).integers(0, 40, base.shape)
    return (base + noise).clip(0, 255).astype(np.uint8)


def b64(data):
    return base64.b64encode(data).decode()


out = {"encoded": {}, "decoded": {}}
image = picture(20, 27, 0)
out["image"] = image.tolist()
rgb = tf.io.encode_jpeg(image, quality=90).numpy()
gray = tf.io.encode_jpeg(image[..., :1], quality=90).numpy()
out["rgb_jpeg"], out["gray_jpeg"] = b64(rgb), b64(gray)
for ratio in (1, 2, 4, 8):
    out["decoded"][f"rgb_ratio{ratio}"] = tf.io.decode_jpeg(rgb, ratio=ratio, dct_method="INTEGER_ACCURATE").numpy().tolist()
    out["decoded"][f"gray1_ratio{ratio}"] = tf.io.decode_jpeg(rgb, channels=1, ratio=ratio,
                                                             dct_method="INTEGER_ACCURATE").numpy().tolist()
out["decoded"]["gray_as_rgb"] = tf.io.decode_jpeg(gray, channels=3, dct_method="INTEGER_ACCURATE").numpy().tolist()
out["decoded"]["gray_as_stored"] = tf.io.decode_jpeg(gray, dct_method="INTEGER_ACCURATE").numpy().tolist()
cases = {"default": {}, "quality50": {"quality": 50}, "quality0": {"quality": 0}, "progressive": {"progressive": True},
         "optimize_size": {"optimize_size": True}, "no_chroma_downsampling": {"chroma_downsampling": False},
         "density": {"x_density": 72, "y_density": 96}, "density_cm": {"density_unit": "cm", "x_density": 118},
         "xmp": {"xmp_metadata": "<x:xmpmeta xmlns:x='adobe:ns:meta/'/>"}, "format_rgb": {"format": "rgb"}}
for key, options in cases.items():
    out["encoded"][key] = {"options": options, "bytes": b64(tf.io.encode_jpeg(image, **options).numpy())}
out["encoded"]["gray_format_grayscale"] = {"options": {"format": "grayscale"}, "channel0_only": True,
                                           "bytes": b64(tf.io.encode_jpeg(image[..., :1], format="grayscale").numpy())}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "image", "jpeg_reference.json")
with open(path, "w") as handle:
    json.dump(out, handle, separators=(",", ":"))
