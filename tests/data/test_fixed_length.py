"""tf.data.FixedLengthRecordDataset: header/footer, compression, interleaved files, and TF's error for a body
that is not a whole number of records."""
from __future__ import annotations

import gzip

import pytest

import torchstrategy as tf


def test_records_between_header_and_footer(tmp_path):
    path = tmp_path / "a.bin"
    path.write_bytes(b"HH" + bytes(range(10)) + b"F")
    records = tf.data.FixedLengthRecordDataset(str(path), 5, header_bytes=2, footer_bytes=1)
    assert [r.item() for r in records] == [bytes(range(5)), bytes(range(5, 10))]  # TF 2.21
    (tmp_path / "b.bin.gz").write_bytes(gzip.compress(b"abcdef"))
    zipped = tf.data.FixedLengthRecordDataset(str(tmp_path / "b.bin.gz"), 2, compression_type="GZIP")
    assert [r.item() for r in zipped] == [b"ab", b"cd", b"ef"]
    (tmp_path / "c.bin").write_bytes(b"uvwxyz")
    both = tf.data.FixedLengthRecordDataset([str(tmp_path / "c.bin"), str(tmp_path / "b.bin.gz")], 2,
                                            compression_type=None, num_parallel_reads=1)
    assert [r.item() for r in both.take(3)] == [b"uv", b"wx", b"yz"]


def test_a_partial_record_is_tfs_error(tmp_path):
    path = tmp_path / "bad.bin"
    path.write_bytes(bytes(range(7)))
    with pytest.raises(tf.errors.InvalidArgumentError,  # TF 2.21's words
                       match="Excluding the header \\(0 bytes\\) and footer \\(0 bytes\\), input file .* has body "
                             "length 7, which is not an exact multiple of the record length \\(5 bytes\\)"):
        list(tf.data.FixedLengthRecordDataset(str(path), 5))
    with pytest.raises(ValueError, match="record_bytes must be >= 1"):
        tf.data.FixedLengthRecordDataset(str(path), 0)
