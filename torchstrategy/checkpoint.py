"""Files that survive a crash: atomic writes (temp file, fsync, rename) for everything the
library saves. The tf.train.Checkpoint API builds on this in a later step."""
from __future__ import annotations

import os
import tempfile
from typing import Any, Callable

import torch


def write_atomically(path: str, write: Callable[[Any], None]) -> None:
    """Calls `write(file)` on a temp file next to `path`, fsyncs it, then renames it over `path`.

    A reader sees either the old file or the complete new one, never a partial write.
    """
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
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
    try:  # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def save_state(obj: Any, path: str) -> None:
    """torch.save of `obj` to `path`, atomically."""
    write_atomically(path, lambda handle: torch.save(obj, handle))


def load_state(path: str) -> Any:
    """Loads a file written by `save_state` (tensors, numbers, strings and containers only)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such file: '{path}'.")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # corrupt or not ours: name the file
        raise ValueError(f"Could not read '{path}': it is truncated, corrupted, or not a torchstrategy "
                         f"file ({type(error).__name__}: {error}).") from error
