"""tf.saved_model.load of TF-written SavedModels (fixtures from tools/tf_reference/tf_saved_model_fixtures.py,
tensorflow-cpu 2.21.0 / Keras 3.15): the object tree, variables and signature specs TF shows, functions that say
why they cannot run, and the two routes to the weights (Checkpoint(model).restore, Keras set_weights)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.formats.tf_saved_model_objects import LoadedTFObject, TFGraphFunction

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
MODULE, KERAS = os.path.join(FIXTURES, "tf_module_sm"), os.path.join(FIXTURES, "tf_keras_sm")
with open(os.path.join(FIXTURES, "tf_saved_model_expected.json")) as _handle:
    EXPECTED = json.load(_handle)


class Net(tf.Module):
    """The fixture's tf.Module, rebuilt in Python with zeros (the saved values must come from the file)."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.zeros((3, 2), np.float32), name="w")
        self.b = tf.Variable(np.zeros(2, np.float32), name="b", trainable=False)

    def __call__(self, x):
        return {"y": tf.matmul(x, self.w) + self.b}


def _public(obj):
    return sorted(name for name in vars(obj) if not name.startswith("_"))


def _specs(specs):
    return {key: {"shape": spec.shape.as_list(), "dtype": str(spec.dtype).replace("torch.", ""), "name": spec.name}
            for key, spec in specs.items()}


def test_module_loads_as_tf_shows_it():
    loaded = tf.saved_model.load(MODULE)
    frozen = EXPECTED["tf_module_sm"]
    assert isinstance(loaded, LoadedTFObject)
    # TF's public names, less graph_debug_info (debug info for the graphs, which do not run here)
    assert _public(loaded) == sorted(set(frozen["public"]) - {"graph_debug_info"})
    assert isinstance(vars(loaded)["__call__"], TFGraphFunction)
    assert not hasattr(loaded, "variables")  # as in TF: a tf.Module's SavedModel root has no `.variables`
    for name, attrs in frozen["attributes"].items():
        variable = getattr(loaded, name)
        assert isinstance(variable, tf.Variable)
        assert (variable.name, list(variable.shape), variable.trainable) == (attrs["name"], attrs["shape"],
                                                                             attrs["trainable"])
        assert variable.dtype == torch.float32
        np.testing.assert_array_equal(variable.numpy(), np.array(attrs["value"], np.float32))
    signature = loaded.signatures["serving_default"]
    assert list(loaded.signatures) == list(frozen["signatures"])
    assert _specs(signature.structured_input_signature[1]) == frozen["signatures"]["serving_default"]["inputs"]
    assert _specs(signature.structured_outputs) == frozen["signatures"]["serving_default"]["outputs"]
    assert loaded.tensorflow_version == "2.21.0"


@pytest.mark.parametrize("call", ["root", "signature"])
def test_graph_functions_refuse_to_run_saying_what_to_do(call):
    loaded = tf.saved_model.load(MODULE)
    x = np.array(EXPECTED["tf_module_sm"]["x"], np.float32)
    with pytest.raises(NotImplementedError, match=r"TensorFlow graph function.*cannot run.*Rebuild the model in "
                                                  r"Python.*tf\.train\.Checkpoint\(model\)\.restore\('.*variables/"
                                                  r"variables'\)"):
        loaded(x) if call == "root" else loaded.signatures["serving_default"](x=x)


def test_checkpoint_of_the_module_restores_the_saved_model_variables_as_tf_does():
    prefix = os.path.join(MODULE, "variables", "variables")
    frozen = EXPECTED["tf_module_sm"]
    net = Net()
    tf.train.Checkpoint(net).restore(prefix).assert_existing_objects_matched()
    np.testing.assert_array_equal(net.w.numpy(), np.array(frozen["restore_root_w"], np.float32))
    np.testing.assert_array_equal(net.b.numpy(), np.array(frozen["restore_root_b"], np.float32))
    x = np.array(frozen["x"], np.float32)
    np.testing.assert_allclose(net(x)["y"].numpy(), np.array(frozen["y"], np.float32), rtol=1e-6)
    # TF 2.21: Checkpoint(model=net) looks for a child 'model' the SavedModel's root lacks: nothing restored
    other = Net()
    status = tf.train.Checkpoint(model=other).restore(prefix)
    np.testing.assert_array_equal(other.w.numpy(), np.array(frozen["restore_model_kwarg_w"], np.float32))
    with pytest.raises(AssertionError, match="not bound to checkpointed values"):
        status.assert_consumed()
    status.expect_partial()


def test_keras_export_loads_its_variable_lists_and_its_weights_fit_a_rebuilt_model():
    loaded = tf.saved_model.load(KERAS)
    frozen = EXPECTED["tf_keras_sm"]
    assert _public(loaded) == sorted(set(frozen["public"]) - {"graph_debug_info"})
    for attr, names in frozen["variables"].items():
        assert [v.name for v in getattr(loaded, attr)] == names
    assert loaded.variables[0] is loaded.trainable_variables[0]
    assert isinstance(loaded.serve, TFGraphFunction)
    assert sorted(loaded.signatures) == sorted(frozen["signatures"])
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, name="d1"),
                                 tf.keras.layers.Dense(2, name="d2")])
    model.set_weights([v.numpy() for v in loaded.variables])  # the route the errors offer
    x = np.array(frozen["x"], np.float32)
    np.testing.assert_allclose(np.asarray(model(x)), np.array(frozen["y"], np.float32), rtol=1e-5, atol=1e-6)


def test_load_model_and_tfsmlayer_refuse_a_tf_written_directory_as_keras_means_it():
    frozen = EXPECTED["tf_keras_sm"]["load_model_error"]
    assert "File format not supported" in frozen and "legacy SavedModel format is not supported" in frozen
    with pytest.raises(ValueError, match=r"File format not supported: filepath=.*tf_keras_sm.*legacy SavedModel "
                                         r"format is not supported by `load_model\(\)`.*TensorFlow-written.*"
                                         r"model\.set_weights"):
        tf.keras.models.load_model(KERAS)
    # Keras 3.15: ValueError "The endpoint 'nope' is neither an attribute of the reloaded SavedModel, nor an entry
    # in the `signatures` field ..."
    with pytest.raises(ValueError, match="endpoint 'nope' is neither an attribute.*signatures"):
        tf.keras.layers.TFSMLayer(KERAS, call_endpoint="nope")
    with pytest.raises(NotImplementedError, match=r"TFSMLayer cannot run .*endpoint 'serve' is a TF graph.*"
                                                  r"set_weights"):
        tf.keras.layers.TFSMLayer(KERAS)


def test_load_model_of_our_export_directory_points_at_tfsmlayer(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    model.export(str(tmp_path / "ours"))
    with pytest.raises(ValueError, match=r"File format not supported.*keras\.layers\.TFSMLayer\("):
        tf.keras.models.load_model(str(tmp_path / "ours"))
    layer = tf.keras.layers.TFSMLayer(str(tmp_path / "ours"), call_endpoint="serve")
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(np.asarray(layer(x)), np.asarray(model(x)), rtol=1e-6)
