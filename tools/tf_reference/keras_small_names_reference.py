"""Freezes the small Keras 3.15 names added with issue 22's last batch (OrthogonalRegularizer, threshold,
aliases, keras.name_scope's checks) (run under the TF reference env, TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_small_names_reference.py -> tests/keras/keras_small_names_reference.json"""
import json
import os

import tensorflow as tf

keras = tf.keras
import numpy as np

W = np.array([[1.0, 2.0, 0.5], [-1.0, 0.3, 2.0], [0.2, 0.1, -0.7], [1.5, -1.0, 0.0]], dtype="float32")


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


R = keras.regularizers
out = {"keras_version": keras.version(), "tf_version": tf.__version__, "W": W.tolist(),
       "orth_rows": float(R.OrthogonalRegularizer(factor=0.3)(keras.ops.convert_to_tensor(W))),
       "orth_columns": float(R.OrthogonalRegularizer(factor=0.05, mode="columns")(keras.ops.convert_to_tensor(W))),
       "orth_config": R.OrthogonalRegularizer(factor=0.3).get_config(),
       "orth_serialized": R.serialize(R.OrthogonalRegularizer(factor=0.3)),
       "orth_errors": {"mode": raises(lambda: R.OrthogonalRegularizer(mode="diag")),
                       "factor": raises(lambda: R.OrthogonalRegularizer(factor=-1)),
                       "rank": raises(lambda: R.OrthogonalRegularizer()(keras.ops.convert_to_tensor(W[0])))},
       "threshold": np.asarray(keras.activations.threshold(W, 0.25, -9.0)).tolist(),
       "logcosh": np.asarray(keras.losses.logcosh(W[:2], W[2:])).tolist(),
       "metrics_logcosh": np.asarray(keras.metrics.logcosh(W[:2], W[2:])).tolist(),
       "kld": np.asarray(keras.metrics.kullback_leibler_divergence(np.abs(W[:2]), np.abs(W[2:]))).tolist(),
       "name_scope_slash": raises(lambda: keras.name_scope("a/b")),
       "identity_is": keras.initializers.IdentityInitializer is keras.initializers.Identity,
       "float_policy": keras.FloatDTypePolicy("mixed_float16").compute_dtype}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_small_names_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
