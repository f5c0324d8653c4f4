"""Keras 2's `.h5` files as Keras 2 wrote them (fixed-length byte names, `<layer>/<layer>/kernel:0` datasets,
weights-only files at the root, as keras.applications' published weights): loaded by order and by name,
with mismatches named; Keras 2's functional config (nested `inbound_nodes` lists) rebuilt."""
from __future__ import annotations

import h5py
import numpy as np
import pytest

import torchstrategy as tf

L = tf.keras.layers


def _keras2_weights_file(path, layers):
    """A weights-only file in Keras 2's layout (what `save_weights('x.h5')` of tf.keras 2.x wrote)."""
    with h5py.File(path, "w") as out:
        out.attrs["layer_names"] = np.array([name.encode() for name, _ in layers], dtype="S")
        out.attrs["backend"], out.attrs["keras_version"] = b"tensorflow", b"2.15.0"
        for name, weights in layers:
            group = out.create_group(name)
            group.attrs["weight_names"] = np.array([f"{name}/{w}:0".encode() for w, _ in weights], dtype="S")
            for weight, value in weights:
                group.create_dataset(f"{name}/{weight}:0", data=value)


def _model():
    return tf.keras.Sequential([L.Input((4,)), L.Dense(3, name="fc1"), L.Dropout(0.1, name="drop"),
                                L.Dense(2, name="fc2")])


def test_keras2_weights_load_by_order_and_by_name(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {name: [("kernel", rng.random(shape).astype("float32")), ("bias", rng.random(shape[1:]).astype("float32"))]
              for name, shape in (("dense_a", (4, 3)), ("dense_b", (3, 2)))}
    path = str(tmp_path / "k2.h5")
    _keras2_weights_file(path, [("dense_a", arrays["dense_a"]), ("dropout", []), ("dense_b", arrays["dense_b"])])
    model = _model()
    model.load_weights(path)  # by order: layers without weights left out on both sides
    np.testing.assert_array_equal(model.get_layer("fc1").get_weights()[0], arrays["dense_a"][0][1])
    np.testing.assert_array_equal(model.get_layer("fc2").get_weights()[1], arrays["dense_b"][1][1])
    by_name = str(tmp_path / "named.h5")
    _keras2_weights_file(by_name, [("fc2", arrays["dense_b"]), ("unrelated", arrays["dense_a"])])
    fresh = _model()
    before = fresh.get_layer("fc1").get_weights()[0]
    fresh.load_weights(by_name, by_name=True)
    np.testing.assert_array_equal(fresh.get_layer("fc2").get_weights()[0], arrays["dense_b"][0][1])
    np.testing.assert_array_equal(fresh.get_layer("fc1").get_weights()[0], before)


def test_keras2_shape_mismatch_is_named_or_skipped(tmp_path):
    path = str(tmp_path / "bad.h5")
    _keras2_weights_file(path, [("fc1", [("kernel", np.zeros((5, 3), "float32")), ("bias", np.zeros(3, "float32"))])])
    model = _model()
    with pytest.raises(ValueError, match=r"layer 'fc1', weight 'fc1/kernel:0'.*\(4, 3\).*\(5, 3\)"):
        model.load_weights(path, by_name=True)
    with pytest.warns(UserWarning, match="Skipping loading weights of layer 'fc1'"):
        model.load_weights(path, by_name=True, skip_mismatch=True)


def test_keras2_functional_config_is_rebuilt():
    config = {"class_name": "Functional", "config": {
        "name": "model", "layers": [
            {"class_name": "InputLayer", "name": "x",
             "config": {"batch_input_shape": [None, 3], "dtype": "float32", "sparse": False, "ragged": False,
                        "name": "x"}, "inbound_nodes": []},
            {"class_name": "Dense", "name": "shared", "config": {"name": "shared", "trainable": True, "dtype": "float32",
                                                                  "units": 2, "activation": "linear", "use_bias": True},
             "inbound_nodes": [[["x", 0, 0, {}]], [["x", 0, 0, {}]]]},
            {"class_name": "Add", "name": "add", "config": {"name": "add", "trainable": True, "dtype": "float32"},
             "inbound_nodes": [[["shared", 0, 0, {}], ["shared", 1, 0, {}]]]}],
        "input_layers": [["x", 0, 0]], "output_layers": ["add", 0, 0]}}  # tf.keras 2.x: one output, flat
    from torchstrategy.keras import saving

    model = saving.model_from_config(config)
    x = np.ones((2, 3), "float32")
    kernel, bias = model.get_layer("shared").get_weights()
    got = model.predict(x, verbose=0)
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got, 2 * (x @ kernel + bias), rtol=1e-6)


def test_a_loss_scale_optimizer_in_a_legacy_file_keeps_keras_names_and_its_state(tmp_path):
    import os

    fixtures = os.path.join(os.path.dirname(__file__), "..", "formats", "fixtures")
    model = tf.keras.models.load_model(os.path.join(fixtures, "loss_scale.keras"))  # TF's: 3 steps, scale 2048
    model.save(str(tmp_path / "lso.h5"))
    with h5py.File(tmp_path / "lso.h5") as handle:
        names = [n.decode() if isinstance(n, bytes) else n for n in handle["optimizer_weights"].attrs["weight_names"]]
    # Keras 3.15's names for a LossScaleOptimizer's variables in a legacy file: its own four, then the inner's
    assert names[:6] == ["loss_scale_optimizer/iteration", "loss_scale_optimizer/learning_rate",
                         "loss_scale_optimizer/step_counter", "loss_scale_optimizer/dynamic_scale", "adam/iteration",
                         "adam/learning_rate"]
    assert len(names) == 14 and all(n.startswith("loss_scale_optimizer/adam/") for n in names[6:])
    again = tf.keras.models.load_model(str(tmp_path / "lso.h5"))
    optimizer = again.optimizer
    assert type(optimizer).__name__ == "LossScaleOptimizer"
    assert (int(optimizer.iterations), float(optimizer.dynamic_scale), int(optimizer.step_counter)) == (3, 2048.0, 1)
