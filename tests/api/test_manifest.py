"""The frozen TF 2.21 / Keras 3.15 manifest (torchstrategy/_machinery/tf_api_manifest.json.gz) holds what
the API tests and the 'not provided' errors need: names, kinds, signatures, aliases."""
from __future__ import annotations

import os

from torchstrategy._machinery import api_manifest


def test_versions_and_size():
    data = api_manifest.load()
    assert data["versions"] == {"tensorflow": "2.21.0", "keras": "3.15.1"}
    assert os.path.getsize(api_manifest.MANIFEST_PATH) < 1_500_000
    assert len(data["names"]) > 8000


def test_known_facts():
    # From TF 2.21.0 / Keras 3.15.1 (inspect.signature in the reference env).
    assert api_manifest.entry("tf.nn.relu") == ["function", "(features, name=None)"]
    assert api_manifest.entry("tf.lite") == ["module"]
    assert api_manifest.entry("tf.compat.v1.Session") == ["class"]
    assert api_manifest.entry("tf.float32") == ["constant", "DType"]
    fit = api_manifest.entry("keras.Model")[2]["members"]["fit"]
    assert fit[0] == "method" and fit[1].startswith("(self, x=None, y=None, batch_size=None, epochs=1,")
    assert api_manifest.entry("tf.estimator") is None  # gone from TF since 2.16


def test_aliases_resolve_to_keras():
    assert api_manifest.canonical_path("tf.keras.layers.Dense") == "keras.layers.Dense"
    assert api_manifest.canonical_path("tf.metrics.AUC") == "keras.metrics.AUC"
    assert api_manifest.canonical_path("tf.compat.v2.nn.relu") == "tf.nn.relu"
    assert api_manifest.entry("tf.keras.layers.Dense")[0] == "class"
