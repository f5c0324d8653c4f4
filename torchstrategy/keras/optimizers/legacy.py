"""`keras.optimizers.legacy`: the Keras 2 optimizer names Keras 3 keeps only to fail helpfully.
Every name is one class whose constructor raises ImportError pointing to tf_keras (Keras 2)."""
from __future__ import annotations

from typing import Any


class LegacyOptimizerWarning:
    """Stands for a `keras.optimizers.legacy` optimizer: Keras 3 (and so torchstrategy) has none, and
    constructing one raises ImportError that says what to use instead."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise ImportError(
            "keras.optimizers.legacy optimizers belong to Keras 2 and do not exist in Keras 3 or in "
            "torchstrategy. Use the Keras 3 optimizer of the same name (keras.optimizers.Adam, SGD, ...); "
            "code that needs the Keras 2 optimizers has to run under real TensorFlow with the `tf_keras` "
            "package installed and TF_USE_LEGACY_KERAS=True set."
        )


# Keras 3.15 binds all six names to the one class.
Adagrad = Adam = Ftrl = Optimizer = RMSprop = SGD = LegacyOptimizerWarning

__all__ = ["Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"]
