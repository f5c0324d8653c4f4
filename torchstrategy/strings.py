"""`tf.strings`: element-wise string ops over the project's string tensors, NumPy object arrays of bytes
(0-d for a scalar string); numeric results (length, to_number) come back as torch tensors."""
from __future__ import annotations

import re
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import as_bytes as _as_bytes, byte_strings as _strings
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.ragged import RaggedTensor
from torchstrategy.strings_more import (  # noqa: F401,A004
    bytes_split, format, ngrams, to_hash_bucket, to_hash_bucket_strong, unsorted_segment_join)
from torchstrategy.strings_unicode import (unicode_decode, unicode_decode_with_offsets, unicode_encode,  # noqa: F401
                                          unicode_script, unicode_split, unicode_split_with_offsets,
                                          unicode_transcode)

__all__ = ["length", "lower", "upper", "split", "join", "regex_replace", "regex_full_match", "to_number",
           "as_string", "substr", "strip", "reduce_join", "to_hash_bucket_fast", "bytes_split", "format", "ngrams",
           "to_hash_bucket", "to_hash_bucket_strong", "unsorted_segment_join", "unicode_decode",
           "unicode_decode_with_offsets", "unicode_encode", "unicode_script", "unicode_split",
           "unicode_split_with_offsets", "unicode_transcode"]


def _map(fn: Any, array: np.ndarray) -> np.ndarray:
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = fn(item)
    return out


def length(input: Any, unit: str = "BYTE", name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The length of each string in bytes, or in Unicode code points with unit='UTF8_CHAR' (int32).

    >>> length(["ab", "héllo"]).tolist()
    [2, 6]
    """
    array = _strings(input, "tf.strings.length")
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"tf.strings.length: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}.")
    size = len if unit == "BYTE" else (lambda item: len(item.decode("utf-8")))
    counts = np.array([size(item) for item in array.reshape(-1)], dtype=np.int32).reshape(array.shape)
    return torch.from_numpy(counts)


def to_hash_bucket_fast(input: Any, num_buckets: int, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Each string's FarmHash Fingerprint64 mod `num_buckets` (int64), TF's buckets exactly.

    >>> to_hash_bucket_fast(["cat", "dog"], 10).shape
    torch.Size([2])
    """
    from torchstrategy._machinery.farmhash import hash_bucket

    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)) or num_buckets < 1:
        raise ValueError(f"tf.strings.to_hash_bucket_fast: num_buckets must be a positive integer, got {num_buckets!r}.")
    array = _strings(input, "tf.strings.to_hash_bucket_fast")
    buckets = [hash_bucket(item, int(num_buckets)) for item in array.reshape(-1)]
    return torch.tensor(buckets, dtype=torch.int64).reshape(array.shape)


def lower(input: Any, encoding: str = "", name: Optional[str] = None) -> np.ndarray:  # noqa: A002
    """Lower-cased strings (ASCII letters only unless encoding='utf-8', as in TF)."""
    array = _strings(input, "tf.strings.lower")
    if encoding.lower().replace("-", "") == "utf8":
        return _map(lambda item: item.decode("utf-8").lower().encode("utf-8"), array)
    return _map(bytes.lower, array)


def upper(input: Any, encoding: str = "", name: Optional[str] = None) -> np.ndarray:  # noqa: A002
    """Upper-cased strings (ASCII letters only unless encoding='utf-8')."""
    array = _strings(input, "tf.strings.upper")
    if encoding.lower().replace("-", "") == "utf8":
        return _map(lambda item: item.decode("utf-8").upper().encode("utf-8"), array)
    return _map(bytes.upper, array)


def strip(input: Any, name: Optional[str] = None) -> np.ndarray:  # noqa: A002
    """Strings with leading and trailing whitespace removed."""
    return _map(bytes.strip, _strings(input, "tf.strings.strip"))


def split(input: Any, sep: Any = None, maxsplit: int = -1, name: Optional[str] = None) -> Any:  # noqa: A002
    """Splits on `sep` (runs of whitespace when None, dropping empty pieces). A scalar gives a 1-D object
    array; a 1-D input gives a RaggedTensor of bytes pieces, one row per string, as TF does.

    >>> split("a,b", ",").tolist()
    [b'a', b'b']
    """
    array = _strings(input, "tf.strings.split")
    separator = None if sep is None else _as_bytes(sep, "tf.strings.split")
    if separator == b"":
        raise ValueError("tf.strings.split: sep must not be empty; use tf.strings.bytes_split for characters.")

    def pieces(item: bytes) -> np.ndarray:
        parts = item.split(separator, int(maxsplit)) if separator is not None else item.split(None, int(maxsplit))
        out = np.empty(len(parts), dtype=object)
        out[:] = parts
        return out

    if array.ndim == 0:
        return pieces(array.item())
    if array.ndim != 1:
        raise ValueError(f"tf.strings.split supports scalar or 1-D inputs here, got shape {array.shape}.")
    rows = [pieces(item) for item in array]
    flat = np.empty(sum(len(row) for row in rows), dtype=object)
    flat[:] = [piece for row in rows for piece in row]
    return RaggedTensor.from_row_lengths(flat, [len(row) for row in rows], validate=False)


def join(inputs: Any, separator: str = "", name: Optional[str] = None) -> np.ndarray:
    """Joins a list of string tensors element-wise (broadcast), with `separator` between them.

    >>> join(["a", "b"], separator="-").item()
    b'a-b'
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("tf.strings.join needs a non-empty list of string tensors.")
    arrays = np.broadcast_arrays(*[_strings(item, "tf.strings.join") for item in inputs])
    glue = _as_bytes(separator, "tf.strings.join")
    out = np.empty(arrays[0].shape, dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = glue.join(array[index] for array in arrays)
    return out


def reduce_join(inputs: Any, axis: Any = None, keepdims: bool = False, separator: str = "",
                name: Optional[str] = None) -> np.ndarray:
    """Joins the strings along `axis` (all axes when None) with `separator`.

    >>> reduce_join([["a", "b"], ["c", "d"]], axis=1, separator=",").tolist()
    [b'a,b', b'c,d']
    """
    array = _strings(inputs, "tf.strings.reduce_join")
    glue = _as_bytes(separator, "tf.strings.reduce_join")
    if axis is None:
        out = np.empty((), dtype=object)
        out[()] = glue.join(array.reshape(-1).tolist())
        return out.reshape([1] * array.ndim) if keepdims else out
    axis = int(axis) % array.ndim
    moved = np.moveaxis(array, axis, -1)
    out = np.empty(moved.shape[:-1], dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = glue.join(moved[index].tolist())
    return np.expand_dims(out, axis) if keepdims else out


def regex_replace(input: Any, pattern: str, rewrite: str, replace_global: bool = True,  # noqa: A002
                  name: Optional[str] = None) -> np.ndarray:
    """Replaces matches of `pattern` with `rewrite` (\\1 refers to groups), every match or only the first.
    Patterns run on Python's `re`, which agrees with TF's RE2 for the common syntax."""
    array = _strings(input, "tf.strings.regex_replace")
    compiled = re.compile(_as_bytes(pattern, "tf.strings.regex_replace"))
    replacement = _as_bytes(rewrite, "tf.strings.regex_replace")
    count = 0 if replace_global else 1
    return _map(lambda item: compiled.sub(replacement, item, count=count), array)


def regex_full_match(input: Any, pattern: str, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """True where the whole string matches `pattern`."""
    array = _strings(input, "tf.strings.regex_full_match")
    compiled = re.compile(_as_bytes(pattern, "tf.strings.regex_full_match"))
    flags = [compiled.fullmatch(item) is not None for item in array.reshape(-1)]
    return torch.tensor(flags, dtype=torch.bool).reshape(array.shape)


def to_number(input: Any, out_type: Any = torch.float32, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Parses each string as a number of `out_type` (float32 by default; int32/int64 need integer text)."""
    array = _strings(input, "tf.strings.to_number")
    dtype = as_dtype(out_type)
    parse = float if dtype.is_floating_point else int
    values = []
    for item in array.reshape(-1):
        try:
            values.append(parse(item.decode("utf-8").strip()))
        except ValueError:
            raise InvalidArgumentError(None, None, f"tf.strings.to_number: {item!r} is not a valid {dtype} number.") from None
    numpy_dtype = torch.empty(0, dtype=dtype).numpy().dtype
    return torch.from_numpy(np.array(values, dtype=numpy_dtype).reshape(array.shape))


def as_string(input: Any, precision: int = -1, scientific: bool = False, shortest: bool = False,  # noqa: A002
              width: int = -1, fill: str = "", name: Optional[str] = None) -> np.ndarray:
    """Numbers formatted as strings: floats as %f (6 decimals unless `precision`), ints as decimal,
    bools as b'true'/b'false', as TF formats them.

    >>> as_string([1.5, 2.0]).tolist()
    [b'1.500000', b'2.000000']
    """
    if isinstance(input, np.ndarray) and input.dtype.kind in "OSU":
        return _strings(input, "tf.strings.as_string")
    array = input.detach().cpu().numpy() if isinstance(input, torch.Tensor) else np.asarray(input)
    if array.dtype.kind in "OSU":
        raise TypeError("tf.strings.as_string takes numbers; the input already holds strings.")
    if array.dtype.kind == "b":
        return _map(lambda item: b"true" if item else b"false", array)
    flag = fill if fill in ("-", "+", " ", "0", "") else ""
    if fill and not flag:
        raise ValueError(f"tf.strings.as_string: fill must be one of '-', '+', ' ', '0' or '', got {fill!r}.")
    size = "" if width < 0 else str(int(width))
    if array.dtype.kind in "iu":
        spec = f"%{flag}{size}d"
    else:
        digits = "" if precision < 0 else f".{int(precision)}"
        kind = "g" if shortest else ("e" if scientific else "f")
        spec = f"%{flag}{size}{digits}{kind}"
    return _map(lambda item: (spec % item).encode("ascii"), array)


def substr(input: Any, pos: int, len: int, unit: str = "BYTE", name: Optional[str] = None) -> np.ndarray:  # noqa: A002
    """`len` bytes (or characters with unit='UTF8_CHAR') starting at `pos` (negative: from the end)."""
    array = _strings(input, "tf.strings.substr")
    start, count = int(pos), int(len)

    def cut(item: bytes) -> bytes:
        text: Any = item if unit == "BYTE" else item.decode("utf-8")
        size = text.__len__()
        begin = start + size if start < 0 else start
        if not 0 <= begin <= size:
            raise InvalidArgumentError(None, None, f"tf.strings.substr: pos {start} is out of range for {item!r}.")
        piece = text[begin:begin + count]
        return piece if unit == "BYTE" else piece.encode("utf-8")

    return _map(cut, array)

