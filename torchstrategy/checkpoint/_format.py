"""The checksummed single-file checkpoint format: header (lengths, CRC-32s, its own CRC), structure
section (the object with tensors swapped for markers), then the raw tensor bytes, 64-byte aligned."""
from __future__ import annotations

import io
import mmap
import os
import pickle
import struct
import threading
import zlib
from collections import OrderedDict
from typing import Any, BinaryIO

import numpy as np
import torch

MAGIC = b"TSCKPT\x00\n"
FORMAT_VERSION = 1
_FIELDS = struct.Struct("<8sHHQQII")  # magic, version, structure encoding, structure bytes, data bytes, 2 crcs
_HEADER_CRC = struct.Struct("<I")
HEADER_SIZE = _FIELDS.size + _HEADER_CRC.size
_ALIGN = 64
_PICKLE, _TORCH_SAVE = 0, 1  # structure encodings: plain values use a restricted pickle (fast), others torch.save
_TENSOR = "__torchstrategy_tensor__"
_ARRAY = "__torchstrategy_ndarray__"  # NumPy arrays (e.g. RNG states) travel as tensor data too
_PLAIN = (str, int, float, bool, type(None), bytes, complex)
_THREADED_CRC_BYTES = 32 << 20
_CHUNK = 64 << 20


class CheckpointCorruptedError(ValueError):
    """A checkpoint file is truncated, altered, or not a torchstrategy file; the message names it."""


def corrupted(path: str, problem: str) -> CheckpointCorruptedError:
    return CheckpointCorruptedError(
        f"Checkpoint file '{path}' is corrupted: {problem}. It was cut short or altered after it was "
        f"written; restore an earlier checkpoint (a CheckpointManager with "
        f"`manager.fallback_to_previous = True` does this in restore_or_initialize) or delete the file.")


def _pad(size: int) -> int:
    return -size % _ALIGN


# ----- splitting an object into structure + tensors ------------------------------------------
def _is_plain_tensor(value: Any) -> bool:
    return (isinstance(value, torch.Tensor) and value.layout == torch.strided and not value.is_quantized
            and not value.is_nested and value.device.type != "meta")


class _Splitter:
    def __init__(self) -> None:
        self.tensors: list[torch.Tensor] = []
        self.plain = True  # False once a value needs torch.save (e.g. a sparse tensor, a dtype object)

    def __call__(self, value: Any) -> Any:
        if _is_plain_tensor(value):
            self.tensors.append(value)
            return {_TENSOR: len(self.tensors) - 1}
        if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
            try:
                self.tensors.append(torch.from_numpy(np.ascontiguousarray(value)))
                return {_ARRAY: len(self.tensors) - 1}
            except TypeError:  # a dtype torch lacks: left to torch.save
                pass
        if type(value) in (dict, OrderedDict):
            return type(value)((key, self(item)) for key, item in value.items())
        if type(value) in (list, tuple):
            return type(value)(self(item) for item in value)
        if type(value) not in _PLAIN:
            self.plain = False
        return value


def _join(value: Any, tensors: list) -> Any:
    if type(value) in (dict, OrderedDict):
        if len(value) == 1 and _TENSOR in value:
            return tensors[value[_TENSOR]]
        if len(value) == 1 and _ARRAY in value:
            return tensors[value[_ARRAY]].numpy()
        return type(value)((key, _join(item, tensors)) for key, item in value.items())
    if type(value) in (list, tuple):
        return type(value)(_join(item, tensors) for item in value)
    return value


def _as_bytes(tensor: torch.Tensor) -> memoryview:
    """The tensor's bytes as a flat view (copied to the host, made contiguous, only when needed)."""
    flat = tensor.detach().resolve_conj().resolve_neg()
    if flat.device.type != "cpu":
        flat = flat.cpu()
    flat = flat.contiguous().reshape(-1)
    return memoryview(flat.view(torch.uint8).numpy()).cast("B")


class _ThreadedCrc:
    """CRC-32 of buffers computed on a helper thread while the caller writes them (zlib releases the
    GIL on large buffers, so big checkpoints get their checksum almost for free)."""

    def __init__(self) -> None:
        self.value = 0
        self._items: list = []
        self._ready = threading.Condition()
        self._done = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def add(self, buffer: Any) -> None:
        with self._ready:
            self._items.append(buffer)
            self._ready.notify()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._items and not self._done:
                    self._ready.wait()
                if not self._items:
                    return
                buffer = self._items.pop(0)
            self.value = _crc(buffer, self.value)

    def result(self) -> int:
        with self._ready:
            self._done = True
            self._ready.notify()
        self._thread.join()
        return self.value


class _InlineCrc:
    def __init__(self) -> None:
        self.value = 0

    def add(self, buffer: Any) -> None:
        self.value = _crc(buffer, self.value)

    def result(self) -> int:
        return self.value


def _crc(buffer: Any, value: int = 0) -> int:
    view = memoryview(buffer)
    for start in range(0, len(view), _CHUNK):
        value = zlib.crc32(view[start:start + _CHUNK], value)
    return value


# ----- writing --------------------------------------------------------------------------------
def write(handle: BinaryIO, value: Any) -> int:
    """Writes `value` to the (seekable) binary file `handle` in this format; returns the file's size."""
    split = _Splitter()
    tree = split(value)
    views = [_as_bytes(t) for t in split.tensors]
    table = [(str(t.dtype).replace("torch.", ""), tuple(t.shape), len(v)) for t, v in zip(split.tensors, views)]
    if split.plain:
        encoding, structure = _PICKLE, pickle.dumps({"tree": tree, "tensors": table}, protocol=4)
    else:
        buffer = io.BytesIO()
        torch.save({"tree": tree, "tensors": table}, buffer)
        encoding, structure = _TORCH_SAVE, buffer.getvalue()
    lead = _pad(HEADER_SIZE + len(structure))
    total = sum(len(v) + _pad(len(v)) for v in views) + lead
    crc = _ThreadedCrc() if total >= _THREADED_CRC_BYTES else _InlineCrc()
    try:
        handle.write(b"\0" * HEADER_SIZE)  # the real header goes in last, once the checksums are known
        handle.write(structure)
        for view in [b"\0" * lead] + [part for v in views for part in (v, b"\0" * _pad(len(v)))]:
            if len(view):
                crc.add(view)
                handle.write(view)
    except OSError as error:  # e.g. a full disk: the caller reports the size the file needed
        crc.result()  # stop the helper thread
        error.bytes_needed = HEADER_SIZE + len(structure) + total
        raise
    fields = _FIELDS.pack(MAGIC, FORMAT_VERSION, encoding, len(structure), total, zlib.crc32(structure), crc.result())
    handle.seek(0)
    handle.write(fields + _HEADER_CRC.pack(zlib.crc32(fields)))
    return HEADER_SIZE + len(structure) + total


# ----- reading --------------------------------------------------------------------------------
class _SafeUnpickler(pickle.Unpickler):
    """Plain values only: anything that would run code is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def _header(path: str, mapped: Any, size: int) -> tuple:
    raw = bytes(mapped[:HEADER_SIZE])
    start = raw[:len(MAGIC)]
    if start != MAGIC[:len(start)] and start.strip(b"\0"):
        raise CheckpointCorruptedError(f"'{path}' is not a torchstrategy checkpoint (unknown file header).")
    if size < HEADER_SIZE:
        raise corrupted(path, f"it has {size} bytes, fewer than the {HEADER_SIZE}-byte header")
    fields, (stored_crc,) = raw[:_FIELDS.size], _HEADER_CRC.unpack(raw[_FIELDS.size:])
    magic, version, encoding, structure_len, data_len, structure_crc, data_crc = _FIELDS.unpack(fields)
    if magic != MAGIC:
        raise corrupted(path, "its header is blank (the write never finished)")
    if zlib.crc32(fields) != stored_crc:
        raise corrupted(path, "its header checksum does not match")
    if version > FORMAT_VERSION:
        raise ValueError(f"'{path}' uses checkpoint format {version}, newer than this torchstrategy reads "
                         f"({FORMAT_VERSION}); upgrade torchstrategy.")
    expected = HEADER_SIZE + structure_len + data_len
    if size != expected:
        raise corrupted(path, f"it has {size} bytes but its header says {expected}")
    return encoding, structure_len, data_len, structure_crc, data_crc


def _structure(path: str, raw: bytes, encoding: int, crc: int) -> dict:
    if zlib.crc32(raw) != crc:
        raise corrupted(path, "the checksum of its structure section does not match")
    try:
        if encoding == _PICKLE:
            return _SafeUnpickler(io.BytesIO(raw)).load()
        return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as error:  # passed the checksum but unreadable: not something we wrote
        raise CheckpointCorruptedError(f"Could not read '{path}' ({type(error).__name__}: {error}).") from error


def _map(handle: BinaryIO, size: int) -> Any:
    if size == 0:
        return b""
    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)  # private pages: writable, file untouched


def read(path: str, handle: BinaryIO, structure_only: bool = False, copy: bool = True) -> Any:
    """Verifies every checksum, then returns the saved object. With `copy=False` its tensors are views
    of the mapped file (no copy; the caller copies them where they belong, e.g. load_state_dict)."""
    size = os.fstat(handle.fileno()).st_size
    mapped = _map(handle, size)
    encoding, structure_len, data_len, structure_crc, data_crc = _header(path, mapped, size)
    body = memoryview(mapped)
    saved = _structure(path, bytes(body[HEADER_SIZE:HEADER_SIZE + structure_len]), encoding, structure_crc)
    if structure_only:
        return saved["tree"]
    start = HEADER_SIZE + structure_len
    if _crc(body[start:start + data_len]) != data_crc:
        raise corrupted(path, "the checksum of its tensor data does not match")
    offset = start + _pad(start)
    tensors = []
    for dtype_name, shape, nbytes in saved["tensors"]:
        dtype = getattr(torch, dtype_name)
        numel = int(np.prod(shape, dtype=np.int64))
        if numel * dtype.itemsize != nbytes or offset + nbytes > size:
            raise corrupted(path, f"its table describes a {dtype_name} tensor of shape {tuple(shape)} it cannot hold")
        if numel == 0:
            tensor = torch.empty(tuple(shape), dtype=dtype)
        else:
            tensor = torch.frombuffer(mapped, dtype=dtype, count=numel, offset=offset).reshape(tuple(shape))
            tensor = tensor.clone() if copy else tensor
        tensors.append(tensor)
        offset += nbytes + _pad(nbytes)
    del body
    return _join(saved["tree"], tensors)
