"""TF-written checkpoints (fixtures from tools/tf_reference/tf_checkpoint_fixtures.py, tensorflow-cpu 2.21.0 /
Keras 3.15.1) restore into our Keras models, optimizers and Variables; checkpoints we write in TF's format carry
the keys TF writes (tools/tf_reference/tf_restores_ours.py checks that TF restores them)."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy import keras
from torchstrategy.formats.tf_bundle import BundleCorruptedError
from tests import _multiprocess as mp

DATA = os.path.join(os.path.dirname(__file__), "data")
CNN = os.path.join(DATA, "tf_cnn_adam")
MISC = os.path.join(DATA, "tf_misc")
EXPECTED = np.load(os.path.join(CNN, "expected.npz"))


def _cnn():
    model = keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(3, 3, use_bias=False, name="conv"),
                              keras.layers.BatchNormalization(name="bn"), keras.layers.Flatten(),
                              keras.layers.Dense(2, name="dense")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


def _checkpoint(model, step=None):
    step = tf.Variable(0, dtype="int64") if step is None else step
    return tf.train.Checkpoint(model=model, optimizer=model.optimizer, step=step), step


def _copy_cnn(tmp_path) -> str:
    folder = tmp_path / "tf"
    shutil.copytree(CNN, folder)
    return str(folder)


def test_tf_checkpoint_restores_and_the_next_adam_step_equals_tf():
    model = _cnn()
    checkpoint, step = _checkpoint(model)
    status = checkpoint.restore(tf.train.latest_checkpoint(CNN))
    status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
    assert int(step) == 7 and int(model.optimizer.iterations) == 3 and int(checkpoint.save_counter) == 1
    for index, weight in enumerate(model.get_weights()):  # the conv kernel stays HWIO, BN's moving stats included
        np.testing.assert_array_equal(weight, EXPECTED[f"saved_weight_{index}"])
    loss = model.train_on_batch(EXPECTED["x"], EXPECTED["y"])
    np.testing.assert_allclose(loss, EXPECTED["one_loss"], rtol=1e-6)
    for index, weight in enumerate(model.get_weights()):
        np.testing.assert_allclose(weight, EXPECTED[f"one_weight_{index}"], rtol=1e-5, atol=3e-7)
    assert int(model.optimizer.iterations) == int(EXPECTED["one_iterations"])


def test_a_model_built_after_restore_gets_its_values_on_first_call_like_tf_deferred_restoration():
    model = keras.Sequential([keras.layers.Conv2D(3, 3, use_bias=False, name="conv"),
                              keras.layers.BatchNormalization(name="bn"), keras.layers.Flatten(),
                              keras.layers.Dense(2, name="dense")])  # no Input: no weights until the first call
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    checkpoint, step = _checkpoint(model)
    status = checkpoint.restore(tf.train.latest_checkpoint(CNN))
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
        status.assert_consumed()
    assert int(step) == 7
    loss = model.train_on_batch(EXPECTED["x"], EXPECTED["y"])  # weights, then Adam's slots, restored on the way
    status.assert_consumed()
    np.testing.assert_allclose(loss, EXPECTED["one_loss"], rtol=1e-6)
    for index, weight in enumerate(model.get_weights()):
        np.testing.assert_allclose(weight, EXPECTED[f"one_weight_{index}"], rtol=1e-5, atol=3e-7)


def test_tf_directory_state_latest_checkpoint_and_manager():
    state = tf.train.get_checkpoint_state(CNN)
    assert state.model_checkpoint_path == os.path.join(CNN, "ckpt-1")
    assert tf.train.latest_checkpoint(CNN) == os.path.join(CNN, "ckpt-1")
    model = _cnn()
    checkpoint, _ = _checkpoint(model)
    manager = tf.train.CheckpointManager(checkpoint, CNN, max_to_keep=2)
    assert manager.latest_checkpoint == os.path.join(CNN, "ckpt-1")
    assert manager.restore_or_initialize() == os.path.join(CNN, "ckpt-1")
    assert int(model.optimizer.iterations) == 3


def test_functional_lstm_subclassed_model_and_nested_variables():
    expected = np.load(os.path.join(MISC, "expected_misc.npz"))
    inputs = keras.Input((5, 3))
    func = keras.Model(inputs, keras.layers.Dense(2, name="d")(keras.layers.LSTM(4, name="lstm")(inputs)))

    class Sub(keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = keras.layers.Dense(3, name="d1")

        def call(self, x):
            return self.d1(x)

    sub = Sub()
    sub(np.zeros((1, 4), "float32"))
    v, w = tf.Variable([0.0, 0.0]), tf.Variable(0)
    module = tf.train.Checkpoint(v=v, inner=tf.train.Checkpoint(w=w))  # TF saved nested tf.Modules
    tf.train.Checkpoint(func=func, sub=sub, mod=module).read(os.path.join(MISC, "misc")).assert_consumed()
    assert v.numpy().tolist() == [1.5, -2.0] and int(w) == 5
    for index, weight in enumerate(func.get_weights()):  # LSTM kernels keep Keras's gate order (i, f, c, o)
        np.testing.assert_array_equal(weight, expected[f"func_weight_{index}"])
    out = func(torch.from_numpy(expected["seq"])).detach().numpy()
    np.testing.assert_allclose(out, expected["func_out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sub.get_weights()[0], expected["sub_weight_0"])


def test_assertions_use_tf_wording():
    other = tf.Variable(2.0)
    status = tf.train.Checkpoint(thing=other).read(os.path.join(MISC, "misc"))
    with pytest.raises(AssertionError, match=r"Found 1 Python objects that were not bound to checkpointed values, "
                                             r"likely due to changes in the Python program. Showing 1 of 1 unmatched "
                                             r"objects: \[<variable '\(root\).thing'"):
        status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"Nothing except the root object matched a checkpointed value"):
        status.assert_nontrivial_match()
    status.expect_partial()
    v, w = tf.Variable([0.0, 0.0]), tf.Variable(0)
    partial = tf.train.Checkpoint(mod=tf.train.Checkpoint(v=v, inner=tf.train.Checkpoint(w=w))).read(
        os.path.join(MISC, "misc"))
    partial.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"(?s)Unresolved object in checkpoint \(root\)\.(sub|func)\..*checkpoint_key"):
        partial.assert_consumed()
    partial.expect_partial()


def test_values_left_in_the_checkpoint_warn_unless_expect_partial():
    import gc

    def read(silence):
        status = tf.train.Checkpoint(mod=tf.train.Checkpoint(v=tf.Variable([0.0, 0.0]))).read(
            os.path.join(MISC, "misc"))
        if silence:
            status.expect_partial()

    with pytest.warns(UserWarning, match=r"were not restored because nothing here matches them: .*\(root\)\.sub"):
        read(False)
        gc.collect()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read(True)
        gc.collect()


def _weights_and_state(model):
    return [w.copy() for w in model.get_weights()], int(model.optimizer.iterations)


def test_bad_input_is_named_and_restores_nothing(tmp_path):
    folder = _copy_cnn(tmp_path)
    prefix = os.path.join(folder, "ckpt-1")
    model = _cnn()
    model.optimizer.build(model.trainable_variables)
    checkpoint, step = _checkpoint(model)
    before, iterations = _weights_and_state(model)
    data = prefix + ".data-00000-of-00001"
    blob = bytearray(open(data, "rb").read())
    blob[-1] ^= 0xFF  # the last tensor's bytes
    open(data, "wb").write(bytes(blob))
    with pytest.raises(BundleCorruptedError, match=r"ckpt-1.data-00000-of-00001' is corrupted: the CRC-32C"):
        checkpoint.restore(prefix)
    os.unlink(data)
    with pytest.raises(FileNotFoundError, match=r"data shard '.*ckpt-1.data-00000-of-00001' is missing"):
        checkpoint.restore(prefix)
    wider = keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(4, 3, use_bias=False)])
    shutil.copy(os.path.join(CNN, "ckpt-1.data-00000-of-00001"), data)
    wide_step = tf.Variable(0, dtype="int64")
    with pytest.raises(ValueError, match=r"incompatible tensor with shape \(3, 3, 2, 3\).*\(3, 3, 2, 4\)"):
        tf.train.Checkpoint(model=wider, step=wide_step).restore(prefix)
    assert int(wide_step) == 0  # checked before anything was copied
    after, after_iterations = _weights_and_state(model)
    assert after_iterations == iterations and int(step) == 0
    for old, new in zip(before, after):
        np.testing.assert_array_equal(old, new)


def _tf_options():
    options = tf.train.CheckpointOptions()
    options.experimental_write_format = "tf"
    return options


def test_written_tf_format_has_tf_keys_and_restores_here(tmp_path):
    model = _cnn()
    checkpoint, step = _checkpoint(model)
    checkpoint.restore(tf.train.latest_checkpoint(CNN)).assert_consumed()
    manager = tf.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=1)
    first = manager.save(options=_tf_options())
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-2.data-00000-of-00001", "ckpt-2.index"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    tf_keys = [(name, str(shape)) for name, shape in (item.split("|") for item in EXPECTED["variables"])]
    assert [(name, str(shape)) for name, shape in tf.train.list_variables(first)] == tf_keys  # the keys TF writes
    np.testing.assert_array_equal(tf.train.load_variable(first, "optimizer/_variables/2/.ATTRIBUTES/VARIABLE_VALUE"),
                                  tf.train.load_variable(CNN, "optimizer/_variables/2/.ATTRIBUTES/VARIABLE_VALUE"))
    again = _cnn()
    restored, again_step = _checkpoint(again)
    restored.restore(first).assert_consumed()
    assert int(again_step) == 7 and int(again.optimizer.iterations) == 3
    for ours, theirs in zip(again.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(ours, theirs)
    second = manager.save(options=_tf_options())  # max_to_keep=1 deletes the first bundle's files
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-3.data-00000-of-00001", "ckpt-3.index"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == second


def test_write_without_counter_and_default_format_stays_ours(tmp_path):
    v = tf.Variable([1.0, 2.0])
    checkpoint = tf.train.Checkpoint(v=v)
    written = checkpoint.write(str(tmp_path / "tfw"), options=_tf_options())
    assert [name for name, _ in tf.train.list_variables(written)] == ["_CHECKPOINTABLE_OBJECT_GRAPH",
                                                                      "v/.ATTRIBUTES/VARIABLE_VALUE"]
    ours = checkpoint.write(str(tmp_path / "own"))
    assert os.path.isfile(ours) and not os.path.exists(ours + ".index")
    calls = []
    options = tf.train.CheckpointOptions(experimental_write_callbacks=[calls.append])
    checkpoint.write(str(tmp_path / "cb"), options=options)
    assert calls == [str(tmp_path / "cb")]


MIRRORED = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf
from torchstrategy import keras

data, out, replicas = sys.argv[1], sys.argv[2], int(sys.argv[3])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
expected = np.load(os.path.join(data, "expected.npz"))
with strategy.scope():
    model = keras.Sequential([keras.Input((6, 6, 2)), keras.layers.Conv2D(3, 3, use_bias=False, name="conv"),
                              keras.layers.BatchNormalization(name="bn"), keras.layers.Flatten(),
                              keras.layers.Dense(2, name="dense")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    step = tf.Variable(0, dtype="int64")
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer, step=step)
    checkpoint.restore(tf.train.latest_checkpoint(data)).assert_consumed()
loss = model.train_on_batch(expected["x"], expected["y"])
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
with open(os.path.join(out, f"report_{rank}.json"), "w") as handle:
    json.dump({"loss": float(loss), "step": int(step), "iterations": int(model.optimizer.iterations),
               "weights": [w.tolist() for w in model.get_weights()]}, handle)
'''


@pytest.mark.slow
def test_two_replica_mirrored_restore_and_next_step_equal_tf_mirrored(tmp_path):
    script = mp.write_script(tmp_path, MIRRORED)
    out = tmp_path / "out"
    out.mkdir()
    result = mp.run_python([script, CNN, str(out), "2"], timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in range(2):  # TF's numbers: MirroredStrategy over two logical CPUs
        report = mp.read_json(out / f"report_{rank}.json")
        assert report["step"] == 7 and report["iterations"] == int(EXPECTED["two_iterations"])
        np.testing.assert_allclose(report["loss"], EXPECTED["two_loss"], rtol=1e-6)
        for index, weight in enumerate(report["weights"]):
            np.testing.assert_allclose(np.array(weight, np.float32), EXPECTED[f"two_weight_{index}"],
                                       rtol=1e-5, atol=3e-7)


def test_skip_slot_variables_restores_weights_but_not_adam_slots():
    model = _cnn()
    model.optimizer.build(model.trainable_variables)
    checkpoint, _ = _checkpoint(model)
    options = tf.train.CheckpointOptions(experimental_skip_slot_variables=True)
    checkpoint.restore(tf.train.latest_checkpoint(CNN), options=options).assert_consumed()
    np.testing.assert_array_equal(model.get_weights()[0], EXPECTED["saved_weight_0"])
    assert int(model.optimizer.iterations) == 3
    assert all(float(slot.abs().sum()) == 0.0 for state in model.optimizer.state.values() for slot in state.values())
