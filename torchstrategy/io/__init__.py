"""`tf.io`: TFRecord files (TFRecordWriter, TFRecordOptions), tf.train.Example parsing (parse_single_example,
parse_example, FixedLenFeature, VarLenFeature) and read_file."""
from __future__ import annotations

import os
from typing import Any, Optional, Union

import numpy as np

from torchstrategy.io.parsing import (
    FixedLenFeature,
    InvalidArgumentError,
    SparseTensor,
    VarLenFeature,
    parse_example,
    parse_single_example,
)
from torchstrategy.io.tfrecord import DataLossError, TFRecordOptions, TFRecordWriter

__all__ = ["DataLossError", "FixedLenFeature", "InvalidArgumentError", "SparseTensor", "TFRecordOptions",
           "TFRecordWriter", "VarLenFeature", "parse_example", "parse_single_example", "read_file"]


def read_file(filename: Union[str, os.PathLike, Any], name: Optional[str] = None) -> np.ndarray:
    """The whole content of `filename` as a scalar string (a 0-d NumPy object array holding bytes).

    >>> read_file("/etc/hostname").item()  # doctest: +SKIP
    b'myhost\\n'
    """
    if isinstance(filename, np.ndarray) and filename.ndim == 0:
        filename = filename.item()
    if isinstance(filename, bytes):
        filename = filename.decode("utf-8")
    try:
        with open(os.fspath(filename), "rb") as handle:
            content = handle.read()
    except OSError as error:
        raise FileNotFoundError(f"tf.io.read_file: cannot read {filename!r} ({error.strerror}).") from None
    scalar = np.empty((), dtype=object)
    scalar[()] = content
    return scalar
