"""Keras weights answer Keras 3's variable API (name, path, numpy, assign*, value, trainable) while
staying the Parameters and buffers torch sees; values checked against TF 2.21's behaviour."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch


def _model():
    import torchstrategy as tf

    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2), tf.keras.layers.BatchNormalization()])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    return model


def test_weights_have_keras_names_values_and_assignment():
    model = _model()
    kernel, moving_mean = model.layers[0].kernel, model.layers[1].moving_mean
    # TF 2.21: name 'kernel', path '<...>/dense/kernel', trainable True; moving_mean trainable False
    assert (kernel.name, kernel.path.split("/")[-2:], kernel.trainable) == ("kernel", ["dense", "kernel"], True)
    assert (moving_mean.name, moving_mean.trainable) == ("moving_mean", False)
    assert isinstance(kernel, torch.nn.Parameter) and "kernel" in dict(model.layers[0].named_parameters())
    assert "moving_mean" in dict(model.layers[1].named_buffers())
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    kernel.assign(values)
    np.testing.assert_array_equal(kernel.numpy(), values)  # numpy() works on a grad-requiring weight
    kernel.assign_add(np.ones((3, 2), np.float32))
    kernel.assign_sub(2 * np.ones((3, 2), np.float32))
    np.testing.assert_array_equal(model.get_weights()[0], values - 1)
    moving_mean.assign([0.5, 1.5])
    np.testing.assert_array_equal(model.layers[1].get_weights()[2], [0.5, 1.5])
    assert type(kernel + 1) is torch.Tensor and type(moving_mean * 2) is torch.Tensor  # ops give plain tensors
    with pytest.raises(ValueError, match="shape"):
        kernel.assign(np.zeros((2, 3), np.float32))


def test_training_copies_and_pickles_keep_the_variable_api():
    model = _model()
    before = model.layers[0].kernel.numpy()
    rng = np.random.default_rng(0)
    model.fit(rng.normal(size=(8, 3)).astype(np.float32), rng.normal(size=(8, 2)).astype(np.float32), batch_size=4,
              verbose=0)
    assert not np.array_equal(model.layers[0].kernel.numpy(), before)  # the optimizer updated the same tensor
    fresh = _model()
    clone = copy.deepcopy(fresh)
    assert clone.layers[0].kernel.path == fresh.layers[0].kernel.path
    assert clone.layers[0].kernel.data_ptr() != fresh.layers[0].kernel.data_ptr()
    restored = pickle.loads(pickle.dumps(fresh.layers[1].moving_variance))
    assert restored.name == "moving_variance" and np.array_equal(restored.numpy(), [1.0, 1.0])


def test_keras_variable_is_built_from_keras3s_arguments():
    # Keras 3.15 (TF 2.21): Variable(np.array([1, 2])) is int64 named 'variable'; Variable('ones', shape=(2,),
    # trainable=False) is float32 [1, 1] and not trainable; an initializer without shape is a ValueError;
    # dtype= converts a value; unknown keywords are ignored.
    import torchstrategy as tf

    assert tf.keras.Variable(np.array([1, 2])).dtype == torch.int64
    assert tf.keras.Variable(np.array([1, 2])).name == "variable"
    ones = tf.keras.Variable("ones", shape=(2,), trainable=False, name="w")
    assert ones.dtype == torch.float32 and ones.numpy().tolist() == [1.0, 1.0]
    assert not ones.trainable and ones.name == "w" and isinstance(ones, tf.keras.Variable)
    with pytest.raises(ValueError, match="the `shape` argument should be specified"):
        tf.keras.Variable("ones")
    assert tf.keras.Variable(np.array([1, 2]), dtype="int32").dtype == torch.int32
    scalar = tf.keras.Variable(3.0, aggregation="mean", foo=1)
    assert scalar.trainable and scalar.aggregation == "mean" and float(scalar) == 3.0
    with pytest.raises(ValueError, match="Invalid value for argument `aggregation`"):
        tf.keras.Variable(1.0, aggregation="max")
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        tf.keras.Variable(1.0, name="a/b")
    for option in ({"autocast": False}, {"synchronization": "on_read"}, {"layout": object()}):
        with pytest.raises(NotImplementedError, match=next(iter(option))):
            tf.keras.Variable(1.0, **option)
