"""keras.saving's registry: register_keras_serializable, get_registered_name/object, get_custom_objects,
custom_object_scope (nesting, per thread), and model loading that finds registered layers without custom_objects."""
import threading

import numpy as np
import pytest

from torchstrategy import keras
from torchstrategy.keras import saving, utils


class _Unregistered:
    def get_config(self):
        return {}


def test_register_names_and_lookup_order():
    @saving.register_keras_serializable(package="regtest")
    class Thing:
        def get_config(self):
            return {}

    @saving.register_keras_serializable(package="regtest", name="dbl")
    def double(x):
        return 2 * x

    try:
        assert saving.get_registered_name(Thing) == "regtest>Thing"
        assert saving.get_registered_name(double) == "regtest>dbl"
        assert saving.get_registered_name(_Unregistered) == "_Unregistered"
        assert saving.get_registered_object("regtest>Thing") is Thing
        assert saving.get_custom_objects()["regtest>dbl"] is double
        assert saving.get_registered_object("nothing") is None
        assert saving.get_registered_object("x", custom_objects={"x": 1}, module_objects={"x": 2}) == 1
        assert saving.get_registered_object("x", module_objects={"x": 2}) == 2
        # the same registry is keras.utils's
        assert utils.get_custom_objects() is saving.get_custom_objects()
    finally:
        for key in ("regtest>Thing", "regtest>dbl"):
            saving.get_custom_objects().pop(key)


def test_registering_a_class_without_get_config_is_refused():
    with pytest.raises(ValueError, match="get_config"):
        saving.register_keras_serializable()(type("NoConfig", (), {}))


def test_custom_object_scope_nests_restores_and_stays_on_its_thread():
    seen = []
    with saving.custom_object_scope({"A": 1}):
        with saving.CustomObjectScope({"B": 2}):
            assert saving.get_registered_object("A") == 1 and saving.get_registered_object("B") == 2
            worker = threading.Thread(target=lambda: seen.append(saving.get_registered_object("A")))
            worker.start()
            worker.join()
        assert saving.get_registered_object("B") is None
        assert saving.get_registered_object("A") == 1
    assert saving.get_registered_object("A") is None
    assert seen == [None]


def test_load_model_finds_a_registered_layer(tmp_path):
    @saving.register_keras_serializable(package="regtest")
    class Scale(keras.layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    try:
        model = keras.Sequential([keras.Input((3,)), Scale(3.0)])
        path = str(tmp_path / "m.keras")
        model.save(path)
        loaded = keras.models.load_model(path)
        x = np.ones((2, 3), "float32")
        np.testing.assert_allclose(np.asarray(loaded.predict(x, verbose=0)), 3.0 * x)
    finally:
        saving.get_custom_objects().pop("regtest>Scale")
