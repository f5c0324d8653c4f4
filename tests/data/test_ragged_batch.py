"""Dataset.ragged_batch and tf.data.experimental.dense_to_ragged_batch give RaggedTensor batches.
Expected values frozen from TF 2.21.0 (tools/tf_reference/ragged_reference.py)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf


def _lengths():
    return tf.data.Dataset.range(1, 5).map(lambda n: torch.arange(int(n)))


def test_ragged_batch_rows_follow_the_elements():
    batches = list(_lengths().ragged_batch(3))
    assert all(isinstance(b, tf.RaggedTensor) for b in batches)
    assert [b.to_list() for b in batches] == [[[0], [0, 1], [0, 1, 2]], [[0, 1, 2, 3]]]  # TF 2.21
    assert [b.to_list() for b in _lengths().ragged_batch(3, drop_remainder=True)] == [[[0], [0, 1], [0, 1, 2]]]


def test_dense_to_ragged_batch():
    batches = list(_lengths().apply(tf.data.experimental.dense_to_ragged_batch(2)))
    assert [b.to_list() for b in batches] == [[[0], [0, 1]], [[0, 1, 2], [0, 1, 2, 3]]]  # TF 2.21


def test_scalars_and_known_shapes_stay_dense():
    assert [b.tolist() for b in tf.data.Dataset.range(4).ragged_batch(2)] == [[0, 1], [2, 3]]
    dense = list(tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).ragged_batch(2))
    assert isinstance(dense[0], torch.Tensor) and dense[0].tolist() == [[1, 2], [3, 4]]
    pairs = list(tf.data.Dataset.range(1, 4).map(lambda n: (torch.arange(int(n)), n)).ragged_batch(2))
    assert pairs[0][0].to_list() == [[0], [0, 1]] and pairs[0][1].tolist() == [1, 2]


def test_batching_ragged_elements_adds_a_ragged_dimension():
    batches = list(_lengths().ragged_batch(2).batch(2))
    assert batches[0].to_list() == [[[0], [0, 1]], [[0, 1, 2], [0, 1, 2, 3]]]
    spec = _lengths().ragged_batch(2).element_spec
    assert isinstance(spec, tf.RaggedTensorSpec) and spec.ragged_rank == 1


def test_bad_batch_size():
    with pytest.raises(ValueError, match="positive"):
        _lengths().ragged_batch(0)


def test_from_tensor_slices_of_a_ragged_tensor():
    rt = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    ds = tf.data.Dataset.from_tensor_slices(rt)
    # TF 2.21: rows as dense tensors; batch(3) gives [[[1, 2], [3], []], [[4, 5, 6]]]; spec shape [None], int32
    assert [row.tolist() for row in ds] == [[1, 2], [3], [], [4, 5, 6]]
    assert [b.to_list() for b in ds.batch(3)] == [[[1, 2], [3], []], [[4, 5, 6]]]
    assert tuple(ds.element_spec.shape) == (None,) and ds.element_spec.dtype == torch.int32
    assert [b.to_list() for b in tf.data.Dataset.from_tensors(rt)] == [[[1, 2], [3], [], [4, 5, 6]]]
