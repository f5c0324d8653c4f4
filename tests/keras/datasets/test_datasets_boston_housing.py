"""boston_housing.load_data(path, test_split, seed): Keras's npz, its seeded shuffle and split, errors."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy.keras.datasets import _locate, boston_housing, testing

# Row order of x_train followed by x_test that TF 2.21's keras.datasets.boston_housing.load_data
# returned for an 11-row npz, per (test_split, seed).
TF_ORDER = {
    (0.2, 113): ([4, 3, 8, 7, 1, 0, 10, 6, 9, 2, 5], 8),
    (0.5, 7): ([8, 5, 0, 2, 1, 10, 7, 3, 6, 9, 4], 5),
}


@pytest.fixture
def npz(isolated_dataset_env):
    path = isolated_dataset_env / "home" / ".keras" / "datasets" / "boston_housing.npz"
    testing.write_boston_housing(path, num_samples=11, seed=3)
    with np.load(path) as archive:
        return archive["x"], archive["y"]


@pytest.mark.parametrize("test_split, seed", sorted(TF_ORDER))
def test_split_and_shuffle_match_tf(npz, test_split, seed):
    x, y = npz
    order, num_train = TF_ORDER[(test_split, seed)]
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.boston_housing.load_data(test_split=test_split, seed=seed)
    np.testing.assert_array_equal(x_train, x[order[:num_train]])
    np.testing.assert_array_equal(y_train, y[order[:num_train]])
    np.testing.assert_array_equal(x_test, x[order[num_train:]])
    np.testing.assert_array_equal(y_test, y[order[num_train:]])
    assert x_train.dtype == np.float64 and x_train.shape[1] == 13 and y_train.ndim == 1


def test_default_arguments_are_keras_defaults(npz):
    x, _ = npz
    order, num_train = TF_ORDER[(0.2, 113)]
    (x_train, _), _ = boston_housing.load_data()
    np.testing.assert_array_equal(x_train, x[order[:num_train]])


def test_zero_test_split_keeps_every_row_for_training(npz):
    (x_train, _), (x_test, y_test) = boston_housing.load_data(test_split=0.0)
    assert x_train.shape == (11, 13) and x_test.shape == (0, 13) and y_test.shape == (0,)


def test_absolute_path_is_read_directly(tmp_path):
    path = testing.write_boston_housing(tmp_path / "elsewhere" / "b.npz", num_samples=5, seed=1)
    with np.load(path) as archive:
        expected = np.sort(archive["y"])
    (_, y_train), (_, y_test) = boston_housing.load_data(path=path, test_split=0.4)
    assert len(y_train) == 3 and len(y_test) == 2
    np.testing.assert_array_equal(np.sort(np.concatenate([y_train, y_test])), expected)


@pytest.mark.parametrize("bad", [1.0, -0.1, "0.2", True])
def test_bad_test_split_is_rejected(bad):
    with pytest.raises(ValueError, match="Invalid `test_split` argument"):
        boston_housing.load_data(test_split=bad)


def test_npz_without_x_and_y_is_rejected(isolated_dataset_env):
    path = isolated_dataset_env / "home" / ".keras" / "datasets" / "boston_housing.npz"
    path.parent.mkdir(parents=True)
    np.savez(path, features=np.zeros((3, 13)))
    with pytest.raises(ValueError, match=r"lacks the keys \['x', 'y'\]"):
        boston_housing.load_data()


def test_missing_file_offline_is_a_clear_error(isolated_dataset_env):
    with pytest.raises(_locate.DatasetNotFoundError, match="boston_housing.npz") as info:
        boston_housing.load_data()
    assert boston_housing.ORIGIN in str(info.value)
