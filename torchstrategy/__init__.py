"""torchstrategy: tf.distribute.Strategy and the Keras model API on PyTorch.
`import torchstrategy as tf` gives the tf-shaped namespace; submodules load on first use."""
from __future__ import annotations

from torchstrategy._lazy import lazy_namespace

__version__ = "0.1.0"

__getattr__, __dir__ = lazy_namespace(__name__, {})
