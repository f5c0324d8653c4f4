"""Locates and safely reads the `.npz`/`.json` files of the Keras text and regression datasets.
Shared by imdb, reuters and california_housing; also holds the word-index remapping IMDB and Reuters share."""
from __future__ import annotations

import io
import json
import os
import pickle
import zipfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from torchstrategy.keras.datasets import _fetch, _locate

BASE_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"

# Ragged sequences are stored as object arrays, which only a pickle can rebuild; nothing but the
# numpy array machinery may be built from it, so a tampered file cannot run code.
_ALLOWED_GLOBALS = frozenset({
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
})


def locate(dataset: str, path: Any, origin: str, file_hash: str | None) -> str:
    """The file to read: `path` itself when absolute, else found in the searched roots or downloaded."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise TypeError(f"path must be a non-empty file name or path such as {os.path.basename(origin)!r}, got {path!r}")
    path = os.fspath(path)
    if os.path.isabs(path):
        if not os.path.isfile(path):
            raise _locate.DatasetNotFoundError(
                f"{dataset} file {path} does not exist. Pass the path of Keras's {os.path.basename(origin)} "
                f"(from {origin}), or a relative name to search the usual directories."
            )
        return path
    root = _fetch.find_or_download(dataset, [path], [origin], file_hash=file_hash)
    return os.path.join(root, path)


class _ArrayUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED_GLOBALS:
            raise pickle.UnpicklingError(
                f"refusing to build {module}.{name}: dataset files may hold only numpy arrays"
            )
        return super().find_class(module, name)


def _read_member(buffer: io.BytesIO) -> np.ndarray:
    try:
        return np.lib.format.read_array(buffer, allow_pickle=False)
    except ValueError:
        # An object array: skip the .npy header, then unpickle with only numpy's globals allowed.
        buffer.seek(0)
        major, _ = np.lib.format.read_magic(buffer)
        if major == 1:
            np.lib.format.read_array_header_1_0(buffer)
        elif major in (2, 3):
            np.lib.format.read_array_header_2_0(buffer)  # 3.0 differs only in the header's text encoding
        else:
            raise
        return _ArrayUnpickler(buffer).load()


def load_npz(path: str, dataset: str, keys: Sequence[str], origin: str) -> dict[str, np.ndarray]:
    """The arrays of an npz (object arrays included, read without general unpickling), checked for `keys`."""
    arrays: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                if member.endswith(".npy"):
                    arrays[member[: -len(".npy")]] = _read_member(io.BytesIO(archive.read(member)))
    except (zipfile.BadZipFile, pickle.UnpicklingError, ValueError, EOFError, OSError) as error:
        raise _locate.DatasetCorruptedError(
            f"{path} is not a readable {dataset} npz ({error}). Delete it so load_data() downloads it again, "
            f"or replace it with the original file from {origin}."
        ) from error
    missing = [key for key in keys if key not in arrays]
    if missing:
        raise ValueError(
            f"{path} is not Keras's {os.path.basename(origin)}: it lacks the keys {missing} (has {sorted(arrays)})."
        )
    return arrays


def load_json(dataset: str, path: Any, origin: str, file_hash: str) -> dict[str, int]:
    """A word index json (word -> rank), located like the npz files."""
    json_file = locate(dataset, path, origin, file_hash)
    try:
        with open(json_file, encoding="utf-8") as source:
            return json.load(source)
    except (ValueError, UnicodeDecodeError) as error:
        raise _locate.DatasetCorruptedError(
            f"{json_file} is not a readable json word index ({error}); delete it or replace it with {origin}."
        ) from error


def check_sequence_arguments(**values: Any) -> None:
    """ValueError unless each value is an int (None too, except for skip_top and index_from).

    Keras would fail later with an obscure TypeError inside its list comprehensions.
    """
    for name, value in values.items():
        if value is None and name not in ("skip_top", "index_from"):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            kind = "an integer" if name in ("skip_top", "index_from") else "an integer or None"
            raise ValueError(f"`{name}` must be {kind}, got {value!r}.")


def shift_indices(sequences: Any, start_char: int | None, index_from: int) -> list:
    """Each sequence as a list with `index_from` added to every word, `start_char` put first when not None."""
    prefix = [] if start_char is None else [start_char]
    return [prefix + [word + index_from for word in sequence] for sequence in sequences]


def drop_long(maxlen: int, sequences: list, labels: Any) -> tuple[list, list]:
    """Keeps the pairs whose sequence is shorter than `maxlen` (strictly, as Keras does)."""
    kept = [(sequence, label) for sequence, label in zip(sequences, labels) if len(sequence) < maxlen]
    return [sequence for sequence, _ in kept], [label for _, label in kept]


def limit_vocabulary(sequences: list, num_words: int | None, skip_top: int, oov_char: int | None) -> list:
    """Words outside [skip_top, num_words) become `oov_char`, or are removed when it is None.

    A falsy `num_words` stands for the largest index present, as in Keras 3 (so that largest word
    itself is out of range and becomes `oov_char` too: Keras's behaviour, kept on purpose).
    """
    if not num_words:
        num_words = max(max(sequence) for sequence in sequences)
    if oov_char is None:
        return [[word for word in sequence if skip_top <= word < num_words] for sequence in sequences]
    return [[word if skip_top <= word < num_words else oov_char for word in sequence] for sequence in sequences]
