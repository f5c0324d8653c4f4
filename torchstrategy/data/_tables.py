"""tf.lookup tables filled from a dataset: tf.data.experimental.DatasetInitializer, table_from_dataset and
index_table_from_dataset (the tables themselves are tf.lookup's)."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np
import torch

from torchstrategy.data.dataset import Dataset
from torchstrategy.dtypes import string as _string
from torchstrategy.lookup import KeyValueTensorInitializer, StaticHashTable, StaticVocabularyTable


class HasherSpec(NamedTuple):
    """How out-of-vocabulary keys are hashed into buckets (TF's lookup HasherSpec; only "fasthash" is used)."""

    hasher: str
    key: Any


FAST_HASH_SPEC = HasherSpec("fasthash", None)


def _column(leaves: list) -> Any:
    if leaves and isinstance(leaves[0], (np.ndarray, bytes, str)):
        out = np.empty(len(leaves), dtype=object)
        out[:] = [leaf.item() if isinstance(leaf, np.ndarray) else leaf for leaf in leaves]
        return out
    return torch.stack(leaves) if leaves else torch.zeros(0, dtype=torch.int64)


class DatasetInitializer(KeyValueTensorInitializer):
    """`tf.data.experimental.DatasetInitializer(dataset)`: a table initializer reading (key, value) pairs of
    scalars from a dataset (read once, when made).

    >>> pairs = tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(10, 13)))
    >>> table = tf.lookup.StaticHashTable(DatasetInitializer(pairs), -1)
    """

    def __init__(self, dataset: Dataset):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"DatasetInitializer: expects a tf.data.Dataset, got {type(dataset).__name__}.")
        keys, values = [], []
        for element in dataset:
            if type(element) is not tuple or len(element) != 2:
                raise ValueError(f"DatasetInitializer: the dataset's elements must be (key, value) pairs of scalars, "
                                 f"got {element!r}.")
            if any(np.ndim(part) != 0 for part in element):
                raise ValueError(f"DatasetInitializer: keys and values must be scalars, got shapes "
                                 f"{[tuple(np.shape(part)) for part in element]}.")
            keys.append(element[0])
            values.append(element[1])
        super().__init__(_column(keys), _column(values))


def table_from_dataset(dataset: Optional[Dataset] = None, num_oov_buckets: int = 0, vocab_size: Optional[int] = None,
                       default_value: Any = None, hasher_spec: Any = FAST_HASH_SPEC, key_dtype: Any = _string,
                       name: Optional[str] = None) -> Any:
    """A lookup table from a dataset of (key, value) pairs: a StaticHashTable giving `default_value` for unknown
    keys, or with num_oov_buckets > 0 one giving vocab_size + a hash bucket. vocab_size, when given, takes that
    many pairs and requires the dataset to have them. key_dtype is not checked against the keys, as in TF 2.21."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"table_from_dataset: dataset must be a tf.data.Dataset of (key, value) pairs, got "
                        f"{type(dataset).__name__}.")
    if int(num_oov_buckets) < 0:
        raise ValueError(f"table_from_dataset: num_oov_buckets must be >= 0, got {num_oov_buckets}.")
    if vocab_size is not None:
        if int(vocab_size) < 1:
            raise ValueError(f"table_from_dataset: vocab_size must be >= 1, got {vocab_size}.")
        from torchstrategy.data import experimental

        dataset = dataset.take(int(vocab_size)).apply(experimental.assert_cardinality(int(vocab_size)))
    initializer = DatasetInitializer(dataset)
    if int(num_oov_buckets) > 0:
        return StaticVocabularyTable(initializer, int(num_oov_buckets), name=name)
    return StaticHashTable(initializer, -1 if default_value is None else default_value, name=name)


def index_table_from_dataset(dataset: Optional[Dataset] = None, num_oov_buckets: int = 0,
                             vocab_size: Optional[int] = None, default_value: Any = -1, hasher_spec: Any = FAST_HASH_SPEC,
                             key_dtype: Any = _string, name: Optional[str] = None) -> Any:
    """A table mapping each key of a dataset of scalar keys to its position (int64); unknown keys give
    `default_value`, or a hash bucket after the vocabulary with num_oov_buckets > 0."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"index_table_from_dataset: dataset must be a tf.data.Dataset of keys, got "
                        f"{type(dataset).__name__}.")
    pairs = dataset.enumerate().map(lambda index, key: (key, index))
    return table_from_dataset(pairs, num_oov_buckets, vocab_size, default_value, hasher_spec, key_dtype, name)
