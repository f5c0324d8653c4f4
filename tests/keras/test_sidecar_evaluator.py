"""tf.keras.utils.SidecarEvaluator: a real training process writes checkpoints while the evaluator reads
them; each evaluation equals model.evaluate on that checkpoint's weights; TF 2.21's stop rule; bad input."""
from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

import torchstrategy as tf
from tests import _multiprocess as mp
from torchstrategy.keras import sidecar_evaluator

EPOCHS = 3

# argv: checkpoint folder, handshake folder. After each epoch's checkpoint the trainer waits until the
# evaluator says it evaluated it, so that no checkpoint is skipped (the evaluator only sees the latest).
TRAINER = r'''
import os, sys, time
import numpy as np
import torchstrategy as tf

checkpoint_dir, handshake = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
x = rng.random((48, 4)).astype(np.float32)
y = (x.sum(axis=1, keepdims=True) > 2).astype(np.float32)
tf.random.set_seed(3)
model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                             tf.keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])
manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=model.optimizer), checkpoint_dir,
                                     max_to_keep=None)
for epoch in range(1, int(sys.argv[3]) + 1):
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    np.savez(os.path.join(handshake, f"weights-{epoch}.npz"), *model.get_weights())
    print("saved", manager.save(), flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(handshake, f"evaluated-{epoch}")):
        if time.monotonic() > deadline:
            sys.exit(f"the evaluator never evaluated checkpoint {epoch}")
        time.sleep(0.02)
'''


def _eval_model():
    tf.random.set_seed(11)  # other initial weights than the trainer's: only a restore makes them equal
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])
    return model


def _eval_data():
    rng = np.random.default_rng(1)
    x = rng.random((40, 4)).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) > 2).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(10)


class _Recorder(tf.keras.callbacks.Callback):
    """What each evaluation saw: its logs, the restored weights and optimizer step; then it tells the trainer."""

    def __init__(self, handshake):
        super().__init__()
        self.handshake, self.evaluations = handshake, []

    def on_test_end(self, logs=None):
        self.evaluations.append({"logs": dict(logs), "weights": self.model.get_weights(),
                                 "iterations": int(self.model.optimizer.iterations)})
        open(os.path.join(self.handshake, f"evaluated-{len(self.evaluations)}"), "w").close()


@pytest.mark.slow
def test_evaluates_each_checkpoint_a_training_process_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(sidecar_evaluator, "POLL_INTERVAL_SECONDS", 0.02)
    checkpoint_dir, handshake = tmp_path / "ckpt", tmp_path / "handshake"
    handshake.mkdir()
    script = mp.write_script(tmp_path, TRAINER, name="trainer.py")
    recorder = _Recorder(str(handshake))
    model = _eval_model()
    evaluator = tf.keras.utils.SidecarEvaluator(model, _eval_data(), str(checkpoint_dir), max_evaluations=EPOCHS,
                                                callbacks=[recorder])
    # the folder does not exist yet: the evaluator waits for the trainer to make it
    with mp.process_group([sys.executable, script, str(checkpoint_dir), str(handshake), str(EPOCHS)]) as trainer:
        worker = threading.Thread(target=evaluator.start, daemon=True)
        worker.start()
        worker.join(timeout=120)
        assert not worker.is_alive(), "the evaluator did not stop after the last checkpoint"
        stdout, stderr = trainer.communicate(timeout=60)
        assert trainer.returncode == 0, stdout + stderr
    assert stdout.count("saved") == EPOCHS
    assert len(recorder.evaluations) == EPOCHS
    data = _eval_data()
    for number, seen in enumerate(recorder.evaluations, start=1):
        trained = np.load(handshake / f"weights-{number}.npz")
        for ours, theirs in zip(seen["weights"], [trained[f"arr_{i}"] for i in range(len(trained.files))]):
            np.testing.assert_array_equal(ours, theirs)  # the checkpoint's weights, restored exactly
        assert seen["iterations"] == 3 * number  # the optimizer state came along: 3 batches an epoch
        # the same numbers as evaluating a model restored from that checkpoint here
        fresh = _eval_model()
        tf.train.Checkpoint(model=fresh, optimizer=fresh.optimizer).restore(
            str(checkpoint_dir / f"ckpt-{number}")).expect_partial()
        expected = fresh.evaluate(data, verbose=0, return_dict=True)
        assert seen["logs"].keys() == expected.keys() == {"loss", "accuracy"}
        for name in expected:
            np.testing.assert_allclose(seen["logs"][name], expected[name], rtol=1e-6)
    assert recorder.evaluations[0]["logs"]["loss"] != recorder.evaluations[-1]["logs"]["loss"]


def _write_checkpoints(checkpoint_dir, count):
    model = _eval_model()
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=model.optimizer),
                                         str(checkpoint_dir), max_to_keep=None)
    rng = np.random.default_rng(2)
    x, y = rng.random((8, 4)).astype(np.float32), rng.integers(0, 2, (8, 1)).astype(np.float32)
    for _ in range(count):
        model.fit(x, y, batch_size=8, epochs=1, verbose=0)
        manager.save()
    return model


def test_stops_on_the_first_checkpoint_numbered_at_least_max_evaluations(tmp_path, monkeypatch):
    # TF 2.21: only the newest checkpoint is evaluated (older ones were overtaken), and the loop ends once
    # the evaluated path's number (ckpt-3) reaches max_evaluations, here 2
    monkeypatch.setattr(sidecar_evaluator, "POLL_INTERVAL_SECONDS", 0.02)
    trained = _write_checkpoints(tmp_path, 3)
    recorder = _Recorder(str(tmp_path))
    model = _eval_model()
    tf.keras.utils.SidecarEvaluator(model, _eval_data(), str(tmp_path), steps=2, max_evaluations=2,
                                    callbacks=[recorder]).start()
    assert len(recorder.evaluations) == 1 and recorder.evaluations[0]["iterations"] == 3
    for ours, theirs in zip(model.get_weights(), trained.get_weights()):
        np.testing.assert_array_equal(ours, theirs)
    expected = trained.evaluate(_eval_data(), steps=2, verbose=0, return_dict=True)
    np.testing.assert_allclose(recorder.evaluations[0]["logs"]["loss"], expected["loss"], rtol=1e-6)


def test_bad_arguments_are_refused_with_what_to_pass(tmp_path):
    model, data = _eval_model(), _eval_data()
    with pytest.raises(ValueError, match="needs `checkpoint_dir`"):
        tf.keras.utils.SidecarEvaluator(model, data, None)
    with pytest.raises(ValueError, match="needs `checkpoint_dir`"):
        tf.keras.utils.SidecarEvaluator(model, data, "")
    with pytest.raises(TypeError, match="must be a path"):
        tf.keras.utils.SidecarEvaluator(model, data, 3)
    with pytest.raises(ValueError, match="`max_evaluations` must be a positive integer or None; got 0"):
        tf.keras.utils.SidecarEvaluator(model, data, str(tmp_path), max_evaluations=0)
    with pytest.raises(ValueError, match="`steps` must be a positive integer or None; got -1"):
        tf.keras.utils.SidecarEvaluator(model, data, str(tmp_path), steps=-1)
    uncompiled = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
    with pytest.raises(ValueError, match="not compiled: call model.compile"):
        tf.keras.utils.SidecarEvaluator(uncompiled, data, str(tmp_path))
    with pytest.raises(TypeError, match="needs a Keras model"):
        tf.keras.utils.SidecarEvaluator(object(), data, str(tmp_path))
