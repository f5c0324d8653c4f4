"""TF 2.21's tf.quantization numbers (quantization_reference.json, from tools/tf_reference/quantization_reference.py)."""
from __future__ import annotations

import json
import os

import numpy as np

with open(os.path.join(os.path.dirname(__file__), "quantization_reference.json"), encoding="utf-8") as _handle:
    REF = json.load(_handle)

X = np.array(REF["x"], np.float32)  # the inputs every case used
GRADS = np.arange(12, dtype=np.float32) + 1
MATRIX = X.reshape(4, 3)
CHANNEL_MINS = np.array([-1.0, -0.5, 0.2], np.float32)
CHANNEL_MAXES = np.array([1.0, 6.0, 3.0], np.float32)


def exactly(actual, key_or_value) -> None:
    """`actual` equals TF's float32 numbers bit for bit (TF's kernels are reproduced, not approximated)."""
    want = REF[key_or_value] if isinstance(key_or_value, str) else key_or_value
    got = np.asarray(actual.detach().numpy() if hasattr(actual, "detach") else actual)
    np.testing.assert_array_equal(got.astype(np.float32), np.asarray(want, np.float32))
