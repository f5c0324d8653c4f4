"""`tf.io`: TFRecord files (TFRecordWriter, TFRecordOptions), tf.train.Example parsing (parse_single_example,
parse_example, FixedLenFeature, VarLenFeature), read_file and write_file; tf.io.gfile is in io/gfile.py."""
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


def __getattr__(name: str) -> Any:
    """TF also names the image codecs under tf.io (tf.io.decode_png ...); they live in torchstrategy.image."""
    if name in ("decode_image", "decode_jpeg", "decode_png", "encode_jpeg", "encode_png"):
        from torchstrategy import image

        return getattr(image, name)
    if name == "gfile":
        import importlib

        return importlib.import_module("torchstrategy.io.gfile")
    raise AttributeError(f"module 'torchstrategy.io' has no attribute '{name}'")

__all__ = ["DataLossError", "FixedLenFeature", "InvalidArgumentError", "SparseTensor", "TFRecordOptions",
           "TFRecordWriter", "VarLenFeature", "parse_example", "parse_single_example", "read_file",
           "write_file"]


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


def write_file(filename: Union[str, os.PathLike, Any], contents: Any, name: Optional[str] = None) -> None:
    """Writes the scalar string `contents` (bytes, str or a 0-d object array) to `filename`, replacing it
    and creating missing parent directories, as `tf.io.write_file` does.

    >>> write_file("/tmp/note.txt", b"hello")  # doctest: +SKIP
    """
    path = os.fspath(_scalar(filename, "filename").decode("utf-8"))
    data = _scalar(contents, "contents")
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def _scalar(value: Any, what: str) -> bytes:
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise ValueError(f"tf.io.write_file: {what} must be a scalar string, got an array of shape {value.shape}.")
        value = value.item()
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    raise TypeError(f"tf.io.write_file: {what} must be a string (bytes or str), got {type(value).__name__}.")
