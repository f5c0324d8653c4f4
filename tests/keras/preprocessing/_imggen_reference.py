"""Loads the Keras 3.15 numbers frozen by tools/tf_reference/keras_imggen_reference.py and re-creates the
inputs that script wrote (the same `pattern` values, image folder and WAV clips), for the imggen tests."""
from __future__ import annotations

import json
import os
import pathlib

import numpy as np

REFERENCE = json.loads((pathlib.Path(__file__).parent / "keras_imggen_reference.json").read_text())


def pattern(shape, offset=0.0, low=0.0, high=255.0):
    """Deterministic values in [low, high]: a sine of the flat index, mapped linearly (as the script)."""
    n = int(np.prod(shape))
    unit = (np.sin(np.arange(n, dtype=np.float64) * 0.731 + 0.37 + offset) + 1) / 2
    return (low + unit * (high - low)).reshape(shape).astype(np.float32)


def write_images(root) -> None:
    """a/ (3 PNGs, one in a subfolder, plus a .txt) and b/ (2 PNGs), sizes 6x8 / 8x6, as the script wrote."""
    from PIL import Image

    for klass, count in (("a", 3), ("b", 2)):
        os.makedirs(os.path.join(root, klass, "sub"), exist_ok=True)
        for i in range(count):
            h, w = (6, 8) if i % 2 == 0 else (8, 6)
            pixels = np.round(pattern((h, w, 3), offset=10 * i + (0 if klass == "a" else 100))).astype(np.uint8)
            folder = os.path.join(root, klass, "sub" if i == 2 else "")
            Image.fromarray(pixels, "RGB").save(os.path.join(folder, f"img{i}.png"))
    with open(os.path.join(root, "a", "notes.txt"), "w") as handle:
        handle.write("not an image")


def write_wavs(root) -> None:
    """down/ (clips of 5, 9, 7 samples) and up/ (6, 8), 2 channels at 16 kHz, written with tf.audio.encode_wav."""
    import torchstrategy as tf

    for klass, sizes in {"down": (5, 9, 7), "up": (6, 8)}.items():
        os.makedirs(os.path.join(root, klass), exist_ok=True)
        for i, n in enumerate(sizes):
            samples = pattern((n, 2), offset=3 * i + len(klass), low=-0.9, high=0.9)
            with open(os.path.join(root, klass, f"clip{i}.wav"), "wb") as handle:
                handle.write(tf.audio.encode_wav(samples, 16000))
