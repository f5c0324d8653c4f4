"""tf.io's byte-string codecs, applied to every string of a string tensor: decode_raw, decode_compressed,
web-safe base64 (decode_base64 / encode_base64), decode_json_example and decode_csv."""
from __future__ import annotations

import base64
import binascii
import gzip
import json
import struct
import zlib
from typing import Any, Callable, List, Optional

import numpy as np
import torch

from torchstrategy._machinery.protobuf import FIXED32, VARINT, encode_length_delimited, encode_varint
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError

__all__ = ["decode_base64", "decode_compressed", "decode_csv", "decode_json_example", "decode_raw", "encode_base64"]


def _strings(value: Any, op: str) -> np.ndarray:
    """A string tensor as an object array of bytes (any shape; a str is UTF-8 encoded)."""
    array = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if isinstance(value, torch.Tensor):
        raise TypeError(f"{op}: expects strings, got a {value.dtype} tensor.")
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        if isinstance(item, str):
            item = item.encode("utf-8")
        if not isinstance(item, (bytes, bytearray, memoryview)):
            raise TypeError(f"{op}: expects strings (bytes or str), got {item!r} of type {type(item).__name__}.")
        out[index] = bytes(item)
    return out


def _each(value: Any, op: str, fn: Callable[[bytes], bytes]) -> np.ndarray:
    array = _strings(value, op)
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = fn(item)
    return out


def encode_base64(input: Any, pad: bool = False, name: Optional[str] = None) -> np.ndarray:  # noqa: A002 (TF's name)
    """Each string in web-safe base64 ('-' and '_' for '+' and '/'), '=' padding only with pad=True."""
    def encode(data: bytes) -> bytes:
        text = base64.urlsafe_b64encode(data)
        return text if pad else text.rstrip(b"=")
    return _each(input, "tf.io.encode_base64", encode)


def decode_base64(input: Any, name: Optional[str] = None) -> np.ndarray:  # noqa: A002 (TF's name)
    """Each web-safe base64 string decoded (padding optional); anything else is InvalidArgumentError."""
    def decode(text: bytes) -> bytes:
        stripped = text.rstrip(b"=")
        if len(stripped) % 4 == 1 or any(c not in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                                         for c in stripped):
            raise InvalidArgumentError(None, None,
                                       f"tf.io.decode_base64: {text[:40]!r} is not web-safe base64 (letters, digits, "
                                       f"'-' and '_', with optional '=' padding).")
        try:
            return base64.urlsafe_b64decode(stripped + b"=" * (-len(stripped) % 4))
        except binascii.Error as error:
            raise InvalidArgumentError(None, None,
                                       f"tf.io.decode_base64: {text[:40]!r} is not valid base64 ({error}).") from None
    return _each(input, "tf.io.decode_base64", decode)


def decode_compressed(bytes: Any, compression_type: str = "", name: Optional[str] = None) -> np.ndarray:  # noqa: A002
    """Each string decompressed: compression_type '' (unchanged), 'ZLIB' or 'GZIP'."""
    op = "tf.io.decode_compressed"
    kind = (compression_type or "").upper()
    if kind not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"{op}: compression_type must be '', 'ZLIB' or 'GZIP', got {compression_type!r}.")

    def decode(data: bytes) -> bytes:
        if not kind:
            return data
        try:
            return zlib.decompress(data) if kind == "ZLIB" else gzip.decompress(data)
        except (zlib.error, OSError, EOFError) as error:
            raise InvalidArgumentError(None, None, f"{op}: the input is not valid {kind} data ({error}).") from None
    return _each(bytes, op, decode)


_RAW_TYPES = (torch.float16, torch.float32, torch.float64, torch.int32, torch.uint16, torch.uint8, torch.int16,
              torch.int8, torch.int64, torch.complex64, torch.complex128, torch.bool, torch.bfloat16)


def decode_raw(input_bytes: Any, out_type: Any, little_endian: bool = True, fixed_length: Optional[int] = None,
               name: Optional[str] = None) -> torch.Tensor:
    """The bytes of each string reinterpreted as numbers of `out_type`: shape input.shape + [n]. Strings must
    all have one length, a multiple of the type's size; fixed_length cuts or zero-pads each to that many bytes.

    >>> decode_raw(b"\\x01\\x00\\x02\\x00", tf.int16).tolist()
    [1, 2]
    """
    op = "tf.io.decode_raw"
    dtype = as_dtype(out_type)
    if dtype not in _RAW_TYPES:
        raise TypeError(f"{op}: out_type {dtype} is not one decode_raw supports.")
    storage = torch.int16 if dtype == torch.bfloat16 else dtype
    numpy_dtype = torch.empty(0, dtype=storage).numpy().dtype
    size = numpy_dtype.itemsize
    array = _strings(input_bytes, op)
    items = list(array.reshape(-1))
    if fixed_length is not None:
        length = int(fixed_length)
        if length % size:
            raise InvalidArgumentError(None, None,
                                       f"{op}: fixed_length ({length}) must be a multiple of the size of out_type "
                                       f"({size} bytes).")
        items = [item[:length].ljust(length, b"\x00") for item in items]
    lengths = {len(item) for item in items}
    if len(lengths) > 1:
        first = len(items[0])
        other = next(index for index, item in enumerate(items) if len(item) != first)
        raise InvalidArgumentError(None, None,
                                   f"{op}: DecodeRaw requires input strings to all be the same size, but element "
                                   f"{other} has size {first} != {len(items[other])}.")
    length = lengths.pop() if lengths else 0
    if length % size:
        raise InvalidArgumentError(None, None,
                                   f"{op}: Input to DecodeRaw has length {length} that is not a multiple of "
                                   f"{size}, the size of {str(dtype).replace('torch.', '')}.")
    order = numpy_dtype.newbyteorder("<" if little_endian else ">") if size > 1 else numpy_dtype
    flat = np.frombuffer(b"".join(items), dtype=order).astype(numpy_dtype)
    tensor = torch.from_numpy(flat.copy()).reshape(array.shape + (length // size,))
    return tensor.view(torch.bfloat16) if dtype == torch.bfloat16 else tensor


# ---------------------------------------------------------------- decode_json_example

# JSON list name -> (Feature field number, how one value is written); TF's JSON parser writes the values of
# a list one field each (not packed), so these bytes are written here directly to match TF's
_LISTS = {"bytesList": 1, "bytes_list": 1, "floatList": 2, "float_list": 2, "int64List": 3, "int64_list": 3}


def _list_payload(number: int, items: list) -> bytes:
    out = bytearray()
    for item in items:
        if number == 1:
            data = base64.b64decode(str(item).replace("-", "+").replace("_", "/"), validate=True)
            encode_length_delimited(1, data, out)
        elif number == 3:
            encode_varint(1 << 3 | VARINT, out)
            encode_varint(int(item), out)
        else:
            encode_varint(1 << 3 | FIXED32, out)
            out += struct.pack("<f", float(item))
    return bytes(out)


def _json_to_example(text: bytes) -> bytes:
    where = "tf.io.decode_json_example"
    try:
        message = json.loads(text.decode("utf-8"))
        if set(message) - {"features"}:
            raise KeyError(sorted(set(message) - {"features"})[0])
        entries = bytearray()
        for key, value in ((message.get("features") or {}).get("feature") or {}).items():
            feature = bytearray()
            for list_name, content in (value or {}).items():
                number = _LISTS[list_name]
                encode_length_delimited(number, _list_payload(number, list((content or {}).get("value", []))),
                                        feature)
            entry = bytearray()
            encode_length_delimited(1, key.encode("utf-8"), entry)
            encode_length_delimited(2, bytes(feature), entry)
            encode_length_delimited(1, bytes(entry), entries)
        out = bytearray()
        if message.get("features") is not None:
            encode_length_delimited(1, bytes(entries), out)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as error:
        raise InvalidArgumentError(None, None,
                                   f"{where}: the JSON is not a tf.train.Example ({type(error).__name__}: {error}). "
                                   f"Expected {{\"features\": {{\"feature\": {{name: {{\"int64List\": {{\"value\": "
                                   f"[...]}}}}}}}}}}.") from None
    return bytes(out)


def decode_json_example(json_examples: Any, name: Optional[str] = None) -> np.ndarray:
    """Each JSON-encoded tf.train.Example (protobuf's JSON mapping) as its binary serialization."""
    return _each(json_examples, "tf.io.decode_json_example", _json_to_example)


# ---------------------------------------------------------------- decode_csv


def _fields(record: bytes, delim: bytes, quoted: bool, where: str) -> List[bytes]:
    if not quoted:
        return record.split(delim)
    out, position, size = [], 0, len(record)
    while True:
        if position < size and record[position:position + 1] == b'"':
            field, position = bytearray(), position + 1
            while True:
                end = record.find(b'"', position)
                if end < 0:
                    raise InvalidArgumentError(None, None,
                                               f"{where}: Quoted field has to end with quote followed by delim or "
                                               f"end.")
                field += record[position:end]
                if record[end + 1:end + 2] == b'"':
                    field += b'"'
                    position = end + 2
                    continue
                position = end + 1
                break
            if position < size and record[position:position + len(delim)] != delim:
                raise InvalidArgumentError(None, None,
                                           f"{where}: Quoted field has to end with quote followed by delim or end.")
            out.append(bytes(field))
        else:
            end = record.find(delim, position)
            end = size if end < 0 else end
            field = record[position:end]
            if b'"' in field:
                raise InvalidArgumentError(None, None, f"{where}: Unquoted fields cannot have quotes inside.")
            out.append(field)
            position = end
        if position >= size:
            return out
        position += len(delim)
        if position == size:
            out.append(b"")
            return out


def _default_of(value: Any, index: int) -> tuple:
    """(dtype or 'string', default value or None when the column is required) of one record_defaults entry."""
    if isinstance(value, torch.Tensor):
        return value.dtype, (value.reshape(-1)[0] if value.numel() else None)
    array = np.asarray(value, dtype=object if isinstance(value, (str, bytes)) or (
        isinstance(value, (list, tuple)) and value and isinstance(value[0], (str, bytes))) else None)
    if array.dtype.kind in "OSU":
        flat = array.reshape(-1)
        item = flat[0] if flat.size else None
        return "string", (item.encode("utf-8") if isinstance(item, str) else item)
    if array.size == 0:
        raise ValueError(f"tf.io.decode_csv: record_defaults[{index}] is empty without a dtype; give a typed empty "
                         f"tensor such as tf.constant([], tf.int32) for a required column.")
    item = array.reshape(-1)[0]
    if isinstance(item, (bool, np.bool_)):
        raise TypeError(f"tf.io.decode_csv: record_defaults[{index}] is a bool; CSV columns are int32, int64, "
                        f"float32, float64 or string.")
    if isinstance(item, (int, np.integer)) and array.dtype.kind in "iu":
        dtype = torch.int64 if array.dtype == np.int64 and not isinstance(value, (int, list, tuple)) else torch.int32
        return dtype, int(item)
    dtype = torch.float64 if array.dtype == np.float64 and isinstance(value, np.ndarray) else torch.float32
    return dtype, float(item)


def decode_csv(records: Any, record_defaults: Any, field_delim: str = ",", use_quote_delim: bool = True,
               na_value: str = "", select_cols: Any = None, name: Optional[str] = None) -> list:
    """Parses CSV records (a string tensor) into one tensor per column, each of the records' shape. The
    dtype of column i is record_defaults[i]'s; an empty field (or na_value) takes its default, and a column
    whose default is empty is required. select_cols picks columns (sorted, as in TF).

    >>> decode_csv([b"1,a", b",b"], [[0], [""]])[0].tolist()
    [1, 0]
    """
    op = "tf.io.decode_csv"
    array = _strings(records, op)
    delim = field_delim.encode("utf-8") if isinstance(field_delim, str) else bytes(field_delim)
    na = na_value.encode("utf-8") if isinstance(na_value, str) else bytes(na_value)
    columns = [_default_of(default, index) for index, default in enumerate(record_defaults)]
    selected = list(range(len(columns))) if select_cols is None else [int(c) for c in select_cols]
    if select_cols is not None:
        if any(b <= a for a, b in zip(selected, selected[1:])) or (selected and selected[0] < 0):
            raise ValueError(f"{op}: select_cols must be sorted in increasing order and >= 0, got {list(select_cols)}.")
        if len(selected) != len(columns):
            raise ValueError(f"{op}: select_cols has {len(selected)} columns but record_defaults has {len(columns)}.")
    values: List[list] = [[] for _ in columns]
    for number, record in enumerate(array.reshape(-1)):
        where = f"{op} (record {number})"
        parts = _fields(record, delim, bool(use_quote_delim), where)
        if select_cols is None and len(parts) != len(columns):
            raise InvalidArgumentError(None, None,
                                       f"{op}: Expect {len(columns)} fields but have {len(parts)} in record {number}")
        if select_cols is not None and selected and len(parts) <= selected[-1]:
            raise InvalidArgumentError(None, None,
                                       f"{op}: record {number} has {len(parts)} fields, fewer than select_cols needs.")
        for out, column in enumerate(selected):
            raw = parts[column]
            dtype, default = columns[out]
            if raw == b"" or raw == na:
                if default is None:
                    raise InvalidArgumentError(None, None,
                                               f"{op}: Field {out} is required but missing in record {number}!")
                values[out].append(default)
                continue
            if dtype == "string":
                values[out].append(raw)
                continue
            text = raw.decode("utf-8", "replace").strip()
            try:
                values[out].append(int(text) if not dtype.is_floating_point else float(text))
            except ValueError:
                kind = str(dtype).replace("torch.", "")
                raise InvalidArgumentError(None, None, f"{op}: Field {out} in record {number} is not a valid {kind}: "
                                           f"{raw.decode('utf-8', 'replace')}") from None
    result = []
    for (dtype, _), column_values in zip(columns, values):
        if dtype == "string":
            out_array = np.empty(len(column_values), dtype=object)
            out_array[:] = [v.item() if isinstance(v, torch.Tensor) else v for v in column_values]
            result.append(out_array.reshape(array.shape))
        else:
            items = [v.item() if isinstance(v, torch.Tensor) else v for v in column_values]
            result.append(torch.tensor(items, dtype=dtype).reshape(array.shape))
    return result
