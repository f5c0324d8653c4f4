"""tf.TensorArray: write/read/stack/unstack/gather/scatter/concat/split as TF 2.21's eager TensorArray."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_write_stack_and_unwritten_entries_as_zeros():
    ta = tf.TensorArray(tf.float32, size=2)
    ta = ta.write(0, [1.0, 2.0])
    assert ta.stack().tolist() == [[1.0, 2.0], [0.0, 0.0]]  # TF 2.21
    assert int(ta.size()) == 2 and ta.element_shape == torch.Size([2])
    with pytest.raises(tf.errors.OutOfRangeError, match="not resizeable"):
        ta.write(3, [1.0, 2.0])
    with pytest.raises(ValueError, match="element shape"):
        ta.write(1, [1.0, 2.0, 3.0])


def test_dynamic_size_loop_collects_one_tensor_per_step():
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    for step in range(4):
        ta = ta.write(step, tf.constant([step, step * step]))
    np.testing.assert_array_equal(ta.stack().numpy(), [[0, 0], [1, 1], [2, 4], [3, 9]])
    assert ta.gather([3, 1]).tolist() == [[3, 9], [1, 1]]
    assert ta.concat().tolist() == [0, 0, 1, 1, 2, 4, 3, 9]
    assert ta.read(2).tolist() == [2, 4]


def test_unstack_scatter_split():
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    ta = tf.TensorArray(tf.float32, size=3).unstack(values)
    np.testing.assert_array_equal(ta.stack().numpy(), values)
    ta = tf.TensorArray(tf.float32, size=3).scatter([2, 0], tf.constant([[1.0, 1.0], [2.0, 2.0]]))
    assert ta.stack().tolist() == [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    parts = tf.TensorArray(tf.float32, size=2).split(tf.constant([1.0, 2.0, 3.0]), [1, 2])
    assert parts.read(1).tolist() == [2.0, 3.0]
    with pytest.raises(TypeError, match="holds torch.float32"):
        tf.TensorArray(tf.float32, size=1).write(0, tf.constant([1]))
