"""tf.saved_model: save/load of Keras models and tf.functions as torch.export programs, reloading without
the Python class in another process, saving under a 2-replica MirroredStrategy, and the bad-input errors."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests import _multiprocess as mp


def _sequential():
    tf.random.set_seed(1)
    return tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                tf.keras.layers.Dense(3)])


def _rows(n, width=4, seed=0):
    return np.random.default_rng(seed).random((n, width)).astype(np.float32)


def test_sequential_round_trip_serves_predict_on_another_batch_size(tmp_path):
    model = _sequential()
    tf.saved_model.save(model, str(tmp_path / "served"))
    assert tf.saved_model.contains_saved_model(str(tmp_path / "served"))
    manifest = json.loads((tmp_path / "served" / "torchstrategy_saved_model.json").read_text())
    assert manifest["signatures"] == {"serving_default": "serving_default"}
    assert manifest["functions"]["serving_default"]["inputs"] == [
        {"name": "inputs", "shape": [None, 4], "dtype": "float32"}]  # batch dim dynamic
    assert not (tmp_path / "served" / "saved_model.pb").exists()
    loaded = tf.saved_model.load(str(tmp_path / "served"))
    # TF 2.21: tf.saved_model.save(keras_model) gives only 'serving_default'; input 'inputs', output 'output_0';
    # the loaded object is not callable
    assert list(loaded.signatures) == ["serving_default"]
    assert not callable(loaded) or pytest.raises(TypeError, loaded, _rows(2))
    x = _rows(7)  # traced with batch 2
    out = loaded.signatures["serving_default"](inputs=x)
    assert list(out) == ["output_0"]
    np.testing.assert_allclose(out["output_0"].numpy(), model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)
    # positional calls work too (TF 2.21 accepts them for a signature)
    np.testing.assert_allclose(loaded.signatures["serving_default"](x)["output_0"].numpy(),
                               out["output_0"].numpy())


def test_functional_model_and_overwrite(tmp_path):
    inputs = tf.keras.Input(shape=(5,), name="feat")
    outputs = tf.keras.layers.Dense(2, name="head")(tf.keras.layers.Dense(6, activation="tanh")(inputs))
    model = tf.keras.Model(inputs, outputs)
    path = str(tmp_path / "fn")
    tf.saved_model.save(_sequential(), path)  # a first export, replaced atomically by the second
    tf.saved_model.save(model, path)
    assert sorted(os.listdir(tmp_path)) == ["fn"]  # no staging or retired directories left behind
    x = _rows(11, 5)
    loaded = tf.saved_model.load(path)
    got = loaded.signatures["serving_default"](inputs=x)["output_0"].numpy()
    np.testing.assert_allclose(got, model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match=r"must have shape \(None, 5\)"):
        loaded.signatures["serving_default"](inputs=_rows(3, 4))


class _Scaler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(torch.tensor([1.0, 2.0, 3.0]))

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def scale(self, x):
        return {"y": x * self.w}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="v")])
    def total(self, v):
        return tf.reduce_sum(v * self.w, axis=1)


def test_custom_signatures_use_tensorspec_names(tmp_path):
    module = _Scaler()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={"scaled": module.scale, "summed": module.total})
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert sorted(loaded.signatures) == ["scaled", "summed"]
    x = _rows(6, 3)
    expected = x * np.array([1.0, 2.0, 3.0], np.float32)
    # TF 2.21: a dict output keeps its keys; a single tensor becomes 'output_0'; the tf.functions stay methods
    np.testing.assert_allclose(loaded.signatures["scaled"](x=x)["y"].numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(loaded.signatures["summed"](v=x)["output_0"].numpy(), expected.sum(1), rtol=1e-6)
    np.testing.assert_allclose(loaded.total(x).numpy(), expected.sum(1), rtol=1e-6)
    with pytest.raises(TypeError, match=r"unexpected input 'inputs'.*\['x'\]"):
        loaded.signatures["scaled"](inputs=x)
    # a single function is 'serving_default' (TF 2.21)
    tf.saved_model.save(module, str(tmp_path / "one"), signatures=module.total)
    assert "serving_default" in tf.saved_model.load(str(tmp_path / "one")).signatures
    assert module.scale.input_signature[0].name == "x"  # recorded by tf.function, calls stay eager
    np.testing.assert_allclose(module.scale(torch.ones(1, 3))["y"].detach().numpy(), [[1.0, 2.0, 3.0]])


SAVE_CUSTOM = r'''
import sys
import numpy as np, torch
import torchstrategy as tf

class Twist(tf.keras.layers.Layer):  # exists only in this script
    def build(self, input_shape):
        self.k = self.add_weight(name="k", shape=(input_shape[-1],), initializer="random_normal")
    def call(self, inputs):
        return torch.sin(inputs) * self.k + inputs ** 2

tf.random.set_seed(3)
model = tf.keras.Sequential([tf.keras.Input((4,)), Twist(), tf.keras.layers.Dense(2)])
x = np.random.default_rng(5).random((9, 4)).astype(np.float32)
np.save(sys.argv[2], model.predict(x, verbose=0))
np.save(sys.argv[3], x)
tf.saved_model.save(model, sys.argv[1])
'''


@pytest.mark.slow
def test_reload_in_a_process_without_the_class(tmp_path):
    script = mp.write_script(tmp_path, SAVE_CUSTOM, "save_custom.py")
    paths = [str(tmp_path / "custom"), str(tmp_path / "pred.npy"), str(tmp_path / "x.npy")]
    result = mp.run_python([script, *paths], timeout=120)
    assert result.returncode == 0, result.stderr
    # this process never defined Twist
    loaded = tf.saved_model.load(paths[0])
    got = loaded.signatures["serving_default"](inputs=np.load(paths[2]))["output_0"].numpy()
    np.testing.assert_allclose(got, np.load(paths[1]), rtol=1e-6, atol=1e-6)


UNDER_STRATEGY = r'''
import os, sys
import numpy as np
import torchstrategy as tf

out = sys.argv[1]
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
rng = np.random.default_rng(0)
x, y = rng.random((64, 4)).astype(np.float32), rng.random((64, 1)).astype(np.float32)
with strategy.scope():
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(6, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
model.fit(x, y, batch_size=16, epochs=2, verbose=0)
predicted = model.predict(x[:10], verbose=0)
with strategy.scope():
    tf.saved_model.save(model, os.path.join(out, "served"))
if strategy.is_chief:
    np.save(os.path.join(out, "predicted.npy"), predicted)
    np.save(os.path.join(out, "x.npy"), x[:10])
print("done rank", strategy.process_rank, flush=True)
'''


@pytest.mark.slow
def test_save_under_two_replicas_chief_writes_and_loads_elsewhere(tmp_path):
    script = mp.write_script(tmp_path, UNDER_STRATEGY, "under_strategy.py")
    out = tmp_path / "out"
    out.mkdir()
    result = mp.run_python([script, str(out)], timeout=180)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("done rank") == 2  # the non-chief returned too (no hang)
    assert sorted(os.listdir(out)) == ["predicted.npy", "served", "x.npy"]  # one directory, no staging left
    loaded = tf.saved_model.load(str(out / "served"))
    got = loaded.signatures["serving_default"](inputs=np.load(out / "x.npy"))["output_0"].numpy()
    np.testing.assert_allclose(got, np.load(out / "predicted.npy"), rtol=1e-5, atol=1e-5)


def test_load_of_a_non_saved_model_directory_is_a_clear_oserror(tmp_path):
    # TF 2.21: OSError "SavedModel file does not exist at: <dir>/{saved_model.pbtxt|saved_model.pb}"
    with pytest.raises(OSError, match="SavedModel file does not exist at.*no such directory"):
        tf.saved_model.load(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(OSError, match="it is empty"):
        tf.saved_model.load(str(tmp_path / "empty"))
    # a TF-written directory is read (tests/formats/test_tf_saved_model.py); one whose saved_model.pb holds no
    # MetaGraphDef is refused naming the file (TF 2.21: ValueError, "there are 0 MetaGraphs"), and
    # contains_saved_model is True for it, as TF's is for any directory with a saved_model.pb
    (tmp_path / "tfwritten" / "variables").mkdir(parents=True)
    (tmp_path / "tfwritten" / "saved_model.pb").write_bytes(b"\x08\x01")
    with pytest.raises(ValueError, match=r"saved_model\.pb' holds no MetaGraphDef"):
        tf.saved_model.load(str(tmp_path / "tfwritten"))
    assert tf.saved_model.contains_saved_model(str(tmp_path / "tfwritten"))


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_a_damaged_or_missing_program_file_is_named(tmp_path, damage):
    tf.saved_model.save(_sequential(), str(tmp_path / "served"))
    program = tmp_path / "served" / "serving_default.pt2"
    if damage == "truncated":
        program.write_bytes(program.read_bytes()[:200])
        expected = r"program file '.*serving_default\.pt2' is damaged .*export the model again"
    else:
        program.unlink()
        expected = r"lists the program file 'serving_default\.pt2', which is missing"
    with pytest.raises(OSError, match=expected):
        tf.saved_model.load(str(tmp_path / "served"))


def test_save_of_an_untraceable_object_says_what_to_do(tmp_path):
    unbuilt = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    with pytest.raises(ValueError, match="input shape is unknown.*signatures=.*build the model"):
        tf.saved_model.save(unbuilt, str(tmp_path / "x"))
    assert not (tmp_path / "x").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(FileExistsError, match="not a torchstrategy SavedModel"):
        tf.saved_model.save(_sequential(), str(tmp_path / "mine"))
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"
    assert tf.saved_model.SERVING == "serve" and tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"


def test_an_asset_is_copied_into_the_export_and_the_loaded_asset_points_at_the_copy(tmp_path):
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("a\nb\nc\n")
    module = _Scaler()
    module.vocab = tf.saved_model.Asset(str(vocabulary))
    assert module.vocab.asset_path == str(vocabulary)
    tf.saved_model.save(module, str(tmp_path / "with_assets"), signatures={"scaled": module.scale})
    vocabulary.write_text("changed after saving")
    loaded = tf.saved_model.load(str(tmp_path / "with_assets"))
    copy = loaded.vocab.asset_path
    assert copy == os.path.join(str(tmp_path / "with_assets"), tf.saved_model.ASSETS_DIRECTORY, "vocab.txt")
    assert open(copy, encoding="utf-8").read() == "a\nb\nc\n"  # the file as it was when saved
    module.vocab = tf.saved_model.Asset(str(tmp_path / "missing.txt"))
    with pytest.raises(FileNotFoundError, match="not a file"):  # refused before anything is written
        tf.saved_model.save(module, str(tmp_path / "never"), signatures={"scaled": module.scale})
    assert not (tmp_path / "never").exists()
    with pytest.raises(TypeError, match="file path"):
        tf.saved_model.Asset(3)


def test_constants_have_tfs_values():
    # TF 2.21's values
    sm = tf.saved_model
    assert (sm.SERVING, sm.TRAINING, sm.GPU, sm.TPU) == ("serve", "train", "gpu", "tpu")
    assert (sm.ASSETS_DIRECTORY, sm.ASSETS_KEY, sm.VARIABLES_DIRECTORY, sm.VARIABLES_FILENAME) == (
        "assets", "saved_model_assets", "variables", "variables")
    assert (sm.SAVED_MODEL_FILENAME_PB, sm.SAVED_MODEL_FILENAME_PBTXT, sm.SAVED_MODEL_SCHEMA_VERSION) == (
        "saved_model.pb", "saved_model.pbtxt", 1)
    assert (sm.PREDICT_METHOD_NAME, sm.CLASSIFY_METHOD_NAME, sm.REGRESS_METHOD_NAME) == (
        "tensorflow/serving/predict", "tensorflow/serving/classify", "tensorflow/serving/regress")
    assert (sm.PREDICT_INPUTS, sm.PREDICT_OUTPUTS, sm.CLASSIFY_OUTPUT_CLASSES, sm.CLASSIFY_OUTPUT_SCORES) == (
        "inputs", "outputs", "classes", "scores")
    assert (sm.DEBUG_DIRECTORY, sm.DEBUG_INFO_FILENAME_PB) == ("debug", "saved_model_debug_info.pb")
    assert sm.SaveOptions(experimental_debug_stripper=True).experimental_debug_stripper is True


def test_variable_policy_is_tfs_enum_and_save_options_convert_to_it():
    # TF 2.21: NONE=None, SAVE_VARIABLE_DEVICES, EXPAND_DISTRIBUTED_VARIABLES; SaveOptions converts names and None
    policy = tf.saved_model.experimental.VariablePolicy
    assert [(p.name, p.value) for p in policy] == [("NONE", None), ("SAVE_VARIABLE_DEVICES", "save_variable_devices"),
                                                   ("EXPAND_DISTRIBUTED_VARIABLES", "expand_distributed_variables")]
    assert tf.saved_model.SaveOptions(experimental_variable_policy="save_variable_devices"
                                      ).experimental_variable_policy is policy.SAVE_VARIABLE_DEVICES
    assert tf.saved_model.SaveOptions().experimental_variable_policy is policy.NONE
    with pytest.raises(ValueError, match="Invalid VariablePolicy"):
        tf.saved_model.SaveOptions(experimental_variable_policy="everywhere")
