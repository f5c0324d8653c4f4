"""Checks that TF 2.21 restores a checkpoint this library writes in TF's format (outside the test suite).

Run from the repository root: /work/tf-venv/bin/python tools/tf_reference/tf_restores_ours.py
It runs /work/main/.venv/bin/python (override with TORCHSTRATEGY_PYTHON) on this repository: the small CNN of
tf_checkpoint_fixtures.py restores TF's fixture, trains one Adam step, and saves with
CheckpointOptions.experimental_write_format = "tf" (plus a Functional LSTM model and Variables). Then TF builds the
same objects, restores that checkpoint with assert_consumed(), compares every value with what torchstrategy wrote
(weights, Adam's slots, iterations), trains one more step in both libraries and compares the weights."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "checkpoint", "data", "tf_cnn_adam")

OURS = r'''
import sys, numpy as np, torch
import torchstrategy as tf
from torchstrategy import keras
out = sys.argv[1]
e = np.load(sys.argv[2] + "/expected.npz")
model = keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(3, 3, use_bias=False, name="conv"),
                          keras.layers.BatchNormalization(name="bn"), keras.layers.Flatten(),
                          keras.layers.Dense(2, name="dense")])
model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
step = tf.Variable(0, dtype="int64")
tf.train.Checkpoint(model=model, optimizer=model.optimizer, step=step).restore(
    tf.train.latest_checkpoint(sys.argv[2])).assert_consumed()
model.train_on_batch(e["x"], e["y"])
step.assign(11)
inputs = keras.Input((5, 3))
func = keras.Model(inputs, keras.layers.Dense(2, name="d")(keras.layers.LSTM(4, name="lstm")(inputs)))
v = tf.Variable([3.0, 4.0])
options = tf.train.CheckpointOptions()
options.experimental_write_format = "tf"
ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer, step=step, func=func, v=v)
path = tf.train.CheckpointManager(ckpt, out, max_to_keep=1).save(options=options)
seq = np.random.RandomState(2).rand(2, 5, 3).astype("float32")
slots = [t.detach().numpy() for p in model.optimizer.param_groups[0]["params"]
         for t in (model.optimizer.state[p]["momentum"], model.optimizer.state[p]["velocity"])]
np.savez(out + "/ours.npz", *model.get_weights(), iterations=int(model.optimizer.iterations),
         func_out=func(torch.from_numpy(seq)).detach().numpy(), seq=seq, **{f"slot_{i}": s for i, s in enumerate(slots)})
loss = model.train_on_batch(e["x"], e["y"])
np.savez(out + "/ours_next.npz", *model.get_weights(), loss=loss)
print(path)
'''


def main() -> int:
    import tensorflow as tf
    import keras

    with tempfile.TemporaryDirectory() as out:
        script = os.path.join(out, "ours.py")
        with open(script, "w") as handle:
            handle.write(OURS)
        python = os.environ.get("TORCHSTRATEGY_PYTHON", "/work/main/.venv/bin/python")
        env = dict(os.environ, PYTHONPATH=ROOT)
        done = subprocess.run([python, script, out, DATA], env=env, capture_output=True, text=True)
        if done.returncode:
            print(done.stdout, done.stderr)
            return 1
        print("torchstrategy wrote", done.stdout.strip(), sorted(os.listdir(out)))
        ours, ours_next = np.load(os.path.join(out, "ours.npz")), np.load(os.path.join(out, "ours_next.npz"))
        model = keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(3, 3, use_bias=False, name="conv"),
                                  keras.layers.BatchNormalization(name="bn"), keras.layers.Flatten(),
                                  keras.layers.Dense(2, name="dense")])
        model.compile(optimizer=keras.optimizers.Adam(0.5), loss="mse")
        model.optimizer.build(model.trainable_variables)
        inputs = keras.Input((5, 3))
        func = keras.Model(inputs, keras.layers.Dense(2, name="d")(keras.layers.LSTM(4, name="lstm")(inputs)))
        step, v = tf.Variable(0, dtype=tf.int64), tf.Variable([0.0, 0.0])
        ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer, step=step, func=func, v=v)
        latest = tf.train.latest_checkpoint(out)
        ckpt.restore(latest).assert_consumed()
        worst = 0.0
        for index, weight in enumerate(model.get_weights()):
            worst = max(worst, float(np.abs(weight - ours[f"arr_{index}"]).max()))
        slots = [s.numpy() for s in model.optimizer._momentums for _ in [0]]
        pairs = [(m.numpy(), v_.numpy()) for m, v_ in zip(model.optimizer._momentums, model.optimizer._velocities)]
        for index, (momentum, velocity) in enumerate(pairs):
            worst = max(worst, float(np.abs(momentum - ours[f"slot_{2 * index}"]).max()),
                        float(np.abs(velocity - ours[f"slot_{2 * index + 1}"]).max()))
        assert int(model.optimizer.iterations.numpy()) == int(ours["iterations"]), "iterations"
        assert int(step.numpy()) == 11 and np.array_equal(v.numpy(), [3.0, 4.0]), "variables"
        assert abs(float(model.optimizer.learning_rate.numpy()) - 0.01) < 1e-9, "learning rate"
        lstm_gap = float(np.abs(func(ours["seq"]).numpy() - ours["func_out"]).max())
        loss = float(model.train_on_batch(np.load(os.path.join(DATA, "expected.npz"))["x"],
                                          np.load(os.path.join(DATA, "expected.npz"))["y"]))
        next_gap = max(float(np.abs(w - ours_next[f"arr_{i}"]).max()) for i, w in enumerate(model.get_weights()))
        print(f"TF {tf.__version__} / Keras {keras.__version__} restored {latest} with assert_consumed(); "
              f"max |difference| of restored weights and Adam slots: {worst:.3g}; LSTM output: {lstm_gap:.3g}; "
              f"next step loss TF {loss:.7f} vs ours {float(ours_next['loss']):.7f}, weights {next_gap:.3g}; "
              f"{len(slots)} momentum slots")
        return 0 if worst == 0.0 and lstm_gap < 1e-5 and next_gap < 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
