"""cifar100.load_data(label_mode): the python pickles, Keras 3's extraction folder, labels and errors."""
from __future__ import annotations

import pathlib
import pickle

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy.keras.datasets import _locate, cifar100, testing


def read_pickle(path: pathlib.Path) -> dict:
    with open(path, "rb") as source:
        return pickle.load(source, encoding="bytes")


@pytest.mark.parametrize("label_mode", ["fine", "coarse"])
def test_keras3_target_folder_gives_the_exact_arrays(isolated_dataset_env, label_mode):
    target = isolated_dataset_env / "home" / ".keras" / "datasets" / "cifar-100-python-target"
    folder = pathlib.Path(testing.write_cifar100(target, num_train=7, num_test=3, seed=4))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar100.load_data(label_mode=label_mode)
    # TF 2.21 on the same files: x uint8 (N, 32, 32, 3), y int64 (N, 1)
    assert x_train.dtype == np.uint8 and x_train.shape == (7, 32, 32, 3) and x_test.shape == (3, 32, 32, 3)
    assert y_train.dtype == np.int64 and y_train.shape == (7, 1) and y_test.shape == (3, 1)
    for split, x, y in (("train", x_train, y_train), ("test", x_test, y_test)):
        record = read_pickle(folder / split)
        rows = record[b"data"]
        # row layout: 1024 red, 1024 green, 1024 blue values, each 32x32 in row order
        np.testing.assert_array_equal(x[:, :, :, 0].reshape(len(x), 1024), rows[:, :1024])
        np.testing.assert_array_equal(x[:, :, :, 2].reshape(len(x), 1024), rows[:, 2048:])
        np.testing.assert_array_equal(y[:, 0], record[f"{label_mode}_labels".encode()])
    assert y_train.max() < (100 if label_mode == "fine" else 20)


def test_writer_matches_the_real_key_set(tmp_path):
    folder = pathlib.Path(testing.write_cifar100(tmp_path, num_train=4, num_test=2))
    assert set(read_pickle(folder / "train")) == {b"filenames", b"batch_label", b"fine_labels", b"coarse_labels", b"data"}
    meta = read_pickle(folder / "meta")
    assert len(meta[b"fine_label_names"]) == 100 and len(meta[b"coarse_label_names"]) == 20
    fine, coarse = read_pickle(folder / "test")[b"fine_labels"], read_pickle(folder / "test")[b"coarse_labels"]
    assert [f // 5 for f in fine] == coarse


def test_torchvision_layout_in_dot_data():
    testing.write_cifar100(pathlib.Path.cwd() / "data", num_train=2, num_test=1)
    (x_train, _), (x_test, _) = cifar100.load_data()
    assert x_train.shape == (2, 32, 32, 3) and x_test.shape == (1, 32, 32, 3)


def test_bad_label_mode_is_rejected():
    with pytest.raises(ValueError, match='must be one of "fine", "coarse". Received: label_mode=\'medium\''):
        cifar100.load_data(label_mode="medium")


def test_missing_folder_offline_lists_directories(isolated_dataset_env):
    with pytest.raises(_locate.DatasetNotFoundError) as info:
        cifar100.load_data()
    message = str(info.value)
    assert "cifar-100-python/" in message and cifar100.ARCHIVE_URL in message
    assert f"- {isolated_dataset_env / 'home' / '.keras' / 'datasets' / 'cifar-100-python-target'}  (" in message


def test_pickle_with_foreign_globals_is_refused(tmp_path, monkeypatch):
    folder = pathlib.Path(testing.write_cifar100(tmp_path, num_train=2, num_test=1))
    (folder / "train").write_bytes(pickle.dumps({b"data": pathlib.Path("x")}, protocol=4))
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path))
    with pytest.raises(_locate.DatasetCorruptedError, match="refusing to load pathlib.PosixPath"):
        cifar100.load_data()
