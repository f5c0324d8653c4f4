"""BackupAndRestore under FSDPStrategy (2 gloo replicas): the backup is a sharded checkpoint (one shard
per rank plus the structure file), and a job SIGKILLed at chosen steps under torchrun --max-restarts
resumes exactly: weights and History equal to an uninterrupted run's (1e-6)."""
from __future__ import annotations

import os

import numpy as np
import pytest

from tests import _multiprocess as mp

ELASTIC_FSDP = r'''
import json, os, signal, sys
import numpy as np, torch
import torchstrategy as tf

out, kills = sys.argv[1], [int(k) for k in sys.argv[2].split(",") if k]
strategy = tf.distribute.experimental.FSDPStrategy(["cpu:0", "cpu:1"])
rank = strategy.process_rank
N = 128
''' + mp.SAMPLE_COUNTING_SCRIPT + r'''

class KillAt(tf.keras.callbacks.Callback):
    """The test's fault injection: replica 1 SIGKILLs itself once at each listed global step; before
    that it notes what the backup folder holds."""
    def on_train_batch_end(self, batch, logs=None):
        step = self.training_state.progress.global_step
        marker = os.path.join(out, f"killed_{step}")
        if rank == 1 and step in kills and not os.path.exists(marker):
            backup = os.path.join(out, "backup")
            with open(os.path.join(out, f"backup_at_{step}.json"), "w") as f:
                json.dump({"folder": sorted(os.listdir(backup)),
                           "backup": sorted(os.listdir(os.path.join(backup, "backup")))}, f)
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)


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
dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N).batch(32)  # 4 global batches per epoch
callbacks = [EpochLog(), tf.keras.callbacks.BackupAndRestore(os.path.join(out, "backup"), save_freq=3), KillAt()]
history = model.fit(dataset, epochs=3, verbose=0, callbacks=callbacks)
weights = model.get_weights()  # gathered: a collective on every rank
if strategy.extended.should_checkpoint:
    np.savez(os.path.join(out, "weights.npz"), *weights)
    with open(os.path.join(out, "history.json"), "w") as f:
        json.dump(history.history, f)
'''


def _weights(folder):
    with np.load(os.path.join(folder, "weights.npz")) as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("uninterrupted_fsdp")
    script = mp.write_script(folder, ELASTIC_FSDP)
    result = mp.run_python([script, str(folder), ""], timeout=240)
    assert result.returncode == 0, result.stderr[-4000:]
    return folder


@pytest.mark.slow
def test_fsdp_torchrun_max_restarts_resumes_from_sharded_backups(tmp_path, uninterrupted):
    script = mp.write_script(tmp_path, ELASTIC_FSDP)
    port = mp.free_port()
    result = mp.run_torchrun(
        ["--nnodes=1", "--nproc_per_node=2", "--max-restarts=2", "--rdzv-backend=c10d",
         f"--rdzv-endpoint={mp.LOOPBACK}:{port}", f"--local-addr={mp.LOOPBACK}", "--monitor-interval=0.5"],
        [script, str(tmp_path), "5,8"], timeout=400)
    assert result.returncode == 0, result.stderr[-4000:]
    assert sorted(p.name for p in tmp_path.glob("killed_*")) == ["killed_5", "killed_8"]
    # the backup taken at step 3 (and 6) is a sharded checkpoint: one shard per rank plus the structure file
    for step in (5, 8):
        seen = mp.read_json(tmp_path / f"backup_at_{step}.json")
        assert "backup" in seen["folder"] and "backup.ckpt" not in seen["folder"], seen
        assert seen["backup"] == [".metadata", "__0_0.distcp", "__1_0.distcp", "structure.tsckpt"], seen
    assert not (tmp_path / "backup" / "backup").exists()  # deleted at the end (delete_checkpoint=True)
    for ours, expected in zip(_weights(tmp_path), _weights(uninterrupted)):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)
    history, reference = mp.read_json(tmp_path / "history.json"), mp.read_json(uninterrupted / "history.json")
    assert sorted(history) == sorted(reference)
    # the last attempt's History holds the epochs it ran (it resumed inside epoch 1 from the step-6 backup);
    # each epoch's logs, whichever attempt finished it, equal the uninterrupted run's
    assert len(history["loss"]) == 2
    for key in reference:
        np.testing.assert_allclose(history[key], reference[key][-2:], rtol=1e-6, atol=1e-7, err_msg=key)
    for epoch in range(3):
        logs, expected = mp.read_json(tmp_path / f"epoch_{epoch}.json"), mp.read_json(uninterrupted / f"epoch_{epoch}.json")
        assert logs["max_visits"] == logs["min_visits"] == 1.0  # every sample exactly once per epoch
        assert logs["loss"] == pytest.approx(expected["loss"], rel=1e-6)


# One FSDP replica in its own process: double_checkpoint keeps the sharded backup before the latest
# (`backup.bkp`); with a shard of the latest deleted, fit resumes from it and ends as the uninterrupted run.
DOUBLE_SHARDED = r'''
import json, os, sys, warnings
import numpy as np
import torchstrategy as tf

out = sys.argv[1]
strategy = tf.distribute.experimental.FSDPStrategy(["/cpu:0"])
rng = np.random.default_rng(0)
x, y = rng.random((64, 4)).astype("float32"), rng.random((64, 2)).astype("float32")

def build():
    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
        model.compile(optimizer="adam", loss="mse")
    return model

class Crash(Exception):
    pass

class CrashAt(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if self.training_state.progress.global_step == 7:
            raise Crash()

def backup():
    return tf.keras.callbacks.BackupAndRestore(os.path.join(out, "backup"), save_freq=2, double_checkpoint=True)

reference = build()
reference.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
model = build()
try:
    model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False, callbacks=[backup(), CrashAt()])
except Crash:
    pass
folder = os.path.join(out, "backup")
kept = {"folder": sorted(os.listdir(folder)), "latest": sorted(os.listdir(os.path.join(folder, "backup"))),
        "previous": sorted(os.listdir(os.path.join(folder, "backup.bkp")))}
os.unlink(os.path.join(folder, "backup", "__0_0.distcp"))
model = build()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False, callbacks=[backup()])
json.dump({**kept, "warnings": [str(w.message) for w in caught if "BackupAndRestore" in str(w.message)],
           "difference": max(float(np.abs(a - b).max()) for a, b in zip(model.get_weights(), reference.get_weights())),
           "left": sorted(os.listdir(folder))}, open(os.path.join(out, "result.json"), "w"))
'''


@pytest.mark.slow
def test_double_checkpoint_falls_back_to_the_previous_sharded_backup(tmp_path):
    script = mp.write_script(tmp_path, DOUBLE_SHARDED, name="double.py")
    result = mp.run_python([script, str(tmp_path)], timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    found = mp.read_json(tmp_path / "result.json")
    assert found["folder"] == ["backup", "backup.bkp"] and "__0_0.distcp" in found["previous"]
    assert any("missing the shard file '__0_0.distcp'" in w and "resuming from the one before it" in w
               for w in found["warnings"]), found["warnings"]
    assert found["difference"] <= 1e-6  # resumed one save earlier, ends as the uninterrupted run
    assert found["left"] == []  # delete_checkpoint removes both at the end
