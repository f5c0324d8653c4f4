"""`tf.io`: TFRecord files, tf.train.(Sequence)Example parsing and its feature specs, TensorProto bytes, the byte
string codecs, read_file / write_file / matching_files; tf.io.gfile is io/gfile.py, the image codecs tf.image's."""
from __future__ import annotations

import os
from typing import Any, Optional, Union

import numpy as np

from torchstrategy.io.codecs import (decode_base64, decode_compressed, decode_csv, decode_json_example, decode_raw,
                                     encode_base64)
from torchstrategy.io.features import FixedLenSequenceFeature, RaggedFeature, SparseFeature
from torchstrategy.io.parsing import (FixedLenFeature, InvalidArgumentError, SparseTensor, VarLenFeature, parse_example,
                                      parse_single_example)
from torchstrategy.io.sequence_parsing import parse_sequence_example, parse_single_sequence_example
from torchstrategy.io.tensor_proto import (deserialize_many_sparse, parse_tensor, serialize_many_sparse, serialize_sparse,
                                           serialize_tensor)
from torchstrategy.io.tfrecord import DataLossError, TFRecordOptions, TFRecordWriter


_IMAGE_CODECS = ("decode_and_crop_jpeg", "decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png",
                 "decode_webp", "encode_jpeg", "encode_png", "extract_jpeg_shape", "is_jpeg")


def __getattr__(name: str) -> Any:
    """TF also names the image codecs under tf.io (tf.io.decode_png ...); they live in torchstrategy.image."""
    if name in _IMAGE_CODECS:
        from torchstrategy import image

        return getattr(image, name)
    if name == "gfile":
        import importlib

        return importlib.import_module("torchstrategy.io.gfile")
    raise AttributeError(f"module 'torchstrategy.io' has no attribute '{name}'")

__all__ = ["DataLossError", "FixedLenFeature", "FixedLenSequenceFeature", "InvalidArgumentError", "RaggedFeature",
           "SparseFeature", "SparseTensor", "TFRecordOptions", "TFRecordWriter", "VarLenFeature", "decode_base64",
           "decode_compressed", "decode_csv", "decode_json_example", "decode_raw", "deserialize_many_sparse",
           "encode_base64", "match_filenames_once", "matching_files", "parse_example", "parse_sequence_example",
           "parse_single_example", "parse_single_sequence_example", "parse_tensor", "read_file", "serialize_many_sparse",
           "serialize_sparse", "serialize_tensor", "write_file"]


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


def matching_files(pattern: Any, name: Optional[str] = None) -> np.ndarray:
    """The file names matching the glob `pattern` (a string or a list of them) as a sorted 1-D string array
    (bytes); no match gives an empty array, as TF.

    >>> matching_files("/etc/host*")  # doctest: +SKIP
    array([b'/etc/host.conf', b'/etc/hostname', b'/etc/hosts'], dtype=object)
    """
    import glob

    patterns = pattern.reshape(-1).tolist() if isinstance(pattern, np.ndarray) else (
        [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern))
    names = set()
    for item in patterns:
        names.update(glob.glob(os.fsdecode(item)))
    out = np.empty(len(names), dtype=object)
    out[:] = [os.fsencode(found) for found in sorted(names)]
    return out


def match_filenames_once(pattern: Any, name: Optional[str] = None) -> np.ndarray:
    """matching_files(pattern), evaluated now (TF 1's graph variable holding the list, run once)."""
    return matching_files(pattern)
