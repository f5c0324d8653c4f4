"""`keras.datasets.fashion_mnist.load_data()`: Fashion-MNIST exactly as Keras returns it.
Reads the four gzipped idx files Keras caches under `datasets/fashion-mnist/`."""
from __future__ import annotations

import gzip
import os

import numpy as np

from torchstrategy.keras.datasets import _fetch

FOLDER = "fashion-mnist"
BASE_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
FILES = (
    "train-labels-idx1-ubyte.gz",
    "train-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
)
CLASS_NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")


def load_data() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Loads Fashion-MNIST as `((x_train, y_train), (x_test, y_test))`, like `keras.datasets.fashion_mnist`.

    x arrays are uint8 (N, 28, 28), y arrays uint8 (N,) with class ids 0-9 (see CLASS_NAMES);
    the real data has 60000 train and 10000 test rows.

    The folder `fashion-mnist/` with the four .gz files is looked for in `$TORCHSTRATEGY_DATA`,
    Keras's cache `<$KERAS_HOME or ~/.keras>/datasets/` and `./data`; when it is nowhere, the files
    are downloaded (through keras.utils.get_file) into the first writable of those, if the
    network answers and `$TORCHSTRATEGY_OFFLINE` is unset; else `DatasetNotFoundError`.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()  # doctest: +SKIP
        >>> x_train.shape, y_train.shape
        ((60000, 28, 28), (60000,))
    """
    names = [f"{FOLDER}/{name}" for name in FILES]
    root = _fetch.find_or_download("Fashion-MNIST", names, [BASE_URL + name for name in FILES])
    paths = [os.path.join(root, name) for name in names]
    y_train = _read_idx(paths[0], offset=8)
    x_train = _read_idx(paths[1], offset=16).reshape(len(y_train), 28, 28)
    y_test = _read_idx(paths[2], offset=8)
    x_test = _read_idx(paths[3], offset=16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)


def _read_idx(path: str, offset: int) -> np.ndarray:
    """The uint8 payload of a gzipped idx file after its `offset`-byte header (as Keras reads it)."""
    try:
        with gzip.open(path, "rb") as source:
            raw = source.read()
    except (OSError, EOFError) as error:
        raise ValueError(
            f"{path} is not a readable gzip file ({error}); delete it so load_data() downloads it again, "
            "or replace it with the original Fashion-MNIST file."
        ) from error
    return np.frombuffer(raw, np.uint8, offset=offset)
