"""`keras.datasets`: cifar10 and mnist `load_data()` (read through torchvision), plus file writers.
Submodules load on first attribute access; `testing` writes small datasets in the real formats."""
from __future__ import annotations

from torchstrategy._lazy import lazy_namespace

__getattr__, __dir__ = lazy_namespace(
    __name__,
    {
        "cifar10": "torchstrategy.keras.datasets.cifar10",
        "mnist": "torchstrategy.keras.datasets.mnist",
        "testing": "torchstrategy.keras.datasets.testing",
        "DatasetNotFoundError": "torchstrategy.keras.datasets._locate:DatasetNotFoundError",
        "DatasetCorruptedError": "torchstrategy.keras.datasets._locate:DatasetCorruptedError",
    },
)
