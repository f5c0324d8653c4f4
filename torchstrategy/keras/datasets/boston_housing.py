"""`keras.datasets.boston_housing.load_data(path, test_split, seed)`: Keras's shuffled Boston Housing split.
Reads Keras's `boston_housing.npz` (arrays x and y) and shuffles with NumPy's RandomState(seed) as Keras does."""
from __future__ import annotations

import numbers

import numpy as np

from torchstrategy.keras.datasets import _npz

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/boston_housing.npz"
FILE_SHA256 = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(
    path: str = "boston_housing.npz", test_split: float = 0.2, seed: int = 113
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Loads Boston Housing as `((x_train, y_train), (x_test, y_test))`, like `keras.datasets.boston_housing`.

    The 506 rows (x float64 (N, 13), y float64 (N,) in k$) are shuffled with
    `np.random.RandomState(seed)`, then the first `int(N * (1 - test_split))` rows are the train split.

    Args:
        path: the npz's name, relative to each searched directory (`$TORCHSTRATEGY_DATA`, Keras's
            cache `<$KERAS_HOME or ~/.keras>/datasets/`, `./data`); an absolute path is read directly.
        test_split: fraction of rows kept for the test split, in [0, 1).
        seed: shuffling seed.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()  # doctest: +SKIP
        >>> x_train.shape, x_test.shape
        ((404, 13), (102, 13))
    """
    if isinstance(test_split, bool) or not isinstance(test_split, numbers.Real) or not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split!r}. It must be between 0 and 1 (exclusive of 1).")
    npz_file = _npz.locate("Boston Housing", path, ORIGIN, FILE_SHA256)
    with np.load(npz_file, allow_pickle=False) as archive:
        missing = [key for key in ("x", "y") if key not in archive.files]
        if missing:
            raise ValueError(
                f"{npz_file} is not Keras's boston_housing.npz: it lacks the keys {missing} (has "
                f"{sorted(archive.files)}). It needs x (N, 13) and y (N,)."
            )
        x, y = archive["x"], archive["y"]
    indices = np.arange(len(x))
    np.random.RandomState(seed).shuffle(indices)
    x, y = x[indices], y[indices]
    num_train = int(len(x) * (1 - test_split))
    return (np.array(x[:num_train]), np.array(y[:num_train])), (np.array(x[num_train:]), np.array(y[num_train:]))
