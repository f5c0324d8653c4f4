"""`tf.lookup`: key -> value tables (static hash tables, vocabulary tables with out-of-vocabulary buckets) and
their initializers; the mutable tables are in tf.lookup.experimental."""
from __future__ import annotations

from torchstrategy.lookup import experimental
from torchstrategy.lookup.initializers import KeyValueTensorInitializer, TextFileIndex, TextFileInitializer
from torchstrategy.lookup.tables import StaticHashTable, StaticVocabularyTable

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable", "TextFileIndex",
           "TextFileInitializer", "experimental"]
