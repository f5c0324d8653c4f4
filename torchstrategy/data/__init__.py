"""`tf.data` for torchstrategy: the lazy, streaming `Dataset` with tf.data semantics, its `Options`,
AUTOTUNE and the cardinality constants. (`distribute.py` here feeds datasets to strategies.)"""
from __future__ import annotations

from torchstrategy.data import experimental
from torchstrategy.data._fixed_length import FixedLengthRecordDataset
from torchstrategy.data._iterator import IteratorSpec, NumpyIterator
from torchstrategy.data._more_ops import DatasetSpec
from torchstrategy.data._records import TFRecordDataset
from torchstrategy.data._structure import TensorShape, TensorSpec
from torchstrategy.data._text import TextLineDataset
from torchstrategy.data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset,
                                        DatasetIterator)
from torchstrategy.data.options import AutoShardPolicy, DistributeOptions, Options, ThreadingOptions

Iterator = DatasetIterator

__all__ = [
    "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "AutoShardPolicy", "Dataset", "DatasetIterator",
    "DatasetSpec", "DistributeOptions", "FixedLengthRecordDataset", "Iterator", "IteratorSpec", "NumpyIterator",
    "Options", "TensorShape", "TensorSpec", "TextLineDataset", "TFRecordDataset", "ThreadingOptions",
    "experimental",
]
