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
