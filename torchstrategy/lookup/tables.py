"""tf.lookup's tables: StaticHashTable (fixed key -> value pairs and a default), StaticVocabularyTable (ids, with
unknown keys hashed into out-of-vocabulary buckets as TF hashes them), and the mutable MutableHashTable and
DenseHashTable of tf.lookup.experimental."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.strings import as_string, to_hash_bucket_fast
from torchstrategy.lookup._keys import (STRING, as_array, build, check_keys, dtype_name, dtype_of, is_strings,
                                        python_items)

__all__ = ["StaticHashTable", "StaticVocabularyTable", "MutableHashTable", "DenseHashTable"]


def _default(value: Any, dtype: Any, what: str) -> Any:
    """The default value as a 0-d array of the table's value dtype (TypeError when it does not convert)."""
    if dtype is STRING:
        if not is_strings(value):
            raise TypeError(f"{what}: the default value {value!r} is not a string, but the values are.")
        return as_array(value, STRING, what)
    if is_strings(value):
        raise TypeError(f"Cannot convert {value!r} to a {dtype_name(dtype)} tensor (the table's value dtype).")
    return as_array(value if isinstance(value, torch.Tensor) else torch.tensor(value).to(dtype), dtype, what)


class _HashTable:
    """A dict from Python keys to Python values with TF's lookup/size/export."""

    def __init__(self, key_dtype: Any, value_dtype: Any, default_value: Any, name: Optional[str], what: str):
        self._key_dtype, self._value_dtype = key_dtype, value_dtype
        self._default = _default(default_value, value_dtype, what)
        self._table: dict = {}
        self._name = name or _context.unique_name(what.rsplit(".", 1)[-1])
        self._what = what

    @property
    def key_dtype(self) -> Any:
        return self._key_dtype

    @property
    def value_dtype(self) -> Any:
        return self._value_dtype

    @property
    def name(self) -> str:
        return self._name

    def _fill(self, keys: list, values: list) -> None:
        for key, value in zip(keys, values):
            self._table[key] = value

    def _lookup(self, keys: Any, defaults: Optional[list]) -> Any:
        array = check_keys(keys, self._key_dtype, f"{self._what}.lookup")
        items = python_items(array)
        fallback = python_items(self._default)[0]
        found = [self._table.get(key, fallback if defaults is None else defaults[i]) for i, key in enumerate(items)]
        return build(found, self._value_dtype, tuple(array.shape))

    def size(self, name: Optional[str] = None) -> torch.Tensor:
        """The number of keys (an int64 scalar)."""
        return torch.tensor(len(self._table), dtype=torch.int64)

    def export(self, name: Optional[str] = None) -> tuple:
        """(keys, values) of the table's pairs, as two 1-D arrays."""
        keys, values = list(self._table), list(self._table.values())
        return build(keys, self._key_dtype, (len(keys),)), build(values, self._value_dtype, (len(values),))


class StaticHashTable(_HashTable):
    """A fixed key -> value table filled once by its initializer; `lookup` gives `default_value` for missing
    keys. Keys must have the table's key dtype (a TypeError otherwise, as in TF)."""

    def __init__(self, initializer: Any, default_value: Any, name: Optional[str] = None,
                 experimental_is_anonymous: bool = False):
        super().__init__(initializer.key_dtype, initializer.value_dtype, default_value, name,
                         "tf.lookup.StaticHashTable")
        initializer.initialize(self)

    @property
    def default_value(self) -> Any:
        return self._default

    def lookup(self, keys: Any, name: Optional[str] = None) -> Any:
        """The value of each key (`default_value` where absent), in the keys' shape."""
        return self._lookup(keys, None)


class StaticVocabularyTable:
    """Ids for a vocabulary: a known key gives its value; an unknown one gives vocab_size + its FarmHash
    Fingerprint64 bucket among `num_oov_buckets` (TF's tf.strings.to_hash_bucket_fast; integer keys are hashed
    as their decimal strings, as in TF)."""

    def __init__(self, initializer: Any, num_oov_buckets: int, lookup_key_dtype: Any = None,
                 name: Optional[str] = None, experimental_is_anonymous: bool = False):
        if int(num_oov_buckets) <= 0:
            raise ValueError(f"tf.lookup.StaticVocabularyTable: num_oov_buckets must be > 0, got {num_oov_buckets}.")
        self._buckets = int(num_oov_buckets)
        self._table = StaticHashTable(initializer, -1, name=name)
        if self._table.value_dtype not in (torch.int32, torch.int64):
            raise TypeError(f"tf.lookup.StaticVocabularyTable: the initializer's values must be int64 ids, got "
                            f"{dtype_name(self._table.value_dtype)}.")
        self._key_dtype = dtype_of(lookup_key_dtype) or self._table.key_dtype
        self._name = self._table.name

    @property
    def key_dtype(self) -> Any:
        return self._key_dtype

    @property
    def value_dtype(self) -> torch.dtype:
        return torch.int64

    @property
    def name(self) -> str:
        return self._name

    @property
    def resource_handle(self) -> "StaticVocabularyTable":
        """The table itself (there is no separate resource handle here)."""
        return self

    def size(self, name: Optional[str] = None) -> torch.Tensor:
        """Vocabulary size plus the number of out-of-vocabulary buckets (int64)."""
        return torch.tensor(int(self._table.size()) + self._buckets, dtype=torch.int64)

    def lookup(self, keys: Any, name: Optional[str] = None) -> torch.Tensor:
        """The id of each key: its value, or vocab_size + its hash bucket when it is not in the vocabulary."""
        array = check_keys(keys, self._key_dtype, "tf.lookup.StaticVocabularyTable.lookup")
        ids = self._table.lookup(array).to(torch.int64)
        text = array if isinstance(array, np.ndarray) else as_string(array)
        buckets = to_hash_bucket_fast(text, self._buckets) + int(self._table.size())
        return torch.where(ids >= 0, ids, buckets.reshape(ids.shape))


class MutableHashTable(_HashTable):
    """A key -> value table to insert into and remove from (tf.lookup.experimental.MutableHashTable)."""

    def __init__(self, key_dtype: Any, value_dtype: Any, default_value: Any, name: str = "MutableHashTable",
                 checkpoint: bool = True, experimental_is_anonymous: bool = False):
        super().__init__(dtype_of(key_dtype), dtype_of(value_dtype), default_value, name,
                         "tf.lookup.experimental.MutableHashTable")

    def insert(self, keys: Any, values: Any, name: Optional[str] = None) -> None:
        """Adds (or replaces) the pairs keys[i] -> values[i]."""
        key_array = as_array(keys, self._key_dtype, "keys")
        value_array = as_array(values, self._value_dtype, "values")
        keys_list, values_list = python_items(key_array), python_items(value_array)
        if len(keys_list) != len(values_list):
            raise InvalidArgumentError(None, None, f"{self._what}.insert: {len(keys_list)} keys but {len(values_list)} values.")
        self._check_insertable(keys_list)
        self._fill(keys_list, values_list)

    def _check_insertable(self, keys: list) -> None:
        del keys

    def remove(self, keys: Any, name: Optional[str] = None) -> None:
        """Removes the keys (absent ones are ignored)."""
        for key in python_items(as_array(keys, self._key_dtype, "keys")):
            self._table.pop(key, None)

    def lookup(self, keys: Any, dynamic_default_values: Any = None, name: Optional[str] = None) -> Any:
        """The value of each key; where absent, `dynamic_default_values` (one per key) or the default value."""
        defaults = None
        if dynamic_default_values is not None:
            defaults = python_items(as_array(dynamic_default_values, self._value_dtype, "dynamic_default_values"))
        return self._lookup(keys, defaults)


class DenseHashTable(MutableHashTable):
    """A mutable key -> value table with reserved `empty_key` and `deleted_key` values that may not be inserted
    (tf.lookup.experimental.DenseHashTable; here a dict, so the buckets are not preallocated)."""

    def __init__(self, key_dtype: Any, value_dtype: Any, default_value: Any, empty_key: Any, deleted_key: Any,
                 initial_num_buckets: Optional[int] = None, name: str = "MutableDenseHashTable",
                 checkpoint: bool = True, experimental_is_anonymous: bool = False):
        super().__init__(key_dtype, value_dtype, default_value, name=name)
        self._what = "tf.lookup.experimental.DenseHashTable"
        self._reserved = {python_items(as_array([empty_key], self._key_dtype, "empty_key"))[0]: "empty_key",
                          python_items(as_array([deleted_key], self._key_dtype, "deleted_key"))[0]: "deleted_key"}
        if len(self._reserved) != 2:
            raise ValueError("tf.lookup.experimental.DenseHashTable: empty_key and deleted_key must differ.")

    def _check_insertable(self, keys: list) -> None:
        for key in keys:
            if key in self._reserved:
                raise InvalidArgumentError(None, None, f"{self._what}: using the {self._reserved[key]} as a table key is not "
                                           "allowed.")

    def lookup(self, keys: Any, name: Optional[str] = None) -> Any:  # type: ignore[override]
        """The value of each key (the default value where absent)."""
        return self._lookup(keys, None)

    def insert_or_assign(self, keys: Any, values: Any, name: Optional[str] = None) -> None:
        """The same as `insert` (an existing key's value is replaced)."""
        self.insert(keys, values)

    def erase(self, keys: Any, name: Optional[str] = None) -> None:
        """The same as `remove`."""
        self.remove(keys)
