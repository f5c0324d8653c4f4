"""tf.RaggedTensor: factories, checks of bad partitions, properties, to_tensor/to_list, indexing, operators.
Expected values frozen from TF 2.21.0 (tools/tf_reference/ragged_reference.py)."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import torchstrategy as tf

c = tf.ragged.constant


def test_constant_shapes_and_dtypes():
    assert c([[[1, 2], [3, 4]], [[5, 6]]]).shape.as_list() == [2, None, None]  # TF 2.21
    assert c([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).shape.as_list() == [2, None, 2]
    assert c([[1, 2], [3]]).dtype == torch.int32
    assert c([[1, 2], [3, 2**40]]).dtype == torch.int64
    assert c([[], []]).dtype == torch.float32
    assert c([[1.5, 2], [3]], dtype=tf.float64).dtype == torch.float64
    assert c([[[1, 2], [3]], [[5, 6]]]).ragged_rank == 2
    assert c([["a", "b"], ["c"]]).to_list() == [[b"a", b"b"], [b"c"]]


def test_constant_refuses_mixed_depth():
    with pytest.raises(ValueError, match="same nesting depth"):
        c([[1, 2], [3, [4]]])


def test_row_partition_views():
    rt = c([[1, 2], [3], []])
    assert rt.row_splits.tolist() == [0, 2, 3, 3] and rt.row_splits.dtype == torch.int64
    assert rt.value_rowids().tolist() == [0, 0, 1]
    assert rt.row_lengths().tolist() == [2, 1, 0]
    assert int(rt.nrows()) == 3
    assert rt.values.tolist() == [1, 2, 3]
    nested = c([[[1, 2], [3]], [[5, 6]]])
    assert nested.flat_values.tolist() == [1, 2, 3, 5, 6]
    assert nested.bounding_shape().tolist() == [2, 2, 2]
    assert [s.tolist() for s in nested.nested_row_splits] == [[0, 2, 3], [0, 2, 3, 5]]


def test_factories():
    R = tf.RaggedTensor
    assert R.from_row_lengths([1, 2, 3], [2, 1]).to_list() == [[1, 2], [3]]
    assert R.from_row_splits(np.array([1, 2, 3]), [0, 0, 3]).to_list() == [[], [1, 2, 3]]
    assert R.from_value_rowids([1, 2, 3], [0, 0, 2], nrows=5).to_list() == [[1, 2], [], [3], [], []]  # TF 2.21
    assert R.from_tensor([[1, 0], [2, 3], [0, 0]], padding=0).to_list() == [[1], [2, 3], []]
    assert R.from_tensor([[1, 0], [2, 3]], lengths=[1, 2]).to_list() == [[1], [2, 3]]
    assert R.from_nested_row_splits([1, 2, 3, 4], [[0, 1, 3], [0, 2, 3, 4]]).to_list() == [[[1, 2]], [[3], [4]]]
    assert R.from_nested_row_lengths([1, 2, 3, 4], [[1, 2], [2, 1, 1]]).to_list() == [[[1, 2]], [[3], [4]]]


@pytest.mark.parametrize("make, detail", [
    (lambda: tf.RaggedTensor.from_row_splits([1, 2, 3], [1, 3]), "start at 0"),
    (lambda: tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 3, 2]), "sorted"),
    (lambda: tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2]), "number of values"),
    (lambda: tf.RaggedTensor.from_row_lengths([1, 2, 3], [1, 1]), "add up"),
    (lambda: tf.RaggedTensor.from_row_lengths([1, 2, 3], [2, -1, 2]), ">= 0"),
    (lambda: tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 2, 1]), "sorted"),
])
def test_bad_partitions_raise_invalid_argument(make, detail):
    with pytest.raises(tf.errors.InvalidArgumentError, match=detail):
        make()


def test_constructor_is_private():
    with pytest.raises(ValueError, match="constructor is private"):
        tf.RaggedTensor([1], [0, 1])


def test_to_tensor():
    rt = c([[1, 2], [3]])
    assert rt.to_tensor(default_value=9, shape=[3, 3]).tolist() == [[1, 2, 9], [3, 9, 9], [9, 9, 9]]  # TF 2.21
    assert rt.to_tensor(shape=[2, 1]).tolist() == [[1], [3]]
    assert c([[[1, 2], [3]], [[5, 6]]]).to_tensor().tolist() == [[[1, 2], [3, 0]], [[5, 6], [0, 0]]]
    assert c([["a"], ["b", "c"]]).to_tensor().tolist() == [[b"a", b""], [b"b", b"c"]]


def test_indexing_and_iteration():
    rt = c([[1, 2], [3]])
    assert rt[1].tolist() == [3] and rt[-2].tolist() == [1, 2]
    assert rt[1:].to_list() == [[3]]
    assert rt[:, :1].to_list() == [[1], [3]]  # TF 2.21
    assert [row.tolist() for row in rt] == [[1, 2], [3]]
    with pytest.raises(ValueError, match="inner ragged dimension"):
        rt[:, 0]
    with pytest.raises(IndexError, match="out of bounds"):
        rt[5]
    with pytest.raises(TypeError, match="no len"):
        len(rt)
    assert [a.tolist() for a in rt.numpy()] == [[1, 2], [3]]


def test_operators_work_on_flat_values():
    rt = c([[1, 2], [3]])
    assert (rt + 1).to_list() == [[2, 3], [4]]  # TF 2.21
    assert (rt * rt).to_list() == [[1, 4], [9]]
    assert (10 - rt).to_list() == [[9, 8], [7]]
    assert (rt > 1).to_list() == [[False, True], [True]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="row partitions"):
        rt * c([[1], [2, 3]])


def test_ragged_tensor_spec():
    spec = tf.RaggedTensorSpec([2, None], tf.int32)
    assert spec.ragged_rank == 1 and spec.is_compatible_with(spec_or_value=c([[1, 2], [3]]))
    assert not spec.is_compatible_with(c([[1.0], [3.0]]))


def test_gathering_rows():
    rt = c([[1, 2], [3], [], [4, 5, 6]])
    assert rt.gather_rows([3, 0, 2]).to_list() == [[4, 5, 6], [1, 2], []]
    assert rt[[1, -1]].to_list() == [[3], [4, 5, 6]]
    assert c([[[1], [2, 3]], [[4]]]).gather_rows([1, 0]).to_list() == [[[4]], [[1], [2, 3]]]
    with pytest.raises(IndexError, match="out of bounds"):
        rt.gather_rows([4])


def test_from_sparse_keeps_each_row_and_refuses_a_sparse_tensor_that_is_not_right_ragged():
    # TF 2.21: RaggedTensor.from_sparse(SparseTensor([[0,0],[0,1],[2,0]], [1,2,3], [4,5])) -> [[1, 2], [], [3], []]
    import torchstrategy as tf

    st = tf.sparse.SparseTensor(indices=[[0, 0], [0, 1], [2, 0]], values=[1, 2, 3], dense_shape=[4, 5])
    ragged = tf.RaggedTensor.from_sparse(st)
    assert ragged.to_list() == [[1, 2], [], [3], []]
    assert ragged.row_splits.tolist() == [0, 2, 2, 3, 3]
    for indices in ([[0, 1]], [[1, 0], [0, 0]]):  # a gap in a row; rows out of order
        bad = tf.sparse.SparseTensor(indices=indices, values=[1] * len(indices), dense_shape=[2, 3])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not right-ragged"):
            tf.RaggedTensor.from_sparse(bad)
    with pytest.raises(ValueError, match="needs a 2-D SparseTensor"):
        tf.RaggedTensor.from_sparse(tf.sparse.SparseTensor(indices=[[0, 0, 0]], values=[1], dense_shape=[1, 1, 1]))


# ----- from_uniform_row_length (values and messages from TF 2.21) ----------------------------------------------

def test_from_uniform_row_length_keeps_the_static_row_length():
    rt = tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 2)
    assert rt.to_list() == [[1, 2], [3, 4], [5, 6]]
    assert rt.shape.as_list() == [3, 2]
    assert int(rt.uniform_row_length) == 2 and rt.uniform_row_length.dtype == torch.int64
    assert rt.row_splits.tolist() == [0, 2, 4, 6] and int(rt.nrows()) == 3
    assert (rt * 2).uniform_row_length is not None and (rt + 1).to_list() == [[2, 3], [4, 5], [6, 7]]
    assert rt[1].tolist() == [3, 4] and rt.to_tensor().tolist() == [[1, 2], [3, 4], [5, 6]]
    assert tf.RaggedTensor.from_row_lengths([1, 2, 3], [1, 2]).uniform_row_length is None


def test_from_uniform_row_length_over_ragged_and_matrix_values_and_empty_rows():
    nested = tf.RaggedTensor.from_uniform_row_length(tf.RaggedTensor.from_row_lengths([1, 2, 3, 4, 5, 6],
                                                                                      [1, 2, 0, 3]), 2)
    assert nested.to_list() == [[[1], [2, 3]], [[], [4, 5, 6]]]
    assert nested.shape.as_list() == [2, 2, None] and nested.ragged_rank == 2
    matrix = tf.RaggedTensor.from_uniform_row_length(np.arange(12).reshape(6, 2), 3)
    assert matrix.shape.as_list() == [2, 3, 2] and matrix.to_list()[1] == [[6, 7], [8, 9], [10, 11]]
    empty = tf.RaggedTensor.from_uniform_row_length(tf.zeros([0]), 0, nrows=3)
    assert empty.to_list() == [[], [], []] and empty.shape.as_list() == [3, 0]
    assert empty.row_splits.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("values, length, nrows, message", [
    ([1, 2, 3, 4, 5], 2, None, "uniform_row_length=2 times nrows=2 must equal nvals=5"),
    ([1, 2, 3, 4], 2, 3, "uniform_row_length=2 times nrows=3 must equal nvals=4"),
    ([1, 2, 3, 4], -1, None, "uniform_row_length must be >= 0."),
    ([1, 2, 3, 4], 0, None, "uniform_row_length=0 times nrows=0 must equal nvals=4"),
    ([1, 2, 3, 4], [2], None, "Shape (1,) must have rank 0"),
])
def test_from_uniform_row_length_rejects_what_tf_rejects(values, length, nrows, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        tf.RaggedTensor.from_uniform_row_length(values, length, nrows=nrows)
