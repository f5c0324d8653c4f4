"""`tf.data.experimental.SqlDataset`: the rows of an SQL query against a SQLite database (TF's only driver),
each row a tuple of scalars of the given output_types."""
from __future__ import annotations

import os
import sqlite3
from typing import Any, Iterator, Optional

import numpy as np
import torch

from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import UNKNOWN_CARDINALITY, Dataset
from torchstrategy.dtypes import as_dtype

_STRING = np.dtype(object)


def _kind(dtype: Any) -> Any:
    if dtype in (str, bytes, np.object_) or getattr(dtype, "name", None) == "string" or (
            isinstance(dtype, np.dtype) and dtype.kind in "OSU"):
        return _STRING
    return as_dtype(dtype)


def _text(value: Any, what: str) -> str:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"SqlDataset: {what} must be a string, got {type(value).__name__}.")


class SqlDataset(Dataset):
    """`tf.data.experimental.SqlDataset(driver_name, data_source_name, query, output_types)`.

    driver_name must be "sqlite"; data_source_name is the database file; every row of `query` becomes a tuple
    with one scalar per column, converted to output_types (tf.string gives a 0-d object array of bytes). The
    query runs again at each pass.

    >>> ds = SqlDataset("sqlite", "/tmp/people.db", "SELECT name, age FROM people", (tf.string, tf.int32))
    """

    def __init__(self, driver_name: Any, data_source_name: Any, query: Any, output_types: Any):
        super().__init__()
        driver = _text(driver_name, "driver_name")
        if driver != "sqlite":
            raise ValueError(f"SqlDataset: driver_name must be 'sqlite' (TF's only driver), got {driver!r}.")
        self._source, self._query = _text(data_source_name, "data_source_name"), _text(query, "query")
        types = output_types if isinstance(output_types, (tuple, list)) else (output_types,)
        self._single = not isinstance(output_types, (tuple, list))
        self._kinds = [_kind(dtype) for dtype in types]

    def _convert(self, value: Any, kind: Any, column: int) -> Any:
        if kind is _STRING:
            scalar = np.empty((), dtype=object)
            scalar[()] = value if isinstance(value, bytes) else str(value).encode("utf-8")
            return scalar
        if value is None:
            raise ValueError(f"SqlDataset: column {column} of a row of {self._query!r} is NULL; TF cannot hold NULL "
                             f"in a tensor. Filter NULLs out in the query (WHERE ... IS NOT NULL or COALESCE).")
        try:
            if kind == torch.bool:
                return torch.tensor(bool(int(value)))
            return torch.tensor(float(value) if kind.is_floating_point else int(value), dtype=kind)
        except (TypeError, ValueError):
            raise ValueError(f"SqlDataset: column {column} holds {value!r}, which is not a {kind}. Fix output_types "
                             f"or cast in the query.") from None

    def _iterate_elements(self) -> Iterator[Any]:
        if not os.path.exists(self._source):
            raise FileNotFoundError(f"SqlDataset: no database file {self._source!r}.")
        connection = sqlite3.connect(f"file:{self._source}?mode=ro", uri=True)
        try:
            cursor = connection.execute(self._query)
            if cursor.description is None or len(cursor.description) != len(self._kinds):
                columns = 0 if cursor.description is None else len(cursor.description)
                raise ValueError(f"SqlDataset: the query gives {columns} columns but output_types has "
                                 f"{len(self._kinds)}; give one type per selected column.")
            for row in cursor:
                values = tuple(self._convert(value, kind, column)
                               for column, (value, kind) in enumerate(zip(row, self._kinds)))
                yield values[0] if self._single else values
        except sqlite3.Error as error:
            raise ValueError(f"SqlDataset: the query {self._query!r} failed on {self._source!r}: {error}.") from None
        finally:
            connection.close()

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        specs = tuple(TensorSpec((), kind) for kind in self._kinds)
        return specs[0] if self._single else specs
