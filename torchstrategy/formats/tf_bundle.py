"""TF's tensor-bundle checkpoint files: the `.index` table (leveldb's sorted-table layout holding a
BundleHeaderProto and one BundleEntryProto per tensor) and the `.data-0000k-of-0000n` shards, with CRC-32C checks."""
from __future__ import annotations

import mmap
import os
import re
import struct
import tempfile
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterable

import numpy as np
import torch

from torchstrategy._machinery.protobuf import (FIXED32, LENGTH_DELIMITED, VARINT, DecodeError, encode_length_delimited,
                                               encode_varint, decode_varint, fields)
from torchstrategy.formats import _crc32c

__all__ = ["BundleCorruptedError", "BundleEntry", "BundleReader", "write_bundle", "is_bundle", "data_path",
           "DTYPE_CODES"]

_TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48  # two block handles padded to 40 bytes, then the 8-byte magic
_TRAILER_SIZE = 5  # compression type byte + masked CRC-32C of the block and that byte
_RESTART_INTERVAL = 16
_BLOCK_SIZE = 256 << 10

#: TF DataType enum value -> the NumPy dtype of its bytes (bfloat16 is read through torch)
DTYPE_CODES = {1: np.dtype("float32"), 2: np.dtype("float64"), 3: np.dtype("int32"), 4: np.dtype("uint8"),
               5: np.dtype("int16"), 6: np.dtype("int8"), 7: np.dtype(object), 8: np.dtype("complex64"),
               9: np.dtype("int64"), 10: np.dtype("bool"), 14: "bfloat16", 17: np.dtype("uint16"),
               18: np.dtype("complex128"), 19: np.dtype("float16"), 22: np.dtype("uint32"), 23: np.dtype("uint64")}
_CODE_OF = {dtype: code for code, dtype in DTYPE_CODES.items()}
_DTYPE_NAMES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string",
                8: "complex64", 9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16", 18: "complex128",
                19: "float16", 22: "uint32", 23: "uint64"}


class BundleCorruptedError(ValueError):
    """A TF checkpoint's index or data file is missing, truncated or altered; the message names the file."""


def data_path(prefix: str, shard: int, num_shards: int) -> str:
    """The name of one data shard of the bundle at `prefix`, e.g. 'ckpt-1.data-00000-of-00001'."""
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def is_bundle(prefix: str) -> bool:
    """Whether `prefix` names a TF tensor bundle (its `.index` file exists)."""
    return os.path.isfile(os.fspath(prefix) + ".index")


# ----------------------------------------------------------------------------- protos
@dataclass
class BundleEntry:
    """One tensor's BundleEntryProto: dtype code, shape, which shard, where, how long, masked CRC-32C."""

    dtype: int = 0
    shape: tuple = ()
    shard_id: int = 0
    offset: int = 0
    size: int = 0
    crc32c: int = 0
    sliced: bool = False

    @property
    def dtype_name(self) -> str:
        """TF's name of the entry's dtype, e.g. 'float32'."""
        return _DTYPE_NAMES.get(self.dtype, f"DataType({self.dtype})")

    @classmethod
    def parse(cls, data: bytes) -> "BundleEntry":
        """Decodes a serialized BundleEntryProto."""
        entry = cls()
        for number, wire, value in fields(data):
            if number == 1 and wire == VARINT:
                entry.dtype = value
            elif number == 2 and wire == LENGTH_DELIMITED:
                entry.shape = _parse_shape(value)
            elif number == 3 and wire == VARINT:
                entry.shard_id = value
            elif number == 4 and wire == VARINT:
                entry.offset = value
            elif number == 5 and wire == VARINT:
                entry.size = value
            elif number == 6 and wire == FIXED32:
                entry.crc32c = struct.unpack("<I", value)[0]
            elif number == 7:
                entry.sliced = True
        return entry

    def serialize(self) -> bytes:
        """The BundleEntryProto's wire bytes (zero fields left out, as TF writes them)."""
        out = bytearray()
        encode_varint(1 << 3 | VARINT, out)
        encode_varint(self.dtype, out)
        encode_length_delimited(2, _encode_shape(self.shape), out)
        if self.shard_id:
            encode_varint(3 << 3 | VARINT, out)
            encode_varint(self.shard_id, out)
        if self.offset:
            encode_varint(4 << 3 | VARINT, out)
            encode_varint(self.offset, out)
        if self.size:
            encode_varint(5 << 3 | VARINT, out)
            encode_varint(self.size, out)
        encode_varint(6 << 3 | FIXED32, out)
        out += struct.pack("<I", self.crc32c)
        return bytes(out)


def _parse_shape(data: bytes) -> tuple:
    dims = []
    for number, wire, value in fields(data):
        if number == 2 and wire == LENGTH_DELIMITED:
            size = 0
            for dim_number, dim_wire, dim_value in fields(value):
                if dim_number == 1 and dim_wire == VARINT:
                    size = dim_value - (1 << 64) if dim_value >= 1 << 63 else dim_value
            dims.append(size)
    return tuple(dims)


def _encode_shape(shape: Iterable[int]) -> bytes:
    out = bytearray()
    for size in shape:
        dim = bytearray()
        if size:
            encode_varint(1 << 3 | VARINT, dim)
            encode_varint(int(size), dim)
        encode_length_delimited(2, bytes(dim), out)
    return bytes(out)


def _parse_header(data: bytes) -> tuple[int, int]:
    """(num_shards, endianness) of a BundleHeaderProto."""
    num_shards, endianness = 0, 0
    for number, wire, value in fields(data):
        if number == 1 and wire == VARINT:
            num_shards = value
        elif number == 2 and wire == VARINT:
            endianness = value
    return num_shards, endianness


def _encode_header(num_shards: int) -> bytes:
    out = bytearray()
    encode_varint(1 << 3 | VARINT, out)
    encode_varint(num_shards, out)
    version = bytearray()
    encode_varint(1 << 3 | VARINT, version)  # producer 1, as TF writes
    encode_varint(1, version)
    encode_length_delimited(3, bytes(version), out)
    return bytes(out)


# ----------------------------------------------------------------------------- the sorted table
def _block(path: str, data: bytes, offset: int, size: int) -> bytes:
    end = offset + size + _TRAILER_SIZE
    if end > len(data):
        raise BundleCorruptedError(f"TF checkpoint index '{path}' is truncated: a block ends at byte {end} of "
                                   f"{len(data)}.")
    contents, kind = data[offset:offset + size], data[offset + size]
    stored = struct.unpack("<I", data[offset + size + 1:end])[0]
    if _crc32c.mask(_crc32c.value(contents + bytes([kind]))) != stored:
        raise BundleCorruptedError(f"TF checkpoint index '{path}' is corrupted: the CRC-32C of the block at byte "
                                   f"{offset} does not match. Restore an earlier checkpoint or write it again.")
    if kind != 0:
        raise BundleCorruptedError(f"TF checkpoint index '{path}' has a block compressed with method {kind} "
                                   f"(only uncompressed tables are read; TF writes checkpoints uncompressed).")
    return contents


def _block_entries(path: str, block: bytes) -> list[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise BundleCorruptedError(f"TF checkpoint index '{path}' has a block too short to hold its restart count.")
    restarts = struct.unpack("<I", block[-4:])[0]
    end = len(block) - 4 - 4 * restarts
    if end < 0:
        raise BundleCorruptedError(f"TF checkpoint index '{path}' has a block with an impossible restart count.")
    entries, key, position = [], b"", 0
    try:
        while position < end:
            shared, position = decode_varint(block, position)
            unshared, position = decode_varint(block, position)
            length, position = decode_varint(block, position)
            key = key[:shared] + block[position:position + unshared]
            position += unshared
            entries.append((key, block[position:position + length]))
            position += length
    except DecodeError as error:
        raise BundleCorruptedError(f"TF checkpoint index '{path}' has an unreadable block ({error}).") from error
    if position != end:
        raise BundleCorruptedError(f"TF checkpoint index '{path}' has a block whose entries overrun it.")
    return entries


def _handle(data: bytes, position: int) -> tuple[int, int, int]:
    offset, position = decode_varint(data, position)
    size, position = decode_varint(data, position)
    return offset, size, position


def read_table(path: str) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of a leveldb-layout table file, in key order, every block's checksum verified."""
    with open(path, "rb") as handle:
        data = handle.read()
    if len(data) < _FOOTER_SIZE or struct.unpack("<Q", data[-8:])[0] != _TABLE_MAGIC:
        raise BundleCorruptedError(f"'{path}' is not a TF checkpoint index (no table footer; {len(data)} bytes). "
                                   f"It was cut short or is another kind of file.")
    footer = data[-_FOOTER_SIZE:]
    try:
        _, _, position = _handle(footer, 0)  # the metaindex block: TF's bundles leave it empty
        index_offset, index_size, _ = _handle(footer, position)
    except DecodeError as error:
        raise BundleCorruptedError(f"TF checkpoint index '{path}' has an unreadable footer ({error}).") from error
    out = []
    for _, handle_bytes in _block_entries(path, _block(path, data, index_offset, index_size)):
        offset, size, _ = _handle(handle_bytes, 0)
        out.extend(_block_entries(path, _block(path, data, offset, size)))
    return out


class _BlockBuilder:
    def __init__(self) -> None:
        self.buffer = bytearray()
        self.restarts = [0]
        self.count = 0
        self.last = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.count % _RESTART_INTERVAL == 0 and self.count:
            self.restarts.append(len(self.buffer))
        elif self.count:
            limit = min(len(key), len(self.last))
            while shared < limit and key[shared] == self.last[shared]:
                shared += 1
        encode_varint(shared, self.buffer)
        encode_varint(len(key) - shared, self.buffer)
        encode_varint(len(value), self.buffer)
        self.buffer += key[shared:] + value
        self.last, self.count = key, self.count + 1

    def finish(self) -> bytes:
        return bytes(self.buffer) + b"".join(struct.pack("<I", r) for r in self.restarts) + \
            struct.pack("<I", len(self.restarts))


def _with_trailer(contents: bytes) -> bytes:
    return contents + b"\0" + struct.pack("<I", _crc32c.mask(_crc32c.value(contents + b"\0")))


def build_table(items: list[tuple[bytes, bytes]]) -> bytes:
    """A leveldb-layout table of `items` (sorted by key, uncompressed blocks, empty metaindex)."""
    out, index = bytearray(), _BlockBuilder()
    block = _BlockBuilder()

    def flush() -> None:
        nonlocal block
        contents = block.finish()
        handle = bytearray()
        encode_varint(len(out), handle)
        encode_varint(len(contents), handle)
        out.extend(_with_trailer(contents))
        index.add(block.last, bytes(handle))
        block = _BlockBuilder()

    for key, value in sorted(items):
        block.add(key, value)
        if len(block.buffer) >= _BLOCK_SIZE:
            flush()
    if block.count:
        flush()
    footer = bytearray()
    for builder in (_BlockBuilder(), index):  # metaindex, then index
        contents = builder.finish()
        encode_varint(len(out), footer)
        encode_varint(len(contents), footer)
        out.extend(_with_trailer(contents))
    footer += b"\0" * (40 - len(footer))
    return bytes(out) + bytes(footer) + struct.pack("<Q", _TABLE_MAGIC)


# ----------------------------------------------------------------------------- reading
class BundleReader:
    """The tensors of the TF checkpoint at `prefix` (`{prefix}.index` + its data shards).

    The index is read (and every block checked) at construction; each tensor's bytes are read and
    checked against their CRC-32C when asked for.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = os.fspath(prefix)
        index = self.prefix + ".index"
        if not os.path.isfile(index):
            raise FileNotFoundError(f"No TF checkpoint at '{self.prefix}': '{index}' does not exist.")
        items = read_table(index)
        if not items or items[0][0] != b"":
            raise BundleCorruptedError(f"TF checkpoint index '{index}' has no bundle header.")
        self.num_shards, endianness = _parse_header(items[0][1])
        if endianness != 0:
            raise BundleCorruptedError(f"TF checkpoint '{self.prefix}' was written big-endian; only little-endian "
                                       f"bundles are read.")
        self.entries: dict[str, BundleEntry] = {}
        for key, value in items[1:]:
            try:
                self.entries[key.decode("utf-8")] = BundleEntry.parse(value)
            except DecodeError as error:
                raise BundleCorruptedError(f"TF checkpoint index '{index}': the entry of {key!r} is unreadable "
                                           f"({error}).") from error

    def check_shards(self) -> None:
        """FileNotFoundError naming the first data shard that is missing."""
        for shard in sorted({entry.shard_id for entry in self.entries.values()}):
            path = data_path(self.prefix, shard, self.num_shards)
            if not os.path.isfile(path):
                raise FileNotFoundError(f"TF checkpoint '{self.prefix}' is incomplete: its data shard '{path}' is "
                                        f"missing. Copy every '{os.path.basename(self.prefix)}.data-*' file next to "
                                        f"its .index, or restore another checkpoint.")

    def raw(self, key: str, copy: bool = True) -> np.ndarray:
        """The stored bytes of tensor `key` as a uint8 array, CRC-checked: read into a buffer of its own, or with
        `copy=False` a view of the data file mapped into memory (private pages: writable, the file untouched),
        which costs no allocation and no copy; the caller copies the values where they belong."""
        entry = self.entries[key]
        if entry.sliced:
            raise NotImplementedError(f"Tensor '{key}' of '{self.prefix}' is stored in slices (a partitioned "
                                      f"variable); reading sliced tensors is not supported.")
        path = data_path(self.prefix, entry.shard_id, self.num_shards)
        try:
            with open(path, "rb", buffering=0) as handle:
                available = max(0, os.fstat(handle.fileno()).st_size - entry.offset)
                if available < entry.size:
                    data = None
                elif copy or entry.size == 0:
                    data = np.empty(entry.size, dtype=np.uint8)
                    handle.seek(entry.offset)
                    if _read_into(handle, memoryview(data)) != entry.size:
                        data = None
                else:
                    mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
                    data = np.frombuffer(mapped, dtype=np.uint8, count=entry.size, offset=entry.offset)
        except FileNotFoundError:
            self.check_shards()
            raise
        if data is None:
            raise BundleCorruptedError(f"TF checkpoint data file '{path}' is truncated: tensor '{key}' needs bytes "
                                       f"{entry.offset}..{entry.offset + entry.size}.")
        checked = _string_checksum_input(path, key, data.tobytes(), entry) if entry.dtype == 7 else data
        if _crc32c.mask(_crc32c.value(checked)) != entry.crc32c:
            raise BundleCorruptedError(f"TF checkpoint data file '{path}' is corrupted: the CRC-32C of tensor "
                                       f"'{key}' does not match. Restore an earlier checkpoint or write it again.")
        return data

    def tensor(self, key: str, copy: bool = True) -> Any:
        """Tensor `key` as a NumPy array (object array of bytes for strings, a torch tensor for bfloat16); with
        `copy=False` a view of the mapped data file (see `raw`), to be copied into its destination."""
        if key not in self.entries:
            raise KeyError(key)
        entry = self.entries[key]
        dtype = DTYPE_CODES.get(entry.dtype)
        if dtype is None:
            raise NotImplementedError(f"Tensor '{key}' of '{self.prefix}' has TF dtype {entry.dtype_name}, which "
                                      f"is not read here.")
        data = self.raw(key, copy=copy)
        if entry.dtype == 7:
            return np.array(_decode_strings(data.tobytes(), int(np.prod(entry.shape, dtype=np.int64))),
                            dtype=object).reshape(entry.shape)
        if dtype == "bfloat16":
            return torch.from_numpy(data).view(torch.bfloat16).reshape(entry.shape)
        if int(np.prod(entry.shape, dtype=np.int64)) * dtype.itemsize != entry.size:
            raise BundleCorruptedError(f"TF checkpoint '{self.prefix}': tensor '{key}' holds {entry.size} bytes, "
                                       f"not the {dtype.itemsize} per element its shape {list(entry.shape)} needs.")
        return data.view(dtype.newbyteorder("<")).astype(dtype, copy=False).reshape(entry.shape)


def _read_into(handle: Any, view: memoryview) -> int:
    """Fills `view` from `handle` (several reads where the OS returns less); the count of bytes read."""
    done = 0
    while done < len(view):
        count = handle.readinto(view[done:])
        if not count:
            break
        done += count
    return done


def _string_lengths(data: bytes, count: int) -> tuple[list[int], int]:
    lengths, position = [], 0
    for _ in range(count):
        length, position = decode_varint(data, position)
        lengths.append(length)
    return lengths, position


def _string_checksum_input(path: str, key: str, data: bytes, entry: BundleEntry) -> bytes:
    """TF checksums a string tensor as its lengths (uint32 each), the masked length checksum, then the bytes."""
    count = int(np.prod(entry.shape, dtype=np.int64))
    try:
        lengths, position = _string_lengths(data, count)
    except DecodeError as error:
        raise BundleCorruptedError(f"TF checkpoint data file '{path}': string tensor '{key}' is unreadable "
                                   f"({error}).") from error
    return b"".join(struct.pack("<I", n & 0xFFFFFFFF) for n in lengths) + data[position:]


def _decode_strings(data: bytes, count: int) -> list[bytes]:
    lengths, position = _string_lengths(data, count)
    position += 4  # the masked checksum of the lengths (covered by the entry's checksum)
    out = []
    for length in lengths:
        out.append(bytes(data[position:position + length]))
        position += length
    return out


# ----------------------------------------------------------------------------- writing
def _encode_tensor(value: Any) -> tuple[int, tuple, Any, int]:
    """(dtype code, shape, stored bytes, masked CRC-32C) of one tensor; a number tensor's bytes are a view of
    its own buffer (no copy) when it is contiguous and little-endian."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.dtype == torch.bfloat16:
            data = value.contiguous().view(torch.int16).numpy().reshape(-1).view(np.uint8)
            return 14, tuple(value.shape), data, _crc32c.mask(_crc32c.value(data))
        value = value.resolve_conj().resolve_neg().numpy()
    array = np.asarray(value)
    if array.dtype.kind in "OSU":
        items = [item.encode("utf-8") if isinstance(item, str) else bytes(item) for item in array.reshape(-1)]
        lengths = bytearray()
        for item in items:
            encode_varint(len(item), lengths)
        unsigned = b"".join(struct.pack("<I", len(item)) for item in items)
        length_crc = struct.pack("<I", _crc32c.mask(_crc32c.value(unsigned)))
        body = b"".join(items)
        data = bytes(lengths) + length_crc + body
        return 7, array.shape, data, _crc32c.mask(_crc32c.value(unsigned + length_crc + body))
    code = _CODE_OF.get(array.dtype.newbyteorder("=") if array.dtype.byteorder == ">" else array.dtype)
    if code is None:
        raise TypeError(f"Cannot write a tensor of dtype {array.dtype} to a TF checkpoint.")
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).reshape(-1).view(np.uint8)
    return code, array.shape, data, _crc32c.mask(_crc32c.value(data))


def _replace_atomically(path: str, fill: Callable[[BinaryIO], None], prefix: str) -> None:
    """Writes `path` through `fill(handle)` into a temp file beside it, fsyncs it and renames it into place."""
    directory = os.path.dirname(os.path.abspath(path))
    # '.ckpt-3.index_XXXX.tmp': hidden, and named like the temp files CheckpointManager clears after a killed save
    part = re.sub(r"[^a-z0-9_]", "_", path[len(prefix) + 1:].lower())
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(prefix)}.{part}_", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb", buffering=0) as handle:
            fill(handle)
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _write_all(handle: BinaryIO, data: Any) -> None:
    view = memoryview(data).cast("B")
    while view:
        view = view[handle.write(view):]


def write_bundle(prefix: str, tensors: dict) -> list[str]:
    """Writes `tensors` (name -> array/tensor/bytes array) as a one-shard TF bundle at `prefix`: the data file
    first, then the index (each written to a temp file and renamed), so a reader never sees a half bundle.
    Each tensor goes to the file from its own buffer (checksummed there, never copied). Returns the paths."""
    prefix = os.fspath(prefix)
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    items = [(b"", _encode_header(1))]

    def fill(handle: BinaryIO) -> None:
        offset = 0
        for name in sorted(tensors):
            code, shape, data, crc = _encode_tensor(tensors[name])
            size = memoryview(data).nbytes
            entry = BundleEntry(dtype=code, shape=tuple(int(d) for d in shape), offset=offset, size=size, crc32c=crc)
            items.append((name.encode("utf-8"), entry.serialize()))
            _write_all(handle, data)
            offset += size

    shard = data_path(prefix, 0, 1)
    _replace_atomically(shard, fill, prefix)
    index = build_table(items)
    _replace_atomically(prefix + ".index", lambda handle: _write_all(handle, index), prefix)
    return [shard, prefix + ".index"]
