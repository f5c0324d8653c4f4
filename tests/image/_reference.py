"""TF 2.21's tf.image numbers (image_reference.json, from tools/tf_reference/image_reference.py) and the input
pattern that script used."""
from __future__ import annotations

import json
import os

import numpy as np

with open(os.path.join(os.path.dirname(__file__), "image_reference.json")) as _handle:
    _REF = json.load(_handle)


def ref(key: str) -> np.ndarray:
    return np.asarray(_REF[key])


def pattern(shape, k=0.0) -> np.ndarray:
    size = int(np.prod(shape))
    return ((np.sin(np.arange(size) * 0.731 + k) + 1.0) / 2.0).reshape(shape).astype(np.float32)


def rgb() -> np.ndarray:
    image = pattern((2, 3, 4, 3))
    image[0, 0, 0] = [0.5, 0.5, 0.5]
    image[0, 0, 1] = [0.0, 0.0, 0.0]
    return image


def close(actual, expected, atol=1e-6) -> None:
    actual = actual.numpy() if hasattr(actual, "numpy") else np.asarray(actual)
    assert actual.shape == np.asarray(expected).shape, (actual.shape, np.asarray(expected).shape)
    np.testing.assert_allclose(actual, expected, atol=atol, rtol=0)
