"""tf.train.CheckpointManager and latest_checkpoint: numbering, max_to_keep, keep-every-n-hours,
intervals, state recovered from the index, corrupted files (fallback only when asked), and two
replicas where only the chief writes while the other waits and reads the same values."""
from __future__ import annotations

import os
import time

import pytest
import torch

import torchstrategy as tf
from torchstrategy.checkpoint import CheckpointCorruptedError
from tests import _multiprocess as mp


def _files(directory) -> list:
    return sorted(name for name in os.listdir(directory) if name.startswith("ckpt-"))


def _manager(directory, value: float = 0.0, **kwargs):
    variable = tf.Variable(value)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=variable), str(directory), **kwargs)
    return manager, variable


def test_max_to_keep_deletes_the_oldest_and_the_index_lists_the_rest(tmp_path):
    manager, v = _manager(tmp_path, max_to_keep=2)
    assert manager.latest_checkpoint is None and manager.checkpoints == []
    for value in range(1, 5):
        v.assign(float(value))
        assert manager.save() == str(tmp_path / f"ckpt-{value}")
    assert _files(tmp_path) == ["ckpt-3", "ckpt-4"]
    assert manager.checkpoints == [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-4")]
    assert manager.latest_checkpoint == tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-4")
    with open(tmp_path / "checkpoint", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    assert lines[:3] == ['model_checkpoint_path: "ckpt-4"', 'all_model_checkpoint_paths: "ckpt-3"',
                         'all_model_checkpoint_paths: "ckpt-4"']
    assert [line.split(":")[0] for line in lines[3:]] == ["all_model_checkpoint_timestamps"] * 2 + \
        ["last_preserved_timestamp"]

    recovered, w = _manager(tmp_path, max_to_keep=2)  # a restarted job finds the same list
    assert recovered.checkpoints == manager.checkpoints and recovered.latest_checkpoint == manager.latest_checkpoint
    assert recovered.restore_or_initialize() == str(tmp_path / "ckpt-4") and float(w) == 4.0
    assert recovered.save() == str(tmp_path / "ckpt-5") and _files(tmp_path) == ["ckpt-4", "ckpt-5"]
    assert recovered.save(checkpoint_number=100) == str(tmp_path / "ckpt-100")
    assert int(recovered.checkpoint.save_counter) == 6  # still counted, as in TF


def test_keep_every_n_hours_preserves_files_out_of_the_managed_list(tmp_path):
    manager, _ = _manager(tmp_path / "kept", max_to_keep=1, keep_checkpoint_every_n_hours=1e-6)
    plain, _ = _manager(tmp_path / "plain", max_to_keep=1)
    for _ in range(3):
        manager.save()
        plain.save()
        time.sleep(0.01)  # 1e-6 hours is 3.6 ms
    assert _files(tmp_path / "kept") == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert manager.checkpoints == [str(tmp_path / "kept" / "ckpt-3")]
    assert _files(tmp_path / "plain") == ["ckpt-3"]
    everything, _ = _manager(tmp_path / "all", max_to_keep=None)
    for _ in range(3):
        everything.save()
    assert len(everything.checkpoints) == 3 and _files(tmp_path / "all") == ["ckpt-1", "ckpt-2", "ckpt-3"]


def test_checkpoint_interval_skips_saves_until_enough_steps_passed(tmp_path):
    step = tf.Variable(0, dtype="int64")
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path), max_to_keep=None,
                                         step_counter=step, checkpoint_interval=2)
    saved = []
    for value in range(5):
        step.assign(value)
        saved.append(manager.save() is not None)
    assert saved == [True, False, True, False, True]
    assert manager.save() is None  # the same step twice
    step.assign(5)
    assert manager.save(check_interval=False) is not None


def test_last_checkpoint_step_is_where_the_interval_counts_from(tmp_path):
    # TF 2.21: with checkpoint_interval, saves wait until last_checkpoint_step + interval; without it, ignored
    step = tf.Variable(12, dtype="int64")
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path / "a"), max_to_keep=None,
                                         step_counter=step, checkpoint_interval=5, last_checkpoint_step=10)
    assert manager.save() is None  # 12 < 10 + 5
    step.assign(15)
    assert manager.save() is not None
    step.assign(10)
    plain = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path / "b"), max_to_keep=None,
                                       last_checkpoint_step=10)
    assert plain.save() is not None


def test_restore_or_initialize_calls_init_fn_only_without_a_checkpoint(tmp_path):
    calls = []
    manager, v = _manager(tmp_path, max_to_keep=3, init_fn=lambda: calls.append("init"))
    assert manager.restore_or_initialize() is None and calls == ["init"]
    v.assign(2.5)
    manager.save()
    again, w = _manager(tmp_path, max_to_keep=3, init_fn=lambda: calls.append("init"))
    assert again.restore_or_initialize() == str(tmp_path / "ckpt-1") and float(w) == 2.5 and calls == ["init"]


def test_latest_checkpoint_is_none_without_index_or_file(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    manager, _ = _manager(tmp_path, max_to_keep=2)
    path = manager.save()
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    os.unlink(path)
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    with open(tmp_path / "checkpoint", "w", encoding="utf-8") as handle:
        handle.write("this is not an index\n")
    with pytest.warns(UserWarning, match="cannot be parsed"):
        assert tf.train.latest_checkpoint(str(tmp_path)) is None


def _flip_last_byte(path: str) -> None:
    with open(path, "r+b") as handle:
        handle.seek(-1, os.SEEK_END)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_END)
        handle.write(bytes([byte[0] ^ 1]))


def test_a_corrupted_latest_checkpoint_fails_loudly_unless_fallback_is_asked(tmp_path):
    manager, v = _manager(tmp_path, max_to_keep=3)
    for value in (1.0, 2.0, 3.0):
        v.assign(value)
        manager.save()
    _flip_last_byte(str(tmp_path / "ckpt-3"))
    fresh, w = _manager(tmp_path, max_to_keep=3)
    with pytest.raises(CheckpointCorruptedError, match="ckpt-3' is corrupted"):
        fresh.restore_or_initialize()
    assert float(w) == 0.0  # nothing partially restored
    with pytest.raises(TypeError, match=r"set `manager\.fallback_to_previous = True`"):
        fresh.restore_or_initialize(fallback_to_previous=True)  # the former keyword (TF's method takes none)
    fresh.fallback_to_previous = True
    with pytest.warns(UserWarning, match="Skipping checkpoint '.*ckpt-3'.*corrupted"):
        assert fresh.restore_or_initialize() == str(tmp_path / "ckpt-2")
    assert float(w) == 2.0
    os.unlink(tmp_path / "ckpt-2")
    with open(tmp_path / "ckpt-1", "r+b") as handle:
        handle.truncate(100)
    with pytest.warns(UserWarning, match="Skipping"):
        with pytest.raises(CheckpointCorruptedError, match="No readable checkpoint"):
            last = _manager(tmp_path, max_to_keep=3)[0]
            last.fallback_to_previous = True
            last.restore_or_initialize()


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="positive integer or `None` for `max_to_keep`, got 0"):
        _manager(tmp_path, max_to_keep=0)
    with pytest.raises(ValueError, match="`step_counter` should be passed"):
        _manager(tmp_path, max_to_keep=1, checkpoint_interval=3)
    with pytest.raises(TypeError, match="manages a tf.train.Checkpoint"):
        tf.train.CheckpointManager(tf.Variable(1.0), str(tmp_path), max_to_keep=1)


# ----- two replicas -------------------------------------------------------------------------
TWO_REPLICAS = r'''
import json, os, sys, time
import torch
import torchstrategy as tf

directory, out = sys.argv[1], sys.argv[2]
strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)


class SlowRankState:
    """Per-replica state; capturing it takes a while, so a rank that did not wait would see no file."""
    _checkpoint_per_replica = True

    def __init__(self):
        self.calls = 0

    def state_dict(self):
        self.calls += 1
        time.sleep(1.0)
        return {"rank_values": [0, 1]}

    def load_state_dict(self, state):
        pass


with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))])
    weights = tf.Variable(torch.arange(3.0) + 10 * rank)  # differs per rank: the chief's must win
slow = SlowRankState()
manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, weights=weights, slow=slow), directory,
                                     max_to_keep=2)
path = manager.save()
present = os.path.exists(path)  # checked at once: the chief's file must already be complete
files = sorted(os.listdir(directory))
restored = tf.Variable(torch.zeros(3))
tf.train.Checkpoint(weights=restored).restore(path).expect_partial()
with open(os.path.join(out, f"rank{rank}.json"), "w") as handle:
    json.dump({"path": path, "present": present, "files": files, "restored": restored.tolist(),
               "capture_calls": slow.calls, "latest": manager.latest_checkpoint,
               "kernel": model.get_weights()[0].tolist()}, handle)
'''


@pytest.mark.slow
def test_two_replicas_only_the_chief_writes_and_the_other_waits_then_reads_it(tmp_path):
    directory, out = tmp_path / "ckpts", tmp_path / "out"
    out.mkdir()
    script = mp.write_script(tmp_path, TWO_REPLICAS)
    result = mp.run_python([script, str(directory), str(out)], timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    chief, other = mp.read_json(out / "rank0.json"), mp.read_json(out / "rank1.json")
    assert chief["path"] == other["path"] == chief["latest"] == other["latest"] == str(directory / "ckpt-1")
    assert other["present"] and other["files"] == ["checkpoint", "ckpt-1"]
    assert chief["capture_calls"] == 1 and other["capture_calls"] == 0  # one writer, one file
    assert chief["restored"] == other["restored"] == [0.0, 1.0, 2.0]  # rank 0's values on both
    assert sorted(os.listdir(directory)) == ["checkpoint", "ckpt-1"]
    assert tf.train.checkpoint_metadata(chief["path"])["world_size"] == 2
    assert tf.train.checkpoint_metadata(chief["path"])["strategy"] == "MirroredStrategy"

    # one replica here: the model and the variable restore; the per-replica object cannot
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))])
    weights = tf.Variable(torch.zeros(3))
    tf.train.Checkpoint(model=model, weights=weights).restore(chief["path"]).expect_partial()
    assert weights.tolist() == [0.0, 1.0, 2.0] and model.get_weights()[0].tolist() == chief["kernel"]

    class Stub:
        _checkpoint_per_replica = True

        def state_dict(self):
            return {}

        def load_state_dict(self, state):
            pass

    with pytest.raises(ValueError, match=r"written by 2 replica\(s\), and this job has 1.*'slow' hold per-replica"):
        tf.train.Checkpoint(model=model, slow=Stub()).restore(chief["path"])
