"""Keras files both ways: TF 2.21-written `.keras`, `.weights.h5` and `.h5` (tests/formats/fixtures, written by
tools/tf_reference/write_keras_fixtures.py) load here and predict TF's outputs; the files we write have Keras's
structure (members, JSON keys, HDF5 paths; tools/tf_reference/check_keras_files.py opens them under TF); bad files
are refused before anything is assigned."""
from __future__ import annotations

import json
import os
import zipfile

import h5py
import numpy as np
import pytest

import torchstrategy as tf
from tests.formats import _models  # noqa: F401  (registers Fixtures>Scale and Fixtures>Residual)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "formats", "fixtures")
NAMES = ["cnn", "two_inputs", "lstm", "subclassed"]


def _fixture(name):
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    x = [data["x0"], data["x1"]] if "x0" in data else data["x"]
    return x, [data[k] for k in sorted(data) if k.startswith("y")], int(data["iterations"])


def _predict(model, x):
    out = model.predict(x, verbose=0)
    return out if isinstance(out, list) else [out]


@pytest.mark.parametrize("name", NAMES)
def test_tf_written_keras_file_loads_and_predicts_tf_outputs(name):
    x, expected, iterations = _fixture(name)
    model = tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"))
    for got, want in zip(_predict(model, x), expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=1e-6)
    assert int(model.optimizer.iterations) == iterations  # the optimizer state came along


@pytest.mark.parametrize("name", ["cnn", "two_inputs", "lstm"])
def test_tf_written_legacy_h5_model_loads_and_predicts_tf_outputs(name):
    x, expected, _ = _fixture(name)
    model = tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.h5"))
    for got, want in zip(_predict(model, x), expected):
        np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_tf_written_weights_load_into_a_model_built_here(name):
    x, expected, _ = _fixture(name)
    model = tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"), compile=False)
    for weight in model.weights:
        weight.data.zero_()
    model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    for got, want in zip(_predict(model, x), expected):
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_legacy_weights_load_by_order_and_by_name():
    x, expected, _ = _fixture("cnn")
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "cnn.keras"), compile=False)
    for weight in model.weights:
        weight.data.zero_()
    model.load_weights(os.path.join(FIXTURES, "cnn.h5"))
    np.testing.assert_allclose(_predict(model, x)[0], expected[0], atol=1e-6)
    for weight in model.weights:
        weight.data.zero_()
    model.load_weights(os.path.join(FIXTURES, "cnn.h5"), by_name=True)
    np.testing.assert_allclose(_predict(model, x)[0], expected[0], atol=1e-6)


def test_our_keras_file_has_keras_structure(tmp_path):
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "cnn.keras"))
    path = str(tmp_path / "ours.keras")
    model.save(path)
    archive = zipfile.ZipFile(path)
    assert archive.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
    config = json.loads(archive.read("config.json"))
    assert set(config) == {"module", "class_name", "config", "registered_name", "build_config", "compile_config"}
    assert (config["module"], config["class_name"]) == ("keras", "Sequential")
    conv = config["config"]["layers"][1]
    assert conv["module"] == "keras.layers" and conv["class_name"] == "Conv2D"
    assert conv["config"]["dtype"]["class_name"] == "DTypePolicy"
    assert conv["config"]["kernel_initializer"]["module"] == "keras.initializers"
    assert config["compile_config"]["loss"]["config"]["reduction"] == "sum_over_batch_size"
    with h5py.File(archive.open("model.weights.h5")) as handle:
        paths = []
        handle.visit(paths.append)
        assert "layers/conv2d/vars/0" in paths and "layers/conv2d_1/vars/1" in paths
        assert "layers/batch_normalization/vars/3" in paths and "optimizer/vars/0" in paths
        assert handle["layers/conv2d/vars/0"].shape == (3, 3, 3, 4)  # HWIO, as Keras


def test_our_weights_files_have_keras_paths(tmp_path):
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "subclassed.keras"))
    model.save_weights(str(tmp_path / "s.weights.h5"))
    with h5py.File(tmp_path / "s.weights.h5") as handle:
        paths = []
        handle.visit(paths.append)
    tf_paths = []
    with h5py.File(os.path.join(FIXTURES, "subclassed.weights.h5")) as handle:
        handle.visit(tf_paths.append)
    assert sorted(p for p in paths if "/vars/" in p) == sorted(p for p in tf_paths if "/vars/" in p)
    seq = tf.keras.models.load_model(os.path.join(FIXTURES, "lstm.keras"))
    seq.save(str(tmp_path / "l.h5"))
    with h5py.File(tmp_path / "l.h5") as ours, h5py.File(os.path.join(FIXTURES, "lstm.h5")) as theirs:
        assert list(ours["model_weights"].attrs["layer_names"]) == list(theirs["model_weights"].attrs["layer_names"])
        assert json.loads(ours.attrs["model_config"])["class_name"] == "Sequential"


def test_weights_of_another_model_name_the_first_mismatch_and_change_nothing():
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "lstm.keras"), compile=False)
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match=r"layer 'lstm.*\(3, 20\).*(shape|shapes)"):
        model.load_weights(os.path.join(FIXTURES, "cnn.weights.h5"))
    with pytest.raises(ValueError, match="layers with weights"):
        model.load_weights(os.path.join(FIXTURES, "cnn.h5"))
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_skip_mismatch_loads_what_fits(tmp_path):
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "cnn.keras"), compile=False)
    other = tf.keras.Sequential([tf.keras.Input((12, 12, 3)), tf.keras.layers.Conv2D(4, 3),
                                 tf.keras.layers.Conv2D(5, 3)])  # the second conv does not fit the file's (8 filters)
    before = other.get_weights()[2]
    with pytest.warns(UserWarning, match="Skipping loading weights of layer 'conv2d.*variable #0"):
        other.load_weights(os.path.join(FIXTURES, "cnn.weights.h5"), skip_mismatch=True)
    np.testing.assert_array_equal(other.get_weights()[0], model.get_weights()[0])
    np.testing.assert_array_equal(other.get_weights()[2], before)


def test_non_keras_and_truncated_files_are_refused(tmp_path):
    text = tmp_path / "notes.keras"
    text.write_bytes(b"hello, not a model")
    with pytest.raises(ValueError, match="not a Keras file"):
        tf.keras.models.load_model(str(text))
    whole = open(os.path.join(FIXTURES, "two_inputs.keras"), "rb").read()
    cut = tmp_path / "cut.keras"
    cut.write_bytes(whole[:-200])
    with pytest.raises(ValueError, match="cut.keras"):
        tf.keras.models.load_model(str(cut))
    with pytest.raises(ValueError, match="weights file"):
        tf.keras.models.load_model(os.path.join(FIXTURES, "cnn.weights.h5"))


def test_save_format_h5_writes_a_legacy_file(tmp_path):
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "two_inputs.keras"))
    path = str(tmp_path / "model_file")
    model.save(path, save_format="h5")
    x, expected, _ = _fixture("two_inputs")
    for got, want in zip(_predict(tf.keras.models.load_model(path), x), expected):
        np.testing.assert_allclose(got, want, atol=1e-6)


ZOO = ["zoo_image", "zoo_sequence", "zoo_3d", "zoo_merge", "zoo_preprocessing"]
OPTIMIZERS = ["opt_adagrad", "opt_adamax", "opt_adamw", "opt_sgd_nesterov", "opt_adam_amsgrad", "opt_rmsprop_centered",
              "opt_adam_ema"]


def _zoo(name):
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    x = [data["x0"], data["x1"]] if "x0" in data else data["x"]
    return x, data


@pytest.mark.parametrize("name", ZOO)
def test_tf_written_models_of_every_layer_kind_load_and_predict_tf_outputs(name):
    x, data = _zoo(name)
    model = tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"))
    got = model.predict(x, verbose=0)
    assert got.shape == data["y"].shape
    np.testing.assert_allclose(got, data["y"], atol=1e-6)
    assert int(model.optimizer.iterations) == int(data["iterations"])


@pytest.mark.parametrize("name", OPTIMIZERS + ["zoo_3d", "zoo_merge"])
def test_restored_optimizer_state_takes_tfs_next_step(name):
    """TF saved after two steps, then took a third: the state restored here gives the same third step."""
    x, data = _zoo(name)
    model = tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"))
    model.train_on_batch(x, data["target"])
    np.testing.assert_allclose(model.predict(x, verbose=0), data["after_step"], atol=2e-6)


@pytest.mark.parametrize("name", ["zoo_sequence", "opt_adam_amsgrad", "opt_adam_ema"])
def test_our_archive_round_trips_a_tf_archive_exactly(tmp_path, name):
    from torchstrategy.formats import keras_zip

    model = tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"))
    model.save(str(tmp_path / "again.keras"))
    theirs, ours = keras_zip.read(os.path.join(FIXTURES, f"{name}.keras")), keras_zip.read(str(tmp_path / "again.keras"))
    assert [p for p in ours.weights if ours.weights[p].values] == [p for p in theirs.weights if theirs.weights[p].values]
    for path, group in theirs.weights.items():
        if path in ours.weights:
            for a, b in zip(group.values, ours.weights[path].values):
                np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), atol=1e-7)
    assert sorted(e["class_name"] for e in ours.config["config"]["layers"]) == \
        sorted(e["class_name"] for e in theirs.config["config"]["layers"])


# ----- LossScaleOptimizer (loss_scale.*: a mixed_float16 layer, LossScaleOptimizer(Adam), five steps in TF 2.21) ---
def _loss_scale_data():
    return np.load(os.path.join(FIXTURES, "loss_scale.npz"))


def _loss_scale_model_here():
    layers = tf.keras.layers
    model = tf.keras.Sequential([tf.keras.Input((3,)), layers.Dense(4, activation="relu", dtype="mixed_float16",
                                                                    name="hidden"), layers.Dense(2, name="out")])
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(0.01), initial_scale=4096.0,
                                                            dynamic_growth_steps=2)
    model.compile(optimizer=optimizer, loss="mse")
    return model


def _assert_tfs_loss_scale_state(model, data):
    optimizer = model.optimizer
    assert isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
    assert type(optimizer.inner_optimizer).__name__ == "Adam"
    # TF: skip, step, step (the scale doubles), skip, step
    assert int(optimizer.iterations) == int(data["iterations"]) == 3
    assert float(optimizer.dynamic_scale) == float(data["dynamic_scale"]) == 2048.0
    assert int(optimizer.step_counter) == int(data["step_counter"]) == 1
    for index, weight in enumerate(model.trainable_weights):
        state = optimizer.inner_optimizer.state[weight]
        np.testing.assert_array_equal(state["momentum"].numpy(), data[f"momentum_{index}"])
        np.testing.assert_array_equal(state["velocity"].numpy(), data[f"velocity_{index}"])
    for index, weight in enumerate(model.get_weights()):
        np.testing.assert_array_equal(weight, data[f"weight_{index}"])


def test_tf_written_loss_scale_optimizer_loads_with_tfs_state_and_takes_tfs_next_step():
    data = _loss_scale_data()
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "loss_scale.keras"))
    _assert_tfs_loss_scale_state(model, data)
    assert model.optimizer.dynamic_growth_steps == 2 and model.optimizer.initial_scale == 4096.0
    # the hidden layer computes in float16: TF's kernels and torch's round differently
    np.testing.assert_allclose(model.predict(data["x"], verbose=0), data["y"], atol=2e-3)
    model.train_on_batch(data["x"], data["target"])
    assert int(model.optimizer.iterations) == int(data["after_iterations"]) == 4
    assert float(model.optimizer.dynamic_scale) == float(data["after_dynamic_scale"]) == 4096.0  # doubled
    assert int(model.optimizer.step_counter) == int(data["after_step_counter"]) == 0
    np.testing.assert_allclose(model.predict(data["x"], verbose=0), data["after_step"], atol=2e-3)


def test_tf_written_loss_scale_weights_file_loads_into_a_model_built_here():
    data = _loss_scale_data()
    model = _loss_scale_model_here()
    model.optimizer.build(model.trainable_variables)
    model.load_weights(os.path.join(FIXTURES, "loss_scale.weights.h5"))
    _assert_tfs_loss_scale_state(model, data)


def _h5_structure(source):
    found = {}

    def visit(name, item):
        if isinstance(item, h5py.Dataset):
            found[name] = (item.shape, item.dtype.str)
        else:
            found[name] = {key: str(value) for key, value in item.attrs.items()}

    with h5py.File(source) as handle:
        handle.visititems(visit)
    return found


def test_our_loss_scale_files_have_keras_paths_names_and_dtypes(tmp_path):
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "loss_scale.keras"))
    model.save(str(tmp_path / "ours.keras"))
    model.save_weights(str(tmp_path / "ours.weights.h5"))
    theirs = _h5_structure(os.path.join(FIXTURES, "loss_scale.weights.h5"))
    assert _h5_structure(str(tmp_path / "ours.weights.h5")) == theirs
    with zipfile.ZipFile(tmp_path / "ours.keras") as ours, zipfile.ZipFile(os.path.join(FIXTURES, "loss_scale.keras")) \
            as tf_file:
        assert _h5_structure(ours.open("model.weights.h5")) == _h5_structure(tf_file.open("model.weights.h5"))
        ours_optimizer = json.loads(ours.read("config.json"))["compile_config"]["optimizer"]
        assert ours_optimizer == json.loads(tf_file.read("config.json"))["compile_config"]["optimizer"]
    # Keras 3.15's layout, frozen: the wrapper's own iteration, learning rate, step_counter and dynamic_scale, then
    # the inner Adam's iteration, learning rate and (momentum, velocity) per weight; the inner Adam again by itself
    assert theirs["optimizer/vars"] == {"name": "loss_scale_optimizer"}
    assert theirs["optimizer/inner_optimizer/vars"] == {"name": "adam"}
    assert [theirs[f"optimizer/vars/{i}"] for i in range(4)] == [((), "<i8"), ((), "<f4"), ((), "<i8"), ((), "<f4")]
    assert len([p for p in theirs if p.startswith("optimizer/vars/")]) == 4 + 2 + 2 * 4
    assert len([p for p in theirs if p.startswith("optimizer/inner_optimizer/vars/")]) == 2 + 2 * 4
    again = tf.keras.models.load_model(str(tmp_path / "ours.keras"))
    _assert_tfs_loss_scale_state(again, _loss_scale_data())


def test_an_optimizer_state_of_another_kind_warns_and_leaves_the_optimizer_as_it_was():
    plain = tf.keras.models.load_model(os.path.join(FIXTURES, "loss_scale.keras"), compile=False)
    plain.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    plain.optimizer.build(plain.trainable_variables)
    with pytest.warns(UserWarning, match=r"optimizer state saved \(14 variables\) does not fit Adam .*\(10\)"):
        plain.load_weights(os.path.join(FIXTURES, "loss_scale.weights.h5"))
    assert int(plain.optimizer.iterations) == 0  # the weights loaded (as Keras), the optimizer did not
    np.testing.assert_array_equal(plain.get_weights()[0], _loss_scale_data()["weight_0"])
    wrapped = _loss_scale_model_here()
    wrapped.optimizer.build(wrapped.trainable_variables)
    with pytest.warns(UserWarning, match=r"does not fit LossScaleOptimizer\(Adam\) of this model \(14\)"):
        wrapped.load_weights(os.path.join(FIXTURES, "opt_adam_amsgrad.keras"), skip_mismatch=True)
    assert int(wrapped.optimizer.iterations) == 0 and float(wrapped.optimizer.dynamic_scale) == 4096.0
