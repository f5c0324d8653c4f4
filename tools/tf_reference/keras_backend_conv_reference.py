"""Freezes the legacy keras.backend convolutions, pooling and batch_normalization (run under the TF reference
env, TF 2.21 / Keras 3.15; channels_first runs on CPU there, so those cases go through Keras's own transposes):
/work/tf-venv/bin/python tools/tf_reference/keras_backend_conv_reference.py -> tests/keras/keras_backend_conv_reference.json"""
import json
import os

import numpy as np
import tensorflow as tf

K = tf.keras.backend
rng = np.random.default_rng(5)


def r(*shape):
    return rng.normal(size=shape).astype("float32")


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


inputs = {"x1": r(2, 9, 3), "k1": r(3, 3, 4), "x2": r(2, 7, 6, 3), "k2": r(3, 2, 3, 4), "x3": r(1, 5, 4, 6, 2),
          "k3": r(2, 2, 3, 2, 3), "kt": r(3, 3, 5, 3), "dw": r(3, 3, 3, 2), "pw": r(1, 1, 6, 4),
          "m": r(3), "v": np.abs(r(3)), "b": r(3), "g": r(3)}
T = {k: tf.constant(v) for k, v in inputs.items()}
nchw = lambda a: tf.transpose(a, (0, 3, 1, 2))  # noqa: E731
cases = {
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
out = {"tf_version": tf.__version__, "inputs": {k: v.tolist() for k, v in inputs.items()},
       "cases": {k: np.asarray(f()).tolist() for k, f in cases.items()}}
out["errors"] = {"padding": raises(lambda: K.conv2d(T["x2"], T["k2"], padding="full")),
                 "format": raises(lambda: K.conv2d(T["x2"], T["k2"], data_format="nhwc")),
                 "pool_size": raises(lambda: K.pool2d(T["x2"], (2,))),
                 "pool_strides": raises(lambda: K.pool2d(T["x2"], (2, 2), strides=(1,))),
                 "pool_mode": raises(lambda: K.pool2d(T["x2"], (2, 2), pool_mode="min"))}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_backend_conv_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
