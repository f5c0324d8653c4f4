"""cifar10.load_data(): exact arrays, search order, md5 enforcement, not-found and download paths."""
from __future__ import annotations

import functools
import http.server
import pathlib
import pickle
import socket
import sys
import tarfile
import threading
import time

import numpy as np
import pytest

from torchstrategy.keras.datasets import _locate, cifar10, testing

TRAIN_FILES = [f"data_batch_{i}" for i in range(1, 6)]


def decode_folder(folder: pathlib.Path) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Independent reader: the CIFAR homepage's recipe (pickle with encoding='bytes') plus NumPy."""

    def read(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        images, labels = [], []
        for name in names:
            with open(folder / name, "rb") as batch_file:
                batch = pickle.load(batch_file, encoding="bytes")
            images.append(batch[b"data"].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            labels.extend(batch[b"labels"])
        return np.concatenate(images), np.array(labels, dtype=np.uint8).reshape(-1, 1)

    return read(TRAIN_FILES), read(["test_batch"])


def assert_same(loaded, expected) -> None:
    for got, want in zip((*loaded[0], *loaded[1]), (*expected[0], *expected[1])):
        assert got.dtype == np.uint8
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_round_trip_gives_exact_arrays_in_file_order(tmp_path, monkeypatch):
    data = tmp_path / "data"
    folder = pathlib.Path(testing.write_cifar10(data, num_train=37, num_test=11, seed=3))
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(data))
    (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    assert x_train.shape == (37, 32, 32, 3) and y_train.shape == (37, 1)
    assert x_test.shape == (11, 32, 32, 3) and y_test.shape == (11, 1)
    assert_same(((x_train, y_train), (x_test, y_test)), decode_folder(folder))
    # Order: data_batch_1's rows come first (8 rows: 37 split as 8, 8, 7, 7, 7).
    with open(folder / "data_batch_1", "rb") as batch_file:
        first = pickle.load(batch_file, encoding="bytes")
    assert len(first[b"labels"]) == 8
    np.testing.assert_array_equal(y_train[:8, 0], first[b"labels"])


def test_channels_last_layout_matches_channel_major_rows(tmp_path, monkeypatch):
    testing.write_cifar10(tmp_path / "data", num_train=5, num_test=2, seed=1)
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    (x_train, _), _ = cifar10.load_data()
    with open(tmp_path / "data" / "cifar-10-batches-py" / "data_batch_1", "rb") as batch_file:
        row = pickle.load(batch_file, encoding="bytes")[b"data"][0]
    for r, c in [(0, 0), (0, 31), (5, 17), (31, 2)]:
        pixel = r * 32 + c  # red plane, then green, then blue
        assert tuple(x_train[0, r, c]) == (row[pixel], row[1024 + pixel], row[2048 + pixel])


def test_torchstrategy_data_is_preferred_over_keras_cache(tmp_path, monkeypatch):
    preferred = pathlib.Path(testing.write_cifar10(tmp_path / "data", num_train=10, num_test=5, seed=1))
    keras_home = tmp_path / "keras_home"
    other = pathlib.Path(testing.write_cifar10(keras_home / "datasets", num_train=10, num_test=5, seed=2))
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("KERAS_HOME", str(keras_home))
    loaded = cifar10.load_data()
    assert_same(loaded, decode_folder(preferred))
    assert not np.array_equal(loaded[0][0], decode_folder(other)[0][0])


def test_keras_cache_under_home_is_preferred_over_dot_data(isolated_dataset_env):
    home_cache = isolated_dataset_env / "home" / ".keras" / "datasets"
    expected = pathlib.Path(testing.write_cifar10(home_cache, num_train=6, num_test=3, seed=4))
    testing.write_cifar10(pathlib.Path.cwd() / "data", num_train=6, num_test=3, seed=5)
    assert_same(cifar10.load_data(), decode_folder(expected))


def test_keras3_cache_layout_is_found(isolated_dataset_env):
    target = isolated_dataset_env / "home" / ".keras" / "datasets" / "cifar-10-batches-py-target"
    expected = pathlib.Path(testing.write_cifar10(target, num_train=6, num_test=3, seed=6))
    assert_same(cifar10.load_data(), decode_folder(expected))


def test_dot_data_is_searched_last():
    expected = pathlib.Path(testing.write_cifar10(pathlib.Path.cwd() / "data", num_train=6, num_test=3, seed=7))
    assert_same(cifar10.load_data(), decode_folder(expected))


def test_md5_is_enforced_without_marker(tmp_path, monkeypatch):
    folder = pathlib.Path(testing.write_cifar10(tmp_path / "data", num_train=10, num_test=5))
    (folder / _locate.GENERATED_MARKER).unlink()
    altered = bytearray((folder / "data_batch_3").read_bytes())
    altered[-10] ^= 0xFF
    (folder / "data_batch_3").write_bytes(bytes(altered))
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    with pytest.raises(_locate.DatasetCorruptedError, match=r"md5 checksum differs.*data_batch_3") as info:
        cifar10.load_data()
    assert str(folder) in str(info.value)


def test_corrupted_first_folder_is_reported_not_skipped(tmp_path, monkeypatch):
    folder = pathlib.Path(testing.write_cifar10(tmp_path / "data", num_train=10, num_test=5))
    (folder / _locate.GENERATED_MARKER).unlink()
    testing.write_cifar10(tmp_path / "keras_home" / "datasets", num_train=10, num_test=5)
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    with pytest.raises(_locate.DatasetCorruptedError, match="incomplete or corrupted"):
        cifar10.load_data()


def test_missing_file_is_named_even_with_marker(tmp_path, monkeypatch):
    folder = pathlib.Path(testing.write_cifar10(tmp_path / "data", num_train=10, num_test=5))
    (folder / "test_batch").unlink()
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    with pytest.raises(_locate.DatasetCorruptedError, match="missing files: test_batch"):
        cifar10.load_data()


def test_nothing_found_offline_lists_every_searched_directory_fast(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "empty"))
    started = time.monotonic()
    with pytest.raises(FileNotFoundError) as info:
        cifar10.load_data()
    assert time.monotonic() - started < 10
    assert isinstance(info.value, _locate.DatasetNotFoundError)
    message = str(info.value)
    keras_cache = tmp_path / "home" / ".keras" / "datasets"
    for directory in (tmp_path / "empty", keras_cache, keras_cache / "cifar-10-batches-py-target",
                      pathlib.Path.cwd() / "data"):
        assert f"- {directory}  (" in message
    assert "cifar-10-batches-py/" in message and "cifar-10-python.tar.gz" in message
    assert "TORCHSTRATEGY_DATA" in message and "TORCHSTRATEGY_OFFLINE" in message


def closed_local_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unreachable_download_host_fails_fast_with_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHSTRATEGY_OFFLINE")
    url = f"http://127.0.0.1:{closed_local_port()}/cifar-10-python.tar.gz"
    monkeypatch.setattr(cifar10, "ARCHIVE_URL", url)
    started = time.monotonic()
    with pytest.raises(_locate.DatasetNotFoundError, match=r"did not answer a TCP connect within 3 s"):
        cifar10.load_data()
    assert time.monotonic() - started < 10
    assert not (tmp_path / "home" / ".keras" / "datasets" / "cifar-10-python.tar.gz").exists()


def test_reachable_host_is_downloaded_into_first_writable_directory(tmp_path, monkeypatch):
    # A local server offers a generated archive; torchvision fetches it, then rejects its md5.
    source = tmp_path / "served"
    folder = testing.write_cifar10(source / "build", num_train=5, num_test=2)
    with tarfile.open(source / "cifar-10-python.tar.gz", "w:gz") as archive:
        archive.add(folder, arcname="cifar-10-batches-py")
    handler = functools.partial(QuietHandler, directory=str(source))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.delenv("TORCHSTRATEGY_OFFLINE")
        port = server.server_address[1]
        monkeypatch.setattr(cifar10, "ARCHIVE_URL", f"http://127.0.0.1:{port}/cifar-10-python.tar.gz")
        keras_cache = tmp_path / "home" / ".keras" / "datasets"
        with pytest.raises(_locate.DatasetNotFoundError, match=f"downloading into {keras_cache} failed"):
            cifar10.load_data()
    finally:
        server.shutdown()
        server.server_close()
    fetched = keras_cache / "cifar-10-python.tar.gz"
    assert fetched.read_bytes() == (source / "cifar-10-python.tar.gz").read_bytes()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest output clean
        pass


def test_missing_torchvision_says_how_to_install(tmp_path, monkeypatch):
    testing.write_cifar10(tmp_path / "data", num_train=5, num_test=2)
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "torchvision", None)  # makes `import torchvision` fail
    with pytest.raises(ImportError, match=r"pip install torchstrategy\[vision\]"):
        cifar10.load_data()
