"""mnist.load_data(): idx files through torchvision, Keras's mnist.npz, search order and errors."""
from __future__ import annotations

import pathlib
import sys
import time

import numpy as np
import pytest

from torchstrategy.keras.datasets import _locate, mnist, testing


def decode_idx(path: pathlib.Path) -> np.ndarray:
    """Independent idx reader: big-endian int32 magic (0x08 type, ndim), dims, then uint8 data."""
    raw = path.read_bytes()
    magic = int.from_bytes(raw[:4], "big")
    assert magic >> 8 == 0x08  # unsigned byte data
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw[4 + 4 * ndim :], dtype=np.uint8).reshape(dims)


def decode_raw(raw_folder: pathlib.Path):
    return tuple(
        (decode_idx(raw_folder / f"{p}-images-idx3-ubyte"), decode_idx(raw_folder / f"{p}-labels-idx1-ubyte"))
        for p in ("train", "t10k")
    )


def assert_same(loaded, expected) -> None:
    for got, want in zip((*loaded[0], *loaded[1]), (*expected[0], *expected[1])):
        assert got.dtype == np.uint8
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def write_npz(path: pathlib.Path, seed: int, num_train: int = 9, num_test: int = 4) -> dict:
    rng = np.random.default_rng(seed)
    arrays = {
        "x_train": rng.integers(0, 256, (num_train, 28, 28), dtype=np.uint8),
        "y_train": rng.integers(0, 10, num_train, dtype=np.uint8),
        "x_test": rng.integers(0, 256, (num_test, 28, 28), dtype=np.uint8),
        "y_test": rng.integers(0, 10, num_test, dtype=np.uint8),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return arrays


def test_idx_round_trip_gives_exact_arrays(tmp_path, monkeypatch):
    raw = pathlib.Path(testing.write_mnist(tmp_path / "data", num_train=17, num_test=6, seed=2))
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    assert x_train.shape == (17, 28, 28) and y_train.shape == (17,)
    assert x_test.shape == (6, 28, 28) and y_test.shape == (6,)
    assert_same(((x_train, y_train), (x_test, y_test)), decode_raw(raw))


def test_keras_npz_in_keras_cache(isolated_dataset_env):
    arrays = write_npz(isolated_dataset_env / "home" / ".keras" / "datasets" / "mnist.npz", seed=1)
    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    expected = ((arrays["x_train"], arrays["y_train"]), (arrays["x_test"], arrays["y_test"]))
    assert_same(((x_train, y_train), (x_test, y_test)), expected)


def test_path_argument_is_relative_to_each_searched_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    arrays = write_npz(tmp_path / "kh" / "datasets" / "my_mnist.npz", seed=3)
    (x_train, _), _ = mnist.load_data(path="my_mnist.npz")
    np.testing.assert_array_equal(x_train, arrays["x_train"])
    with pytest.raises(_locate.DatasetNotFoundError):
        mnist.load_data()  # the default name mnist.npz is not there


def test_absolute_npz_path_is_read_directly(tmp_path):
    arrays = write_npz(tmp_path / "elsewhere" / "digits.npz", seed=4)
    _, (x_test, y_test) = mnist.load_data(path=str(tmp_path / "elsewhere" / "digits.npz"))
    np.testing.assert_array_equal(x_test, arrays["x_test"])
    np.testing.assert_array_equal(y_test, arrays["y_test"])


def test_missing_absolute_path_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        mnist.load_data(path=str(tmp_path / "nope.npz"))


def test_npz_without_keras_keys_is_rejected(isolated_dataset_env):
    target = isolated_dataset_env / "home" / ".keras" / "datasets" / "mnist.npz"
    target.parent.mkdir(parents=True)
    np.savez(target, images=np.zeros((2, 28, 28), np.uint8))
    with pytest.raises(ValueError, match=r"lacks the keys \['x_train', 'y_train', 'x_test', 'y_test'\]"):
        mnist.load_data()


def test_torchstrategy_data_is_preferred_over_keras_npz(tmp_path, monkeypatch):
    raw = pathlib.Path(testing.write_mnist(tmp_path / "data", num_train=8, num_test=3, seed=5))
    write_npz(tmp_path / "home" / ".keras" / "datasets" / "mnist.npz", seed=6, num_train=8, num_test=3)
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    assert_same(mnist.load_data(), decode_raw(raw))


def test_dot_data_is_searched():
    raw = pathlib.Path(testing.write_mnist(pathlib.Path.cwd() / "data", num_train=5, num_test=2, seed=7))
    assert_same(mnist.load_data(), decode_raw(raw))


def test_incomplete_raw_folder_names_missing_files(tmp_path, monkeypatch):
    raw = pathlib.Path(testing.write_mnist(tmp_path / "data", num_train=5, num_test=2))
    (raw / "t10k-labels-idx1-ubyte").unlink()
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    with pytest.raises(_locate.DatasetCorruptedError, match="missing files: t10k-labels-idx1-ubyte"):
        mnist.load_data()


def test_nothing_found_offline_lists_every_searched_directory_fast(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "empty"))
    started = time.monotonic()
    with pytest.raises(_locate.DatasetNotFoundError) as info:
        mnist.load_data()
    assert time.monotonic() - started < 10
    message = str(info.value)
    for directory in (tmp_path / "empty", tmp_path / "home" / ".keras" / "datasets", pathlib.Path.cwd() / "data"):
        assert f"- {directory}  (" in message
    assert "mnist.npz" in message and "MNIST/raw/" in message and "train-images-idx3-ubyte" in message


def test_bad_path_argument_is_rejected():
    with pytest.raises(TypeError, match="path must be a non-empty file name"):
        mnist.load_data(path="")


def hide_torchvision(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "torchvision", None)  # makes `import torchvision` fail


def test_npz_needs_no_torchvision_but_idx_files_do(tmp_path, monkeypatch, isolated_dataset_env):
    arrays = write_npz(isolated_dataset_env / "home" / ".keras" / "datasets" / "mnist.npz", seed=8)
    testing.write_mnist(tmp_path / "data", num_train=5, num_test=2)
    hide_torchvision(monkeypatch)
    (x_train, _), _ = mnist.load_data()
    np.testing.assert_array_equal(x_train, arrays["x_train"])
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    with pytest.raises(ImportError, match=r"pip install torchstrategy\[vision\]"):
        mnist.load_data()
