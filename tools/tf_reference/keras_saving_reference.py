"""Freezes what Keras's serialize_keras_object writes for a few objects (run under the TF reference env):
/work/tf-venv/bin/python tools/tf_reference/keras_saving_reference.py -> tests/keras/keras_saving_reference.json"""
import json
import os

import keras
import numpy as np


@keras.saving.register_keras_serializable(package="demo")
class Scale(keras.layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


@keras.saving.register_keras_serializable(package="demo", name="twice")
def twice(x):
    return 2 * x


S = keras.saving.serialize_keras_object
out = {
    "keras_version": keras.__version__,
    "function": S(keras.losses.mean_squared_error),
    "activation": S(keras.activations.relu),
    "registered_function": S(twice),
    "numpy": S(np.array([[1, 2], [3, 4]], dtype="float32")),
    "nested": S({"a": [1, 2.5, "x", None], "b": (1, 2), "c": b"hi", "d": slice(1, 5, None)}),
    "loss": S(keras.losses.Huber(delta=2.0)),
    "regularizer": S(keras.regularizers.L2(0.25)),
    "registered_name_scale": keras.saving.get_registered_name(Scale),
    "registered_name_twice": keras.saving.get_registered_name(twice),
    "registered_name_plain": keras.saving.get_registered_name(keras.layers.Dense),
    "custom_keys": sorted(k for k in keras.saving.get_custom_objects() if k.startswith("demo>")),
}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_saving_reference.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print(json.dumps(out, indent=1)[:3000])
