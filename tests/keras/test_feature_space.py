"""keras.utils.FeatureSpace (keras/feature_space.py) against Keras 3.15's numbers, frozen by
tools/tf_reference/keras_functional_reference.py ("feature_space")."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy import keras
from torchstrategy.keras import layers
from torchstrategy.keras.utils import FeatureSpace

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_functional_reference.json")))["feature_space"]
FS_DATA = {"f": [0.5, 1.5, -2.0, 3.0, 0.0, 1.0], "n": [1.0, 2.0, 3.0, 4.0, 5.0, 9.0],
           "r": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0], "d": [0.1, 0.4, 0.35, 0.8, 0.9, 0.2],
           "ic": [3, 1, 3, 7, 1, 3], "sc": ["a", "b", "a", "c", "b", "a"], "ih": [5, 6, 7, 5, 6, 5],
           "sh": ["x", "y", "z", "x", "y", "w"]}
FS_DTYPES = {"f": "float32", "n": "float32", "r": "float32", "d": "float32", "ic": "int64", "ih": "int64"}


def _data() -> dict:
    return {k: np.asarray(v, FS_DTYPES.get(k)) if k in FS_DTYPES else np.asarray(v) for k, v in FS_DATA.items()}


def _space() -> FeatureSpace:
    space = FeatureSpace(features={
        "f": "float", "n": "float_normalized", "r": FeatureSpace.float_rescaled(scale=0.1, offset=1.0),
        "d": FeatureSpace.float_discretized(num_bins=3), "ic": "integer_categorical", "sc": "string_categorical",
        "ih": FeatureSpace.integer_hashed(num_bins=4), "sh": "string_hashed"},
        crosses=[("sc", "ic")], crossing_dim=5, hashing_dim=6, output_mode="concat")
    space.adapt(tf.data.Dataset.from_tensor_slices(_data()).batch(4))
    return space


def test_every_feature_type_and_a_cross_encode_as_keras():
    space = _space()
    data = _data()
    np.testing.assert_allclose(np.asarray(space({k: v[:3] for k, v in data.items()})), REF["concat"], atol=1e-6)
    assert list(space({k: v[0] for k, v in data.items()}).shape) == REF["single_shape"]  # one example: no batch
    assert [str(t) for t in space.preprocessors["sc"].get_vocabulary()] == REF["vocab_sc"]
    assert [int(t) for t in space.preprocessors["ic"].get_vocabulary()] == REF["vocab_ic"]
    np.testing.assert_allclose(space.preprocessors["d"].bin_boundaries, REF["boundaries_d"], rtol=1e-6)
    assert sorted(space.get_config()) == REF["config_keys"]


def test_dict_output_keeps_each_feature_and_its_dtype():
    data = _data()
    small = FeatureSpace(features={"ic": "integer_categorical", "sc": FeatureSpace.string_categorical(output_mode="int"),
                                   "f": "float"}, output_mode="dict")
    small.adapt({k: data[k] for k in ("ic", "sc", "f")})  # a dict of arrays adapts too
    batch = small({k: data[k][:2] for k in ("ic", "sc", "f")})
    single = small({k: data[k][0] for k in ("ic", "sc", "f")})
    for name, want in REF["dict"].items():
        assert str(batch[name].dtype).replace("torch.", "") == want["dtype"]
        np.testing.assert_allclose(np.asarray(batch[name]), want["value"])
        assert list(single[name].shape) == want["single_shape"]


def test_encoded_features_feed_a_training_model_and_inputs_an_inference_model():
    space = _space()
    data = _data()
    encoded = space.get_encoded_features()
    assert list(encoded.shape) == REF["encoded_shape"]
    assert {k: list(v.shape) for k, v in space.get_inputs().items()} == REF["input_shapes"]
    dense = layers.Dense(1, name="head")
    predictions = dense(encoded)
    training_model = keras.Model(inputs=encoded, outputs=predictions)
    dense.set_weights([(np.arange(29, dtype="float32").reshape(29, 1) - 14) / 20, np.array([0.25], "float32")])
    inference_model = keras.Model(inputs=space.get_inputs(), outputs=predictions)
    sample = {k: np.asarray([v[4]]) for k, v in data.items()}  # raw values, strings included
    np.testing.assert_allclose(inference_model.predict(sample, verbose=0), REF["inference"], rtol=1e-5)
    encoded_rows = space({k: v[3:] for k, v in data.items()})
    np.testing.assert_allclose(training_model.predict(encoded_rows, verbose=0), REF["training_on_encoded"], rtol=1e-5)


def test_a_dataset_mapped_through_the_space_trains_a_model():
    space = _space()
    data = _data()
    labels = np.array([0, 1, 0, 1, 1, 0], "float32")
    dataset = tf.data.Dataset.from_tensor_slices((data, labels)).batch(3).map(lambda x, y: (space(x), y))
    encoded = space.get_encoded_features()
    model = keras.Model(encoded, layers.Dense(1, activation="sigmoid")(encoded))
    model.compile("adam", "binary_crossentropy")
    history = model.fit(dataset, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()


def test_save_and_load_model_give_the_same_encoding(tmp_path):
    space = _space()
    data = _data()
    path = str(tmp_path / "space.keras")
    space.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, FeatureSpace) and loaded.get_config() == space.get_config()
    np.testing.assert_allclose(np.asarray(loaded({k: v[:3] for k, v in data.items()})), REF["concat"], atol=1e-6)
    with pytest.raises(ValueError, match="`.keras` extension"):
        space.save(str(tmp_path / "space.h5"))


def test_bad_input_says_what_to_do():
    with pytest.raises(ValueError, match="cannot be None or empty"):
        FeatureSpace({})
    with pytest.raises(ValueError, match="Invalid feature type: colour"):
        FeatureSpace({"a": "colour"})
    with pytest.raises(ValueError, match="Received unknown features"):
        FeatureSpace({"a": "float"}, crosses=[("a", "b")])
    with pytest.raises(ValueError, match="Expected one of {'dict', 'concat'}"):
        FeatureSpace({"a": "float"}, output_mode="list")
    unadapted = FeatureSpace({"a": "float_normalized"})
    with pytest.raises(ValueError, match=r"call `.adapt\(dataset\)`"):
        unadapted({"a": [1.0]})
    ints = FeatureSpace({"a": FeatureSpace.integer_categorical(output_mode="int")})
    ints.adapt({"a": [1, 2]})
    with pytest.raises(ValueError, match="has not been encoded"):
        ints({"a": [1]})
    with pytest.raises(ValueError, match="can only be called with a dict"):
        ints([1])
    with pytest.raises(ValueError, match="tf.data.Dataset or a dict"):
        ints.adapt([1, 2])
