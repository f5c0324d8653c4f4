"""`tf.data.experimental`: AUTOTUNE, the cardinality constants and `cardinality()`, and the
option classes (`AutoShardPolicy`, `DistributeOptions`, ...) under their experimental names."""
from __future__ import annotations

from torchstrategy.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Cardinality, Dataset
from torchstrategy.data.options import (AutoShardPolicy, AutotuneOptions, DistributeOptions, ExternalStatePolicy,
                                        OptimizationOptions, ThreadingOptions)

__all__ = [
    "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "AutoShardPolicy", "AutotuneOptions",
    "DistributeOptions", "ExternalStatePolicy", "OptimizationOptions", "ThreadingOptions", "cardinality",
]


def cardinality(dataset: Dataset) -> Cardinality:
    """`dataset.cardinality()`, as the older `tf.data.experimental.cardinality(dataset)`."""
    return dataset.cardinality()
