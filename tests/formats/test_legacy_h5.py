"""Keras 2's legacy `.h5` layout, read from TF 2.21-written files (tests/formats/fixtures) and written back."""
from __future__ import annotations

import os

import h5py
import numpy as np

from torchstrategy import formats
from torchstrategy.formats import legacy_h5

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def test_legacy_file_of_tf():
    content = legacy_h5.read(os.path.join(FIXTURES, "two_inputs.h5"))
    assert content.model_config["class_name"] == "Functional"
    assert content.training_config["loss"] == ["mse", "mae"]
    names = [name for name, _ in content.layers]
    assert names[:2] == ["a", "b"] and "shared" in names
    shared = dict(content.layers)["shared"]
    assert [n for n, _ in shared] == ["shared/kernel", "shared/bias"]
    assert content.optimizer_weights[0][0].endswith("iteration")


def test_legacy_weights_only_round_trip(tmp_path):
    content = formats.LegacyH5(None, None, [("dense", [("dense/kernel:0", np.ones((2, 2)))]), ("flatten", [])])
    path = str(tmp_path / "w.h5")
    with open(path, "wb") as handle:
        legacy_h5.write(handle, content)
    with h5py.File(path) as handle:
        assert list(handle.attrs["layer_names"]) == ["dense", "flatten"]
        assert "model_weights" not in handle
    back = legacy_h5.read(path)
    assert back.layers[0][0] == "dense" and back.layers[0][1][0][0] == "dense/kernel:0"
    assert back.model_config is None
