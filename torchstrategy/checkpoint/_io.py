"""Checkpoint files on disk: atomic writes (temp file, fsync, rename, directory fsync), and saving
and loading objects in the checksummed format of `_format`, naming the file on any error."""
from __future__ import annotations

import errno
import glob
import os
import re
import shutil
import tempfile
from typing import Any, BinaryIO, Callable, Optional

import torch

from torchstrategy.checkpoint import _format
from torchstrategy.checkpoint._format import CheckpointCorruptedError

_ZIP_MAGIC = b"PK\x03\x04"  # a plain torch.save file (written before this format existed)
_NO_SPACE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))  # a full disk, or a full quota


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


def _open_temp(fd: int) -> BinaryIO:
    """The temp file's writable handle (a seam: tests wrap it to pause a writer or fill the disk)."""
    return os.fdopen(fd, "wb")


def write_atomically(path: str, write: Callable[[Any], Any]) -> None:
    """Calls `write(file)` on a temp file next to `path`, fsyncs it, then renames it over `path`.

    A reader sees either the old file or the complete new one, never a partial write. Temp files a
    killed writer left for the same `path` are removed after the rename. A full disk raises
    OSError(ENOSPC) naming `path` and the bytes the file needed (`write` may return the file's size
    for that message); `path` itself is left as it was.
    """
    directory = os.path.dirname(os.path.abspath(path)) or "."
    check_directory_path(directory, "checkpoint directory")
    os.makedirs(directory, exist_ok=True)
    # the writer's pid in the name: a concurrent writer of the same path (every replica saving) is not stale
    fd, tmp = tempfile.mkstemp(prefix=f"{_temp_prefix(path)}p{os.getpid()}_", suffix=".tmp", dir=directory)
    try:
        handle = _open_temp(fd)
        size = None
        try:
            size = write(handle)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk may show only here (delayed allocation, network filesystems)
            handle.close()
        except OSError as error:
            known = size if isinstance(size, int) and not isinstance(size, bool) else None
            restated = _no_space_error(path, error, handle, known) if error.errno in _NO_SPACE else None
            _close_quietly(handle)  # closing flushes what is buffered: on a full disk that fails again
            if restated is None:
                raise
            raise restated from error
        except BaseException:
            _close_quietly(handle)
            raise
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)  # make the rename itself durable
    _remove_stale_temps(path)


def _close_quietly(handle: Any) -> None:
    try:
        handle.close()
    except OSError:
        pass


def _no_space_error(path: str, error: OSError, handle: Any, size: Optional[int]) -> OSError:
    """ENOSPC/EDQUOT restated with the file, the bytes it needed and the bytes that were free."""
    needed, written = size if size is not None else getattr(error, "bytes_needed", None), None
    if needed is None:  # a writer that does not know its size: say how far it got
        try:
            written = handle.tell()
        except (OSError, ValueError):
            pass
    try:
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(path)) or ".").free
    except OSError:
        free = None
    what = "no space left on device" if error.errno == errno.ENOSPC else "disk quota exceeded"
    size = f"it needs {_bytes(needed)}" if needed is not None else \
        f"{_bytes(written)} were written when the disk filled" if written is not None else "its size is unknown"
    room = f", and {_bytes(free)} are free there" if free is not None else ""
    return OSError(error.errno, f"Could not write '{path}': {what} ({size}{room}). The previous file at that "
                                f"path, if any, is kept unchanged. Free some space (e.g. lower max_to_keep or "
                                f"delete old checkpoints) or write to another disk.")


def _bytes(count: int) -> str:
    return f"{count} bytes ({count / 2 ** 20:.1f} MiB)" if count >= 2 ** 20 else f"{count} bytes"


def check_directory_path(directory: str, what: str) -> None:
    """Raises NotADirectoryError, naming it, when `directory` (or the closest of its parents that exists)
    is an existing non-directory, so it could never hold files; a missing folder is fine (made later)."""
    directory = os.path.abspath(os.fspath(directory))
    probe = directory
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return
        probe = parent
    if os.path.isdir(probe):
        return
    where = "it is an existing file" if probe == directory else f"its parent '{probe}' is an existing file"
    raise NotADirectoryError(errno.ENOTDIR, f"The {what} '{directory}' cannot hold files: {where}, not a directory. "
                                            f"Choose another path, or move that file away.")


def _remove_stale_temps(path: str) -> None:
    """Deletes temp files of earlier, interrupted writes of `path`: those whose writer is no longer running
    (another process may be writing the same path right now, e.g. every replica saving the same model)."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    prefix = _temp_prefix(path)
    pattern = os.path.join(glob.escape(directory), glob.escape(prefix) + "*.tmp")
    for stale in glob.glob(pattern):
        writer = re.match(r"p(\d+)_", os.path.basename(stale)[len(prefix):])
        if writer is not None and int(writer.group(1)) != os.getpid() and _running(int(writer.group(1))):
            continue
        try:
            os.unlink(stale)
        except OSError:
            pass


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
