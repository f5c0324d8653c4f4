"""tf.io.FixedLenSequenceFeature, SparseFeature and RaggedFeature (with partitions) in parse_single_example and
parse_example, against TF 2.21's results (frozen from tools/tf_reference/iodata_reference.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def _example(**features) -> bytes:
    def feature(value):
        if isinstance(value[0], bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
        if isinstance(value[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=value))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=value))
    return tf.train.Example(features=tf.train.Features(
        feature={k: feature(v) for k, v in features.items()})).SerializeToString()


E1 = _example(v=[1, 2, 3], i=[2, 0], s=[b"a", b"b"], lens=[2, 1])
E2 = _example(v=[4], i=[1], s=[b"c"], lens=[1])


def test_ragged_feature_as_tf():
    single = tf.io.parse_single_example(E1, {"v": tf.io.RaggedFeature(tf.int64)})["v"]
    assert isinstance(single, torch.Tensor) and single.tolist() == [1, 2, 3]  # no partitions: a plain tensor
    batch = tf.io.parse_example([E1, E2], {"v": tf.io.RaggedFeature(tf.int64)})["v"]
    assert isinstance(batch, tf.RaggedTensor) and batch.to_list() == [[1, 2, 3], [4]]
    lengths = tf.io.RaggedFeature(tf.int64, partitions=[tf.io.RaggedFeature.RowLengths("lens")])
    assert tf.io.parse_single_example(E1, {"v": lengths})["v"].to_list() == [[1, 2], [3]]
    assert tf.io.parse_example([E1, E2], {"v": lengths})["v"].to_list() == [[[1, 2], [3]], [[4]]]
    uniform = tf.io.RaggedFeature(tf.int64, partitions=[tf.io.RaggedFeature.UniformRowLength(2)])
    dense = tf.io.parse_single_example(_example(v=[1, 2, 3, 4]), {"v": uniform})["v"]
    assert isinstance(dense, torch.Tensor) and dense.tolist() == [[1, 2], [3, 4]]
    splits = tf.io.RaggedFeature(tf.int64, value_key="v", partitions=[tf.io.RaggedFeature.RowSplits("sp")])
    assert tf.io.parse_single_example(_example(v=[1, 2, 3], sp=[0, 1, 3]), {"r": splits})["r"].to_list() == [
        [1], [2, 3]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="lens"):
        tf.io.parse_single_example(_example(v=[1, 2, 3], lens=[5]), {"v": lengths})


def test_sparse_feature_as_tf():
    spec = {"sp": tf.io.SparseFeature("i", "s", tf.string, 3)}
    single = tf.io.parse_single_example(E1, spec)["sp"]
    assert single.indices.tolist() == [[0], [2]] and single.values.tolist() == [b"b", b"a"]  # sorted, as TF
    assert single.dense_shape.tolist() == [3]
    batch = tf.io.parse_example([E1, E2], spec)["sp"]
    assert batch.indices.tolist() == [[0, 0], [0, 2], [1, 1]] and batch.values.tolist() == [b"b", b"a", b"c"]
    assert batch.dense_shape.tolist() == [2, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside its size"):
        tf.io.parse_single_example(E1, {"sp": tf.io.SparseFeature("i", "s", tf.string, 2)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="has 3 values but value feature 's' has 2"):
        tf.io.parse_single_example(E1, {"sp": tf.io.SparseFeature("v", "s", tf.string, 9)})


def test_fixed_len_sequence_feature_as_tf():
    spec = tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True)
    assert tf.io.parse_single_example(E1, {"v": spec})["v"].tolist() == [1, 2, 3]
    padded = tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-1)
    assert tf.io.parse_example([E1, E2], {"v": padded})["v"].tolist() == [[1, 2, 3], [4, -1, -1]]
    pairs = tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True)
    assert tf.io.parse_single_example(_example(v=[1, 2, 3, 4]), {"v": pairs})["v"].tolist() == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="allow_missing=True"):  # TF: "requires allow_missing to be True"
        tf.io.parse_example([E1], {"v": tf.io.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a multiple"):
        tf.io.parse_single_example(E1, {"v": pairs})
