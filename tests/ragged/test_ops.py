"""tf.ragged functions and the tf ops that take RaggedTensors (reductions, concat, strings.split).
Expected values frozen from TF 2.21.0 (tools/tf_reference/ragged_reference.py)."""
from __future__ import annotations

import math

import pytest
import torch

import torchstrategy as tf

c = tf.ragged.constant


def test_reductions_along_the_ragged_axis():
    rt = c([[1, 2], [3], []])
    assert tf.reduce_sum(rt, axis=1).tolist() == [3, 3, 0]  # TF 2.21
    assert tf.reduce_sum(rt, axis=-1).tolist() == [3, 3, 0]
    assert tf.reduce_sum(rt, axis=0).tolist() == [4, 2]
    assert int(tf.reduce_sum(rt)) == 6
    assert tf.reduce_sum(rt, axis=1, keepdims=True).tolist() == [[3], [3], [0]]
    assert tf.reduce_max(rt, axis=1).tolist() == [2, 3, -2147483648]
    assert tf.reduce_min(rt, axis=1).tolist() == [1, 3, 2147483647]
    mean = tf.reduce_mean(rt, axis=1)
    assert mean.dtype == torch.float64 and mean.tolist()[:2] == [1.5, 3.0] and math.isnan(mean.tolist()[2])
    floats = c([[1.0, 2], [3], []])
    assert tf.reduce_mean(floats, axis=0).tolist() == [2.0, 2.0]
    assert tf.reduce_max(floats, axis=1).tolist() == [2.0, 3.0, -3.4028234663852886e+38]
    assert tf.math.reduce_prod(floats, axis=1).tolist() == [2.0, 3.0, 1.0]
    assert tf.reduce_any(c([[True, False], [False], []]), axis=1).tolist() == [True, False, False]
    assert tf.reduce_all(c([[True, False], [True], []]), axis=1).tolist() == [False, True, True]


def test_reductions_of_deeper_ragged_tensors():
    rt = c([[[1, 2], [3]], [[4]]])
    assert tf.reduce_sum(rt, axis=2).to_list() == [[3, 3], [4]]  # TF 2.21
    assert tf.reduce_sum(rt, axis=1).to_list() == [[4, 2], [4]]
    dense_inner = c([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert tf.reduce_sum(dense_inner, axis=1).tolist() == [[1, 2], [8, 10]]


def test_concat():
    assert tf.concat([c([[1, 2], [3]]), c([[4]])], axis=0).to_list() == [[1, 2], [3], [4]]  # TF 2.21
    assert tf.concat([c([[1, 2], [3]]), c([[4], [5, 6]])], axis=1).to_list() == [[1, 2, 4], [3, 5, 6]]
    assert tf.concat([c([[1, 2], [3]]), [[4, 5]]], axis=0).to_list() == [[1, 2], [3], [4, 5]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="row counts"):
        tf.concat([c([[1, 2], [3]]), c([[4]])], axis=1)


def test_range():
    assert tf.ragged.range([3, 0, 2]).to_list() == [[0, 1, 2], [], [0, 1]]  # TF 2.21
    assert tf.ragged.range([0, 1], [3, 5], 2).to_list() == [[0, 2], [1, 3]]
    assert tf.ragged.range([1.0, 2.0], [2.0, 4.0], 0.5).to_list() == [[1.0, 1.5], [2.0, 2.5, 3.0, 3.5]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="delta != 0"):
        tf.ragged.range([1], [3], [0])


def test_boolean_mask():
    assert tf.ragged.boolean_mask([[1, 2], [3, 4]], [[True, False], [False, True]]).to_list() == [[1], [4]]
    assert tf.ragged.boolean_mask(c([[1, 2], [3]]), c([[True, False], [True]])).to_list() == [[1], [3]]
    assert tf.ragged.boolean_mask(c([[1, 2], [3]]), [True, False]).to_list() == [[1, 2]]
    assert tf.ragged.boolean_mask([1, 2, 3], [True, False, True]).tolist() == [1, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="identical ragged splits"):
        tf.ragged.boolean_mask(c([[1, 2], [3]]), c([[True], [True]]))


def test_map_flat_values_and_stack():
    assert tf.ragged.map_flat_values(torch.square, c([[1, 2], [3]])).to_list() == [[1, 4], [9]]  # TF 2.21
    assert tf.ragged.map_flat_values(torch.add, c([[1, 2], [3]]), 5).to_list() == [[6, 7], [8]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="row_splits"):
        tf.ragged.map_flat_values(torch.add, c([[1, 2], [3]]), c([[1], [2, 3]]))
    assert tf.ragged.stack([c([[1, 2], [3]]), c([[4]])]).to_list() == [[[1, 2], [3]], [[4]]]


def test_segment_id_conversions():
    assert tf.ragged.row_splits_to_segment_ids([0, 2, 3]).tolist() == [0, 0, 1]  # TF 2.21
    assert tf.ragged.segment_ids_to_row_splits([0, 0, 2]).tolist() == [0, 2, 2, 3]


def test_strings_split_gives_a_ragged_tensor():
    pieces = tf.strings.split(["a b", "c"])
    assert isinstance(pieces, tf.RaggedTensor) and pieces.to_list() == [[b"a", b"b"], [b"c"]]  # TF 2.21
    assert pieces.row_lengths().tolist() == [2, 1]


def test_int32_row_splits_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="row_splits_dtype"):
        c([[1], [2, 3]], row_splits_dtype=tf.int32)
    assert c([[1], [2, 3]], row_splits_dtype=tf.int64).row_splits.dtype == torch.int64


def test_elementwise_tf_math_ops_take_ragged_tensors():
    rt = c([[1.0, 4.0], [9.0]])
    # TF 2.21: tf.math.sqrt / tf.add / tf.math.equal dispatch to the flat values, keeping the rows
    assert tf.math.sqrt(rt).to_list() == [[1.0, 2.0], [3.0]]
    assert tf.add(rt, 1).to_list() == [[2.0, 5.0], [10.0]]
    assert tf.math.multiply(rt, rt).to_list() == [[1.0, 16.0], [81.0]]
    assert tf.math.equal(rt, 4.0).to_list() == [[False, True], [False]]
    assert tf.add(1, 2).tolist() == 3  # plain tensors are untouched
