"""`keras.datasets`: cifar10/100, mnist, fashion_mnist, boston_housing, california_housing, imdb, reuters loaders.
Submodules load on first attribute access; `testing` writes small datasets in the real formats."""
from __future__ import annotations

from torchstrategy._machinery.lazy import lazy_namespace

__getattr__, __dir__ = lazy_namespace(
    __name__,
    {
        "boston_housing": "torchstrategy.keras.datasets.boston_housing",
        "california_housing": "torchstrategy.keras.datasets.california_housing",
        "cifar10": "torchstrategy.keras.datasets.cifar10",
        "cifar100": "torchstrategy.keras.datasets.cifar100",
        "fashion_mnist": "torchstrategy.keras.datasets.fashion_mnist",
        "imdb": "torchstrategy.keras.datasets.imdb",
        "mnist": "torchstrategy.keras.datasets.mnist",
        "reuters": "torchstrategy.keras.datasets.reuters",
        "testing": "torchstrategy.keras.datasets.testing",
        "DatasetNotFoundError": "torchstrategy.keras.datasets._locate:DatasetNotFoundError",
        "DatasetCorruptedError": "torchstrategy.keras.datasets._locate:DatasetCorruptedError",
    },
)
