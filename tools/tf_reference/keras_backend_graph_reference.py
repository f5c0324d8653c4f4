"""Freezes the legacy keras.backend helpers added with graph.py (get_uid, map_fn, foldl/foldr, paddings,
resize_images/volumes, random variables' dtypes) (run under the TF reference env, TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_backend_graph_reference.py
-> tests/keras/keras_backend_graph_reference.json"""
import json
import os

import numpy as np
import tensorflow as tf

K = tf.keras.backend


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


def arr(x):
    a = np.asarray(x)
    return {"value": a.tolist(), "dtype": str(a.dtype)}


X3 = np.arange(12, dtype="float32").reshape(2, 3, 2)
X4 = np.arange(2 * 3 * 2 * 2, dtype="float32").reshape(2, 3, 2, 2)
X5 = np.arange(2 * 2 * 2 * 1 * 2, dtype="float32").reshape(2, 2, 2, 1, 2)
K.clear_session()
tf.keras.layers.Dense(2)
out = {"tf_version": tf.__version__, "uids": [K.get_uid("dense"), K.get_uid("dense"), K.get_uid("zzz"), K.get_uid()],
       "map_fn": arr(K.map_fn(lambda r: r * 2 + 1, tf.constant(X3))),
       "foldl": arr(K.foldl(lambda a, r: a + r, tf.constant(X3))),
       "foldr": arr(K.foldr(lambda a, r: a * 2 - r, tf.constant(X3), initializer=tf.zeros((3, 2)))),
       "temporal": arr(K.temporal_padding(X3, (1, 2))),
       "spatial2d_last": arr(K.spatial_2d_padding(X4, ((1, 0), (0, 2)), data_format="channels_last")),
       "spatial2d_first": arr(K.spatial_2d_padding(X4, ((0, 1), (1, 1)), data_format="channels_first")),
       "spatial3d": arr(K.spatial_3d_padding(X5, ((1, 0), (0, 1), (1, 1)), data_format="channels_last")),
       "resize_nearest": arr(K.resize_images(tf.constant(X4), 2, 3, "channels_last")),
       "resize_bilinear_first": arr(K.resize_images(tf.constant(X4), 2, 1, "channels_first", interpolation="bilinear")),
       "resize_volumes": arr(K.resize_volumes(tf.constant(X5), 2, 1, 3, "channels_last")),
       "normal_var_dtype": K.dtype(K.random_normal_variable((3, 4), 0.0, 1.0, seed=1)),
       "uniform_var_dtype": K.dtype(K.random_uniform_variable((3, 4), -1.0, 1.0, dtype="float64", seed=1)),
       "errors": {"temporal": raises(lambda: K.temporal_padding(X3, (1, 2, 3))),
                  "spatial2d": raises(lambda: K.spatial_2d_padding(X4, ((1, 1),))),
                  "spatial3d": raises(lambda: K.spatial_3d_padding(X5, ((1, 1),))),
                  "format": raises(lambda: K.spatial_2d_padding(X4, data_format="nchw")),
                  "resize_format": raises(lambda: K.resize_images(tf.constant(X4), 2, 2, "nchw")),
                  "resize_interp": raises(lambda: K.resize_images(tf.constant(X4), 2, 2, "channels_last", "cubic"))}}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_backend_graph_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
