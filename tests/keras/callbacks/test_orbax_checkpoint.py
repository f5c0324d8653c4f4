"""keras.callbacks.OrbaxCheckpoint keeps Keras 3.15's signature and raises NotImplementedError pointing to
ModelCheckpoint (Orbax is a JAX library)."""
from __future__ import annotations

import inspect

import pytest

import torchstrategy as tf


def test_orbax_checkpoint_raises_and_points_to_model_checkpoint(tmp_path):
    cls = tf.keras.callbacks.OrbaxCheckpoint
    assert issubclass(cls, tf.keras.callbacks.Callback)
    assert list(inspect.signature(cls).parameters)[:3] == ["directory", "monitor", "verbose"]
    with pytest.raises(NotImplementedError, match="Orbax.*ModelCheckpoint"):
        cls(str(tmp_path / "ckpt"), save_freq=10, max_to_keep=3)
    assert not (tmp_path / "ckpt").exists()
