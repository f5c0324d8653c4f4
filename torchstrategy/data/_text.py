"""Text file sources of tf.data: `TextLineDataset` (lines as scalar byte strings) and `CsvDataset` (typed
CSV records with TF's quoting rules; errors name the file and line). make_csv_dataset is in _make_csv."""
from __future__ import annotations

import gzip
import io
import zlib
from typing import Any, BinaryIO, Iterator, List, Optional, Sequence

import numpy as np
import torch

from torchstrategy.data._records import TFRecordDataset, _file_name, _file_names, _scalar_string
from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import AUTOTUNE, UNKNOWN_CARDINALITY, Dataset
from torchstrategy.io.tfrecord import DataLossError, compression_name

_STRING = np.dtype(object)
_NUMBERS = (torch.int32, torch.int64, torch.float32, torch.float64)


def _open(path: str, compression: str, op: str) -> BinaryIO:
    try:
        raw = open(path, "rb")
    except OSError as error:
        raise FileNotFoundError(f"{op}: cannot open {path!r} ({error.strerror}). Check the file name.") from None
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if compression == "ZLIB":
        with raw:
            try:
                return io.BytesIO(zlib.decompress(raw.read()))
            except zlib.error as error:
                raise DataLossError(None, None, f"{op}: {path!r} is not a valid ZLIB stream ({error}); was it written "
                                    f"with ZLIB compression?") from None
    return raw


def _lines(path: str, compression: str, op: str) -> Iterator[bytes]:
    """The lines of a file without their '\\n' (and, as TF, without a '\\r' before it)."""
    with _open(path, compression, op) as stream:
        try:
            for line in stream:
                if line.endswith(b"\n"):
                    line = line[:-1]
                if line.endswith(b"\r"):
                    line = line[:-1]
                yield line
        except (OSError, EOFError, zlib.error) as error:
            raise DataLossError(None, None, f"{op}: {path!r} is not a valid {compression} stream ({error}).") from None


class TextLineDataset(TFRecordDataset):
    """`tf.data.TextLineDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None)`.

    Elements are the lines of the files (without the line ending) as scalar strings: 0-d NumPy object
    arrays holding bytes, as TFRecordDataset's records. num_parallel_reads interleaves files as TF does.

    >>> [line.item() for line in tf.data.TextLineDataset("notes.txt")]
    [b'first line', b'second line']
    """

    _op = "TextLineDataset"

    def __init__(self, filenames: Any, compression_type: Optional[str] = None, buffer_size: Optional[int] = None,
                 num_parallel_reads: Optional[int] = None, name: Optional[str] = None):
        self._files = _file_names(filenames, self._op)
        Dataset.__init__(self, (self._files,) if isinstance(self._files, Dataset) else ())
        self._compression = compression_name(compression_type, self._op)
        if num_parallel_reads is not None and num_parallel_reads != AUTOTUNE and (
                not isinstance(num_parallel_reads, int) or num_parallel_reads < 1):
            raise ValueError(f"{self._op}: num_parallel_reads must be a positive integer, tf.data.AUTOTUNE or "
                             f"None, got {num_parallel_reads!r}.")
        self._parallel = num_parallel_reads

    def _names(self) -> Iterator[str]:
        if isinstance(self._files, Dataset):
            for element in self._files._iterate():
                yield _file_name(element, self._op)
        else:
            yield from self._files

    def _records(self, path: str) -> Iterator[np.ndarray]:
        for line in _lines(path, self._compression, self._op):
            yield _scalar_string(line)


# ---------------------------------------------------------------- CSV


class _CsvError(ValueError):
    pass


def _split_records(lines: Iterator[bytes], delim: bytes, quoted: bool) -> Iterator[tuple]:
    """(line number from 1, fields as bytes) per record. With `quoted`, a field in double quotes may hold
    delimiters, newlines and "" for a quote; a quote inside an unquoted field is an error (as TF)."""
    number = 0
    for line in lines:
        number += 1
        first, fields, pos = number, [], 0
        while True:
            if quoted and line[pos:pos + 1] == b'"':
                value, pos = bytearray(), pos + 1
                while True:
                    end = line.find(b'"', pos)
                    if end < 0:  # the field goes on on the next line
                        value += line[pos:] + b"\n"
                        line, pos = next(lines, None), 0
                        if line is None:
                            raise _CsvError(f"line {first}: end of file inside a quoted field")
                        number += 1
                    elif line[end + 1:end + 2] == b'"':
                        value += line[pos:end + 1]
                        pos = end + 2
                    else:
                        value += line[pos:end]
                        pos = end + 1
                        break
                fields.append(bytes(value))
                if pos < len(line) and line[pos:pos + len(delim)] != delim:
                    raise _CsvError(f"line {number}: a quoted field must be followed by the delimiter {delim!r}")
            else:
                end = line.find(delim, pos)
                value = line[pos:] if end < 0 else line[pos:end]
                if quoted and b'"' in value:
                    raise _CsvError(f"line {number}: unquoted fields cannot have quotes inside ({value!r}); "
                                    f"quote the field or pass use_quote_delim=False")
                fields.append(value)
                pos = len(line) if end < 0 else end
            if pos >= len(line):
                break
            pos += len(delim)
            if pos == len(line):  # a trailing delimiter: one more, empty field
                fields.append(b"")
                break
        yield first, fields


def _string_kind(value: Any) -> bool:
    """Whether a record_defaults entry names the string type (torch has none: str, bytes or object dtype)."""
    if isinstance(value, type) and value in (str, bytes, np.str_, np.bytes_, np.object_):
        return True
    return isinstance(value, np.dtype) and value.kind in "OSU"


def _column_kind(default: Any, op: str, index: int) -> tuple:
    """(dtype or 'string', default value or None when required) for one record_defaults entry."""
    if _string_kind(default):
        return "string", None
    if isinstance(default, torch.dtype):  # a Python str is a default value, as tf.constant("...") in TF
        dtype = default
        if dtype not in _NUMBERS:
            raise TypeError(f"{op}: record_defaults[{index}] has dtype {dtype}; CSV columns are int32, int64, "
                            f"float32, float64 or string.")
        return dtype, None
    if isinstance(default, (str, bytes)):
        return "string", default.encode() if isinstance(default, str) else default
    if isinstance(default, np.ndarray) and default.dtype.kind in "OSU":
        item = default.reshape(-1)[0] if default.size else b""
        return "string", item.encode() if isinstance(item, str) else item
    if isinstance(default, (list, tuple)) and len(default) == 0:
        raise TypeError(f"{op}: record_defaults[{index}] is empty; give a dtype (required column) or a default.")
    tensor = torch.as_tensor(default.item() if isinstance(default, np.ndarray) else default)
    if isinstance(default, float):
        tensor = tensor.to(torch.float32)
    elif isinstance(default, int) and not isinstance(default, bool):
        tensor = tensor.to(torch.int32)
    tensor = tensor.reshape(-1)
    if tensor.numel() != 1 or tensor.dtype not in _NUMBERS:
        raise TypeError(f"{op}: record_defaults[{index}] = {default!r} is not a scalar default of dtype int32, "
                        f"int64, float32, float64 or string.")
    return tensor.dtype, tensor[0]


def _parse_field(raw: bytes, kind: Any, default: Any, na_value: bytes, where: str, column: int) -> Any:
    if raw == b"" or (na_value and raw == na_value):
        if default is None:
            raise _CsvError(f"{where}: field {column} is required but missing (empty or na_value); give "
                            f"record_defaults[{column}] a default value instead of a dtype")
        return _scalar_string(default) if kind == "string" else default.clone()
    if kind == "string":
        return _scalar_string(raw)
    try:
        if kind in (torch.int32, torch.int64):
            value = int(raw)
            limit = 2**31 if kind == torch.int32 else 2**63
            if not -limit <= value < limit:
                raise ValueError
        else:
            value = float(raw)
    except ValueError:
        raise _CsvError(f"{where}: field {column} is not a valid {str(kind).replace('torch.', '')}: "
                        f"{raw.decode(errors='replace')!r}") from None
    return torch.tensor(value, dtype=kind)


class CsvDataset(Dataset):
    """`tf.data.experimental.CsvDataset(filenames, record_defaults, compression_type=None, buffer_size=None,
    header=False, field_delim=',', use_quote_delim=True, na_value='', select_cols=None, exclude_cols=None)`.

    Each record is a tuple with one scalar per selected column: a torch tensor for numeric columns, a 0-d
    NumPy object array of bytes for strings. `record_defaults` gives per column a dtype (the field is
    required) or a default value (used for empty fields and `na_value`). A record with the wrong number of
    fields or a field that does not parse raises ValueError naming the file and the line.

    >>> ds = tf.data.experimental.CsvDataset("points.csv", [tf.float32, 0], header=True)
    >>> [(float(x), int(n)) for x, n in ds]
    [(1.5, 3), (2.0, 0)]
    """

    def __init__(self, filenames: Any, record_defaults: Sequence[Any], compression_type: Optional[str] = None,
                 buffer_size: Optional[int] = None, header: bool = False, field_delim: str = ",",
                 use_quote_delim: bool = True, na_value: str = "", select_cols: Optional[Sequence[int]] = None,
                 exclude_cols: Optional[Sequence[int]] = None):
        op = "CsvDataset"
        self._files = _file_names(filenames, op)
        super().__init__((self._files,) if isinstance(self._files, Dataset) else ())
        self._compression = compression_name(compression_type, op)
        if not isinstance(field_delim, (str, bytes)) or len(field_delim) != 1:
            raise ValueError(f"{op}: field_delim must be one character, got {field_delim!r}.")
        if select_cols is not None and exclude_cols is not None:
            raise ValueError(f"{op}: pass select_cols or exclude_cols, not both.")
        self._columns = [_column_kind(default, op, i) for i, default in enumerate(record_defaults)]
        if not self._columns:
            raise ValueError(f"{op}: record_defaults is empty; give one dtype or default per selected column.")
        self._select = None if select_cols is None else [int(c) for c in select_cols]
        self._exclude = None if exclude_cols is None else sorted(int(c) for c in exclude_cols)
        if self._select is not None and (self._select != sorted(set(self._select)) or min(self._select) < 0):
            raise ValueError(f"{op}: select_cols must be increasing, distinct and >= 0, got {list(select_cols)}.")
        if self._select is not None and len(self._select) != len(self._columns):
            raise ValueError(f"{op}: select_cols has {len(self._select)} columns but record_defaults has "
                             f"{len(self._columns)}; give one default per selected column.")
        self._header = bool(header)
        self._delim = field_delim.encode() if isinstance(field_delim, str) else field_delim
        self._quoted = bool(use_quote_delim)
        self._na = na_value.encode() if isinstance(na_value, str) else bytes(na_value)

    def _names(self) -> Iterator[str]:
        if isinstance(self._files, Dataset):
            for element in self._files._iterate():
                yield _file_name(element, "CsvDataset")
        else:
            yield from self._files

    def _wanted(self, count: int) -> List[int]:
        if self._select is not None:
            return self._select
        if self._exclude is not None:
            return [c for c in range(count) if c not in self._exclude]
        return list(range(count))

    def _file_records(self, path: str) -> Iterator[tuple]:
        lines = _lines(path, self._compression, "CsvDataset")
        if self._header:
            next(lines, None)
        offset = 1 if self._header else 0
        records = _split_records(lines, self._delim, self._quoted)
        while True:
            try:
                found = next(records, None)
                if found is None:
                    return
                number, fields = found
                where = f"CsvDataset: {path!r}, line {number + offset}"
                yield self._record(fields, where)
            except _CsvError as error:
                message = str(error)
                if message.startswith("line "):  # from the splitter: give the file and the real line
                    line, rest = message[5:].split(":", 1)
                    message = f"CsvDataset: {path!r}, line {int(line) + offset}:{rest}"
                raise ValueError(message + ".") from None

    def _record(self, fields: list, where: str) -> tuple:
        wanted = self._wanted(len(fields))
        if self._select is not None:
            if wanted[-1] >= len(fields):
                raise _CsvError(f"{where}: the record has {len(fields)} fields, too few for select_cols "
                                f"{self._select}")
        elif len(wanted) != len(self._columns):
            raise _CsvError(f"{where}: expected {len(self._columns)} fields (one per record_defaults entry"
                            f"{', after exclude_cols' if self._exclude else ''}), got {len(wanted)}")
        return tuple(_parse_field(fields[column], kind, default, self._na, where, column)
                     for column, (kind, default) in zip(wanted, self._columns))

    def _iterate_elements(self) -> Iterator[Any]:
        for path in self._names():
            yield from self._file_records(path)

    def _tolerant_elements(self) -> Iterator[Any]:
        """For ignore_errors: the records, leaving out those that do not parse (wrong field count, bad
        values); a broken quote that runs to the end of the file still ends that file."""
        for path in self._names():
            lines = _lines(path, self._compression, "CsvDataset")
            if self._header:
                next(lines, None)
            try:
                for number, fields in _split_records(lines, self._delim, self._quoted):
                    try:
                        yield self._record(fields, "")
                    except _CsvError:
                        continue
            except _CsvError:
                continue

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        return tuple(TensorSpec((), _STRING if kind == "string" else kind) for kind, _ in self._columns)
