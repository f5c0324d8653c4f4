"""Keras 3's `.weights.h5` layout, read from TF 2.21-written files (tests/formats/fixtures) and written back."""
from __future__ import annotations

import os

import h5py
import numpy as np

from torchstrategy import formats
from torchstrategy.formats import keras_h5

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def test_keras_weights_tree_of_a_tf_file():
    tree = keras_h5.read_tree(os.path.join(FIXTURES, "lstm.weights.h5"))
    assert [v.shape for v in tree["layers/lstm/cell"].values] == [(3, 20), (5, 20), (20,)]  # gates i, f, c, o
    assert [v.shape for v in tree["layers/gru/cell"].values] == [(5, 12), (4, 12), (2, 12)]
    assert tree[""].name == "sequential_1"  # the model's own name (the fixture script's second Sequential)


def test_keras_weights_tree_round_trip(tmp_path):
    tree = {"": formats.VarGroup("m", []), "layers/dense": formats.VarGroup("d", [np.arange(6.0).reshape(2, 3)])}
    path = str(tmp_path / "x.weights.h5")
    keras_h5.write_tree(path, tree)
    with h5py.File(path) as handle:
        assert handle["layers/dense/vars"].attrs["name"] == "d" and list(handle["layers/dense/vars"]) == ["0"]
    back = keras_h5.read_tree(path)
    np.testing.assert_array_equal(back["layers/dense"].values[0], tree["layers/dense"].values[0])
