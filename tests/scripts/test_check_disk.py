"""scripts/check_disk.sh: the setup scripts refuse an install the disk cannot hold before pip starts.

Runs the real shell function on this machine's disk; only the size asked for changes."""
from __future__ import annotations

import pathlib
import subprocess

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_disk.sh"


def _check(folder: pathlib.Path, gib: int) -> subprocess.CompletedProcess:
    command = f'source "{SCRIPT}"; check_disk "{folder}" {gib} "Installing the thing"'
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30)


@pytest.mark.slow  # starts bash
def test_a_disk_with_room_passes_silently(tmp_path):
    done = _check(tmp_path / "venv", 0)
    assert done.returncode == 0 and done.stderr == ""


@pytest.mark.slow  # starts bash
@pytest.mark.slow
def test_a_disk_without_room_is_refused_with_the_folder_the_need_and_what_to_do(tmp_path):
    done = _check(tmp_path / "venv", 1_000_000)  # a million GiB: no disk here has that
    assert done.returncode == 1
    assert "Installing the thing needs about 1000000 GiB free in" in done.stderr
    assert str(tmp_path / "venv") in done.stderr and "free some space" in done.stderr
