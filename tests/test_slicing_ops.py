"""tf.strided_slice and the space/batch block ops against TF 2.21 numbers (tools/tf_reference/tensors_reference.py)
and NumPy slicing."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf

CUBE = np.arange(24).reshape(2, 3, 4)


def test_strided_slice_matches_tf_and_numpy():
    assert tf.strided_slice(CUBE, [1, 0, 0], [2, 2, 4], [1, 1, 2]).tolist() == [[[12, 14], [16, 18]]]
    neg = tf.strided_slice(CUBE, [0, -1, 3], [2, 0, 0], [1, -1, -2], end_mask=1)
    assert neg.tolist() == [[[11, 9], [7, 5]], [[23, 21], [19, 17]]]  # TF 2.21
    np.testing.assert_array_equal(neg.numpy(), CUBE[:, -1:0:-1, 3:0:-2])
    masked = tf.strided_slice(CUBE, [0, 1], [0, 0], [1, 1], ellipsis_mask=1, shrink_axis_mask=2)
    np.testing.assert_array_equal(masked.numpy(), CUBE[..., 1])
    grown = tf.strided_slice(CUBE, [1, 0, 0], [2, 0, 2], [1, 1, 1], new_axis_mask=2, shrink_axis_mask=1)
    assert grown.tolist() == [[[12, 13, 14, 15], [16, 17, 18, 19]]]  # TF 2.21
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-zero"):
        tf.strided_slice(CUBE, [0], [1], [0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        tf.strided_slice(CUBE, [5], [6], shrink_axis_mask=1)


def test_space_to_batch_and_back():
    image = tf.reshape(tf.range(2 * 4 * 3 * 1), [2, 4, 3, 1])
    packed = tf.space_to_batch_nd(image, [2, 2], [[0, 0], [1, 0]])
    assert packed.shape == (8, 2, 2, 1)
    assert packed[:, :, :, 0].tolist() == [[[0, 1], [0, 7]], [[0, 13], [0, 19]], [[0, 2], [6, 8]],
                                           [[12, 14], [18, 20]], [[0, 4], [0, 10]], [[0, 16], [0, 22]],
                                           [[3, 5], [9, 11]], [[15, 17], [21, 23]]]  # TF 2.21
    np.testing.assert_array_equal(tf.batch_to_space(packed, [2, 2], [[0, 0], [1, 0]]).numpy(), image.numpy())
    unpacked = tf.batch_to_space(tf.reshape(tf.range(8 * 2 * 2 * 1), [8, 2, 2, 1]), [2, 2], [[0, 1], [1, 0]])
    assert unpacked[:, :, :, 0].tolist() == [[[8, 1, 9], [24, 17, 25], [10, 3, 11]],
                                             [[12, 5, 13], [28, 21, 29], [14, 7, 15]]]  # TF 2.21
    with pytest.raises(tf.errors.InvalidArgumentError, match="not divisible"):
        tf.space_to_batch(image, [3, 3], [[0, 0], [0, 0]])


def test_required_paddings():
    paddings, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3], base_paddings=[[1, 0], [0, 2]])
    assert paddings.tolist() == [[1, 0], [0, 2]] and crops.tolist() == [[0, 0], [0, 0]]  # TF 2.21
    paddings, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3])
    assert paddings.tolist() == [[0, 1], [0, 2]] and crops.tolist() == [[0, 1], [0, 2]]
