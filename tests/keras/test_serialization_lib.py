"""serialize_keras_object / deserialize_keras_object: Keras 3.15.1's layout (frozen by
tools/tf_reference/keras_saving_reference.py) for functions, arrays, nested values and built-in classes,
and round trips through the registry."""
import json
import os

import numpy as np
import pytest

from torchstrategy.keras import activations, losses, regularizers, saving

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_saving_reference.json")))


def _plain(value):
    return json.loads(json.dumps(value))


def test_layouts_match_keras():
    S = saving.serialize_keras_object
    assert S(losses.mean_squared_error) == REF["function"]
    assert S(activations.relu) == REF["activation"]
    assert S(np.array([[1, 2], [3, 4]], dtype="float32")) == REF["numpy"]
    assert _plain(S({"a": [1, 2.5, "x", None], "b": (1, 2), "c": b"hi", "d": slice(1, 5, None)})) == REF["nested"]
    for key, obj in (("loss", losses.Huber(delta=2.0)), ("regularizer", regularizers.L2(0.25))):
        got = S(obj)
        assert {k: got[k] for k in ("module", "class_name", "registered_name")} == \
            {k: REF[key][k] for k in ("module", "class_name", "registered_name")}


def test_registered_function_and_class_round_trip():
    @saving.register_keras_serializable(package="demo", name="twice")
    def twice(x):
        return 2 * x

    @saving.register_keras_serializable(package="demo")
    class Box:
        def __init__(self, size=1):
            self.size = size

        def get_config(self):
            return {"size": self.size}

        @classmethod
        def from_config(cls, config):
            return cls(**config)

    try:
        config = saving.serialize_keras_object(twice)
        assert config == REF["registered_function"]
        assert saving.deserialize_keras_object(config) is twice
        boxed = saving.serialize_keras_object(Box(size=4))
        assert boxed["registered_name"] == "demo>Box" and boxed["config"] == {"size": 4}
        assert saving.deserialize_keras_object(_plain(boxed)).size == 4
    finally:
        saving.get_custom_objects().pop("demo>twice")
        saving.get_custom_objects().pop("demo>Box")


def test_builtins_round_trip():
    D, S = saving.deserialize_keras_object, saving.serialize_keras_object
    assert D(_plain(S(losses.mean_squared_error))) is losses.mean_squared_error
    huber = D(_plain(S(losses.Huber(delta=2.0))))
    assert isinstance(huber, losses.Huber) and huber.get_config()["delta"] == 2.0
    np.testing.assert_array_equal(D(_plain(S(np.arange(3.0)))), np.arange(3.0))
    assert D(_plain(S(slice(1, None, 2)))) == slice(1, None, 2)


def test_unknown_class_and_lambda_are_explained():
    with pytest.raises(TypeError, match="register_keras_serializable"):
        saving.deserialize_keras_object({"module": "mine", "class_name": "Nope", "config": {},
                                         "registered_name": "mine>Nope"})
    with pytest.raises(ValueError, match="lambda"):
        saving.deserialize_keras_object({"class_name": "__lambda__", "config": {"value": "x"}})
