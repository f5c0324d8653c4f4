"""Functional-model attributes as Keras 3.15 has them: model.input/output/inputs/outputs, shapes,
get_layer, layer.input/output, Keras's layer order, unknown sizes, sub-models sharing weights, JSON."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torchstrategy import keras


def _two_input_model():
    a = keras.Input((3,), name="a")
    b = keras.Input((4,), name="b")
    dense = keras.layers.Dense(2, name="d")
    y = dense(keras.layers.Concatenate(name="cat")([a, b]))
    return a, b, dense, y


def test_model_inputs_outputs_and_shapes_follow_the_given_structure():
    a, b, dense, y = _two_input_model()
    model = keras.Model([a, b], y)
    assert model.input == [a, b] and model.inputs == [a, b]
    assert model.output is y and model.outputs == [y]
    assert model.input_shape == [(None, 3), (None, 4)] and model.output_shape == (None, 2)
    two = keras.Model({"a": a, "b": b}, [y, y])
    assert two.input == {"a": a, "b": b} and two.output == [y, y]
    assert two.output_shape == [(None, 2), (None, 2)]
    single = keras.Model(a, keras.layers.Dense(5)(a))
    assert single.input is a and single.input_shape == (None, 3)


def test_layer_input_and_output_are_those_of_its_first_call():
    a, b, dense, y = _two_input_model()
    assert dense.output is y
    assert dense.input.shape == (None, 7)
    dense(keras.layers.Concatenate()([b, a]))  # a second call: still the first one's tensors (Keras 3)
    assert dense.output is y
    assert keras.layers.Input((2,)).node.layer.output.shape == (None, 2)
    with pytest.raises(AttributeError, match="never been called"):
        keras.layers.Dense(3).output


def test_get_layer_by_name_or_index_and_its_errors():
    a, b, dense, y = _two_input_model()
    model = keras.Model([a, b], y)
    # Keras's order: inputs first, then by depth
    assert [l.name for l in model.layers] == ["a", "b", "cat", "d"]
    assert model.get_layer("d") is dense and model.get_layer(index=3) is dense and model.get_layer(index=0).name == "a"
    with pytest.raises(ValueError, match="either a layer name or a layer index"):
        model.get_layer()
    with pytest.raises(ValueError, match="No such layer: nope"):
        model.get_layer("nope")
    with pytest.raises(ValueError, match="index 99 but model only has 4 layers"):
        model.get_layer(index=99)
    with pytest.raises(ValueError, match="only a layer name or a layer index"):
        model.get_layer("d", index=1)


def test_layer_order_is_keras_depth_order_not_call_order():
    # Keras 3.15 (frozen from /work/tf-venv): ['in', 'left_1', 'left_2', 'right', 'add'], and with the Add's
    # inputs swapped: ['in', 'left_1', 'right', 'left_2', 'add'] (depth first, then first visit from the output)
    for swapped, expected in ((False, ["in", "left_1", "left_2", "right", "add"]),
                              (True, ["in", "left_1", "right", "left_2", "add"])):
        x = keras.Input((4,), name="in")
        left = keras.layers.Dense(4, name="left_2")(keras.layers.Dense(4, name="left_1")(x))
        right = keras.layers.Dense(4, name="right")(x)
        model = keras.Model(x, keras.layers.Add(name="add")([right, left] if swapped else [left, right]))
        assert [l.name for l in model.layers] == expected
        assert [w.path for w in model.weights][:3] == ["left_1/kernel", "left_1/bias", expected[2] + "/kernel"]


def test_unknown_sizes_stay_unknown_through_layers():
    x = keras.Input((None, None, 3))
    y = keras.layers.Conv2D(4, 3, strides=2, padding="same")(x)
    assert y.shape == (None, None, None, 4)
    assert keras.layers.MaxPooling2D(2)(y).shape == (None, None, None, 4)
    assert keras.layers.GlobalAveragePooling2D()(y).shape == (None, 4)
    seq = keras.Input((None, 5))
    assert keras.layers.Dense(2)(seq).shape == (None, None, 2)


def test_arithmetic_on_symbolic_tensors_runs_and_is_not_a_listed_layer():
    x = keras.Input((3,))
    y = 2.0 - keras.layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)
    model = keras.Model(x, y / 2.0)
    values = np.array([[-4.0, 0.0, 4.0]], np.float32)
    expected = (2.0 - np.clip(values + 3.0, 0, 6) / 6.0) / 2.0
    np.testing.assert_allclose(model.predict(values, verbose=0), expected, rtol=1e-6)
    assert [type(l).__name__ for l in model.layers] == ["InputLayer", "ReLU"]
    rebuilt = keras.models.model_from_json(model.to_json())  # the operations travel in the JSON too
    np.testing.assert_allclose(rebuilt.predict(values, verbose=0), expected, rtol=1e-6)


def test_sub_model_on_intermediate_outputs_trains_and_shares_weights():
    torch.manual_seed(0)
    inputs = keras.Input((6,))
    hidden = keras.layers.Dense(5, activation="relu", name="hidden")(inputs)
    base = keras.Model(inputs, keras.layers.Dense(1, name="out")(hidden))
    features = keras.Model(base.input, base.get_layer("hidden").output)
    assert features.get_layer("hidden") is base.get_layer("hidden")
    head = keras.layers.Dense(2, name="head")(features.output)
    probe = keras.Model(base.input, head)
    probe.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    before = base.get_layer("hidden").get_weights()[0].copy()
    x = np.random.default_rng(0).random((16, 6)).astype(np.float32)
    probe.fit(x, np.ones((16, 2), np.float32), epochs=1, batch_size=8, verbose=0)
    after = base.get_layer("hidden").get_weights()[0]
    assert not np.allclose(before, after)  # training the sub-model moved the base's shared weights
    np.testing.assert_allclose(features.predict(x, verbose=0), np.maximum(x @ after + base.get_layer("hidden").get_weights()[1], 0),
                               rtol=1e-5, atol=1e-6)


def test_to_json_and_model_from_json_rebuild_the_architecture():
    a, b, dense, y = _two_input_model()
    model = keras.Model([a, b], y, name="two")
    text = model.to_json()
    rebuilt = keras.models.model_from_json(text)
    assert rebuilt.name == "two"
    assert [l.name for l in rebuilt.layers] == [l.name for l in model.layers]
    assert [tuple(w.shape) for w in rebuilt.weights] == [tuple(w.shape) for w in model.weights]
    with pytest.raises(ValueError, match="to_json"):
        keras.models.model_from_json("{not json")
