"""`keras.datasets.mnist.load_data(path='mnist.npz')`: the MNIST arrays exactly as Keras returns them.
Reads torchvision's `MNIST/raw/*-idx?-ubyte` files through its MNIST reader, or Keras's own mnist.npz."""
from __future__ import annotations

import os

import numpy as np

from torchstrategy.keras.datasets import _locate

FOLDER = "MNIST"
_RAW_FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)
_NPZ_KEYS = ("x_train", "y_train", "x_test", "y_test")
_KERAS_NPZ_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"

Arrays = tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def load_data(path: str = "mnist.npz") -> Arrays:
    """Loads MNIST as `((x_train, y_train), (x_test, y_test))`, like `keras.datasets.mnist`.

    x arrays are uint8 (N, 28, 28), y arrays uint8 (N,) with digits 0-9; the real data has
    60000 train and 10000 test rows, in the files' order.

    Args:
        path: name of Keras's npz file, relative to each searched directory (Keras keeps it at
            `~/.keras/datasets/mnist.npz`); an absolute path is read directly.

    Each directory is searched, in order, for torchvision's `MNIST/raw/` folder (read through
    `torchvision.datasets.MNIST`; no md5 check there) and then for `path` (an npz with keys
    x_train, y_train, x_test, y_test): `$TORCHSTRATEGY_DATA`, Keras's cache
    `<$KERAS_HOME or ~/.keras>/datasets`, `./data` (the root the PyTorch tutorials use).
    When nothing is found, torchvision downloads the raw files into the first writable of those,
    but only if its mirror answers a TCP connect within 3 s (and `$TORCHSTRATEGY_OFFLINE` is unset);
    otherwise `DatasetNotFoundError` (a FileNotFoundError) lists the directories searched.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()  # doctest: +SKIP
        >>> x_train.shape, y_train.shape
        ((60000, 28, 28), (60000,))
    """
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise TypeError(f"path must be a non-empty file name or path such as 'mnist.npz', got {path!r}")
    path = os.fspath(path)
    if os.path.isabs(path):
        if os.path.isfile(path):
            return _read_npz(path)
        raise _locate.DatasetNotFoundError(
            f"MNIST file {path} does not exist. Pass the path of Keras's mnist.npz "
            f"(from {_KERAS_NPZ_URL}), or a relative name to search the usual directories."
        )
    roots = _locate.search_roots()
    for root in roots:
        if os.path.isdir(os.path.join(root.path, FOLDER)):
            return _read_torchvision(root.path)
        npz_file = os.path.join(root.path, path)
        if os.path.isfile(npz_file):
            return _read_npz(npz_file)
    root_path = _download(roots, path)
    return _read_torchvision(root_path)


def _download(roots: list[_locate.SearchRoot], npz_name: str) -> str:
    def not_found(reason: str) -> _locate.DatasetNotFoundError:
        return _locate.not_found_error(
            "MNIST",
            f"either Keras's {npz_name} (from {_KERAS_NPZ_URL}) or torchvision's folder "
            f"{FOLDER}/raw/ holding {', '.join(_RAW_FILES)} (gunzipped)",
            roots,
            reason,
        )

    try:
        tv_datasets = _locate.import_torchvision_datasets()
    except ImportError as error:
        raise not_found(f"downloading needs torchvision ({error})") from error
    first_file = tv_datasets.MNIST.resources[0][0]
    mirrors = [f"{mirror}{first_file}" for mirror in tv_datasets.MNIST.mirrors]
    return _locate.download_into_first_writable(
        roots,
        mirrors,
        download=lambda target: tv_datasets.MNIST(target, train=True, download=True),
        not_found=not_found,
    )


def _read_torchvision(root: str) -> Arrays:
    tv_datasets = _locate.import_torchvision_datasets()
    splits = []
    for train in (True, False):
        try:
            split = tv_datasets.MNIST(root, train=train, download=False)
        except RuntimeError as error:
            raise _corrupted(os.path.join(root, FOLDER, "raw")) from error
        x = np.ascontiguousarray(split.data.numpy(), dtype=np.uint8)
        y = split.targets.numpy().astype(np.uint8)
        splits.append((x, y))
    return splits[0], splits[1]


def _corrupted(raw_folder: str) -> _locate.DatasetCorruptedError:
    missing = [name for name in _RAW_FILES if not os.path.isfile(os.path.join(raw_folder, name))]
    detail = f"missing files: {', '.join(missing)}" if missing else "torchvision could not read it"
    return _locate.DatasetCorruptedError(
        f"MNIST folder {raw_folder} is incomplete ({detail}). It needs the gunzipped files "
        f"{', '.join(_RAW_FILES)}; replace or delete the folder."
    )


def _read_npz(npz_file: str) -> Arrays:
    with np.load(npz_file, allow_pickle=False) as archive:
        missing = [key for key in _NPZ_KEYS if key not in archive.files]
        if missing:
            raise ValueError(
                f"{npz_file} is not a Keras MNIST npz: it lacks the keys {missing} "
                f"(has {sorted(archive.files)}). It needs x_train, y_train, x_test, y_test."
            )
        x_train, y_train, x_test, y_test = (archive[key] for key in _NPZ_KEYS)
    return (x_train, y_train), (x_test, y_test)
