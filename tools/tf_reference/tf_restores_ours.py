"""Checks that TF 2.21 restores a checkpoint this library writes in TF's format (outside the test suite).

Run from the repository root: /work/tf-venv/bin/python tools/tf_reference/tf_restores_ours.py
It runs /work/main/.venv/bin/python (override with TORCHSTRATEGY_PYTHON) on this repository: the small CNN of
tf_checkpoint_fixtures.py restores TF's fixture, trains one Adam step, and saves with
CheckpointOptions.experimental_write_format = "tf" (plus a Functional LSTM model and Variables). Then TF builds the
same objects, restores that checkpoint with assert_consumed(), compares every value with what torchstrategy wrote
(weights, Adam's slots, iterations), trains one more step in both libraries and compares the weights.
Then the same for a Keras LossScaleOptimizer (the model of write_keras_fixtures.loss_scale_model, restored from TF's
tests/checkpoint/data/tf_loss_scale and trained one step here: scale, counter, inner Adam's slots and iterations)
and for a tf.Module (tf_module_net.Net: Variables and sub-modules as attributes, in lists and dicts)."""
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


OBJECTS = r'''
import sys, numpy as np
import torchstrategy as tf
from torchstrategy import keras
out, data = sys.argv[1], sys.argv[2]
options = tf.train.CheckpointOptions()
options.experimental_write_format = "tf"

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu", dtype="mixed_float16",
                                                                name="hidden"), keras.layers.Dense(2, name="out")])
model.compile(optimizer=keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(0.01), initial_scale=4096.0,
                                                                 dynamic_growth_steps=2), loss="mse")
model.optimizer.build(model.trainable_variables)
tf.train.Checkpoint(model=model, optimizer=model.optimizer).read(data + "/tf_loss_scale/lso").assert_consumed()
e = np.load(data + "/tf_loss_scale/expected.npz")
model.train_on_batch(e["x"], e["y"])  # one more (finite) step here: every number moves
tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(out + "/lso", options=options)
opt = model.optimizer
slots = {f"{kind}_{i}": opt.inner_optimizer.state[w][kind].numpy() for i, w in enumerate(model.trainable_weights)
         for kind in ("momentum", "velocity")}
np.savez(out + "/lso.npz", *model.get_weights(), iterations=int(opt.iterations), dynamic_scale=float(opt.dynamic_scale),
         step_counter=int(opt.step_counter), **slots)

class Block(tf.Module):
    def __init__(self, rows, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(np.arange(rows * 2, dtype="float32").reshape(rows, 2) * 1.5 - rows, name="w")
        self.b = tf.Variable([rows * 0.25, -rows * 0.5], name="b")

class Net(tf.Module):
    def __init__(self):
        super().__init__(name="net")
        self.blocks = [Block(1), Block(2)]
        self.table = {"a": tf.Variable([5, -6, 7], dtype="int32"), "blk": Block(3)}
        self.scale = tf.Variable(-2.5)
        self.head = Block(4, name="head")
        self.alias = self.head.w
        self.nested = [[tf.Variable(17.0)], {"x": tf.Variable([18.0, 19.0])}]
        self.frozen = tf.Variable([3.0, -3.0], trainable=False)
        self.count = 3
        self.mixed = [1, tf.Variable(14.0), "s"]
        self._private = tf.Variable(21.0)

net = Net()
net.head.w.assign(net.head.w * 10.0)  # through the alias too: one Variable
path = tf.train.Checkpoint(module=net).write(out + "/module", options=options)
np.savez(out + "/module.npz", **{name: tf.train.load_variable(path, name) for name, _ in tf.train.list_variables(path)
                                 if name != "_CHECKPOINTABLE_OBJECT_GRAPH"})
print(path)
'''


def _run_ours(script_text: str, out: str, *args: str) -> bool:
    script = os.path.join(out, "script.py")
    with open(script, "w") as handle:
        handle.write(script_text)
    python = os.environ.get("TORCHSTRATEGY_PYTHON", "/work/main/.venv/bin/python")
    done = subprocess.run([python, script, out, *args], env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True,
                          text=True)
    if done.returncode:
        print(done.stdout, done.stderr)
    return done.returncode == 0


def check_objects() -> int:
    """TF restores our LossScaleOptimizer and tf.Module checkpoints (assert_consumed) with our exact values."""
    import tensorflow as tf
    import keras

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tf_module_net import Net

    failures = []
    with tempfile.TemporaryDirectory() as out:
        if not _run_ours(OBJECTS, out, os.path.join(ROOT, "tests", "checkpoint", "data")):
            return 1
        ours = np.load(os.path.join(out, "lso.npz"))
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu", dtype="mixed_float16",
                                                                        name="hidden"), keras.layers.Dense(2, name="out")])
        optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(0.5), initial_scale=8.0,
                                                             dynamic_growth_steps=2)
        model.compile(optimizer=optimizer, loss="mse")
        optimizer.build(model.trainable_variables)
        tf.train.Checkpoint(model=model, optimizer=optimizer).read(os.path.join(out, "lso")).assert_consumed()
        inner = optimizer.inner_optimizer
        gaps = [float(np.abs(w - ours[f"arr_{i}"]).max()) for i, w in enumerate(model.get_weights())]
        for index, (momentum, velocity) in enumerate(zip(inner._momentums, inner._velocities)):
            gaps += [float(np.abs(momentum.numpy() - ours[f"momentum_{index}"]).max()),
                     float(np.abs(velocity.numpy() - ours[f"velocity_{index}"]).max())]
        state = (int(optimizer.iterations), float(optimizer.dynamic_scale), int(optimizer.step_counter.numpy()),
                 round(float(inner.learning_rate.numpy()), 9))
        wanted = (int(ours["iterations"]), float(ours["dynamic_scale"]), int(ours["step_counter"]), 0.01)
        print(f"TF {tf.__version__} / Keras {keras.__version__} restored our LossScaleOptimizer checkpoint with "
              f"assert_consumed(): max |difference| of weights and Adam slots {max(gaps):.3g}; (iterations, "
              f"dynamic_scale, step_counter, learning rate) {state}, ours {wanted}")
        if max(gaps) != 0.0 or state != wanted:
            failures.append("LossScaleOptimizer")
        net = Net()
        tf.train.Checkpoint(module=net).read(os.path.join(out, "module")).assert_consumed()
        values = np.load(os.path.join(out, "module.npz"))
        reader = tf.train.load_checkpoint(os.path.join(out, "module"))
        mismatched = [name for name in values if not np.array_equal(values[name], reader.get_tensor(name))]
        live = {"module/alias": net.alias, "module/table/a": net.table["a"], "module/mixed/1": net.mixed[1],
                "module/nested/1/x": net.nested[1]["x"], "module/_private": net._private, "module/frozen": net.frozen}
        mismatched += [name for name, variable in live.items()
                       if not np.array_equal(variable.numpy(), values[name + "/.ATTRIBUTES/VARIABLE_VALUE"])]
        print(f"TF restored our tf.Module checkpoint with assert_consumed(): {len(values)} values, "
              f"{len(mismatched)} differ {mismatched}; the alias is head.w: {net.alias is net.head.w}")
        if mismatched or len(values) != 15:
            failures.append("tf.Module")
    print("FAILED: " + ", ".join(failures) if failures else "LossScaleOptimizer and tf.Module: OK")
    return 1 if failures else 0


def main() -> int:
    cnn = check_cnn()
    return check_objects() or cnn


def check_cnn() -> int:
    import tensorflow as tf
    import keras

    with tempfile.TemporaryDirectory() as out:
        if not _run_ours(OURS, out, DATA):
            return 1
        print("torchstrategy wrote", sorted(os.listdir(out)))
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
