"""A functional model whose inputs are intermediate tensors of another model (Keras 3: each becomes a fresh
Input named '<tensor>CLONE' and the layers are reused): structure and config against Keras 3.15 facts frozen in
keras_intermediate_inputs_reference.json (tools/tf_reference/keras_intermediate_inputs_reference.py, TF 2.21);
numbers, get_config/from_config and .keras save/load round trips."""
from __future__ import annotations

import json
import os

import numpy as np
import torch

import torchstrategy as tf
from torchstrategy import _context

k = tf.keras
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_intermediate_inputs_reference.json")))


def build():
    _context.reset_names()
    inp = k.Input((4,), name="x")
    h = k.layers.Dense(6, activation="relu", name="h")(inp)
    h2 = k.layers.Dense(5, name="h2")(h)
    out = k.layers.Add(name="add")([k.layers.Dense(5, name="side")(h), h2])
    full = k.Model(inp, out)
    sub = k.Model(full.get_layer("h").output, full.get_layer("add").output, name="head")
    two = k.Model([inp, full.get_layer("h").output], [full.get_layer("h2").output, full.get_layer("add").output])
    return full, sub, two


def test_structure_matches_keras():
    full, sub, two = build()
    config = sub.get_config()
    assert [layer.name for layer in sub.layers] == REF["sub_layers"]
    assert list(config["input_layers"]) == REF["sub_input_layers"]
    assert list(config["output_layers"]) == REF["sub_output_layers"]
    assert [list(t.shape) for t in sub.inputs] == REF["sub_inputs"]
    assert [layer.name for layer in two.layers] == REF["two_layers"]
    assert [list(entry) for entry in two.get_config()["input_layers"]] == REF["two_input_layers"]
    assert len(sub.weights) == REF["n_weights"]
    assert (sub.get_layer("h2") is full.get_layer("h2")) is REF["shares"]
    assert [entry["class_name"] for entry in config["layers"]] == REF["config_layer_classes"]


def test_numbers_config_and_file_round_trips(tmp_path):
    full, sub, _ = build()
    x = torch.from_numpy(np.random.default_rng(0).normal(size=(5, 4)).astype("float32"))
    hidden = full.get_layer("h")(x)
    expected = full(x).detach().numpy()
    np.testing.assert_allclose(sub(hidden).detach().numpy(), expected, rtol=1e-6)
    rebuilt = k.Model.from_config(sub.get_config())
    rebuilt.set_weights(sub.get_weights())
    np.testing.assert_allclose(rebuilt(hidden).detach().numpy(), expected, rtol=1e-6)
    path = str(tmp_path / "head.keras")
    sub.save(path)
    loaded = k.models.load_model(path)
    np.testing.assert_allclose(loaded(hidden).detach().numpy(), expected, rtol=1e-6)
    assert [layer.name for layer in loaded.layers] == REF["sub_layers"]
