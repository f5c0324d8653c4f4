"""Models rebuilt from their description (keras/model_cloning.py): Model.from_config of a functional config,
subclasses with positional __init__ arguments, clone_model's arguments; Keras 3.15's behaviour frozen by
tools/tf_reference/keras_functional_reference.py ("cloning")."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from torchstrategy import keras
from torchstrategy.keras import layers, ops

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_functional_reference.json")))["cloning"]


class ArgsModel(keras.Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


class Positional(keras.Model):
    def __init__(self, units, act="relu", **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(units, activation=act)

    def call(self, x):
        return self.dense(x)


def _net() -> keras.Model:
    inputs = keras.Input((3,), name="x")
    hidden = layers.Dense(4, name="d")(inputs)
    return keras.Model(inputs, layers.Dense(2, name="o")(ops.relu(hidden) + 1.0), name="net")


def test_model_from_config_rebuilds_a_functional_model():
    model = _net()
    rebuilt = keras.Model.from_config(model.get_config())
    assert [layer.name for layer in rebuilt.layers] == REF["from_config_names"]
    assert isinstance(rebuilt, keras.Model) and rebuilt.get_config() == model.get_config()
    x = np.random.rand(2, 3).astype("float32")
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_allclose(rebuilt.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


def test_a_subclass_taking_args_and_kwargs_is_revived_on_the_graph():
    revived = ArgsModel.from_config(_net().get_config())
    assert [type(revived).__name__, isinstance(revived, ArgsModel)] == REF["args_subclass_revived_as"]
    assert revived(np.ones((1, 3), "float32")).shape == (1, 2)


def test_a_subclass_with_positional_init_arguments_is_not_mistaken_for_inputs_outputs():
    model = Positional(3, "relu")
    assert type(model) is Positional
    assert list(model(np.ones((1, 2), "float32")).shape) == REF["positional_output_shape"]
    with pytest.raises(TypeError, match=REF["positional_from_config_error"]):
        Positional.from_config(_net().get_config())


def test_a_subclass_given_inputs_and_outputs_by_its_own_init_is_functional():
    class Steps(keras.Model):
        def __init__(self, units):
            inputs = keras.Input((2,))
            super().__init__(inputs, layers.Dense(units)(inputs))
            self.units = units

        def train_step(self, data):
            self.custom_steps = getattr(self, "custom_steps", 0) + 1
            return super().train_step(data)

    model = Steps(4)
    assert isinstance(model, Steps) and isinstance(model, keras.Model) and model.units == 4
    assert model.output_shape == (None, 4)
    model.compile("sgd", "mse")
    model.fit(np.ones((4, 2), "float32"), np.zeros((4, 4), "float32"), epochs=1, batch_size=2, verbose=0)
    assert model.custom_steps == 2


def test_clone_model_copies_the_graph_with_fresh_layers():
    model = _net()
    clone = keras.models.clone_model(model)
    assert (clone.get_config() == model.get_config()) is REF["clone_same_config"]
    assert [layer.name for layer in clone.layers] == REF["clone_names"]
    assert all(a is not b for a, b in zip(clone.weights, model.weights))
    assert keras.models.model_from_json(model.to_json()).get_config() == clone.get_config()  # the two agree


def test_clone_model_arguments():
    model = _net()

    def wider(layer):
        config = layer.get_config()
        if layer.name == "d":
            config["units"] *= 2
        return layer.__class__.from_config(config)

    widened = keras.models.clone_model(model, clone_function=wider)
    assert [list(w.shape) for w in widened.weights] == REF["clone_function_shapes"]
    new_input = keras.Input((3,), name="new_in")
    assert [l.name for l in keras.models.clone_model(model, input_tensors=new_input).layers] == \
        REF["input_tensors_names"]
    calls = []

    def record(layer, *args, **kwargs):
        calls.append(layer.name)
        return layer(*args, **kwargs)

    keras.models.clone_model(model, call_function=record)
    assert calls == REF["call_function_calls"]
    with pytest.raises(ValueError, match="Unexpected keyword argument"):
        keras.models.clone_model(model, colour="red")
    with pytest.raises(ValueError, match="must have the same structure"):
        keras.models.clone_model(model, input_tensors=[new_input, new_input])


def test_clone_model_of_sequential_and_compiled_models():
    sequential = keras.Sequential([keras.Input((3,)), layers.Dense(2, name="s1")], name="seq")
    clone = keras.models.clone_model(sequential)
    assert {"names": [l.name for l in clone.layers], "built": clone.built} == REF["sequential_clone"]
    with pytest.raises(ValueError, match="not supported with Sequential"):
        keras.models.clone_model(sequential, call_function=lambda layer, *a: layer(*a))
    model = _net()
    model.compile("adam", "mse", metrics=["mae"])
    compiled = keras.models.clone_model(model)
    assert [compiled.get_compile_config() is not None, type(compiled.optimizer).__name__,
            compiled.optimizer is model.optimizer] == REF["compiled_clone"]


def test_recursive_clone_walks_into_nested_models_and_keeps_shared_layers_shared():
    inner = keras.Sequential([keras.Input((3,)), layers.Dense(3, name="inner_dense")], name="inner")
    inputs = keras.Input((3,))
    shared = layers.Dense(3, name="shared")
    outputs = shared(inner(shared(inputs)))
    model = keras.Model(inputs, outputs)
    seen = []

    def clone(layer):
        seen.append(layer.name)
        return layer.__class__.from_config(layer.get_config())

    copy = keras.models.clone_model(model, clone_function=clone, recursive=True)
    assert seen == ["shared", "inner_dense"]  # the nested model is walked, the shared layer cloned once
    assert copy.get_layer("shared") is copy.layers[1] and len(copy.weights) == len(model.weights)
    x = torch.ones(1, 3)
    assert copy(x).shape == (1, 3)


def test_clone_model_of_a_subclassed_model_uses_its_config():
    class Configured(keras.Model):
        def __init__(self, units=2, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.dense = layers.Dense(units)

        def call(self, x):
            return self.dense(x)

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    clone = keras.models.clone_model(Configured(5))
    assert type(clone) is Configured and clone.units == 5
    with pytest.raises(ValueError, match="only supported for Sequential models or Functional models"):
        keras.models.clone_model(Configured(5), clone_function=lambda layer: layer)
