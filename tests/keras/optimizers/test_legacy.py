"""keras.optimizers.legacy: every name is the one class that raises ImportError pointing to tf_keras, as Keras
3.15 (tests/keras/keras_last_names_reference.json, written by tools/tf_reference/keras_last_names_reference.py)."""
from __future__ import annotations

import json
import os

import pytest

import torchstrategy as tf

REF = json.load(open(os.path.join(os.path.dirname(__file__), "..", "keras_last_names_reference.json")))


@pytest.mark.parametrize("name", ["Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"])
def test_legacy_optimizers_raise_import_error_naming_tf_keras(name):
    assert REF["legacy_optimizer"]["raises"] == "ImportError" and "tf_keras" in REF["legacy_optimizer"]["message"]
    cls = getattr(tf.keras.optimizers.legacy, name)
    assert cls is tf.keras.optimizers.legacy.SGD  # Keras binds every name to one class
    assert REF["legacy_same"]
    with pytest.raises(ImportError, match="tf_keras") as info:
        cls(learning_rate=0.1)
    assert "keras.optimizers.Adam" in str(info.value)
