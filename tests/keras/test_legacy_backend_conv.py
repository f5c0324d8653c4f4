"""The legacy keras.backend convolutions, pooling and batch_normalization against TF 2.21 / Keras 3.15 numbers
frozen in keras_backend_conv_reference.json by tools/tf_reference/keras_backend_conv_reference.py;
channels_first (which TF's CPU kernels refuse) is checked against our channels_last results."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

K = tf.keras.backend
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_backend_conv_reference.json")))
T = {k: torch.tensor(np.asarray(v, dtype="float32")) for k, v in REF["inputs"].items()}
CASES = {
    "conv1d_valid": lambda: K.conv1d(T["x1"], T["k1"]),
    "conv1d_same_s2": lambda: K.conv1d(T["x1"], T["k1"], strides=2, padding="same"),
    "conv1d_causal_d2": lambda: K.conv1d(T["x1"], T["k1"], padding="causal", dilation_rate=2),
    "conv2d_valid": lambda: K.conv2d(T["x2"], T["k2"]),
    "conv2d_same_s2": lambda: K.conv2d(T["x2"], T["k2"], strides=(2, 2), padding="same"),
    "conv2d_dilated": lambda: K.conv2d(T["x2"], T["k2"], dilation_rate=(2, 1)),
    "conv3d_same": lambda: K.conv3d(T["x3"], T["k3"], padding="same"),
    "conv2d_transpose": lambda: K.conv2d_transpose(T["x2"], T["kt"], (2, 15, 13, 5), strides=(2, 2)),
    "conv2d_transpose_same": lambda: K.conv2d_transpose(T["x2"], T["kt"], (None, 14, 12, 5), strides=(2, 2),
                                                         padding="same"),
    "depthwise": lambda: K.depthwise_conv2d(T["x2"], T["dw"], padding="same"),
    "separable": lambda: K.separable_conv2d(T["x2"], T["dw"], T["pw"], strides=(2, 2)),
    "pool_max": lambda: K.pool2d(T["x2"], (2, 2), strides=(2, 2)),
    "pool_avg_same": lambda: K.pool2d(T["x2"], (3, 2), padding="same", pool_mode="avg"),
    "pool3d_avg": lambda: K.pool3d(T["x3"], (2, 2, 2), strides=(1, 2, 2), pool_mode="avg"),
    "batch_norm": lambda: K.batch_normalization(T["x2"], T["m"], T["v"], T["b"], T["g"], epsilon=0.01),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_matches_tf(key):
    got = torch.as_tensor(CASES[key]()).numpy()
    np.testing.assert_allclose(got, np.asarray(REF["cases"][key], dtype="float32"), rtol=1e-5, atol=1e-5)


def test_channels_first_is_the_transposed_channels_last():
    x = T["x2"].permute(0, 3, 1, 2)
    first = K.conv2d(x, T["k2"], strides=(2, 2), padding="same", data_format="channels_first")
    last = K.conv2d(T["x2"], T["k2"], strides=(2, 2), padding="same", data_format="channels_last")
    torch.testing.assert_close(first, last.permute(0, 3, 1, 2))
    pooled = K.pool2d(x, (2, 2), strides=(2, 2), data_format="channels_first")
    torch.testing.assert_close(pooled, K.pool2d(T["x2"], (2, 2), strides=(2, 2)).permute(0, 3, 1, 2))
    up = K.conv2d_transpose(x, T["kt"], (2, 5, 15, 13), strides=(2, 2), data_format="channels_first")
    torch.testing.assert_close(up, CASES["conv2d_transpose"]().permute(0, 3, 1, 2))


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return {"raises": type(info.value).__name__, "message": str(info.value)}


def test_errors_match_keras():
    errors = REF["errors"]
    assert _message(lambda: K.conv2d(T["x2"], T["k2"], padding="full")) == errors["padding"]
    assert _message(lambda: K.conv2d(T["x2"], T["k2"], data_format="nhwc")) == errors["format"]
    assert _message(lambda: K.pool2d(T["x2"], (2,))) == errors["pool_size"]
    assert _message(lambda: K.pool2d(T["x2"], (2, 2), strides=(1,))) == errors["pool_strides"]
    assert _message(lambda: K.pool2d(T["x2"], (2, 2), pool_mode="min")) == errors["pool_mode"]
