"""california_housing.load_data(version, path, test_split, seed): Keras 3's seeded shuffle and split."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from tests.keras.datasets._sequence_files import write_reference_files
from torchstrategy.keras.datasets import _locate, california_housing

# Row order (x_train then x_test) and train size that TF 2.21 / Keras 3 returned for the 23-row npz.
KERAS_ORDER = {
    ((), ()): ([17, 14, 3, 8, 11, 13, 1, 6, 9, 22, 4, 7, 20, 19, 18, 15, 0, 16, 21, 12, 10, 2, 5], 18),
    (("version", "test_split", "seed"), ("small", 0.3, 9)):
        ([4, 9, 5, 3, 7, 18, 16, 6, 2, 13, 15, 10, 19, 11, 14, 12, 0, 22, 17, 8, 20, 1, 21], 16),
}


@pytest.fixture
def arrays(isolated_dataset_env):
    folder = write_reference_files(isolated_dataset_env / "home" / ".keras" / "datasets")
    with np.load(folder / "california_housing.npz") as archive:
        return archive["x"], archive["y"]


@pytest.mark.parametrize("names, values", sorted(KERAS_ORDER))
def test_matches_keras(arrays, names, values):
    x, y = arrays
    order, num_train = KERAS_ORDER[(names, values)]
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.california_housing.load_data(**dict(zip(names, values)))
    np.testing.assert_array_equal(x_train, x[order[:num_train]])
    np.testing.assert_array_equal(y_train, y[order[:num_train]])
    np.testing.assert_array_equal(x_test, x[order[num_train:]])
    np.testing.assert_array_equal(y_test, y[order[num_train:]])


def test_small_version_keeps_the_first_600_rows(isolated_dataset_env):
    folder = isolated_dataset_env / "home" / ".keras" / "datasets"
    folder.mkdir(parents=True)
    np.savez(folder / "california_housing.npz", x=np.arange(700 * 8, dtype=float).reshape(700, 8), y=np.arange(700.0))
    (_, y_train), (_, y_test) = california_housing.load_data(version="small", test_split=0.25)
    assert len(y_train) == 450 and len(y_test) == 150
    np.testing.assert_array_equal(np.sort(np.concatenate([y_train, y_test])), np.arange(600.0))


def test_bad_arguments_and_missing_file(isolated_dataset_env):
    with pytest.raises(ValueError, match="`version` must be one of 'small', 'large'"):
        california_housing.load_data(version="medium")
    with pytest.raises(ValueError, match="Invalid `test_split` argument"):
        california_housing.load_data(test_split=1)
    with pytest.raises(_locate.DatasetNotFoundError, match="california_housing.npz"):
        california_housing.load_data()
