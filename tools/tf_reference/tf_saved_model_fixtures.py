"""Writes the TF-written SavedModel fixtures of tests/formats/test_tf_saved_model.py with TF 2.21 (tensorflow-cpu
2.21.0, Keras 3.15). Run: /work/tf-venv/bin/python tools/tf_reference/tf_saved_model_fixtures.py

tf_module_sm/: tf.saved_model.save of a tf.Module holding a trainable float32 Variable and a non-trainable one,
with a tf.function __call__ (input_signature [None, 3] named 'x', returns {'y': ...}) as its serving signature.
tf_keras_sm/: a two-Dense Sequential exported with model.export (endpoint 'serve'). expected.json beside them:
what tf.saved_model.load shows (attribute names, variables, signatures and their specs), outputs on a sample, and
what tf.train.Checkpoint(...).restore of variables/variables does with Checkpoint(model=m) and Checkpoint(m)."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import tensorflow as tf
import keras

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "formats", "fixtures")


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="w")
        self.b = tf.Variable([0.5, -0.5], name="b", trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        return {"y": tf.matmul(x, self.w) + self.b}


def _spec(spec):
    return {"shape": spec.shape.as_list(), "dtype": spec.dtype.name, "name": spec.name}


def _describe(loaded):
    public = sorted(a for a in dir(loaded) if not a.startswith("_"))
    variables = {}
    for attr in ("variables", "trainable_variables", "non_trainable_variables"):
        if hasattr(loaded, attr):
            variables[attr] = [v.name for v in getattr(loaded, attr)]
    signatures = {}
    for key, function in loaded.signatures.items():
        args, kwargs = function.structured_input_signature
        signatures[key] = {"inputs": {k: _spec(s) for k, s in kwargs.items()},
                           "outputs": {k: _spec(s) for k, s in function.structured_outputs.items()}}
    return {"public": public, "variables": variables, "signatures": signatures}


def main() -> None:
    expected = {}
    x = np.array([[1.0, 0.0, -1.0], [0.5, 2.0, 3.0]], np.float32)
    folder = os.path.join(OUT, "tf_module_sm")
    shutil.rmtree(folder, ignore_errors=True)
    net = Net()
    tf.saved_model.save(net, folder, signatures=net.__call__)
    loaded = tf.saved_model.load(folder)
    module = _describe(loaded)
    module["attributes"] = {name: {"name": v.name, "shape": v.shape.as_list(), "dtype": v.dtype.name,
                                   "trainable": v.trainable, "value": v.numpy().tolist()}
                            for name, v in (("w", loaded.w), ("b", loaded.b))}
    module["x"] = x.tolist()
    module["y"] = loaded.signatures["serving_default"](x=x)["y"].numpy().tolist()
    fresh = Net()
    fresh.w.assign(tf.zeros([3, 2]))
    tf.train.Checkpoint(model=fresh).restore(os.path.join(folder, "variables", "variables"))
    module["restore_model_kwarg_w"] = fresh.w.numpy().tolist()
    fresh = Net()
    fresh.w.assign(tf.zeros([3, 2]))
    fresh.b.assign(tf.zeros([2]))
    tf.train.Checkpoint(fresh).restore(os.path.join(folder, "variables", "variables"))
    module["restore_root_w"], module["restore_root_b"] = fresh.w.numpy().tolist(), fresh.b.numpy().tolist()
    expected["tf_module_sm"] = module

    folder = os.path.join(OUT, "tf_keras_sm")
    shutil.rmtree(folder, ignore_errors=True)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="d1"), keras.layers.Dense(2, name="d2")])
    model.export(folder)
    loaded = tf.saved_model.load(folder)
    exported = _describe(loaded)
    exported["values"] = [v.numpy().tolist() for v in loaded.variables]
    exported["shapes"] = [v.shape.as_list() for v in loaded.variables]
    kx = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    exported["x"] = kx.tolist()
    exported["y"] = model(kx).numpy().tolist()
    try:
        keras.models.load_model(folder)
    except ValueError as error:
        exported["load_model_error"] = str(error).replace(folder, "<dir>")
    expected["tf_keras_sm"] = exported
    with open(os.path.join(OUT, "tf_saved_model_expected.json"), "w") as handle:
        json.dump(expected, handle, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
