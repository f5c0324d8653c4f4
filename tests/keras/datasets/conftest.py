"""Keeps dataset tests away from the real home, Keras cache, working directory and network."""
from __future__ import annotations

import pathlib

import pytest


@pytest.fixture(autouse=True)
def isolated_dataset_env(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """HOME and the working directory in tmp_path, no KERAS_HOME/TORCHSTRATEGY_DATA, downloads off."""
    home = tmp_path / "home"
    work = tmp_path / "cwd"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KERAS_HOME", raising=False)
    monkeypatch.delenv("TORCHSTRATEGY_DATA", raising=False)
    monkeypatch.setenv("TORCHSTRATEGY_OFFLINE", "1")
    monkeypatch.chdir(work)
    return tmp_path
