"""Keras 3's `.keras` file: a zip of `metadata.json`, `config.json` (the architecture and compile settings),
`model.weights.h5` (keras_h5's layout) and optional `assets/`; read whole and checked before anything loads."""
from __future__ import annotations

import io
import json
import mmap
import os
import struct
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Optional

from torchstrategy.formats import keras_h5
from torchstrategy.formats.base import ZIP_MAGIC, FileFormat, FormatError

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.h5"


@dataclass
class KerasArchive:
    """What a `.keras` file holds: config and metadata dicts, {path: VarGroup} weights, {name: bytes} assets."""

    config: dict
    metadata: dict
    weights: dict
    assets: dict = field(default_factory=dict)


def is_keras_zip(head: bytes, path: str) -> bool:
    """A zip whose members include Keras's config.json (a torch.save zip is not one)."""
    if not head.startswith(ZIP_MAGIC):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return CONFIG in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return str(path).lower().endswith(".keras")  # a damaged .keras file: read() says what is wrong


def read(path: str) -> KerasArchive:
    """Reads and checks a whole `.keras` file (a truncated or foreign zip raises FormatError naming it). Each
    member is read once; its CRC-32 is checked as it is read, before anything is decoded."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            missing = [m for m in (CONFIG, METADATA) if m not in names]
            if missing:
                raise FormatError(f"'{path}' is a zip but not a Keras model file: it has no {', '.join(missing)} "
                                  f"(members: {names[:8]}).")
            raw = {name: archive.read(name) for name in names if not name.endswith("/") and name != WEIGHTS}
            stored = archive.getinfo(WEIGHTS) if WEIGHTS in names else None
            weights = {} if stored is None else _read_weights(archive, stored, path)
    except zipfile.BadZipFile as error:
        if "CRC" in str(error):
            raise FormatError(f"'{path}' is damaged: {error}. Save the model again.") from None
        raise FormatError(f"'{path}' is not a complete .keras file (a truncated or damaged zip: {error}). "
                          f"Save the model again.") from None
    except EOFError as error:
        raise FormatError(f"'{path}' is not a complete .keras file (a member ends early: {error}). "
                          f"Save the model again.") from None
    try:
        config = json.loads(raw.pop(CONFIG))
        metadata = json.loads(raw.pop(METADATA))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FormatError(f"'{path}': config.json or metadata.json is not valid JSON ({error}).") from None
    assets = {name[len("assets/"):]: data for name, data in raw.items() if name.startswith("assets/")}
    return KerasArchive(config, metadata, weights, assets)


class _ViewFile(io.RawIOBase):
    """A read-only, seekable file over a memoryview (what h5py needs to open an HDF5 image in place)."""

    def __init__(self, view: memoryview) -> None:
        super().__init__()
        self._view, self._position = view, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: len(self._view)}[whence]
        self._position = max(0, base + offset)
        return self._position

    def tell(self) -> int:
        return self._position

    def readinto(self, buffer: Any) -> int:
        target = memoryview(buffer).cast("B")
        count = max(0, min(len(target), len(self._view) - self._position))
        with self._view[self._position:self._position + count] as chunk:
            target[:count] = chunk
        self._position += count
        return count


def _member_data(whole: memoryview, info: zipfile.ZipInfo) -> Optional[memoryview]:
    """The bytes of a member as stored (after its local header), or None if the header is not where it should be."""
    header = bytes(whole[info.header_offset:info.header_offset + 30])
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        return None
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    start = info.header_offset + 30 + name_length + extra_length
    return whole[start:start + info.file_size] if start + info.file_size <= len(whole) else None


def _read_weights(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Any) -> dict:
    """The weights tree of `model.weights.h5`. A stored (uncompressed) member of a file on disk is mapped and
    CRC-checked in place and h5py reads it there (no copy of the whole member into memory first); otherwise
    the member is read (CRC-checked by zipfile) into memory."""
    if not isinstance(path, (str, os.PathLike)) or info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1 \
            or info.file_size == 0:
        return keras_h5.read_tree(io.BytesIO(archive.read(info.filename)))
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        with memoryview(mapped) as whole:
            member = _member_data(whole, info)
            if member is None:
                return keras_h5.read_tree(io.BytesIO(archive.read(info.filename)))  # zipfile names the damage
            with member:
                if zlib.crc32(member) & 0xFFFFFFFF != info.CRC:
                    raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")
                return keras_h5.read_tree(_ViewFile(member))


def write(handle: BinaryIO, archive: KerasArchive) -> None:
    """Writes the zip in Keras's member order: metadata.json, config.json, model.weights.h5, assets/ (the
    weights file goes into the zip from the buffer h5py wrote it to, without another copy)."""
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as out:
        out.writestr(METADATA, json.dumps(archive.metadata))
        out.writestr(CONFIG, json.dumps(archive.config))
        buffer = io.BytesIO()
        keras_h5.write_tree(buffer, archive.weights)
        with buffer.getbuffer() as view:
            info = zipfile.ZipInfo(WEIGHTS, date_time=time.localtime(time.time())[:6])
            info.external_attr = 0o600 << 16  # as writestr marks a member
            info.file_size = view.nbytes  # lets zipfile choose the zip64 header up front for large models
            with out.open(info, "w") as member:
                member.write(view)
        for name, data in archive.assets.items():
            out.writestr(f"assets/{name}", data)


def members(path: str) -> list[str]:
    """The member names of a `.keras` file, in order."""
    with zipfile.ZipFile(path) as archive:
        return archive.namelist()


KERAS_ZIP = FileFormat("keras", (".keras",), is_keras_zip, read, write,
                       "Keras 3 model (zip: metadata.json, config.json, model.weights.h5)")
