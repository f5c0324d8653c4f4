"""`tf.lookup.experimental`: the mutable tables (MutableHashTable, DenseHashTable), named here."""
from __future__ import annotations

from torchstrategy.lookup.tables import DenseHashTable, MutableHashTable

__all__ = ["DenseHashTable", "MutableHashTable"]
