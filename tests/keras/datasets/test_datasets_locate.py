"""cluster.environment data variables and the shared search/probe logic of keras.datasets."""
from __future__ import annotations

import os
import pathlib
import socket
import time

import pytest

from torchstrategy.cluster import environment
from torchstrategy.keras.datasets import _locate


def test_data_dir_unset_empty_and_user_expanded(tmp_path, monkeypatch):
    assert environment.data_dir() is None
    monkeypatch.setenv("TORCHSTRATEGY_DATA", "  ")
    assert environment.data_dir() is None
    monkeypatch.setenv("TORCHSTRATEGY_DATA", "~/datasets")
    assert environment.data_dir() == str(tmp_path / "home" / "datasets")


def test_keras_home_default_and_override(tmp_path, monkeypatch):
    assert environment.keras_home() == str(tmp_path / "home" / ".keras")
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    assert environment.keras_home() == str(tmp_path / "kh")


@pytest.mark.parametrize("value, expected", [("1", True), ("TRUE", True), ("yes", True), ("0", False), ("", False)])
def test_offline_values(monkeypatch, value, expected):
    monkeypatch.setenv("TORCHSTRATEGY_OFFLINE", value)
    assert environment.offline() is expected


def test_search_roots_order_and_deduplication(tmp_path, monkeypatch):
    keras_cache = tmp_path / "home" / ".keras" / "datasets"
    roots = _locate.search_roots(["sub"])
    assert [r.path for r in roots] == [str(keras_cache), str(keras_cache / "sub"), str(pathlib.Path.cwd() / "data")]
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "mine"))
    assert [r.path for r in _locate.search_roots()][0] == str(tmp_path / "mine")
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(keras_cache))  # same folder twice -> listed once
    paths = [r.path for r in _locate.search_roots()]
    assert paths.count(str(keras_cache)) == 1 and roots[0].origin == "Keras cache"


def test_probe_sees_a_listening_port():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        assert _locate.host_reachable("127.0.0.1", server.getsockname()[1], timeout=2.0)


def test_probe_of_closed_port_returns_false_without_waiting_for_timeout():
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    started = time.monotonic()
    assert not _locate.any_reachable([("127.0.0.1", port), ("127.0.0.1", port)], timeout=3.0)
    assert time.monotonic() - started < 1.5
    assert not _locate.any_reachable([], timeout=3.0)


def test_url_host_defaults_ports():
    assert _locate.url_host("https://www.cs.toronto.edu/~kriz/x.tar.gz") == ("www.cs.toronto.edu", 443)
    assert _locate.url_host("http://yann.lecun.com/exdb/mnist/") == ("yann.lecun.com", 80)
    assert _locate.url_host("http://127.0.0.1:8123/a") == ("127.0.0.1", 8123)


def test_offline_blocks_download_without_probing():
    started = time.monotonic()
    reason = _locate.download_blocker(["https://www.cs.toronto.edu/x"])
    assert reason is not None and "TORCHSTRATEGY_OFFLINE" in reason
    assert time.monotonic() - started < 0.5


def test_first_writable_creates_the_first_candidate(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    roots = [_locate.SearchRoot(str(blocker / "sub"), "x"), _locate.SearchRoot(str(tmp_path / "new" / "dir"), "y")]
    assert _locate.first_writable(roots) == str(tmp_path / "new" / "dir")
    assert os.path.isdir(tmp_path / "new" / "dir")
    assert _locate.first_writable(roots[:1]) is None
