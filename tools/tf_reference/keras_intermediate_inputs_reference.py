"""Freezes how Keras 3.15 builds a functional model whose inputs are intermediate tensors of another model
(run under the TF reference env, TF 2.21): /work/tf-venv/bin/python
tools/tf_reference/keras_intermediate_inputs_reference.py -> tests/keras/keras_intermediate_inputs_reference.json"""
import json
import os

import tensorflow as tf

k = tf.keras
inp = k.Input((4,), name="x")
h = k.layers.Dense(6, activation="relu", name="h")(inp)
h2 = k.layers.Dense(5, name="h2")(h)
out = k.layers.Add(name="add")([k.layers.Dense(5, name="side")(h), h2])
full = k.Model(inp, out)
sub = k.Model(full.get_layer("h").output, full.get_layer("add").output, name="head")
two = k.Model([inp, full.get_layer("h").output], [full.get_layer("h2").output, full.get_layer("add").output])
cfg = sub.get_config()
out = {"tf_version": tf.__version__, "sub_layers": [layer.name for layer in sub.layers],
       "sub_input_layers": cfg["input_layers"], "sub_output_layers": cfg["output_layers"],
       "sub_inputs": [list(t.shape) for t in sub.inputs], "two_layers": [layer.name for layer in two.layers],
       "two_input_layers": two.get_config()["input_layers"], "n_weights": len(sub.weights),
       "shares": sub.get_layer("h2") is full.get_layer("h2"),
       "config_layer_classes": [entry["class_name"] for entry in cfg["layers"]]}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras",
                    "keras_intermediate_inputs_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
