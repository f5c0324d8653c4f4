"""CheckpointManager on a troubled disk: temp files of killed saves removed (never a live job's), a full
disk reported with the path and the bytes needed while the previous checkpoint stays, a file as directory."""
from __future__ import annotations

import errno
import json
import os
import re
import signal
import socket
import tempfile
import time

import pytest
import torch

import torchstrategy as tf
from torchstrategy.checkpoint import DirectoryLockedError, _io
from tests import _multiprocess as mp


def _temps(directory) -> list:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


def _manager(directory, values=(1.0, 2.0, 3.0), **kwargs):
    variable = tf.Variable(list(values))
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=variable), str(directory), max_to_keep=3, **kwargs)
    return manager, variable


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    result = mp.run_python(["-c", "import os; print(os.getpid())"], timeout=60)
    return int(result.stdout)


def _leave_killed_temp(directory, number: int, size: int = 4096, prefix: str = "ckpt") -> str:
    """A temp file exactly as a writer killed mid-save leaves it (named by mkstemp as write_atomically does)."""
    fd, path = tempfile.mkstemp(prefix=f".{prefix}-{number}.", suffix=".tmp", dir=str(directory))
    with os.fdopen(fd, "wb") as handle:
        handle.write(b"\0" * size)
    return path


# ----- a real writer killed with SIGKILL while its temp file exists --------------------------------
PAUSED_SAVE = r'''
import os, sys, time
import torch
import torchstrategy as tf
from torchstrategy.checkpoint import _io

directory, marker = sys.argv[1], sys.argv[2]
weights = tf.Variable(torch.zeros(4 << 20))  # 16 MiB of float32: a large temp file
manager = tf.train.CheckpointManager(tf.train.Checkpoint(w=weights), directory, max_to_keep=3)
manager.save()  # ckpt-1 is complete
real_open = _io._open_temp


class Paused:
    """Writes everything, then stops before the fsync and the rename, as if the job hung or was killed."""

    def __init__(self, handle):
        self._handle = handle

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def flush(self):
        self._handle.flush()
        with open(marker, "w") as note:
            note.write(str(os.getpid()))
        time.sleep(600)


_io._open_temp = lambda fd: Paused(real_open(fd))
weights.assign(torch.ones(4 << 20))
manager.save()  # ckpt-2: never finishes
'''


@pytest.mark.slow
def test_temp_of_a_save_killed_by_sigkill_is_removed_by_the_next_save_but_not_while_its_writer_lives(tmp_path):
    directory = tmp_path / "run"
    marker = str(tmp_path / "paused")
    writer = mp.start_python([mp.write_script(tmp_path, PAUSED_SAVE), str(directory), marker])
    try:
        assert mp.wait_for_files([marker], timeout=120), writer.stderr.read() if writer.poll() is not None else ""
        temps = _temps(directory)
        assert len(temps) == 1 and temps[0].startswith(".ckpt-2.")
        assert os.path.getsize(directory / temps[0]) > 16 << 20
        # another job starting on the folder meanwhile: the writer is alive, so its temp file is left alone
        observer, _ = _manager(directory)
        assert _temps(directory) == temps
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
        assert writer.returncode == -signal.SIGKILL
        assert _temps(directory) == temps  # what the kill left behind
        # the next save (ckpt-1 here: another number than the killed one) removes it
        with pytest.warns(UserWarning, match=rf"stale lock .*\.ckpt\.torchstrategy\.lock.*pid {writer.pid}"):
            assert observer.save() == str(directory / "ckpt-1")
    finally:
        mp.kill_process_group(writer)
    assert _temps(directory) == []
    assert sorted(os.listdir(directory)) == ["checkpoint", "ckpt-1"]  # no lock file left either


@pytest.mark.slow
def test_a_new_manager_removes_temps_of_killed_saves_of_its_prefix_only(tmp_path):
    manager, _ = _manager(tmp_path)
    manager.save()
    killed = _leave_killed_temp(tmp_path, 7, size=1 << 20)
    other_prefix = _leave_killed_temp(tmp_path, 3, prefix="ckpt-best")  # another manager's name in the folder
    backup_temp = _leave_killed_temp(tmp_path, 1, prefix="backup.ckpt")
    with open(tmp_path / ".ckpt.torchstrategy.lock", "w", encoding="utf-8") as handle:  # the killed saver's lock
        json.dump({"pid": _dead_pid(), "hostname": socket.gethostname(), "started": time.time(),
                   "purpose": "CheckpointManager", "token": "killed"}, handle)
    with pytest.warns(UserWarning, match="Taking over the stale lock"):
        restarted, variable = _manager(tmp_path, values=(0.0, 0.0, 0.0))
    assert not os.path.exists(killed)
    assert os.path.exists(other_prefix) and os.path.exists(backup_temp)
    assert not os.path.exists(tmp_path / ".ckpt.torchstrategy.lock")
    assert restarted.restore_or_initialize() == str(tmp_path / "ckpt-1") and variable.tolist() == [1.0, 2.0, 3.0]


HOLDER = r'''
import sys, time
from torchstrategy.checkpoint import DirectoryLock
DirectoryLock(sys.argv[1], purpose=sys.argv[2], lock_name=sys.argv[3]).acquire()
print("locked", flush=True)
time.sleep(120)
'''


@pytest.mark.slow
def test_temps_in_a_folder_locked_by_another_live_job_are_left_alone(tmp_path):
    directory = tmp_path / "shared"
    holder = mp.start_python([mp.write_script(tmp_path, HOLDER), str(directory), "BackupAndRestore",
                              ".torchstrategy.lock"])
    try:
        assert holder.stdout.readline().strip() == "locked"
        foreign = _leave_killed_temp(directory, 5)
        manager, _ = _manager(directory)
        assert manager.save() == str(directory / "ckpt-1")  # saving itself is not refused
        assert os.path.exists(foreign)
    finally:
        mp.kill_process_group(holder)
    manager.save()  # the holder is gone: the folder is no longer another job's
    assert not os.path.exists(foreign)


@pytest.mark.slow
def test_a_save_waits_for_a_live_job_saving_the_same_prefix_then_refuses_leaving_its_temp(tmp_path, monkeypatch):
    from torchstrategy.checkpoint import manager as manager_module

    directory = tmp_path / "run"
    holder = mp.start_python([mp.write_script(tmp_path, HOLDER), str(directory), "CheckpointManager saving",
                              ".ckpt.torchstrategy.lock"])
    try:
        assert holder.stdout.readline().strip() == "locked"
        in_use = _leave_killed_temp(directory, 4)  # the live saver's temp file
        manager, _ = _manager(directory)
        assert os.path.exists(in_use)
        monkeypatch.setattr(manager_module, "_SAVE_LOCK_WAIT_S", 0.5)
        started = time.monotonic()
        with pytest.raises(DirectoryLockedError, match=rf"another live job \(pid {holder.pid} on .*\) has been saving"):
            manager.save()
        assert time.monotonic() - started >= 0.5 and os.path.exists(in_use)
        assert tf.train.latest_checkpoint(str(directory)) is None
    finally:
        mp.kill_process_group(holder)


# ----- a full disk ------------------------------------------------------------------------------
class _FullDisk:
    """A temp file handle on a disk with `room` bytes left: writes beyond it fail with ENOSPC, as write(2) does."""

    def __init__(self, handle, room: int) -> None:
        self._handle, self._room = handle, room

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def write(self, data) -> int:
        size = len(memoryview(data).cast("B"))
        if self._handle.tell() + size > self._room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self._handle.write(data)


def test_no_space_left_names_the_file_and_the_bytes_needed_and_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    weights = tf.Variable(torch.arange(float(1 << 18)))  # 1 MiB
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(w=weights), str(tmp_path), max_to_keep=1)
    first = manager.save()
    weights.assign(torch.ones(1 << 18))
    real_open = _io._open_temp
    monkeypatch.setattr(_io, "_open_temp", lambda fd: _FullDisk(real_open(fd), room=64 << 10))
    with pytest.raises(OSError) as raised:
        manager.save()
    assert raised.value.errno == errno.ENOSPC
    message = str(raised.value)
    assert f"'{tmp_path / 'ckpt-2'}'" in message and "no space left on device" in message
    needed = int(re.search(r"it needs (\d+) bytes", message).group(1))
    assert "are free there" in message and "previous file at that path, if any, is kept" in message
    # the previous checkpoint is intact and still the latest; nothing half-written is left
    assert tf.train.latest_checkpoint(str(tmp_path)) == first and _temps(tmp_path) == []
    assert not os.path.exists(tmp_path / "ckpt-2")
    check = tf.Variable(torch.zeros(1 << 18))
    tf.train.Checkpoint(w=check).restore(first).assert_existing_objects_matched()
    assert torch.equal(check.value(), torch.arange(float(1 << 18)))
    # with room again, the same state makes a file of exactly the size the error said it needed
    monkeypatch.setattr(_io, "_open_temp", real_open)
    again = manager.save()
    assert os.path.getsize(again) == needed > 1 << 20


def test_no_space_reported_only_by_fsync_still_names_the_bytes_needed(tmp_path, monkeypatch):
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # delayed allocation: write() succeeded, the blocks are refused at fsync
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    weights = tf.Variable(torch.zeros(1000))
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(w=weights), str(tmp_path), max_to_keep=None)
    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match=re.escape(f"Could not write '{tmp_path / 'ckpt-1'}': no space left")) as raised:
        manager.save()
    needed = int(re.search(r"it needs (\d+) bytes", str(raised.value)).group(1))
    assert os.listdir(tmp_path) == [] and manager.latest_checkpoint is None
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert os.path.getsize(manager.save()) == needed > 4000


def test_no_space_for_a_writer_of_unknown_size_names_the_path(tmp_path, monkeypatch):
    real_open = _io._open_temp
    monkeypatch.setattr(_io, "_open_temp", lambda fd: _FullDisk(real_open(fd), room=1000))
    path = str(tmp_path / "notes.txt")
    expected = f"Could not write '{path}': no space left on device (1000 bytes were written when the disk filled"
    with pytest.raises(OSError, match=re.escape(expected)):
        _io.write_atomically(path, lambda handle: [handle.write(b"x" * 500) for _ in range(4)])
    assert os.listdir(tmp_path) == []


# ----- a file where a directory should be --------------------------------------------------------
def test_a_regular_file_as_the_directory_is_refused_at_construction_naming_it(tmp_path):
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    with pytest.raises(NotADirectoryError, match=re.escape(f"'{a_file}' cannot hold files: it is an existing file")):
        _manager(a_file)
    with pytest.raises(NotADirectoryError, match=re.escape(f"its parent '{a_file}' is an existing file")):
        _manager(a_file / "run")
    assert a_file.read_text() == "x"
