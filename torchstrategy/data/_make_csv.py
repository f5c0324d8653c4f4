"""`tf.data.experimental.make_csv_dataset`: batched dicts of CSV columns read with CsvDataset, with TF's
column type inference (int32, int64, float32, float64, string) from the first rows."""
from __future__ import annotations

import glob
import os
from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.data._text import CsvDataset, _lines, _split_records
from torchstrategy.data.dataset import AUTOTUNE, Dataset
from torchstrategy.io.tfrecord import compression_name


def _fits(raw: bytes, kind: Any) -> bool:
    try:
        if kind in (torch.int32, torch.int64):
            limit = 2**31 if kind == torch.int32 else 2**63
            return -limit <= int(raw) < limit
        value = float(raw)
        return kind == torch.float64 or not np.isfinite(value) or abs(value) <= float(np.finfo(np.float32).max)
    except ValueError:
        return False


def _infer_kinds(paths: list, count: int, rows: int, header: bool, delim: bytes, quoted: bool, na: bytes,
                 compression: str) -> list:
    """TF's inference: per column the first of int32, int64, float32, float64, string that every non-empty
    value of the first `rows` records (over the files in order) fits; a column with no values is string."""
    order = [torch.int32, torch.int64, torch.float32, torch.float64, "string"]
    levels: list = [None] * count
    seen = 0
    for path in paths:
        lines = _lines(path, compression, "make_csv_dataset")
        if header:
            next(lines, None)
        for number, fields in _split_records(lines, delim, quoted):
            if seen >= rows:
                break
            seen += 1
            if len(fields) != count:
                raise ValueError(f"make_csv_dataset: {path!r}, line {number + header} has {len(fields)} fields, "
                                 f"expected {count} (one per column name); fix the file or the column names.")
            for column, raw in enumerate(fields):
                if raw == b"" or (na and raw == na):
                    continue
                level = levels[column] or 0
                while level < 4 and not _fits(raw, order[level]):
                    level += 1
                levels[column] = level
        lines.close()
    return [order[4 if level is None else level] for level in levels]


def make_csv_dataset(file_pattern: Any, batch_size: int, column_names: Optional[Sequence[str]] = None,
                     column_defaults: Optional[Sequence[Any]] = None, label_name: Optional[str] = None,
                     select_columns: Optional[Sequence[Any]] = None, field_delim: str = ",",
                     use_quote_delim: bool = True, na_value: str = "", header: bool = True,
                     num_epochs: Optional[int] = None, shuffle: bool = True, shuffle_buffer_size: int = 10000,
                     shuffle_seed: Optional[int] = None, prefetch_buffer_size: Optional[int] = None,
                     num_parallel_reads: Optional[int] = None, sloppy: bool = False,
                     num_rows_for_inference: int = 100, compression_type: Optional[str] = None,
                     ignore_errors: bool = False, encoding: str = "utf-8") -> Dataset:
    """`tf.data.experimental.make_csv_dataset`: batches of `{column name: batched column}` (or
    `(features, label)` with `label_name`) read from the CSV files matching `file_pattern`.

    Column names come from the header unless given; column types are inferred from the first
    `num_rows_for_inference` rows as TF does (int32, int64, float32, float64, else string; empty fields get 0
    or ''), unless `column_defaults` gives them. Repeats `num_epochs` times (None: forever) and shuffles
    unless `shuffle=False`.

    >>> ds = tf.data.experimental.make_csv_dataset("train.csv", batch_size=32, label_name="y", num_epochs=1)
    """
    if encoding.replace("-", "").lower() != "utf8":
        raise NotImplementedError(f"make_csv_dataset(encoding={encoding!r}) is not supported: CSV files are read "
                                  "as UTF-8 here.")
    op = "make_csv_dataset"
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) else list(file_pattern)
    paths: list = []
    for pattern in patterns:
        pattern = os.fsdecode(pattern)
        matched = sorted(glob.glob(pattern))
        if not matched:
            raise ValueError(f"{op}: no files match {pattern!r}. Check the path or the glob pattern.")
        paths.extend(matched)
    delim = field_delim.encode() if isinstance(field_delim, str) else field_delim
    na = na_value.encode() if isinstance(na_value, str) else na_value
    compression = compression_name(compression_type, op)
    if column_names is None:
        if not header:
            raise ValueError(f"{op}: with header=False, pass column_names.")
        lines = _lines(paths[0], compression, op)
        first = next(_split_records(lines, delim, use_quote_delim), None)
        lines.close()
        if first is None:
            raise ValueError(f"{op}: {paths[0]!r} is empty, so it has no header with column names.")
        column_names = [field.decode() for field in first[1]]
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError(f"{op}: column names must be unique, got {column_names}.")
    columns = list(range(len(column_names)))
    if select_columns is not None:
        columns = sorted(column_names.index(c) if isinstance(c, str) and c in column_names else c
                         for c in select_columns)
        bad = [c for c in columns if not isinstance(c, int) or not 0 <= c < len(column_names)]
        if bad:
            raise ValueError(f"{op}: select_columns {bad} are not column names or indices of {column_names}.")
    if label_name is not None and label_name not in [column_names[c] for c in columns]:
        raise ValueError(f"{op}: label_name {label_name!r} is not among the (selected) columns "
                         f"{[column_names[c] for c in columns]}.")
    if column_defaults is None:
        kinds = _infer_kinds(paths, len(column_names), num_rows_for_inference, header, delim,
                             use_quote_delim, na, compression)
        column_defaults = [b"" if kinds[c] == "string" else torch.zeros((), dtype=kinds[c]) for c in columns]
    elif len(column_defaults) != len(columns):
        raise ValueError(f"{op}: column_defaults has {len(column_defaults)} entries for {len(columns)} columns.")
    names = [column_names[c] for c in columns]
    files = Dataset.from_tensor_slices(np.array(paths, dtype=object))
    if shuffle:
        files = files.shuffle(len(paths), seed=shuffle_seed)

    def read(path: Any) -> Dataset:
        return CsvDataset(path, column_defaults, compression_type=compression_type, header=header,
                          field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                          select_cols=columns)

    cycle = (1 if num_parallel_reads in (None, 1) else len(paths) if num_parallel_reads == AUTOTUNE
             else num_parallel_reads)
    dataset = files.interleave(read, cycle_length=cycle)
    if ignore_errors:
        dataset = dataset.ignore_errors()
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)

    def to_dict(*values: Any) -> Any:
        features = dict(zip(names, values))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    dataset = dataset.batch(batch_size).map(to_dict)
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)
