"""`tf.io.gfile`: TF's file-system calls (exists, makedirs, rmtree, glob, walk, GFile, ...) on local paths,
with TF's results and its tf.errors (NotFoundError for a missing path, AlreadyExistsError on overwrite)."""
from __future__ import annotations

import glob as _glob
import os
import shutil
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional

from torchstrategy.errors import AlreadyExistsError, NotFoundError, PermissionDeniedError

__all__ = ["GFile", "copy", "exists", "get_registered_schemes", "glob", "isdir", "join", "listdir", "makedirs",
           "mkdir", "remove", "rename", "rmtree", "stat", "walk"]


def _path(path: Any, op: str) -> str:
    if isinstance(path, bytes):
        return path.decode("utf-8")
    if isinstance(path, (str, os.PathLike)):
        path = os.fspath(path)
        if "://" in path and not path.startswith("file://"):
            raise NotImplementedError(f"tf.io.gfile.{op}: {path!r} names a remote file system; torchstrategy reads "
                                      f"local paths only (copy the data to a local or mounted directory).")
        return path[len("file://"):] if path.startswith("file://") else path
    raise TypeError(f"tf.io.gfile.{op}: expected a path (str or bytes), got {type(path).__name__}.")


def _checked(op: str, action: Callable[[], Any], path: str) -> Any:
    """Runs `action`, turning OSErrors into TF's errors (the tf.errors classes are OSErrors too)."""
    try:
        return action()
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    except FileExistsError:
        raise AlreadyExistsError(None, None, f"{path}: file already exists") from None
    except PermissionError:
        raise PermissionDeniedError(None, None, f"{path}; Permission denied") from None


def exists(path: Any) -> bool:
    """True if a file or directory is at `path`."""
    return os.path.exists(_path(path, "exists"))


def isdir(path: Any) -> bool:
    """True if `path` is a directory."""
    return os.path.isdir(_path(path, "isdir"))


def join(path: Any, *paths: Any) -> str:
    """`os.path.join` of the parts (tf.io.gfile.join)."""
    return os.path.join(_path(path, "join"), *(_path(p, "join") for p in paths))


def get_registered_schemes() -> List[str]:
    """The URL schemes this file system serves: local files only."""
    return ["", "file"]


def listdir(path: Any) -> List[str]:
    """The entries of directory `path` (names, without '.' and '..'). NotFoundError if it is missing."""
    name = _path(path, "listdir")
    if not os.path.isdir(name):
        raise NotFoundError(None, None, f"Could not find directory {name}")
    return sorted(os.listdir(name))


def glob(pattern: Any) -> List[str]:
    """Paths matching `pattern` (a glob, or a list of them)."""
    patterns = pattern if isinstance(pattern, (list, tuple)) else [pattern]
    found: List[str] = []
    for each in patterns:
        found.extend(_glob.glob(_path(each, "glob")))
    return sorted(set(found))


def makedirs(path: Any) -> None:
    """Creates `path` and missing parents; an existing directory is fine (as TF)."""
    name = _path(path, "makedirs")
    _checked("makedirs", lambda: os.makedirs(name, exist_ok=True), name)


def mkdir(path: Any) -> None:
    """Creates the directory `path` (its parent must exist); an existing directory is fine (as TF's local fs)."""
    name = _path(path, "mkdir")
    if os.path.isdir(name):
        return
    _checked("mkdir", lambda: os.mkdir(name), name)


def remove(path: Any) -> None:
    """Deletes the file `path`; NotFoundError if it does not exist."""
    name = _path(path, "remove")
    _checked("remove", lambda: os.remove(name), name)


def rmtree(path: Any) -> None:
    """Deletes the directory `path` and everything in it; NotFoundError if it does not exist."""
    name = _path(path, "rmtree")
    if not os.path.exists(name):
        raise NotFoundError(None, None, f"{name} not found")
    _checked("rmtree", lambda: shutil.rmtree(name), name)


def rename(src: Any, dst: Any, overwrite: bool = False) -> None:
    """Moves `src` to `dst`; AlreadyExistsError if `dst` exists unless `overwrite`."""
    source, target = _path(src, "rename"), _path(dst, "rename")
    if not overwrite and os.path.exists(target):
        raise AlreadyExistsError(None, None, f"{target}: file already exists")
    _checked("rename", lambda: os.replace(source, target), source)


def copy(src: Any, dst: Any, overwrite: bool = False) -> None:
    """Copies the file `src` to `dst`; AlreadyExistsError if `dst` exists unless `overwrite`."""
    source, target = _path(src, "copy"), _path(dst, "copy")
    if not overwrite and os.path.exists(target):
        raise AlreadyExistsError(None, None, f"{target}: file already exists")
    _checked("copy", lambda: shutil.copyfile(source, target), source)


@dataclass(frozen=True)
class FileStatistics:
    """What tf.io.gfile.stat returns: `length` (bytes), `mtime_nsec`, `is_directory`."""

    length: int
    mtime_nsec: int
    is_directory: bool


def stat(path: Any) -> FileStatistics:
    """Size, modification time and kind of `path`; NotFoundError if it is missing."""
    name = _path(path, "stat")
    info = _checked("stat", lambda: os.stat(name), name)
    return FileStatistics(int(info.st_size), int(info.st_mtime_ns), os.path.isdir(name))


def walk(top: Any, topdown: bool = True, onerror: Optional[Callable] = None) -> Iterator[tuple]:
    """(directory, subdirectory names, file names) for each directory under `top`, as os.walk (sorted)."""
    for directory, subdirs, files in os.walk(_path(top, "walk"), topdown=topdown, onerror=onerror):
        subdirs.sort()
        yield directory, list(subdirs), sorted(files)


class GFile:
    """A file object with TF's names (tf.io.gfile.GFile): 'r'/'w'/'a' give str, with 'b' bytes.

    >>> with tf.io.gfile.GFile("/tmp/notes.txt", "w") as handle:   # doctest: +SKIP
    ...     handle.write("one\\n")
    """

    def __init__(self, name: Any, mode: str = "r") -> None:
        if not isinstance(mode, str) or mode.replace("b", "").replace("+", "") not in ("r", "w", "a"):
            raise ValueError(f"tf.io.gfile.GFile: mode must be 'r', 'w' or 'a' (with 'b' for bytes), got {mode!r}.")
        self._name = _path(name, "GFile")
        self._mode = mode
        self._handle: Any = None

    @property
    def name(self) -> str:
        """The file's path."""
        return self._name

    @property
    def mode(self) -> str:
        """The mode the file was opened with."""
        return self._mode

    def _file(self) -> Any:
        if self._handle is None:
            encoding = None if "b" in self.mode else "utf-8"
            self._handle = _checked("GFile", lambda: open(self.name, self.mode, encoding=encoding), self.name)
        return self._handle

    def read(self, n: int = -1) -> Any:
        return self._file().read(n)

    def readline(self) -> Any:
        return self._file().readline()

    def readlines(self) -> list:
        return self._file().readlines()

    def write(self, file_content: Any) -> None:
        handle = self._file()
        if "b" not in self.mode and isinstance(file_content, bytes):
            file_content = file_content.decode("utf-8")
        handle.write(file_content)

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.flush()

    def seek(self, offset: Optional[int] = None, whence: int = 0, position: Optional[int] = None) -> int:
        """Moves to `offset` from `whence` (0 start, 1 current, 2 end); `position` is TF's older name of `offset`."""
        if offset is None and position is None:
            raise TypeError("seek(): pass `offset`.")
        if offset is not None and position is not None:
            raise TypeError("seek(): pass `offset` or `position` (its deprecated name), not both.")
        return self._file().seek(offset if offset is not None else position, whence)

    def tell(self) -> int:
        return self._file().tell()

    def seekable(self) -> bool:
        return True

    def size(self) -> int:
        self.flush()
        return stat(self.name).length

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __iter__(self) -> Iterator[Any]:
        return iter(self._file())

    def __next__(self) -> Any:
        return next(self._file())

    def next(self) -> Any:
        """The next line (TF keeps this Python 2 spelling)."""
        return self.__next__()

    def __enter__(self) -> "GFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
