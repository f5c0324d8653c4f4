"""keras.utils.get_file: cache layout, hash checks, extraction, offline use and the download error."""
from __future__ import annotations

import hashlib
import io
import pathlib
import tarfile
import zipfile

import pytest

import torchstrategy as tf
from torchstrategy.keras import file_utils

PAYLOAD = b"hello, cache\n"


@pytest.fixture(autouse=True)
def keras_home(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """KERAS_HOME in tmp_path (not created: get_file creates it, as Keras does on import); downloads on."""
    home = tmp_path / "kh"
    monkeypatch.setenv("KERAS_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TORCHSTRATEGY_OFFLINE", raising=False)
    return home


@pytest.fixture
def source(tmp_path: pathlib.Path) -> pathlib.Path:
    """A served folder: a.txt, a tar.gz and a zip both holding a.txt (reached through file:// URLs)."""
    folder = tmp_path / "served"
    folder.mkdir()
    (folder / "a.txt").write_bytes(PAYLOAD)
    with tarfile.open(folder / "arch.tar.gz", "w:gz") as archive:
        info = tarfile.TarInfo("a.txt")
        info.size = len(PAYLOAD)
        archive.addfile(info, io.BytesIO(PAYLOAD))
    with zipfile.ZipFile(folder / "arch.zip", "w") as archive:
        archive.writestr("a.txt", PAYLOAD)
    return folder


def url(path: pathlib.Path) -> str:
    return path.as_uri()


def test_reachable_by_the_tf_name():
    assert tf.keras.utils.get_file is file_utils.get_file


def test_download_places_files_where_keras_does(keras_home, source):
    # Layout frozen from TF 2.21 (Keras 3) get_file with the same calls and file:// origins.
    get_file = tf.keras.utils.get_file
    assert get_file(origin=url(source / "a.txt")) == str(keras_home / "datasets" / "a.txt")
    assert get_file("b.txt", origin=url(source / "a.txt"), cache_subdir="sub") == str(keras_home / "sub" / "b.txt")
    assert (keras_home / "sub" / "b.txt").read_bytes() == PAYLOAD
    tar_dir = get_file("arch.tar.gz", origin=url(source / "arch.tar.gz"), extract=True)
    assert tar_dir == str(keras_home / "datasets" / "arch_extracted")
    assert (keras_home / "datasets" / "arch.tar.gz").is_file()
    zip_dir = get_file("myarch", origin=url(source / "arch.zip"), extract=True)
    assert zip_dir == str(keras_home / "datasets" / "myarch")
    assert (keras_home / "datasets" / "myarch_archive").is_file()
    unnamed = get_file(origin=url(source / "arch.zip"), extract=True)
    assert unnamed == str(keras_home / "datasets" / "arch.zip")
    for folder in (tar_dir, zip_dir, unnamed):
        assert (pathlib.Path(folder) / "a.txt").read_bytes() == PAYLOAD


def test_untar_forces_tar_format(keras_home, source):
    folder = file_utils.get_file("t", origin=url(source / "arch.tar.gz"), untar=True)
    assert (pathlib.Path(folder) / "a.txt").read_bytes() == PAYLOAD
    with pytest.warns(UserWarning, match="Could not extract"):
        file_utils.get_file("z", origin=url(source / "arch.zip"), untar=True)


def test_cached_file_is_used_offline(keras_home, source, monkeypatch):
    cached = keras_home / "datasets" / "data.bin"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"pre-placed")
    monkeypatch.setenv("TORCHSTRATEGY_OFFLINE", "1")
    sha = hashlib.sha256(b"pre-placed").hexdigest()
    # the origin does not exist: a network (here file system) access would fail
    got = file_utils.get_file("data.bin", origin="https://nowhere.invalid/data.bin", file_hash=sha)
    assert got == str(cached) and cached.read_bytes() == b"pre-placed"


def test_stale_cached_file_is_downloaded_again(keras_home, source, capsys):
    cached = keras_home / "datasets" / "a.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"old contents")
    for digest in (hashlib.sha256(PAYLOAD).hexdigest(), hashlib.md5(PAYLOAD).hexdigest()):
        cached.write_bytes(b"old contents")
        file_utils.get_file(origin=url(source / "a.txt"), file_hash=digest)  # 'auto' picks by length
        assert cached.read_bytes() == PAYLOAD
    assert "hash does not match" in capsys.readouterr().out
    cached.write_bytes(b"old contents")
    file_utils.get_file(origin=url(source / "a.txt"), md5_hash=hashlib.md5(PAYLOAD).hexdigest())
    assert cached.read_bytes() == PAYLOAD


def test_force_download_replaces_a_valid_cache(keras_home, source):
    cached = keras_home / "datasets" / "a.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"local")
    assert file_utils.get_file(origin=url(source / "a.txt")) == str(cached)
    assert cached.read_bytes() == b"local"
    file_utils.get_file(origin=url(source / "a.txt"), force_download=True)
    assert cached.read_bytes() == PAYLOAD


def test_downloaded_file_with_wrong_hash_is_an_error(source):
    with pytest.raises(ValueError, match="does not match the provided value 0{64}"):
        file_utils.get_file(origin=url(source / "a.txt"), file_hash="0" * 64)


def test_cache_dir_argument_and_tmp_fallback(tmp_path, source):
    explicit = tmp_path / "mine"
    explicit.mkdir()
    got = file_utils.get_file("x.txt", origin=url(source / "a.txt"), cache_dir=str(explicit), cache_subdir="")
    assert got == str(explicit / "x.txt")
    # TF 2.21 (Keras 3) sends a cache_dir that is not an existing writable directory to /tmp/.keras
    assert file_utils._writable_cache_root(str(tmp_path / "not_there")) == "/tmp/.keras"


def test_missing_file_offline_names_file_origin_cache_and_remedy(keras_home, monkeypatch):
    monkeypatch.setenv("TORCHSTRATEGY_OFFLINE", "1")
    with pytest.raises(file_utils.DownloadFailedError) as info:
        file_utils.get_file("big.npz", origin="https://example.com/big.npz")
    message = str(info.value)
    assert "'big.npz'" in message and "https://example.com/big.npz" in message
    assert str(keras_home / "datasets" / "big.npz") in message
    assert "TORCHSTRATEGY_OFFLINE" in message and "copy the file to" in message


def test_failed_download_leaves_no_cached_file(keras_home, tmp_path):
    with pytest.raises(file_utils.DownloadFailedError, match="downloading it from file://") as info:
        file_utils.get_file("gone.txt", origin=url(tmp_path / "gone.txt"))
    assert isinstance(info.value, OSError)
    assert list((keras_home / "datasets").iterdir()) == []


def test_hash_helpers_against_hashlib(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(PAYLOAD * 10000)  # several read chunks
    assert file_utils.hash_file(path) == hashlib.sha256(PAYLOAD * 10000).hexdigest()
    assert file_utils.hash_file(path, "md5") == hashlib.md5(PAYLOAD * 10000).hexdigest()
    assert file_utils.validate_file(path, hashlib.md5(PAYLOAD * 10000).hexdigest())
    assert not file_utils.validate_file(path, "0" * 64)


def test_zip_member_escaping_the_folder_is_skipped(tmp_path):
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("../outside.txt", b"x")
        archive.writestr("inside.txt", b"y")
    with pytest.warns(UserWarning, match="outside"):
        assert file_utils.extract_archive(evil, tmp_path / "out")
    assert (tmp_path / "out" / "inside.txt").read_bytes() == b"y"
    assert not (tmp_path / "outside.txt").exists()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, ValueError, "specify the \"origin\""),
        ({"origin": "https://h/x", "hash_algorithm": "sha1"}, ValueError, "hash_algorithm must be one of"),
        ({"origin": "https://h/x", "fname": "a/b"}, ValueError, "fname must be a file name, not a path"),
        ({"origin": "https://h/"}, ValueError, "pass the `fname` argument"),
        ({"origin": 5}, TypeError, "origin must be a URL string"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        file_utils.get_file(**kwargs)


def test_a_cached_file_with_another_hash_offline_says_the_hash_does_not_match(keras_home, monkeypatch):
    import hashlib

    cached = keras_home / "datasets" / "a.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"an older copy\n")
    expected = hashlib.sha256(PAYLOAD).hexdigest()
    monkeypatch.setenv("TORCHSTRATEGY_OFFLINE", "1")
    with pytest.raises(file_utils.DownloadFailedError) as info:
        file_utils.get_file("a.txt", origin="https://example.com/a.txt", file_hash=expected)
    message = str(info.value)
    found = hashlib.sha256(b"an older copy\n").hexdigest()
    assert f"the cached copy at {cached} has sha256 hash {found}, not the expected {expected}" in message
    assert "not in the cache" not in message and "file_hash" in message
    assert cached.read_bytes() == b"an older copy\n"  # left as it was
