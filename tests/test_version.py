"""tf.version and the keras namespace aliases (tf.metrics, tf.losses, tf.optimizers, tf.initializers)."""
from __future__ import annotations

import torchstrategy as tf


def test_version_strings() -> None:
    assert tf.version.VERSION == "2.21.0"  # TF 2.21
    major, minor = (int(part) for part in tf.version.VERSION.split(".")[:2])
    assert (major, minor) >= (2, 0)
    assert tf.version.TORCHSTRATEGY_VERSION == tf.__version__


def test_keras_aliases() -> None:
    assert tf.metrics is tf.keras.metrics
    assert tf.losses is tf.keras.losses
    assert tf.optimizers is tf.keras.optimizers
    assert tf.initializers is tf.keras.initializers  # TF 2.21 aliases tf.initializers to keras.initializers
    assert tf.initializers.RandomNormal is tf.keras.initializers.RandomNormal
