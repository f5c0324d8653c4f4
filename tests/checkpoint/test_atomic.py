"""The checkpoint file format and its guarantees: exact round trips, corruption found and the file
named, a save killed at each phase leaves the previous checkpoint usable, and the directory lock."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.checkpoint import (CheckpointCorruptedError, DirectoryLock, DirectoryLockedError, load_state,
                                      save_state)
from torchstrategy.checkpoint._format import HEADER_SIZE
from tests import _multiprocess as mp


def _sample_state() -> dict:
    generator = torch.Generator().manual_seed(7)
    base = torch.randn(4, 6, generator=generator)
    return {
        "weights": OrderedDict(kernel=base, bias=torch.arange(6, dtype=torch.float64)),
        "transposed": base.t(),  # not contiguous
        "half": base.to(torch.bfloat16), "flags": base > 0, "scalar": torch.tensor(3, dtype=torch.int64),
        "empty": torch.zeros(0, 5), "numpy_rng": np.random.RandomState(3).get_state(),
        "nested": [1, "two", (3.0, None, {"deep": torch.ones(2, 2) * 5})],
    }


@pytest.mark.filterwarnings("ignore:Validating sparse tensor invariants")
def test_values_plain_pickle_cannot_hold_are_stored_too(tmp_path):
    sparse = torch.eye(3).to_sparse()
    path = str(tmp_path / "odd.ckpt")
    save_state({"dtype": torch.float16, "sparse": sparse, "dense": torch.arange(4)}, path)
    loaded = load_state(path)
    assert loaded["dtype"] is torch.float16 and torch.equal(loaded["sparse"].to_dense(), torch.eye(3))
    assert torch.equal(loaded["dense"], torch.arange(4))


class _Payload:
    def __reduce__(self):
        return (print, ("this must never run",))


def test_a_file_that_would_run_code_is_refused_even_with_valid_checksums(tmp_path):
    import pickle
    import struct
    import zlib

    from torchstrategy.checkpoint import _format

    structure = pickle.dumps({"tree": _Payload(), "tensors": []})
    fields = struct.pack("<8sHHQQII", _format.MAGIC, 1, 0, len(structure), 0, zlib.crc32(structure), 0)
    path = str(tmp_path / "evil.ckpt")
    with open(path, "wb") as handle:
        handle.write(fields + struct.pack("<I", zlib.crc32(fields)) + structure)
    with pytest.raises(CheckpointCorruptedError, match=r"evil.ckpt.*refusing to load builtins.print"):
        load_state(path)


def test_round_trip_is_exact_for_every_kind_of_value(tmp_path):
    state = _sample_state()
    path = str(tmp_path / "state.ckpt")
    save_state(state, path)
    loaded = load_state(path)
    assert isinstance(loaded["weights"], OrderedDict) and list(loaded["weights"]) == ["kernel", "bias"]
    for key in ("transposed", "half", "flags", "scalar", "empty"):
        assert loaded[key].dtype == state[key].dtype and torch.equal(loaded[key], state[key]), key
    assert torch.equal(loaded["weights"]["kernel"], state["weights"]["kernel"])
    assert loaded["weights"]["bias"].dtype == torch.float64
    assert loaded["nested"][:2] == [1, "two"] and loaded["nested"][2][:2] == (3.0, None)
    assert torch.equal(loaded["nested"][2][2]["deep"], torch.ones(2, 2) * 5)
    name, keys, *rest = loaded["numpy_rng"]
    expected = state["numpy_rng"]
    assert name == expected[0] and np.array_equal(keys, expected[1]) and keys.dtype == expected[1].dtype
    assert tuple(rest) == tuple(expected[2:])


def test_files_written_by_plain_torch_save_are_still_read(tmp_path):
    path = str(tmp_path / "old.pt")
    torch.save({"w": torch.arange(3.0)}, path)
    assert torch.equal(load_state(path)["w"], torch.arange(3.0))


def _corruptions(size: int) -> list:
    return [("truncated inside the header", lambda raw: raw[:HEADER_SIZE // 2]),
            ("truncated after the header", lambda raw: raw[:HEADER_SIZE + 10]),
            ("truncated in the tensor data", lambda raw: raw[:size - 100]),
            ("one flipped bit in the tensor data", lambda raw: _flip(raw, size - 50)),
            ("one flipped bit in the structure", lambda raw: _flip(raw, HEADER_SIZE + 40)),
            ("one flipped bit in the header", lambda raw: _flip(raw, 20)),
            ("an empty file", lambda raw: b"")]


def _flip(raw: bytes, index: int) -> bytes:
    return raw[:index] + bytes([raw[index] ^ 0x10]) + raw[index + 1:]


def test_truncation_and_bit_flips_are_detected_and_name_the_file(tmp_path):
    path = str(tmp_path / "ckpt-1")
    save_state({"w": torch.randn(200)}, path)
    with open(path, "rb") as handle:
        raw = handle.read()
    for what, corrupt in _corruptions(len(raw)):
        with open(path, "wb") as handle:
            handle.write(corrupt(raw))
        with pytest.raises(CheckpointCorruptedError, match=re.escape(path)) as error:
            load_state(path)
        assert "corrupted" in str(error.value), what
    with open(path, "wb") as handle:
        handle.write(b"just some text file, not a checkpoint")
    with pytest.raises(CheckpointCorruptedError, match="not a torchstrategy checkpoint"):
        load_state(path)
    with pytest.raises(FileNotFoundError, match="missing.ckpt"):
        load_state(str(tmp_path / "missing.ckpt"))


# ----- a save killed at each phase ------------------------------------------------------------
KILLED_SAVE = r'''
import os, signal, sys
import torchstrategy as tf

phase, directory = sys.argv[1], sys.argv[2]
values = tf.Variable([1.0, 2.0, 3.0])
ckpt = tf.train.Checkpoint(values=values)
manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=3)
manager.save()  # ckpt-1 holds [1, 2, 3]
values.assign([10.0, 20.0, 30.0])


def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


real_replace, real_fsync = os.replace, os.fsync
if phase == "temp_written":  # every byte is in the temp file; it was neither fsynced nor renamed
    # (only the temp file's fsync: the manager's save lock file is fsynced before it)
    os.fsync = lambda fd: die() if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp") else real_fsync(fd)
elif phase == "before_rename":  # fsynced, about to be renamed into place
    os.replace = die
elif phase == "before_index":  # data file complete and in place; the index update is cut
    os.replace = lambda src, dst: die() if os.path.basename(dst) == "checkpoint" else real_replace(src, dst)
manager.save()
print("the save was not interrupted", flush=True)
'''


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["temp_written", "before_rename", "before_index"])
def test_a_save_killed_at_any_phase_leaves_the_previous_checkpoint_restorable(tmp_path, phase):
    directory = str(tmp_path / "run")
    script = mp.write_script(tmp_path, KILLED_SAVE)
    result = mp.run_python([script, phase, directory], timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stdout + result.stderr
    leftovers = sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))
    if phase == "before_index":
        assert leftovers and leftovers[0].startswith(".checkpoint.")
        assert load_state(os.path.join(directory, "ckpt-2"))  # complete, just not indexed
    else:
        assert leftovers and leftovers[0].startswith(".ckpt-2.")
        assert not os.path.exists(os.path.join(directory, "ckpt-2"))
    latest = tf.train.latest_checkpoint(directory)
    assert latest == os.path.join(directory, "ckpt-1")

    values = tf.Variable([0.0, 0.0, 0.0])
    ckpt = tf.train.Checkpoint(values=values)
    manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=3)
    assert manager.restore_or_initialize() == latest
    assert values.tolist() == [1.0, 2.0, 3.0]
    # the next save (numbered from the restored counter) replaces whatever the killed one left
    values.assign([4.0, 5.0, 6.0])
    assert manager.save() == os.path.join(directory, "ckpt-2")
    assert not [name for name in os.listdir(directory) if name.endswith(".tmp")]
    again = tf.Variable([0.0, 0.0, 0.0])
    tf.train.Checkpoint(values=again).restore(tf.train.latest_checkpoint(directory)).assert_consumed()
    assert again.tolist() == [4.0, 5.0, 6.0]


# ----- the directory lock ---------------------------------------------------------------------
HOLDER = r'''
import sys, time
from torchstrategy.checkpoint import DirectoryLock
DirectoryLock(sys.argv[1], purpose="holder test").acquire()
print("locked", flush=True)
time.sleep(120)
'''


@pytest.mark.slow
def test_lock_refuses_a_second_job_and_takes_over_from_a_dead_one(tmp_path):
    directory = str(tmp_path / "backup")
    holder = mp.start_python([mp.write_script(tmp_path, HOLDER), directory])
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(DirectoryLockedError, match=rf"pid {holder.pid} on host .* for holder test"):
            DirectoryLock(directory, purpose="second job").acquire()
    finally:
        mp.kill_process_group(holder)
    assert mp.wait_until(lambda: not mp.process_alive(holder.pid), 10)
    lock = DirectoryLock(directory, purpose="second job")
    with pytest.warns(UserWarning, match=rf"stale lock .*pid {holder.pid}.*no longer running"):
        lock.acquire()
    with open(lock.path, encoding="utf-8") as handle:
        assert json.load(handle)["pid"] == os.getpid()
    lock.release()
    assert not os.path.exists(lock.path)


def test_lock_of_another_host_is_respected_and_the_context_manager_releases(tmp_path):
    directory = str(tmp_path / "d")
    os.makedirs(directory)
    path = os.path.join(directory, ".torchstrategy.lock")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"pid": 1, "hostname": socket.gethostname() + "-elsewhere", "started": time.time(),
                   "purpose": "BackupAndRestore", "token": "x"}, handle)
    with pytest.raises(DirectoryLockedError, match="elsewhere.*delete the lock file"):
        DirectoryLock(directory).acquire()
    os.unlink(path)
    with DirectoryLock(directory, purpose="p") as lock:
        assert lock.held and os.path.exists(path)
    assert not os.path.exists(path) and not lock.held
