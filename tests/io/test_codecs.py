"""tf.io's string codecs against TF 2.21 (results frozen from tools/tf_reference/iodata_reference.py):
decode_raw, web-safe base64, decode_compressed, decode_json_example (TF's exact bytes), decode_csv, and the
image codecs and matching_files that tf.io also names."""
from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest
import torch

import torchstrategy as tf

S = lambda *items: np.array(items, dtype=object)  # noqa: E731 - a string tensor


def test_decode_raw_as_tf():
    assert tf.io.decode_raw(S(b"\x01\x00\x02\x00", b"\xff\xff\x00\x01"), tf.int16).tolist() == [[1, 2], [-1, 256]]
    assert tf.io.decode_raw(b"\x01\x00\x02\x00", tf.int16, little_endian=False).tolist() == [256, 512]
    assert tf.io.decode_raw([b"\x01\x02\x03", b"\x04"], tf.uint8, fixed_length=2).tolist() == [[1, 2], [4, 0]]
    floats = tf.io.decode_raw(np.array([1.5, -2.0], np.float32).tobytes(), tf.float32)
    assert floats.dtype == torch.float32 and floats.tolist() == [1.5, -2.0]
    with pytest.raises(tf.errors.InvalidArgumentError,  # TF 2.21's words
                       match="requires input strings to all be the same size, but element 1 has size 2 != 1"):
        tf.io.decode_raw([b"\x01\x02", b"\x04"], tf.uint8)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Input to DecodeRaw has length 3 that is not a multiple of 2, the size of int16"):
        tf.io.decode_raw(b"\x01\x02\x03", tf.int16)


def test_base64_and_decompression_as_tf():
    assert tf.io.encode_base64([b"hello?>", b"a"]).tolist() == [b"aGVsbG8_Pg", b"YQ"]
    assert tf.io.encode_base64([b"hello?>", b"a"], pad=True).tolist() == [b"aGVsbG8_Pg==", b"YQ=="]
    assert tf.io.decode_base64([b"aGVsbG8_Pg", b"YQ=="]).tolist() == [b"hello?>", b"a"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not web-safe base64"):
        tf.io.decode_base64(b"a$b")
    assert tf.io.decode_compressed([zlib.compress(b"abc")], "ZLIB").tolist() == [b"abc"]
    assert tf.io.decode_compressed([gzip.compress(b"xyz")], "GZIP").tolist() == [b"xyz"]
    assert tf.io.decode_compressed([b"raw"]).tolist() == [b"raw"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not valid ZLIB"):
        tf.io.decode_compressed([b"raw"], "ZLIB")


def test_decode_json_example_gives_tfs_bytes():
    ints = tf.io.decode_json_example(['{"features": {"feature": {"x": {"int64List": {"value": ["1", "2"]}}}}}'])
    assert ints[0].hex() == "0a0d0a0b0a017812061a0408010802"  # TF 2.21: values one field each, not packed
    text = tf.io.decode_json_example(['{"features": {"feature": {"s": {"bytesList": {"value": ["YWJj"]}}}}}'])
    assert text[0].hex() == "0a0e0a0c0a017312070a050a03616263"
    parsed = tf.io.parse_single_example(ints[0], {"x": tf.io.FixedLenFeature([2], tf.int64)})
    assert parsed["x"].tolist() == [1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a tf.train.Example"):
        tf.io.decode_json_example(['{"feature": 1}'])


def test_decode_csv_as_tf():
    numbers, text, reals = tf.io.decode_csv([b'1,"a,b",2.5', b',"",'], [[0], [""], [1.0]])
    assert numbers.dtype == torch.int32 and numbers.tolist() == [1, 0]
    assert text.tolist() == [b"a,b", b""] and reals.tolist() == [2.5, 1.0]
    assert tf.io.decode_csv(["7"], [torch.tensor([0], dtype=torch.int64)])[0].dtype == torch.int64
    assert [c.tolist() for c in tf.io.decode_csv([b"1,2,3"], [[0], [0]], select_cols=[0, 2])] == [[1], [3]]
    assert [c.tolist() for c in tf.io.decode_csv([b"NA,1"], [[5], [0]], na_value="NA")] == [[5], [1]]
    assert [c.tolist() for c in tf.io.decode_csv([b"1|2"], [[0], [0]], field_delim="|")] == [[1], [2]]
    assert [c.tolist() for c in tf.io.decode_csv([b'"a",b'], [[""], [""]], use_quote_delim=False)] == [
        [b'"a"'], [b"b"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 is required but missing in record 0!"):
        tf.io.decode_csv([b",x"], [torch.tensor([], dtype=torch.int32), [""]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 3 in record 0"):
        tf.io.decode_csv([b"1,2,3"], [[0], [0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 in record 0 is not a valid int32: x"):
        tf.io.decode_csv([b"x"], [[0]])


def test_tf_io_names_the_image_codecs_and_matching_files(tmp_path):
    image = torch.arange(12, dtype=torch.uint8).reshape(2, 2, 3)
    png = tf.io.encode_png(image)
    assert torch.equal(tf.io.decode_png(png), image) and not bool(tf.io.is_jpeg(png))
    assert tf.io.decode_bmp is tf.image.decode_bmp and tf.io.extract_jpeg_shape is tf.image.extract_jpeg_shape
    for name in ("b.txt", "a.txt", "c.bin"):
        (tmp_path / name).write_bytes(b"")
    found = tf.io.matching_files(str(tmp_path / "*.txt"))
    assert found.tolist() == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]
    assert tf.io.match_filenames_once(str(tmp_path / "*.bin")).tolist() == [str(tmp_path / "c.bin").encode()]
    assert tf.io.matching_files(str(tmp_path / "*.none")).shape == (0,)
