"""Writes the TF-checkpoint fixtures of tests/checkpoint/test_tf_checkpoint*.py and tests/formats/ with TF 2.21
(tensorflow-cpu 2.21.0, Keras 3.15.1). Run: /work/tf-venv/bin/python tools/tf_reference/tf_checkpoint_fixtures.py

tf_cnn_adam/: tf.train.Checkpoint(model=small CNN, optimizer=Adam) saved by a CheckpointManager after 3 Adam steps
(batch 4), and expected.npz: the batch, the 4th step's loss and the weights after it on one device and on a
2-replica MirroredStrategy (two logical CPUs). tf_misc/: a Functional LSTM model, a subclassed model and nested
tf.Modules written with Checkpoint.write, plus their weights (expected_misc.npz) and an LSTM output.
tf_loss_scale/: tf.train.Checkpoint(model, optimizer=LossScaleOptimizer(Adam)) of write_keras_fixtures.py's
loss_scale_model (a mixed_float16 layer, five steps, two skipped), with its numbers in expected.npz.
tf_module/: tf.train.Checkpoint(module=Net()), a tf.Module holding Variables and sub-modules as attributes, in
lists, dicts and nested containers (a shared Variable, a non-trainable one, an int32 one, non-trackable values),
with every value in expected.npz. Run `... tf_checkpoint_fixtures.py loss_scale module` to write only those two."""
from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import tensorflow as tf

cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "checkpoint", "data")


def cnn():
    return keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(3, 3, use_bias=False, name="conv"),
                             keras.layers.BatchNormalization(name="bn"), keras.layers.Flatten(),
                             keras.layers.Dense(2, name="dense")])


def compiled(model):
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


def cnn_adam() -> None:
    keras.utils.set_random_seed(0)
    folder = os.path.join(OUT, "tf_cnn_adam")
    shutil.rmtree(folder, ignore_errors=True)
    x = np.random.RandomState(0).rand(4, 6, 6, 2).astype("float32")
    y = np.random.RandomState(1).rand(4, 2).astype("float32")
    model = compiled(cnn())
    for _ in range(3):
        model.train_on_batch(x, y)
    ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer, step=tf.Variable(7, dtype=tf.int64))
    path = tf.train.CheckpointManager(ckpt, folder, max_to_keep=2).save()
    expected = {"x": x, "y": y, "variables": np.array([f"{name}|{shape}" for name, shape in tf.train.list_variables(path)])}
    for index, weight in enumerate(model.get_weights()):
        expected[f"saved_weight_{index}"] = weight
    for tag, strategy in (("one", tf.distribute.OneDeviceStrategy("/cpu:0")),
                          ("two", tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))):
        with strategy.scope():
            fresh = compiled(cnn())
            fresh.optimizer.build(fresh.trainable_variables)
            restored = tf.train.Checkpoint(model=fresh, optimizer=fresh.optimizer, step=tf.Variable(0, dtype=tf.int64))
            restored.restore(tf.train.latest_checkpoint(folder)).assert_consumed()
        expected[f"{tag}_loss"] = np.float32(fresh.train_on_batch(x, y))
        for index, weight in enumerate(fresh.get_weights()):
            expected[f"{tag}_weight_{index}"] = weight
        expected[f"{tag}_iterations"] = int(fresh.optimizer.iterations.numpy())
    np.savez(os.path.join(folder, "expected.npz"), **expected)


class Sub(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = keras.layers.Dense(3, name="d1")

    def call(self, x):
        return self.d1(x)


def misc() -> None:
    keras.utils.set_random_seed(1)
    folder = os.path.join(OUT, "tf_misc")
    shutil.rmtree(folder, ignore_errors=True)
    inputs = keras.Input((5, 3))
    functional = keras.Model(inputs, keras.layers.Dense(2, name="d")(keras.layers.LSTM(4, name="lstm")(inputs)))
    sub = Sub()
    sub(np.zeros((1, 4), "float32"))
    module = tf.Module()
    module.v = tf.Variable([1.5, -2.0])
    module.inner = tf.Module()
    module.inner.w = tf.Variable(5)
    tf.train.Checkpoint(func=functional, sub=sub, mod=module).write(os.path.join(folder, "misc"))
    seq = np.random.RandomState(2).rand(2, 5, 3).astype("float32")
    expected = {"seq": seq, "func_out": functional(seq).numpy()}
    for index, weight in enumerate(functional.get_weights()):
        expected[f"func_weight_{index}"] = weight
    for index, weight in enumerate(sub.get_weights()):
        expected[f"sub_weight_{index}"] = weight
    np.savez(os.path.join(folder, "expected_misc.npz"), **expected)


def loss_scale() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import write_keras_fixtures

    folder = os.path.join(OUT, "tf_loss_scale")
    shutil.rmtree(folder, ignore_errors=True)
    model, x, y = write_keras_fixtures.loss_scale_model()
    tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(os.path.join(folder, "lso"))
    expected = {"x": x, "y": y, **write_keras_fixtures.loss_scale_state(model.optimizer)}
    for index, weight in enumerate(model.get_weights()):
        expected[f"weight_{index}"] = weight
    np.savez(os.path.join(folder, "expected.npz"), **expected)


def module() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tf_module_net import Net

    folder = os.path.join(OUT, "tf_module")
    shutil.rmtree(folder, ignore_errors=True)
    net = Net()
    for variable in net.variables:  # values that differ from what the constructors give
        variable.assign(variable * 3 + tf.cast(1, variable.dtype))
    path = tf.train.Checkpoint(module=net).write(os.path.join(folder, "module"))
    values = {name: tf.train.load_variable(path, name) for name, _ in tf.train.list_variables(path)
              if name != "_CHECKPOINTABLE_OBJECT_GRAPH"}  # by TF's checkpoint key
    np.savez(os.path.join(folder, "expected.npz"), **values)


if __name__ == "__main__":
    chosen = sys.argv[1:] or ["cnn_adam", "misc", "loss_scale", "module"]
    for name in chosen:
        {"cnn_adam": cnn_adam, "misc": misc, "loss_scale": loss_scale, "module": module}[name]()
    print("fixtures written under", os.path.abspath(OUT), file=sys.stderr)
