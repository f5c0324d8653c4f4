"""File sources of tf.data: `TFRecordDataset` (records of TFRecord files, plain/GZIP/ZLIB, as scalar byte
strings held in 0-d NumPy object arrays), reading files in order or interleaved as TF does."""
from __future__ import annotations

import os
from typing import Any, Iterator, Optional

import numpy as np

from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import AUTOTUNE, UNKNOWN_CARDINALITY, Dataset
from torchstrategy.io.tfrecord import compression_name, iterate_records

_STRING = np.dtype(object)  # bytes in an object array: NumPy's "S" dtype would drop trailing NUL bytes


def _scalar_string(data: bytes) -> np.ndarray:
    scalar = np.empty((), dtype=object)
    scalar[()] = data
    return scalar


def _file_name(value: Any, op: str) -> str:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"{op}: `filenames` must hold file names (str), got {value!r} of type "
                    f"{type(value).__name__}.")


def _file_names(filenames: Any, op: str) -> Any:
    """A list of names, or the Dataset of names (read at each pass), from what TF accepts."""
    if isinstance(filenames, Dataset):
        return filenames
    if isinstance(filenames, (str, bytes, os.PathLike)) or (isinstance(filenames, np.ndarray) and filenames.ndim == 0):
        return [_file_name(filenames, op)]
    # a non-sequence becomes a one-item array here and is refused by _file_name
    return [_file_name(name, op) for name in np.asarray(filenames, dtype=object).reshape(-1).tolist()]


class TFRecordDataset(Dataset):
    """`tf.data.TFRecordDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None)`.

    Elements are the records of the files as scalar strings (0-d NumPy object arrays holding bytes;
    `element.item()` is the record). Files are read one after the other, or with num_parallel_reads=n as
    TF's deterministic interleave (cycle of n files, one record from each in turn). A record whose CRC does
    not match raises DataLossError naming the file and the record.

    >>> with tf.io.TFRecordWriter("/tmp/a.tfrecord") as writer:
    ...     writer.write(b"one")
    >>> [r.item() for r in tf.data.TFRecordDataset("/tmp/a.tfrecord")]
    [b'one']
    """

    def __init__(self, filenames: Any, compression_type: Optional[str] = None, buffer_size: Optional[int] = None,
                 num_parallel_reads: Optional[int] = None, name: Optional[str] = None):
        op = "TFRecordDataset"
        self._files = _file_names(filenames, op)
        super().__init__((self._files,) if isinstance(self._files, Dataset) else ())
        self._compression = compression_name(compression_type, op)
        if num_parallel_reads is not None and num_parallel_reads != AUTOTUNE and (
                not isinstance(num_parallel_reads, int) or num_parallel_reads < 1):
            raise ValueError(f"{op}: num_parallel_reads must be a positive integer, tf.data.AUTOTUNE or None, got "
                             f"{num_parallel_reads!r}.")
        self._parallel = num_parallel_reads

    def _names(self) -> Iterator[str]:
        if isinstance(self._files, Dataset):
            for element in self._files._iterate():
                yield _file_name(element, "TFRecordDataset")
        else:
            yield from self._files

    def _records(self, path: str) -> Iterator[np.ndarray]:
        for data in iterate_records(path, self._compression):
            yield _scalar_string(data)

    def _iterate_elements(self) -> Iterator[Any]:
        if self._parallel is None or self._parallel == 1:
            for path in self._names():
                yield from self._records(path)
            return
        # AUTOTUNE puts every file in the cycle
        yield from self._interleaved(self._names(), self._parallel)

    def _interleaved(self, names: Iterator[str], cycle_length: int) -> Iterator[Any]:
        """TF's interleave with block_length=1: slots visited in turn; an exhausted slot is refilled with
        the next file when the cycle comes back to it."""
        names = list(names) if cycle_length == AUTOTUNE else names
        if cycle_length == AUTOTUNE:
            cycle_length, names = max(1, len(names)), iter(names)
        slots: list = [None] * cycle_length
        open_count, inputs_done, index = 0, False, 0
        try:
            while not inputs_done or open_count:
                if slots[index] is not None:
                    try:
                        record = next(slots[index])
                    except StopIteration:
                        slots[index], open_count = None, open_count - 1
                    else:
                        yield record
                    index = (index + 1) % cycle_length
                elif not inputs_done:
                    path = next(names, None)
                    if path is None:
                        inputs_done = True
                    else:
                        slots[index], open_count = self._records(path), open_count + 1
                else:
                    index = (index + 1) % cycle_length
        finally:
            for slot in slots:
                if slot is not None:
                    slot.close()

    def _content_key(self) -> str:
        return "" if isinstance(self._files, Dataset) else repr(list(self._files))

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        return TensorSpec((), _STRING)
