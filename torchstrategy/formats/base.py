"""The interface every file format implements (a reader/writer pair behind `FileFormat`) and the one rule
that picks a format: from the path when writing, from the file's own header when reading."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Optional, Sequence

ZIP_MAGIC = b"PK\x03\x04"
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
OWN_MAGIC = b"TSCKPT\x00\n"  # torchstrategy's checksummed checkpoint format (checkpoint/)


class FormatError(ValueError):
    """A file is not in the format asked for, is damaged, or does not fit the model it is loaded into."""


@dataclass(frozen=True)
class FileFormat:
    """One file format: its name, the path suffixes that ask for it, a test of the file's first bytes,
    and its reader (`read(path) -> payload`) and writer (`write(handle, payload)` on an open binary file,
    so the caller decides how the file lands: checkpoint.write_atomically)."""

    name: str
    suffixes: tuple
    sniff: Callable[[bytes, str], bool]
    read: Callable[[str], Any]
    write: Callable[[BinaryIO, Any], Any]
    description: str = ""


def read_header(path: str, size: int = 64) -> bytes:
    """The first `size` bytes of `path` (an error that names the path when it is missing or a folder)."""
    if os.path.isdir(path):
        raise FormatError(f"'{path}' is a directory, not a model or weights file.")
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except FileNotFoundError:
        raise FileNotFoundError(f"No file or directory found at '{path}'.") from None


def format_for_path(path: str, formats: Sequence[FileFormat]) -> Optional[FileFormat]:
    """The format a path's suffix asks for (the longest matching suffix wins: `.weights.h5` over `.h5`)."""
    lowered = str(path).lower()
    best, length = None, -1
    for fmt in formats:
        for suffix in fmt.suffixes:
            if lowered.endswith(suffix) and len(suffix) > length:
                best, length = fmt, len(suffix)
    return best


def format_of_file(path: str, formats: Sequence[FileFormat]) -> Optional[FileFormat]:
    """The format the file's header says it is in (None when no format recognises it)."""
    head = read_header(path)
    for fmt in formats:
        if fmt.sniff(head, path):
            return fmt
    return None
