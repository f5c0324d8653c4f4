"""Dataset.snapshot (written by the first full pass, read back afterwards, keyed by the pipeline), fingerprint,
and the save/load format they share (GZIP, atomic write, clear errors)."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

Dataset = tf.data.Dataset


def test_snapshot_writes_on_the_first_pass_and_reads_afterwards(tmp_path) -> None:
    calls = []

    def record(x):
        calls.append(int(x))
        return x * 10

    snap = Dataset.range(4).map(record).snapshot(str(tmp_path / "snap"))
    assert [int(x) for x in snap] == [0, 10, 20, 30]
    assert calls == [0, 1, 2, 3]
    written = os.listdir(tmp_path / "snap")
    assert len(written) == 1 and len(written[0]) == 16  # one directory per pipeline fingerprint
    assert [int(x) for x in snap] == [0, 10, 20, 30]
    assert calls == [0, 1, 2, 3]  # the second pass read the snapshot: map did not run
    # another process building the same pipeline reads it too (same fingerprint)
    again = Dataset.range(4).map(lambda x: x * 0).snapshot(str(tmp_path / "snap"))
    assert [int(x) for x in again] == [0, 10, 20, 30]
    other = Dataset.range(1, 5).map(lambda x: x * 10).snapshot(str(tmp_path / "snap"))  # another range: new key
    assert [int(x) for x in other] == [10, 20, 30, 40]


def test_a_pass_cut_short_writes_nothing_and_another_pipeline_gets_its_own_snapshot(tmp_path) -> None:
    path = str(tmp_path / "snap")
    snap = Dataset.range(5).snapshot(path, compression="GZIP")
    assert int(next(iter(snap))) == 0
    assert not os.path.exists(path) or os.listdir(path) == []
    assert [int(x) for x in snap] == [0, 1, 2, 3, 4]
    assert [int(x) for x in Dataset.range(3).snapshot(path)] == [0, 1, 2]
    assert len(os.listdir(path)) == 2
    assert [int(x) for x in tf.data.Dataset.range(2).apply(tf.data.experimental.snapshot(path))] == [0, 1]


def test_fingerprint_follows_the_pipeline_structure() -> None:
    a = Dataset.range(10).batch(2).fingerprint()
    assert a.dtype == torch.uint64 and a.dim() == 0
    assert int(a) == int(Dataset.range(10).batch(2).fingerprint())
    assert int(a) != int(Dataset.range(10).batch(3).fingerprint())
    assert int(a) != int(Dataset.range(10).shuffle(4, seed=1).batch(2).fingerprint())
    # what a source holds is part of it: other values, another range or other files give another number
    assert int(Dataset.from_tensor_slices([1, 2]).fingerprint()) != int(Dataset.from_tensor_slices([1, 3]).fingerprint())
    assert int(Dataset.from_tensor_slices([1, 2]).fingerprint()) == int(Dataset.from_tensor_slices([1, 2]).fingerprint())
    assert int(Dataset.range(0, 4).fingerprint()) != int(Dataset.range(1, 5).fingerprint())
    assert int(tf.data.TFRecordDataset("a").fingerprint()) != int(tf.data.TFRecordDataset("b").fingerprint())
    strings = np.array([b"x", b"y"], dtype=object)
    assert int(Dataset.from_tensor_slices(strings).fingerprint()) == int(Dataset.from_tensor_slices(strings).fingerprint())
    assert int(Dataset.from_tensors(torch.tensor(1.0, dtype=torch.bfloat16)).fingerprint()) != int(
        Dataset.from_tensors(torch.tensor(2.0, dtype=torch.bfloat16)).fingerprint())


def test_save_load_gzip_strings_and_errors(tmp_path) -> None:
    source = Dataset.from_tensor_slices(({"x": [1, 2, 3]}, np.array([b"a", b"b", b"c"], dtype=object)))
    path = str(tmp_path / "saved")
    source.save(path, compression="GZIP")
    assert os.listdir(path) == ["dataset.pkl.gz"]  # the temporary file was renamed into place
    loaded = Dataset.load(path)
    assert [(int(a["x"]), b) for a, b in loaded] == [(1, b"a"), (2, b"b"), (3, b"c")]
    assert loaded.cardinality() == 3
    tf.data.experimental.save(source, path)  # re-saved uncompressed: one file remains
    assert os.listdir(path) == ["dataset.pkl"]
    assert [int(a["x"]) for a, _ in tf.data.experimental.load(path)] == [1, 2, 3]
    with pytest.raises(ValueError, match="unknown compression"):
        source.save(path, compression="LZ4")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "dataset.pkl").write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="damaged or not a saved dataset"):
        Dataset.load(str(tmp_path / "bad"))
