"""TFRecord files: masked CRC-32C record framing, `TFRecordOptions` (none/GZIP/ZLIB), `TFRecordWriter`,
and the record reader that `tf.data.TFRecordDataset` streams from."""
from __future__ import annotations

import gzip
import io
import os
import struct
import zlib
from typing import Any, BinaryIO, Iterator, Optional, Union

__all__ = ["DataLossError", "TFRecordOptions", "TFRecordWriter", "crc32c", "iterate_records"]


# a TFRecord file that is corrupted or truncated raises tf.errors.DataLossError
from torchstrategy.errors import DataLossError  # noqa: E402


# ------------------------------------------------------------------ CRC-32C (Castagnoli), table-driven
def _make_crc32c_table() -> tuple:
    polynomial = 0x82F63B78  # the reversed Castagnoli polynomial
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ polynomial if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC32C_TABLE = _make_crc32c_table()


def crc32c(data: bytes) -> int:
    """The CRC-32C checksum of `data` (as TFRecord framing uses), e.g. crc32c(b"123456789") == 0xE3069283."""
    table, crc = _CRC32C_TABLE, 0xFFFFFFFF
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data: bytes) -> int:
    # TFRecord stores a rotated-and-offset CRC so that CRCs of data containing CRCs stay well distributed.
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _frame(record: bytes) -> bytes:
    length = struct.pack("<Q", len(record))
    return b"".join((length, struct.pack("<I", _masked_crc(length)), record, struct.pack("<I", _masked_crc(record))))


# ------------------------------------------------------------------ options
_COMPRESSION_TYPES = {"": "", "NONE": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


def compression_name(value: Any, where: str) -> str:
    """The compression name ('', 'GZIP' or 'ZLIB') that `value` (a name in any case, a TFRecordOptions or None)
    stands for; a ValueError naming `where` for anything else."""
    if value is None:
        return ""
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    if isinstance(value, str) and value.upper() in _COMPRESSION_TYPES:
        return _COMPRESSION_TYPES[value.upper()]
    raise ValueError(f"{where}: unknown compression_type {value!r}; use '' (none), 'GZIP' or 'ZLIB', or a "
                     f"tf.io.TFRecordOptions.")


class TFRecordOptions:
    """`tf.io.TFRecordOptions(compression_type='GZIP')`: how a TFRecord file is compressed.

    compression_type is '' (none), 'GZIP' or 'ZLIB'; compression_level (0-9) sets the zlib level. The other
    zlib tuning arguments of TF are accepted and, apart from window_bits/mem_level/compression_strategy for
    ZLIB, not needed by Python's zlib.
    """

    # TF's (tf.compat.v1) TFRecordCompressionType values NONE=0, ZLIB=1, GZIP=2 -> their compression names
    compression_type_map = {0: "", 1: "ZLIB", 2: "GZIP"}

    def __init__(self, compression_type: Optional[str] = None, flush_mode: Any = None,
                 input_buffer_size: Optional[int] = None, output_buffer_size: Optional[int] = None,
                 window_bits: Optional[int] = None, compression_level: Optional[int] = None,
                 compression_method: Any = None, mem_level: Optional[int] = None,
                 compression_strategy: Optional[int] = None):
        self.compression_type = compression_name(compression_type, "TFRecordOptions")
        self.flush_mode, self.compression_method = flush_mode, compression_method
        self.input_buffer_size, self.output_buffer_size = input_buffer_size, output_buffer_size
        self.window_bits, self.compression_level = window_bits, compression_level
        self.mem_level, self.compression_strategy = mem_level, compression_strategy

    @classmethod
    def get_compression_type_string(cls, options: Union["TFRecordOptions", str, None]) -> str:
        """'' / 'GZIP' / 'ZLIB' for an options object or a compression-type string."""
        return compression_name(options, "TFRecordOptions.get_compression_type_string")

    def __repr__(self) -> str:
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


class _ZlibWriter:
    """A binary file-like sink that zlib-compresses what is written (a ZLIB TFRecord is one zlib stream)."""

    def __init__(self, raw: BinaryIO, options: TFRecordOptions):
        level = -1 if options.compression_level is None else options.compression_level
        self._raw = raw
        self._compressor = zlib.compressobj(level, zlib.DEFLATED, options.window_bits or zlib.MAX_WBITS,
                                            options.mem_level or 8, options.compression_strategy or 0)

    def write(self, data: bytes) -> None:
        self._raw.write(self._compressor.compress(data))

    def flush(self) -> None:
        self._raw.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._raw.flush()

    def close(self) -> None:
        self._raw.write(self._compressor.flush())
        self._raw.close()


class TFRecordWriter:
    """`tf.io.TFRecordWriter(path, options=None)`: writes records (bytes) to a TFRecord file.

    >>> with TFRecordWriter("/tmp/data.tfrecord") as writer:
    ...     writer.write(b"record one")
    """

    def __init__(self, path: Union[str, os.PathLike], options: Union[TFRecordOptions, str, None] = None):
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(compression_name(options, "TFRecordWriter"))
        self._path = os.fspath(path)
        try:
            raw = open(self._path, "wb")
        except OSError as error:
            raise OSError(f"TFRecordWriter: cannot open {self._path!r} for writing ({error}). Check that the "
                          f"directory exists and is writable.") from None
        if options.compression_type == "GZIP":
            level = 9 if options.compression_level is None else options.compression_level
            self._file: Any = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=level, mtime=0)
            self._raw: Optional[BinaryIO] = raw  # GzipFile does not close a file object it was given
        elif options.compression_type == "ZLIB":
            self._file, self._raw = _ZlibWriter(raw, options), None
        else:
            self._file, self._raw = raw, None
        self._closed = False

    def write(self, record: Union[bytes, str]) -> None:
        """Appends one record (bytes; a str is UTF-8 encoded, a tf.train.Example must be serialized first)."""
        if self._closed:
            raise ValueError(f"TFRecordWriter: write() on the closed writer of {self._path!r}.")
        if isinstance(record, str):
            record = record.encode("utf-8")
        elif hasattr(record, "ndim") and record.ndim == 0 and hasattr(record, "item"):
            record = record.item()
        if not isinstance(record, (bytes, bytearray, memoryview)):
            hint = " Call .SerializeToString() on it first." if hasattr(record, "SerializeToString") else ""
            raise TypeError(f"TFRecordWriter.write expects bytes, got {type(record).__name__}.{hint}")
        self._file.write(_frame(bytes(record)))

    def flush(self) -> None:
        """Pushes buffered records to the file."""
        self._file.flush()

    def close(self) -> None:
        """Finishes the file (and its compressed stream); later writes raise."""
        if not self._closed:
            self._closed = True
            self._file.close()
            if self._raw is not None:
                self._raw.close()

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


# ------------------------------------------------------------------ reading
def _open_for_reading(path: str, compression_type: str) -> BinaryIO:
    try:
        raw = open(path, "rb")
    except OSError as error:
        raise FileNotFoundError(f"TFRecordDataset: cannot open {path!r} ({error.strerror}). Check the file "
                                f"name; tf.io.gfile-style URLs (gs://, s3://) are not supported.") from None
    if compression_type == "GZIP":
        raw.close()
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if compression_type == "ZLIB":
        with raw:
            try:
                return io.BytesIO(zlib.decompress(raw.read()))
            except zlib.error as error:
                raise DataLossError(None, None, f"TFRecordDataset: {path!r} is not a valid ZLIB stream ({error}); was it "
                                    f"written with compression_type='ZLIB'?") from None
    return raw


def iterate_records(path: str, compression_type: Optional[str] = None) -> Iterator[bytes]:
    """The records of one TFRecord file, each checked against its CRCs.

    A corrupted length or data CRC, or a truncated record, raises DataLossError naming the file, the record
    index (from 0) and its byte offset in the (uncompressed) stream.
    """
    compression = compression_name(compression_type, "TFRecordDataset")
    stream = _open_for_reading(path, compression)
    offset, index = 0, 0
    try:
        while True:
            try:
                header = stream.read(12)
            except (OSError, EOFError, zlib.error) as error:
                raise DataLossError(None, None, f"TFRecordDataset: cannot decompress {path!r} before record {index} "
                                    f"({error}); is compression_type={compression!r} right?") from None
            if not header:
                return
            where = f"record {index} (at byte {offset}) of {path!r}"
            if len(header) < 12:
                raise DataLossError(None, None, f"TFRecordDataset: truncated {where}: the file ends inside its header.")
            length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
            if _masked_crc(length_bytes) != length_crc:
                raise DataLossError(None, None, f"TFRecordDataset: corrupted {where}: the CRC of its length does not match. "
                                    f"The file is damaged or not a TFRecord file (check compression_type).")
            length = struct.unpack("<Q", length_bytes)[0]
            try:
                body = stream.read(length + 4)
            except (OSError, EOFError, zlib.error) as error:
                raise DataLossError(None, None, f"TFRecordDataset: cannot decompress {where} ({error}).") from None
            if len(body) < length + 4:
                raise DataLossError(None, None, f"TFRecordDataset: truncated {where}: the file ends inside its data.")
            data = body[:length]
            if _masked_crc(data) != struct.unpack("<I", body[length:])[0]:
                raise DataLossError(None, None, f"TFRecordDataset: corrupted {where}: the CRC of its data does not match. "
                                    f"The file is damaged.")
            yield data
            offset += 12 + length + 4
            index += 1
    finally:
        stream.close()
