"""keras.saving's registry of custom objects: names as Keras forms them ('package>Name'), lookups, the
decorator's refusal of classes without get_config."""
from __future__ import annotations

import pytest

import torchstrategy as tf
from torchstrategy.keras import object_registration as registration


def test_registered_class_is_found_by_its_package_name():
    @registration.register_keras_serializable(package="TestPkg")
    class Doubling(tf.keras.layers.Layer):
        def call(self, x):
            return 2 * x

    assert registration.get_registered_name(Doubling) == "TestPkg>Doubling"
    assert registration.get_registered_object("TestPkg>Doubling") is Doubling
    assert registration.get_custom_objects()["TestPkg>Doubling"] is Doubling
    assert registration.get_registered_name(len) == "len"  # not registered: its own name, as Keras
    assert registration.get_registered_object("Nope>Nothing") is None


def test_the_name_argument_and_the_custom_objects_fallback():
    @registration.register_keras_serializable(package="TestPkg", name="Renamed")
    def scaled(x):
        return x

    assert registration.get_registered_name(scaled) == "TestPkg>Renamed"
    assert registration.get_registered_object("local", custom_objects={"local": scaled}) is scaled


def test_a_class_without_get_config_is_refused():
    with pytest.raises(ValueError, match="get_config"):
        registration.register_keras_serializable()(type("Plain", (), {}))
