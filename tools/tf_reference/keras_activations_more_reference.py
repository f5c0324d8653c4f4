"""Freezes Keras 3's further activations (celu ... tanh_shrink) on fixed inputs (run under the TF reference env,
TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_activations_more_reference.py
-> tests/keras/keras_activations_more_reference.json"""
import json
import os

import keras
import numpy as np

X = np.array([[-3.0, -1.2, -0.5, -0.1, 0.0], [0.3, 0.5, 0.9, 1.7, 4.0]], dtype="float32")
A = keras.activations
cases = {"celu": (A.celu, {}), "celu_alpha": (A.celu, {"alpha": 0.5}), "glu": (A.glu, {"axis": 0}),
         "hard_shrink": (A.hard_shrink, {}), "hard_shrink_t": (A.hard_shrink, {"threshold": 1.0}),
         "hard_tanh": (A.hard_tanh, {}), "log_sigmoid": (A.log_sigmoid, {}), "soft_shrink": (A.soft_shrink, {}),
         "sparse_plus": (A.sparse_plus, {}), "sparse_sigmoid": (A.sparse_sigmoid, {}),
         "sparsemax": (A.sparsemax, {}), "sparsemax_0": (A.sparsemax, {"axis": 0}),
         "squareplus": (A.squareplus, {}), "squareplus_b": (A.squareplus, {"b": 1}), "tanh_shrink": (A.tanh_shrink, {})}
out = {"keras_version": keras.__version__, "x": X.tolist(),
       "cases": {k: {"kwargs": kw, "y": np.asarray(fn(X, **kw)).tolist()} for k, (fn, kw) in cases.items()},
       "names": {k: A.serialize(fn) for k, (fn, _) in cases.items()},
       "get": {name: A.get(name).__name__ for name in ("celu", "glu", "sparsemax", "tanh_shrink", "log_sigmoid")}}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_activations_more_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
