"""tf.train.SequenceExample (TF's exact bytes) and tf.io.parse_single_sequence_example / parse_sequence_example
against TF 2.21's results (frozen from tools/tf_reference/iodata_reference.py)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf


def _int_feature(*values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))


SEQ = tf.train.SequenceExample(
    context=tf.train.Features(feature={"id": _int_feature(7)}),
    feature_lists=tf.train.FeatureLists(feature_list={"tok": tf.train.FeatureList(
        feature=[_int_feature(1, 2), _int_feature(3)])}))
SEQ2 = tf.train.SequenceExample(feature_lists=tf.train.FeatureLists(feature_list={
    "tok": tf.train.FeatureList(feature=[_int_feature(9)])}))
SEQ_HEX = "0a0d0a0b0a02696412051a030a010712180a160a03746f6b120f0a061a040a0201020a051a030a0103"  # TF 2.21


def test_sequence_example_bytes_are_tfs():
    assert SEQ.SerializeToString().hex() == SEQ_HEX
    back = tf.train.SequenceExample.FromString(bytes.fromhex(SEQ_HEX))
    assert back == SEQ
    assert list(back.feature_lists.feature_list["tok"].feature[0].int64_list.value) == [1, 2]
    built = tf.train.SequenceExample()
    built.context.feature["id"].int64_list.value.append(7)
    steps = built.feature_lists.feature_list["tok"].feature
    steps.add().int64_list.value.extend([1, 2])
    steps.add(int64_list=tf.train.Int64List(value=[3]))
    assert built.SerializeToString().hex() == SEQ_HEX
    merged = tf.train.SequenceExample()
    merged.MergeFrom(SEQ2)
    merged.MergeFromString(SEQ2.SerializeToString())  # maps: the later entry replaces the earlier one
    assert len(merged.feature_lists.feature_list["tok"].feature) == 1 and merged.IsInitialized()


def test_parse_single_sequence_example_as_tf():
    context, lists = tf.io.parse_single_sequence_example(
        SEQ.SerializeToString(), {"id": tf.io.FixedLenFeature([], tf.int64)}, {"tok": tf.io.VarLenFeature(tf.int64)})
    assert context["id"].tolist() == 7
    assert lists["tok"].indices.tolist() == [[0, 0], [0, 1], [1, 0]] and lists["tok"].values.tolist() == [1, 2, 3]
    assert lists["tok"].dense_shape.tolist() == [2, 2]
    _, ragged = tf.io.parse_single_sequence_example(SEQ.SerializeToString(), None,
                                                    {"tok": tf.io.RaggedFeature(tf.int64)})
    assert ragged["tok"].to_list() == [[1, 2], [3]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="'nope' is required"):
        tf.io.parse_single_sequence_example(SEQ.SerializeToString(), None,
                                            {"nope": tf.io.FixedLenSequenceFeature([], tf.int64)})


def test_parse_sequence_example_as_tf():
    records = [SEQ.SerializeToString(), SEQ2.SerializeToString()]
    context, lists, lengths = tf.io.parse_sequence_example(
        records, {"id": tf.io.FixedLenFeature([], tf.int64, default_value=0)}, {"tok": tf.io.VarLenFeature(tf.int64)})
    assert context["id"].tolist() == [7, 0]
    assert lists["tok"].indices.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]]
    assert lists["tok"].values.tolist() == [1, 2, 3, 9] and lists["tok"].dense_shape.tolist() == [2, 2, 2]
    assert lengths == {}
    _, dense, lengths = tf.io.parse_sequence_example([SEQ2.SerializeToString()] * 2, None,
                                                     {"tok": tf.io.FixedLenSequenceFeature([], tf.int64)})
    assert dense["tok"].tolist() == [[9], [9]] and lengths["tok"].tolist() == [1, 1]
    assert lengths["tok"].dtype == torch.int64
    _, ragged, _ = tf.io.parse_sequence_example(records, None, {"tok": tf.io.RaggedFeature(tf.int64)})
    assert ragged["tok"].to_list() == [[[1, 2], [3]], [[9]]]


def test_protobuf_message_methods_scripts_use():
    with pytest.raises(ValueError, match='no oneof "kind"'):
        tf.train.Int64List().WhichOneof("kind")
    assert tf.train.Feature(int64_list=tf.train.Int64List(value=[1])).WhichOneof("kind") == "int64_list"
    with pytest.raises(ValueError, match='no singular "value"'):
        tf.train.Int64List(value=[1]).HasField("value")
    assert SEQ.HasField("context") and not tf.train.SequenceExample().HasField("feature_lists")
    assert SEQ.UnknownFields() == () and SEQ.SerializePartialToString() == SEQ.SerializeToString()
    with pytest.raises(KeyError, match="no extensions"):
        SEQ.HasExtension(None)
