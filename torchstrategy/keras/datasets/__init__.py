"""`keras.datasets`: cifar10/100, mnist, fashion_mnist, boston_housing `load_data()`, plus file writers.
Submodules load on first attribute access; `testing` writes small datasets in the real formats."""
from __future__ import annotations

from torchstrategy._lazy import lazy_namespace

__getattr__, __dir__ = lazy_namespace(
    __name__,
    {
        "boston_housing": "torchstrategy.keras.datasets.boston_housing",
        "cifar10": "torchstrategy.keras.datasets.cifar10",
        "cifar100": "torchstrategy.keras.datasets.cifar100",
        "fashion_mnist": "torchstrategy.keras.datasets.fashion_mnist",
        "mnist": "torchstrategy.keras.datasets.mnist",
        "testing": "torchstrategy.keras.datasets.testing",
        "DatasetNotFoundError": "torchstrategy.keras.datasets._locate:DatasetNotFoundError",
        "DatasetCorruptedError": "torchstrategy.keras.datasets._locate:DatasetCorruptedError",
    },
)
