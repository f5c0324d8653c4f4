"""BackupAndRestore in one process: a fit() that crashes mid-epoch and is run again resumes at
the same batch and ends with the weights (and logs) of a run that never crashed."""
from __future__ import annotations

import os

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy.checkpoint import CheckpointCorruptedError


class Crash(Exception):
    pass


def build(seed=0):
    """Model, optimizer and pipeline, built the way a fresh process would build them."""
    tf.random.set_seed(seed)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dropout(0.3), tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    rng = np.random.default_rng(4)
    x, y = rng.random((96, 4)).astype(np.float32), rng.integers(0, 3, (96, 1))
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(96).batch(16)  # unseeded: seed from set_seed
    return model, dataset


class CrashAt(tf.keras.callbacks.Callback):
    def __init__(self, global_step):
        super().__init__()
        self.global_step = global_step

    def on_train_batch_end(self, batch, logs=None):
        if self.training_state.progress.global_step == self.global_step:
            raise Crash(f"crash after batch {self.global_step}")


class EpochLog(tf.keras.callbacks.Callback):
    def __init__(self, store):
        super().__init__()
        self.store = store

    def on_epoch_end(self, epoch, logs=None):
        self.store[epoch] = dict(logs)


@pytest.mark.filterwarnings("ignore:Taking over the stale lock")  # the crashed fit() never released it
@pytest.mark.parametrize("save_freq", [4, 1, "epoch"])
def test_crash_and_resume_gives_the_uninterrupted_weights_and_logs(tmp_path, save_freq):
    model, dataset = build()
    reference_logs = {}
    model.fit(dataset, epochs=3, verbose=0, callbacks=[EpochLog(reference_logs)])
    reference = model.get_weights()

    backup_dir = str(tmp_path / "backup")
    logs = {}
    for crash_at in (9, 14):  # 6 batches per epoch: mid-epoch 2, then mid-epoch 3
        model, dataset = build()
        with pytest.raises(Crash):
            model.fit(dataset, epochs=3, verbose=0, callbacks=[
                EpochLog(logs), tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq=save_freq),
                CrashAt(crash_at)])
    model, dataset = build()
    model.fit(dataset, epochs=3, verbose=0, callbacks=[EpochLog(logs),
                                                       tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq)])
    for ours, expected in zip(model.get_weights(), reference):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-7)
    for epoch in range(3):
        assert logs[epoch]["loss"] == pytest.approx(reference_logs[epoch]["loss"], rel=1e-6)
        assert logs[epoch]["accuracy"] == pytest.approx(reference_logs[epoch]["accuracy"])
    assert not os.path.exists(os.path.join(backup_dir, "backup.ckpt"))  # delete_checkpoint=True after success


@pytest.mark.filterwarnings("ignore:Taking over the stale lock")
def test_backup_on_another_world_size_or_not_writable_is_refused(tmp_path):
    import torchstrategy.checkpoint as ckpt

    backup_dir = tmp_path / "b"
    backup_dir.mkdir()
    model, dataset = build()
    with pytest.raises(Crash):
        model.fit(dataset, epochs=2, verbose=0, callbacks=[
            tf.keras.callbacks.BackupAndRestore(str(backup_dir), save_freq=2, delete_checkpoint=False), CrashAt(3)])
    path = str(backup_dir / "backup.ckpt")
    written = ckpt.load_state(path)
    assert written["elastic"]["global_data_position"] is True  # a Dataset's global batches: resumable on any count
    # a backup of an older version (no job seed) from 4 replicas: refused as before, before any step
    old = dict(written, world_size=4, rng=written["rng"] * 4, metrics=written["metrics"] * 4)
    del old["elastic"]
    ckpt.save_state(old, path)
    model, dataset = build()
    with pytest.raises(ValueError, match=r"written by 4 replica.*this job has 1: it holds per-replica state.*"
                                         r"Resume with 4 replica"):
        model.fit(dataset, epochs=2, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(str(backup_dir))])
    # per-replica pipelines (a dataset function) from 4 replicas: their data position holds on 4 only
    ckpt.save_state(dict(old, elastic=dict(written["elastic"], global_data_position=False)), path)
    with pytest.raises(ValueError, match=r"written by 4 replica.*its data position counts batches of per-replica"):
        model.fit(dataset, epochs=2, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(str(backup_dir))])
    not_a_folder = tmp_path / "plain-file"
    not_a_folder.write_text("x")  # a folder cannot be made under a file, even by root: refused at once
    with pytest.raises(NotADirectoryError, match=f"its parent '{not_a_folder}' is an existing file"):
        tf.keras.callbacks.BackupAndRestore(str(not_a_folder / "backup"))
    with pytest.raises(ValueError, match="save_freq"):
        tf.keras.callbacks.BackupAndRestore(str(backup_dir), save_freq=0)


class Preempted(Exception):
    pass


def test_preemption_handler_in_a_custom_loop_saves_and_resumes_exactly(tmp_path):
    """TF's PreemptionCheckpointHandler pattern: a preemption notice at step 7 saves and exits; the
    restarted loop continues from total_run_calls and ends with the uninterrupted weights."""
    import torch

    def run(steps, notice_at=None):
        tf.random.set_seed(0)
        strategy = tf.distribute.OneDeviceStrategy("cpu")
        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
            optimizer = tf.keras.optimizers.Adam(0.05)
            checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
            calls = {"n": 0}

            def notice():
                calls["n"] += 1
                return notice_at is not None and calls["n"] == notice_at

            def leave():
                raise Preempted()

            config = tf.distribute.experimental.TerminationConfig(termination_watcher_fn=notice, exit_fn=leave)
            handler = tf.distribute.experimental.PreemptionCheckpointHandler(
                None, checkpoint, str(tmp_path / "ckpt"), termination_config=config)
        x = torch.arange(30.0).reshape(10, 3) / 30

        def train_step(batch):
            with tf.GradientTape() as tape:
                loss = (model(batch, training=True) ** 2).mean()
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        for step in range(handler.total_run_calls, steps):
            handler.run(strategy.run, train_step, args=(x[step % 10:step % 10 + 1],))
        return model.get_weights(), handler.total_run_calls

    reference, _ = run(12)
    import shutil

    shutil.rmtree(tmp_path / "ckpt", ignore_errors=True)
    with pytest.raises(Preempted):
        run(12, notice_at=7)
    weights, total = run(12)
    assert total == 12
    for ours, expected in zip(weights, reference):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.filterwarnings("ignore:Taking over the stale lock")
def test_a_backup_says_whether_its_data_position_holds_on_another_replica_count(tmp_path):
    """Arrays (and Datasets) are read as global batches, which any replica count splits alike; a dataset
    function's batches are per replica, so its backup resumes only on the count that wrote it."""
    import torchstrategy.checkpoint as ckpt

    rng = np.random.default_rng(0)
    x, y = rng.random((64, 4)).astype(np.float32), rng.integers(0, 3, (64, 1))
    creator = tf.keras.utils.experimental.DatasetCreator(
        lambda context: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(8))
    found = {}
    for name, inputs in (("arrays", dict(x=x, y=y, batch_size=8)), ("creator", dict(x=creator, steps_per_epoch=8))):
        model, _ = build()
        folder = str(tmp_path / name)
        with pytest.raises(Crash):
            model.fit(**inputs, epochs=2, verbose=0, callbacks=[
                tf.keras.callbacks.BackupAndRestore(folder, save_freq=2, delete_checkpoint=False), CrashAt(3)])
        backup = ckpt.load_state(os.path.join(folder, "backup.ckpt"))
        assert backup["global_step"] == 2 and isinstance(backup["elastic"]["seed"], int)
        found[name] = backup["elastic"]["global_data_position"]
    assert found == {"arrays": True, "creator": False}
    # the arrays' backup as 2 replicas would have written it (the same state twice), resumed on this 1 replica
    # with a dataset function: its global-batch position would name other samples here, refused before a step
    path = str(tmp_path / "arrays" / "backup.ckpt")
    written = ckpt.load_state(path)
    ckpt.save_state(dict(written, world_size=2, rng=written["rng"] * 2, metrics=written["metrics"] * 2), path)
    model, _ = build()
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match=r"resumes a backup written by 2 replica\(s\) on 1, but here its input is "
                                         r"read per replica or per worker"):
        model.fit(creator, steps_per_epoch=8, epochs=2, verbose=0,
                  callbacks=[tf.keras.callbacks.BackupAndRestore(str(tmp_path / "arrays"))])
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), before))  # nothing trained


@pytest.mark.filterwarnings("ignore:Taking over the stale lock")  # the crashed fit() never released it
def test_double_checkpoint_resumes_from_the_backup_before_a_corrupted_latest(tmp_path):
    """Keras 3.15's double_checkpoint: the backup before the latest is kept as `.bkp`; when the latest cannot be
    read, fit resumes from it (one save earlier) and still ends with the uninterrupted run's weights."""
    model, dataset = build()
    model.fit(dataset, epochs=2, verbose=0)
    reference = model.get_weights()

    backup_dir = tmp_path / "backup"
    model, dataset = build()
    callback = tf.keras.callbacks.BackupAndRestore(str(backup_dir), save_freq=2, double_checkpoint=True)
    with pytest.raises(Crash):  # saves after batches 2, 4, 6 (epoch 1's end), 8; crashes after batch 9
        model.fit(dataset, epochs=2, verbose=0, callbacks=[callback, CrashAt(9)])
    latest, previous = backup_dir / "backup.ckpt", backup_dir / "backup.ckpt.bkp"
    assert latest.is_file() and previous.is_file() and latest.read_bytes() != previous.read_bytes()
    with open(latest, "r+b") as handle:  # cut short, as a kill during a copy would leave it
        handle.truncate(200)

    model, dataset = build()
    callback = tf.keras.callbacks.BackupAndRestore(str(backup_dir), save_freq=2, double_checkpoint=True)
    with pytest.warns(UserWarning, match="latest backup .* cannot be read .* resuming from the one before it"):
        model.fit(dataset, epochs=2, verbose=0, callbacks=[callback])
    for ours, expected in zip(model.get_weights(), reference):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)
    assert not latest.exists() and not previous.exists()  # delete_checkpoint removes both at the end

    model, dataset = build()  # without double_checkpoint a corrupted latest fails loudly, before any step
    broken = tmp_path / "broken"
    with pytest.raises(Crash):
        model.fit(dataset, epochs=2, verbose=0,
                  callbacks=[tf.keras.callbacks.BackupAndRestore(str(broken), save_freq=2), CrashAt(3)])
    assert not (broken / "backup.ckpt.bkp").exists()  # only double_checkpoint keeps a second copy
    with open(broken / "backup.ckpt", "r+b") as handle:
        handle.truncate(200)
    model, dataset = build()
    with pytest.raises(CheckpointCorruptedError, match="backup.ckpt' is corrupted"):
        model.fit(dataset, epochs=2, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(str(broken))])


def test_save_before_preemption_is_an_attribute_and_the_keyword_names_it(tmp_path):
    import inspect

    # Keras 3.15: BackupAndRestore(backup_dir, save_freq='epoch', double_checkpoint=False, delete_checkpoint=True)
    assert list(inspect.signature(tf.keras.callbacks.BackupAndRestore).parameters) == [
        "backup_dir", "save_freq", "double_checkpoint", "delete_checkpoint"]
    callback = tf.keras.callbacks.BackupAndRestore(str(tmp_path))
    assert callback.save_before_preemption is False and callback.double_checkpoint is False
    with pytest.raises(TypeError, match=r"set `callback\.save_before_preemption = True`"):
        tf.keras.callbacks.BackupAndRestore(str(tmp_path), save_before_preemption=True)
