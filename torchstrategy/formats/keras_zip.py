"""Keras 3's `.keras` file: a zip of `metadata.json`, `config.json` (the architecture and compile settings),
`model.weights.h5` (keras_h5's layout) and optional `assets/`; read whole and checked before anything loads."""
from __future__ import annotations

import io
import json
import time
import zipfile
from dataclasses import dataclass, field
from typing import BinaryIO

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
            raw = {name: archive.read(name) for name in names if not name.endswith("/")}
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
    weights = keras_h5.read_tree(io.BytesIO(raw.pop(WEIGHTS))) if WEIGHTS in raw else {}
    assets = {name[len("assets/"):]: data for name, data in raw.items() if name.startswith("assets/")}
    return KerasArchive(config, metadata, weights, assets)


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
