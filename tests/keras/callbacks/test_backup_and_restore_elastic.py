"""BackupAndRestore on another replica count: a job SIGKILLed inside epoch 1 resumes from its backup with
2 replicas instead of 1, or 1 instead of 2 (under torchrun, as an elastic `--nnodes=1:2` job shrinks);
every sample of the interrupted epoch is trained once, each step on the same global batch as an
uninterrupted 1-replica run, and the weights and epoch logs equal that run's (1e-5)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tests import _multiprocess as mp

# argv: OUT REPLICAS ATTEMPT KILL_AT LAUNCH ("spawn": MirroredStrategy starts the replicas; "torchrun":
# MultiWorkerMirroredStrategy joins torchrun's; "fsdp": FSDPStrategy starts them, and the backup is sharded).
# The model has no dropout: on another replica count the random masks cannot be the uninterrupted run's, so
# only a model without randomness in training can equal it.
RESIZED = r'''
import json, os, signal, sys
import numpy as np, torch
import torchstrategy as tf

out, replicas, attempt, kill_at, launch = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
if launch == "torchrun":
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
elif launch == "fsdp":
    strategy = tf.distribute.experimental.FSDPStrategy([f"cpu:{i}" for i in range(replicas)])
else:
    strategy = tf.distribute.MirroredStrategy([f"cpu:{i}" for i in range(replicas)])
assert strategy.num_replicas_in_sync == replicas, strategy.num_replicas_in_sync
rank = strategy.process_rank
N = 96
''' + mp.SAMPLE_COUNTING_SCRIPT + r'''
where = {"epoch": 0, "step": 0}
record = open(os.path.join(out, f"ids_{attempt}_{rank}.jsonl"), "a", buffering=1)  # line by line: survives SIGKILL


class Recorded(tf.keras.Sequential):
    """Writes the sample ids of every batch this replica trains, with the epoch and global step."""
    def train_step(self, data):
        ids = (torch.as_tensor(data[1]).reshape(-1) // 10).tolist()
        record.write(json.dumps({"epoch": where["epoch"], "step": where["step"], "ids": ids}) + "\n")
        return super().train_step(data)


class Where(tf.keras.callbacks.Callback):
    """Tracks the epoch and step for the record; the last replica SIGKILLs itself after step `kill_at`."""
    def on_epoch_begin(self, epoch, logs=None):
        where["epoch"] = epoch

    def on_train_batch_begin(self, batch, logs=None):
        where["step"] = self.training_state.progress.global_step + 1

    def on_train_batch_end(self, batch, logs=None):
        if self.training_state.progress.global_step == kill_at and rank == replicas - 1:
            os.kill(os.getpid(), signal.SIGKILL)


class EpochLog(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if strategy.extended.should_checkpoint:
            with open(os.path.join(out, f"epoch_{epoch}.json"), "w") as f:
                json.dump(dict(logs, replicas=replicas), f)


tf.random.set_seed(0)
with strategy.scope():
    model = Recorded([tf.keras.layers.Dense(16, activation="relu", input_shape=(6,)), tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=DecodedLoss(),
                  metrics=[Visits("max_visits", "max"), Visits("min_visits", "min")])
dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N).batch(16)  # 6 global batches of 16 per epoch
callbacks = [EpochLog(), tf.keras.callbacks.BackupAndRestore(os.path.join(out, "backup"), save_freq=3), Where()]
model.fit(dataset, epochs=3, verbose=0, callbacks=callbacks)
weights = model.get_weights()  # under FSDPStrategy a collective: called on every replica
if strategy.extended.should_checkpoint:
    np.savez(os.path.join(out, "weights.npz"), *weights)
'''

KILL_AT = 10  # global step 10 = batch 4 of epoch 1; the backup is from step 9 (save_freq=3), so step 10 is lost
BACKUP_STEP = 9


def _run(folder, replicas: int, attempt: str, kill_at: int, launch: str):
    script = mp.write_script(folder, RESIZED)
    args = [script, str(folder), str(replicas), attempt, str(kill_at), launch]
    if launch != "torchrun":
        return mp.run_python(args, timeout=240)
    port = mp.free_port()
    # an elastic job (1 to 2 nodes) whose one node runs `replicas` processes this time
    return mp.run_torchrun(["--nnodes=1:2", f"--nproc-per-node={replicas}", "--max-restarts=0",
                            "--rdzv-backend=c10d", f"--rdzv-endpoint={mp.LOOPBACK}:{port}",
                            f"--local-addr={mp.LOOPBACK}", "--monitor-interval=0.5", "--rdzv-id=elastic-resize",
                            # one node is enough: start without waiting the default 30 s for a second one
                            "--rdzv-conf=join_timeout=60,last_call_timeout=1"], args, timeout=240)


def _records(folder, attempt: str) -> list:
    records = []
    for path in sorted(folder.glob(f"ids_{attempt}_*.jsonl")):
        records += mp.read_json_lines(str(path))
    return records


def _global_batches(records: list, epoch: int, steps: range) -> dict:
    """{global step: sorted ids trained at it by all replicas} for one epoch's steps in `steps`."""
    batches: dict = {}
    for record in records:
        if record["epoch"] == epoch and record["step"] in steps:
            batches.setdefault(record["step"], []).extend(record["ids"])
    return {step: sorted(ids) for step, ids in batches.items()}


def _weights(folder):
    with np.load(os.path.join(folder, "weights.npz")) as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("uninterrupted_1_replica")
    result = _run(folder, 1, "ref", 0, "spawn")
    assert result.returncode == 0, result.stderr[-4000:]
    return folder


def _check_resumed(folder, reference, interrupted: int, resumed: int):
    ref = _global_batches(_records(reference, "ref"), 1, range(7, 13))
    assert sorted(ref) == list(range(7, 13)) and sorted(i for ids in ref.values() for i in ids) == list(range(96))
    before = _global_batches(_records(folder, "a"), 1, range(7, BACKUP_STEP + 1))  # what the backup kept
    after = _global_batches(_records(folder, "b"), 1, range(7, 13))
    # the interrupted part trained steps 7-9 on its replicas, the resumed part steps 10-12 on its own count
    assert sorted(before) == [7, 8, 9] and sorted(after) == [10, 11, 12], (sorted(before), sorted(after))
    assert {len(r["ids"]) for r in _records(folder, "a") if r["epoch"] == 1} == {16 // interrupted}
    assert {len(r["ids"]) for r in _records(folder, "b") if r["epoch"] == 1} == {16 // resumed}
    # every sample of the interrupted epoch once, each step on the uninterrupted run's global batch
    seen = sorted(i for part in (before, after) for ids in part.values() for i in ids)
    assert seen == list(range(96))
    assert {**before, **after} == ref
    for ours, expected in zip(_weights(folder), _weights(reference)):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
    for epoch in range(3):
        logs, expected = mp.read_json(folder / f"epoch_{epoch}.json"), mp.read_json(reference / f"epoch_{epoch}.json")
        assert logs["replicas"] == (interrupted if epoch == 0 else resumed)
        # the metric totals of steps 7-9 came through the backup: every sample counted once in epoch 1
        assert logs["max_visits"] == logs["min_visits"] == 1.0, (epoch, logs)
        assert logs["loss"] == pytest.approx(expected["loss"], rel=1e-5)
    assert os.listdir(folder / "backup") == []  # the resumed fit ended: its backup is deleted, its lock released


@pytest.mark.slow
def test_two_replicas_killed_in_epoch_1_resume_on_one_under_torchrun(tmp_path, uninterrupted):
    killed = _run(tmp_path, 2, "a", KILL_AT, "torchrun")
    assert killed.returncode != 0, killed.stderr[-4000:]
    assert (tmp_path / "backup" / "backup.ckpt").exists()
    resumed = _run(tmp_path, 1, "b", 0, "torchrun")
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    _check_resumed(tmp_path, uninterrupted, interrupted=2, resumed=1)


@pytest.mark.slow
def test_one_replica_killed_in_epoch_1_resumes_on_two(tmp_path, uninterrupted):
    killed = _run(tmp_path, 1, "a", KILL_AT, "spawn")
    assert killed.returncode != 0, killed.stderr[-4000:]
    assert (tmp_path / "backup" / "backup.ckpt").exists()
    resumed = _run(tmp_path, 2, "b", 0, "spawn")
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    _check_resumed(tmp_path, uninterrupted, interrupted=1, resumed=2)


@pytest.mark.slow
def test_fsdp_sharded_backup_of_two_replicas_resumes_on_one(tmp_path, uninterrupted):
    """The backup is one shard per rank (torch.distributed.checkpoint), read back laid out for one replica."""
    killed = _run(tmp_path, 2, "a", KILL_AT, "fsdp")
    assert killed.returncode != 0, killed.stderr[-4000:]
    assert sorted(os.listdir(tmp_path / "backup" / "backup")) == [".metadata", "__0_0.distcp", "__1_0.distcp",
                                                                  "structure.tsckpt"]
    resumed = _run(tmp_path, 1, "b", 0, "fsdp")
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    _check_resumed(tmp_path, uninterrupted, interrupted=2, resumed=1)
