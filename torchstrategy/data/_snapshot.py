"""Persisted datasets: the on-disk format Dataset.save / Dataset.load / Dataset.snapshot share (ours, not TF's),
`Dataset.snapshot` itself, and `Dataset.fingerprint`.

The format: a directory holding `dataset.pkl` (or `dataset.pkl.gz` when compression='GZIP'), one pickle of
{"format", "spec", "elements"} with the elements as torch tensors and NumPy string arrays. It is written to a
temporary name and renamed, so a reader never sees half a file. A pickle runs code when read: load only
directories you wrote. TF's own layout (snapshot.metadata, dataset_spec.pb, sharded .snapshot files) is not
read or written."""
from __future__ import annotations

import gzip
import hashlib
import os
import pickle
import threading
from typing import Any, Iterator, Optional

import torch

from torchstrategy.data import _state
from torchstrategy.data._ops import UnaryDataset
from torchstrategy.data.dataset import Dataset

SAVE_FORMAT = "torchstrategy.data.Dataset.save/1"
_FILES = {"": "dataset.pkl", "GZIP": "dataset.pkl.gz"}


def compression_of(compression: Any, op: str) -> str:
    """'' or 'GZIP' for the compression names TF's save/load/snapshot accept (None, 'NONE', 'AUTO', 'GZIP')."""
    if compression is None:
        return ""
    if isinstance(compression, str) and compression.upper() in ("", "NONE", "AUTO", "GZIP", "SNAPPY"):
        # AUTO/SNAPPY: no snappy codec in the standard library, so these write GZIP
        return "" if compression.upper() in ("", "NONE") else "GZIP"
    raise ValueError(f"{op}: unknown compression {compression!r}; use None, 'NONE', 'AUTO' or 'GZIP'.")


def write_elements(directory: str, elements: list, spec: Any, compression: str) -> None:
    """Writes `elements` under `directory` in the saved-dataset format, atomically."""
    os.makedirs(directory, exist_ok=True)
    final = os.path.join(directory, _FILES[compression])
    temporary = f"{final}.tmp{os.getpid()}.{threading.get_ident()}"
    opener = gzip.open if compression == "GZIP" else open
    with opener(temporary, "wb") as stream:
        pickle.dump({"format": SAVE_FORMAT, "spec": spec, "elements": elements}, stream)
    os.replace(temporary, final)
    for other, name in _FILES.items():  # a re-save with another compression leaves one file
        if other != compression and os.path.exists(os.path.join(directory, name)):
            os.remove(os.path.join(directory, name))


def saved_file(directory: str) -> Optional[str]:
    """The saved-dataset file in `directory`, or None when there is none."""
    for name in _FILES.values():
        path = os.path.join(directory, name)
        if os.path.exists(path):
            return path
    return None


def read_elements(directory: str, op: str) -> tuple:
    """(elements, spec) from a directory written by write_elements."""
    path = saved_file(directory)
    if path is None:
        raise FileNotFoundError(f"{op}: {directory!r} holds no saved dataset (no {_FILES['']!r}); write it with "
                                f"Dataset.save(path) first.")
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as stream:
            saved = pickle.load(stream)
    except (OSError, EOFError, pickle.UnpicklingError) as error:
        raise ValueError(f"{op}: {path!r} is damaged or not a saved dataset ({error}).") from None
    if not isinstance(saved, dict) or saved.get("format") != SAVE_FORMAT:
        raise ValueError(f"{op}: {path!r} was not written by torchstrategy's Dataset.save.")
    return saved["elements"], saved["spec"]


# ---------------------------------------------------------------- fingerprint


def pipeline_hash(dataset: Dataset) -> int:
    """A 63-bit hash of the pipeline's ops and their order-fixing arguments (user functions not included)."""
    text = repr(_state.structure(dataset)).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little") & (2**63 - 1)  # int() of the uint64 works


def fingerprint(self: Dataset) -> torch.Tensor:
    """A uint64 scalar naming this pipeline: the same ops with the same arguments over the same source values give
    the same number in any process (TF hashes its dataset graph; this library's numbers differ from TF's).

    >>> int(Dataset.range(3).fingerprint()) == int(Dataset.range(3).fingerprint())
    True
    """
    return torch.tensor(pipeline_hash(self), dtype=torch.uint64)


# ---------------------------------------------------------------- snapshot


class SnapshotDataset(UnaryDataset):
    """`snapshot(path, ...)`: the first complete pass writes the input's elements under path/<fingerprint>; later
    passes (in this process or another) read them from there instead of running the input."""

    def __init__(self, input_dataset: Dataset, path: Any, compression: Any):
        super().__init__(input_dataset)
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"Dataset.snapshot: path must be a directory name, got {type(path).__name__}.")
        self._root = os.fsdecode(path)
        self._compression = compression_of(compression, "Dataset.snapshot")

    def _directory(self) -> str:
        return os.path.join(self._root, f"{pipeline_hash(self._input):016x}")

    def _iterate_elements(self) -> Iterator[Any]:
        directory = self._directory()
        if saved_file(directory) is not None:
            elements, _ = read_elements(directory, "Dataset.snapshot")
            yield from elements
            return
        written: list = []
        for element in self._input._iterate():
            written.append(element)
            yield element
        write_elements(directory, written, self._input._spec(), self._compression)


def snapshot(self: Dataset, path: Any, compression: Any = "AUTO", reader_func: Any = None, shard_func: Any = None,
             name: Optional[str] = None) -> Dataset:
    """The same elements, persisted under `path` by the first complete pass and read back from there afterwards.

    The snapshot is keyed by the pipeline's fingerprint (its ops, their arguments and element counts, the values,
    ranges and file names its sources hold), so a changed pipeline writes a new one. Unlike TF's, the key does not
    cover functions passed to map/filter or generators: use a new path after changing those.
    reader_func / shard_func are accepted and not needed (one file per snapshot)."""
    return SnapshotDataset(self, path, compression)
