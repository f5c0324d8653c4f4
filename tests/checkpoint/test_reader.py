"""tf.train.load_checkpoint / list_variables / load_variable and CheckpointReader: TF-written checkpoints (fixture
from tools/tf_reference/tf_checkpoint_fixtures.py, tensorflow-cpu 2.21.0 / Keras 3.15.1) and our own files."""
from __future__ import annotations

import os

import numpy as np
import pytest

import torchstrategy as tf

CNN = os.path.join(os.path.dirname(__file__), "data", "tf_cnn_adam")
EXPECTED = np.load(os.path.join(CNN, "expected.npz"))


def test_load_checkpoint_list_variables_and_reader_on_tf_files():
    listed = [tuple(item.split("|")) for item in EXPECTED["variables"]]  # TF's list_variables
    assert [(name, str(shape)) for name, shape in tf.train.list_variables(CNN)] == listed
    reader = tf.train.load_checkpoint(os.path.join(CNN, "ckpt-1"))
    key = "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE"
    assert reader.has_tensor(key) and not reader.has_tensor("nope")
    np.testing.assert_array_equal(reader.get_tensor(key), EXPECTED["saved_weight_0"])
    assert reader.get_variable_to_shape_map()[key] == [3, 3, 2, 3]
    assert reader.get_variable_to_dtype_map()["step/.ATTRIBUTES/VARIABLE_VALUE"] == tf.int64
    assert tf.train.load_variable(CNN, "step/.ATTRIBUTES/VARIABLE_VALUE:0") == 7
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")


def test_load_checkpoint_of_a_folder_without_checkpoints_uses_tf_wording(tmp_path):
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file or checkpoints in given directory"):
        tf.train.load_checkpoint(str(tmp_path))
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.load_checkpoint(str(tmp_path / "nothing"))


def test_reader_lists_our_own_checkpoint_files_by_object_path(tmp_path):
    step = tf.Variable(4, dtype="int64")
    path = tf.train.Checkpoint(step=step, weights=[tf.Variable([1.0, 2.0])]).write(str(tmp_path / "own"))
    reader = tf.train.load_checkpoint(path)
    assert reader.get_variable_to_shape_map() == {"save_counter": [], "step": [], "weights/0": [2]}
    assert reader.get_tensor("step") == 4
    np.testing.assert_array_equal(tf.train.load_variable(path, "weights/0"), [1.0, 2.0])
