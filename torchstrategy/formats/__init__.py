"""File formats, each a reader/writer pair: Keras 3's `.keras` zip and `.weights.h5`, Keras 2's legacy `.h5` (behind
`base.FileFormat`; `for_path` picks one from a path's suffix, `of_file` from a header), TF's tensor bundles."""
from __future__ import annotations

from typing import Optional

from torchstrategy.formats.base import (HDF5_MAGIC, OWN_MAGIC, ZIP_MAGIC, FileFormat, FormatError, format_for_path,
                                        format_of_file, read_header)
from torchstrategy.formats.keras_h5 import KERAS_H5, VarGroup
from torchstrategy.formats.keras_zip import KERAS_ZIP, KerasArchive
from torchstrategy.formats.legacy_h5 import LEGACY_H5, LegacyH5

#: Every format, most specific header test first (a Keras zip before anything else that is a zip).
FORMATS: tuple = (KERAS_ZIP, LEGACY_H5, KERAS_H5)


def for_path(path: str) -> Optional[FileFormat]:
    """The format `path`'s suffix asks for (`.keras`, `.weights.h5`, `.h5`/`.hdf5`), or None."""
    return format_for_path(path, FORMATS)


def of_file(path: str) -> Optional[FileFormat]:
    """The format `path`'s header shows, or None (e.g. torchstrategy's own checkpoint format, see OWN_MAGIC)."""
    return format_of_file(path, FORMATS)


__all__ = ["FileFormat", "FormatError", "FORMATS", "for_path", "of_file", "read_header", "KERAS_ZIP", "KERAS_H5",
           "LEGACY_H5", "KerasArchive", "LegacyH5", "VarGroup", "ZIP_MAGIC", "HDF5_MAGIC", "OWN_MAGIC"]
