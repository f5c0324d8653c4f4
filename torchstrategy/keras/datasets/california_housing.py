"""`keras.datasets.california_housing.load_data(version, path, test_split, seed)`: Keras 3's split.
Reads Keras's `california_housing.npz` (arrays x and y) and shuffles with NumPy's RandomState(seed) as Keras does."""
from __future__ import annotations

import numbers

import numpy as np

from torchstrategy.keras.datasets import _npz

ORIGIN = _npz.BASE_URL + "california_housing.npz"
FILE_SHA256 = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"
SMALL_VERSION_ROWS = 600
FEATURE_NAMES = ("MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup", "Latitude", "Longitude")


def load_data(
    version: str = "large", path: str = "california_housing.npz", test_split: float = 0.2, seed: int = 113
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Loads California Housing as `((x_train, y_train), (x_test, y_test))`, like Keras 3.

    x is (N, 8) (see FEATURE_NAMES), y (N,) the median house value in dollars. `version='large'`
    keeps all 20640 rows, `'small'` the first 600. The rows are shuffled with
    `np.random.RandomState(seed)` and the first `int(N * (1 - test_split))` form the train split.

    Args:
        path: the npz's name, relative to each searched directory (`$TORCHSTRATEGY_DATA`, Keras's
            cache `<$KERAS_HOME or ~/.keras>/datasets/`, `./data`); an absolute path is read directly.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data(version="small")  # doctest: +SKIP
        >>> x_train.shape, x_test.shape  # doctest: +SKIP
        ((480, 8), (120, 8))
    """
    if isinstance(test_split, bool) or not isinstance(test_split, numbers.Real) or not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split!r}. It must be between 0 and 1 (exclusive of 1).")
    if version not in ("small", "large"):
        raise ValueError(f"Argument `version` must be one of 'small', 'large'. Received: version={version!r}")
    npz_file = _npz.locate("California Housing", path, ORIGIN, FILE_SHA256)
    with np.load(npz_file, allow_pickle=False) as archive:
        missing = [key for key in ("x", "y") if key not in archive.files]
        if missing:
            raise ValueError(
                f"{npz_file} is not Keras's california_housing.npz: it lacks the keys {missing} "
                f"(has {sorted(archive.files)}). It needs x (N, 8) and y (N,)."
            )
        x, y = archive["x"], archive["y"]
    if version == "small":
        x, y = x[:SMALL_VERSION_ROWS], y[:SMALL_VERSION_ROWS]
    order = np.arange(len(x))
    np.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    num_train = int(len(x) * (1 - test_split))
    return (np.array(x[:num_train]), np.array(y[:num_train])), (np.array(x[num_train:]), np.array(y[num_train:]))
