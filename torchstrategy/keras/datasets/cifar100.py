"""`keras.datasets.cifar100.load_data(label_mode)`: CIFAR-100 exactly as Keras returns it.
Reads the python-format `cifar-100-python/{train,test}` pickles, where Keras 3 or torchvision put them."""
from __future__ import annotations

import os
import pickle
from typing import Any

import numpy as np

from torchstrategy.keras import file_utils
from torchstrategy.keras.datasets import _locate

FOLDER = "cifar-100-python"
ARCHIVE_URL = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
ARCHIVE_SHA256 = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"
# Keras 3 extracts the archive into ~/.keras/datasets/cifar-100-python-target/.
_KERAS_TARGET = "cifar-100-python-target"
_LABEL_MODES = ("fine", "coarse")
# The pickles hold a numpy array; nothing else may be built from them.
_ALLOWED_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
}


def load_data(label_mode: str = "fine") -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Loads CIFAR-100 as `((x_train, y_train), (x_test, y_test))`, like `keras.datasets.cifar100`.

    x arrays are uint8 (N, 32, 32, 3) (channels_last); y arrays int64 (N, 1) (Keras 3 / TF 2.21
    returns them as int64), with the 100 fine classes (`label_mode='fine'`) or the 20 coarse
    superclasses (`label_mode='coarse'`). The real data has 50000 train and 10000 test rows.

    The folder `cifar-100-python/` (files train and test) is looked for in `$TORCHSTRATEGY_DATA`,
    Keras's cache `<$KERAS_HOME or ~/.keras>/datasets/` (and its `cifar-100-python-target/`, where
    Keras 3 extracts it) and `./data` (torchvision's layout). When it is nowhere, the archive is
    downloaded and extracted through keras.utils.get_file (sha256 checked), if the network answers
    and `$TORCHSTRATEGY_OFFLINE` is unset; else `DatasetNotFoundError` lists the directories.

    Example:
        >>> (x_train, y_train), _ = load_data(label_mode="coarse")  # doctest: +SKIP
        >>> x_train.shape, y_train.shape
        ((50000, 32, 32, 3), (50000, 1))
    """
    if label_mode not in _LABEL_MODES:
        raise ValueError(f'`label_mode` must be one of "fine", "coarse". Received: label_mode={label_mode!r}.')
    roots = _locate.search_roots((_KERAS_TARGET,))
    names = ("train", "test")
    root = _locate.find_root(roots, lambda path: all(os.path.isfile(os.path.join(path, FOLDER, n)) for n in names))
    if root is None:
        root = _download(roots)
    folder = os.path.join(root, FOLDER)
    x_train, y_train = _read_split(os.path.join(folder, "train"), f"{label_mode}_labels")
    x_test, y_test = _read_split(os.path.join(folder, "test"), f"{label_mode}_labels")
    return (x_train, y_train), (x_test, y_test)


def _download(roots: list[_locate.SearchRoot]) -> str:
    def fetch(target: str) -> None:
        file_utils.get_file(_KERAS_TARGET, ARCHIVE_URL, extract=True, file_hash=ARCHIVE_SHA256, cache_dir=target,
                            cache_subdir="")

    target = _locate.download_into_first_writable(
        roots,
        [ARCHIVE_URL],
        download=fetch,
        not_found=lambda reason: _locate.not_found_error(
            "CIFAR-100", f"the folder {FOLDER}/ (extracted from cifar-100-python.tar.gz, {ARCHIVE_URL})", roots, reason
        ),
    )
    return os.path.join(target, _KERAS_TARGET)


class _ArrayUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED_GLOBALS:
            raise pickle.UnpicklingError(f"CIFAR-100 files hold only numpy arrays; refusing to load {module}.{name}")
        return super().find_class(module, name)


def _read_split(path: str, label_key: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        with open(path, "rb") as source:
            record = _ArrayUnpickler(source, encoding="bytes").load()
        record = {key.decode("utf8"): value for key, value in record.items()}
        data, labels = record["data"], record[label_key]
    except (pickle.UnpicklingError, EOFError, KeyError, AttributeError, ValueError) as error:
        raise _locate.DatasetCorruptedError(
            f"CIFAR-100 file {path} is not a CIFAR-100 python pickle with data and {label_key} ({error!r}). "
            f"Replace its folder with a fresh extraction of cifar-100-python.tar.gz ({ARCHIVE_URL})."
        ) from error
    x = np.asarray(data, dtype=np.uint8).reshape(len(data), 3, 32, 32).transpose(0, 2, 3, 1)
    y = np.reshape(labels, (len(labels), 1))
    return x, y
