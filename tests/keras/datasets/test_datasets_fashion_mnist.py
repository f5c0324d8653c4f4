"""fashion_mnist.load_data(): Keras's gzipped idx cache files, search order and errors."""
from __future__ import annotations

import gzip
import pathlib
import struct

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy.keras.datasets import _locate, fashion_mnist, testing


def decode_gz_idx(path: pathlib.Path) -> np.ndarray:
    """Independent reader: gunzip, big-endian magic (0x0803 / 0x0801), dims, then uint8 data."""
    raw = gzip.decompress(path.read_bytes())
    magic = struct.unpack(">i", raw[:4])[0]
    ndim = magic & 0xFF
    dims = struct.unpack(f">{ndim}i", raw[4 : 4 + 4 * ndim])
    return np.frombuffer(raw[4 + 4 * ndim :], np.uint8).reshape(dims)


def test_keras_cache_files_give_the_exact_arrays(isolated_dataset_env):
    folder = pathlib.Path(testing.write_fashion_mnist(
        isolated_dataset_env / "home" / ".keras" / "datasets", num_train=9, num_test=4, seed=1))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
    # shapes and dtypes as TF 2.21 returns them from the same files: uint8 (N, 28, 28) and uint8 (N,)
    for got, shape in ((x_train, (9, 28, 28)), (y_train, (9,)), (x_test, (4, 28, 28)), (y_test, (4,))):
        assert got.dtype == np.uint8 and got.shape == shape
    np.testing.assert_array_equal(x_train, decode_gz_idx(folder / "train-images-idx3-ubyte.gz"))
    np.testing.assert_array_equal(y_train, decode_gz_idx(folder / "train-labels-idx1-ubyte.gz"))
    np.testing.assert_array_equal(x_test, decode_gz_idx(folder / "t10k-images-idx3-ubyte.gz"))
    np.testing.assert_array_equal(y_test, decode_gz_idx(folder / "t10k-labels-idx1-ubyte.gz"))
    assert y_train.max() < 10


def test_writer_headers_and_determinism(tmp_path):
    first = pathlib.Path(testing.write_fashion_mnist(tmp_path / "a", num_train=5, num_test=2, seed=3))
    again = pathlib.Path(testing.write_fashion_mnist(tmp_path / "b", num_train=5, num_test=2, seed=3))
    assert sorted(p.name for p in first.iterdir()) == sorted([*fashion_mnist.FILES, _locate.GENERATED_MARKER])
    images = gzip.decompress((first / "train-images-idx3-ubyte.gz").read_bytes())
    assert struct.unpack(">iiii", images[:16]) == (2051, 5, 28, 28)
    labels = gzip.decompress((first / "t10k-labels-idx1-ubyte.gz").read_bytes())
    assert struct.unpack(">ii", labels[:8]) == (2049, 2)
    assert (first / "t10k-images-idx3-ubyte.gz").read_bytes() == (again / "t10k-images-idx3-ubyte.gz").read_bytes()


def test_torchstrategy_data_is_searched_first(tmp_path, monkeypatch, isolated_dataset_env):
    testing.write_fashion_mnist(isolated_dataset_env / "home" / ".keras" / "datasets", num_train=3, num_test=1)
    preferred = pathlib.Path(testing.write_fashion_mnist(tmp_path / "data", num_train=6, num_test=2, seed=9))
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    (x_train, _), _ = fashion_mnist.load_data()
    np.testing.assert_array_equal(x_train, decode_gz_idx(preferred / "train-images-idx3-ubyte.gz"))


def test_missing_files_offline_list_directories_and_files(isolated_dataset_env):
    folder = pathlib.Path(testing.write_fashion_mnist(isolated_dataset_env / "home" / ".keras" / "datasets", 3, 1))
    (folder / "t10k-labels-idx1-ubyte.gz").unlink()  # an incomplete folder does not count as found
    with pytest.raises(_locate.DatasetNotFoundError) as info:
        fashion_mnist.load_data()
    message = str(info.value)
    assert f"- {isolated_dataset_env / 'home' / '.keras' / 'datasets'}  (" in message
    assert "fashion-mnist/t10k-labels-idx1-ubyte.gz" in message and "TORCHSTRATEGY_OFFLINE" in message
    assert fashion_mnist.BASE_URL in message


def test_file_that_is_not_gzip_is_a_clear_error(isolated_dataset_env):
    folder = pathlib.Path(testing.write_fashion_mnist(isolated_dataset_env / "home" / ".keras" / "datasets", 3, 1))
    (folder / "train-labels-idx1-ubyte.gz").write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="train-labels-idx1-ubyte.gz is not a readable gzip file"):
        fashion_mnist.load_data()
