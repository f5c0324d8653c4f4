"""`keras.datasets.cifar10.load_data()`: the CIFAR-10 arrays exactly as Keras returns them.
Reads the standard `cifar-10-batches-py/` files through torchvision's CIFAR10 reader."""
from __future__ import annotations

import functools
import os
from types import ModuleType
from typing import Any

import numpy as np

from torchstrategy.keras.datasets import _locate

FOLDER = "cifar-10-batches-py"
ARCHIVE_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
# Keras >= 3.7 extracts the archive into ~/.keras/datasets/cifar-10-batches-py-target/.
_KERAS_SUBDIRS = ("cifar-10-batches-py-target",)


def load_data() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Loads CIFAR-10 as `((x_train, y_train), (x_test, y_test))`, like `keras.datasets.cifar10`.

    x arrays are uint8 (N, 32, 32, 3) (channels_last), y arrays uint8 (N, 1) with class ids
    0-9 (airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck). The real files
    give 50000 train rows (data_batch_1..5, in order) and 10000 test rows (test_batch).

    The folder `cifar-10-batches-py/` is looked for, in order, in:
      1. `$TORCHSTRATEGY_DATA`;
      2. Keras's cache `<$KERAS_HOME or ~/.keras>/datasets/` (also its
         `cifar-10-batches-py-target/` subfolder, where Keras 3 extracts it);
      3. `./data` (the root the PyTorch tutorials pass to torchvision; torchvision has no default).
    When it is nowhere, the archive is downloaded into the first writable of those directories,
    but only if www.cs.toronto.edu answers a TCP connect within 3 s (and `$TORCHSTRATEGY_OFFLINE`
    is unset); otherwise `DatasetNotFoundError` (a FileNotFoundError) lists the directories.
    The files' md5 sums are checked (by torchvision) unless the folder holds the marker file of
    data written by `torchstrategy.keras.datasets.testing.write_cifar10`.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()  # doctest: +SKIP
        >>> x_train.shape, y_train.shape
        ((50000, 32, 32, 3), (50000, 1))
    """
    tv_datasets = _locate.import_torchvision_datasets()
    reader = _reader_class(tv_datasets)
    roots = _locate.search_roots(_KERAS_SUBDIRS)
    root = _locate.find_root(roots, lambda path: os.path.isdir(os.path.join(path, FOLDER)))
    if root is None:
        root = _locate.download_into_first_writable(
            roots,
            [ARCHIVE_URL],
            download=lambda target: tv_datasets.utils.download_and_extract_archive(
                ARCHIVE_URL, target, filename="cifar-10-python.tar.gz", md5=reader.tgz_md5
            ),
            not_found=lambda reason: _not_found(roots, reason),
        )
    x_train, y_train = _read_split(reader, tv_datasets, root, train=True)
    x_test, y_test = _read_split(reader, tv_datasets, root, train=False)
    return (x_train, y_train), (x_test, y_test)


def _not_found(roots: list[_locate.SearchRoot], reason: str) -> _locate.DatasetNotFoundError:
    return _locate.not_found_error(
        "CIFAR-10",
        f"the folder {FOLDER}/ (extracted from cifar-10-python.tar.gz, {ARCHIVE_URL})",
        roots,
        reason,
    )


def _read_split(reader: type, tv_datasets: ModuleType, root: str, train: bool) -> tuple[np.ndarray, np.ndarray]:
    try:
        split = reader(root, train=train, download=False)
    except RuntimeError as error:
        raise _corrupted(reader, tv_datasets, os.path.join(root, FOLDER)) from error
    x = np.ascontiguousarray(split.data, dtype=np.uint8)
    y = np.asarray(split.targets, dtype=np.uint8).reshape(-1, 1)
    return x, y


def _corrupted(reader: type, tv_datasets: ModuleType, folder: str) -> _locate.DatasetCorruptedError:
    """Names each file of `folder` that is missing or whose md5 differs from the real dataset's."""
    generated = _locate.has_marker(folder)
    expected = [*reader.train_list, *reader.test_list, [reader.meta["filename"], reader.meta["md5"]]]
    missing, mismatched = [], []
    for name, md5 in expected:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            missing.append(name)
        elif not generated and not tv_datasets.utils.check_integrity(path, md5):
            mismatched.append(name)
    problems = []
    if missing:
        problems.append(f"missing files: {', '.join(missing)}")
    if mismatched:
        problems.append(f"md5 checksum differs from the real CIFAR-10 for: {', '.join(mismatched)}")
    detail = "; ".join(problems) or "torchvision could not read it"
    return _locate.DatasetCorruptedError(
        f"CIFAR-10 folder {folder} is incomplete or corrupted ({detail}). Replace it with a fresh "
        f"extraction of cifar-10-python.tar.gz ({ARCHIVE_URL}), or delete it to let load_data() "
        "search further and download."
    )


@functools.lru_cache(maxsize=None)
def _reader_class(tv_datasets: ModuleType) -> type:
    """torchvision's CIFAR10, skipping the md5 checks only for folders with the generated marker."""

    class CIFAR10(tv_datasets.CIFAR10):
        def _folder(self) -> str:
            return os.path.join(self.root, self.base_folder)

        def _check_integrity(self) -> bool:
            if _locate.has_marker(self._folder()):
                names = [name for name, _ in self.train_list + self.test_list] + [self.meta["filename"]]
                return all(os.path.isfile(os.path.join(self._folder(), name)) for name in names)
            return super()._check_integrity()

        def _load_meta(self) -> None:
            if not _locate.has_marker(self._folder()):
                super()._load_meta()
                return
            import pickle

            with open(os.path.join(self._folder(), self.meta["filename"]), "rb") as meta_file:
                meta: Any = pickle.load(meta_file, encoding="latin1")
            self.classes = meta[self.meta["key"]]
            self.class_to_idx = {name: index for index, name in enumerate(self.classes)}

    return CIFAR10
