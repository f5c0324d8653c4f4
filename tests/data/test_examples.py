"""tf.data pipelines over tf.train.Example files: experimental.TFRecordWriter, parse_example_dataset,
make_batched_features_dataset, parallel_interleave, copy_to_device / prefetch_to_device; lookup tables from
datasets (DatasetInitializer, table_from_dataset, index_table_from_dataset)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

Dataset = tf.data.Dataset


def _example(x: int, label: int) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[x, x + 1])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))})).SerializeToString()


def _write(path, records, compression=None) -> None:
    strings = np.empty(len(records), dtype=object)
    strings[:] = records
    tf.data.experimental.TFRecordWriter(str(path), compression).write(Dataset.from_tensor_slices(strings))


def test_tfrecord_writer_writes_a_dataset_of_strings(tmp_path) -> None:
    _write(tmp_path / "a.tfrecord", [b"one", b"two"], "GZIP")
    assert [r.item() for r in tf.data.TFRecordDataset(str(tmp_path / "a.tfrecord"), "GZIP")] == [b"one", b"two"]
    with pytest.raises(TypeError, match="scalar strings"):
        tf.data.experimental.TFRecordWriter(str(tmp_path / "b")).write(Dataset.range(2))


def test_parse_example_dataset_and_make_batched_features_dataset(tmp_path) -> None:
    for shard in range(2):
        _write(tmp_path / f"part-{shard}.tfrecord", [_example(10 * shard + i, i % 2) for i in range(3)])
    features = {"x": tf.io.FixedLenFeature([2], tf.int64), "label": tf.io.FixedLenFeature([], tf.int64)}
    parsed = tf.data.TFRecordDataset(str(tmp_path / "part-0.tfrecord")).batch(2).apply(
        tf.data.experimental.parse_example_dataset(features))
    first = next(iter(parsed))
    assert first["x"].tolist() == [[0, 1], [1, 2]] and first["label"].tolist() == [0, 1]
    ds = tf.data.experimental.make_batched_features_dataset(str(tmp_path / "part-*.tfrecord"), 4, features,
                                                            label_key="label", num_epochs=1, shuffle=False)
    batches = list(ds)
    assert [b[0]["x"][:, 0].tolist() for b in batches] == [[0, 1, 2, 10], [11, 12]]  # TF 2.21
    assert [b[1].tolist() for b in batches] == [[0, 1, 0, 0], [1, 0]]
    assert "label" not in batches[0][0]
    shuffled = tf.data.experimental.make_batched_features_dataset(str(tmp_path / "part-*.tfrecord"), 6, features,
                                                                  num_epochs=2, shuffle_seed=3)
    rows = sorted(v for b in shuffled for v in b["x"][:, 0].tolist())
    assert rows == sorted([0, 1, 2, 10, 11, 12] * 2)
    with pytest.raises(ValueError, match="label_key 'y'"):
        tf.data.experimental.make_batched_features_dataset(str(tmp_path / "*"), 2, features, label_key="y")


def test_parallel_interleave_and_device_moves() -> None:
    inter = Dataset.range(2).apply(tf.data.experimental.parallel_interleave(
        lambda x: Dataset.from_tensors(x).repeat(2), cycle_length=2))
    assert [int(v) for v in inter] == [0, 1, 0, 1]
    moved = Dataset.from_tensor_slices(({"a": [1.0, 2.0]}, [3, 4])).apply(
        tf.data.experimental.copy_to_device("/cpu:0"))
    assert [(float(a["a"]), int(b)) for a, b in moved] == [(1.0, 3), (2.0, 4)]
    prefetched = Dataset.range(3).apply(tf.data.experimental.prefetch_to_device("/CPU:0", 2))
    assert [int(v) for v in prefetched] == [0, 1, 2]
    with pytest.raises(ValueError, match="not supported here"):
        tf.data.experimental.copy_to_device("/nowhere")


def test_tables_from_datasets() -> None:
    keys = Dataset.from_tensor_slices(np.array([b"cat", b"dog", b"emu"], dtype=object))
    index = tf.data.experimental.index_table_from_dataset(keys)
    assert index.lookup(np.array([b"dog", b"emu", b"yak"], dtype=object)).tolist() == [1, 2, -1]  # TF 2.21
    with_oov = tf.data.experimental.index_table_from_dataset(keys, num_oov_buckets=2)
    assert with_oov.lookup(np.array([b"cat", b"yak"], dtype=object)).tolist() == [0, 4]  # TF 2.21 (FarmHash bucket)
    pairs = Dataset.zip(Dataset.range(3), Dataset.range(10, 13))
    table = tf.data.experimental.table_from_dataset(pairs, default_value=-7, key_dtype=tf.int64)
    assert table.lookup(torch.tensor([2, 0, 9])).tolist() == [12, 10, -7]
    initializer = tf.data.experimental.DatasetInitializer(pairs)
    assert tf.lookup.StaticHashTable(initializer, -1).lookup(torch.tensor([1])).tolist() == [11]
    with pytest.raises(ValueError, match="pairs"):
        tf.data.experimental.DatasetInitializer(Dataset.range(3))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_copy_and_prefetch_to_a_gpu():
    moved = Dataset.from_tensor_slices(([1.0, 2.0], np.array([b"a", b"b"], dtype=object))).apply(
        tf.data.experimental.copy_to_device("/gpu:0"))
    value, text = next(iter(moved))
    assert value.device.type == "cuda" and text == b"a"  # strings stay on the host
    prefetched = Dataset.range(3).apply(tf.data.experimental.prefetch_to_device("/gpu:0"))
    assert [v.device.type for v in prefetched] == ["cuda"] * 3
