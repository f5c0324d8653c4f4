"""model.summary() (keras/summary.py) prints Keras 3.15's table character for character; the texts are
frozen by tools/tf_reference/keras_functional_reference.py ("summaries", made with COLUMNS=80)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from torchstrategy import keras
from torchstrategy.keras import layers, ops

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_functional_reference.json")))["summaries"]


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch):
    """The default width and the cut follow the terminal (Keras's too): 80 columns, as the texts were made."""
    monkeypatch.setenv("COLUMNS", "80")


def _summary(model, **kwargs) -> str:
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    assert len(lines) == 1  # Keras hands print_fn the whole text at once
    return lines[0]


def test_an_unbuilt_sequential_prints_keras_table(capsys):
    unbuilt = keras.Sequential([layers.Dense(3, name="d1"), layers.Dense(2, name="d2")], name="unbuilt")
    assert _summary(unbuilt) == REF["unbuilt"]
    assert _summary(unbuilt, line_length=60) == REF["unbuilt_narrow"]
    unbuilt.summary()
    assert capsys.readouterr().out == REF["unbuilt"]


def test_show_trainable_and_a_frozen_layer():
    built = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="d3"), layers.BatchNormalization(name="bn")],
                             name="built")
    built.layers[0].trainable = False
    assert _summary(built, show_trainable=True, line_length=70) == REF["built_trainable"]


def test_a_branching_functional_model_shows_connections_and_optimizer_params():
    a = keras.Input((4,), name="a")
    b = keras.Input((4,), name="b")
    hidden = layers.Dense(3, name="d")(a)
    branching = keras.Model([a, b], layers.Concatenate(name="cat")([hidden, ops.exp(b)]), name="two")
    assert _summary(branching) == REF["branching"]
    branching.compile("adam", "mse")
    branching.fit([np.ones((2, 4), "float32")] * 2, np.ones((2, 7), "float32"), verbose=0)
    assert _summary(branching, show_trainable=True) == REF["branching_compiled"]


def test_nested_models_layer_range_and_a_chain_with_two_outputs():
    inner = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="in1"), layers.Dense(3, name="in2")],
                             name="inner")
    x = keras.Input((4,), name="x")
    h = inner(x)
    multi = keras.Model(x, [layers.Dense(2, name="o1")(h), layers.Dense(5, name="o2")(h)], name="multi")
    assert _summary(multi, expand_nested=True) == REF["nested"]
    assert _summary(multi, layer_range=["inner", "o1"]) == REF["layer_range"]
    y = keras.Input((4,), name="y")
    split = layers.Lambda(lambda t: [t[:, :2], t[:, 2:]], name="split")(y)
    assert _summary(keras.Model(y, split, name="two_out"), line_length=90) == REF["two_outputs_chain"]


def test_bad_arguments_say_what_is_wrong():
    model = keras.Sequential([layers.Dense(2, name="only")])
    with pytest.raises(ValueError, match="do not match the layer names"):
        model.summary(layer_range=["nothing", "here"])
    with pytest.raises(ValueError, match="length 2"):
        model.summary(layer_range=["only"])
    with pytest.raises(ValueError, match="Insufficient console width"):
        model.summary(line_length=8)
