"""model.save / load_model and save_weights / load_weights round trips, and what happens
with files that are not what the caller thinks."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

layers = tf.keras.layers


def compiled_cnn():
    model = tf.keras.Sequential([
        layers.Conv2D(4, 3, activation="relu", padding="same", input_shape=(6, 6, 3)),
        layers.BatchNormalization(),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dropout(0.1),
        layers.Dense(3),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-2),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def data(n=32):
    rng = np.random.default_rng(1)
    return rng.random((n, 6, 6, 3)).astype(np.float32), rng.integers(0, 3, (n, 1))


def test_save_and_load_model_give_identical_predictions_and_resume_training_identically(tmp_path):
    x, y = data()
    model = compiled_cnn()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    path = str(tmp_path / "model.keras")
    model.save(path)
    restored = tf.keras.models.load_model(path)
    assert type(restored) is tf.keras.Sequential
    np.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))
    # optimizer state (Adam moments, iterations) came along: one more epoch stays identical
    torch.manual_seed(7)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    torch.manual_seed(7)
    restored.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), restored.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_functional_model_round_trip(tmp_path):
    inputs = tf.keras.Input(shape=(4,))
    hidden = layers.Dense(5, activation="tanh")(inputs)
    outputs = layers.Add()([layers.Dense(2)(hidden), layers.Dense(2)(hidden)])
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer="sgd", loss="mse")
    path = str(tmp_path / "functional.keras")
    model.save(path)
    restored = tf.keras.models.load_model(path)
    x = np.random.default_rng(0).random((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))


class Residual(tf.keras.Model):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.inner = layers.Dense(units)

    def call(self, inputs, training=False):
        return inputs + self.inner(inputs)

    def get_config(self):
        return {"units": self.units, "name": self.name}


def test_subclassed_model_needs_custom_objects_and_then_round_trips(tmp_path):
    model = Residual()
    x = torch.randn(2, 3)
    expected = model(x).detach()
    path = str(tmp_path / "residual.keras")
    model.save(path)
    with pytest.raises(ValueError, match="custom_objects"):
        tf.keras.models.load_model(path)
    restored = tf.keras.models.load_model(path, custom_objects={"Residual": Residual})
    assert torch.equal(restored(x), expected)


def test_weights_only_round_trip_and_mismatched_architecture(tmp_path):
    x, _ = data(4)
    model = compiled_cnn()
    path = str(tmp_path / "cnn.weights.h5")
    model.save_weights(path)
    fresh = compiled_cnn()
    assert not np.array_equal(fresh.predict(x, verbose=0), model.predict(x, verbose=0))
    fresh.load_weights(path)
    np.testing.assert_array_equal(fresh.predict(x, verbose=0), model.predict(x, verbose=0))
    other = tf.keras.Sequential([layers.Dense(2, input_shape=(3,))])
    with pytest.raises(ValueError, match=r"does not fit this model: layer .dense.*\(3, 2\).*\(36, 3\)"):
        other.load_weights(path)


def test_save_does_not_overwrite_when_told_not_to_and_bad_files_are_named(tmp_path):
    model = compiled_cnn()
    path = tmp_path / "m.keras"
    model.save(str(path))
    with pytest.raises(FileExistsError, match="overwrite"):
        model.save(str(path), overwrite=False)
    broken = tmp_path / "broken.keras"
    broken.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="broken.keras"):
        tf.keras.models.load_model(str(broken))
    weights = tmp_path / "w.pt"
    model.save_weights(str(weights))
    with pytest.raises(ValueError, match="not a model file"):
        tf.keras.models.load_model(str(weights))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_our_own_format_is_still_written_for_other_suffixes_and_read_by_its_header(tmp_path):
    x, _ = data(4)
    model = compiled_cnn()
    path = tmp_path / "model.tsm"
    model.save(str(path))
    assert path.read_bytes()[:8] == b"TSCKPT\x00\n"  # torchstrategy's checkpoint format, as before
    np.testing.assert_array_equal(tf.keras.models.load_model(str(path)).predict(x, verbose=0),
                                  model.predict(x, verbose=0))


def test_the_earlier_graph_config_of_our_files_still_loads():
    from torchstrategy.keras import saving

    earlier = {"class_name": "Functional", "config": {
        "name": "m", "inputs": ["x"],
        "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [None, 3], "dtype": "float32",
                                                           "name": "x"}},
                   {"class_name": "Dense", "config": {"name": "d", "units": 2, "dtype": "float32"}}],
        "nodes": [{"layer": "d", "inputs": {"__ref__": ["input", 0, 0]}, "args": [], "kwargs": {}}],
        "outputs": {"__ref__": ["node", 0, 0]}}}
    model = saving.model_from_config(earlier)
    x = np.ones((1, 3), np.float32)
    kernel, bias = model.get_layer("d").get_weights()
    np.testing.assert_allclose(model.predict(x, verbose=0), x @ kernel + bias, rtol=1e-6)


def test_save_and_load_take_keras_3_arguments(tmp_path):
    # Keras 3.15: Model.save(filepath, overwrite=True, zipped=None, **kwargs) with include_optimizer / save_format
    # as keywords; load_weights(filepath, skip_mismatch=False, **kwargs) with by_name; load_model has no **kwargs
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((4, 3), "float32"), np.ones((4, 2), "float32"), epochs=1, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path, include_optimizer=False)
    restored = tf.keras.models.load_model(path)
    assert np.allclose(restored.predict(np.ones((1, 3), "float32"), verbose=0),
                       model.predict(np.ones((1, 3), "float32"), verbose=0))
    with pytest.raises(NotImplementedError, match="zipped=False"):
        model.save(str(tmp_path / "folder.keras"), zipped=False)
    with pytest.raises(ValueError, match="signatures"):
        model.save(str(tmp_path / "other.keras"), signatures=None)
    with pytest.raises(NotImplementedError, match="max_shard_size"):
        model.save_weights(str(tmp_path / "w.weights.h5"), max_shard_size=1)
    model.save_weights(str(tmp_path / "w.weights.h5"))
    with pytest.raises(ValueError, match="by_name=True is only supported"):
        model.load_weights(str(tmp_path / "w.weights.h5"), by_name=True)
    with pytest.raises(ValueError, match="unsupported keyword"):
        model.load_weights(str(tmp_path / "w.weights.h5"), options=None)
    with pytest.raises(TypeError):
        tf.keras.models.load_model(path, options=None)


def test_save_model_takes_keras_3_signature_and_keras_2_keywords(tmp_path):
    """Keras 3.15's save_model(model, filepath, overwrite=True, zipped=None, **kwargs): include_optimizer and
    save_format still pass through **kwargs; anything else is refused before a file is written."""
    import inspect
    import zipfile

    assert tf.keras.models.save_model is tf.keras.saving.save_model
    assert str(inspect.signature(tf.keras.saving.save_model)) == (
        "(model: 'Any', filepath: 'str', overwrite: 'bool' = True, zipped: 'Optional[bool]' = None, "
        "**kwargs: 'Any') -> 'None'")
    x, y = data(8)
    model = compiled_cnn()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    bad = tmp_path / "bad.keras"
    with pytest.raises(ValueError, match="unsupported keyword argument\\(s\\) \\['compression'\\]"):
        tf.keras.saving.save_model(model, str(bad), compression=True)
    with pytest.raises(NotImplementedError, match="zipped=False"):
        tf.keras.saving.save_model(model, str(bad), zipped=False)
    assert not bad.exists()
    # save_format on a .keras path: the suffix decides (Keras warns that the argument is deprecated)
    path = tmp_path / "m.keras"
    with pytest.warns(UserWarning, match="save_format"):
        tf.keras.models.save_model(model, str(path), save_format="h5", include_optimizer=False)
    assert zipfile.is_zipfile(path)
    restored = tf.keras.models.load_model(str(path))
    np.testing.assert_allclose(restored.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)
    with_opt = tmp_path / "opt.keras"
    model.save(str(with_opt), zipped=True)

    def optimizer_in_weights(archive):
        import io

        import h5py

        with h5py.File(io.BytesIO(zipfile.ZipFile(archive).read("model.weights.h5")), "r") as weights:
            return "optimizer" in weights

    assert optimizer_in_weights(with_opt) and not optimizer_in_weights(path)
