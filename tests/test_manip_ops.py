"""Shape-manipulating top-level ops against TF 2.21 numbers (tools/tf_reference/tensors_reference.py) and NumPy."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_repeat_roll_meshgrid():
    assert tf.repeat([[1, 2], [3, 4]], repeats=[1, 2], axis=0).tolist() == [[1, 2], [3, 4], [3, 4]]
    assert tf.repeat([[1, 2], [3, 4]], repeats=2).tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert tf.roll([[0, 1, 2], [3, 4, 5]], shift=[1, -1], axis=[0, 1]).tolist() == [[4, 5, 3], [1, 2, 0]]
    x, y = tf.meshgrid([1, 2, 3], [4, 5])
    assert x.tolist() == [[1, 2, 3], [1, 2, 3]] and y.tolist() == [[4, 4, 4], [5, 5, 5]]
    i, _ = tf.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    assert i.shape == (3, 2)


def test_tensordot_matches_numpy():
    a, b = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(tf.tensordot(a, b, axes=1).numpy(), np.tensordot(a, b, axes=1))
    c = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    assert float(tf.tensordot(a, c, axes=[[0, 1], [1, 0]])) == 50.0  # TF 2.21


def test_ensure_shape_and_broadcast_shapes():
    x = tf.constant([[1, 2, 3]])
    assert tf.ensure_shape(x, [None, 3]) is x
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[1, 3\] is not compatible with expected shape"):
        tf.ensure_shape(x, [None, 4])
    assert tf.broadcast_dynamic_shape([1, 3, 1], [4, 1, 5]).tolist() == [4, 3, 5]
    assert tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 3])).as_list() == [None, 4, 3]
    with pytest.raises(ValueError, match="Incompatible shapes"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))


def test_bitcast_slice_reverse_sequence_unravel():
    assert tf.bitcast(tf.constant([1.0, -2.5]), tf.int32).tolist() == [1065353216, -1071644672]
    assert tf.bitcast(tf.constant([1, 258]), tf.uint8).tolist() == [[1, 0, 0, 0], [2, 1, 0, 0]]
    assert tf.bitcast(tf.constant([[1, 0, 0, 0]], dtype=tf.uint8), tf.int32).tolist() == [1]
    cube = tf.reshape(tf.range(24), [2, 3, 4])
    assert tf.slice(cube, [1, 0, 1], [1, 2, -1]).tolist() == [[[13, 14, 15], [17, 18, 19]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside axis"):
        tf.slice(cube, [0, 0, 0], [3, 1, 1])
    rows = tf.reshape(tf.range(12), [3, 4])
    assert tf.reverse_sequence(rows, [2, 4, 0], seq_axis=1, batch_axis=0).tolist() == \
        [[1, 0, 2, 3], [7, 6, 5, 4], [8, 9, 10, 11]]
    assert tf.unravel_index([2, 5, 7], [3, 3]).tolist() == [[0, 1, 2], [2, 2, 1]]


def test_identity_n_shape_n_parallel_stack_guarantee_const():
    a, b = tf.identity_n([tf.constant(1), [2.0, 3.0]])
    assert int(a) == 1 and b.tolist() == [2.0, 3.0]
    shapes = tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])
    assert [s.tolist() for s in shapes] == [[2, 3], [4]] and shapes[0].dtype == torch.int32
    assert tf.parallel_stack([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert tf.guarantee_const([1.0]).tolist() == [1.0]


def test_approx_top_k_is_exact():
    values, indices = tf.approx_top_k(tf.constant([[1.0, 5.0, 3.0], [9.0, 2.0, 7.0]]), 2)
    assert values.tolist() == [[5.0, 3.0], [9.0, 7.0]] and indices.tolist() == [[1, 2], [0, 2]]  # TF 2.21
    assert indices.dtype == torch.int32
    smallest, _ = tf.approx_top_k(tf.constant([4.0, 1.0, 3.0]), 1, is_max_k=False)
    assert smallest.tolist() == [1.0]
