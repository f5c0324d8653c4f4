"""tf.lookup's table initializers: KeyValueTensorInitializer (keys and values given) and TextFileInitializer
(keys and values read from the columns, whole lines or line numbers of a text file), and TextFileIndex."""
from __future__ import annotations

import os
from typing import Any, Optional

from torchstrategy.errors import InvalidArgumentError
from torchstrategy.lookup._keys import STRING, array_dtype, as_array, dtype_name, dtype_of, python_items

__all__ = ["KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex"]


class TextFileIndex:
    """Which part of a vocabulary file's line is the key or value: WHOLE_LINE or LINE_NUMBER (else a column)."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class KeyValueTensorInitializer:
    """A table's contents from two 1-D arrays of one length: keys[i] maps to values[i]."""

    def __init__(self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None,
                 name: Optional[str] = None):
        self._keys = as_array(keys, dtype_of(key_dtype), "tf.lookup.KeyValueTensorInitializer: keys")
        self._values = as_array(values, dtype_of(value_dtype), "tf.lookup.KeyValueTensorInitializer: values")
        self._name = name

    @property
    def key_dtype(self) -> Any:
        return array_dtype(self._keys)

    @property
    def value_dtype(self) -> Any:
        return array_dtype(self._values)

    def initialize(self, table: Any) -> None:
        """Fills `table` (a static table) with the pairs."""
        keys, values = python_items(self._keys), python_items(self._values)
        if len(keys) != len(values):
            raise InvalidArgumentError(None, None, f"tf.lookup.KeyValueTensorInitializer: {len(keys)} keys but {len(values)} "
                                       "values; give one value per key.")
        table._fill(keys, values)  # noqa: SLF001 - the table's loading hook, as TF's initializer calls it


def _part(line: str, number: int, index: int, delimiter: Optional[str], dtype: Any, where: str) -> Any:
    if index == TextFileIndex.LINE_NUMBER:
        return number
    if index == TextFileIndex.WHOLE_LINE:
        text = line
    else:
        columns = line.split(delimiter)
        if index >= len(columns):
            raise InvalidArgumentError(None, None, f"{where}: line {number + 1} has {len(columns)} columns; column {index} "
                                       "was asked for.")
        text = columns[index]
    if dtype is STRING:
        return text.encode("utf-8")
    try:
        return float(text) if dtype.is_floating_point else int(text)
    except ValueError:
        raise InvalidArgumentError(None, None, f"{where}: line {number + 1}: {text!r} is not a {dtype_name(dtype)}.") from None


class TextFileInitializer:
    """A table's contents from a text file: per line, the key and the value are a column (split by `delimiter`),
    the whole line (TextFileIndex.WHOLE_LINE) or the line number (TextFileIndex.LINE_NUMBER, plus
    `value_index_offset` for values)."""

    def __init__(self, filename: Any, key_dtype: Any, key_index: int, value_dtype: Any, value_index: int,
                 vocab_size: Optional[int] = None, delimiter: str = "\t", name: Optional[str] = None,
                 value_index_offset: int = 0):
        self._filename = filename.decode() if isinstance(filename, bytes) else str(filename)
        self._key_dtype, self._value_dtype = dtype_of(key_dtype), dtype_of(value_dtype)
        for label, index, dtype in (("key", key_index, self._key_dtype), ("value", value_index, self._value_dtype)):
            if index < -2:
                raise ValueError(f"tf.lookup.TextFileInitializer: invalid {label}_index {index}.")
            if index == TextFileIndex.LINE_NUMBER and dtype is STRING:
                raise ValueError(f"tf.lookup.TextFileInitializer: a {label} from the line number must be an integer "
                                 "dtype, not string.")
        self._key_index, self._value_index = int(key_index), int(value_index)
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._offset = int(value_index_offset)
        self._name = name

    @property
    def key_dtype(self) -> Any:
        return self._key_dtype

    @property
    def value_dtype(self) -> Any:
        return self._value_dtype

    def initialize(self, table: Any) -> None:
        """Reads the file and fills `table`."""
        where = f"tf.lookup.TextFileInitializer({self._filename!r})"
        if not os.path.isfile(self._filename):
            raise InvalidArgumentError(None, None, f"{where}: no such file.")
        with open(self._filename, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise InvalidArgumentError(None, None, f"{where}: invalid vocab_size: expected {self._vocab_size} but got "
                                           f"{len(lines)}.")
            lines = lines[:self._vocab_size]
        keys, values = [], []
        for number, line in enumerate(lines):
            keys.append(_part(line, number, self._key_index, self._delimiter, self._key_dtype, where))
            value = _part(line, number, self._value_index, self._delimiter, self._value_dtype, where)
            values.append(value + self._offset if self._value_index == TextFileIndex.LINE_NUMBER else value)
        table._fill(keys, values)  # noqa: SLF001
