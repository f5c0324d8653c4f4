"""Index-driven top-level ops against TF 2.21 numbers (tools/tf_reference/tensors_reference.py) and NumPy."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_tensor_scatter_nd_family_matches_tf():
    out = tf.tensor_scatter_nd_add(tf.constant([[1, 2], [3, 4], [5, 6]]), [[0], [2], [0]],
                                   tf.constant([[10, 10], [20, 20], [1, 1]]))
    assert out.tolist() == [[12, 13], [3, 4], [25, 26]] and out.dtype == torch.int32
    assert tf.tensor_scatter_nd_sub(tf.constant([1.0, 2.0, 3.0]), [[1], [1]], [0.5, 0.25]).tolist() == [1.0, 1.25, 3.0]
    grid = tf.constant([[1, 9], [9, 1]])
    assert tf.tensor_scatter_nd_min(grid, [[0, 1], [1, 0]], [5, 5]).tolist() == [[1, 5], [5, 1]]
    assert tf.tensor_scatter_nd_max(grid, [[0, 1], [1, 0]], [5, 5]).tolist() == [[1, 9], [9, 1]]
    assert grid.tolist() == [[1, 9], [9, 1]]  # the input is not changed
    assert tf.scatter_nd([[4], [3], [1], [7], [1]], tf.constant([9, 10, 11, 12, 1]), [8]).tolist() == \
        [0, 12, 0, 10, 9, 0, 0, 12]


def test_scatter_errors_name_the_bad_index_and_shape():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"index \[3\] is out of bounds"):
        tf.tensor_scatter_nd_add(tf.constant([1, 2, 3]), [[3]], [1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="updates have shape"):
        tf.tensor_scatter_nd_add(tf.constant([1, 2, 3]), [[0], [1]], [1])


def test_dynamic_partition_and_stitch_round_trip():
    parts = tf.dynamic_partition(tf.constant([10, 20, 30, 40, 50]), [0, 0, 1, 1, 0], 2)
    assert [p.tolist() for p in parts] == [[10, 20, 50], [30, 40]]  # TF 2.21
    stitched = tf.dynamic_stitch([[6], [4, 1], [[5, 2], [0, 3]]],
                                 [[[61.0, 62.0]], [[41.0, 42.0], [11.0, 12.0]],
                                  [[[51.0, 52.0], [21.0, 22.0]], [[1.0, 2.0], [31.0, 32.0]]]])
    np.testing.assert_array_equal(stitched.numpy(), [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52],
                                                     [61, 62]])


def test_unique_searchsorted_histogram_sequence_mask():
    y, idx, count = tf.unique_with_counts(tf.constant([4, 5, 4, 4, 7, 5]))
    assert y.tolist() == [4, 5, 7] and idx.tolist() == [0, 1, 0, 0, 2, 1] and count.tolist() == [3, 2, 1]
    assert idx.dtype == torch.int32 and tf.unique([3, 3], out_idx=tf.int64).idx.dtype == torch.int64
    assert tf.searchsorted([[1.0, 3.0, 3.0, 5.0]], [[3.0, 0.0, 6.0]], side="right").tolist() == [[3, 0, 4]]
    values = tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0])
    assert tf.histogram_fixed_width_bins(values, [0.0, 5.0], nbins=5).tolist() == [0, 0, 1, 2, 4, 4]
    assert tf.histogram_fixed_width(values, [0.0, 5.0], nbins=5).tolist() == [2, 1, 1, 0, 2]
    mask = tf.sequence_mask([[1, 3], [2, 0]])
    assert mask.dtype == torch.bool and mask.tolist() == [[[True, False, False], [True, True, True]],
                                                          [[True, True, False], [False, False, False]]]
    assert tf.sequence_mask([2], maxlen=4, dtype=tf.float32).tolist() == [[1.0, 1.0, 0.0, 0.0]]
