"""`tf.data.FixedLengthRecordDataset`: records of `record_bytes` bytes from binary files (after an optional
header, before an optional footer; plain, GZIP or ZLIB), as scalar byte strings."""
from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from torchstrategy.data._records import TFRecordDataset, _file_names, _scalar_string
from torchstrategy.data._text import _open
from torchstrategy.data.dataset import AUTOTUNE, Dataset
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.io.tfrecord import compression_name


def _size(value: Any, name: str, minimum: int) -> int:
    if value is None:
        return 0
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise TypeError(f"FixedLengthRecordDataset: {name} must be an integer, got {value!r}.") from None
    if number < minimum:
        raise ValueError(f"FixedLengthRecordDataset: {name} must be >= {minimum}, got {number}.")
    return number


class FixedLengthRecordDataset(TFRecordDataset):
    """`tf.data.FixedLengthRecordDataset(filenames, record_bytes, header_bytes=None, footer_bytes=None,
    buffer_size=None, compression_type=None, num_parallel_reads=None)`.

    Each file is `header_bytes`, then records of exactly `record_bytes`, then `footer_bytes`; elements are the
    records as scalar strings (0-d NumPy object arrays holding bytes). A body that is not a whole number of
    records raises InvalidArgumentError naming the file, as TF does. num_parallel_reads interleaves files as TF.

    >>> [r.item() for r in tf.data.FixedLengthRecordDataset("data.bin", record_bytes=4)]  # doctest: +SKIP
    [b'\\x00\\x01\\x02\\x03', ...]
    """

    _op = "FixedLengthRecordDataset"

    def __init__(self, filenames: Any, record_bytes: int, header_bytes: Optional[int] = None,
                 footer_bytes: Optional[int] = None, buffer_size: Optional[int] = None,
                 compression_type: Optional[str] = None, num_parallel_reads: Optional[int] = None,
                 name: Optional[str] = None):
        self._files = _file_names(filenames, self._op)
        Dataset.__init__(self, (self._files,) if isinstance(self._files, Dataset) else ())
        self._record = _size(record_bytes, "record_bytes", 1)
        self._header, self._footer = _size(header_bytes, "header_bytes", 0), _size(footer_bytes, "footer_bytes", 0)
        self._compression = compression_name(compression_type, self._op)
        if num_parallel_reads is not None and num_parallel_reads != AUTOTUNE and (
                not isinstance(num_parallel_reads, int) or num_parallel_reads < 1):
            raise ValueError(f"{self._op}: num_parallel_reads must be a positive integer, tf.data.AUTOTUNE or "
                             f"None, got {num_parallel_reads!r}.")
        self._parallel = num_parallel_reads

    def _state_config(self) -> dict:
        return {"record_bytes": self._record, "header_bytes": self._header, "footer_bytes": self._footer}

    def _records(self, path: str) -> Iterator[np.ndarray]:
        with _open(path, self._compression, self._op) as stream:
            data = stream.read()
        body = len(data) - self._header - self._footer
        if body < 0 or body % self._record:
            raise InvalidArgumentError(None, None,
                                       f"{self._op}: Excluding the header ({self._header} bytes) and footer "
                                       f"({self._footer} bytes), input file {path!r} has body length {max(body, 0)}, "
                                       f"which is not an exact multiple of the record length ({self._record} bytes). "
                                       f"Check record_bytes, header_bytes and footer_bytes.")
        for start in range(self._header, self._header + body, self._record):
            yield _scalar_string(data[start:start + self._record])
