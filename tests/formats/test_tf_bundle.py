"""TF's tensor-bundle files: reading TF 2.21-written ones (fixture from tools/tf_reference/tf_checkpoint_fixtures.py,
tensorflow-cpu 2.21.0 / Keras 3.15.1), CRC-32C checks, missing shards, and the writer's round trip."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import torch

from torchstrategy.formats import _crc32c, tf_bundle

DATA = os.path.join(os.path.dirname(__file__), "..", "checkpoint", "data", "tf_cnn_adam")
PREFIX = os.path.join(DATA, "ckpt-1")
EXPECTED = np.load(os.path.join(DATA, "expected.npz"))


def _copy(tmp_path) -> str:
    for name in ("ckpt-1.index", "ckpt-1.data-00000-of-00001"):
        shutil.copy(os.path.join(DATA, name), tmp_path / name)
    return str(tmp_path / "ckpt-1")


def test_crc32c_known_value_and_large_inputs_agree_with_the_byte_loop():
    assert _crc32c.value(b"123456789") == 0xE3069283  # the CRC-32C check value
    data = np.random.default_rng(0).integers(0, 256, 300_001, dtype=np.uint8).tobytes()
    assert _crc32c.value(data) == _crc32c._advance(0xFFFFFFFF, data) ^ 0xFFFFFFFF
    assert _crc32c.extend(_crc32c.value(data[:1000]), data[1000:]) == _crc32c.value(data)
    assert _crc32c.unmask(_crc32c.mask(0x12345678)) == 0x12345678


def test_reads_every_tensor_tf_wrote_with_its_shape_and_dtype():
    reader = tf_bundle.BundleReader(PREFIX)
    listed = dict(item.split("|") for item in EXPECTED["variables"])  # TF's list_variables
    assert {key: str(list(entry.shape)) for key, entry in reader.entries.items()} == listed
    assert reader.num_shards == 1
    key = "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE"  # the conv kernel, HWIO
    np.testing.assert_array_equal(reader.tensor(key), EXPECTED["saved_weight_0"])
    assert reader.entries["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"].dtype_name == "int64"
    assert int(reader.tensor("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE")) == 3
    assert int(reader.tensor("step/.ATTRIBUTES/VARIABLE_VALUE")) == 7
    graph = reader.tensor("_CHECKPOINTABLE_OBJECT_GRAPH")
    assert graph.dtype == object and isinstance(graph[()], bytes) and len(graph[()]) > 100


def test_a_changed_byte_in_the_data_is_a_crc_error_naming_the_file_and_tensor(tmp_path):
    prefix = _copy(tmp_path)
    reader = tf_bundle.BundleReader(prefix)
    entry = reader.entries["step/.ATTRIBUTES/VARIABLE_VALUE"]
    data_file = prefix + ".data-00000-of-00001"
    with open(data_file, "r+b") as handle:
        handle.seek(entry.offset)
        byte = handle.read(1)
        handle.seek(entry.offset)
        handle.write(bytes([byte[0] ^ 1]))
    with pytest.raises(tf_bundle.BundleCorruptedError, match=r"data-00000-of-00001.*CRC-32C of tensor 'step/"):
        reader.tensor("step/.ATTRIBUTES/VARIABLE_VALUE")


def test_a_changed_byte_in_the_index_is_a_block_crc_error(tmp_path):
    prefix = _copy(tmp_path)
    with open(prefix + ".index", "r+b") as handle:
        handle.seek(40)
        byte = handle.read(1)
        handle.seek(40)
        handle.write(bytes([byte[0] ^ 0x10]))
    with pytest.raises(tf_bundle.BundleCorruptedError, match=r"ckpt-1.index' is corrupted: the CRC-32C"):
        tf_bundle.BundleReader(prefix)


def test_a_truncated_index_and_a_missing_shard_are_named(tmp_path):
    prefix = _copy(tmp_path)
    os.unlink(prefix + ".data-00000-of-00001")
    reader = tf_bundle.BundleReader(prefix)
    with pytest.raises(FileNotFoundError, match=r"data shard '.*ckpt-1.data-00000-of-00001' is missing"):
        reader.check_shards()
    with open(prefix + ".index", "r+b") as handle:
        handle.truncate(100)
    with pytest.raises(tf_bundle.BundleCorruptedError, match="not a TF checkpoint index"):
        tf_bundle.BundleReader(prefix)


def test_written_bundles_read_back_every_dtype_and_strings(tmp_path):
    tensors = {"a/float": np.arange(6, dtype=np.float32).reshape(2, 3), "b/int64": np.array(-5, dtype=np.int64),
               "c/bool": np.array([True, False]), "d/strings": np.array([b"x", b"", b"hello"], dtype=object),
               "e/half": np.array([1.5], dtype=np.float16), "f/bf16": torch.tensor([0.5, -2.0], dtype=torch.bfloat16),
               "g/empty": np.zeros((0, 4), dtype=np.float64)}
    written = tf_bundle.write_bundle(str(tmp_path / "out"), tensors)
    assert sorted(os.path.basename(p) for p in written) == ["out.data-00000-of-00001", "out.index"]
    reader = tf_bundle.BundleReader(str(tmp_path / "out"))
    for key, value in tensors.items():
        got = reader.tensor(key)
        if isinstance(value, torch.Tensor):
            assert torch.equal(got, value)
        else:
            assert got.dtype == value.dtype and got.shape == value.shape
            assert list(got.reshape(-1)) == list(value.reshape(-1))
    assert [name for name in os.listdir(tmp_path) if name.endswith(".tmp")] == []  # temp files renamed away


def test_rewriting_tf_tensors_reproduces_tf_entries_and_table(tmp_path):
    reader = tf_bundle.BundleReader(PREFIX)
    tensors = {key: reader.tensor(key) for key in reader.entries}
    tf_bundle.write_bundle(str(tmp_path / "again"), tensors)
    again = tf_bundle.BundleReader(str(tmp_path / "again"))
    for key, entry in reader.entries.items():  # dtype, shape, size and TF's CRC-32C reproduced by the writer
        ours = again.entries[key]
        assert (ours.dtype, ours.shape, ours.size, ours.crc32c) == (entry.dtype, entry.shape, entry.size, entry.crc32c)
    items = tf_bundle.read_table(PREFIX + ".index")
    rebuilt = tmp_path / "table"
    rebuilt.write_bytes(tf_bundle.build_table(items))
    assert tf_bundle.read_table(str(rebuilt)) == items


def test_tensors_of_a_second_shard_are_read_from_their_own_file(tmp_path):
    # TF names shards '{prefix}.data-0000k-of-0000n' and records each tensor's shard in its entry
    prefix = str(tmp_path / "two")
    first, second = np.arange(3, dtype=np.float32), np.array([7, 8], dtype=np.int64)
    blobs = [first.tobytes(), second.tobytes()]
    entries = [tf_bundle.BundleEntry(dtype=1, shape=(3,), shard_id=0, offset=0, size=len(blobs[0]),
                                     crc32c=_crc32c.mask(_crc32c.value(blobs[0]))),
               tf_bundle.BundleEntry(dtype=9, shape=(2,), shard_id=1, offset=0, size=len(blobs[1]),
                                     crc32c=_crc32c.mask(_crc32c.value(blobs[1])))]
    header = bytes([0x08, 0x02])  # BundleHeaderProto(num_shards=2)
    table = tf_bundle.build_table([(b"", header), (b"a", entries[0].serialize()), (b"b", entries[1].serialize())])
    (tmp_path / "two.index").write_bytes(table)
    for shard, blob in enumerate(blobs):
        (tmp_path / f"two.data-0000{shard}-of-00002").write_bytes(blob)
    reader = tf_bundle.BundleReader(prefix)
    assert reader.num_shards == 2
    np.testing.assert_array_equal(reader.tensor("a"), first)
    np.testing.assert_array_equal(reader.tensor("b"), second)
    os.unlink(tmp_path / "two.data-00001-of-00002")
    with pytest.raises(FileNotFoundError, match="two.data-00001-of-00002' is missing"):
        reader.tensor("b")


def test_tensors_are_written_from_their_own_buffers_whatever_their_layout(tmp_path):
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    tensors = {"a/transposed": base.t(), "b/strided": base[:, ::2], "c/grad": torch.ones(3, requires_grad=True),
               "d/big_endian": np.arange(4, dtype=">i4"), "e/fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
               "f/scalar": np.float64(2.5), "g/large": torch.linspace(-1, 1, 300_000)}
    tf_bundle.write_bundle(str(tmp_path / "out"), tensors)
    reader = tf_bundle.BundleReader(str(tmp_path / "out"))
    for key, value in tensors.items():
        expected = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        got = reader.tensor(key)
        assert got.shape == expected.shape and got.dtype == expected.dtype.newbyteorder("=")
        np.testing.assert_array_equal(got, expected)
        assert got.flags.writeable and got.flags.c_contiguous  # an array of its own, usable as is


def test_a_short_data_file_and_an_entry_that_does_not_fit_its_shape_are_named(tmp_path):
    prefix = _copy(tmp_path)
    reader = tf_bundle.BundleReader(prefix)
    key = max(reader.entries, key=lambda k: reader.entries[k].offset + reader.entries[k].size)  # the last tensor
    data_file = prefix + ".data-00000-of-00001"
    with open(data_file, "r+b") as handle:
        handle.truncate(reader.entries[key].offset + 1)
    with pytest.raises(tf_bundle.BundleCorruptedError, match=rf"data-00000-of-00001' is truncated: tensor '{key}'"):
        reader.tensor(key)
    blob = np.arange(3, dtype=np.float32).tobytes()
    entry = tf_bundle.BundleEntry(dtype=1, shape=(4,), shard_id=0, offset=0, size=len(blob),  # 4 floats need 16
                                  crc32c=_crc32c.mask(_crc32c.value(blob)))
    table = tf_bundle.build_table([(b"", bytes([0x08, 0x01])), (b"w", entry.serialize())])
    (tmp_path / "odd.index").write_bytes(table)
    (tmp_path / "odd.data-00000-of-00001").write_bytes(blob)
    with pytest.raises(tf_bundle.BundleCorruptedError, match=r"tensor 'w' holds 12 bytes, not the 4 per element its "
                                                             r"shape \[4\] needs"):
        tf_bundle.BundleReader(str(tmp_path / "odd")).tensor("w")


def test_mapped_views_give_the_same_values_leave_the_file_alone_and_check_the_same(tmp_path):
    prefix = _copy(tmp_path)
    reader = tf_bundle.BundleReader(prefix)
    data_file = prefix + ".data-00000-of-00001"
    before = open(data_file, "rb").read()
    for key in reader.entries:
        if key == "_CHECKPOINTABLE_OBJECT_GRAPH":
            continue
        view = reader.tensor(key, copy=False)
        np.testing.assert_array_equal(view, reader.tensor(key))
        if view.size:
            view.reshape(-1)[0] = 0  # private pages: the file keeps its bytes
    assert open(data_file, "rb").read() == before
    key = max(reader.entries, key=lambda k: reader.entries[k].offset + reader.entries[k].size)
    with open(data_file, "r+b") as handle:
        handle.truncate(reader.entries[key].offset + 1)
    with pytest.raises(tf_bundle.BundleCorruptedError, match=rf"is truncated: tensor '{key}'"):
        reader.tensor(key, copy=False)  # refused before the short file is mapped
