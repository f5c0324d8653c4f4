"""Prints TF 2.21's results for the tf.io / tf.data / tf.train cases frozen into tests/io/test_tensor_proto.py,
tests/io/test_codecs.py, tests/io/test_sequence_parsing.py, tests/data/test_regroup.py and tests/test_train.py
(run with TF's venv, outside the suite; the numbers are copied into the tests by hand):
    /path/to/tf-venv/bin/python tools/tf_reference/iodata_reference.py
Each line is `case -> result`: bytes as hex, tensors as dtype + values, failures as the exception class."""
from __future__ import annotations

import gzip
import zlib

import numpy as np
import tensorflow as tf


def show(value):
    if isinstance(value, (tf.Tensor, np.ndarray)):
        array = value.numpy() if isinstance(value, tf.Tensor) else value
        if array.dtype == object:
            return f"string{list(array.shape)} {[v.hex() if isinstance(v, bytes) else v for v in array.reshape(-1)]}"
        return f"{array.dtype}{list(array.shape)} {array.tolist()}"
    if isinstance(value, tf.SparseTensor):
        return f"Sparse(indices={value.indices.numpy().tolist()}, values={show(value.values)}, " \
               f"shape={value.dense_shape.numpy().tolist()})"
    if isinstance(value, tf.RaggedTensor):
        return f"Ragged({value.to_list()}, splits_dtype={value.row_splits.dtype.name})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, bytes):
        return value.hex()
    return repr(value)


def case(text, fn):
    try:
        result = show(fn())
    except Exception as error:  # noqa: BLE001
        result = f"{type(error).__name__}: {str(error)[:200]}"
    print(f"{text} -> {result}")


# ---------------------------------------------------------------- serialize_tensor
case("serialize int32 [1,2]", lambda: tf.io.serialize_tensor(tf.constant([1, 2], tf.int32)).numpy())
case("serialize float scalar 1.5", lambda: tf.io.serialize_tensor(tf.constant(1.5)).numpy())
case("serialize int64 [[1],[2]]", lambda: tf.io.serialize_tensor(tf.constant([[1], [2]], tf.int64)).numpy())
case("serialize empty float [0,3]", lambda: tf.io.serialize_tensor(tf.zeros([0, 3])).numpy())
case("serialize strings", lambda: tf.io.serialize_tensor(tf.constant([b"ab", b"", b"xyz"])).numpy())
case("serialize string scalar", lambda: tf.io.serialize_tensor(tf.constant(b"hi")).numpy())
case("serialize bool", lambda: tf.io.serialize_tensor(tf.constant([True, False])).numpy())
case("serialize half", lambda: tf.io.serialize_tensor(tf.constant([1.0, -2.0], tf.float16)).numpy())
case("serialize bfloat16", lambda: tf.io.serialize_tensor(tf.constant([1.0, -2.0], tf.bfloat16)).numpy())
case("serialize uint8", lambda: tf.io.serialize_tensor(tf.constant([1, 255], tf.uint8)).numpy())
case("serialize complex64", lambda: tf.io.serialize_tensor(tf.constant([1 + 2j], tf.complex64)).numpy())
case("parse mismatch", lambda: tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([1.0])), tf.int32))
case("serialize_sparse", lambda: tf.io.serialize_sparse(tf.SparseTensor([[0, 1]], [5], [2, 3])).numpy())
case("serialize_many_sparse", lambda: tf.io.serialize_many_sparse(
    tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [5, 6, 7], [2, 3])).numpy())
case("deserialize_many_sparse", lambda: tf.io.deserialize_many_sparse(tf.io.serialize_many_sparse(
    tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [5, 6, 7], [2, 3])), tf.int32))

# ---------------------------------------------------------------- codecs
case("decode_raw int16", lambda: tf.io.decode_raw(tf.constant([b"\x01\x00\x02\x00", b"\xff\xff\x00\x01"]), tf.int16))
case("decode_raw big endian", lambda: tf.io.decode_raw(b"\x01\x00\x02\x00", tf.int16, little_endian=False))
case("decode_raw fixed_length", lambda: tf.io.decode_raw([b"\x01\x02\x03", b"\x04"], tf.uint8, fixed_length=2))
case("decode_raw ragged", lambda: tf.io.decode_raw([b"\x01\x02", b"\x04"], tf.uint8))
case("decode_raw odd", lambda: tf.io.decode_raw(b"\x01\x02\x03", tf.int16))
case("decode_raw float", lambda: tf.io.decode_raw(np.array([1.5, -2.0], np.float32).tobytes(), tf.float32))
case("encode_base64", lambda: tf.io.encode_base64([b"hello?>", b"a"]))
case("encode_base64 pad", lambda: tf.io.encode_base64([b"hello?>", b"a"], pad=True))
case("decode_base64", lambda: tf.io.decode_base64([b"aGVsbG8_Pg", b"YQ=="]))
case("decode_base64 bad", lambda: tf.io.decode_base64(b"a$b"))
case("decode_compressed zlib", lambda: tf.io.decode_compressed([zlib.compress(b"abc")], "ZLIB"))
case("decode_compressed gzip", lambda: tf.io.decode_compressed(gzip.compress(b"xyz"), "GZIP"))
case("decode_csv", lambda: tf.io.decode_csv([b'1,"a,b",2.5', b',"",'], [[0], [""], [1.0]]))
case("decode_csv int64", lambda: tf.io.decode_csv(["7"], [tf.constant([0], tf.int64)]))
case("decode_csv required", lambda: tf.io.decode_csv([b",x"], [tf.constant([], tf.int32), [""]]))
case("decode_csv count", lambda: tf.io.decode_csv([b"1,2,3"], [[0], [0]]))
case("decode_csv bad int", lambda: tf.io.decode_csv([b"x"], [[0]]))
case("decode_csv select", lambda: tf.io.decode_csv([b"1,2,3"], [[0], [0]], select_cols=[0, 2]))
case("decode_csv na", lambda: tf.io.decode_csv([b"NA,1"], [[5], [0]], na_value="NA"))
case("decode_csv delim", lambda: tf.io.decode_csv([b"1|2"], [[0], [0]], field_delim="|"))
case("decode_csv noquote", lambda: tf.io.decode_csv([b'"a",b'], [[""], [""]], use_quote_delim=False))
case("decode_json_example", lambda: tf.io.decode_json_example(
    '{"features": {"feature": {"x": {"int64List": {"value": ["1", "2"]}}}}}'))
case("decode_json_example bytes", lambda: tf.io.decode_json_example(
    '{"features": {"feature": {"s": {"bytesList": {"value": ["YWJj"]}}}}}'))

# ---------------------------------------------------------------- parsing
def example(**features):
    def feature(value):
        if isinstance(value[0], bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
        if isinstance(value[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=value))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=value))
    return tf.train.Example(features=tf.train.Features(
        feature={k: feature(v) for k, v in features.items()})).SerializeToString()


e1 = example(v=[1, 2, 3], i=[2, 0], s=[b"a", b"b"], lens=[2, 1])
e2 = example(v=[4], i=[1], s=[b"c"], lens=[1])
case("ragged single", lambda: tf.io.parse_single_example(e1, {"v": tf.io.RaggedFeature(tf.int64)}))
case("ragged batch", lambda: tf.io.parse_example([e1, e2], {"v": tf.io.RaggedFeature(tf.int64)}))
case("ragged rowlengths", lambda: tf.io.parse_single_example(e1, {"v": tf.io.RaggedFeature(
    tf.int64, partitions=[tf.io.RaggedFeature.RowLengths("lens")])}))
case("ragged rowlengths batch", lambda: tf.io.parse_example([e1, e2], {"v": tf.io.RaggedFeature(
    tf.int64, partitions=[tf.io.RaggedFeature.RowLengths("lens")])}))
case("ragged uniform", lambda: tf.io.parse_single_example(example(v=[1, 2, 3, 4]), {"v": tf.io.RaggedFeature(
    tf.int64, partitions=[tf.io.RaggedFeature.UniformRowLength(2)])}))
case("sparse feature single", lambda: tf.io.parse_single_example(e1, {"sp": tf.io.SparseFeature("i", "s", tf.string, 3)}))
case("sparse feature batch", lambda: tf.io.parse_example([e1, e2], {"sp": tf.io.SparseFeature("i", "s", tf.string, 3)}))
case("fixed sequence single", lambda: tf.io.parse_single_example(e1, {"v": tf.io.FixedLenSequenceFeature(
    [], tf.int64, allow_missing=True)}))
case("fixed sequence batch", lambda: tf.io.parse_example([e1, e2], {"v": tf.io.FixedLenSequenceFeature(
    [], tf.int64, allow_missing=True, default_value=-1)}))
case("fixed sequence not allow", lambda: tf.io.parse_example([e1], {"v": tf.io.FixedLenSequenceFeature(
    [], tf.int64)}))

seq = tf.train.SequenceExample(
    context=tf.train.Features(feature={"id": tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))}),
    feature_lists=tf.train.FeatureLists(feature_list={"tok": tf.train.FeatureList(feature=[
        tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2])),
        tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))])}))
seq2 = tf.train.SequenceExample(
    feature_lists=tf.train.FeatureLists(feature_list={"tok": tf.train.FeatureList(feature=[
        tf.train.Feature(int64_list=tf.train.Int64List(value=[9]))])}))
case("sequence example bytes", lambda: seq.SerializeToString())
case("sequence single varlen", lambda: tf.io.parse_single_sequence_example(
    seq.SerializeToString(), {"id": tf.io.FixedLenFeature([], tf.int64)}, {"tok": tf.io.VarLenFeature(tf.int64)}))
case("sequence single ragged", lambda: tf.io.parse_single_sequence_example(
    seq.SerializeToString(), None, {"tok": tf.io.RaggedFeature(tf.int64)}))
case("sequence batch", lambda: tf.io.parse_sequence_example(
    [seq.SerializeToString(), seq2.SerializeToString()], {"id": tf.io.FixedLenFeature([], tf.int64, default_value=0)},
    {"tok": tf.io.VarLenFeature(tf.int64)}))
case("sequence batch fixed", lambda: tf.io.parse_sequence_example(
    [seq2.SerializeToString(), seq2.SerializeToString()], None,
    {"tok": tf.io.FixedLenSequenceFeature([], tf.int64)}))
case("sequence batch ragged", lambda: tf.io.parse_sequence_example(
    [seq.SerializeToString(), seq2.SerializeToString()], None, {"tok": tf.io.RaggedFeature(tf.int64)}))
case("sequence fixed missing", lambda: tf.io.parse_single_sequence_example(
    seq.SerializeToString(), None, {"nope": tf.io.FixedLenSequenceFeature([], tf.int64)}))

# ---------------------------------------------------------------- data
case("rebatch", lambda: list(tf.data.Dataset.range(7).batch(4).rebatch([2, 1, 1]).as_numpy_iterator()))
case("rebatch drop", lambda: list(tf.data.Dataset.range(7).batch(4).rebatch(3, drop_remainder=True).as_numpy_iterator()))
case("rebatch cardinality", lambda: int(tf.data.Dataset.range(7).batch(4).rebatch(3).cardinality()))
case("sparse_batch", lambda: [s for s in tf.data.Dataset.from_generator(
    lambda: iter([[1, 2, 3], [4], [0, 6]]), output_signature=tf.TensorSpec([None], tf.int32)).sparse_batch(2, [5])])
case("sparse_batch -1", lambda: [s for s in tf.data.Dataset.from_generator(
    lambda: iter([[1, 2, 3], [4]]), output_signature=tf.TensorSpec([None], tf.int32)).sparse_batch(2, [-1])])
case("sparse_batch too big", lambda: [s for s in tf.data.Dataset.from_generator(
    lambda: iter([[1, 2, 3]]), output_signature=tf.TensorSpec([None], tf.int32)).sparse_batch(2, [2])])
case("random range", lambda: (lambda v: (min(v), max(v) < 2**32, max(v) > 2**31))(
    [int(x) for x in tf.data.Dataset.random(seed=1).take(2000)]))
case("counter", lambda: [int(x) for x in tf.data.Dataset.counter(2, 5).take(3)])
case("counter dtype", lambda: tf.data.Dataset.counter(dtype=tf.int32).element_spec)
case("group_by_reducer", lambda: list(tf.data.Dataset.range(10).apply(tf.data.experimental.group_by_reducer(
    lambda x: x % 3, tf.data.experimental.Reducer(lambda k: tf.constant(0, tf.int64), lambda s, x: s + x,
                                                  lambda s: s))).as_numpy_iterator()))
case("pad_to_cardinality", lambda: list(tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).apply(
    tf.data.experimental.pad_to_cardinality(4)).as_numpy_iterator()))
case("AutotuneAlgorithm", lambda: [(m.name, m.value) for m in tf.data.experimental.AutotuneAlgorithm])
case("ServiceOptions pinned", lambda: tf.data.experimental.ServiceOptions().pinned)
case("Options has service", lambda: hasattr(tf.data.Options(), "experimental_service"))


def fixed_length(tmp="/tmp/iodata_fixed.bin"):
    with open(tmp, "wb") as handle:
        handle.write(b"HH" + bytes(range(10)) + b"F")
    return [r.numpy() for r in tf.data.FixedLengthRecordDataset(tmp, 5, header_bytes=2, footer_bytes=1)]


def fixed_length_bad(tmp="/tmp/iodata_fixed_bad.bin"):
    with open(tmp, "wb") as handle:
        handle.write(bytes(range(7)))
    return [r.numpy() for r in tf.data.FixedLengthRecordDataset(tmp, 5)]


case("fixed length", fixed_length)
case("fixed length bad", fixed_length_bad)

# ---------------------------------------------------------------- train
def ema_case(zero_debias):
    v = tf.Variable(1.0)
    ema = tf.train.ExponentialMovingAverage(0.9, zero_debias=zero_debias)
    ema.apply([v])
    out = [float(ema.average(v))]
    for value in (2.0, 4.0):
        v.assign(value)
        ema.apply([v])
        out.append(float(ema.average(v)))
    return out, ema.average_name(v), ema.average(v).name


def ema_num_updates():
    v, step = tf.Variable(0.0), tf.Variable(0)
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
    ema.apply([v])
    out = []
    for value in (10.0, 20.0):
        v.assign(value)
        step.assign_add(1)
        ema.apply([v])
        out.append(float(ema.average(v)))
    return out


case("ema", lambda: ema_case(False))
case("ema num_updates", ema_num_updates)
case("ema variables_to_restore", lambda: (lambda v, e: (e.apply([v]), sorted(e.variables_to_restore()))[1])(
    tf.Variable(1.0, name="w"), tf.train.ExponentialMovingAverage(0.5)))
