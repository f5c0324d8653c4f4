"""TFRecord files: our writer gives the bytes TF 2.21 wrote, TF-written plain/GZIP/ZLIB files (frozen below
as hex from TF 2.21.0's tf.io.TFRecordWriter) read back, and damaged files raise naming file and record."""
from __future__ import annotations

import gzip
import zlib

import pytest

import torchstrategy as tf
from torchstrategy.io.tfrecord import DataLossError, crc32c, iterate_records

# the serialized Example used as the third record (TF 2.21's bytes; see tests/test_train_example.py)
EXAMPLE_HEX = "0a220a200a0178121b1a190a170102fdffffffffffffffff01ac02808080808080808040"
RECORDS = [b"hello", b"", bytes.fromhex(EXAMPLE_HEX)]
# TF 2.21: with tf.io.TFRecordWriter(path, options=c) as w: w.write(b"hello"); w.write(b""); w.write(example)
TF_FILES = {
    "": ("0500000000000000eab2043e68656c6c6fbb1f1c19000000000000000029039807d8ea82a22400000000000000422b804d"
         + EXAMPLE_HEX + "05f1c95f"),
    "GZIP": ("1f8b080000000000000363658080579b58ec32527372f277cbcb4842c518349967b0df78d5b44805ca77d26ef0e552e2"
             "52e062ac10929692e4126764fafb1f0a18d73035408103ebc793f100e81a6a9759000000"),
    "ZLIB": ("789c63658080579b58ec32527372f277cbcb4842c518349967b0df78d5b44805ca77d26ef0e552e252e062ac10929692e4"
             "126764fafb1f0a18d73035408103ebc793f100a7e11b75"),
}


def test_crc32c_check_value() -> None:
    # the published CRC-32C check values (RFC 3720 appendix B.4 and the standard "123456789" check)
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43


def test_writer_bytes_equal_tf_file(tmp_path) -> None:
    path = tmp_path / "plain.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in RECORDS:
            writer.write(record)
    assert path.read_bytes().hex() == TF_FILES[""]


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_reads_tf_written_file(tmp_path, compression: str) -> None:
    path = tmp_path / "tf.tfrecord"
    path.write_bytes(bytes.fromhex(TF_FILES[compression]))
    assert list(iterate_records(str(path), compression)) == RECORDS


@pytest.mark.parametrize("options", ["GZIP", "ZLIB", tf.io.TFRecordOptions(compression_type="ZLIB"),
                                     tf.io.TFRecordOptions("GZIP", compression_level=1)])
def test_compressed_writer_decompresses_to_tf_framing(tmp_path, options) -> None:
    path = tmp_path / "c.tfrecord"
    with tf.io.TFRecordWriter(str(path), options=options) as writer:
        for record in RECORDS:
            writer.write(record)
    kind = tf.io.TFRecordOptions.get_compression_type_string(options)
    raw = path.read_bytes()
    plain = gzip.decompress(raw) if kind == "GZIP" else zlib.decompress(raw)
    assert plain.hex() == TF_FILES[""]
    assert list(iterate_records(str(path), kind)) == RECORDS


def test_options_and_writer_errors(tmp_path) -> None:
    assert tf.io.TFRecordOptions("gzip").compression_type == "GZIP"
    assert tf.io.TFRecordOptions().compression_type == ""
    with pytest.raises(ValueError, match="unknown compression_type 'BZ2'"):
        tf.io.TFRecordOptions("BZ2")
    writer = tf.io.TFRecordWriter(str(tmp_path / "w.tfrecord"))
    example = tf.train.Example()
    with pytest.raises(TypeError, match="SerializeToString"):
        writer.write(example)
    writer.close()
    with pytest.raises(ValueError, match="closed writer"):
        writer.write(b"x")
    with pytest.raises(OSError, match="cannot open"):
        tf.io.TFRecordWriter(str(tmp_path / "missing_dir" / "w.tfrecord"))


def _damaged(tmp_path, position: int) -> str:
    data = bytearray.fromhex(TF_FILES[""])
    data[position] ^= 0x01
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(bytes(data))
    return str(path)


def test_bad_data_crc_names_file_and_record(tmp_path) -> None:
    path = _damaged(tmp_path, len(bytes.fromhex(TF_FILES[""])) - 1)  # last record's data CRC
    records = iterate_records(path)
    assert next(records) == b"hello" and next(records) == b""
    with pytest.raises(DataLossError, match=r"corrupted record 2 \(at byte 37\) of '.*bad\.tfrecord'.*data"):
        next(records)


def test_bad_length_crc_and_truncation(tmp_path) -> None:
    with pytest.raises(DataLossError, match=r"record 0 .*bad\.tfrecord.*CRC of its length"):
        list(iterate_records(_damaged(tmp_path, 0)))
    truncated = tmp_path / "short.tfrecord"
    truncated.write_bytes(bytes.fromhex(TF_FILES[""])[:-3])
    with pytest.raises(DataLossError, match=r"truncated record 2 .*short\.tfrecord"):
        list(iterate_records(str(truncated)))


def test_read_file(tmp_path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"ab\x00")
    assert tf.io.read_file(str(path)).item() == b"ab\x00"
    with pytest.raises(FileNotFoundError, match="read_file"):
        tf.io.read_file(str(tmp_path / "nope"))


def test_tf_names_are_reachable() -> None:
    import torchstrategy

    for name in ("TFRecordWriter", "TFRecordOptions", "parse_single_example", "parse_example", "FixedLenFeature",
                 "VarLenFeature", "read_file"):
        assert callable(getattr(torchstrategy.io, name)), name
    for name in ("Example", "Features", "Feature", "BytesList", "FloatList", "Int64List"):
        assert isinstance(getattr(torchstrategy.train, name), type), name
    assert "io" in dir(torchstrategy) and torchstrategy.data.TFRecordDataset.__name__ == "TFRecordDataset"
