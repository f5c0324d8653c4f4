"""Checkpoint files on disk: atomic writes (temp file, fsync, rename, directory fsync), and saving
and loading objects in the checksummed format of `_format`, naming the file on any error."""
from __future__ import annotations

import glob
import os
import tempfile
from typing import Any, Callable, Optional

import torch

from torchstrategy.checkpoint import _format
from torchstrategy.checkpoint._format import CheckpointCorruptedError

_ZIP_MAGIC = b"PK\x03\x04"  # a plain torch.save file (written before this format existed)


def _fsync_directory(directory: str) -> None:
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open directories; the rename is still atomic
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _temp_prefix(path: str) -> str:
    return "." + os.path.basename(path) + "."


def write_atomically(path: str, write: Callable[[Any], None]) -> None:
    """Calls `write(file)` on a temp file next to `path`, fsyncs it, then renames it over `path`.

    A reader sees either the old file or the complete new one, never a partial write. Temp files a
    killed writer left for the same `path` are removed after the rename.
    """
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)  # make the rename itself durable
    _remove_stale_temps(path)


def _remove_stale_temps(path: str) -> None:
    """Deletes temp files of earlier, interrupted writes of `path` (one writer per path at a time)."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    pattern = os.path.join(glob.escape(directory), glob.escape(_temp_prefix(path)) + "*.tmp")
    for stale in glob.glob(pattern):
        try:
            os.unlink(stale)
        except OSError:
            pass


def save_state(obj: Any, path: str) -> None:
    """Writes `obj` (tensors, NumPy arrays, numbers, strings and containers) to `path` atomically,
    with checksums of every byte."""
    write_atomically(path, lambda handle: _format.write(handle, obj))


def load_state(path: str, copy: bool = True) -> Any:
    """Reads a file written by `save_state`, verifying its checksums before returning anything (older
    plain torch.save files are read too). Raises FileNotFoundError, or CheckpointCorruptedError naming
    the file. `copy=False` returns tensors that are views of the mapped file (copy them before use)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such checkpoint file: '{path}'.")
    with open(path, "rb") as handle:
        if handle.read(4) == _ZIP_MAGIC:
            return _load_legacy(path)
        handle.seek(0)
        return _format.read(path, handle, copy=copy)


def read_structure(path: str) -> Any:
    """The saved object with its tensors left out (markers in their place): cheap metadata reads."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such checkpoint file: '{path}'.")
    with open(path, "rb") as handle:
        return _format.read(path, handle, structure_only=True)


def _load_legacy(path: str) -> Any:
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise CheckpointCorruptedError(
            f"Could not read '{path}': it is truncated, corrupted, or not a torchstrategy file "
            f"({type(error).__name__}: {error}).") from error


def remove_file(path: str) -> Optional[str]:
    """Deletes a checkpoint file (and temp files of its unfinished writes); returns the path if removed."""
    _remove_stale_temps(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return None
    return path
