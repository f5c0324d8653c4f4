"""tf.experimental.RowPartition and DynamicRaggedShape (and tf.shape of a RaggedTensor): values, reprs and
errors frozen from TF 2.21.0."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.errors import InvalidArgumentError

RowPartition = tf.experimental.RowPartition
DynamicRaggedShape = tf.experimental.DynamicRaggedShape


def test_row_partition_from_row_lengths_reads_like_tf():
    p = RowPartition.from_row_lengths([5, 3, 2])
    assert repr(p) == "tf.RowPartition(row_splits=[ 0  5  8 10])"
    assert p.row_splits().tolist() == [0, 5, 8, 10] and p.row_lengths().tolist() == [5, 3, 2]
    assert int(p.nrows()) == 3 and int(p.nvals()) == 10
    assert p.value_rowids().tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 2, 2]
    assert p.row_starts().tolist() == [0, 5, 8] and p.row_limits().tolist() == [5, 8, 10]
    assert p.offsets_in_rows().tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 0, 1]
    assert p.uniform_row_length() is None and not p.is_uniform()
    assert (p.static_nrows, p.static_nvals, p.static_uniform_row_length) == (3, None, None)
    assert p.dtype == torch.int64


def test_row_partition_other_factories():
    assert RowPartition.from_row_splits([0, 2, 2, 5]).row_lengths().tolist() == [2, 0, 3]
    assert RowPartition.from_value_rowids([0, 0, 2], nrows=4).row_lengths().tolist() == [2, 0, 1, 0]
    assert RowPartition.from_row_starts([0, 2], nvals=5).row_lengths().tolist() == [2, 3]
    assert RowPartition.from_row_limits([2, 5]).row_lengths().tolist() == [2, 3]
    u = RowPartition.from_uniform_row_length(3, nvals=6)
    assert repr(u) == "tf.RowPartition(nrows=2, uniform_row_length=3)"
    assert int(u.uniform_row_length()) == 3 and u.is_uniform() and u.row_splits().tolist() == [0, 3, 6]
    assert (u.static_nrows, u.static_uniform_row_length, u.static_nvals) == (2, 3, 6)


@pytest.mark.parametrize("build, message", [
    (lambda: RowPartition.from_row_lengths([1, -1]), "Arguments to from_row_lengths do not form a valid RowPartition"),
    (lambda: RowPartition.from_row_splits([1, 2]), "Arguments to from_row_splits do not form a valid RaggedTensor:zero"),
    (lambda: RowPartition.from_row_splits([0, 3, 2]),
     "Arguments to from_row_splits do not form a valid RaggedTensor:monotonic"),
])
def test_row_partition_rejects_what_tf_rejects(build, message):
    with pytest.raises(InvalidArgumentError, match=message):
        build()


def test_row_partition_constructor_is_private():
    with pytest.raises(ValueError, match="constructor is private"):
        RowPartition(torch.tensor([0, 1]))


def test_dynamic_ragged_shape_from_lengths():
    shape = DynamicRaggedShape.from_lengths([4, (2, 1, 0, 8), 12])
    assert repr(shape) == "<DynamicRaggedShape lengths=[4, (2, 1, 0, 8), 12] num_row_partitions=1>"
    assert (shape.rank, shape.num_row_partitions, shape.inner_rank) == (3, 1, 2)
    assert shape.inner_shape.tolist() == [11, 12]
    assert shape.static_lengths() == [4, (2, 1, 0, 8), 12]
    assert int(shape[0]) == 4 and int(shape[2]) == 12 and shape.dtype == torch.int64
    with pytest.raises(ValueError, match="^Index 1 is not uniform$"):
        shape[1]
    assert shape.row_partitions[0].row_lengths().tolist() == [2, 1, 0, 8]


def test_dynamic_ragged_shape_from_row_partitions_and_inner_shape():
    shape = DynamicRaggedShape(row_partitions=[RowPartition.from_row_lengths([5, 3, 2])], inner_shape=[10, 8])
    assert repr(shape) == "<DynamicRaggedShape lengths=[3, (5, 3, 2), 8] num_row_partitions=1>"
    with pytest.raises(ValueError, match="do not line up"):
        DynamicRaggedShape(row_partitions=[RowPartition.from_row_lengths([5, 3, 2])], inner_shape=[9, 8])


def test_tf_shape_of_a_ragged_tensor_is_a_dynamic_ragged_shape():
    assert repr(tf.shape(tf.ragged.constant([[1], [2, 3]]))) == \
        "<DynamicRaggedShape lengths=[2, (1, 2)] num_row_partitions=1>"
    assert repr(tf.shape(tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4], 2))) == \
        "<DynamicRaggedShape lengths=[2, 2] num_row_partitions=1>"
    assert repr(tf.shape(tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1))) == \
        "<DynamicRaggedShape lengths=[2, (1, 2), 2] num_row_partitions=1>"
    assert tf.shape([[1, 2, 3]]).tolist() == [1, 3]


def test_int32_partitions_and_shapes_read_in_int32():
    """TF 2.21: tf.shape(rt) defaults to int32 (its inner_shape, indexing and partitions too); dtype=tf.int32
    on the factories gives int32 reads; other dtypes are refused."""
    shape = tf.shape(tf.ragged.constant([[1], [2, 3]]))
    assert shape.dtype == torch.int32 and shape.inner_shape.dtype == torch.int32
    assert shape[0].dtype == torch.int32 and shape.row_partitions[0].dtype == torch.int32
    assert tf.shape(tf.ragged.constant([[1], [2, 3]]), out_type=tf.int64).dtype == torch.int64
    p = RowPartition.from_row_lengths([1, 2], dtype=tf.int32)
    assert p.row_splits().dtype == torch.int32 and p.row_splits().tolist() == [0, 1, 3]
    assert p.with_dtype(tf.int64).row_lengths().dtype == torch.int64
    assert DynamicRaggedShape.from_lengths([2, (1, 2)], dtype=tf.int32).dtype == torch.int32
    assert DynamicRaggedShape.from_lengths([2, (1, 2)]).dtype == torch.int64
    with pytest.raises(ValueError, match="tf.int32 or tf.int64"):
        RowPartition.from_row_lengths([1], dtype=tf.float32)
