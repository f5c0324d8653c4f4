"""Keras 3's `.keras` file: a zip of `metadata.json`, `config.json` (the architecture and compile settings),
`model.weights.h5` (keras_h5's layout) and optional `assets/`; read whole and checked before anything loads."""
from __future__ import annotations

import io
import json
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
    """Reads and checks a whole `.keras` file (a truncated or foreign zip raises FormatError naming it)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            missing = [m for m in (CONFIG, METADATA) if m not in names]
            if missing:
                raise FormatError(f"'{path}' is a zip but not a Keras model file: it has no {', '.join(missing)} "
                                  f"(members: {names[:8]}).")
            bad = archive.testzip()
            if bad is not None:
                raise FormatError(f"'{path}' is damaged: member '{bad}' fails its CRC check.")
            config = json.loads(archive.read(CONFIG))
            metadata = json.loads(archive.read(METADATA))
            weights = keras_h5.read_tree(io.BytesIO(archive.read(WEIGHTS))) if WEIGHTS in names else {}
            assets = {n[len("assets/"):]: archive.read(n) for n in names if n.startswith("assets/") and not n.endswith("/")}
    except zipfile.BadZipFile as error:
        raise FormatError(f"'{path}' is not a complete .keras file (a truncated or damaged zip: {error}). "
                          f"Save the model again.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FormatError(f"'{path}': config.json or metadata.json is not valid JSON ({error}).") from None
    return KerasArchive(config, metadata, weights, assets)


def write(handle: BinaryIO, archive: KerasArchive) -> None:
    """Writes the zip in Keras's member order: metadata.json, config.json, model.weights.h5, assets/."""
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as out:
        out.writestr(METADATA, json.dumps(archive.metadata))
        out.writestr(CONFIG, json.dumps(archive.config))
        out.writestr(WEIGHTS, keras_h5.tree_to_bytes(archive.weights))
        for name, data in archive.assets.items():
            out.writestr(f"assets/{name}", data)


def members(path: str) -> list[str]:
    """The member names of a `.keras` file, in order."""
    with zipfile.ZipFile(path) as archive:
        return archive.namelist()


KERAS_ZIP = FileFormat("keras", (".keras",), is_keras_zip, read, write,
                       "Keras 3 model (zip: metadata.json, config.json, model.weights.h5)")
