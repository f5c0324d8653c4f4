"""Killed and preempted jobs resume exactly: 2 gloo replicas with BackupAndRestore, killed with
SIGKILL at chosen steps (by the test's own script) under torchrun --max-restarts and under a plain
relaunch loop, or sent SIGTERM; each ends with the weights of an uninterrupted run."""
from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np
import pytest

from tests import _multiprocess as mp

ELASTIC = r'''
import json, os, signal, sys, time
import numpy as np, torch
import torchstrategy as tf

out, kills = sys.argv[1], [int(k) for k in sys.argv[2].split(",") if k]
strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
N = 192
''' + mp.SAMPLE_COUNTING_SCRIPT + r'''

class KillAt(tf.keras.callbacks.Callback):
    """The test's fault injection: replica 1 SIGKILLs itself once at each listed global step."""
    def __init__(self):
        super().__init__()
        self.step = 0

    def on_train_batch_end(self, batch, logs=None):
        self.step = self.training_state.progress.global_step
        marker = os.path.join(out, f"killed_{self.step}")
        if rank == 1 and self.step in kills and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        if os.environ.get("SLOW_STEPS"):
            time.sleep(float(os.environ["SLOW_STEPS"]))


class EpochLog(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if strategy.extended.should_checkpoint:
            with open(os.path.join(out, f"epoch_{epoch}.json"), "w") as f:
                json.dump(logs, f)


tf.random.set_seed(0)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(6,)),
                                 tf.keras.layers.Dropout(0.2), tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=DecodedLoss(),
                  metrics=[Visits("max_visits", "max"), Visits("min_visits", "min")])
dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N).batch(32)  # 6 global batches per epoch
backup = tf.keras.callbacks.BackupAndRestore(os.path.join(out, "backup"), save_freq=4)
backup.save_before_preemption = True
callbacks = [EpochLog(), backup, KillAt()]
model.fit(dataset, epochs=4, verbose=0, callbacks=callbacks)
if strategy.extended.should_checkpoint:
    np.savez(os.path.join(out, "weights.npz"), *model.get_weights())
'''


def _weights(folder):
    data = np.load(os.path.join(folder, "weights.npz"))
    return [data[f"arr_{i}"] for i in range(len(data.files))]


def _check_resumed_run(folder, reference_folder):
    for ours, expected in zip(_weights(folder), _weights(reference_folder)):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)
    for epoch in range(4):
        logs = mp.read_json(folder / f"epoch_{epoch}.json")
        reference = mp.read_json(reference_folder / f"epoch_{epoch}.json")
        assert logs["max_visits"] == logs["min_visits"] == 1.0  # every sample exactly once per epoch
        assert logs["loss"] == pytest.approx(reference["loss"], rel=1e-6)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("uninterrupted")
    script = mp.write_script(folder, ELASTIC)
    result = mp.run_python([script, str(folder), ""], timeout=240)
    assert result.returncode == 0, result.stderr
    return folder


@pytest.mark.slow
def test_torchrun_max_restarts_resumes_after_two_kills(tmp_path, uninterrupted):
    # two kills: a restarted job is restarted again (the counter and the backup both move on)
    script = mp.write_script(tmp_path, ELASTIC)
    port = mp.free_port()
    result = mp.run_torchrun(
        ["--nnodes=1", "--nproc_per_node=2", "--max-restarts=2", "--rdzv-backend=c10d",
         f"--rdzv-endpoint={mp.LOOPBACK}:{port}", f"--local-addr={mp.LOOPBACK}", "--monitor-interval=0.5"],
        [script, str(tmp_path), "3,17"], timeout=400)
    assert result.returncode == 0, result.stderr[-4000:]
    assert sorted(p.name for p in tmp_path.glob("killed_*")) == ["killed_17", "killed_3"]
    _check_resumed_run(tmp_path, uninterrupted)


@pytest.mark.slow
def test_plain_python_relaunched_by_a_loop_resumes_after_a_kill(tmp_path, uninterrupted):
    script = mp.write_script(tmp_path, ELASTIC)
    attempts = []
    for _ in range(4):
        result = mp.run_python([script, str(tmp_path), "10"], timeout=240)
        attempts.append(result.returncode)
        if result.returncode == 0:
            break
    assert attempts[-1] == 0 and len(attempts) == 2, attempts
    _check_resumed_run(tmp_path, uninterrupted)


@pytest.mark.slow
def test_sigterm_saves_at_an_agreed_step_exits_42_and_resumes_exactly(tmp_path, uninterrupted):
    script = mp.write_script(tmp_path, ELASTIC)
    env = mp.clean_env(SLOW_STEPS="0.3")
    with mp.process_group([sys.executable, script, str(tmp_path), ""], env=env) as process:
        assert mp.wait_until(lambda: (tmp_path / "epoch_0.json").exists(), timeout=120)
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)  # to rank 0 only, as a scheduler's preemption notice would
        out, err = process.communicate(timeout=60)
        assert time.monotonic() - sent < 30
        assert process.returncode == 42, err[-3000:]
    assert (tmp_path / "backup" / "backup.ckpt").exists()
    resumed = mp.run_python([script, str(tmp_path), ""], timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    _check_resumed_run(tmp_path, uninterrupted)


LOCKED = r'''
import sys
import numpy as np
import torchstrategy as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.zeros((8, 2), np.float32), np.zeros((8, 1), np.float32), verbose=0,
          callbacks=[tf.keras.callbacks.BackupAndRestore(sys.argv[1])])
print("trained")
'''


@pytest.mark.slow
def test_two_jobs_sharing_a_backup_dir_are_refused(tmp_path):
    from torchstrategy.checkpoint import DirectoryLock

    backup_dir = tmp_path / "shared"
    script = mp.write_script(tmp_path, LOCKED)
    with DirectoryLock(str(backup_dir), purpose="BackupAndRestore"):  # this process plays the first job
        second = mp.run_python([script, str(backup_dir)], timeout=120)
    assert second.returncode != 0 and "trained" not in second.stdout
    assert "lock" in second.stderr.lower() and str(os.getpid()) in second.stderr
    after = mp.run_python([script, str(backup_dir)], timeout=120)  # released: the folder is usable again
    assert after.returncode == 0 and "trained" in after.stdout, after.stderr


ORPHAN = r'''
import json, os, sys, time
import numpy as np
import torchstrategy as tf
out, backup = sys.argv[1], sys.argv[2]
strategy = tf.distribute.MultiWorkerMirroredStrategy()
rank = strategy.process_rank

class Started(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 2:
            with open(os.path.join(out, f"worker_{rank}.json"), "w") as f:
                json.dump({"pid": os.getpid(), "ppid": os.getppid()}, f)
        time.sleep(0.05)

with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
x, y = np.ones((40000, 3), np.float32), np.ones((40000, 1), np.float32)
callbacks = [Started()]
if backup != "none":
    callbacks.append(tf.keras.callbacks.BackupAndRestore(backup, save_freq="epoch"))
    callbacks[-1].save_before_preemption = True
model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=callbacks)
print("finished", flush=True)
'''


@pytest.mark.slow
@pytest.mark.parametrize("with_backup", [True, False])
def test_workers_of_a_sigkilled_torchrun_agent_stop_within_seconds(tmp_path, with_backup):
    script = mp.write_script(tmp_path, ORPHAN, name="orphan.py")
    backup = str(tmp_path / "backup") if with_backup else "none"
    agent = mp.start_python(["-m", "torch.distributed.run", "--nproc_per_node=2", "--rdzv-backend=c10d",
                             f"--rdzv-endpoint={mp.LOOPBACK}:{mp.free_port()}", "--local-addr", mp.LOOPBACK,
                             script, str(tmp_path), backup], cwd=str(tmp_path))
    try:
        files = [str(tmp_path / f"worker_{rank}.json") for rank in (0, 1)]
        assert mp.wait_for_files(files, timeout=60), agent.stderr.read() if agent.poll() is not None else ""
        workers = [mp.read_json(path) for path in files]
        assert all(worker["ppid"] == agent.pid for worker in workers)  # torchrun's agent started them
        os.kill(agent.pid, signal.SIGKILL)
        killed = time.monotonic()
        assert mp.wait_until(lambda: not any(mp.process_alive(w["pid"]) for w in workers), timeout=40), \
            "orphaned torchrun workers kept training"
        assert time.monotonic() - killed < (35 if with_backup else 10)
        if with_backup:  # both replicas agreed on a batch and saved before stopping
            saved = [name for name in os.listdir(backup) if not name.startswith(".")]
            assert saved, "no backup was written before the orphaned workers stopped"
    finally:
        mp.kill_process_group(agent)
