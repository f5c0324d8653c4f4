"""Keras 3's further activations (celu, glu, hard_shrink, hard_tanh, log_sigmoid, soft_shrink, sparse_plus,
sparse_sigmoid, sparsemax, squareplus, tanh_shrink) against Keras 3.15 / TF 2.21 numbers frozen in
keras_activations_more_reference.json by tools/tf_reference/keras_activations_more_reference.py."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_activations_more_reference.json")))
X = torch.tensor(REF["x"])
A = tf.keras.activations
ALIASES = {"celu_alpha": "celu", "hard_shrink_t": "hard_shrink", "sparsemax_0": "sparsemax", "squareplus_b": "squareplus"}


@pytest.mark.parametrize("key", sorted(REF["cases"]))
def test_values_match_keras(key):
    case = REF["cases"][key]
    fn = getattr(A, ALIASES.get(key, key))
    np.testing.assert_allclose(fn(X, **case["kwargs"]).numpy(), np.asarray(case["y"], dtype="float32"),
                               rtol=1e-6, atol=1e-6)


def test_names_and_get():
    for key, name in REF["names"].items():
        fn = A.get(name)
        assert A.serialize(fn) == name, key
    for name, fn_name in REF["get"].items():
        assert A.get(name).__name__ == fn_name
    layer = tf.keras.layers.Dense(3, activation="squareplus")
    assert layer.get_config()["activation"] == "squareplus"
