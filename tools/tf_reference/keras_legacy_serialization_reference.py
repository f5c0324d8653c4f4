"""Freezes keras.legacy.saving's (Keras 2 style) serialized forms and messages (run under the TF reference env,
TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_legacy_serialization_reference.py
-> tests/keras/keras_legacy_serialization_reference.json"""
import copy
import json
import os

import keras

legacy = keras.legacy.saving


@keras.saving.register_keras_serializable(package="Ref")
class Holder:
    def __init__(self, init, fn="relu", label="x", size=3):
        self.init, self.fn, self.label, self.size = init, fn, label, size

    def get_config(self):
        return {"init": self.init, "fn": self.fn, "label": self.label, "size": self.size}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


holder = Holder(keras.initializers.RandomNormal(mean=1.0, stddev=2.0, seed=3), fn=keras.activations.relu)
out = {"keras_version": keras.__version__,
       "initializer": legacy.serialize_keras_object(keras.initializers.RandomNormal(mean=1.0, stddev=2.0, seed=3)),
       "regularizer": legacy.serialize_keras_object(keras.regularizers.L1L2(l1=0.5, l2=0.25)),
       "function": legacy.serialize_keras_object(keras.activations.relu),
       "none": legacy.serialize_keras_object(None),
       "holder": legacy.serialize_keras_object(holder)}
back = legacy.deserialize_keras_object(copy.deepcopy(out["holder"]), custom_objects={"RandomNormal": keras.initializers.RandomNormal})
out["holder_back"] = {"type": type(back).__name__, "init": type(back.init).__name__,
                      "init_config": back.init.get_config(), "fn": repr(back.fn), "size": back.size}
objects = {"RandomNormal": keras.initializers.RandomNormal, "relu": keras.activations.relu}
out["by_name_class"] = raises(lambda: legacy.deserialize_keras_object("RandomNormal", module_objects=objects))
out["errors"] = {
    "unknown_name": raises(lambda: legacy.deserialize_keras_object("Nope", module_objects=objects,
                                                                    printable_module_name="initializer")),
    "unknown_class": raises(lambda: legacy.deserialize_keras_object({"class_name": "Nope", "config": {}},
                                                                     module_objects=objects)),
    "bad_format": raises(lambda: legacy.deserialize_keras_object({"config": {}})),
    "bad_type": raises(lambda: legacy.deserialize_keras_object(3)),
    "no_config": raises(lambda: legacy.serialize_keras_object(3)),
}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras",
                    "keras_legacy_serialization_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
