"""Keras 3 serving export: model.export (endpoint 'serve', signature 'serving_default'), ExportArchive,
TFSMLayer running an exported directory inside a Sequential, and the format / unbuilt errors."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf


def _model():
    tf.random.set_seed(2)
    inputs = tf.keras.Input(shape=(4,), name="feat")
    return tf.keras.Model(inputs, tf.keras.layers.Dense(3)(tf.keras.layers.Dense(5, activation="relu")(inputs)))


def test_export_serves_predict_through_serve_and_signatures(tmp_path, capsys):
    model = _model()
    model.export(str(tmp_path / "exp"))
    assert "Endpoint 'serve'" in capsys.readouterr().out
    loaded = tf.saved_model.load(str(tmp_path / "exp"))
    # TF 2.21 + Keras 3: signatures 'serve' and 'serving_default', input named after the Input ('feat'),
    # output 'output_0'; loaded.serve returns the tensor itself
    assert sorted(loaded.signatures) == ["serve", "serving_default"]
    assert list(loaded.signatures["serving_default"].structured_input_signature[1]) == ["feat"]
    x = np.random.default_rng(1).random((13, 4)).astype(np.float32)
    expected = model.predict(x, verbose=0)
    np.testing.assert_allclose(loaded.serve(x).numpy(), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(loaded.signatures["serving_default"](feat=x)["output_0"].numpy(), expected,
                               rtol=1e-6, atol=1e-6)


def test_tfsmlayer_in_a_sequential_matches_the_model(tmp_path):
    model = _model()
    model.export(str(tmp_path / "exp"), verbose=False)
    wrapped = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.TFSMLayer(str(tmp_path / "exp"))])
    x = np.random.default_rng(2).random((6, 4)).astype(np.float32)
    np.testing.assert_allclose(wrapped.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="endpoint 'nope' is not among"):
        tf.keras.layers.TFSMLayer(str(tmp_path / "exp"), call_endpoint="nope")


def test_export_archive_with_a_custom_signature(tmp_path):
    model = _model()
    archive = tf.keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint("predict_rows", model, [tf.TensorSpec([None, 4], tf.float32, name="rows")])
    archive.write_out(str(tmp_path / "arch"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "arch"))
    x = np.random.default_rng(3).random((3, 4)).astype(np.float32)
    np.testing.assert_allclose(loaded.signatures["serving_default"](rows=x)["output_0"].numpy(),
                               model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(loaded.predict_rows(x).numpy(), model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)


def test_export_errors(tmp_path):
    # TF 2.21 + Keras 3: ValueError "Unrecognized format=..." and "...has not yet been built..."
    with pytest.raises(ValueError, match=r"Unrecognized format='onnxx'.*\['tf_saved_model'\]"):
        _model().export(str(tmp_path / "a"), format="onnxx")
    with pytest.raises(ValueError, match="not yet been built"):
        tf.keras.Sequential([tf.keras.layers.Dense(2)]).export(str(tmp_path / "b"))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_export_archive_format_and_jax_only_keywords_as_keras3_on_tf():
    # Keras 3.15 (TF backend): ExportArchive(format='saved_model') is the default, an unknown format raises
    # "Unsupported format: x", and add_endpoint refuses the JAX-backend keywords.
    assert isinstance(tf.keras.export.ExportArchive(format="saved_model"), tf.keras.export.ExportArchive)
    with pytest.raises(ValueError, match="Unsupported format: x"):
        tf.keras.export.ExportArchive(format="x")
    with pytest.raises(NotImplementedError, match="neptune_model"):
        tf.keras.export.ExportArchive(format="neptune_model")
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    archive = tf.keras.export.ExportArchive()
    archive.track(model)
    with pytest.raises(ValueError, match="only supported with the jax backend"):
        archive.add_endpoint("serve", model, is_static=True)


def test_tfsmlayer_config_round_trip_and_safe_mode(tmp_path):
    # Keras 3.15: TFSMLayer(..., trainable=True) by default; from_config(config, custom_objects, safe_mode)
    # refuses an external SavedModel in safe mode and loads it with safe_mode=False.
    model = _model()
    model.export(str(tmp_path / "exp"), verbose=False)
    layer = tf.keras.layers.TFSMLayer(str(tmp_path / "exp"))
    assert layer.trainable and layer.get_config()["trainable"] is True
    with pytest.raises(ValueError, match="safe_mode"):
        tf.keras.layers.TFSMLayer.from_config(layer.get_config(), safe_mode=True)
    again = tf.keras.layers.TFSMLayer.from_config(layer.get_config(), safe_mode=False)
    x = np.random.default_rng(3).random((2, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(again(x, training=False)), model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)
