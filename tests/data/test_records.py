"""tf.data.TFRecordDataset: records of TF-written files (frozen hex from TF 2.21.0) as scalar byte strings,
TF's interleave order for num_parallel_reads, parsing in map + batch, and a bad CRC naming file and record."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.io.tfrecord import DataLossError

# TF 2.21 files: a = [b"a0", b"a1", b"a2"], b = [b"b0"], c = [b"c0", b"c1"]
TF_FILES = {
    "a": "020000000000000078270b3461305190a7a8020000000000000078270b346131862ca6a2020000000000000078270b346132e7514e8a",
    "b": "020000000000000078270b3462308eb799f9",
    "c": "020000000000000078270b346330cbd67b0a020000000000000078270b346331fcf98104",
}
# TF 2.21 GZIP file with records b"hello", b"", and a serialized Example {"x": int64 [1, 2, -3, 300, 2**62]}
TF_GZIP = ("1f8b080000000000000363658080579b58ec32527372f277cbcb4842c518349967b0df78d5b44805ca77d26ef0e552e252e062"
           "ac10929692e4126764fafb1f0a18d73035408103ebc793f100e81a6a9759000000")


@pytest.fixture
def tf_files(tmp_path) -> list:
    paths = []
    for name, hex_bytes in TF_FILES.items():
        path = tmp_path / f"{name}.tfrecord"
        path.write_bytes(bytes.fromhex(hex_bytes))
        paths.append(str(path))
    return paths


def _texts(dataset) -> list:
    return [element.item().decode() for element in dataset]


def test_reads_files_in_order_as_scalar_strings(tf_files) -> None:
    dataset = tf.data.TFRecordDataset(tf_files)
    assert dataset.element_spec.shape == () and dataset.element_spec.dtype == np.dtype(object)
    assert _texts(dataset) == ["a0", "a1", "a2", "b0", "c0", "c1"]
    assert _texts(dataset) == _texts(dataset)  # a second pass rereads the files
    assert dataset.cardinality() == tf.data.UNKNOWN_CARDINALITY
    assert _texts(tf.data.TFRecordDataset(tf_files[1])) == ["b0"]


def test_num_parallel_reads_interleaves_as_tf(tf_files) -> None:
    # TF 2.21: TFRecordDataset([a, b, c], num_parallel_reads=2) yields a0 b0 a1 a2 c0 c1; =3: a0 b0 c0 a1 c1 a2
    assert _texts(tf.data.TFRecordDataset(tf_files, num_parallel_reads=2)) == ["a0", "b0", "a1", "a2", "c0", "c1"]
    assert _texts(tf.data.TFRecordDataset(tf_files, num_parallel_reads=3)) == ["a0", "b0", "c0", "a1", "c1", "a2"]
    with pytest.raises(ValueError, match="num_parallel_reads"):
        tf.data.TFRecordDataset(tf_files, num_parallel_reads=0)


def test_filenames_from_a_dataset(tf_files) -> None:
    names = tf.data.Dataset.from_tensor_slices(np.array(tf_files[::-1], dtype=object))
    assert _texts(tf.data.TFRecordDataset(names)) == ["c0", "c1", "b0", "a0", "a1", "a2"]


def test_gzip_file_parsed_in_map_and_batch(tmp_path) -> None:
    path = tmp_path / "g.tfrecord"
    path.write_bytes(bytes.fromhex(TF_GZIP))
    dataset = tf.data.TFRecordDataset(str(path), compression_type="GZIP")
    records = [element.item() for element in dataset]
    assert records[:2] == [b"hello", b""]
    parsed = tf.data.TFRecordDataset(str(path), compression_type="GZIP").skip(2).map(
        lambda record: tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([5], tf.int64)})["x"])
    assert [x.tolist() for x in parsed] == [[1, 2, -3, 300, 2**62]]


def test_written_examples_train_pipeline(tmp_path) -> None:
    path = str(tmp_path / "w.tfrecord")
    with tf.io.TFRecordWriter(path, "ZLIB") as writer:
        for i in range(5):
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i, i + 0.5])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))})).SerializeToString())
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    batches = list(tf.data.TFRecordDataset(path, "ZLIB").batch(2).map(lambda rows: tf.io.parse_example(rows, spec)))
    assert [b["y"].tolist() for b in batches] == [[0, 1], [0, 1], [0]]
    assert torch.equal(torch.cat([b["x"] for b in batches]), torch.tensor([[i, i + 0.5] for i in range(5)]))


def test_bad_crc_names_file_and_record(tf_files) -> None:
    data = bytearray.fromhex(TF_FILES["c"])
    data[-1] ^= 0x10  # record 1's data CRC
    with open(tf_files[2], "wb") as handle:
        handle.write(bytes(data))
    iterator = iter(tf.data.TFRecordDataset(tf_files))
    assert [next(iterator).item() for _ in range(5)] == [b"a0", b"a1", b"a2", b"b0", b"c0"]
    with pytest.raises(DataLossError, match=r"corrupted record 1 \(at byte 18\) of '.*c\.tfrecord'"):
        next(iterator)


def test_bad_arguments(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="missing.tfrecord"):
        list(tf.data.TFRecordDataset(str(tmp_path / "missing.tfrecord")))
    with pytest.raises(ValueError, match="unknown compression_type"):
        tf.data.TFRecordDataset("x.tfrecord", compression_type="LZ4")
    with pytest.raises(TypeError, match="file names"):
        tf.data.TFRecordDataset([3])
