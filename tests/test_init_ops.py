"""TF's top-level initializers: shapes, dtypes (float32 by default), statistics and repeatability."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_constant_zeros_ones():
    assert tf.constant_initializer([1, 2, 3, 4])([2, 2]).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tf.constant_initializer(7)([2], dtype=tf.int32).tolist() == [7, 7]
    with pytest.raises(TypeError, match="needs 4"):
        tf.constant_initializer([1, 2, 3])([2, 2])
    assert tf.zeros_initializer()([2, 1]).dtype == torch.float32 and tf.ones_initializer()([3]).sum() == 3


def test_random_initializers_statistics_and_seed():
    normal = tf.random_normal_initializer(mean=1.0, stddev=2.0, seed=4)([20000])
    assert normal.dtype == torch.float32
    assert abs(float(normal.mean()) - 1.0) < 0.1 and abs(float(normal.std()) - 2.0) < 0.1
    uniform = tf.random_uniform_initializer(-3.0, -1.0, seed=1)([5000])
    assert float(uniform.min()) >= -3.0 and float(uniform.max()) < -1.0
    same = [tf.random_normal_initializer(seed=9)([4]) for _ in range(2)]
    np.testing.assert_array_equal(same[0].numpy(), same[1].numpy())
    variable = tf.Variable(tf.random_normal_initializer(stddev=0.5)(shape=[3, 2]))
    assert tuple(variable.shape) == (3, 2)
