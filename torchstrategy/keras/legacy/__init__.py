"""`keras.legacy`: what Keras 3 keeps of Keras 2 under this name (`keras.legacy.saving`'s object
serialization). Submodules load on first use."""
from __future__ import annotations

from torchstrategy._machinery.lazy import lazy_namespace

__getattr__, __dir__ = lazy_namespace(__name__, {
    "saving": "torchstrategy.keras.legacy_serialization",
})
