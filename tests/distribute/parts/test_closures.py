"""Closures packed for parameter-server workers, in this process: the variables a closure uses travel as
references (each registered once, however deep its layer), everything else by value, and unbuilt models refuse."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.distribute.parts.closures import ClosurePickler
from torchstrategy.distribute.parts.variable_registry import VariableRegistry
from torchstrategy.distribute.parts.variable_store import VariableClient


def _pickler():
    registry = VariableRegistry(VariableClient(None), ["ps:0", "ps:1"])  # placing needs no ps task
    strategy = object()
    return registry, strategy, ClosurePickler(registry, strategy)


def test_a_closure_over_a_model_references_each_variable_once_and_carries_the_rest_by_value():
    registry, strategy, pickler = _pickler()
    inner = tf.keras.Sequential([tf.keras.Input((512,)), tf.keras.layers.Dense(256), tf.keras.layers.Dense(2)])
    model = tf.keras.Sequential([tf.keras.Input((512,)), inner, tf.keras.layers.Dense(1)])
    settings = {"scale": 2.5, "names": ["a", "b"], "dtype": torch.float32}
    first_dense = inner.layers[0]

    def fn(x):  # the model, one of its nested layers again, the strategy and plain values
        return model(x) * settings["scale"], first_dense.kernel, strategy

    payload, specs = pickler.dumps((fn, (torch.ones(2, 512),), {}))
    weights = model.trainable_variables
    assert len(weights) == 6
    # the model travels with its layers, so every weight goes as a reference (none by value), the nested one too
    assert sorted(specs) == sorted(registry.spec_of(w).key for w in weights)
    assert registry.spec_of(first_dense.kernel).key in specs
    places = [registry.spec_of(w).shards[0].task for w in weights]
    assert places == ["ps:0", "ps:1"] * 3  # round robin in creation order, each registered once
    keys = {registry.spec_of(w).key for w in weights}
    assert len(keys) == 6
    again, specs_again = pickler.dumps((fn, (torch.ones(2, 512),), {}))
    assert specs_again == specs and len({registry.spec_of(w).key for w in weights}) == 6  # no new registration
    assert b"names" in payload and len(again) == len(payload)
    assert len(payload) < 100_000  # by reference: the 131,000 kernel numbers (512 KB) are not in it


def test_an_unbuilt_layer_inside_a_model_is_refused_when_packed():
    _, _, pickler = _pickler()
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])  # no input shape: nothing built yet
    with pytest.raises(ValueError, match="is not built"):
        pickler.dumps((lambda: model, (), {}))
