"""tf.version and the keras namespace aliases (tf.metrics, tf.losses, tf.optimizers, tf.initializers)."""
from __future__ import annotations

import torchstrategy as tf


def test_version_strings() -> None:
    assert tf.version.VERSION == "2.21.0"  # TF 2.21
    major, minor = (int(part) for part in tf.version.VERSION.split(".")[:2])
    assert (major, minor) >= (2, 0)
    # tf.__version__ is TF's, as scripts check it (`tf.__version__.startswith("2")`); the package's own version
    # is tf.version.TORCHSTRATEGY_VERSION (and the installed distribution's metadata)
    assert tf.__version__ == tf.version.VERSION
    assert tf.version.TORCHSTRATEGY_VERSION != tf.__version__


def test_keras_aliases() -> None:
    assert tf.metrics is tf.keras.metrics
    assert tf.losses is tf.keras.losses
    assert tf.optimizers is tf.keras.optimizers
    assert tf.initializers is tf.keras.initializers  # TF 2.21 aliases tf.initializers to keras.initializers
    assert tf.initializers.RandomNormal is tf.keras.initializers.RandomNormal
